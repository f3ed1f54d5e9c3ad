"""The machinery's rules on small samples, in-process and without TensorFlow: the skip grammar, the fence parser,
the report rules, the HTML census and the cell-to-line map. The end-to-end cases are in test_bad_input/test_gate."""

import pytest
from sybil import Document
from sybil.testing import check_parser

from tfv.code import digest
from tfv.directives import skip_problem
from tfv.hashing import content_hash
from tfv.layout import DOCS
from tfv.pages import REFERENCE
from tfv.rules import problems
from tfv.run import recorder
from tfv.run.markdown import PythonParser
from tfv.run.notebook import _cell_lines
from tfv.site.census import check
from tfv.site.search import slim
from tfv.site.sources import sources


@pytest.mark.parametrize("action, argument", [("next", '"needs TF Serving"'),
                                              ("next", 'if(not HAS_GPU, reason="a GPU-only counter")')])
def test_a_skip_with_a_written_reason_is_allowed(action, argument):
    assert skip_problem(action, argument) is None


@pytest.mark.parametrize("action, argument, problem", [
    ("next", None, "cannot read"), ("next", '""', "needs a written reason"),
    ("next", "if(not HAS_GPU)", "needs a written reason"), ("start", None, "is not allowed"),
    ("next", '"unclosed', "cannot read")])
def test_a_skip_without_one_is_refused(action, argument, problem):
    assert problem in skip_problem(action, argument)


@pytest.mark.parametrize("fence", ["```py", '```python3 title="demo.py"', '``` {.python hl_lines="1"}', "```pycon"])
def test_every_fence_pygments_shows_as_python_runs(fence):
    recorder.RAN.clear()
    document = check_parser(PythonParser(), f"{fence}\nresult = 6 * 7\n```\n")
    assert document.namespace["result"] == 42 and recorder.RAN == [digest("result = 6 * 7\n")], recorder.RAN


def test_a_shell_fence_does_not_run():
    assert list(PythonParser()(Document("```bash\nexit 1\n```\n```text\nx\n```\n", "page.md"))) == []


KEY = "interview-questions/trace-lab.md"


def report(**changes):
    example = {"line": 5, "outcome": "passed", "reason": None, "duration": 1.0, "cpu": 1.0, "ran": [digest("x = 1")]}
    base = {"page": KEY, "device": "cpu", "gpu_model": None, "commit": "a" * 40, "date": "2026-12-03",
            "versions": {"tensorflow": "2.21.0", "keras": "3.15.1", "python": "3.11.7"},
            "hash": content_hash(DOCS / KEY), "examples": [example], "duration": 1.0, "cpu": 1.0, "calibration": None,
            "budget": 60.0, "results": {}}
    return {**base, **changes}


def test_a_sound_report_has_no_problem():
    assert problems(report(), KEY) == []


@pytest.mark.parametrize("changes, found", [
    ({"hash": "0" * 64}, "cpu report is stale"),
    ({"examples": [{"line": 9, "outcome": "failed", "reason": None, "duration": 0, "cpu": 0}]}, "failed on cpu, first at line 9"),
    ({"examples": [{"line": 9, "outcome": "skipped", "reason": " ", "duration": 0, "cpu": 0}]}, "skipped without a reason"),
    ({"examples": []}, "executed no example"),
    ({"cpu": 61.0, "calibration": REFERENCE}, "61 on the reference machine (this machine's calibration"),
    ({"cpu": 61.0, "calibration": REFERENCE / 2}, "61 on the reference machine"),  # a faster machine: its own seconds
    ({"cpu": 61.0}, "61 on the reference machine (no calibration measured"),
])
def test_each_rule_can_fail(changes, found):
    assert any(found in problem for problem in problems(report(**changes), KEY)), problems(report(**changes), KEY)


def test_a_slower_machine_scales_its_cpu_time_to_the_reference():
    """100 CPU s on a machine whose calibration is twice the reference's is 50 on the reference: within 60."""
    assert problems(report(cpu=100.0, calibration=2 * REFERENCE), KEY) == []
    assert any("over the page's budget" in p for p in problems(report(cpu=100.0, calibration=1.5 * REFERENCE), KEY))


