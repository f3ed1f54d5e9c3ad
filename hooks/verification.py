"""The verification report, and the one place its rules live. conftest.py hands it what ran (`assemble`,
`write_report`), and the test run, the build (hooks/stamp.py, hooks/census.py), tests/ and bench/ all read it
(`read_report`, `reports`) and judge it (`problems`) here. Also the page facts they share: which files are
content pages, the notebook page <-> executed notebook mapping, front matter, code digests, the content hash.

One JSON file per page and device: build/report/<device>/<page>.json, where <page> is the page's path
under docs/. Every example entry carries the digest of the code that really ran (`ran`), so the build can
match each code block it renders to an execution. A report is valid for publishing only while the content
hash still matches: the page, every snippet it includes (nested includes too), the machinery that runs and
renders it (conftest, hooks, mkdocs.yml) and both locks.
"""

import hashlib
import json
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Literal, NotRequired, TypedDict

import jsonschema
import yaml
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
REPORTS = ROOT / "build" / "report"
EXECUTED = ROOT / "build" / "executed"
# What runs a page, so what every report's hash covers: the example runner and its configuration, the wall around it,
# the modules it takes from hooks/ (these, the snippet expansion and notebook reading), both locks, and the
# programs in snippets/shared/ that snippets import. Not what only renders a page (the other hooks, the theme,
# nav, CSS, JavaScript): changing those leaves every report valid, and the census still matches each rendered
# block to the code that ran. mkdocs.yml counts only through the pymdownx.snippets options it gives.
MACHINERY = ["conftest.py", "pyproject.toml", "tests/offline.sh", "requirements.lock", "requirements-gpu.lock",
             "hooks/verification.py", "hooks/includes.py", "hooks/notebooks.py"]  # + snippets/shared/*.py
INCLUDE = re.compile(r"""--8<--\s+["']([^"':]+)""")
SECTIONS = ("interview-questions", "use-cases", "production-issues", "best-practices")
PAGE_FILE = re.compile(rf"(?:{'|'.join(SECTIONS)})/[a-z0-9]+(?:-[a-z0-9]+)*\.(?:md|py)")
SITE_PAGES = {"index.md", "tags.md"} | {f"{section}/index.md" for section in SECTIONS}

BUDGET = 60  # CPU seconds of examples per page (the process and its children), unless its front matter says
# `budget: {seconds: N, reason: why}`. CPU time does not grow when a neighbour loads the machine; wall time does,
# so wall time is only the hang guard (pytest-timeout, pyproject.toml) and is recorded beside it.

_TEXT = {"type": "string", "maxLength": 2000}
FRONT_MATTER = {  # what a page's front matter may say
    "type": "object",
    "properties": {
        "description": _TEXT,
        "tags": {"type": "array", "items": {"type": "string", "pattern": r"^[\w.+-]+$"}},
        "network": {"enum": ["loopback"]},
        "budget": {"type": "object", "required": ["seconds", "reason"], "additionalProperties": False,
                   "properties": {"seconds": {"type": "number", "exclusiveMinimum": 0}, "reason": {**_TEXT, "minLength": 5}}},
        "hide": {"type": "array", "items": {"enum": ["navigation", "toc", "footer", "path", "tags", "feedback"]}},
    },
    "additionalProperties": False,
}
RESULT = {"type": "object", "required": ["value", "rtol", "atol"], "additionalProperties": False,
          "properties": {"value": {"type": "number"}, "rtol": {"type": "number"}, "atol": {"type": "number"}}}
