"""The publish gate fed with reports: a GPU report adds its line to the stamp; in CI the build
refuses a GPU report that skipped GPU examples, disagrees with the CPU run, or ran over budget."""

import json

from sandbox import BIN, run

PAGE = "# P\n\n```python\nx = 1\n```\n"


CPU_RUN = {}  # the page's CPU report, from one real run per worker: every copy of the project is the same, so is its report


def reports(project, **gpu_changes):
    """Run the page on CPU for real (once per worker), then write the GPU report a GPU runner would have written."""
    (project.path / "docs/interview-questions").mkdir(parents=True)
    (project.path / "docs/interview-questions/p.md").write_text(PAGE)
    cpu_path = project.path / "build/report/cpu/interview-questions/p.md.json"
    if "report" not in CPU_RUN:
        code, out = run(project, str(BIN / "pytest"), "-p", "no:cacheprovider", "docs/interview-questions/p.md")
        assert code == 0, out
        CPU_RUN["report"] = cpu_path.read_text()
        assert json.loads(CPU_RUN["report"])["calibration"] is None, "a page far under budget needs no calibration"
    cpu_path.parent.mkdir(parents=True, exist_ok=True)
    cpu_path.write_text(CPU_RUN["report"])
    cpu = json.loads(cpu_path.read_text())
    cpu["results"] = {"loss": {"value": 0.25, "rtol": 1e-3, "atol": 0.0}}
    cpu_path.write_text(json.dumps(cpu))
    gpu = {**cpu, "device": "gpu", "gpu_model": "NVIDIA L4", "results": {"loss": {"value": 0.2501, "rtol": 1e-3, "atol": 0}},
           **gpu_changes}
    (project.path / "build/report/gpu/interview-questions").mkdir(parents=True)
    (project.path / "build/report/gpu/interview-questions/p.md.json").write_text(json.dumps(gpu))


def build(project, **env):
    return run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="true", TFV_REQUIRE_GPU_REPORT="true", **env)


def test_gpu_report_adds_a_stamp_line(project):
    reports(project)
    code, out = build(project)
    assert code == 0, out
    html = (project.path / "site/interview-questions/p/index.html").read_text()
    assert "GPU (NVIDIA L4)" in html and "CPU ·" in html, "both stamp lines expected"


def test_gpu_skipped_examples_refuse_publishing(project):
    reports(project, examples=[{"line": 3, "outcome": "skipped", "reason": "needs a GPU: X", "duration": 0, "cpu": 0}])
    code, out = build(project)
    assert code == 1 and "1 GPU example(s) skipped on the GPU runner" in out, out


def test_cpu_gpu_mismatch_refuses_publishing(project):
    reports(project, results={"loss": {"value": 0.26, "rtol": 1e-3, "atol": 0}})
    code, out = build(project)
    assert code == 1 and "result 'loss': GPU 0.26 vs CPU 0.25" in out, out


def test_missing_gpu_report_refuses_publishing_in_ci(project):
    reports(project)
    (project.path / "build/report/gpu/interview-questions/p.md.json").unlink()
    code, out = build(project)
    assert code == 1 and "docs/interview-questions/p.md: no gpu report" in out, out


BUSY = "import time\nstart = time.process_time()\nwhile time.process_time() - start < 1:\n    pass\n"


def test_over_budget_fails_the_run_and_the_build(project):
    """The budget limits CPU seconds on the reference machine: a page that computes for 1 CPU s is over a 0.2 s
    budget on any machine up to five times slower than the reference; the run measured this machine's calibration
    (a page was over its budget) and the message gives it."""
    (project.path / "docs/interview-questions").mkdir(parents=True)
    (project.path / "docs/interview-questions/slow.md").write_text(
        f"---\nbudget:\n  seconds: 0.2\n  reason: a test of the budget\n---\n# Slow\n\n```python\n{BUSY}```\n")
    code, out = run(project, str(BIN / "pytest"), "-p", "no:cacheprovider", "docs/interview-questions/slow.md")
    assert code == 1 and "REPORT: docs/interview-questions/slow.md: cpu examples used 1 CPU s" in out, out
    assert "on the reference machine (this machine's calibration" in out and "over the page's budget of 0 CPU s" in out, out
    report = json.loads((project.path / "build/report/cpu/interview-questions/slow.md.json").read_text())
    assert report["calibration"] > 0, report
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="true")
    assert code == 1 and "over the page's budget of 0 CPU s" in out, out


