"""make flake: the full example suite three times; every run must pass, with identical outcomes and recorded
results. Each run's output, with what every passing example printed (its measured figures), is kept in
build/flake/run-N.log."""

import shutil
import subprocess
import sys

from tfv.layout import REPORTS, ROOT
from tfv.report import reports

REPORT = REPORTS / "cpu"


def snapshot():
    pages = {}
    for report in reports("cpu"):
        pages[report["page"]] = {"outcomes": [(e["line"], e["outcome"], e["reason"]) for e in report["examples"]],
                                 "results": report.get("results", {})}
    return pages


LOGS = ROOT / "build" / "flake"
LOGS.mkdir(parents=True, exist_ok=True)
runs, codes = [], []
for run in range(1, 4):
    shutil.rmtree(REPORT, ignore_errors=True)
    with open(LOGS / f"run-{run}.log", "w") as log:
        codes.append(subprocess.run(["tests/offline.sh", sys.executable, "-m", "pytest", "docs", "-q", "-rP",
                                     "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile"],
                                    cwd=ROOT, stdout=log, stderr=log).returncode)
    runs.append(snapshot())
    print(f"run {run}: exit {codes[-1]}, {len(runs[-1])} pages; output in {LOGS / f'run-{run}.log'}", flush=True)
differences = [page for page in runs[0] if not (runs[0][page] == runs[1].get(page) == runs[2].get(page))]
differences += sorted(set(runs[1]) ^ set(runs[0]) | set(runs[2]) ^ set(runs[0]))
failed = [run for run, code in enumerate(codes, 1) if code]
print("flake: identical outcomes and results in 3 runs" if not differences else f"flake: differs on {differences}")
print("flake: every run passed" if not failed else f"flake: runs {failed} failed (see their logs)")
sys.exit(1 if differences or failed else 0)
