"""make stress: the whole example suite beside two CPU-bound processes it starts and stops itself; must pass.

A verdict that flips when the machine is busy is a claim asserted at the wrong strength (a wall-clock ratio near
its threshold, a wall-clock budget): this run is where that shows. Prints pages, failures and the slowest page
by CPU and by wall time; bench/findings.md keeps the figures.
"""

import subprocess
import sys
import time

from tfv import report, rules
from tfv.layout import ROOT

HOG = "while True:\n    pass\n"

hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(2)]
try:
    start = time.monotonic()
    code = subprocess.run(["tests/offline.sh", sys.executable, "-m", "pytest", "docs", "-q", "-p", "no:cacheprovider",
                           "-n", "2", "--dist", "loadfile"], cwd=ROOT).returncode
    elapsed = time.monotonic() - start
finally:
    for hog in hogs:
        hog.kill()
        hog.wait()
reports = list(report.reports("cpu"))
failed = [r["page"] for r in reports if rules.problems(r, r["page"])]
by_cpu = max(reports, key=lambda r: rules.reference_cpu(r) / r["budget"])
by_wall = max(reports, key=lambda r: r["duration"])
print(f"stress: exit {code}, {len(reports)} pages in {elapsed:.0f} s beside 2 busy processes, "
      f"{len(failed)} with problems {failed}")
print(f"stress: nearest its budget: {by_cpu['page']} {rules.reference_cpu(by_cpu):.0f} of {by_cpu['budget']:.0f} "
      f"reference CPU s ({by_cpu['cpu']:.0f} CPU s and {by_cpu['duration']:.0f} s wall here, calibration "
      f"{by_cpu['calibration'] or 0:.2f} s); slowest by wall: {by_wall['page']} {by_wall['duration']:.0f} s "
      f"({by_wall['cpu']:.0f} CPU s)")
sys.exit(code or bool(failed))
