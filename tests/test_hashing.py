"""The content hash covers what a page's result depends on (tfv.hashing): the run side of the package, as
installed, makes every report stale when it changes; the site side (rendering) does not. In-process, no run."""

import shutil

import pytest

from tfv import hashing
from tfv.layout import DOCS

PAGE = DOCS / "interview-questions/trace-lab.md"


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A copy of the installed package that the hash reads instead, to edit."""
    copy = tmp_path / "tfv"
    shutil.copytree(hashing.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(hashing, "PACKAGE", copy)
    return copy


def test_the_copy_hashes_as_the_installed_package(package, monkeypatch):
    copied = hashing.content_hash(PAGE)
    monkeypatch.undo()
    assert hashing.content_hash(PAGE) == copied  # names and bytes, not where the package sits
    names = [name for name, _ in hashing.runner()]
    assert "tfv/run/plugin.py" in names and "tfv/report.py" in names and "tfv/directives.py" in names, names
    assert not any(name.startswith(("tfv/site/", "tfv/cli")) for name in names), names


@pytest.mark.parametrize("module", ["site/stamp.py", "site/census.py", "site/plugin.py", "cli.py"])
def test_a_rendering_change_leaves_the_hash(package, module):
    before = hashing.content_hash(PAGE)
    (package / module).write_text((package / module).read_text() + "\n# only how pages look, or a task\n")
    assert hashing.content_hash(PAGE) == before


@pytest.mark.parametrize("module", ["run/isolation.py", "run/markdown.py", "includes.py", "rules.py", "schema.py"])
def test_a_runner_change_makes_it_stale(package, module):
    before = hashing.content_hash(PAGE)
    (package / module).write_text((package / module).read_text() + "\n# how examples run changed\n")
    assert hashing.content_hash(PAGE) != before


def test_a_new_runner_module_makes_it_stale(package):
    before = hashing.content_hash(PAGE)
    (package / "run/extra.py").write_text('"""A new part of the runner."""\n')
    assert hashing.content_hash(PAGE) != before
