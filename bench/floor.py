"""The floor: the same examples with no pytest — one Python process, a fresh namespace per page.

    python bench/floor.py                 # every page, one process
    python bench/floor.py docs/x/y.md     # just these pages (bench/suite.py runs one page per process)

Markdown pages are parsed by the same Sybil configuration as the test run (tfv.run.markdown); notebook
pages' code cells run in order with matplotlib's non-interactive backend, each notebook in its own
interpreter (as under pytest, where each gets a kernel: a notebook may configure TensorFlow first).
"""

import linecache
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import SkipTest

from tfv.pages import content_pages, read_notebook
from tfv.run import isolation
from tfv.run.device import facts
from tfv.run.markdown import SYBIL  # the Sybil configuration, used here without pytest

ROOT = Path(__file__).resolve().parent.parent


def run_markdown(path):
    document = SYBIL.parse(path)
    isolation.setup(document.namespace)
    try:
        for example in document.examples():
            try:
                example.evaluate()
            except SkipTest:
                pass
    finally:
        isolation.teardown(document.namespace)


def run_notebook(path):
    import matplotlib

    matplotlib.use("Agg")
    os.chdir(tempfile.mkdtemp(prefix=f"floor-{path.stem}-"))  # as under pytest: files go to a temporary folder
    namespace = {"__name__": "__main__"}
    for index, cell in enumerate(read_notebook(path).cells):
        if cell.cell_type == "code":
            name = f"<{path.name} cell {index}>"  # as IPython does: AutoGraph reads a function's source from linecache
            linecache.cache[name] = (len(cell.source), None, cell.source.splitlines(True), name)
            exec(compile(cell.source, name, "exec"), namespace)


def main(paths):
    pages = [Path(p).resolve() for p in paths] or content_pages()
    start = time.perf_counter()
    facts()  # as under pytest: devices are configured before any page runs
    for page in pages:
        began = time.perf_counter()
        if page.suffix == ".py" and len(pages) > 1:  # a notebook may configure TensorFlow first: its own process
            subprocess.run([sys.executable, __file__, str(page)], check=True, stdout=subprocess.DEVNULL)
        else:
            (run_notebook if page.suffix == ".py" else run_markdown)(page)
        print(f"{time.perf_counter() - began:7.1f} s  {page.relative_to(ROOT)}", flush=True)
    print(f"floor: {len(pages)} pages in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
