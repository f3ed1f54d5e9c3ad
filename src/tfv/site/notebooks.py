"""Everything the build does for notebook pages.

A notebook page is a jupytext percent file, docs/<section>/<slug>.py. The site renders the notebook the test
run executed (build/executed/<section>/<slug>.ipynb, whose digest is in the page's report), so a reader sees
the outputs that gated the publish; the preview, with no run yet, renders the source without outputs.
The page's header holds the same `description:` and `tags:` as a Markdown page's front matter; its H2s are
written `<h2 id="...">`, which mkdocs-jupyter leaves out of the table of contents and without a permalink.
The file name mapping (.py <-> .ipynb) is notebook_name / source_key.
"""

import base64
import copy
import io
import re
from pathlib import Path

from bs4 import BeautifulSoup
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File
from mkdocs.structure.toc import get_toc

from tfv.directives import NOT_EXECUTED, not_executed_label, visible
from tfv.layout import DOCS, EXECUTED, PREVIEW
from tfv.pages import front_matter, is_content_page, notebook_name, read_notebook, source_key
from tfv.site.config import settings

ALT = re.compile(r"^[ \t]*#[ \t]*alt:[ \t]*(?P<text>\S.*?)[ \t]*$", re.M)


def describe_charts(soup):
    """Each image a code cell outputs takes its alt text from the cell's `# alt: ...` line (nbconvert's own is
    "No description has been provided for this image"). Returns the first line of each cell drawing an image
    without one."""
    missing = []
    for cell in soup.select(".jp-CodeCell"):
        images = cell.select(".jp-OutputArea img")
        if not images:
            continue
        source = cell.select_one(".jp-InputArea").get_text() if cell.select_one(".jp-InputArea") else ""
        match = ALT.search(source)
        for image in images:
            if match:
                image["alt"] = match["text"]
        if not match:
            missing.append(source.strip().splitlines()[0][:60] if source.strip() else "an empty cell")
    return missing


def chart_files(soup, page, config):
    """Each chart a cell outputs becomes a file beside the page, sized and loaded lazily: nbconvert inlines it as
    base64, which the browser must read before it can render anything (a third of a notebook page's HTML)."""
    from PIL import Image

    folder = Path(config.site_dir) / Path(page.file.dest_uri).parent
    for number, image in enumerate(soup.select('.jp-OutputArea img[src^="data:image/png;base64,"]'), 1):
        data = base64.b64decode(image["src"].split(",", 1)[1])
        name = f"chart-{number}.png"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
        width, height = Image.open(io.BytesIO(data)).size
        image.attrs.update(src=name, width=str(width), height=str(height), loading="lazy", decoding="async")


def is_notebook(page):
    return page.file.src_uri.endswith(".ipynb")


@event_priority(90)  # after the gate has seen the source files (tfv.site.gate), before mkdocs-jupyter
def on_files(files, config):
    preview = not settings(config)["publish"]
    for file in list(files):
        if file.src_uri.endswith(".py") and is_content_page(file.src_uri):
            files.remove(file)
            files.append(_rendered(file.src_uri, config, preview))
    return files


def _rendered(key, config, preview):
    """The executed notebook from build/executed/, or (preview only, before any run) the source without outputs."""
    name, folder = notebook_name(key), EXECUTED
    if preview and not (folder / name).exists():
        import nbformat

        folder = PREVIEW
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(read_notebook(DOCS / key), folder / name)
    return File(name, src_dir=str(folder), dest_dir=config.site_dir, use_directory_urls=config.use_directory_urls)


@event_priority(100)  # before the tags plugin reads page.meta
def on_page_markdown(markdown, page, config, files):
    if is_notebook(page):
        page.meta.update(front_matter(DOCS / source_key(page.file.src_uri))[0])
    return markdown


def on_page_context(context, page, config, nav):
    if is_notebook(page) and page.edit_url:  # edit the .py source, not the executed copy
        page.edit_url = source_key(page.edit_url)
    return context


def on_page_content(content, page, config, files):
    """H2s: a table of contents and permalinks, as on a Markdown page; each H2 lifted out of its Markdown cell
    to the level of the cells, so that search files the cells after it under that section (Material's search
    ends a section where the element holding its heading ends). Prompts and copy buttons stay out of search."""
    if not is_notebook(page):
        return content
    soup = BeautifulSoup(content, "html.parser")
    toc = []
    for h2 in soup.select(".jp-RenderedMarkdown > h2[id]"):
        toc.append({"level": 2, "id": h2["id"], "name": h2.get_text().strip(), "children": []})
        link = soup.new_tag("a", attrs={"class": "headerlink", "href": f"#{h2['id']}", "title": "Permanent link"})
        link.string = "\u00b6"
        h2.append(link)
    for h2 in reversed(soup.select(".jp-RenderedMarkdown > h2[id]")):  # last first: each split leaves the rest
        cell = h2.find_parent(class_="jp-Cell")
        rest = copy.copy(cell)  # the cell's frame, holding what followed the heading, under an id of its own
        if rest.get("id"):
            rest["id"] = f"{rest['id']}-{h2['id']}"
        rest.select_one(".jp-RenderedMarkdown").clear()
        rest.select_one(".jp-RenderedMarkdown").extend([node.extract() for node in list(h2.next_siblings)])
        cell.insert_after(h2.extract())
        h2.insert_after(rest)
        for part in (cell, rest):
            if all(isinstance(node, str) and not node.strip() for node in part.select_one(".jp-RenderedMarkdown")):
                part.decompose()  # nothing left but white space
    for noise in soup.select(".jp-InputPrompt, .jp-OutputPrompt, .zeroclipboard-container"):
        noise["data-search-exclude"] = ""
    missing = describe_charts(soup)
    if missing and settings(config)["publish"]:
        source = source_key(page.file.src_uri)
        lines = (DOCS / source).read_text(encoding="utf-8").splitlines()
        where = [f"docs/{source}:{next((n for n, line in enumerate(lines, 1) if line.strip() == first), '?')}"
                 for first in missing]  # the source line of each such cell's first line
        raise PluginError(f"a chart without alt text at {', '.join(where)}: add a line `# alt: what the chart "
                          "shows` to the cell that draws it")
    chart_files(soup, page, config)
    page.toc = get_toc(toc)
    # a Markdown cell's not-executed marker gets the same visible label as on a Markdown page (tfv.site.stamp)
    return NOT_EXECUTED.sub(lambda m: f'{m[0]}\n{visible(not_executed_label(m["text"]))}', str(soup))
