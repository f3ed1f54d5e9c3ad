"""What ran, collected into the reports: each example's entry from its test report (its facts, digests and
results travel as xdist-safe user_properties), and the reports written, and judged, at the end of the session."""

import os
import subprocess
import sys
from pathlib import Path

from tfv.layout import ROOT
from tfv.report import assemble, write_report
from tfv.rules import problems
from tfv.run.device import calibration

RECORDED = []  # named results of the example running now
RAN = []  # digests of the code the example running now executed
STARTED = []  # (snippets/...py, its Popen): child processes the example running now started with a snippet program
RESULTS = {}  # page -> line -> the example's entry in the report
PAGE_FACTS = {}  # page -> the facts of the process that ran it
PROBLEMS = []  # what the report rules found in the reports this run wrote
EXTRAS = ("cells", "results", "ran", "source", "notebook", "programs")  # user_properties that go into an example's entry


def record(name, value, *, rtol=1e-6, atol=0.0):
    """Record a named numeric result. The publish build fails when the GPU run's value differs from
    the CPU run's by more than atol + rtol * |cpu value| (the tolerances the page declares here)."""
    RECORDED.append((name, {"value": float(value), "rtol": rtol, "atol": atol}))


def audit(event, args):
    """sys.addaudithook's hook: a child process started with a snippet program on its command line is kept, to be
    recorded if it exited 0 (tests/test_snippets.py runs every other snippet program itself)."""
    if event != "subprocess.Popen":
        return
    _executable, argv, cwd, _env = args
    child = sys._getframe(1).f_locals.get("self")  # the event is raised in Popen._execute_child
    if not isinstance(child, subprocess.Popen):
        return
    for arg in [argv] if isinstance(argv, (str, bytes, os.PathLike)) else argv or ():
        try:
            path = Path(cwd or os.getcwd(), os.fsdecode(arg)).resolve()
        except (TypeError, ValueError, OSError):
            continue
        if path.suffix == ".py" and path.is_relative_to(ROOT / "snippets") and path.is_file():
            STARTED.append((path.relative_to(ROOT).as_posix(), child))


def programs():
    """The snippet programs the example running now started and that exited 0; forgets them all."""
    done = sorted({name for name, child in STARTED if child.poll() == 0})
    STARTED.clear()
    return done


def collect(report):
    """Take one test report's part of an example's entry (setup skips and errors count too)."""
    props = dict(report.user_properties)
    if props.get("kind") not in ("example", "notebook"):
        return
    if report.when == "call" or report.outcome != "passed":
        reason = report.longrepr[2].removeprefix("Skipped: ") if report.skipped else None
        entry = {"line": props["line"], "outcome": report.outcome, "reason": reason,
                 "duration": round(report.duration, 3), "cpu": props.get("cpu", 0.0) if report.when == "call" else 0.0}
        entry.update({extra: props[extra] for extra in EXTRAS if extra in props})
        if "facts" in props:
            PAGE_FACTS[props["page"]] = props["facts"]
        previous = RESULTS.setdefault(props["page"], {}).get(props["line"])
        if previous and report.when == "teardown":  # a failing teardown fails the example, keeps its record
            entry = {**previous, "outcome": "failed", "duration": previous["duration"] + entry["duration"]}
        RESULTS[props["page"]][props["line"]] = entry


def write_all():
    """Write every page's report; the problems the report rules find in them go to PROBLEMS. The machine's
    calibration is measured once, and only when a page's CPU time is over its budget (tfv.pages.REFERENCE)."""
    written = [assemble(page, [examples[line] for line in sorted(examples)], PAGE_FACTS[page])
               for page, examples in RESULTS.items()
               if page in PAGE_FACTS]  # else nothing ran (e.g. broken front matter): no device to vouch for
    if any(report["cpu"] > report["budget"] for report in written):
        measured = calibration()
        for report in written:
            report["calibration"] = measured
    for report in written:
        write_report(report)
        PROBLEMS.extend(f"docs/{report['page']}: {problem}"
                        for problem in problems(report, report["page"], device=report["device"]))
    return PROBLEMS


def device():
    """The device this session's pages ran on."""
    return next(iter(PAGE_FACTS.values()), {"device": "cpu"})["device"]


def summary(write_line, folder):
    """The report's summary and problems, for the end of the terminal output."""
    count = sum(len(v) for v in RESULTS.values())
    devices = sorted({f["device"] for f in PAGE_FACTS.values()})
    write_line(f"verification report: {count} examples on {len(PAGE_FACTS)} pages -> {folder} "
               f"({', '.join(devices) or 'nothing ran'})")
    for problem in PROBLEMS:
        write_line(f"REPORT: {problem}", red=True)
