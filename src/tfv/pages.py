"""What a page is: which files under docs/ are content pages, their front matter, budget and notebook names.
The only definitions the test run, the build, the checks and the command line use."""

import os
import re
from pathlib import Path

import jsonschema
import yaml

from tfv.layout import DOCS, EXECUTED, ROOT, rel
from tfv.schema import FRONT_MATTER_SCHEMA, PAGE_FILE, SECTIONS, validate

SITE_PAGES = {"index.md", "tags.md"} | {f"{section}/index.md" for section in SECTIONS}
NOTEBOOK_HEADER = re.compile(r"# ---\n((?:#.*\n)*?)# ---\n")  # a jupytext percent file's front matter

BUDGET = 60  # CPU seconds of examples per page (the process and its children), unless its front matter says
# `budget: {seconds: N, reason: why}`. CPU time does not grow when a neighbour loads the machine; wall time does,
# so wall time is only the hang guard (pytest-timeout, pyproject.toml) and is recorded beside it.
# A budget is stated in the reference machine's CPU seconds: a slower machine spends more CPU time on the same work,
# so a run on one scales its pages' CPU time by REFERENCE / its own calibration (tfv.run.device.calibration: the
# CPU seconds of a fresh process importing TensorFlow and Keras) before the budget is compared. A faster machine
# is held to its own CPU seconds: how much a faster CPU saves differs between imports and kernels, and a verdict
# stricter than the reference's would fail a page there that passes in CI. REFERENCE is the calibration on the
# reference machine (a 2-core AMD EPYC without AVX-512: 15.1 to 15.5 s quiet, 16.1 and 17.5 s beside two busy
# processes; bench/findings.md). A run measures its calibration only when a page is over its budget.
REFERENCE = 15.3


def front_matter(path):
    """(meta, title) of a page from its source: Markdown front matter, or a notebook's jupytext header.
    Raises ValueError naming the page when the front matter is not a valid mapping of known keys."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        header = NOTEBOOK_HEADER.match(text)
        meta = _yaml("".join(line[2:] + "\n" for line in header.group(1).splitlines()), path) if header else {}
        title = re.search(r"^# # (.+)$", text, re.M)
    else:
        header = re.match(r"---\n(.*?)\n---\n", text, re.S)
        meta = _yaml(header.group(1), path) if header else {}
        title = re.search(r"^# (.+)$", text, re.M)
    meta = {} if meta is None else meta
    try:
        validate(meta, FRONT_MATTER_SCHEMA)
    except jsonschema.ValidationError as error:
        where = "/".join(map(str, error.absolute_path)) or "front matter"
        raise ValueError(f"{rel(path)}:1: {where}: {error.message}") from None
    return meta, title.group(1).strip() if title else path.stem


def _yaml(text, path):
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValueError(f"{rel(path)}:1: front matter is not valid YAML: {error}") from None


def page_key(path):
    """'interview-questions/trace-lab.md' for docs/interview-questions/trace-lab.md."""
    return Path(path).resolve().relative_to(DOCS).as_posix()


def is_content_page(key):
    """A page with examples, which the site publishes: docs/<section>/<slug>.md, or a notebook page
    docs/<section>/<slug>.py (a jupytext file)."""
    return bool(PAGE_FILE.fullmatch(key)) and key not in SITE_PAGES


def content_pages():
    """Every content page under docs/, sorted."""
    return sorted(path for path in DOCS.rglob("*") if is_content_page(path.relative_to(DOCS).as_posix()))


def checked_pages():
    """The pages the page checks look at: every content page, or only those TFV_PAGES names (paths from the
    project root, space-separated: `make test-changed` sets it to the changed pages)."""
    named = os.environ.get("TFV_PAGES")
    if named is None:
        return content_pages()
    wanted = {(ROOT / name).resolve() for name in named.split()}
    return [page for page in content_pages() if page.resolve() in wanted]


def notebook_name(key):
    """The rendered notebook of a notebook page: 'a/b.py' -> 'a/b.ipynb' (also the name it has on the site)."""
    return Path(key).with_suffix(".ipynb").as_posix()


def source_key(uri):
    """The page a docs file comes from: 'a/b.ipynb' (a rendered notebook) -> 'a/b.py'; anything else unchanged."""
    return uri.removesuffix(".ipynb") + ".py" if uri.endswith(".ipynb") else uri


def executed_notebook(key):
    return EXECUTED / notebook_name(key)


def budget(path):
    """The page's budget in CPU seconds (front matter `budget: {seconds: N, reason: why}`)."""
    declared = front_matter(path)[0].get("budget")
    return float(declared["seconds"]) if declared else float(BUDGET)


def read_notebook(path):
    """A notebook page's source as a notebook, without its front matter (the raw cell jupytext makes of the
    `# ---` header holds description and tags: page metadata, not content), its includes expanded. The test
    run, the preview and the bench use it."""
    import jupytext

    from tfv.includes import expand_cell

    notebook = jupytext.read(path)
    if notebook.cells and notebook.cells[0].cell_type == "raw" and notebook.cells[0].source.startswith("---"):
        notebook.cells.pop(0)
    for cell in notebook.cells:  # a `# --8<-- "file:section"` line in a code cell: the snippet itself
        if cell.cell_type == "code":
            cell.source = expand_cell(cell.source)
    return notebook
