"""How the examples in docs/ run: one Sybil configuration, a notebook runner and the report.

Contributors: run one page with `pytest docs/<section>/<slug>.md` (whole pages only: the
blocks of a page share one namespace and run in order). See CONTRIBUTING.md.
"""

import ast
import datetime
import ipaddress
import os
import platform
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import includes  # hooks/ (pyproject: pythonpath), as are notebooks, shards and verification: shared with the site build
import notebooks
import psutil
import pytest
import shards
import verification
from pymdownx.snippets import SnippetMissingError
from sybil import Sybil
from sybil.evaluators.python import PythonEvaluator, pad
from sybil.integration.pytest import SybilItem
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

ROOT = verification.ROOT
REFUSED_TAGS = {"skip-execution", "raises-exception"}  # nbclient would skip the cell, or let it raise


# --- Which machine is this? -------------------------------------------------------------

def _gpus():
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if os.environ.get("TFV_REQUIRE_GPU") == "1" and not gpus:
        pytest.exit("TFV_REQUIRE_GPU=1 but TensorFlow sees no GPU: this runner cannot produce a GPU report", 3)
    return gpus


def facts():
    """Device and versions of the process that runs the examples, computed once, before its first example
    (TensorFlow is imported only then). Each report is written from the facts its examples ran with."""
    if not FACTS:
        configure_devices()
        FACTS.update(_device_facts())
    return FACTS


def configure_devices():
    """Split the device into two logical devices, so distribution pages run with two replicas on every
    runner: the CPU into two logical CPUs, or the first GPU into two logical GPUs of TFV_GPU_MEMORY_MB each
    (default 2048; a logical GPU needs a memory limit). Must run before TensorFlow initialises its devices."""
    import tensorflow as tf

    gpus = _gpus()
    if gpus:
        memory = int(os.environ.get("TFV_GPU_MEMORY_MB", "2048"))
        tf.config.set_logical_device_configuration(gpus[0], [tf.config.LogicalDeviceConfiguration(memory)] * 2)
    else:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)


def _device_facts():
    import keras
    import tensorflow as tf

    gpus = _gpus()
    model = tf.config.experimental.get_device_details(gpus[0]).get("device_name") if gpus else None
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return {
        "device": "gpu" if gpus else "cpu",
        "gpu_model": model,
        "versions": {"tensorflow": tf.__version__, "keras": keras.__version__, "python": platform.python_version()},
        "commit": commit if re.fullmatch("[0-9a-f]{40}", commit) else "unknown",
        "date": datetime.date.today().isoformat(),
    }


FACTS = {}


def pytest_addoption(parser):
    parser.addoption("--shard", metavar="i/N", help="run only the pages of shard i of N (hooks/shards.py)")


def _shard(config):
    """(i, N, the pages of shard i) for `--shard i/N`, else None; the same plan in every xdist process."""
    spec = config.getoption("shard")
    if not spec:
        return None
    index, count = shards.parse(spec)
    return index, count, set(shards.plan(verification.content_pages(), count)[index - 1])


def pytest_collection_modifyitems(config, items):
    shard = _shard(config)
    if shard:
        config.hook.pytest_deselected(items=[item for item in items if item.path not in shard[2]])
        items[:] = [item for item in items if item.path in shard[2]]


def pytest_sessionstart(session):
    if os.environ.get("TFV_REQUIRE_GPU") == "1":
        _gpus()  # fail at once, before collecting anything


# --- Per page: a namespace, a temporary working folder, no network, no leaks -------------

