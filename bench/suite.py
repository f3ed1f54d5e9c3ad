"""make bench: the example suite four ways on this machine, wall clock.

(a) pytest, serial; (b) pytest -n 2 --dist loadfile; (c) the floor: bench/floor.py, one process,
no pytest; (d) a new interpreter per page (bench/floor.py <page>), as notebook runners do.
The floor is timed before and after (a) and (b), and the ratios use the mean of the two: this
machine's speed drifts by up to a quarter over the ~20 minutes of a run (we measured the same floor
at 255 s and 328 s), and bracketing (a) and (b) cancels a steady drift.
The last line is `serial/floor=X.XX parallel/floor=Y.YY`.
"""

import subprocess
import sys
import time
from pathlib import Path

from tfv.pages import content_pages

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
PYTEST = [PY, "-m", "pytest", "docs", "-q", "-p", "no:cacheprovider"]


def timed(label, commands):
    start = time.perf_counter()
    for command in commands:
        run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if run.returncode != 0:  # a benchmark of a failing suite means nothing: show why and stop
            sys.exit(f"{label}: {' '.join(command)} exited {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}")
    seconds = time.perf_counter() - start
    print(f"{label:<34} {seconds:8.1f} s", flush=True)
    return seconds


pages = [str(p.relative_to(ROOT)) for p in content_pages()]
before = timed("(c) floor: one process, no pytest", [[PY, "bench/floor.py"]])
serial = timed("(a) pytest, serial", [PYTEST])
parallel = timed("(b) pytest -n 2 --dist loadfile", [PYTEST + ["-n", "2", "--dist", "loadfile"]])
after = timed("(c) floor again, after (a) and (b)", [[PY, "bench/floor.py"]])
floor = (before + after) / 2
print(f"{'(c) floor, mean of the two':<34} {floor:8.1f} s   (drift {100 * (after - before) / before:+.0f} %)")
timed(f"(d) one process per page ({len(pages)})", [[PY, "bench/floor.py", page] for page in pages])
print(f"serial/floor={serial / floor:.2f} parallel/floor={parallel / floor:.2f}")
