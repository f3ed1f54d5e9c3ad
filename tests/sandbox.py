"""A throw-away copy of the project (its machinery, none of its pages) to feed bad input to, on pytest's own
`pytester`: a temporary folder it changes into, an isolated HOME, subprocess runs with a timeout."""

import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# The project around the machinery; the machinery itself is the installed package (src/tfv/), which works on the
# project it finds from its working folder (tfv.layout), so the copy needs none of it.
MACHINERY = ["pyproject.toml", "mkdocs.yml", "requirements.lock", "requirements-gpu.lock", "tests/offline.sh",
             "overrides", "docs/index.md", "docs/stylesheets", "docs/javascripts"]


@pytest.fixture
def project(pytester):
    for name in MACHINERY:
        source, target = ROOT / name, pytester.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, target)
    (pytester.path / "docs/index.md").write_text("# Home\n")
    (pytester.path / "snippets/interview-questions").mkdir(parents=True)
    (pytester.path / "snippets/interview-questions/lab.py").write_text(
        "a = 1\n# --8<-- [start:part]\nb = a + 1\nassert b == 3, 'b is 2'\n# --8<-- [end:part]\n")
    return pytester


def run(project, *command, **env):
    """(exit code, stdout + stderr) of a command run in the copy, with these environment variables set."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {"NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true", **env}.items():
            patch.setenv(name, value)
        result = project.run(*map(str, command), timeout=300)
    return int(result.ret), "\n".join(result.outlines + result.errlines)


def mkdocs_config(publish=False, commit="", require_gpu_report=False):
    """The part of a MkDocs config the plugin's modules read (the gate's settings), for calling them in-process."""
    gate = SimpleNamespace(publish=publish, commit=commit, require_gpu_report=require_gpu_report)
    return SimpleNamespace(plugins={"tfv": SimpleNamespace(config=gate)})
