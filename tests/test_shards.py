"""CI sharding (tfv.run.shards; `tfv merge`, tfv.cli): whole pages, balanced by recorded duration; the merge refuses anything but
every page exactly once from shards that all passed, fed here with fake shard outputs."""

import json

import pytest

from sandbox import BIN, run
from tfv import report
from tfv.cli import merge
from tfv.code import file_digest
from tfv.layout import DOCS
from tfv.pages import content_pages, notebook_name, page_key
from tfv.report import assemble
from tfv.run import shards

PAGES = content_pages()
KEYS = [page_key(p) for p in PAGES]


def test_plan_gives_every_page_to_exactly_one_shard_and_balances_the_time():
    """A page with no recorded duration yet (a new page) counts as the mean: adding a page needs no refresh
    of tests/page-durations.json (`make durations` after a full run only sharpens the balance)."""
    weight = {page_key(p): w for p, w in shards.weights(PAGES).items()}
    plan = shards.plan(PAGES, 3)
    assert sorted(p for shard in plan for p in shard) == PAGES
    totals = [sum(weight[page_key(p)] for p in shard) for shard in plan]
    assert max(totals) - min(totals) <= max(weight.values()), totals  # greedy: off by at most one page
    assert shards.plan(PAGES, 3) == plan, "the plan must be the same in every process"


def test_a_new_page_counts_as_the_mean():
    recorded = {"interview-questions/a.md": 10.0, "interview-questions/b.md": 30.0}
    pages = [DOCS / "interview-questions/a.md", DOCS / "interview-questions/new.md"]
    assert list(shards.weights(pages, recorded).values()) == [10.0, 20.0]


@pytest.mark.parametrize("spec", ["0/3", "4/3", "3", "a/b", "1/0"])
def test_a_bad_shard_spec_is_refused(spec):
    with pytest.raises(ValueError, match="--shard must be i/N"):
        shards.parse(spec)


@pytest.fixture
def fake_shards(tmp_path, monkeypatch):
    """Three shard artefacts as the workflow downloads them, with reports that pass every rule; build/ in tmp."""
    monkeypatch.setattr("tfv.report.REPORTS", tmp_path / "build/report")
    monkeypatch.setattr("tfv.pages.EXECUTED", tmp_path / "build/executed")
    facts = {"device": "cpu", "gpu_model": None, "commit": "unknown", "date": "2026-12-01",
             "versions": {"tensorflow": "x", "keras": "x", "python": "x"}}
    folders = []
    for index, pages in enumerate(shards.plan(PAGES, 3), 1):
        folder = tmp_path / f"artifacts/cpu-{index}"
        for page in pages:
            key = page_key(page)
            example = {"line": 1, "outcome": "passed", "reason": None, "duration": 0.1, "cpu": 0.1, "ran": ["0" * 64]}
            if page.suffix == ".py":  # a notebook page travels with its executed notebook
                notebook = folder / "executed" / notebook_name(key)
                notebook.parent.mkdir(parents=True, exist_ok=True)
                notebook.write_text("{}")
                example["notebook"] = file_digest(notebook)
            report = assemble(page, [example], facts)
            (folder / "report/cpu" / f"{key}.json").parent.mkdir(parents=True, exist_ok=True)
            (folder / "report/cpu" / f"{key}.json").write_text(json.dumps(report))
        shards.write_manifest("cpu", index, 3, pages, 0, folder=folder / "shards")
        folders.append(folder)
    return folders


def test_merge_of_three_passing_shards_yields_every_report(fake_shards):
    assert merge("cpu", 3, fake_shards) == []
    assert sorted(r["page"] for r in report.reports("cpu")) == sorted(KEYS)


def test_merge_refuses_a_missing_shard(fake_shards):
    (fake_shards[1] / "shards/cpu-2.json").unlink()
    problems = merge("cpu", 3, fake_shards)
    assert "shard 2/3: no manifest(s) (a shard that did not finish uploads none)" in problems, problems
    assert any(p.endswith(": in no shard") for p in problems), problems


def test_merge_refuses_a_failed_shard(fake_shards):
    manifest = fake_shards[2] / "shards/cpu-3.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "exit": 1}))
    assert "shard 3/3: ran as one of 3, exit 1" in merge("cpu", 3, fake_shards)


def test_merge_refuses_a_page_that_ran_in_two_shards(fake_shards):
    manifest = fake_shards[2] / "shards/cpu-3.json"
    data = json.loads(manifest.read_text())
    stolen = json.loads((fake_shards[0] / "shards/cpu-1.json").read_text())["pages"][0]
    manifest.write_text(json.dumps({**data, "pages": data["pages"] + [stolen]}))
    problems = merge("cpu", 3, fake_shards)
    assert f"docs/{stolen}: ran in shard 1 and in shard 3" in problems, problems


def test_merge_refuses_a_stale_report_and_a_missing_one(fake_shards):
    keys = json.loads((fake_shards[0] / "shards/cpu-1.json").read_text())["pages"]
    stale = fake_shards[0] / "report/cpu" / f"{keys[0]}.json"
    stale.write_text(json.dumps({**json.loads(stale.read_text()), "hash": "f" * 64}))
    (fake_shards[0] / "report/cpu" / f"{keys[1]}.json").unlink()
    problems = merge("cpu", 3, fake_shards)
    assert any(p.startswith(f"docs/{keys[0]}: cpu report is stale") for p in problems), problems
    assert f"docs/{keys[1]}: shard 1 was given it but wrote no cpu report" in problems, problems


def test_pytest_runs_only_its_shard_and_writes_the_manifest(project):
    for name in ("a", "b", "c"):
        (project.path / f"docs/interview-questions/{name}.md").parent.mkdir(parents=True, exist_ok=True)
        (project.path / f"docs/interview-questions/{name}.md").write_text(f"# {name}\n\n```python\nx = 1\n```\n")
    code, out = run(project, BIN / "pytest", "-p", "no:cacheprovider", "docs", "--shard", "2/2")
    assert code == 0, out
    manifest = json.loads((project.path / "build/shards/cpu-2.json").read_text())
    ran = sorted(p.name.removesuffix(".json") for p in (project.path / "build/report/cpu/interview-questions").iterdir())
    assert manifest["exit"] == 0 and 1 <= len(manifest["pages"]) < 3, manifest
    assert [f"interview-questions/{name}" for name in ran] == manifest["pages"], (ran, manifest)