class _SocketGuard:
    """Refuse every connection and datagram; with `network: loopback` in a page's front matter, allow
    addresses that resolve to loopback (127.0.0.0/8, ::1). The outer wall is the network namespace the
    Makefile runs examples in (only loopback exists there); this guard is the inner one."""

    CALLS = {"connect": 0, "connect_ex": 0, "sendto": -1, "sendmsg": 3}  # method: index of the address argument

    def __init__(self, loopback):
        self.loopback = loopback
        self.saved = {name: getattr(socket.socket, name) for name in self.CALLS}

    def check(self, sock, address):
        if sock.family == getattr(socket, "AF_UNIX", None):
            return  # a local file path (kernel plumbing), not the network
        if address is None:
            return  # sendmsg on a connected socket: its connect() was checked already
        host = address[0]
        try:
            resolved = {info[4][0] for info in socket.getaddrinfo(host, None)}
        except OSError:
            resolved = set()
        loopback = bool(resolved) and all(ipaddress.ip_address(ip.split("%")[0]).is_loopback for ip in resolved)
        if not loopback:
            raise OSError(f"network blocked in examples: refused {address!r}")
        if not self.loopback:
            raise OSError("network blocked: this page did not opt into loopback (`network: loopback`)")

    def install(self):
        for name, index in self.CALLS.items():
            def guarded(sock, *args, _original=self.saved[name], _index=index):
                self.check(sock, args[_index] if len(args) > abs(_index) - (_index < 0) else None)
                return _original(sock, *args)
            setattr(socket.socket, name, guarded)

    def remove(self):
        for name, original in self.saved.items():
            setattr(socket.socket, name, original)


def _globals():
    """Process-wide switches a page may flip; teardown puts back what setup saw."""
    import keras
    import tensorflow as tf

    return {
        "environment": dict(os.environ),
        "warning filters": list(warnings.filters),
        "keras dtype policy": keras.config.dtype_policy().name,
        "keras floatx": keras.config.floatx(),
        "functions run eagerly": tf.config.functions_run_eagerly(),
        "soft device placement": tf.config.get_soft_device_placement(),
        "XLA auto-jit": tf.config.optimizer.get_jit(),
    }


def _restore(saved):
    import keras
    import tensorflow as tf

    os.environ.clear()
    os.environ.update(saved["environment"])
    warnings.filters[:] = saved["warning filters"]
    keras.config.set_dtype_policy(saved["keras dtype policy"])
    keras.config.set_floatx(saved["keras floatx"])
    tf.config.run_functions_eagerly(saved["functions run eagerly"])
    tf.config.set_soft_device_placement(saved["soft device placement"])
    tf.config.optimizer.set_jit(saved["XLA auto-jit"])


def _seed():
    """Every page starts from the same random state, whatever ran before it on this worker."""
    import keras

    keras.utils.set_random_seed(0)  # Python, NumPy and TensorFlow


def _running(children):
    """The processes still running: not exited, and not a zombie waiting for its parent to reap it (a zombie is
    not reaped here: its parent, a pool say, may still wait for it)."""
    alive = []
    for child in children:
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                alive.append(child)
        except psutil.NoSuchProcess:
            pass
    return alive


def _leaks(threads_before):
    """Threads and child processes a page started and left running (detected, then ended)."""
    found = []
    for child in _running(psutil.Process().children(recursive=True)):
        try:
            command = " ".join(child.cmdline()[:3])
            child.kill()
        except (psutil.ZombieProcess, psutil.NoSuchProcess):
            continue  # it exited while we looked
        found.append(f"child process {child.pid} ({command})")
    for thread in set(threading.enumerate()) - threads_before:
        thread.join(timeout=2)
        if thread.is_alive():
            found.append(f"thread {thread.name!r}")
    return found


def setup(namespace):
    page = Path(namespace["__file__"])
    facts()
    guard = _SocketGuard(loopback=verification.front_matter(page)[0].get("network") == "loopback")
    workdir = tempfile.mkdtemp(prefix=f"tfv-{page.stem}-")
    namespace.update(HAS_GPU=FACTS["device"] == "gpu", ROOT=ROOT, record=record, _guard=guard, _cwd=os.getcwd(),
                     _globals=_globals(), _threads=set(threading.enumerate()))
    _seed()
    guard.install()
    os.chdir(workdir)  # examples write only here


RECORDED = []  # named results of the example running now
RAN = []  # digests of the code the example running now executed


def record(name, value, *, rtol=1e-6, atol=0.0):
    """Record a named numeric result. The publish build fails when the GPU run's value differs from
    the CPU run's by more than atol + rtol * |cpu value| (the tolerances the page declares here)."""
    RECORDED.append((name, {"value": float(value), "rtol": rtol, "atol": atol}))


