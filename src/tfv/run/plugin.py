"""The pytest plugin (entry point `tfv` in pyproject.toml): pytest's hooks, each handing its part to the module
that owns it. Contributors: run one page with `pytest docs/<section>/<slug>.md` (whole pages only: the blocks
of a page share one namespace and run in order). See CONTRIBUTING.md."""

import os
import sys

import pytest

from tfv.layout import REPORTS, rel
from tfv.pages import content_pages
from tfv.run import device, recorder, shards
from tfv.run.collect import BrokenPage, is_page, page_file
from tfv.run.markdown import is_python_example, lint_skipped
from tfv.run.notebook import NotebookItem


def pytest_addoption(parser):
    parser.addoption("--shard", metavar="i/N", help="run only the pages of shard i of N (tfv.run.shards)")


def _shard(config):
    """(i, N, the pages of shard i) for `--shard i/N`, else None; the same plan in every xdist process."""
    spec = config.getoption("shard")
    if not spec:
        return None
    index, count = shards.parse(spec)
    return index, count, set(shards.plan(content_pages(), count)[index - 1])


def pytest_configure(config):
    if not getattr(sys, "_tfv_audit", False):  # an audit hook cannot be removed: one per process (pytester runs in-process)
        sys.addaudithook(recorder.audit)
        sys._tfv_audit = True


def pytest_sessionstart(session):
    if os.environ.get("TFV_REQUIRE_GPU") == "1":
        device.gpus()  # fail at once, before collecting anything


def pytest_collect_file(file_path, parent):
    if not is_page(file_path):
        return None
    if file_path.suffix == ".py" and parent.session.isinitpath(file_path):
        return None  # named on the command line: pytest's Python plugin asks pytest_pycollect_makemodule below
    return page_file(file_path, parent)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path, parent):
    if is_page(module_path):  # a notebook page is not a test module
        return page_file(module_path, parent)


def pytest_collection_modifyitems(config, items):
    shard = _shard(config)
    if shard:
        config.hook.pytest_deselected(items=[item for item in items if item.path not in shard[2]])
        items[:] = [item for item in items if item.path in shard[2]]


def pytest_itemcollected(item):
    from sybil.integration.pytest import SybilItem

    if isinstance(item, SybilItem):
        kind = "example" if is_python_example(item) else "directive"
        item.user_properties += [("page", str(item.example.path)), ("kind", kind), ("line", item.example.line)]
    elif isinstance(item, (NotebookItem, BrokenPage)):
        item.user_properties += [("page", str(item.path)), ("kind", "notebook"), ("line", 1)]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    recorder.RECORDED.clear()
    recorder.RAN.clear()
    recorder.STARTED.clear()
    start = device.cpu_seconds()
    try:
        result = yield
    finally:
        item.user_properties.append(("cpu", round(device.cpu_seconds() - start, 3)))
        if recorder.RECORDED:
            item.user_properties.append(("results", dict(recorder.RECORDED)))
        if programs := recorder.programs():
            item.user_properties.append(("programs", programs))
    if is_python_example(item):
        if not recorder.RAN:  # no exception and no execution: something swallowed the block
            raise RuntimeError(f"{rel(item.example.path)}:{item.example.line}: the block did not run "
                               "(a directive swallowed it) and did not say why")
        item.user_properties.append(("ran", list(recorder.RAN)))
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    from sybil.integration.pytest import SybilItem

    report = yield
    if device.FACTS and "facts" not in dict(report.user_properties):  # the facts of the process that ran the
        report.user_properties.append(("facts", dict(device.FACTS)))  # example (a notebook's kernel gives its own)
    if report.skipped and isinstance(item, SybilItem):  # name the page and line, not unittest.py
        report.longrepr = (str(item.example.path), item.example.line, report.longrepr[2])
        if is_python_example(item) and call.when == "call":
            try:
                report.user_properties.append(("source", lint_skipped(item.example)))
            except SyntaxError as error:
                report.outcome, report.longrepr = "failed", f"{rel(item.example.path)}:{item.example.line}: {error}"
    return report


def pytest_runtest_logreport(report):
    recorder.collect(report)


def pytest_sessionfinish(session):
    if hasattr(session.config, "workerinput"):
        return  # xdist workers report to the controller, which writes
    if recorder.write_all():
        session.exitstatus = 1
    shard = _shard(session.config)
    if shard:  # the manifest the build job's merge checks
        index, count, pages = shard
        shards.write_manifest(recorder.device(), index, count, pages, session.exitstatus)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    """The report's summary and problems come last, after pytest's short summary, where a CI log's tail shows them."""
    yield
    if recorder.RESULTS and not hasattr(terminalreporter.config, "workerinput"):
        recorder.summary(terminalreporter.write_line, REPORTS)
