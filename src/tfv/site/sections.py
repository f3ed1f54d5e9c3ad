"""Section page lists.

A section index contains the marker `<!-- pages -->`, replaced by a table of the section's pages per topic,
easiest first, which docs/javascripts/sections.js lets a reader filter by words and difficulty.
"""

import re
from pathlib import Path

from tfv.pages import content_pages, front_matter, notebook_name

LEVELS = ["easy", "medium", "hard"]


def on_page_markdown(markdown, page, config, files):
    if "<!-- pages -->" in markdown:
        markdown = markdown.replace("<!-- pages -->", _table(Path(page.file.abs_src_path).parent))
    return markdown


def _table(section):
    groups = {}
    for path in (p for p in content_pages() if p.parent == section):
        meta, title = front_matter(path)
        tags = meta.get("tags", [])
        level = next((t for t in tags if t in LEVELS), "?")
        topic = next((t for t in tags if t not in LEVELS), "general")
        title = title.replace("|", "\\|")
        link = notebook_name(path.name) if path.suffix == ".py" else path.name
        groups.setdefault(topic, []).append((LEVELS.index(level) if level in LEVELS else 9, title, link,
                                             level, meta.get("description", "")))
    out = []
    for topic in sorted(groups):
        out += [f"\n## {topic} {{ #{re.sub(r'[^a-z0-9]+', '-', topic.lower()).strip('-')} }}\n",
                "| Page | Difficulty | In one line |", "|---|---|---|"]
        out += [f"| [{title}]({name}) | {level} | {summary} |" for _, title, name, level, summary in sorted(groups[topic])]
    # docs/javascripts/sections.js adds a filter (words, difficulty) above the tables; without it, all rows show
    return '\n<div class="tfv-pages" markdown data-search-exclude>\n' + "\n".join(out) + "\n\n</div>\n"
