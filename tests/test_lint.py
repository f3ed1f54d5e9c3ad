"""ruff over everything Python in the project: the machinery, the snippet programs, the notebook pages (these as
the reader gets them: their `# --8<--` includes expanded, each finding mapped back to the page's own line)."""

import json
import re
import subprocess
import sys
from pathlib import Path

from tfv import includes
from tfv.pages import is_content_page, page_key

ROOT = Path(__file__).resolve().parent.parent
RUFF = str(Path(sys.executable).parent / "ruff")
NOTEBOOKS = sorted(p for p in (ROOT / "docs").rglob("*.py") if is_content_page(page_key(p)))


def test_ruff_is_clean():
    result = subprocess.run([RUFF, "check", "--no-cache", "--extend-exclude", "docs", "."], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-1000:]


def expanded(text):
    """The page with its includes expanded, and for each line of that the page's own line number."""
    lines, origin = [], []
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        body = includes.expand_cell(line.rstrip("\n")) + "\n" if includes.CELL_LINE.match(line) else line
        for part in body.splitlines(keepends=True):
            lines.append(part)
            origin.append(number)
    return "".join(lines), origin


def test_notebook_pages_are_clean_as_rendered():
    assert NOTEBOOKS, "no notebook pages found"
    findings = []
    for page in NOTEBOOKS:
        text, origin = expanded(page.read_text(encoding="utf-8"))
        result = subprocess.run([RUFF, "check", "--no-cache", "--output-format", "json", "--stdin-filename",
                                 str(page), "-"], cwd=ROOT, input=text, capture_output=True, text=True)
        assert result.returncode in (0, 1), result.stderr
        findings += [f"{page.relative_to(ROOT)}:{origin[f['location']['row'] - 1]}: {f['code']} {f['message']}"
                     for f in json.loads(result.stdout)]
    assert not findings, "\n".join(findings)


def test_an_include_is_linted_as_its_snippet():
    """The mapping can fail: without the include, the page's use of the snippet's names is an error."""
    page = ROOT / "docs/interview-questions/one-trace-not-faster.py"
    text = page.read_text(encoding="utf-8")
    assert includes.CELL_LINE.search(text), "the sample page no longer includes a snippet"
    lint = subprocess.run([RUFF, "check", "--no-cache", "--output-format", "json", "--stdin-filename", str(page), "-"],
                          cwd=ROOT, input=text, capture_output=True, text=True)
    assert "F821" in {f["code"] for f in json.loads(lint.stdout)}
    assert "measure" in expanded(text)[0]


HANG_GUARD = 280  # seconds: a child process's timeout, just under pytest-timeout's 300 s per block (pyproject.toml)
CHILD_CALL = ("subprocess.run", ".communicate(", "run_workers(", "def run_child", "check_output(")


def short_child_timeouts(path, root=ROOT):
    """`timeout=N` below the hang guard on a child-process call (or the three lines after it) in one file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for number, line in enumerate(lines, 1):
        for match in re.finditer(r"\btimeout=(\d+)\b", line):
            call = "\n".join(lines[max(0, number - 4):number])
            if int(match.group(1)) < HANG_GUARD and any(key in call for key in CHILD_CALL):
                found.append(f"{path.relative_to(root)}:{number}: timeout={match.group(1)} on a child process")
    return found


def test_child_process_timeouts_are_hang_guards():
    """A child's timeout guards against a hang; it is not a claim, so a loaded machine must not trip it."""
    files = sorted([*(ROOT / "docs").rglob("*.md"), *(ROOT / "docs").rglob("*.py"), *(ROOT / "snippets").rglob("*.py")])
    found = [line for path in files for line in short_child_timeouts(path)]
    assert not found, "\n".join(found) + f"\nuse timeout={HANG_GUARD} (the hang guard; see CONTRIBUTING)"


def test_a_short_child_timeout_is_found(tmp_path):
    sample = tmp_path / "page.md"
    sample.write_text("```python\nrun = subprocess.run(cmd,\n                     timeout=120, check=True)\n```\n")
    assert short_child_timeouts(sample, tmp_path) == ["page.md:3: timeout=120 on a child process"]
    sample.write_text("reply = stub.Predict(request, timeout=30)\n")  # an RPC deadline, not a child process
    assert short_child_timeouts(sample, tmp_path) == []
