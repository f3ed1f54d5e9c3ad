"""MkDocs hook: stamp every content page from the verification report; refuse to publish without one.

The gate's settings are in mkdocs.yml `extra.gate`: `TFV_PUBLISH=1` (make site) turns a missing, failed or
stale report into a build error and publishes only allow-listed page files; `TFV_COMMIT=<sha>` also requires
every report to come from that commit (CI); `TFV_REQUIRE_GPU_REPORT=1` also requires a passing GPU report
for every page (the workflow's build job). hooks/census.py then checks the built HTML itself.
"""

import html
import os
import re
from pathlib import Path

import verification
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

PAGE_SUFFIXES = (".md", ".py", ".ipynb", ".html", ".htm")  # files MkDocs or mkdocs-jupyter would render or copy as pages
DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)<!--\s*(?P<kind>skip|not-executed):\s*(?P<text>.*?)\s*-->[ \t]*$", re.M)


def is_content(src_uri):
    """A page with examples: docs/<section>/<slug>.md or a notebook docs/<section>/<slug>.py."""
    path = Path(src_uri)
    return len(path.parts) == 2 and path.suffix in (".md", ".py") and path.name != "index.md"


@event_priority(100)  # before mkdocs-jupyter wraps the notebook files
def on_files(files, config):
    gate, errors = verification.gate(config), []
    for file in list(files):
        key = file.src_uri
        if gate["publish"] and key.endswith(PAGE_SUFFIXES) and not (
                key in verification.SITE_PAGES or verification.PAGE_FILE.fullmatch(key)):
            errors.append(f"docs/{key}: not a page file the site publishes (docs/<section>/<slug>.md or .py)")
        if not is_content(key):
            continue
        if key.endswith(".py"):  # a notebook page: render the notebook the test run executed
            files.remove(file)
            files.append(_notebook(key, config, preview=not gate["publish"]))
        errors += [f"docs/{key}: {p}" for p in _problems(key, gate)]
    if gate["publish"] and errors:
        raise PluginError("refusing to publish unverified pages:\n  " + "\n  ".join(errors))
    return files


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


def _notebook(key, config, preview):
    """The executed notebook from build/executed/, or (preview only) the source without outputs."""
    name = Path(key).with_suffix(".ipynb").as_posix()
    folder = verification.EXECUTED
    if not (folder / name).exists() and preview:
        import jupytext

        folder = verification.ROOT / "build" / "preview"
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        jupytext.write(jupytext.read(verification.DOCS / key), folder / name)
    return File(name, src_dir=str(folder), dest_dir=config.site_dir, use_directory_urls=config.use_directory_urls)


def page_key(page):
    """The page's source under docs/ (a notebook page's source is its jupytext .py file)."""
    uri = page.file.src_uri
    return uri.removesuffix(".ipynb") + ".py" if uri.endswith(".ipynb") else uri


def on_page_context(context, page, config, nav):
    if page.file.src_uri.endswith(".ipynb") and page.edit_url:  # edit the .py source, not the executed copy
        page.edit_url = page.edit_url.removesuffix(".ipynb") + ".py"
    return context


def on_page_markdown(markdown, page, config, files):
    """Skip and not-executed directives are HTML comments; show their reasons to the reader."""

    def visible(match):
        kind, text = match["kind"], re.sub(r"^(next|start|end)\s*", "", match["text"])
        reason = re.search(r"""reason\s*=\s*["'](.*?)["']|^["'](.*)["']$""", text)
        reason = next((g for g in reason.groups() if g), text) if reason else text
        label = "Skipped on CPU" if "HAS_GPU" in text else ("Skipped" if kind == "skip" else "Not executed here")
        return (f'{match["indent"]}{match[0].strip()}\n{match["indent"]}<p class="tfv-not-run">'
                f'<strong>{label}:</strong> {html.escape(reason)}</p>\n')

    return DIRECTIVE.sub(visible, markdown)


NOTEBOOK_DIRECTIVE = re.compile(r"<!--\s*not-executed:\s*(?P<text>.*?)\s*-->")


def on_page_content(content, page, config, files):
    key = page_key(page)
    if page.file.src_uri.endswith(".ipynb"):  # a notebook's Markdown cells: the same visible label
        content = NOTEBOOK_DIRECTIVE.sub(lambda m: f'{m[0]}\n<p class="tfv-not-run"><strong>Not executed here:</strong> '
                                         f'{html.escape(m["text"])}</p>', content)
    if not is_content(key):
        return content
    gate = verification.gate(config)
    lines = [_line(device, key, gate) for device in ("cpu", "gpu")]
    stamp = '<div class="tfv-stamp" role="note" aria-label="Verification">' + "".join(x for x in lines if x) + "</div>"
    head, sep, rest = content.partition("</h1>")
    return head + sep + stamp + rest if sep else stamp + content


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
    what = f"notebook ran, {cells} cells" if cells else f"{passed} example{'s' * (passed != 1)} passed"
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
