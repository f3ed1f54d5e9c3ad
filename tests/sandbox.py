"""A throw-away copy of the project (its machinery, none of its pages) to feed bad input to."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
MACHINERY = ["conftest.py", "pyproject.toml", "mkdocs.yml", "requirements.lock", "requirements-gpu.lock", "tests/offline.sh",
             "hooks", "overrides", "docs/index.md", "docs/stylesheets", "docs/javascripts"]


@pytest.fixture
def project(tmp_path):
    for name in MACHINERY:
        source, target = ROOT / name, tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, target)
    (tmp_path / "docs/index.md").write_text("# Home\n")
    (tmp_path / "snippets/interview-questions").mkdir(parents=True)
    (tmp_path / "snippets/interview-questions/lab.py").write_text(
        "a = 1\n# --8<-- [start:part]\nb = a + 1\nassert b == 3, 'b is 2'\n# --8<-- [end:part]\n")
    return tmp_path


def run(project, *command, **env):
    result = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true", **env})
    return result.returncode, result.stdout + result.stderr
