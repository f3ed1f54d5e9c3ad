"""The `tfv` command (entry point in pyproject.toml): the repository's tasks that are not a test run or a build.

    tfv merge cpu 3 DIR...   the CI build job: one folder per downloaded shard artefact, merged into build/
    tfv durations            after a full run: refresh tests/page-durations.json, which balances the CI shards
    tfv changed              the pages `make test-changed` runs
    tfv changed --pages-only exit 0 when every change is to a content page or its own snippet, else 1

`merge` copies the shards' reports and executed notebooks into build/ and refuses (exit 1, every reason listed)
when a shard is missing or failed, a page ran in two shards or in none, or a page's report is missing or fails
the report rules (stale, failed, over budget, ...)."""

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from tfv.hashing import machinery
from tfv.includes import included
from tfv.layout import DURATIONS, ROOT
from tfv.pages import content_pages, executed_notebook, notebook_name, page_key
from tfv.report import BadReport, read_report, report_path, reports
from tfv.rules import problems


def merge(device, count, folders):
    """Copy every shard's reports (and executed notebooks) into build/; the problems found, empty when sound."""
    found, owner, manifests = [], {}, {}
    for folder in map(Path, folders):
        for path in sorted((folder / "shards").glob(f"{device}-*.json")):
            manifest = json.loads(path.read_text())
            manifests.setdefault(manifest["shard"], []).append((folder, manifest))
    for index in range(1, count + 1):
        given = manifests.get(index, [])
        if len(given) != 1:
            found.append(f"shard {index}/{count}: {'no' if not given else len(given)} manifest(s) (a shard that "
                         "did not finish uploads none)")
            continue
        folder, manifest = given[0]
        if manifest["of"] != count or manifest["exit"] != 0:
            found.append(f"shard {index}/{count}: ran as one of {manifest['of']}, exit {manifest['exit']}")
        for key in manifest["pages"]:
            if key in owner:
                found.append(f"docs/{key}: ran in shard {owner[key]} and in shard {index}")
            owner[key] = index
            report = folder / "report" / device / f"{key}.json"
            if not report.exists():
                found.append(f"docs/{key}: shard {index} was given it but wrote no {device} report")
                continue
            _copy(report, report_path(device, key))
            notebook = folder / "executed" / notebook_name(key)
            if notebook.exists():
                _copy(notebook, executed_notebook(key))
            try:  # the report rules, as the publish build will apply them (stale, failed, over budget, ...)
                cpu = read_report("cpu", key) if device == "gpu" else None
                wrong = problems(read_report(device, key), key, device=device, cpu=cpu)
            except BadReport as error:
                wrong = [str(error)]
            found += [f"docs/{key}: {problem}" for problem in wrong]
    missing = {page_key(p) for p in content_pages()} - set(owner)
    return found + [f"docs/{key}: in no shard" for key in sorted(missing)]


def _copy(source, target):
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)


def durations():
    """Write tests/page-durations.json from the CPU reports of the last full run."""
    found = {report["page"]: round(report["duration"], 1) for report in reports("cpu")}
    DURATIONS.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    print(f"{DURATIONS.relative_to(ROOT)}: {len(found)} pages, {sum(found.values()):.0f} s")


def _changed_files():
    """Files changed against main: committed, staged, unstaged or new."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()

    names = git("diff", "--name-only", "main") + git("ls-files", "--others", "--exclude-standard")
    return {(ROOT / name).resolve() for name in names}


def changed():
    """Pages changed against main and the pages that include a changed snippet (nested includes too); every
    page when something every page's hash covers changed."""
    files = _changed_files()
    if files & {path.resolve() for _, path in machinery()} or ROOT / "mkdocs.yml" in files:  # its snippet options
        return content_pages()
    return [page for page in content_pages() if page in files or included(page) & files]


def pages_only():
    """True when every changed file is a content page or a snippet one includes: then only the checks that look
    at pages can tell something new (the machinery tests test code that did not change)."""
    pages = set(content_pages())
    own = pages | {part.resolve() for page in pages for part in included(page)}
    return _changed_files() <= {path.resolve() for path in own} - {path.resolve() for _, path in machinery()}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tfv", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    merging = commands.add_parser("merge", help="merge the CI shards' artefacts into build/")
    merging.add_argument("device", choices=["cpu", "gpu"])
    merging.add_argument("count", type=int)
    merging.add_argument("folders", nargs="*")
    commands.add_parser("durations", help="refresh tests/page-durations.json from the CPU reports")
    changing = commands.add_parser("changed", help="the pages make test-changed runs")
    changing.add_argument("--pages-only", action="store_true", help="exit 0 when only pages and their snippets changed")
    args = parser.parse_args(argv)
    if args.command == "merge":
        found = merge(args.device, args.count, args.folders)
        print("merged: every page in exactly one shard, every shard passed" if not found else
              "refusing to merge:\n  " + "\n  ".join(found))
        return 1 if found else 0
    if args.command == "durations":
        durations()
    elif args.pages_only:
        return 0 if pages_only() else 1
    else:
        print("\n".join(str(page.relative_to(ROOT)) for page in changed()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
