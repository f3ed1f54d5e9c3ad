"""Section page lists.

A section index contains the marker `<!-- pages -->`, replaced by a table of the section's pages per topic,
easiest first, which docs/javascripts/sections.js lets a reader filter by words, difficulty and practised marks.
The filter form and the "Practised" column are in the HTML, so the script only fills them in and nothing moves
at load (Lighthouse counted the inserted form as a layout shift of 0.075); without scripts, overrides/main.html
hides both.
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
        rows = sorted(groups[topic])
        out += [f"\n## {topic} {{ #{re.sub(r'[^a-z0-9]+', '-', topic.lower()).strip('-')} }}\n",
                "| Page | Difficulty | In one line | Practised |", "|---|---|---|---|"]
        out += [f"| [{title}]({name}) | {level} | {summary} | |" for _, title, name, level, summary in rows]
    return '\n<div class="tfv-pages" markdown data-search-exclude>\n' + FORM + "\n".join(out) + "\n\n</div>\n"


def _buttons(label, values, kind):
    buttons = "".join(f'<button type="button" data-{kind}="{value}" aria-pressed="{str(i == 0).lower()}">{value}</button>'
                      for i, value in enumerate(values))
    return f'<span role="group" aria-label="{label}">{buttons}</span>'


FORM = ('<form class="tfv-filter" role="search" aria-label="Filter this section\'s pages">'
        '<label>Filter pages <input type="search" name="words" placeholder="e.g. retracing, SavedModel"></label>'
        + _buttons("Difficulty", ["all", *LEVELS], "level") + _buttons("Practised", ["any", "practised", "not yet"], "mark")
        + '<output aria-live="polite"></output></form>\n')
