"""Every snippet program runs as a program and belongs to a page at the mirrored path. A program its page's run
started as a child process (the page's fresh report records it, `tfv.run.recorder.audit`) is not run again here."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import BIN, run
from tfv.hashing import content_hash
from tfv.pages import checked_pages, content_pages, page_key
from tfv.report import read_report

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = sorted((ROOT / "snippets").rglob("*.py"))
CHECKED = {page.relative_to(ROOT / "docs").with_suffix("") for page in checked_pages()}  # TFV_PAGES: make test-changed


def run_by_their_pages():
    """Snippet programs a passed example started, per the CPU reports that still match their pages."""
    programs = set()
    for page in content_pages():
        report = read_report("cpu", page_key(page))
        if report is None or report["hash"] != content_hash(page):
            continue
        programs.update(p for e in report["examples"] if e["outcome"] == "passed" for p in e.get("programs", ()))
    return programs


RUN_BY_PAGES = run_by_their_pages()


def runs_here(snippet):
    """A snippet program no page's run started, that belongs to a page checked (all, or those TFV_PAGES names)."""
    mirrored = snippet.parent.name == "shared" or snippet.relative_to(ROOT / "snippets").with_suffix("") in CHECKED
    return mirrored and snippet.relative_to(ROOT).as_posix() not in RUN_BY_PAGES


@pytest.mark.parametrize("snippet", [s for s in SNIPPETS if runs_here(s)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_snippet_runs_standalone(snippet, tmp_path):
    result = subprocess.run([sys.executable, str(snippet)], cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, f"{snippet.relative_to(ROOT)} exited {result.returncode}:\n{result.stderr[-3000:]}"


def test_a_program_a_page_runs_is_recorded_in_its_report_if_it_exits_0(project):
    """The exemption above rests on the report: a snippet program the page started and that exited 0, and only that.
    The sandbox's lab.py fails its own assert; ok.py passes."""
    (project.path / "snippets/interview-questions/ok.py").write_text("print('ok')\n")
    page = project.path / "docs/interview-questions/lab.md"
    page.parent.mkdir(parents=True)
    page.write_text("# Lab\n\n```python\nimport subprocess, sys\nsubprocess.run([sys.executable, '-c', 'pass'], check=True)\n"
                    "subprocess.run([sys.executable, str(ROOT / 'snippets/interview-questions/lab.py')])\n```\n\n"
                    "```python\nsubprocess.run([sys.executable, 'ok.py'], cwd=ROOT / 'snippets/interview-questions')\n```\n")
    code, out = run(project, BIN / "pytest", "-p", "no:cacheprovider", "docs/interview-questions/lab.md")
    assert code == 0, out
    report = json.loads((project.path / "build/report/cpu/interview-questions/lab.md.json").read_text())
    assert [e.get("programs") for e in report["examples"]] == [None, ["snippets/interview-questions/ok.py"]], report


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
