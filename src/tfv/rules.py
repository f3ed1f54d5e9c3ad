"""The report rules: why a report cannot back a published page. The test run applies them to the reports it has
just written (a page over budget, or a GPU example skipped on a GPU runner, fails the run), the CI merge to each
shard's reports, and the publish build to every page."""

from tfv.code import file_digest
from tfv.hashing import content_hash
from tfv.layout import DOCS, ROOT
from tfv.pages import REFERENCE, executed_notebook


def parity(gpu, cpu):
    """Named results the GPU run recorded that differ from the CPU run's beyond the page's tolerances."""
    found = []
    for name, c in (cpu or {}).get("results", {}).items():
        g = gpu.get("results", {}).get(name)
        if g is None:
            found.append(f"result {name!r} was recorded on CPU but not on GPU")
        elif abs(g["value"] - c["value"]) > c["atol"] + c["rtol"] * abs(c["value"]):
            found.append(f"result {name!r}: GPU {g['value']!r} vs CPU {c['value']!r} (rtol {c['rtol']}, atol {c['atol']})")
    return found


def reference_cpu(report):
    """The report's CPU seconds on the reference machine (tfv.pages.REFERENCE), what its budget limits: scaled down
    when its run's calibration says the machine is slower, its own seconds otherwise (or with no calibration)."""
    calibration = report["calibration"]
    return report["cpu"] * min(1.0, REFERENCE / calibration) if calibration else report["cpu"]


def problems(report, key, *, commit=None, device="cpu", cpu=None) -> list[str]:
    """Why this report cannot back a published page; an empty list when it can. For a GPU report,
    `cpu` is the CPU report its recorded results must match."""
    if report is None:
        return [f"no {device} report (run `make test`)"]
    found = []
    if report["hash"] != content_hash(DOCS / key):
        found.append(f"{device} report is stale: the page, a snippet it includes, the machinery or a lock changed")
    if commit and report["commit"] != commit:
        found.append(f"{device} report is from commit {report['commit'][:12]}, not {commit[:12]}")
    failed = [e for e in report["examples"] if e["outcome"] == "failed"]
    if failed:
        found.append(f"{len(failed)} example(s) failed on {device}, first at line {failed[0]['line']}")
    unreasoned = [e for e in report["examples"] if e["outcome"] == "skipped" and not (e["reason"] or "").strip()]
    if unreasoned:
        found.append(f"{len(unreasoned)} example(s) skipped without a reason, first at line {unreasoned[0]['line']}")
    if not report["examples"]:
        found.append(f"the {device} run executed no example on this page")
    if key.endswith(".py") and device == "cpu":
        notebook = executed_notebook(key)
        if not notebook.exists():
            found.append(f"no executed notebook {notebook.relative_to(ROOT)}")
        elif report.get("notebook") != file_digest(notebook):
            found.append(f"{notebook.relative_to(ROOT)} is not the notebook this report's run executed")
    allowed = report["budget"]  # the front matter's budget when the report was written (a later change makes it stale)
    if (cost := reference_cpu(report)) > allowed:
        calibration = report["calibration"]
        scale = (f"this machine's calibration {calibration:.2f} CPU s, the reference's {REFERENCE:.2f}" if calibration
                 else "no calibration measured: this machine's own seconds")
        found.append(f"{device} examples used {report['cpu']:.0f} CPU s ({report['duration']:.0f} s wall), "
                     f"{cost:.0f} on the reference machine ({scale}), over the page's budget of {allowed:.0f} CPU s")
    if device == "gpu":
        found += parity(report, cpu)
        gpu_skips = [e for e in report["examples"] if e["outcome"] == "skipped" and "GPU" in (e["reason"] or "")]
        if gpu_skips:
            found.append(f"{len(gpu_skips)} GPU example(s) skipped on the GPU runner")
    return found
