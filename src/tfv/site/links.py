"""A link worth pasting for every answer. Each H2 and each follow-up gets a visible copy-link
button (docs/javascripts/links.js copies the canonical URL with the fragment), and each follow-up a stable id,
`fu-` and the first words of its question, which tests/test_links.py keeps in the registry like the H2 ids."""

import html as entities
import re

H2 = re.compile(r'(<h2[^>]*\sid="([^"]+)"[^>]*>)(.*?)(</h2>)', re.S)
FOLLOW_UP = re.compile(r'<details class="question"( open(?:="[^"]*")?)?>(\s*)<summary>(Follow-up.*?)</summary>', re.S)
TAG = re.compile(r"<[^>]+>")
WORDS = 8  # enough to tell a page's follow-ups apart, short enough to paste


def text(fragment):
    return entities.unescape(TAG.sub("", fragment)).replace("\u00b6", "").strip()  # without the permalink's ¶


def slug(summary, taken):
    words = re.findall(r"[a-z0-9]+", text(summary).lower().removeprefix("follow-up"))[:WORDS]
    base = "fu-" + "-".join(words or ["question"])
    anchor, n = base, 2
    while anchor in taken:
        anchor, n = f"{base}-{n}", n + 1
    taken.add(anchor)
    return anchor


def button(anchor, name):
    label = entities.escape(f"Copy link to: {name}", quote=True)
    return f'<button type="button" class="tfv-link" data-anchor="{anchor}" aria-label="{label}"></button>'


def on_page_content(html, page, config, files):
    taken = set(re.findall(r'\sid="([^"]+)"', html))

    def follow_up(match):
        anchor = slug(match[3], taken)
        # beside the summary, not in it: a button inside a <summary> is nested interactive content (axe)
        return (f'<div class="tfv-fu-link">{button(anchor, text(match[3]))}</div>'
                f'<details class="question" id="{anchor}"{match[1] or ""}>{match[2]}<summary>{match[3]}</summary>')

    html = H2.sub(lambda m: m[1] + m[3] + button(m[2], text(m[3])) + m[4], html)
    return FOLLOW_UP.sub(follow_up, html)
