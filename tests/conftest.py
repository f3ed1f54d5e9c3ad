"""The machinery tests share one fixture: `project`, a throw-away copy of the project (tests/sandbox.py)."""

from sandbox import project  # noqa: F401
