"""ruff over everything Python in the project: the machinery, the snippet programs, the notebook pages."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_is_clean():
    result = subprocess.run([str(Path(sys.executable).parent / "ruff"), "check", "--no-cache", "."], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-1000:]