def test_a_commit_pin_and_the_gpu_rules():
    assert "not aaaaaaaaaaaa" in problems(report(commit="b" * 40), KEY, commit="a" * 40)[0].replace(
        "from commit bbbbbbbbbbbb, ", "")
    cpu = report(results={"loss": {"value": 1.0, "rtol": 0.01, "atol": 0.0}})
    skipped = {"line": 9, "outcome": "skipped", "reason": "needs a GPU", "duration": 0, "cpu": 0}
    gpu = report(device="gpu", gpu_model="L4", results={"loss": {"value": 1.5, "rtol": 0.01, "atol": 0.0}},
                 examples=[skipped])
    found = problems(gpu, KEY, device="gpu", cpu=cpu)
    assert any("result 'loss': GPU 1.5 vs CPU 1.0" in p for p in found) and any("skipped on the GPU runner" in p
                                                                                for p in found), found


LABEL = '<p class="tfv-not-run"><strong>Skipped on the CPU run:</strong> why</p>'


def block(code, language="python"):
    return f'<div class="language-{language} highlight"><pre><code>{code}</code></pre></div>'


def test_the_census_accepts_only_code_that_ran_or_is_labelled(monkeypatch):
    ran = {"examples": [{"outcome": "passed", "ran": [digest("x = 1")]},
                        {"outcome": "skipped", "source": digest("y = 2")}]}
    monkeypatch.setattr("tfv.site.census.read_report", lambda device, key: ran)
    assert check(block("x = 1") + LABEL + block("y = 2") + '<p class="tfv-not-run">shell</p>' + block("ls", "bash"),
                 KEY) == []
    found = check(block("z = 3") + block("y = 2") + block("ls", "bash") + block("puts 1", "ruby"), KEY)
    assert [p.split(": ", 1)[1][:30] for p in found] == [
        "Python that this build's repor", "Python that this build's repor", "a 'bash' block without a visib",
        "a 'ruby' block (Ruby): neither"], found


@pytest.mark.parametrize("text, count, lines", [
    ("# %%\nx = 1\n\n# %%\ny = 2\n", 2, [1, 4]),
    ("# ---\n# description: d\n# ---\n\nimport os\n\n# %%\nx = 1\n", 2, [5, 7]),
    ("# %% [markdown]\n# # T\n\n# %%\nx = 1\n", 2, [1, 4])])
def test_each_notebook_cell_maps_to_its_source_line(tmp_path, text, count, lines):
    (tmp_path / "nb.py").write_text(text)
    assert _cell_lines(tmp_path / "nb.py", count) == lines


def test_each_titled_fence_pairs_with_its_own_title():
    """Two blocks with one title: only the single-include one gets a source link, and the other keeps its place."""
    page = ('```python title="a.py"\n--8<-- "a.py:one"\n\n--8<-- "a.py:two"\n```\n\n'
            '!!! note\n    ```python title="a.py"\n    --8<-- "a.py:three"\n    ```\n')
    assert sources(page) == [("a.py", None), ("a.py", "a.py:three")]


def test_a_search_entry_keeps_the_prose_and_the_names_its_code_uses():
    """The code block leaves the entry; the names it uses that the prose lacks follow the prose, once each."""
    text = ("<p>Add <code>prefetch</code> at the end.</p> <pre><code>ds = tf.data.Dataset.range(8).prefetch(2)\n"
            "ds = ds.prefetch(2)\nprint(len(list(ds)))\n</code></pre> <p>Then measure.</p>")
    assert slim(text) == ("<p>Add <code>prefetch</code> at the end.</p> <p>Then measure.</p> "
                          "<p><code>tf.data.Dataset.range ds.prefetch print list</code></p>")
    assert slim("<p>No code here.</p>") == "<p>No code here.</p>"


def test_the_machinery_imports_no_tensorflow():
    """Every module of the package loads without TensorFlow (the unit tests, the docs environment, the command line);
    only a page's run imports it."""
    import subprocess
    import sys

    code = ("import pkgutil, sys, tfv\n"
            "for module in pkgutil.walk_packages(tfv.__path__, 'tfv.'): __import__(module.name)\n"
            "assert 'tensorflow' not in sys.modules and 'keras' not in sys.modules, 'TensorFlow imported'\n"
            "print(len([m for m in sys.modules if m.startswith('tfv.')]))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0 and int(result.stdout) >= 25, result.stdout + result.stderr