DIGEST = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
REPORT = {  # reports travel between machines (the GPU runner's comes back as an artefact): checked on every read
    "type": "object",
    "required": ["page", "device", "gpu_model", "versions", "commit", "date", "hash", "examples", "duration",
                 "cpu", "budget", "results"],
    "additionalProperties": False,
    "properties": {
        "page": {"type": "string", "pattern": PAGE_FILE.pattern + "|index\\.md|tags\\.md|[\\w-]+/index\\.md"},
        "device": {"enum": ["cpu", "gpu"]},
        "gpu_model": {"type": ["string", "null"], "maxLength": 200},
        "versions": {"type": "object", "required": ["tensorflow", "keras", "python"], "additionalProperties": False,
                     "properties": {k: {"type": "string", "maxLength": 40} for k in ("tensorflow", "keras", "python")}},
        "commit": {"type": "string", "pattern": "^([0-9a-f]{40}|unknown)$"},
        "date": {"type": "string", "format": "date", "pattern": r"^\d{4}-\d\d-\d\d$"},
        "hash": DIGEST,
        "notebook": DIGEST,  # sha256 of the executed .ipynb that travels with the report
        "duration": {"type": "number", "minimum": 0},  # wall seconds
        "cpu": {"type": "number", "minimum": 0},  # CPU seconds of the process and its children: what the budget limits
        "budget": {"type": "number", "exclusiveMinimum": 0},
        "results": {"type": "object", "additionalProperties": RESULT},
        "examples": {"type": "array", "items": {
            "type": "object", "required": ["line", "outcome", "reason", "duration", "cpu"], "additionalProperties": False,
            "properties": {
                "line": {"type": "integer", "minimum": 0},
                "outcome": {"enum": ["passed", "skipped", "failed"]},
                "reason": {"type": ["string", "null"], "maxLength": 2000},
                "duration": {"type": "number", "minimum": 0},
                "cpu": {"type": "number", "minimum": 0},
                "ran": {"type": "array", "items": DIGEST},  # digests of the code that executed
                "source": DIGEST,  # digest of a skipped block's code (it did not run)
                "cells": {"type": "integer", "minimum": 0},
            }}},
    },
}


def _validator(schema):
    """A checked schema's validator, built once: jsonschema.validate re-checks the schema on every call."""
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validate(instance, validator):
    """Raise the most relevant error, as jsonschema.validate does."""
    if (error := jsonschema.exceptions.best_match(validator.iter_errors(instance))) is not None:
        raise error


FRONT_MATTER_SCHEMA, REPORT_SCHEMA = _validator(FRONT_MATTER), _validator(REPORT)


class Result(TypedDict):
    value: float
    rtol: float
    atol: float


class Example(TypedDict):  # one code block (or, for a notebook page, the whole notebook)
    line: int
    outcome: Literal["passed", "skipped", "failed"]
    reason: str | None  # why it was skipped
    duration: float  # wall seconds
    cpu: float  # CPU seconds of the process and its children
    ran: NotRequired[list[str]]  # digests of the code that executed
    source: NotRequired[str]  # digest of a skipped block's code
    cells: NotRequired[int]  # notebook cells executed


class Report(TypedDict):  # build/report/<device>/<page>.json; REPORT is the same shape as a JSON schema
    page: str
    device: Literal["cpu", "gpu"]
    gpu_model: str | None
    versions: dict[str, str]  # tensorflow, keras, python
    commit: str
    date: str
    hash: str  # content_hash() of the page when it ran
    notebook: NotRequired[str]  # sha256 of the executed .ipynb
    duration: float  # wall seconds
    cpu: float  # CPU seconds: what the budget limits
    budget: float
    results: dict[str, Result]  # record("name", value)
    examples: list[Example]


# --- Pages -------------------------------------------------------------------------------

