"""The verification report: written by the test run (conftest.py), read by the build (hooks/stamp.py).

One JSON file per page and device: build/report/<device>/<page>.json, where <page> is the
page's path under docs/. A report is valid for publishing only while the hash of the page,
the snippet files it includes and the lock file is unchanged.
"""

import hashlib
import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
REPORTS = ROOT / "build" / "report"
EXECUTED = ROOT / "build" / "executed"
LOCK = ROOT / "requirements.lock"
INCLUDE = re.compile(r"""--8<--\s+["']([^"':]+)""")

BUDGET = 60  # seconds of examples per page, unless its front matter says `budget: {seconds: N, reason: why}`


def front_matter(path):
    """(meta, title) of a page from its source: Markdown front matter, or a notebook's jupytext header."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        header = re.match(r"# ---\n((?:#.*\n)*?)# ---\n", text)
        meta = _yaml("".join(line[2:] + "\n" for line in header.group(1).splitlines()), path) if header else {}
        title = re.search(r"^# # (.+)$", text, re.M)
    else:
        header = re.match(r"---\n(.*?)\n---\n", text, re.S)
        meta = _yaml(header.group(1), path) if header else {}
        title = re.search(r"^# (.+)$", text, re.M)
    return meta or {}, title.group(1).strip() if title else path.stem


def _yaml(text, path):
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: front matter is not valid YAML: {error}") from None


def page_key(path):
    """'interview-questions/trace-lab.md' for docs/interview-questions/trace-lab.md."""
    return Path(path).resolve().relative_to(DOCS).as_posix()


def content_hash(path):
    """Hash of a page (or notebook source), every snippet file it includes, and the lock file."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    parts = [path] + sorted({ROOT / name for name in INCLUDE.findall(text)}) + [LOCK]
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.relative_to(ROOT).as_posix().encode())
        digest.update(part.read_bytes() if part.exists() else b"<missing>")
    return digest.hexdigest()


def report_path(device, key):
    return REPORTS / device / f"{key}.json"


def write_report(device, key, report):
    path = report_path(device, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def read_report(device, key):
    path = report_path(device, key)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def budget(path):
    """The page's time budget in seconds (front matter `budget: {seconds: N, reason: why}`)."""
    declared = front_matter(Path(path))[0].get("budget")
    if declared is None:
        return BUDGET
    assert isinstance(declared, dict) and declared.get("reason"), f"{path}: a budget override needs a reason"
    return float(declared["seconds"])


def parity(gpu, cpu):
    """Named results the GPU run recorded that differ from the CPU run's beyond the page's tolerances."""
    found = []
    for name, c in (cpu or {}).get("results", {}).items():
        g = gpu.get("results", {}).get(name)
        if g is None:
            found.append(f"result {name!r} was recorded on CPU but not on GPU")
        elif abs(g["value"] - c["value"]) > c["atol"] + c["rtol"] * abs(c["value"]):
            found.append(f"result {name!r}: GPU {g['value']!r} vs CPU {c['value']!r} (rtol {c['rtol']}, atol {c['atol']})")
    return found


def problems(report, key, *, commit=None, device="cpu", cpu=None):
    """Why this report cannot back a published page; an empty list when it can. For a GPU report,
    `cpu` is the CPU report its recorded results must match."""
    if report is None:
        return [f"no {device} report (run `make test`)"]
    found = []
    if report["hash"] != content_hash(DOCS / key):
        found.append(f"{device} report is stale: the page, a snippet it includes or the lock changed since it ran")
    if commit and report["commit"] != commit:
        found.append(f"{device} report is from commit {report['commit'][:12]}, not {commit[:12]}")
    failed = [e for e in report["examples"] if e["outcome"] == "failed"]
    if failed:
        found.append(f"{len(failed)} example(s) failed on {device}, first at line {failed[0]['line']}")
    if not report["examples"]:
        found.append(f"the {device} run executed no example on this page")
    allowed = report.get("budget", BUDGET)
    if report["duration"] > allowed:
        found.append(f"{device} examples took {report['duration']:.0f} s, over the page's {allowed:.0f} s budget")
    if device == "gpu":
        found += parity(report, cpu)
        gpu_skips = [e for e in report["examples"] if e["outcome"] == "skipped" and "GPU" in (e["reason"] or "")]
        if gpu_skips:
            found.append(f"{len(gpu_skips)} GPU example(s) skipped on the GPU runner")
    return found
