"""The shapes, as JSON schemas: what a page's front matter may say, and what a report holds. One source for both:
reports travel between machines (the GPU runner's comes back as an artefact), so every read checks them."""

import re

import jsonschema

SECTIONS = ("interview-questions", "use-cases", "production-issues", "best-practices")
PAGE_FILE = re.compile(rf"(?:{'|'.join(SECTIONS)})/[a-z0-9]+(?:-[a-z0-9]+)*\.(?:md|py)")  # a content page's key

_TEXT = {"type": "string", "maxLength": 2000}
FRONT_MATTER = {
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
REPORT = {  # build/report/<device>/<page>.json
    "type": "object",
    "required": ["page", "device", "gpu_model", "versions", "commit", "date", "hash", "examples", "duration",
                 "cpu", "calibration", "budget", "results"],
    "additionalProperties": False,
    "properties": {
        "page": {"type": "string", "pattern": PAGE_FILE.pattern + "|index\\.md|tags\\.md|[\\w-]+/index\\.md"},
        "device": {"enum": ["cpu", "gpu"]},
        "gpu_model": {"type": ["string", "null"], "maxLength": 200},
        "versions": {"type": "object", "required": ["tensorflow", "keras", "python"], "additionalProperties": False,
                     "properties": {k: {"type": "string", "maxLength": 40} for k in ("tensorflow", "keras", "python")}},
        "commit": {"type": "string", "pattern": "^([0-9a-f]{40}|unknown)$"},
        "date": {"type": "string", "format": "date", "pattern": r"^\d{4}-\d\d-\d\d$"},
        "hash": DIGEST,  # tfv.hashing.content_hash of the page when it ran
        "notebook": DIGEST,  # sha256 of the executed .ipynb that travels with the report
        "duration": {"type": "number", "minimum": 0},  # wall seconds
        "cpu": {"type": "number", "minimum": 0},  # CPU seconds of the process and its children: what the budget limits
        "calibration": {"type": ["number", "null"], "exclusiveMinimum": 0},  # tfv.run.device.calibration, if measured
        "budget": {"type": "number", "exclusiveMinimum": 0},
        "results": {"type": "object", "additionalProperties": RESULT},  # record("name", value)
        "examples": {"type": "array", "items": {  # one code block (or, for a notebook page, the whole notebook)
            "type": "object", "required": ["line", "outcome", "reason", "duration", "cpu"], "additionalProperties": False,
            "properties": {
                "line": {"type": "integer", "minimum": 0},
                "outcome": {"enum": ["passed", "skipped", "failed"]},
                "reason": {"type": ["string", "null"], "maxLength": 2000},  # why it was skipped
                "duration": {"type": "number", "minimum": 0},
                "cpu": {"type": "number", "minimum": 0},
                "ran": {"type": "array", "items": DIGEST},  # digests of the code that executed
                "source": DIGEST,  # digest of a skipped block's code (it did not run)
                "cells": {"type": "integer", "minimum": 0},  # notebook cells executed
                # snippet programs the example started as child processes and that exited 0
                "programs": {"type": "array", "items": {"type": "string", "pattern": r"^snippets/[\w/.-]+\.py$"}},
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
