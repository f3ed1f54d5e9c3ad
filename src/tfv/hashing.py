"""The content hash: everything a page's result depends on, so a report is valid only while it still matches.

It covers the page, every snippet it includes (nested includes too), the programs in snippets/shared/ that
snippets import, the pymdownx.snippets options of mkdocs.yml (how an include expands), the run side of this
package as installed (every module but `tfv.site` and the command line), the pytest configuration, the wall
around the run, and both locks. Not what only renders a page (`tfv.site`, the theme, nav, CSS, JavaScript):
changing those leaves every report valid, and the HTML census still matches each rendered block to the code
that ran, at every build."""

import hashlib
import json
from pathlib import Path

from tfv.includes import config as snippet_options
from tfv.includes import included
from tfv.layout import ROOT

PACKAGE = Path(__file__).resolve().parent  # the modules that actually run, wherever the package is installed
PROJECT = ["pyproject.toml", "tests/offline.sh", "requirements.lock", "requirements-gpu.lock"]
RENDERING = ("site/", "cli.py")  # package parts a page's result does not depend on


def runner():
    """The package modules a run depends on, as (name, path): 'tfv/run/plugin.py', ..."""
    modules = sorted(PACKAGE.rglob("*.py"))
    named = [(f"tfv/{path.relative_to(PACKAGE).as_posix()}", path) for path in modules]
    return [(name, path) for name, path in named if not name.removeprefix("tfv/").startswith(RENDERING)]


def machinery():
    """Every file a page's result depends on besides the page and its includes, as (name, path)."""
    project = [(name, ROOT / name) for name in PROJECT]
    shared = [(path.relative_to(ROOT).as_posix(), path) for path in sorted((ROOT / "snippets/shared").glob("*.py"))]
    return project + runner() + shared


def content_hash(path):
    """Hash of everything a page's result depends on (see the module's first lines)."""
    path = Path(path)
    digest = hashlib.sha256()
    own = [(part.relative_to(ROOT).as_posix(), part) for part in [path] + sorted(included(path))]
    for name, part in own + machinery():
        digest.update(name.encode() + b"\0")
        digest.update(part.read_bytes() if part.exists() else b"<missing>")
    digest.update(b"mkdocs.yml: pymdownx.snippets\0" + json.dumps(snippet_options(), sort_keys=True).encode())
    return digest.hexdigest()
