"""`make serve` runs in a docs-only environment (.venv-docs, from requirements-docs.lock): it must build the
site there, and TensorFlow must not be importable there (the MkDocs plugin never imports it)."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS_BIN = ROOT / ".venv-docs/bin"


@pytest.mark.skipif(not (DOCS_BIN / ".installed").exists(), reason="no docs environment: run `make checks` (or make serve)")
def test_docs_environment_builds_the_site_without_tensorflow(tmp_path):
    probe = subprocess.run([str(DOCS_BIN / "python"), "-c", "import tensorflow"], capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'tensorflow'" in probe.stderr, probe.stderr[-500:]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    build = subprocess.run([str(DOCS_BIN / "mkdocs"), "build", "--strict", "-d", str(tmp_path / "site")], cwd=ROOT,
                           capture_output=True, text=True, env=env, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    assert (tmp_path / "site/interview-questions/trace-lab/index.html").exists()
