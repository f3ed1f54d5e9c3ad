"""MkDocs hook: stamp every content page from the verification report; refuse to publish without one.

The gate's settings are in mkdocs.yml `extra.gate`: `TFV_PUBLISH=1` (make site) turns a missing, failed or
stale report into a build error and publishes only allow-listed page files; `TFV_COMMIT=<sha>` also requires
every report to come from that commit (CI); `TFV_REQUIRE_GPU_REPORT=1` also requires a passing GPU report
for every page (the workflow's build job). hooks/census.py then checks the built HTML itself.
"""

import html
import os
import re

import verification
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

PAGE_SUFFIXES = (".md", ".py", ".ipynb", ".html", ".htm")  # files MkDocs or mkdocs-jupyter would render or copy as pages
DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)<!--\s*(?P<kind>skip|not-executed):\s*(?P<text>.*?)\s*-->[ \t]*$", re.M)


@event_priority(100)  # before hooks/notebooks.py swaps notebook sources for their executed notebooks
def on_files(files, config):
    gate, errors = verification.gate(config), []
    for file in files:
        key = file.src_uri
        if gate["publish"] and key.endswith(PAGE_SUFFIXES) and not (
                key in verification.SITE_PAGES or verification.is_content_page(key)):
            errors.append(f"docs/{key}: not a page file the site publishes (docs/<section>/<slug>.md or .py)")
        if verification.is_content_page(key):
            errors += [f"docs/{key}: {p}" for p in _problems(key, gate)]
    for key in map(verification.page_key, verification.content_pages()):
        for device in ("cpu", "gpu"):  # each page's reports are published beside it: the stamp links them
            if verification.report_path(device, key).exists():
                files.append(File.generated(config, published_report(device, key),
                                            abs_src_path=str(verification.report_path(device, key))))
    if gate["publish"] and errors:
        raise PluginError("refusing to publish unverified pages:\n  " + "\n  ".join(errors))
    return files


def published_report(device, key):
    """Where the site publishes a page's report: reports/<device>/<section>/<slug>.<md|py>.json."""
    return f"reports/{device}/{key}.json"


def _problems(key, gate, device=None):
    """What stops this page's reports from backing it (both devices when the gate wants a GPU report)."""
    try:
        cpu = verification.read_report("cpu", key)
        found = verification.problems(cpu, key, commit=gate["commit"])
        if device == "gpu" or (device is None and gate["gpu_report"]):
            gpu = verification.read_report("gpu", key)
            found += verification.problems(gpu, key, commit=gate["commit"], device="gpu", cpu=cpu)
    except verification.BadReport as error:
        return [str(error)]
    return found


def on_page_markdown(markdown, page, config, files):
    """Skip and not-executed directives are HTML comments; show the reader what the run did with each block.
    A skip label comes from the page's reports, not from the directive: a block that ran shows no label."""
    key = verification.source_key(page.file.src_uri)
    labels = iter(directive_labels(key) if verification.is_content_page(key) else [])

    def visible(match):
        label = next(labels, None) if match["kind"] == "skip" else not_executed_label(match["text"])
        if label is None:
            return match[0]
        return f'{match["indent"]}{match[0].strip()}\n{match["indent"]}<p class="tfv-not-run">{label}</p>\n'

    markdown = DIRECTIVE.sub(visible, markdown)
    if "<!-- verified -->" in markdown:  # the home page only: the summary reads every report
        markdown = markdown.replace("<!-- verified -->", _summary(verification.gate(config)))
    return markdown


def not_executed_label(text):
    """`<!-- not-executed: why -->` marks a non-Python block: its reason as written, whole."""
    reason = text.strip()
    if len(reason) > 1 and reason[0] == reason[-1] and reason[0] in "\"'":
        reason = reason[1:-1]
    return f"<strong>Not executed here:</strong> {html.escape(reason)}"


def directive_lines(text):
    """The source line of every skip directive in a page's text, in order."""
    return [text.count("\n", 0, m.start()) + 1 for m in DIRECTIVE.finditer(text) if m["kind"] == "skip"]


def directive_labels(key):
    """A label (HTML) or None for each skip directive of a page, in order, from its CPU and GPU reports."""
    try:
        cpu, gpu = verification.read_report("cpu", key), verification.read_report("gpu", key)
    except verification.BadReport:
        cpu = gpu = None
    text = (verification.DOCS / key).read_text(encoding="utf-8")
    return [label(line, cpu, gpu) for line in directive_lines(text)]


def label(line, cpu, gpu):
    """What the runs did with the block a skip directive at `line` stands above: None when it ran."""
    if cpu is None:
        return "<strong>Not run yet:</strong> this page has no verification report"
    block = next((e for e in cpu["examples"] if e["line"] > line), None)
    if block is None or block["outcome"] != "skipped":
        return None
    text = f"<strong>Skipped on the CPU run:</strong> {html.escape(block['reason'] or '')}"
    on_gpu = next((e for e in (gpu or {}).get("examples", []) if e["line"] == block["line"]), None)
    if on_gpu and on_gpu["outcome"] == "passed":
        text += f" · ran on the GPU runner ({html.escape(gpu['gpu_model'] or 'GPU')}, {gpu['date']})"
    elif on_gpu:
        again = " too" if on_gpu["outcome"] == "skipped" else ""
        text += f" · {html.escape(on_gpu['outcome'])} on the GPU runner{again}"
    return text