def teardown(namespace):
    import keras

    namespace["_guard"].remove()
    workdir = os.getcwd()
    os.chdir(namespace["_cwd"])
    shutil.rmtree(workdir, ignore_errors=True)
    keras.backend.clear_session()
    _restore(namespace["_globals"])
    leaks = _leaks(namespace["_threads"])
    if leaks:
        raise RuntimeError(f"{verification.page_key(namespace['__file__'])}: the page left running: {', '.join(leaks)}")


# --- Python blocks: every fence Pygments shows as Python, --8<-- includes, reasoned skips ---

class IncludingEvaluator(PythonEvaluator):
    """Runs a block; a `--8<-- "file:section"` line is expanded by pymdownx itself (hooks/includes.py) and
    compiled under the snippet's own file name and line. Records the digest of the code as the page shows it,
    which is how the build matches a rendered block to its execution."""

    @classmethod
    def shown(cls, example):
        """(code as the reader sees it, [(source, filename) chunks to compile])."""
        chunks, shown, start = [], [], 0
        lines = str(example.parsed).splitlines(keepends=True)
        first_line = example.line + example.parsed.line_offset
        for i, line in enumerate(lines + [None]):
            match = includes.LINE.match(line) if line is not None else None
            if match or line is None:
                if i > start:
                    chunks.append((pad("".join(lines[start:i]), first_line + start), str(example.path)))
                    shown.append("".join(lines[start:i]))
                if match:
                    path, text = ROOT / match["spec"].split(":")[0], includes.expand(match["spec"])
                    chunks.append((pad(text, includes.offset(path, match["spec"])), str(path)))
                    shown.append("".join(match["indent"] + part for part in text.splitlines(keepends=True)))
                start = i + 1
        return "".join(shown), chunks

    def __call__(self, example):
        __tracebackhide__ = True
        code, chunks = self.shown(example)
        for source, filename in chunks:
            exec(compile(source, filename, "exec", flags=self.flags, dont_inherit=True), example.namespace)
        example.namespace.pop("__builtins__", None)
        RAN.append(verification.digest(code))


class MaterialFenceParser(CodeBlockParser):
    """Sybil's stock parser runs only fences whose info string is exactly `python`; this one runs every
    fence Pygments highlights as Python: ```py, ```python3, ```python title="…", ``` {.python hl_lines="2"}."""

    def __call__(self, document):
        for region in self.lexers(document):
            if verification.is_python(region.lexemes["arguments"]):
                region.parsed = region.lexemes["source"]
                region.evaluator = self._evaluator
                yield region


class PythonParser(PythonCodeBlockParser):
    codeblock_parser_class = MaterialFenceParser

    def __init__(self):
        super().__init__()
        self.codeblock_parser = MaterialFenceParser("python", IncludingEvaluator())


class ReasonedSkipParser(SkipParser):
    """Sybil's skip directive, accepted only as `skip: next "reason"` or `skip: next if(cond, reason="...")`:
    a skip without a reason would pass silently, and a `start`...`end` range would hide blocks that show no label."""

    def __call__(self, document):
        for region in super().__call__(document):
            action, argument = region.parsed
            problem = _skip_problem(action, argument)
            if problem:
                line = document.text.count("\n", 0, region.start) + 1
                raise ValueError(f"{verification._rel(document.path)}:{line}: {problem}")
            yield region


def _skip_problem(action, argument):
    if action != "next":
        return f"`skip: {action}` is not allowed: put `skip: next \"reason\"` above each block to skip"
    try:
        expression = ast.parse((argument or "").strip().replace("if(", "if_(", 1), mode="eval").body
    except SyntaxError:
        return f"cannot read the skip's reason: {argument!r}"
    if isinstance(expression, ast.Call) and getattr(expression.func, "id", "") == "if_":
        reasons = [k.value for k in expression.keywords if k.arg == "reason"] + expression.args[1:2]
        reason = reasons[0] if len(reasons) == 1 else None
    else:
        reason = expression
    if not (isinstance(reason, ast.Constant) and isinstance(reason.value, str) and reason.value.strip()):
        return 'a skip needs a written reason: `skip: next "why"` or `skip: next if(not HAS_GPU, reason="why")`'
    return None


