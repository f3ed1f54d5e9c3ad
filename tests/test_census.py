"""An independent census of every fenced block in docs/: each Python block ran (or was skipped with a
reason) according to the verification report, and every other block is parsed here or labelled on the page."""

import json
import re
from pathlib import Path

import pytest
import yaml
from google.protobuf import text_format

from tfv.code import is_python
from tfv.hashing import content_hash
from tfv.layout import DOCS
from tfv.pages import content_pages, executed_notebook, page_key
from tfv.report import read_report
from tfv.rules import problems

ROOT = Path(__file__).resolve().parent.parent

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
NOT_EXECUTED = re.compile(r"<!--\s*not-executed:\s*\S.*-->")
SKIP = re.compile(r"<!--\s*skip:\s*(?P<args>.*?)\s*-->")
PAGES = [p for p in content_pages() if p.suffix == ".md"]


def proto(name):
    """The message a TF Serving config file parses as. (tensorflow-serving-api 2.21 ships the model-config
    protos but not session_bundle_config_pb2, so batching_parameters.txt has no parser here.)"""
    from tensorflow_serving.config.model_server_config_pb2 import ModelServerConfig

    return {"models.config": ModelServerConfig}[name]()


VALIDATORS = {
    "json": lambda text, title: json.loads(text),
    "yaml": lambda text, title: yaml.safe_load(text),
    "text": lambda text, title: text_format.Parse(text, proto(title)),
}


def fences(path):
    """(line, end_line, language, title, previous line, body) for every fenced block, by plain scanning."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, open_ = [], None
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if not match:
            continue
        if open_ is None:
            open_ = (number, match)
        elif (match["fence"][0] == open_[1]["fence"][0] and len(match["fence"]) >= len(open_[1]["fence"])
              and not match["info"].strip()):
            start, opening = open_
            info = opening["info"].strip()
            title = re.search(r'title="([^"]+)"', info)
            body = "\n".join(text[len(opening["indent"]):] for text in lines[start:number - 1])
            previous = lines[start - 2].strip() if start > 1 else ""
            found.append((start, number, info.split()[0] if info else "", title and title.group(1), previous, body))
            open_ = None
    assert open_ is None, f"{path}:{open_[0]}: fence never closed"
    return found


def rel(path):
    return path.relative_to(ROOT)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_block_ran_or_is_accounted_for(page):
    key = page_key(page)
    report = read_report("cpu", key)
    blocks = fences(page)
    python = [b for b in blocks if is_python(b[2])]  # the same rule as Sybil and the HTML census
    invisible = [n for n, line in enumerate(page.read_text().splitlines(), 1) if "invisible-code-block: python" in line]
    if python or invisible:
        if report is None:  # make site refuses to publish a page without one; here there is nothing to check yet
            pytest.skip(f"{rel(page)}: no report yet: run `make examples` (or pytest {rel(page)})")
        assert report["hash"] == content_hash(page), f"{rel(page)}: report is stale; re-run its examples"
        ran = {e["line"]: e for e in report["examples"]}
        for start, end, *_ in python:
            hits = [ran[n] for n in ran if start <= n <= end]
            assert hits, f"{rel(page)}:{start}: Python block was not collected (Sybil never ran it)"
            for hit in hits:
                assert hit["outcome"] == "passed" or (hit["outcome"] == "skipped" and hit["reason"]), \
                    f"{rel(page)}:{start}: {hit['outcome']} {hit['reason'] or ''}"
        for line in invisible:
            assert line in ran, f"{rel(page)}:{line}: invisible block was not collected"
    for start, _, language, title, previous, body in blocks:
        if is_python(language):
            continue
        if NOT_EXECUTED.search(previous):
            continue
        where = f"{rel(page)}:{start}: ```{language or '(no language)'} block"
        assert language in VALIDATORS, f"{where} is neither validated by a test nor marked <!-- not-executed: why -->"
        if language == "text":
            assert title == "models.config", \
                f"{where} needs a title naming a known TF Serving config, or a not-executed marker"
        try:
            VALIDATORS[language](body, title)
        except Exception as error:  # the census reports which block does not parse, then fails
            pytest.fail(f"{where} does not parse: {error}")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_skip_has_a_reason(page):
    for number, line in enumerate(page.read_text().splitlines(), 1):
        for match in SKIP.finditer(line):
            args = match["args"]
            if args.startswith(("next", "start")):
                assert re.search(r"""["'].+["']""", args), f"{rel(page)}:{number}: skip without a reason: {line.strip()}"
                if "GPU" in args:
                    assert "if(notHAS_GPU" in args.replace(" ", ""), \
                        f"{rel(page)}:{number}: a GPU skip must be conditional: skip: next if(not HAS_GPU, reason=...)"


@pytest.mark.parametrize("notebook", [p for p in content_pages() if p.suffix == ".py"], ids=lambda p: p.name)
def test_every_notebook_ran(notebook):
    key = page_key(notebook)
    report = read_report("cpu", key)
    if report is None:
        pytest.skip(f"{key}: no report yet: run `make examples` (or pytest docs/{key})")
    assert not problems(report, key), problems(report, key)
    assert executed_notebook(key).exists(), f"{key}: no executed notebook"


def test_census_finds_material_fences(tmp_path):
    """The census itself: titled, indented and tabbed fences are all seen."""
    page = tmp_path / "p.md"
    page.write_text('```python title="a.py"\nx = 1\n```\n\n!!! note\n    ```py hl_lines="1"\n    y = 2\n    ```\n'
                    '\n=== "Tab"\n\n    ```pycon\n    >>> 1\n    1\n    ```\n````markdown\n```python\n```\n````\n')
    assert [(b[0], b[2]) for b in fences(page)] == [(1, "python"), (6, "py"), (12, "pycon"), (16, "markdown")]


LABEL_HTML = '<p class="tfv-not-run"><strong>Not executed here:</strong> why</p>'


def block(language, code="echo hi", label=False):
    return (LABEL_HTML if label else "") + (f'<div class="language-{language} highlight"><pre><span></span><code>'
                                            f'<span class="n">{code}</span></code></pre></div>')


@pytest.mark.parametrize("html, problem", [
    (block("bash", label=True), None),
    (block("sh", label=True), None),                       # an alias: the lexer is Bash
    (block("console", label=True), None),
    (block("json", '{"a": 1}'), None),                     # parsed by test_every_block_ran_or_is_accounted_for
    (block("yaml", "a: 1"), None),
    (block("bash"), "without a visible label"),
    (block("toml", "a = 1"), "without a visible label"),
    (block("cython", label=True), "neither Python that runs nor a non-executable language"),
    (block("julia", label=True), "neither Python that runs nor a non-executable language"),
    (block("nosuchlanguage", label=True), "no Pygments lexer"),
    (block("python", "x = 1"), "does not record as run and passed"),
    (block("starlark", "x = 1", label=True), "does not record as run and passed"),  # Pygments: Python
])
def test_the_html_census_allows_only_python_that_ran_and_listed_languages(html, problem):
    from tfv.site import census

    found = census.check(f"<html><body><article>{html}</article></body></html>", None)
    if problem is None:
        assert found == [], found
    else:
        assert len(found) == 1 and problem in found[0], found
