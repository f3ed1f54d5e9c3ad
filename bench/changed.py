"""The pages `make test-changed` runs: pages changed against main (committed, staged, unstaged or new), and
the pages that include a changed snippet (nested includes too). A change to what every page's content hash
covers (verification.machinery(): conftest, the example runner's hooks, the locks, snippets/shared/) runs every
page."""

import subprocess

import verification

ROOT = verification.ROOT


def git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()


changed = {ROOT / name for name in git("diff", "--name-only", "main") + git("ls-files", "--others", "--exclude-standard")}
if changed & set(verification.machinery()) or ROOT / "mkdocs.yml" in changed:  # mkdocs.yml: its snippet options
    pages = verification.content_pages()
else:
    pages = [page for page in verification.content_pages() if page in changed or verification.includes(page) & changed]
print("\n".join(str(page.relative_to(ROOT)) for page in pages))