def front_matter(path):
    """(meta, title) of a page from its source: Markdown front matter, or a notebook's jupytext header.
    Raises ValueError naming the page when the front matter is not a valid mapping of known keys."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        header = re.match(r"# ---\n((?:#.*\n)*?)# ---\n", text)
        meta = _yaml("".join(line[2:] + "\n" for line in header.group(1).splitlines()), path) if header else {}
        title = re.search(r"^# # (.+)$", text, re.M)
    else:
        header = re.match(r"---\n(.*?)\n---\n", text, re.S)
        meta = _yaml(header.group(1), path) if header else {}
        title = re.search(r"^# (.+)$", text, re.M)
    meta = {} if meta is None else meta
    try:
        validate(meta, FRONT_MATTER_SCHEMA)
    except jsonschema.ValidationError as error:
        where = "/".join(map(str, error.absolute_path)) or "front matter"
        raise ValueError(f"{_rel(path)}:1: {where}: {error.message}") from None
    return meta, title.group(1).strip() if title else path.stem


def _yaml(text, path):
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValueError(f"{_rel(path)}:1: front matter is not valid YAML: {error}") from None


def _rel(path):
    path = Path(path).resolve()
    return path.relative_to(ROOT).as_posix() if ROOT in path.parents else str(path)


def page_key(path):
    """'interview-questions/trace-lab.md' for docs/interview-questions/trace-lab.md."""
    return Path(path).resolve().relative_to(DOCS).as_posix()


def is_content_page(key):
    """A page with examples, which the site publishes: docs/<section>/<slug>.md, or a notebook page
    docs/<section>/<slug>.py (a jupytext file). The only definition the test run, the build and the checks use."""
    return bool(PAGE_FILE.fullmatch(key)) and key not in SITE_PAGES


def content_pages():
    """Every content page under docs/, sorted."""
    return sorted(path for path in DOCS.rglob("*") if is_content_page(path.relative_to(DOCS).as_posix()))


def notebook_name(key):
    """The rendered notebook of a notebook page: 'a/b.py' -> 'a/b.ipynb' (also the name it has on the site)."""
    return Path(key).with_suffix(".ipynb").as_posix()


def source_key(uri):
    """The page a docs file comes from: 'a/b.ipynb' (a rendered notebook) -> 'a/b.py'; anything else unchanged."""
    return uri.removesuffix(".ipynb") + ".py" if uri.endswith(".ipynb") else uri


def budget(path):
    """The page's budget in CPU seconds (front matter `budget: {seconds: N, reason: why}`)."""
    declared = front_matter(path)[0].get("budget")
    return float(declared["seconds"]) if declared else float(BUDGET)


def gate(config):
    """The publish gate's settings, from mkdocs.yml `extra.gate` (switched on by environment variables)."""
    settings = config["extra"].get("gate") or {}
    on = {True, "1", "true", "yes"}
    return {"publish": settings.get("publish") in on, "commit": str(settings.get("commit") or "") or None,
            "gpu_report": settings.get("gpu_report") in on}


# --- Code ----------------------------------------------------------------------------------

def is_python(language):
    """Whether Pygments highlights a fence's language as Python (python, py, py3, ipython3, pycon, ...)."""
    try:
        lexer = get_lexer_by_name(language.strip().lstrip("{.").split()[0]) if language.strip() else None
    except (ClassNotFound, IndexError):
        return False
    return lexer is not None and "python" in lexer.name.lower() and "traceback" not in lexer.name.lower()


def digest(code):
    """The digest of a block of code as a reader sees it: indentation, trailing spaces and blank edges ignored."""
    lines = textwrap.dedent(code.expandtabs()).strip("\n").splitlines()
    return hashlib.sha256("\n".join(line.rstrip() for line in lines).encode()).hexdigest()


def includes(path, seen=None):
    """Every file a page includes with --8<--, and every file those include, once each."""
    seen = set() if seen is None else seen
    text = Path(path).read_text(encoding="utf-8") if Path(path).exists() else ""
    for name in INCLUDE.findall(text):
        included = ROOT / name
        if included not in seen:
            seen.add(included)
            includes(included, seen)
    return seen


def machinery():
    """The files every page's result depends on (MACHINERY, and snippets/shared/ programs, imported not included)."""
    return [ROOT / name for name in MACHINERY] + sorted((ROOT / "snippets/shared").glob("*.py"))


def content_hash(path):
    """Hash of everything a page's result depends on: the page, its nested includes, the machinery, both locks,
    and the snippet options of mkdocs.yml (how an include expands)."""
    from includes import config as snippet_options  # hooks/includes.py imports this module: import it late

    path = Path(path)
    digest_ = hashlib.sha256()
    for part in [path] + sorted(includes(path)) + machinery():
        digest_.update(part.relative_to(ROOT).as_posix().encode() + b"\0")
        digest_.update(part.read_bytes() if part.exists() else b"<missing>")
    digest_.update(b"mkdocs.yml: pymdownx.snippets\0" + json.dumps(snippet_options(), sort_keys=True).encode())
    return digest_.hexdigest()


def file_digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# --- Reports -------------------------------------------------------------------------------

def report_path(device, key):
    return REPORTS / device / f"{key}.json"


