"""A notebook page's kernel is set up as a Markdown page's namespace is (tfv.run.kernel): two logical devices, seed 0,
HAS_GPU, ROOT, `record` (its results reach the report), the socket guard, and the report's facts from the kernel."""

import json

from sandbox import BIN, run

CELLS = '''# %%
import socket

import keras
import numpy as np
import tensorflow as tf

first = np.random.rand()
keras.utils.set_random_seed(0)
assert first == np.random.rand(), "the kernel did not start from seed 0"
assert len(tf.config.list_logical_devices("CPU")) == 2, tf.config.list_logical_devices()
assert HAS_GPU is False and (ROOT / "mkdocs.yml").exists()

# %%
record("answer", 6 * 7, rtol=0.0)
try:
    socket.socket().connect(("127.0.0.1", 9))
except OSError as error:
    assert "did not opt into loopback" in str(error), error
else:
    raise AssertionError("the socket guard let a connection through")
'''


def test_a_notebook_kernel_gets_the_page_api_and_isolation(project):
    page = project.path / "docs/interview-questions/kernel.py"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(CELLS)
    code, out = run(project, str(BIN / "pytest"), "-p", "no:cacheprovider", "docs/interview-questions/kernel.py")
    assert code == 0, out
    report = json.loads((project.path / "build/report/cpu/interview-questions/kernel.py.json").read_text())
    assert report["results"] == {"answer": {"value": 42.0, "rtol": 0.0, "atol": 0.0}}, report["results"]
    assert report["device"] == "cpu" and report["versions"]["tensorflow"], report
    assert [e["cells"] for e in report["examples"]] == [2], report["examples"]
    executed = json.loads((project.path / "build/executed/interview-questions/kernel.ipynb").read_text())
    counts = [cell.get("execution_count") for cell in executed["cells"] if cell["cell_type"] == "code"]
    assert counts == [1, 2], counts  # the prelude is not one of the page's cells
