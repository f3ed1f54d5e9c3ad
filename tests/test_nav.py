"""The nav (docs/.nav.yml and each section's, read by mkdocs-awesome-nav) against the home page: the prep path
the home page lists is the nav's "Interview prep path", step for step. (A page left out of the nav fails the
build: mkdocs.yml's `strict` with `omitted_files: warn`.)"""

import re

import yaml

from tfv.layout import DOCS
from tfv.pages import content_pages, notebook_name


def home_path():
    home = (DOCS / "index.md").read_text(encoding="utf-8")
    section = home[home.index("{ #interview-prep }"):].split("\n## ", 1)[0]
    return re.findall(r"^\d+\. \[[^\]]+\]\(interview-questions/([^)#]+)\)", section, re.M)


def nav_path():
    nav = yaml.safe_load((DOCS / "interview-questions/.nav.yml").read_text(encoding="utf-8"))["nav"]
    return next(entry["Interview prep path"] for entry in nav if isinstance(entry, dict) and "Interview prep path" in entry)


def test_the_home_page_and_the_nav_list_the_same_prep_path():
    assert len(home_path()) >= 10 and home_path() == nav_path(), (home_path(), nav_path())


def test_every_step_of_the_path_is_a_content_page():
    pages = {notebook_name(p.name) if p.suffix == ".py" else p.name
             for p in content_pages() if p.parent.name == "interview-questions"}
    assert set(nav_path()) <= pages, set(nav_path()) - pages

