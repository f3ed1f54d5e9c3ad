"""The publish gate, at the start of the build: only allow-listed page files, and a fresh, passing report for every
content page (and a passing GPU report when the gate wants one); each page's reports are published beside it.

`TFV_PUBLISH=true` (make site) turns a missing, failed or stale report into a build error; `TFV_COMMIT=<sha>`
also requires every report to come from that commit (CI); `TFV_REQUIRE_GPU_REPORT=true` also requires a passing
GPU report for every page (the workflow's build job). tfv.site.census then checks the built HTML itself."""

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

from tfv.pages import SITE_PAGES, content_pages, is_content_page, page_key
from tfv.report import BadReport, read_report, report_path
from tfv.rules import problems
from tfv.site.config import settings

PAGE_SUFFIXES = (".md", ".py", ".ipynb", ".html", ".htm")  # files MkDocs or mkdocs-jupyter would render or copy as pages


@event_priority(100)  # before tfv.site.notebooks swaps notebook sources for their executed notebooks
def on_files(files, config):
    gate, errors = settings(config), []
    for file in files:
        key = file.src_uri
        if gate["publish"] and key.endswith(PAGE_SUFFIXES) and not (
                key in SITE_PAGES or is_content_page(key)):
            errors.append(f"docs/{key}: not a page file the site publishes (docs/<section>/<slug>.md or .py)")
        if is_content_page(key):
            errors += [f"docs/{key}: {p}" for p in _problems(key, gate)]
    for key in map(page_key, content_pages()):
        for device in ("cpu", "gpu"):  # each page's reports are published beside it: the stamp links them
            if report_path(device, key).exists():
                files.append(File.generated(config, published_report(device, key),
                                            abs_src_path=str(report_path(device, key))))
    if gate["publish"] and errors:
        raise PluginError("refusing to publish unverified pages:\n  " + "\n  ".join(errors))
    return files


def published_report(device, key):
    """Where the site publishes a page's report: reports/<device>/<section>/<slug>.<md|py>.json."""
    return f"reports/{device}/{key}.json"


def _problems(key, gate, device=None):
    """What stops this page's reports from backing it (both devices when the gate wants a GPU report)."""
    try:
        cpu = read_report("cpu", key)
        found = problems(cpu, key, commit=gate["commit"])
        if device == "gpu" or (device is None and gate["gpu_report"]):
            gpu = read_report("gpu", key)
            found += problems(gpu, key, commit=gate["commit"], device="gpu", cpu=cpu)
    except BadReport as error:
        return [str(error)]
    return found
