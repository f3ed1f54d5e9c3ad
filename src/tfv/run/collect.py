"""Which files under docs/ are pages to run, and how: a Markdown page goes to Sybil, a notebook page to its
notebook item, and a misnamed page or one whose front matter cannot be read fails on its own, naming the file
and line, while every other page still runs and reports."""

import pytest

from tfv.layout import DOCS
from tfv.pages import SECTIONS, SITE_PAGES, front_matter, is_content_page, page_key
from tfv.run.markdown import collect_markdown
from tfv.run.notebook import NotebookFile


class BrokenPage(pytest.Item):
    def __init__(self, *, problem, **kwargs):
        super().__init__(**kwargs)
        self.problem = problem

    def runtest(self):
        raise ValueError(self.problem)

    def repr_failure(self, excinfo, style=None):
        return self.problem

    def reportinfo(self):
        return self.path, 0, "page"


class BrokenFile(pytest.File):
    def __init__(self, *, problem, **kwargs):
        super().__init__(**kwargs)
        self.problem = problem

    def collect(self):
        yield BrokenPage.from_parent(self, name="page", problem=self.problem)


def is_page(path):
    """A file under docs/ that pytest should look at: every .md and .py except the site pages (home, section
    indexes, tags), which hold no examples (a code block there has no report, so the HTML census refuses it)."""
    return path.suffix in (".md", ".py") and DOCS in path.parents and page_key(path) not in SITE_PAGES


def page_problem(path):
    key = page_key(path)
    if not is_content_page(key):
        return (f"docs/{key}:1: not a page file the site publishes: docs/<section>/<slug>.md or .py, "
                f"with <section> one of {', '.join(SECTIONS)} and a lowercase, hyphenated slug")
    try:
        front_matter(path)
    except ValueError as error:
        return str(error)
    return None


def page_file(path, parent):
    problem = page_problem(path)
    if problem:
        return BrokenFile.from_parent(parent, path=path, problem=problem)
    if path.suffix == ".py":
        return NotebookFile.from_parent(parent, path=path)
    return collect_markdown(path, parent)
