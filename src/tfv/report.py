"""The verification report: one JSON file per page and device, build/report/<device>/<page>.json, where <page>
is the page's path under docs/. The run assembles and writes it (`tfv.run`); the build, the checks, the bench
and the command line read it, checked against its schema (`tfv.schema`). Every example entry carries the
digest of the code that really ran (`ran`), so the build can match each code block it renders to an execution."""

import json
from collections.abc import Iterator

import jsonschema

from tfv.hashing import content_hash
from tfv.layout import REPORTS, ROOT
from tfv.pages import BUDGET, budget, page_key
from tfv.schema import REPORT_SCHEMA, validate


class BadReport(Exception):
    pass


def report_path(device, key):
    return REPORTS / device / f"{key}.json"


def assemble(page, examples, facts, calibration=None):
    """A page's report from its examples (in page order), the facts of the process that ran them
    (device, GPU model, versions, commit, date) and the machine's calibration (None when not measured). Named
    results and the executed notebook's digest move from the example that recorded them to the report."""
    examples = [dict(entry) for entry in examples]
    results = {name: value for entry in examples for name, value in entry.pop("results", {}).items()}
    notebook = next((entry.pop("notebook") for entry in examples if "notebook" in entry), None)
    try:
        allowed = budget(page)
    except ValueError:  # broken front matter: that page failed already; still record what ran
        allowed = float(BUDGET)
    return {**facts, "page": page_key(page), "hash": content_hash(page), "examples": examples,
            "duration": round(sum(e["duration"] for e in examples), 3), "cpu": round(sum(e["cpu"] for e in examples), 3),
            "calibration": calibration, "budget": allowed, "results": results,
            **({"notebook": notebook} if notebook else {})}


def write_report(report):
    validate(report, REPORT_SCHEMA)
    path = report_path(report["device"], report["page"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def read_report(device, key):
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


def reports(device="cpu") -> Iterator[dict]:
    """Every report on disk for one device, checked, in page order."""
    for path in sorted((REPORTS / device).rglob("*.json")):
        yield read_report(device, path.relative_to(REPORTS / device).as_posix().removesuffix(".json"))
