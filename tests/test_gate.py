"""The publish gate fed with reports: a GPU report adds its line to the stamp; in CI the build
refuses a GPU report that skipped GPU examples, disagrees with the CPU run, or ran over budget."""

import json

from sandbox import BIN, run

PAGE = "# P\n\n```python\nx = 1\n```\n"


def reports(project, **gpu_changes):
    """Run the page on CPU for real, then write the GPU report a GPU runner would have written."""
    (project / "docs/qa").mkdir(parents=True)
    (project / "docs/qa/p.md").write_text(PAGE)
    code, out = run(project, str(BIN / "pytest"), "-p", "no:cacheprovider", "docs/qa/p.md")
    assert code == 0, out
    cpu_path = project / "build/report/cpu/qa/p.md.json"
    cpu = json.loads(cpu_path.read_text())
    cpu["results"] = {"loss": {"value": 0.25, "rtol": 1e-3, "atol": 0.0}}
    cpu_path.write_text(json.dumps(cpu))
    gpu = {**cpu, "device": "gpu", "gpu_model": "NVIDIA L4", "results": {"loss": {"value": 0.2501, "rtol": 1e-3, "atol": 0}},
           **gpu_changes}
    (project / "build/report/gpu/qa").mkdir(parents=True)
    (project / "build/report/gpu/qa/p.md.json").write_text(json.dumps(gpu))


def build(project, **env):
    return run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="1", TFV_REQUIRE_GPU_REPORT="1", **env)


def test_gpu_report_adds_a_stamp_line(project):
    reports(project)
    code, out = build(project)
    assert code == 0, out
    html = (project / "site/qa/p/index.html").read_text()
    assert "GPU (NVIDIA L4)" in html and "CPU ·" in html, "both stamp lines expected"


def test_gpu_skipped_examples_refuse_publishing(project):
    reports(project, examples=[{"line": 3, "outcome": "skipped", "reason": "needs a GPU: X", "duration": 0}])
    code, out = build(project)
    assert code == 1 and "1 GPU example(s) skipped on the GPU runner" in out, out


def test_cpu_gpu_mismatch_refuses_publishing(project):
    reports(project, results={"loss": {"value": 0.26, "rtol": 1e-3, "atol": 0}})
    code, out = build(project)
    assert code == 1 and "result 'loss': GPU 0.26 vs CPU 0.25" in out, out


def test_missing_gpu_report_refuses_publishing_in_ci(project):
    reports(project)
    (project / "build/report/gpu/qa/p.md.json").unlink()
    code, out = build(project)
    assert code == 1 and "docs/qa/p.md: no gpu report" in out, out


def test_over_budget_fails_the_run_and_the_build(project):
    (project / "docs/qa").mkdir(parents=True)
    (project / "docs/qa/slow.md").write_text("---\nbudget:\n  seconds: 0.5\n  reason: a test of the budget\n---\n"
                                             "# Slow\n\n```python\nimport time\ntime.sleep(1)\n```\n")
    code, out = run(project, str(BIN / "pytest"), "-p", "no:cacheprovider", "docs/qa/slow.md")
    assert code == 1 and "OVER BUDGET: qa/slow.md: examples took 1 s, budget 0 s" in out, out
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="1")
    assert code == 1 and "over the page's 0 s budget" in out, out
