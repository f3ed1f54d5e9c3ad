"""The pages `make test-changed` runs: pages, notebooks and snippets changed against main (committed,
staged, unstaged or new), each snippet mapped to the pages that include it. Machinery changes
(conftest.py, hooks/, the lock) affect every page, so then every page runs."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()


changed = set(git("diff", "--name-only", "main")) | set(git("ls-files", "--others", "--exclude-standard"))
if changed & {"conftest.py", "requirements.lock"} or any(name.startswith("hooks/") for name in changed):
    pages = ["docs"]
else:
    pages = {name for name in changed if name.startswith("docs/") and re.search(r"/[^/]+/[^/]+\.(md|py)$", name)}
    for snippet in (name for name in changed if name.startswith("snippets/")):
        pages |= {str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md") if snippet in p.read_text()}
print("\n".join(sorted(p for p in pages if (ROOT / p).exists())))
