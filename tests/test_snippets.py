"""Every snippet program runs on its own and belongs to a page at the mirrored path."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = sorted((ROOT / "snippets").rglob("*.py"))


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda p: str(p.relative_to(ROOT)))
def test_snippet_runs_standalone(snippet, tmp_path):
    result = subprocess.run([sys.executable, str(snippet)], cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, f"{snippet.relative_to(ROOT)} exited {result.returncode}:\n{result.stderr[-3000:]}"


@pytest.mark.parametrize("snippet", [s for s in SNIPPETS if s.parent.name != "shared"], ids=lambda p: str(p.relative_to(ROOT)))
def test_snippet_mirrors_its_page(snippet):
    relative = snippet.relative_to(ROOT / "snippets").with_suffix(".md")
    page = ROOT / "docs" / relative
    assert page.exists(), f"{snippet.relative_to(ROOT)} has no page at docs/{relative}"
    assert f'snippets/{relative.with_suffix(".py").as_posix()}' in page.read_text(), f"docs/{relative} never includes it"


@pytest.mark.parametrize("shared", sorted((ROOT / "snippets/shared").glob("*.py")), ids=lambda p: p.name)
def test_shared_snippet_is_shown_on_a_page(shared):
    """snippets/shared/ holds code several pages show; each file is included by at least one page."""
    name = f"snippets/shared/{shared.name}"
    assert any(name in page.read_text() for page in (ROOT / "docs").rglob("*.md")), f"{name} is included by no page"


def test_there_are_snippets():
    assert SNIPPETS, "no snippet programs found"
