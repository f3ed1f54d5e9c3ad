"""A titled code block that includes a snippet links its title to the snippet's source lines, at the commit the
page's report ran (or main before any run): the reader sees where the code lives and reads it whole."""

import html
import re
from pathlib import Path

from tfv.includes import LINE, offset
from tfv.layout import ROOT
from tfv.pages import is_content_page, source_key
from tfv.report import BadReport, read_report

FENCE = re.compile(r'^(?P<indent>[ \t]*)```[^\n]*?title="(?P<title>[^"]+)"[^\n]*\n(?P<body>.*?)^(?P=indent)```', re.M | re.S)
TITLE = re.compile(r'<span class="filename">(?P<title>[^<]+)</span>')


def lines(spec):
    """(file, first line, last line) of what a `--8<--` spec includes."""
    name, _, part = spec.partition(":")
    text = (ROOT / name).read_text(encoding="utf-8").splitlines()
    first = offset(ROOT / name, spec) + 1
    if part.replace(":", "").isdigit():
        last = int(spec.split(":")[2]) if spec.count(":") == 2 else first
    elif part:
        end = re.compile(rf"--8<--\s*\[end:{re.escape(part)}\]")
        last = next(n for n, line in enumerate(text, 1) if n >= first and end.search(line)) - 1
    else:
        last = len(text)
    return name, first, last


def sources(markdown):
    """(title, spec) of every titled fence, in page order; spec is None unless the body is one include line (two
    blocks may share a title, so each title on the page pairs with its own fence)."""
    found = []
    for fence in FENCE.finditer(markdown):
        body = [line for line in fence["body"].splitlines() if line.strip()]
        match = LINE.match(body[0]) if len(body) == 1 else None
        found.append((html.escape(fence["title"], quote=False), match["spec"] if match else None))
    return found


def on_page_content(content, page, config, files):
    key = source_key(page.file.src_uri)
    if not is_content_page(key) or key.endswith(".py") or not (config.repo_url or "").startswith("https://github.com/"):
        return content
    try:
        report = read_report("cpu", key)
    except BadReport:
        report = None
    commit = report["commit"] if report and report["commit"] != "unknown" else "main"
    wanted = iter(sources(Path(page.file.abs_src_path).read_text(encoding="utf-8")))
    pending = next(wanted, None)

    def link(match):
        nonlocal pending
        if pending is None or match["title"] != pending[0]:
            return match[0]
        spec = pending[1]
        pending = next(wanted, None)
        if spec is None:
            return match[0]
        name, first, last = lines(spec)
        url = f"{config.repo_url.rstrip('/')}/blob/{commit}/{name}#L{first}-L{last}"
        return (f'<span class="filename"><a href="{html.escape(url)}" title="{html.escape(name)}, lines {first} to '
                f'{last}">{match["title"]}</a></span>')

    return TITLE.sub(link, content)
