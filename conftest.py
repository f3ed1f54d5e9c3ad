"""How the examples in docs/ run: one Sybil configuration, a notebook runner and the report.

Contributors: run one page with `pytest docs/<section>/<slug>.md` (whole pages only: the
blocks of a page share one namespace and run in order). See CONTRIBUTING.md.
"""

import datetime
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.evaluators.python import PythonEvaluator, pad
from sybil.integration.pytest import SybilItem
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

sys.path.insert(0, str(Path(__file__).parent / "hooks"))
import verification  # noqa: E402  (hooks/verification.py, shared with the site build)

ROOT = verification.ROOT
PYTHON_FENCES = ("python", "py", "pycon")  # also what tests/test_census.py calls Python
INCLUDE_LINE = re.compile(r"""^\s*--8<--\s+["']([^"']+)["']\s*$""")


# --- Which machine is this? -------------------------------------------------------------

def _gpus():
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if os.environ.get("REQUIRE_GPU") == "1" and not gpus:
        pytest.exit("REQUIRE_GPU=1 but TensorFlow sees no GPU: this runner cannot produce a GPU report", 3)
    return gpus


def facts():
    """Device and versions, computed once, before the first example (TensorFlow is imported only then)."""
    if not FACTS:
        FACTS.update(_device_facts())
    return FACTS


def _device_facts():
    import keras
    import tensorflow as tf

    gpus = _gpus()
    if not gpus:  # two logical CPUs, so distribution pages can show two replicas on CPU
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    model = tf.config.experimental.get_device_details(gpus[0]).get("device_name") if gpus else None
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return {
        "device": "gpu" if gpus else "cpu",
        "gpu_model": model,
        "versions": {"tensorflow": tf.__version__, "keras": keras.__version__, "python": platform.python_version()},
        "commit": commit or "unknown",
        "date": datetime.date.today().isoformat(),
    }


FACTS = {}


def pytest_sessionstart(session):
    if os.environ.get("REQUIRE_GPU") == "1":
        _gpus()  # fail at once, before collecting anything


# --- Per page: a namespace, a temporary working folder, no network ----------------------