def page_path(document):
    """Not a parser: records the page path so `setup` can read the page's front matter."""
    document.namespace["__file__"] = document.path
    return []


sybil = Sybil(
    parsers=[page_path, PythonParser(), ReasonedSkipParser()],
    path="docs",
    patterns=["*.md"],
    setup=setup,
    teardown=teardown,
)
_collect_markdown = sybil.pytest()


def _lint_skipped(item):
    """A block that does not run here (a GPU-only block on the CPU runner) is still compiled and checked
    for undefined names against the page's namespace, so the GPU run cannot fail on a typo."""
    code, chunks = IncludingEvaluator.shown(item.example)
    for source, filename in chunks:
        compile(source, filename, "exec", dont_inherit=True)
    known = sorted(set(item.example.namespace) | {"__file__"})
    page = verification._rel(item.example.path)
    result = subprocess.run(
        [str(Path(sys.executable).parent / "ruff"), "check", "--no-cache", "--isolated", "--output-format", "concise",
         "--select", "F821,F822,F823,E9", "--config", f"builtins = {known!r}".replace("'", '"'),
         "--stdin-filename", "block.py", "-"],  # a .md name would make ruff read Markdown
        input=pad(code, item.example.line + item.example.parsed.line_offset), capture_output=True, text=True)
    if result.returncode != 0:
        found = (result.stdout.strip() or result.stderr.strip()).replace("block.py:", f"{page}:")
        raise SyntaxError(f"skipped block does not lint:\n{found}")
    return verification.digest(code)


# --- Notebook pages: jupytext percent .py files, executed once, outputs kept -------------

class NotebookItem(pytest.Item):
    def runtest(self):
        import nbformat
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

        facts()  # this worker's device and versions go into the report
        try:
            notebook = notebooks.read(self.path)
        except SnippetMissingError as error:  # a `# --8<--` line naming a missing snippet or section: its line
            text = self.path.read_text(encoding="utf-8").splitlines()
            named = [n for n, t in enumerate(text, 1) if (m := includes.CELL_LINE.match(t))
                     and any(part and f"'{part}'" in str(error) for part in m["spec"].split(":"))]
            raise NotebookCellError(self.path, (named or [1])[0], f"include failed: {error}") from None
        lines = _cell_lines(self.path, len(notebook.cells))
        for index, cell in enumerate(notebook.cells):
            refused = REFUSED_TAGS & set(cell.metadata.get("tags", []))
            if refused or cell.cell_type == "raw":
                what = f"is tagged {sorted(refused)}" if refused else "is a raw cell"
                raise NotebookCellError(self.path, lines[index], f"cell {what}: every cell of a page must run and pass")
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        workdir = tempfile.mkdtemp(prefix=f"tfv-{self.path.stem}-")
        current = [0]
        client = NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=False,
                                resources={"metadata": {"path": workdir}},
                                on_cell_start=lambda cell, cell_index: current.__setitem__(0, cell_index))
        try:
            client.execute()
        except CellExecutionError as error:
            raise NotebookCellError(self.path, lines[current[0]], f"notebook cell raised\n{error}") from None
        except CellTimeoutError:
            raise NotebookCellError(self.path, lines[current[0]], "notebook cell timed out (300 s)") from None
        except DeadKernelError as error:
            raise NotebookCellError(self.path, lines[current[0]], f"the kernel died in this cell: {error}") from None
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type == "code" and cell.source.strip() and cell.get("execution_count") is None:
                raise NotebookCellError(self.path, lines[index], "cell did not run")
            for output in cell.get("outputs", []):
                if "WARNING:tensorflow" in output.get("text", ""):  # outputs are published as they are
                    raise NotebookCellError(self.path, lines[index], "notebook cell shows a TensorFlow warning on "
                                            f"the page; fix its cause:\n{output['text'][:300]}")
        target = verification.executed_notebook(verification.page_key(self.path))
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, target)
        ran = [c for c in notebook.cells if c.cell_type == "code" and c.get("execution_count") is not None]
        self.user_properties += [("cells", len(ran)), ("ran", [verification.digest(c.source) for c in ran]),
                                 ("notebook", verification.file_digest(target))]

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, NotebookCellError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, 0, f"notebook {self.path.name}"


