"""Run it yourself (tfv.site.export): every content page has a notebook of exactly the blocks its CPU report records as
run and the page shows, in order, pinned to the versions it was verified with, linked from the page as "Open in
Colab" and "Download notebook"; a few run end to end here, as they are. Needs `make site`."""

import json
import os
import re
import subprocess

import nbformat
import pytest
from bs4 import BeautifulSoup
from nbclient import NotebookClient

from test_links import NEEDS_SITE, SITE
from tfv.code import digest
from tfv.layout import DOCS, ROOT
from tfv.pages import checked_pages, content_pages, page_key
from tfv.report import read_report
from tfv.site.export import FOLDER

SETUP = 2  # the install cell and the page API cell come first (then a checkout cell, where the page uses ROOT)
RUN_HERE = ["interview-questions/tensors.md", "interview-questions/signature-rejection.md",
            "best-practices/unit-testing-tf-code.md"]  # short pages that use no file of the repository


def exported(key):
    return SITE / FOLDER / f"{key.rsplit('.', 1)[0]}.ipynb"


@NEEDS_SITE
@pytest.mark.parametrize("key", [page_key(p) for p in checked_pages()])
def test_each_page_exports_the_blocks_that_ran_in_order(key):
    report = read_report("cpu", key)
    notebook = json.loads(exported(key).read_text())
    code = ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]
    setup = SETUP + ("ROOT" in "".join(code[SETUP:]))
    ran = [d for e in report["examples"] if e["outcome"] == "passed" for d in e.get("ran", [])]
    hidden = (DOCS / key).read_text(encoding="utf-8").count("<!-- invisible-code-block:")
    blocks = [digest(source) for source in code[setup:]]
    assert blocks == [d for d in ran if d in blocks] and len(ran) - len(blocks) <= hidden, (key, len(blocks), len(ran))
    pins = re.search(r"PINS = (\{.*\})", code[0])[1]
    versions = report["versions"]
    assert pins == repr({"tensorflow": versions["tensorflow"], "keras": versions["keras"]}), pins
    gpu = any(e["outcome"] == "skipped" and "GPU" in (e["reason"] or "") for e in report["examples"])
    assert (notebook["metadata"].get("accelerator") == "GPU") == gpu, notebook["metadata"]
    assert report["commit"][:12] in "".join(notebook["cells"][0]["source"])


@NEEDS_SITE
def test_every_page_links_colab_and_the_download():
    for page in checked_pages():
        key = page_key(page)
        html = (SITE / key.rsplit(".", 1)[0] / "index.html").read_text(encoding="utf-8")
        links = {a.get_text(): a["href"] for a in BeautifulSoup(html, "html.parser").select(".tfv-actions a")}
        name = key.rsplit(".", 1)[0] + ".ipynb"
        assert links.get("Open in Colab") == ("https://colab.research.google.com/github/tensorflow-verified/"
                                              f"tensorflow-verified/blob/{FOLDER}/{name}"), (key, links)
        target = (SITE / key.rsplit(".", 1)[0] / links["Download notebook"]).resolve()
        assert target == exported(key).resolve() and target.exists(), (key, links)


@NEEDS_SITE
@pytest.mark.parametrize("key", RUN_HERE)
def test_an_exported_notebook_runs_as_it_is(key, tmp_path):
    notebook = nbformat.read(exported(key), as_version=4)
    assert not any("ROOT" in cell.source for cell in notebook.cells), "pick a page that needs no repository files"
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert all(cell.get("execution_count") for cell in notebook.cells if cell.cell_type == "code")


@NEEDS_SITE
def test_the_notebooks_branch_holds_every_exported_notebook(tmp_path):
    """What CI's notebooks job pushes (make notebooks-branch), pushed here to a local bare repository."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    env = {**os.environ, "GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": "o/r", "GITHUB_SHA": "0" * 40}
    result = subprocess.run(["make", "-s", "notebooks-branch", f"NOTEBOOKS_REMOTE={remote}"], cwd=ROOT, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    files = subprocess.run(["git", "--git-dir", str(remote), "ls-tree", "-r", "--name-only", "notebooks"],
                           capture_output=True, text=True, check=True).stdout.split()
    assert sorted(files) == sorted(f"{page_key(p).rsplit('.', 1)[0]}.ipynb" for p in content_pages()), files[:5]


@NEEDS_SITE
def test_a_snippet_title_links_the_lines_the_block_shows():
    """tfv.site.sources: the linked lines of the snippet file are the code the block shows (digests match)."""
    checked = 0
    for page in (p for p in content_pages() if p.suffix == ".md"):
        html = (SITE / page_key(page).removesuffix(".md") / "index.html").read_text(encoding="utf-8")
        for title in BeautifulSoup(html, "html.parser").select(".highlight > .filename"):
            link = title.find("a")
            if link is None:
                continue
            name, first, last = _parts(link["href"])
            lines = (ROOT / name).read_text(encoding="utf-8").splitlines()[int(first) - 1:int(last)]
            assert digest("\n".join(lines)) == digest(title.find_next("pre").get_text()), (page_key(page), link["href"])
            checked += 1
    assert checked >= 40, checked


def _parts(url):
    match = re.fullmatch(r"https://github\.com/[^/]+/[^/]+/blob/(?:[0-9a-f]{40}|main)/(.+)#L(\d+)-L(\d+)", url)
    assert match, url
    return match.groups()