class _SocketGuard:
    """Refuse every connection; with `network: loopback` in a page's front matter, allow 127.0.0.0/8 and ::1."""

    def __init__(self, loopback):
        self.loopback = loopback
        self.saved = {name: getattr(socket.socket, name) for name in ("connect", "connect_ex", "sendto")}

    def check(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if str(host) in ("localhost", "::1") or str(host).startswith("127."):
            if self.loopback:
                return
            raise OSError("network blocked: this page did not opt into loopback (`network: loopback`)")
        if isinstance(address, (str, bytes)):  # AF_UNIX paths (e.g. kernel plumbing) are local
            return
        raise OSError(f"network blocked in examples: refused {address!r}")

    def install(self):
        def wrap(original, address_index):
            def guarded(sock, *args):
                self.check(args[address_index])
                return original(sock, *args)
            return guarded

        socket.socket.connect = wrap(self.saved["connect"], 0)
        socket.socket.connect_ex = wrap(self.saved["connect_ex"], 0)
        socket.socket.sendto = wrap(self.saved["sendto"], -1)

    def remove(self):
        for name, original in self.saved.items():
            setattr(socket.socket, name, original)


def setup(namespace):
    page = Path(namespace["__file__"])
    guard = _SocketGuard(loopback=verification.front_matter(page)[0].get("network") == "loopback")
    guard.install()
    workdir = tempfile.mkdtemp(prefix=f"tfv-{page.stem}-")
    namespace.update(HAS_GPU=facts()["device"] == "gpu", ROOT=ROOT, record=record, _guard=guard, _cwd=os.getcwd())
    os.chdir(workdir)  # examples write only here


RECORDED = []  # named results of the example running now


def record(name, value, *, rtol=1e-6, atol=0.0):
    """Record a named numeric result. The publish build fails when the GPU run's value differs from
    the CPU run's by more than atol + rtol * |cpu value| (the tolerances the page declares here)."""
    RECORDED.append((name, {"value": float(value), "rtol": rtol, "atol": atol}))


def teardown(namespace):
    namespace["_guard"].remove()
    workdir = os.getcwd()
    os.chdir(namespace["_cwd"])
    shutil.rmtree(workdir, ignore_errors=True)
    import keras

    keras.backend.clear_session()


# --- Python blocks: Material-style fences and --8<-- includes ---------------------------

class IncludingEvaluator(PythonEvaluator):
    """Runs a block line by line-group; a `--8<-- "file:section"` line is expanded by pymdownx
    itself (configured from mkdocs.yml) and compiled under the snippet's own file name and line."""

    _snippets = None

    @classmethod
    def expand(cls, spec):
        if cls._snippets is None:
            import markdown
            from mkdocs.config import load_config

            config = dict(load_config(str(ROOT / "mkdocs.yml")).mdx_configs["pymdownx.snippets"])
            config["base_path"] = [str(ROOT / base) for base in config["base_path"]]  # examples run in a tmp dir
            md = markdown.Markdown(extensions=["pymdownx.snippets"], extension_configs={"pymdownx.snippets": config})
            cls._snippets = md.preprocessors["snippet"]
        return "\n".join(cls._snippets.run([f'--8<-- "{spec}"'])) + "\n"

    def __call__(self, example):
        __tracebackhide__ = True
        chunks, start, lines = [], 0, str(example.parsed).splitlines(keepends=True)
        first_line = example.line + example.parsed.line_offset
        for i, line in enumerate(lines + [None]):
            match = INCLUDE_LINE.match(line) if line is not None else None
            if match or line is None:
                if i > start:
                    chunks.append((pad("".join(lines[start:i]), first_line + start), example.path))
                if match:
                    chunks.append(self.snippet(match.group(1)))
                start = i + 1
        for source, filename in chunks:
            exec(compile(source, filename, "exec", flags=self.flags, dont_inherit=True), example.namespace)
        example.namespace.pop("__builtins__", None)

    def snippet(self, spec):
        path = ROOT / spec.split(":")[0]
        text = self.expand(spec)
        offset = path.read_text(encoding="utf-8").find(text)
        line = path.read_text(encoding="utf-8")[:offset].count("\n") if offset >= 0 else 0
        return pad(text, line), str(path)


class MaterialFenceParser(CodeBlockParser):
    """Sybil's stock parser runs only fences whose info string is exactly `python`; Material
    pages also write ```py, ```python title="…" and ```python hl_lines="2"."""

    def __call__(self, document):
        for region in self.lexers(document):
            words = region.lexemes["arguments"].split()
            if words and words[0] in PYTHON_FENCES:
                region.parsed = region.lexemes["source"]
                region.evaluator = self._evaluator
                yield region


class PythonParser(PythonCodeBlockParser):
    codeblock_parser_class = MaterialFenceParser

    def __init__(self):
        super().__init__()
        self.codeblock_parser = MaterialFenceParser("python", IncludingEvaluator())


def page_path(document):
    """Not a parser: records the page path so `setup` can read the page's front matter."""
    document.namespace["__file__"] = document.path
    return []


sybil = Sybil(
    parsers=[page_path, PythonParser(), SkipParser()],
    path="docs",
    patterns=["*.md"],
    setup=setup,
    teardown=teardown,
)
_collect_markdown = sybil.pytest()


# --- Notebook pages: jupytext percent .py files, executed once, outputs kept -------------

class NotebookItem(pytest.Item):
    def runtest(self):
        import jupytext
        import nbformat
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError

        notebook = jupytext.read(self.path)
        if notebook.cells and notebook.cells[0].cell_type == "raw" and notebook.cells[0].source.startswith("---"):
            notebook.cells.pop(0)  # the page's front matter (description, tags): page metadata, not content
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        workdir = tempfile.mkdtemp(prefix=f"tfv-{self.path.stem}-")
        client = NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=False,
                                resources={"metadata": {"path": workdir}})
        try:
            client.execute()
        except CellExecutionError as error:
            cell = next(i for i, c in enumerate(notebook.cells) if c.get("outputs") and
                        any(o.get("output_type") == "error" for o in c.outputs))
            raise NotebookCellError(self.path, _cell_line(self.path, cell), f"notebook cell raised\n{error}") from None
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        for cell, output in ((i, o) for i, c in enumerate(notebook.cells) for o in c.get("outputs", [])):
            if "WARNING:tensorflow" in output.get("text", ""):  # outputs are published as they are
                raise NotebookCellError(self.path, _cell_line(self.path, cell), "notebook cell shows a TensorFlow "
                                        f"warning on the page; fix its cause:\n{output['text'][:300]}")
        target = verification.EXECUTED / Path(verification.page_key(self.path)).with_suffix(".ipynb")
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, target)
        self.user_properties.append(("cells", sum(c.cell_type == "code" for c in notebook.cells)))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, NotebookCellError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, 0, f"notebook {self.path.name}"


