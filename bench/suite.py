"""make bench: the example suite four ways on this machine, wall clock.

(a) pytest, serial; (b) pytest -n 2 --dist loadfile; (c) the floor: bench/floor.py, one process,
no pytest; (d) a new interpreter per page (bench/floor.py <page>), as notebook runners do.
The floor is timed before and after (a) and (b), and the ratios use the mean of the two: this
machine's speed drifts by up to a quarter over the ~20 minutes of a run (we measured the same floor
at 255 s and 328 s), and bracketing (a) and (b) cancels a steady drift.
The ratios line, `serial/floor=X.XX parallel/floor=Y.YY`, comes before (d), the longest part.
SAMPLE=k (`make bench SAMPLE=4`) times one page in k only, in the same order (a quarter of the pages: about a
quarter of the time); each ratio is then the sample's, and the line says so.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

from tfv.pages import content_pages

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
SAMPLE = int(os.environ.get("SAMPLE") or 1)


def timed(label, commands):
    start = time.perf_counter()
    for command in commands:
        run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if run.returncode != 0:  # a benchmark of a failing suite means nothing: show why and stop
            sys.exit(f"{label}: {' '.join(command)} exited {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}")
    seconds = time.perf_counter() - start
    print(f"{label:<34} {seconds:8.1f} s", flush=True)
    return seconds


every = [str(p.relative_to(ROOT)) for p in content_pages()]
pages = every[::SAMPLE]
PYTEST = [PY, "-m", "pytest", *pages, "-q", "-p", "no:cacheprovider"]
FLOOR = [PY, "bench/floor.py", *pages]
print(f"{len(pages)} of {len(every)} pages" + (f" (one in {SAMPLE})" if SAMPLE > 1 else ""), flush=True)
before = timed("(c) floor: one process, no pytest", [FLOOR])
serial = timed("(a) pytest, serial", [PYTEST])
parallel = timed("(b) pytest -n 2 --dist loadfile", [PYTEST + ["-n", "2", "--dist", "loadfile"]])
after = timed("(c) floor again, after (a) and (b)", [FLOOR])
floor = (before + after) / 2
print(f"{'(c) floor, mean of the two':<34} {floor:8.1f} s   (drift {100 * (after - before) / before:+.0f} %)")
sample = f"   (on {len(pages)} of {len(every)} pages)" if SAMPLE > 1 else ""
print(f"serial/floor={serial / floor:.2f} parallel/floor={parallel / floor:.2f}{sample}", flush=True)
timed(f"(d) one process per page ({len(pages)})", [[PY, "bench/floor.py", page] for page in pages])
