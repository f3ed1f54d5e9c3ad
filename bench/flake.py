"""make flake: the full example suite three times; outcomes and recorded results must be identical."""

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


runs = []
for run in range(1, 4):
    shutil.rmtree(REPORT, ignore_errors=True)
    code = subprocess.run([sys.executable, "-m", "pytest", "docs", "-q", "-p", "no:cacheprovider", "-n", "2",
                           "--dist", "loadfile"], cwd=ROOT).returncode
    runs.append(snapshot())
    print(f"run {run}: exit {code}, {len(runs[-1])} pages", flush=True)
differences = [page for page in runs[0] if not (runs[0][page] == runs[1].get(page) == runs[2].get(page))]
differences += sorted(set(runs[1]) ^ set(runs[0]) | set(runs[2]) ^ set(runs[0]))
print("flake: identical outcomes and results in 3 runs" if not differences else f"flake: differs on {differences}")
sys.exit(1 if differences else 0)