def _summary(gate):
    """The home page's line: how many pages and examples the last run verified (`<!-- verified -->`)."""
    pages = [verification.page_key(path) for path in verification.content_pages()]
    try:
        reports = {key: verification.read_report("cpu", key) for key in pages}
        gpu = {key: verification.read_report("gpu", key) for key in pages}
    except verification.BadReport as error:
        return f'<p class="tfv-unverified">Not verified: {html.escape(str(error))}</p>'
    good = [r for key, r in reports.items() if r and not verification.problems(r, key, commit=gate["commit"])]
    examples = [e for r in good for e in r["examples"]]
    passed = sum(e["outcome"] == "passed" and "cells" not in e for e in examples)
    cells = sum(e.get("cells", 0) for e in examples)
    skipped = sum(e["outcome"] == "skipped" for e in examples)
    dates = sorted({r["date"] for r in good})
    versions = sorted({f"TF {r['versions']['tensorflow']} · Keras {r['versions']['keras']}" for r in good})
    on_gpu = sum(r is not None for r in gpu.values())
    when = "" if not dates else dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    text = (f"<strong>{len(good)} of {len(pages)} pages verified</strong> in the last run: {passed} examples passed "
            f"and {cells} notebook cells ran; {skipped} blocks skipped, each with its reason shown on its page"
            + (f"; {on_gpu} pages also ran on the GPU runner" if on_gpu else "")
            + "".join(f" · {part}" for part in (" / ".join(versions), when) if part))
    css = "tfv-verified" if len(good) == len(pages) else "tfv-unverified"
    return f'<p class="{css} tfv-summary" role="note">{text}</p>'


def on_page_content(content, page, config, files):
    key = verification.source_key(page.file.src_uri)
    if not verification.is_content_page(key):
        return content
    gate = verification.gate(config)
    try:  # the sitemap's <lastmod>: when the page was last verified, not when the site was built
        page.update_date = verification.read_report("cpu", key)["date"]
    except (verification.BadReport, TypeError):
        pass  # no report, or a broken one: the stamp says so below, and the publish build refuses it
    lines = [_line(device, key, gate) for device in ("cpu", "gpu")]
    lines.append(_help(page, key, verified=all(x.startswith('<p class="tfv-verified">') for x in lines if x)))
    stamp = ('<div class="tfv-stamp" role="note" aria-label="Verification" data-search-exclude>'  # not in the index
             + "".join(x for x in lines if x) + "</div>")
    head, sep, rest = content.partition("</h1>")
    return head + sep + stamp + rest if sep else stamp + content


def _help(page, key, verified):
    """The stamp's last line, for a newcomer: what a verified stamp means, and the report(s) it was made from."""
    home = get_relative_url("./", page.url) + "#how-to-read-a-stamp"
    reports = [f'<a href="{get_relative_url(published_report(device, key), page.url)}">{device.upper()} report</a>'
               for device in ("cpu", "gpu") if verification.report_path(device, key).exists()]
    meaning = "The examples counted above ran, and every assertion in them held, on the versions named. " * verified
    return (f'<p class="tfv-stamp-help">{meaning}<a href="{home}">How to read a stamp</a>'
            + "".join(f" · {r} (JSON)" for r in reports) + "</p>")


def _line(device, key, gate):
    try:
        report = verification.read_report(device, key)
        cpu = verification.read_report("cpu", key) if device == "gpu" else None
    except verification.BadReport as error:
        return f'<p class="tfv-unverified">Not verified: {html.escape(str(error))}</p>'
    if report is None:
        return None if device == "gpu" else '<p class="tfv-unverified">Not verified: no test run has reported on this page.</p>'
    trouble = verification.problems(report, key, commit=gate["commit"], device=device, cpu=cpu)
    examples = report["examples"]
    passed = sum(e["outcome"] == "passed" for e in examples)
    skipped = [e for e in examples if e["outcome"] == "skipped"]
    cells = sum(e.get("cells", 0) for e in examples)
    what = (f"notebook ran, {cells} cells, assertions passed" if cells else
            f"{passed} example{'s' * (passed != 1)} ran, assertions passed")
    where = f"GPU ({report['gpu_model']})" if device == "gpu" else "CPU"
    v = report["versions"]
    parts = [what] + ([f"{len(skipped)} skipped"] if skipped else []) + [
        f"TF {v['tensorflow']}", f"Keras {v['keras']}", f"Python {v['python']}", where, report["date"],
        f"{report['duration']:.1f} s"]
    text = " · ".join(html.escape(part) for part in parts)
    run = os.environ.get("GITHUB_RUN_ID")
    if run:
        url = f"{os.environ['GITHUB_SERVER_URL']}/{os.environ['GITHUB_REPOSITORY']}/actions/runs/{run}"
        text += f' · <a href="{html.escape(url)}">workflow run</a>'
    css = "tfv-unverified" if trouble else "tfv-verified"
    text += "".join(f"<br>⚠ {html.escape(t)}" for t in trouble)
    reasons = "".join(f"<br>Skipped at line {e['line']}: {html.escape(e['reason'] or '')}" for e in skipped)
    return f'<p class="{css}">{"✓ " if not trouble else ""}{text}{reasons}</p>'