class NotebookCellError(Exception):
    def __init__(self, path, line, message):
        super().__init__(f"{verification._rel(path)}:{line}: {message}")


def _cell_lines(path, count):
    """The line where each cell starts in a jupytext percent file (1-based): code before the first
    `# %%` marker, when jupytext made a cell of it, starts at its own first line."""
    text = Path(path).read_text(encoding="utf-8").splitlines()
    markers = [n for n, line in enumerate(text, 1) if line.startswith("# %%")]
    if count > len(markers):
        header = re.match(r"# ---\n(?:#.*\n)*?# ---\n", "\n".join(text) + "\n")
        skip = header.group(0).count("\n") if header else 0
        markers.insert(0, next(n for n, line in enumerate(text, 1) if n > skip and line.strip()))
    return markers + [1] * (count - len(markers))


class NotebookFile(pytest.File):
    def collect(self):
        yield NotebookItem.from_parent(self, name=self.path.name)


class BrokenPage(pytest.Item):
    """A misnamed page, or one whose front matter cannot be read: it fails on its own, naming the file;
    every other page still runs and reports."""

    def __init__(self, *, problem, **kwargs):
        super().__init__(**kwargs)
        self.problem = problem

    def runtest(self):
        raise ValueError(self.problem)

    def repr_failure(self, excinfo, style=None):
        return self.problem

    def reportinfo(self):
        return self.path, 0, "page"


def _is_page(path):
    """A file under docs/ that pytest should look at: every .md and .py except the site pages (home, section
    indexes, tags), which hold no examples (a code block there has no report, so the HTML census refuses it)."""
    return (path.suffix in (".md", ".py") and verification.DOCS in path.parents
            and verification.page_key(path) not in verification.SITE_PAGES)


def _page_problem(path):
    key = verification.page_key(path)
    if not verification.is_content_page(key):
        return (f"docs/{key}:1: not a page file the site publishes: docs/<section>/<slug>.md or .py, "
                f"with <section> one of {', '.join(verification.SECTIONS)} and a lowercase, hyphenated slug")
    try:
        verification.front_matter(path)
    except ValueError as error:
        return str(error)
    return None


def pytest_collect_file(file_path, parent):
    if not _is_page(file_path):
        return None
    if file_path.suffix == ".py" and parent.session.isinitpath(file_path):
        return None  # named on the command line: pytest's Python plugin asks pytest_pycollect_makemodule below
    return _page_file(file_path, parent)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path, parent):
    if _is_page(module_path):  # a notebook page is not a test module
        return _page_file(module_path, parent)


def _page_file(path, parent):
    problem = _page_problem(path)
    if problem:
        return _BrokenFile.from_parent(parent, path=path, problem=problem)
    if path.suffix == ".py":
        return NotebookFile.from_parent(parent, path=path)
    return _collect_markdown(path, parent)


class _BrokenFile(pytest.File):
    def __init__(self, *, problem, **kwargs):
        super().__init__(**kwargs)
        self.problem = problem

    def collect(self):
        yield BrokenPage.from_parent(self, name="page", problem=self.problem)


# --- The verification report ------------------------------------------------------------

def _is_python_example(item):
    return isinstance(item, SybilItem) and isinstance(item.example.region.evaluator, PythonEvaluator)


def pytest_itemcollected(item):
    if isinstance(item, SybilItem):
        kind = "example" if _is_python_example(item) else "directive"
        item.user_properties += [("page", str(item.example.path)), ("kind", kind), ("line", item.example.line)]
    elif isinstance(item, (NotebookItem, BrokenPage)):
        item.user_properties += [("page", str(item.path)), ("kind", "notebook"), ("line", 1)]