def assemble(page, examples: list[Example], facts) -> Report:
    """A page's report from its examples (in page order) and the facts of the process that ran them
    (device, GPU model, versions, commit, date). Named results and the executed notebook's digest move from
    the example that recorded them to the report."""
    examples = [dict(entry) for entry in examples]
    results = {name: value for entry in examples for name, value in entry.pop("results", {}).items()}
    notebook = next((entry.pop("notebook") for entry in examples if "notebook" in entry), None)
    try:
        allowed = budget(page)
    except ValueError:  # broken front matter: that page failed already; still record what ran
        allowed = float(BUDGET)
    return {**facts, "page": page_key(page), "hash": content_hash(page), "examples": examples,
            "duration": round(sum(e["duration"] for e in examples), 3), "cpu": round(sum(e["cpu"] for e in examples), 3),
            "budget": allowed, "results": results,
            **({"notebook": notebook} if notebook else {})}


def write_report(report: Report):
    validate(report, REPORT_SCHEMA)
    path = report_path(report["device"], report["page"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")


class BadReport(Exception):
    pass


def read_report(device, key) -> Report | None:
    """The report, checked against the schema (it may come from another machine); None when there is none."""
    path = report_path(device, key)
    if not path.exists():
        return None
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
        validate(report, REPORT_SCHEMA)
    except (ValueError, jsonschema.ValidationError) as error:
        message = error.message if isinstance(error, jsonschema.ValidationError) else str(error)
        raise BadReport(f"{path.relative_to(ROOT)}: not a valid report: {message[:300]}") from None
    if report["page"] != key or report["device"] != device:
        raise BadReport(f"{path.relative_to(ROOT)}: is the {report['device']} report of {report['page']}")
    return report


def reports(device="cpu") -> Iterator[Report]:
    """Every report on disk for one device, checked, in page order."""
    for path in sorted((REPORTS / device).rglob("*.json")):
        yield read_report(device, path.relative_to(REPORTS / device).as_posix().removesuffix(".json"))


def executed_notebook(key):
    return EXECUTED / notebook_name(key)


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


def problems(report: Report | None, key, *, commit=None, device="cpu", cpu: Report | None = None) -> list[str]:
    """Why this report cannot back a published page; an empty list when it can. For a GPU report,
    `cpu` is the CPU report its recorded results must match. The test run applies the same rules to the
    reports it has just written (a page over budget, or a GPU example skipped on a GPU runner, fails the run)."""
    if report is None:
        return [f"no {device} report (run `make test`)"]
    found = []
    if report["hash"] != content_hash(DOCS / key):
        found.append(f"{device} report is stale: the page, a snippet it includes, the machinery or a lock changed")
    if commit and report["commit"] != commit:
        found.append(f"{device} report is from commit {report['commit'][:12]}, not {commit[:12]}")
    failed = [e for e in report["examples"] if e["outcome"] == "failed"]
    if failed:
        found.append(f"{len(failed)} example(s) failed on {device}, first at line {failed[0]['line']}")
    unreasoned = [e for e in report["examples"] if e["outcome"] == "skipped" and not (e["reason"] or "").strip()]
    if unreasoned:
        found.append(f"{len(unreasoned)} example(s) skipped without a reason, first at line {unreasoned[0]['line']}")
    if not report["examples"]:
        found.append(f"the {device} run executed no example on this page")
    if key.endswith(".py") and device == "cpu":
        notebook = executed_notebook(key)
        if not notebook.exists():
            found.append(f"no executed notebook {notebook.relative_to(ROOT)}")
        elif report.get("notebook") != file_digest(notebook):
            found.append(f"{notebook.relative_to(ROOT)} is not the notebook this report's run executed")
    allowed = report["budget"]  # the front matter's budget when the report was written (a later change makes it stale)
    if report["cpu"] > allowed:
        found.append(f"{device} examples used {report['cpu']:.0f} CPU s ({report['duration']:.0f} s wall), over the "
                     f"page's budget of {allowed:.0f} CPU s")
    if device == "gpu":
        found += parity(report, cpu)
        gpu_skips = [e for e in report["examples"] if e["outcome"] == "skipped" and "GPU" in (e["reason"] or "")]
        if gpu_skips:
            found.append(f"{len(gpu_skips)} GPU example(s) skipped on the GPU runner")
    return found