class NotebookCellError(Exception):
    def __init__(self, path, line, message):
        super().__init__(f"{path}:{line}: {message}")


def _cell_line(path, index):
    """Line of the index-th `# %%` cell marker in a jupytext percent file (1-based)."""
    markers = [n for n, line in enumerate(Path(path).read_text().splitlines(), 1) if line.startswith("# %%")]
    return markers[index] if index < len(markers) else 1


class NotebookFile(pytest.File):
    def collect(self):
        yield NotebookItem.from_parent(self, name=self.path.name)


def _is_notebook(path):
    return path.suffix == ".py" and verification.DOCS in path.parents


def pytest_collect_file(file_path, parent):
    if _is_notebook(file_path):  # named on the command line, pytest's Python plugin asks the hook below
        return None if parent.session.isinitpath(file_path) else NotebookFile.from_parent(parent, path=file_path)
    return _collect_markdown(file_path, parent)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path, parent):
    if _is_notebook(module_path):  # a notebook page is not a test module
        return NotebookFile.from_parent(parent, path=module_path)


# --- The verification report ------------------------------------------------------------

def pytest_itemcollected(item):
    if isinstance(item, SybilItem):
        kind = "example" if isinstance(item.example.region.evaluator, (PythonEvaluator,)) or \
            type(item.example.region.evaluator).__name__ == "DocTestEvaluator" else "directive"
        item.user_properties += [("page", str(item.example.path)), ("kind", kind), ("line", item.example.line)]
    elif isinstance(item, NotebookItem):
        item.user_properties += [("page", str(item.path)), ("kind", "notebook"), ("line", 1)]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    RECORDED.clear()
    try:
        return (yield)
    finally:
        if RECORDED:
            item.user_properties.append(("results", dict(RECORDED)))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.skipped and isinstance(item, SybilItem):  # name the page and line, not unittest.py
        report.longrepr = (str(item.example.path), item.example.line, report.longrepr[2])
    return report


RESULTS = {}
BUDGET_ERRORS = []


def pytest_runtest_logreport(report):
    props = dict(report.user_properties)
    if props.get("kind") not in ("example", "notebook"):
        return
    if report.when == "call" or report.outcome != "passed":  # setup skips/errors count too
        outcome = report.outcome
        reason = report.longrepr[2].removeprefix("Skipped: ") if report.skipped else None
        entry = {"line": props["line"], "outcome": outcome, "reason": reason, "duration": round(report.duration, 3)}
        for extra in ("cells", "results"):
            if extra in props:
                entry[extra] = props[extra]
        RESULTS.setdefault(props["page"], {})[props["line"]] = entry


def pytest_sessionfinish(session):
    if hasattr(session.config, "workerinput") or not RESULTS:
        return  # xdist workers report to the controller, which writes
    facts()
    for page, examples in RESULTS.items():
        ordered = [examples[line] for line in sorted(examples)]
        results = {name: value for entry in ordered for name, value in entry.pop("results", {}).items()}
        seconds, allowed = round(sum(e["duration"] for e in ordered), 3), verification.budget(page)
        if seconds > allowed:
            session.exitstatus = 1
            BUDGET_ERRORS.append(f"{verification.page_key(page)}: examples took {seconds:.0f} s, budget {allowed:.0f} s")
        if FACTS["device"] == "gpu" and os.environ.get("REQUIRE_GPU") == "1":
            for entry in ordered:
                if entry["outcome"] == "skipped" and "GPU" in (entry["reason"] or ""):
                    entry["outcome"] = "failed"  # a GPU example may not end skipped on the GPU runner
                    session.exitstatus = 1
        verification.write_report(FACTS["device"], verification.page_key(page), {
            **FACTS, "page": verification.page_key(page), "hash": verification.content_hash(page),
            "examples": ordered, "duration": seconds, "budget": allowed, "results": results,
        })


def pytest_terminal_summary(terminalreporter):
    if RESULTS and not hasattr(terminalreporter.config, "workerinput"):
        count = sum(len(v) for v in RESULTS.values())
        terminalreporter.write_line(f"verification report: {count} examples on {len(RESULTS)} pages "
                                    f"-> {verification.REPORTS / FACTS['device']}")
        for error in BUDGET_ERRORS:
            terminalreporter.write_line(f"OVER BUDGET: {error}", red=True)
