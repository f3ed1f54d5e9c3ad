"""Where the project's files are: its root, docs/, and the build folders the run writes and the site reads.

The root is the nearest folder, from the working directory up, that holds mkdocs.yml (TFV_ROOT overrides it):
the package is installed, so its own location says nothing about which project it is working on (the
machinery tests run it on throw-away copies)."""

import os
from pathlib import Path


def _root():
    if os.environ.get("TFV_ROOT"):
        return Path(os.environ["TFV_ROOT"]).resolve()
    here = Path.cwd().resolve()
    return next((folder for folder in (here, *here.parents) if (folder / "mkdocs.yml").is_file()), here)


ROOT = _root()
DOCS = ROOT / "docs"
REPORTS = ROOT / "build" / "report"
EXECUTED = ROOT / "build" / "executed"
PREVIEW = ROOT / "build" / "preview"
DURATIONS = ROOT / "tests" / "page-durations.json"
MANIFESTS = ROOT / "build" / "shards"


def rel(path):
    """A path as an author names it: relative to the root when inside it."""
    path = Path(path).resolve()
    return path.relative_to(ROOT).as_posix() if ROOT in path.parents else str(path)
