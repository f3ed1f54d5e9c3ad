"""Sharding the example run across CI runners: whole pages (a page's blocks share one namespace), balanced by
the committed per-page durations (tests/page-durations.json, refreshed by `make durations`). Not pytest-split:
it splits individual tests, so one page's blocks could land on two runners (jerry-git/pytest-split#108).

    pytest docs --shard 2/3                      # conftest.py: run only shard 2's pages, write its manifest
    python hooks/shards.py merge cpu 3 DIR...    # the build job: one folder per downloaded shard artefact

A shard writes build/shards/<device>-<i>.json: which pages it was given and how its run ended. `merge` copies
the shards' reports and executed notebooks into build/ and refuses (exit 1, every reason listed) when a shard
is missing or failed, a page ran in two shards or in none, or a page's report is missing or fails the report
rules (verification.problems: stale, failed, over budget, ...).
"""

import json
import shutil
import sys
from pathlib import Path

import verification

DURATIONS = verification.ROOT / "tests/page-durations.json"
MANIFESTS = verification.ROOT / "build/shards"


def weights(pages, durations=None):
    """{page: its recorded seconds}; a page with no recorded duration counts as the mean."""
    if durations is None:
        durations = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    mean = sum(durations.values()) / len(durations) if durations else 1.0
    return {page: durations.get(verification.page_key(page), mean) for page in pages}


def plan(pages, count, durations=None):
    """`count` lists of pages with near-equal total duration: longest page first, each to the lightest shard."""
    weight = weights(pages, durations)
    shards = [[] for _ in range(count)]
    totals = [0.0] * count
    for page in sorted(pages, key=lambda p: (-weight[p], str(p))):
        lightest = totals.index(min(totals))
        shards[lightest].append(page)
        totals[lightest] += weight[page]
    return [sorted(shard) for shard in shards]


def parse(spec):
    """'2/3' -> (2, 3)."""
    index, _, count = spec.partition("/")
    if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise ValueError(f"--shard must be i/N with 1 <= i <= N, not {spec!r}")
    return int(index), int(count)


def write_manifest(device, index, count, pages, exitstatus, folder=MANIFESTS):
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {"device": device, "shard": index, "of": count, "exit": int(exitstatus),
                "pages": sorted(verification.page_key(page) for page in pages)}
    (folder / f"{device}-{index}.json").write_text(json.dumps(manifest, indent=1) + "\n")


def merge(device, count, folders):
    """Copy every shard's reports (and executed notebooks) into build/; the problems found, empty when sound."""
    problems, owner = [], {}
    manifests = {}
    for folder in map(Path, folders):
        for path in sorted((folder / "shards").glob(f"{device}-*.json")):
            manifest = json.loads(path.read_text())
            manifests.setdefault(manifest["shard"], []).append((folder, manifest))
    for index in range(1, count + 1):
        found = manifests.get(index, [])
        if len(found) != 1:
            problems.append(f"shard {index}/{count}: {'no' if not found else len(found)} manifest(s) (a shard that "
                            "did not finish uploads none)")
            continue
        folder, manifest = found[0]
        if manifest["of"] != count or manifest["exit"] != 0:
            problems.append(f"shard {index}/{count}: ran as one of {manifest['of']}, exit {manifest['exit']}")
        for key in manifest["pages"]:
            if key in owner:
                problems.append(f"docs/{key}: ran in shard {owner[key]} and in shard {index}")
            owner[key] = index
            report = folder / "report" / device / f"{key}.json"
            if not report.exists():
                problems.append(f"docs/{key}: shard {index} was given it but wrote no {device} report")
                continue
            _copy(report, verification.report_path(device, key))
            notebook = folder / "executed" / verification.notebook_name(key)
            if notebook.exists():
                _copy(notebook, verification.executed_notebook(key))
            try:  # the report rules, as the publish build will apply them (stale, failed, over budget, ...)
                cpu = verification.read_report("cpu", key) if device == "gpu" else None
                found = verification.problems(verification.read_report(device, key), key, device=device, cpu=cpu)
            except verification.BadReport as error:
                found = [str(error)]
            problems += [f"docs/{key}: {problem}" for problem in found]
    missing = {verification.page_key(p) for p in verification.content_pages()} - set(owner)
    problems += [f"docs/{key}: in no shard" for key in sorted(missing)]
    return problems


def _copy(source, target):
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)


def durations():
    """Write tests/page-durations.json from the CPU reports of the last full run."""
    found = {report["page"]: round(report["duration"], 1) for report in verification.reports("cpu")}
    DURATIONS.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    print(f"{DURATIONS.relative_to(verification.ROOT)}: {len(found)} pages, {sum(found.values()):.0f} s")


if __name__ == "__main__":
    if sys.argv[1:2] == ["merge"]:
        found = merge(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
        print("merged: every page in exactly one shard, every shard passed" if not found else
              "refusing to merge:\n  " + "\n  ".join(found))
        sys.exit(1 if found else 0)
    elif sys.argv[1:2] == ["durations"]:
        durations()
    else:
        sys.exit(__doc__)
