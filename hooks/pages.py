"""MkDocs hook: front matter and H2 links for notebook pages, checklists, section page lists.

A notebook page (docs/<section>/<slug>.py) starts with a jupytext YAML header holding the same
`description:` and `tags:` a Markdown page has in its front matter. Its H2s are written
`<h2 id="...">`, which mkdocs-jupyter leaves out of the table of contents and without a permalink;
this hook adds both, as a Markdown page has them. Checklists look the same on both kinds of page.
A section index contains the marker `<!-- pages -->`, replaced by a table of the section's pages
grouped by topic.
"""

import re
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.toc import get_toc
from verification import front_matter

DOCS = Path(__file__).resolve().parent.parent / "docs"
LEVELS = ["easy", "medium", "hard"]
H2 = re.compile(r'<h2 id="([^"]+)">(.*?)</h2>')
# A checklist item, `- [ ] ...`: Markdown leaves "[ ]" as text, a notebook renders a disabled checkbox with no
# label (axe: critical). Both become one list style with a box drawn by CSS (site.css).
CHECK = re.compile(r'<li>\[ \] |<li class="task-list-item"><input class="task-list-item-checkbox" disabled="" type="checkbox"/>')


@event_priority(100)  # before the tags plugin reads page.meta
def on_page_markdown(markdown, page, config, files):
    uri = page.file.src_uri
    if uri.endswith(".ipynb"):
        page.meta.update(front_matter(DOCS / (uri.removesuffix(".ipynb") + ".py"))[0])
    if "<!-- pages -->" in markdown:
        markdown = markdown.replace("<!-- pages -->", _table(Path(page.file.abs_src_path).parent))
    return markdown


def on_page_content(html, page, config, files):
    html = CHECK.sub('<li class="tfv-check">', html)
    if not page.file.src_uri.endswith(".ipynb"):
        return html
    headings = H2.findall(html)
    page.toc = get_toc([{"level": 2, "id": id, "name": re.sub(r"<[^>]+>", "", name), "children": []}
                        for id, name in headings])
    return H2.sub(r'<h2 id="\1">\2<a class="headerlink" href="#\1" title="Permanent link">&para;</a></h2>', html)


def _table(section):
    groups = {}
    for path in sorted(section.glob("*.md")) + sorted(section.glob("*.py")):
        if path.name == "index.md":
            continue
        meta, title = front_matter(path)
        tags = meta.get("tags", [])
        level = next((t for t in tags if t in LEVELS), "?")
        topic = next((t for t in tags if t not in LEVELS), "general")
        title = title.replace("|", "\\|")
        link = path.with_suffix(".ipynb").name if path.suffix == ".py" else path.name  # notebooks render from .ipynb
        groups.setdefault(topic, []).append((LEVELS.index(level) if level in LEVELS else 9, title, link,
                                             level, meta.get("description", "")))
    out = []
    for topic in sorted(groups):
        out += [f"\n### {topic} {{ #{re.sub(r'[^a-z0-9]+', '-', topic.lower()).strip('-')} }}\n",
                "| Page | Difficulty | In one line |", "|---|---|---|"]
        out += [f"| [{title}]({name}) | {level} | {summary} |" for _, title, name, level, summary in sorted(groups[topic])]
    return "\n".join(out) + "\n"