def cpu_seconds():
    """CPU time of this process (every thread) and of its children that have ended: what a page's budget limits.
    Unlike wall time it does not grow when another process loads the machine."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    RECORDED.clear()
    RAN.clear()
    start = cpu_seconds()
    try:
        result = yield
    finally:
        item.user_properties.append(("cpu", round(cpu_seconds() - start, 3)))
        if RECORDED:
            item.user_properties.append(("results", dict(RECORDED)))
    if _is_python_example(item):
        if not RAN:  # no exception and no execution: something swallowed the block
            raise RuntimeError(f"{verification._rel(item.example.path)}:{item.example.line}: the block did not run "
                               "(a directive swallowed it) and did not say why")
        item.user_properties.append(("ran", list(RAN)))
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if FACTS:  # the facts of the process that ran this example travel with its report
        report.user_properties.append(("facts", dict(FACTS)))
    if report.skipped and isinstance(item, SybilItem):  # name the page and line, not unittest.py
        report.longrepr = (str(item.example.path), item.example.line, report.longrepr[2])
        if _is_python_example(item) and call.when == "call":
            try:
                report.user_properties.append(("source", _lint_skipped(item)))
            except SyntaxError as error:
                report.outcome, report.longrepr = "failed", f"{verification._rel(item.example.path)}:{item.example.line}: {error}"
    return report


RESULTS = {}  # page -> line -> the example's entry in the report
PAGE_FACTS = {}  # page -> the facts of the process that ran it
PROBLEMS = []  # what the report rules (verification.problems) found in the reports this run wrote


def pytest_runtest_logreport(report):
    props = dict(report.user_properties)
    if props.get("kind") not in ("example", "notebook"):
        return
    if report.when == "call" or report.outcome != "passed":  # setup skips/errors count too
        outcome = report.outcome
        reason = report.longrepr[2].removeprefix("Skipped: ") if report.skipped else None
        entry = {"line": props["line"], "outcome": outcome, "reason": reason, "duration": round(report.duration, 3),
                 "cpu": props.get("cpu", 0.0) if report.when == "call" else 0.0}
        for extra in ("cells", "results", "ran", "source", "notebook"):
            if extra in props:
                entry[extra] = props[extra]
        if "facts" in props:
            PAGE_FACTS[props["page"]] = props["facts"]
        previous = RESULTS.setdefault(props["page"], {}).get(props["line"])
        if previous and report.when == "teardown":  # a failing teardown fails the example, keeps its record
            entry = {**previous, "outcome": "failed", "duration": previous["duration"] + entry["duration"]}
        RESULTS[props["page"]][props["line"]] = entry


def pytest_sessionfinish(session):
    if hasattr(session.config, "workerinput"):
        return  # xdist workers report to the controller, which writes
    for page, examples in RESULTS.items():
        if page not in PAGE_FACTS:  # nothing ran (e.g. broken front matter): no device to vouch for
            continue
        report = verification.assemble(page, [examples[line] for line in sorted(examples)], PAGE_FACTS[page])
        verification.write_report(report)
        found = verification.problems(report, report["page"], device=report["device"])
        PROBLEMS.extend(f"docs/{report['page']}: {problem}" for problem in found)
    if PROBLEMS:
        session.exitstatus = 1
    shard = _shard(session.config)
    if shard:  # the manifest the build job's merge checks
        index, count, pages = shard
        device = next(iter(PAGE_FACTS.values()), {"device": "cpu"})["device"]
        shards.write_manifest(device, index, count, pages, session.exitstatus)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    """The report's summary and problems come last, after pytest's short summary, where a CI log's tail shows them."""
    yield
    if RESULTS and not hasattr(terminalreporter.config, "workerinput"):
        count = sum(len(v) for v in RESULTS.values())
        devices = sorted({f["device"] for f in PAGE_FACTS.values()})
        terminalreporter.write_line(f"verification report: {count} examples on {len(PAGE_FACTS)} pages "
                                    f"-> {verification.REPORTS} ({', '.join(devices) or 'nothing ran'})")
        for problem in PROBLEMS:
            terminalreporter.write_line(f"REPORT: {problem}", red=True)