def test_budget_counts_child_processes_not_waiting(project):
    """Waiting (a sleep: what a loaded machine adds to wall time) does not count; a child process's CPU does."""
    (project.path / "docs/interview-questions").mkdir(parents=True)
    child = "import subprocess, sys\nsubprocess.run([sys.executable, '-c', " + repr(BUSY) + "], check=True)\n"
    (project.path / "docs/interview-questions/wait.md").write_text(
        "---\nbudget:\n  seconds: 0.2\n  reason: a test of the budget\n---\n# W\n\n```python\nimport time\n"
        f"time.sleep(1)\n```\n\n```python\n{child}```\n")
    code, out = run(project, str(BIN / "pytest"), "-p", "no:cacheprovider", "docs/interview-questions/wait.md")
    report = json.loads((project.path / "build/report/cpu/interview-questions/wait.md.json").read_text())
    sleep, busy = report["examples"]
    assert sleep["duration"] >= 1 and sleep["cpu"] < 0.2, sleep
    assert busy["cpu"] >= 1, busy
    assert code == 1 and "used 1 CPU s" in out, out


def publish(project, name, text):
    """Run one page for real, then the publish build; (exit code, output)."""
    page = project.path / "docs/interview-questions" / name
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text)
    code, out = run(project, str(BIN / "pytest"), "-p", "no:cacheprovider", f"docs/interview-questions/{name}")
    assert code == 0, out
    return run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="true")


def test_census_refuses_python_no_example_ran(project):
    code, out = publish(project, "raw.md", '# R\n\n```python\nx = 1\n```\n\n<pre><code class="language-python">never_ran()'
                        "</code></pre>\n")
    assert code == 1 and "HTML census" in out and "interview-questions/raw/index.html" in out and "never_ran()" in out, out


def test_census_refuses_a_forged_report(project):
    code, out = publish(project, "f.md", "# F\n\n```python\nx = 1\n```\n")
    assert code == 0, out
    path = project.path / "build/report/cpu/interview-questions/f.md.json"
    report = json.loads(path.read_text())
    report["examples"][0]["ran"] = ["0" * 64]  # valid shape, wrong code
    path.write_text(json.dumps(report))
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="true")
    assert code == 1 and "block 1 ('x = 1')" in out and "not record as run" in out, out


def test_export_refuses_a_report_that_ran_a_block_the_page_does_not_show(project):
    """Every shown block ran, but the report claims one more: the notebook export would not be the page's code."""
    code, out = publish(project, "g.md", "# G\n\n```python\nx = 1\n```\n")
    assert code == 0, out
    path = project.path / "build/report/cpu/interview-questions/g.md.json"
    report = json.loads(path.read_text())
    report["examples"][0]["ran"].append("0" * 64)
    path.write_text(json.dumps(report))
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="true")
    assert code == 1 and "docs/interview-questions/g.md: a block the report records as run is not on the page" in out, out


def test_census_refuses_a_python_fence_in_a_notebook_markdown_cell(project):
    code, out = publish(project, "nb.py", "# %% [markdown]\n# # NB\n#\n# ```python\n# never_ran()\n# ```\n\n# %%\nx = 1\n")
    assert code == 1 and "nb/index.html" in out and "unknown language without a visible label" in out, out


def test_skipped_block_is_published_only_with_its_label(project):
    code, out = publish(project, "s.md", '# S\n\n<!-- skip: next "needs a server" -->\n```python\nprint(1)\n```\n\n'
                        "```python\nx = 1\n```\n\n??? question \"In a collapsed block\"\n    Text.\n\n"
                        '    <!-- skip: next "needs a second server" -->\n    ```python\n    print(2)\n    ```\n')
    assert code == 0, out
    html = (project.path / "site/interview-questions/s/index.html").read_text()
    assert "Skipped on the CPU run:</strong> needs a server" in html, html
    assert "Skipped on the CPU run:</strong> needs a second server" in html, html


def test_only_allow_listed_page_files_are_published(project):
    for name in ["docs/stray.md", "docs/interview-questions/Bad_Name.md", "docs/notes/x.md",
                 "docs/interview-questions/fake.ipynb", "docs/interview-questions/raw.html"]:
        (project.path / name).parent.mkdir(parents=True, exist_ok=True)
        (project.path / name).write_text("{}" if name.endswith("ipynb") else "# X\n")
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="true")
    assert code == 1, out
    for name in ["docs/stray.md", "docs/interview-questions/Bad_Name.md", "docs/notes/x.md",
                 "docs/interview-questions/fake.ipynb", "docs/interview-questions/raw.html"]:
        assert f"{name}: not a page file the site publishes" in out, (name, out)


