"""What the reader sees of the runs: a stamp under every content page's title (from its reports), a visible label
under each skip or not-executed directive (from what the run did, not from the directive's wording), and the
home page's summary of every report (`<!-- verified -->`)."""

import html
import os

from mkdocs.utils import get_relative_url

from tfv.directives import DIRECTIVE, not_executed_label, skip_lines, visible
from tfv.layout import DOCS
from tfv.pages import content_pages, is_content_page, page_key, source_key
from tfv.report import BadReport, read_report, report_path
from tfv.rules import problems
from tfv.site.config import settings
from tfv.site.gate import published_report


def on_page_markdown(markdown, page, config, files):
    """Skip and not-executed directives are HTML comments; show the reader what the run did with each block.
    A skip label comes from the page's reports, not from the directive: a block that ran shows no label."""
    key = source_key(page.file.src_uri)
    labels = iter(directive_labels(key) if is_content_page(key) else [])

    def labelled(match):
        label = next(labels, None) if match["kind"] == "skip" else not_executed_label(match["text"])
        if label is None:
            return match[0]
        return f'{match["indent"]}{match[0].strip()}\n{visible(label, match["indent"])}\n'

    markdown = DIRECTIVE.sub(labelled, markdown)
    if "<!-- verified -->" in markdown:  # the home page only: the summary reads every report
        markdown = markdown.replace("<!-- verified -->", _summary(settings(config)))
    return markdown


def directive_labels(key):
    """A label (HTML) or None for each skip directive of a page, in order, from its CPU and GPU reports."""
    try:
        cpu, gpu = read_report("cpu", key), read_report("gpu", key)
    except BadReport:
        cpu = gpu = None
    text = (DOCS / key).read_text(encoding="utf-8")
    return [label(line, cpu, gpu) for line in skip_lines(text)]


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
    pages = [page_key(path) for path in content_pages()]
    try:
        reports = {key: read_report("cpu", key) for key in pages}
        gpu = {key: read_report("gpu", key) for key in pages}
    except BadReport as error:
        return f'<p class="tfv-unverified">Not verified: {html.escape(str(error))}</p>'
    good = [r for key, r in reports.items() if r and not problems(r, key, commit=gate["commit"])]
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
    key = source_key(page.file.src_uri)
    if not is_content_page(key):
        return content
    gate = settings(config)
    try:  # the sitemap's <lastmod>: when the page was last verified, not when the site was built
        page.update_date = read_report("cpu", key)["date"]
    except (BadReport, TypeError):
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
               for device in ("cpu", "gpu") if report_path(device, key).exists()]
    meaning = "The examples counted above ran, and every assertion in them held, on the versions named. " * verified
    return (f'<p class="tfv-stamp-help">{meaning}<a href="{home}">How to read a stamp</a>'
            + "".join(f" · {r} (JSON)" for r in reports) + "</p>")


def _line(device, key, gate):
    try:
        report = read_report(device, key)
        cpu = read_report("cpu", key) if device == "gpu" else None
    except BadReport as error:
        return f'<p class="tfv-unverified">Not verified: {html.escape(str(error))}</p>'
    if report is None:
        return None if device == "gpu" else '<p class="tfv-unverified">Not verified: no test run has reported on this page.</p>'
    trouble = problems(report, key, commit=gate["commit"], device=device, cpu=cpu)
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
