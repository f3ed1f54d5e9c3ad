"""Run it yourself: every content page exported, at build time, as a notebook of exactly the blocks its CPU report
records as run and the page shows (not the invisible blocks that check the page's own text), in run order, each
matched to its rendered block by digest as the census matches them. Before them: a header cell (the page's URL and
stamp), an install cell pinned to the versions it was verified with, and the page API the run gives (seed 0,
HAS_GPU, record, two logical CPUs; ROOT, a checkout of the repository at the report's commit, where the page uses
it). A page that skipped GPU-only blocks asks Colab for a GPU runtime. Written to site/notebooks/<section>/<slug>.ipynb;
the deploy publishes that folder on the `notebooks` branch: Colab opens notebooks from GitHub, Drive or a Gist only."""

import json
from pathlib import Path

import nbformat
from bs4 import BeautifulSoup
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.utils import get_relative_url

from tfv.code import digest, is_python
from tfv.layout import DOCS
from tfv.pages import executed_notebook, is_content_page, source_key
from tfv.report import BadReport, read_report
from tfv.site.census import language_of
from tfv.site.config import settings

FOLDER = "notebooks"  # in the site, and the branch the deploy pushes it to
REFUSED = []  # pages of this build whose report and rendered blocks disagree (raised after the census has spoken)

INSTALL = '''# The versions this page was verified with ({date}): installed only where they differ.
import importlib.metadata
import subprocess
import sys

PINS = {pins!r}
def installed(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
if any(installed(name) != version for name, version in PINS.items()):
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                    *(f"{{name}}=={{version}}" for name, version in PINS.items())], check=True)'''

PAGE_API = '''# What the site's test run gives every page (tfv.run.isolation): two logical CPUs, seed 0, HAS_GPU and record.
import keras
import tensorflow as tf

HAS_GPU = bool(tf.config.list_physical_devices("GPU"))
if not HAS_GPU:
    tf.config.set_logical_device_configuration(tf.config.list_physical_devices("CPU")[0],
                                               [tf.config.LogicalDeviceConfiguration()] * 2)
keras.utils.set_random_seed(0)


def record(name, value, *, rtol=1e-6, atol=0.0):
    """On the site, a named result the GPU run must reproduce; here it is printed."""
    print(f"recorded {{name}} = {{float(value)!r}}")'''

CHECKOUT = '''# This page runs files of the repository (ROOT): a checkout at the commit the page was verified at.
import pathlib

ROOT = pathlib.Path("tensorflow-verified").resolve()
if not ROOT.exists():
    subprocess.run(["git", "clone", "--quiet", {repo!r}, str(ROOT)], check=True)
    subprocess.run(["git", "-C", str(ROOT), "checkout", "--quiet", {commit!r}], check=True)'''


def ran_code(key, html, report):
    """The code of every block the report records as run, in run order, from the rendered page (or, for a notebook
    page, from the notebook the run executed)."""
    if key.endswith(".py"):
        cells = nbformat.read(executed_notebook(key), as_version=4).cells
        shown = {digest(cell.source): cell.source for cell in cells if cell.cell_type == "code"}
    else:
        shown = {}
        for pre in BeautifulSoup(html, "html.parser").find_all("pre"):
            language = language_of(pre)[0]
            if language and is_python(language) and not pre.find_parent(class_="jp-OutputArea"):
                code = pre.find("code") or pre
                for numbers in code.select(".linenos, .linenodiv"):
                    numbers.decompose()
                shown[digest(code.get_text())] = code.get_text().strip("\n")
    ran = [d for example in report["examples"] if example["outcome"] == "passed" for d in example.get("ran", [])]
    hidden = (DOCS / key).read_text(encoding="utf-8").count("<!-- invisible-code-block:")  # checks of the page's own text
    if len([d for d in ran if d not in shown]) > hidden:
        raise ValueError(f"docs/{key}: a block the report records as run is not on the page")
    return [shown[d] for d in ran if d in shown]


def export(key, title, url, report, code, repo):
    """The page as a notebook (nbformat 4)."""
    versions = report["versions"]
    header = (f"# {title}\n\nExported from [{url}]({url}): the {len(code)} code blocks the page shows, as the "
              f"site's CPU run executed them, in "
              f"order, verified with TensorFlow {versions['tensorflow']}, Keras {versions['keras']} and Python "
              f"{versions['python']} on {report['date']} (commit `{report['commit'][:12]}`). The prose, and why each "
              "block is there, are on the page.")
    pins = {"tensorflow": versions["tensorflow"], "keras": versions["keras"]}
    setup = [INSTALL.format(date=report["date"], pins=pins), PAGE_API.format()]
    if any("ROOT" in block for block in code):
        setup.append(CHECKOUT.format(repo=repo, commit=report["commit"]))
    notebook = nbformat.v4.new_notebook()
    notebook.cells = ([nbformat.v4.new_markdown_cell(header)] + [nbformat.v4.new_code_cell(s) for s in setup]
                      + [nbformat.v4.new_code_cell(block) for block in code])
    notebook.metadata.update({"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                              "language_info": {"name": "python"}})
    gpu = any(e["outcome"] == "skipped" and "GPU" in (e["reason"] or "") for e in report["examples"])
    if gpu:  # what Colab reads to offer a GPU runtime
        notebook.metadata.update({"accelerator": "GPU", "colab": {"gpuType": "T4", "provenance": []}})
    return notebook


def on_page_content(content, page, config, files):
    key = source_key(page.file.src_uri)
    if not is_content_page(key):
        return content
    try:
        report = read_report("cpu", key)
    except BadReport:
        report = None
    if report is None or not executed_notebook(key).exists() and key.endswith(".py"):
        return content  # nothing ran yet (the preview): nothing to export; the publish build refuses such a page
    try:
        code = ran_code(key, content, report)
    except ValueError as error:
        if settings(config)["publish"]:
            REFUSED.append(str(error))  # refused in on_post_build, after the census names the block
        return content  # the preview of a page edited since its run
    name = f"{FOLDER}/{Path(key).with_suffix('.ipynb').as_posix()}"
    target = Path(config.site_dir) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    notebook = export(key, page.title, page.canonical_url or page.url, report, code, config.repo_url or "")
    nbformat.write(notebook, target)
    page.meta["tfv_notebook"] = get_relative_url(name, page.url)
    if (config.repo_url or "").startswith("https://github.com/"):
        repository = config.repo_url.removeprefix("https://github.com/").strip("/")
        page.meta["tfv_colab"] = f"https://colab.research.google.com/github/{repository}/blob/{FOLDER}/{name.split('/', 1)[1]}"
    return content


@event_priority(-110)  # after tfv.site.census.on_post_build (priority 0), whose message names the block that did not run
def on_post_build(config):
    refused = REFUSED[:]
    REFUSED.clear()
    if refused:
        raise PluginError("Notebook export: " + "; ".join(refused))


def cells_of(path):
    """The code cells of an exported notebook (for the checks)."""
    return [cell["source"] for cell in json.loads(Path(path).read_text())["cells"] if cell["cell_type"] == "code"]