def test_report_fields_are_escaped_and_type_checked(project):
    reports(project, gpu_model="<script>alert(1)</script>")
    code, out = build(project)
    assert code == 0, out
    html = (project.path / "site/interview-questions/p/index.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert(1)" not in html
    path = project.path / "build/report/gpu/interview-questions/p.md.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "duration": "fast"}))
    code, out = build(project)
    assert code == 1 and "p.md.json: not a valid report: 'fast' is not of type 'number'" in out, out


def test_executed_notebook_must_be_the_one_the_run_wrote(project):
    code, out = publish(project, "nb.py", "# %% [markdown]\n# # NB\n\n# %%\nprint(6 * 7)\n")
    assert code == 0, out
    executed = project.path / "build/executed/interview-questions/nb.ipynb"
    executed.write_text(executed.read_text().replace("42", "41"))
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="true")
    assert code == 1 and "nb.ipynb is not the notebook this report's run executed" in out, out


def test_a_nested_include_is_part_of_the_content_hash(project):
    snippets = project.path / "snippets/interview-questions"
    (snippets / "inner.py").write_text("# --8<-- [start:x]\nx = 1\n# --8<-- [end:x]\n")
    (snippets / "n.py").write_text('--8<-- "snippets/interview-questions/inner.py:x"\nassert x == 1\n')  # includes inner.py
    code, out = publish(project, "n.md", '# N\n\n```python\n--8<-- "snippets/interview-questions/n.py"\n```\n')
    assert code == 0, out
    (snippets / "inner.py").write_text("# --8<-- [start:x]\nx = 2\n# --8<-- [end:x]\n")
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="true")
    assert code == 1 and "n.md: cpu report is stale" in out, out


def test_what_only_renders_leaves_reports_valid_and_what_runs_makes_them_stale(project):
    code, out = publish(project, "h.md", "# H\n\n```python\nassert 6 * 7 == 42\n```\n")
    assert code == 0, out
    rebuild = lambda: run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="true")  # noqa: E731
    for name in ("docs/stylesheets/site.css", "docs/javascripts/practice.js", "overrides/main.html"):  # rendering only
        path = project.path / name
        path.write_text(path.read_text() + "\n# an edit that changes only how pages look\n")
    config = project.path / "mkdocs.yml"
    config.write_text(config.read_text().replace("site_name: TensorFlow Verified", "site_name: TensorFlow Verified!"))
    code, out = rebuild()
    assert code == 0, out
    config.write_text(config.read_text().replace("dedent_subsections: true", "dedent_subsections: false"))
    code, out = rebuild()
    assert code == 1 and "h.md: cpu report is stale" in out, out  # how an include expands: it changes what runs
    config.write_text(config.read_text().replace("dedent_subsections: false", "dedent_subsections: true"))
    assert rebuild()[0] == 0
    wall = project.path / "tests/offline.sh"  # the wall around the run (the runner's own modules: test_hashing)
    wall.write_text(wall.read_text() + "\n# the run changed\n")
    code, out = rebuild()
    assert code == 1 and "h.md: cpu report is stale" in out, out


def test_the_stamp_explains_itself_and_links_the_report_it_was_made_from(project):
    code, out = publish(project, "s.md", "# S\n\n```python\nassert 6 * 7 == 42\n```\n")
    assert code == 0, out
    html = (project.path / "site/interview-questions/s/index.html").read_text()
    assert "✓ 1 example ran, assertions passed" in html, html[:2000]
    assert 'href="../../#how-to-read-a-stamp"' in html and "every assertion in them held" in html
    assert 'href="../../reports/cpu/interview-questions/s.md.json">CPU report</a>' in html
    published = json.loads((project.path / "site/reports/cpu/interview-questions/s.md.json").read_text())
    assert published["page"] == "interview-questions/s.md" and published["examples"][0]["outcome"] == "passed"


def test_the_sitemap_dates_a_page_by_its_report(project):
    code, out = publish(project, "d.md", "# D\n\n```python\nassert 1\n```\n")
    assert code == 0, out
    report = project.path / "build/report/cpu/interview-questions/d.md.json"
    data = json.loads(report.read_text())
    data["date"] = "2026-01-02"  # as if the run were older than this build
    report.write_text(json.dumps(data))
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict")  # a preview build: the gate would refuse the edit
    assert code == 0, out
    sitemap = (project.path / "site/sitemap.xml").read_text()
    entry = sitemap[sitemap.index("interview-questions/d/"):].split("</url>")[0]
    assert "<lastmod>2026-01-02</lastmod>" in entry, entry
