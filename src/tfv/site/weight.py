"""Lighter pages: plain token spans dropped from code blocks, a notebook page's CSS cut to the rules that can match
it and nbconvert's inert MathJax and Mermaid scripts dropped, the practice-mode button in the HTML (hidden until
docs/javascripts/practice.js shows it), the body attribute that spares one style recalculation at load, and a site
navigation that lists the sections and the pages of the reader's own section only. Why, with the measurements:
bench/findings.md, "Page weight"."""

import re

import tinycss2
from bs4 import BeautifulSoup

PLAIN_SPANS = re.compile(r'<span class="[nwop]">([^<]*)</span>')
STYLE = re.compile(r"(<style[^>]*>)(.*?)(</style>)", re.S)
NOT_REQUIRED = re.compile(r""":not\([^)]*\)|"[^"]*"|'[^']*'""")
DEAD = re.compile(r"\s(:root|html|body)\b")  # the root element is never inside another: `.jupyter-wrapper :root`
# Two scripts of nbconvert's template that do nothing on these pages: MathJax with no URL to load it from (an
# empty `src` and a configuration for a MathJax that never comes), and the Mermaid loader, which returns when the
# page has no diagram. 12 to 13 kB of each notebook page.
MATHJAX = re.compile(r'<!-- Load mathjax -->\s*<script src="">\s*</script>.*?<!-- End of mathjax configuration -->', re.S)
MERMAID = re.compile(r'<script type="module">\s*document\.addEventListener\("DOMContentLoaded", async \(\) => \{\s*'
                     r'const diagrams = document\.querySelectorAll\("\.jp-Mermaid > pre\.mermaid"\);.*?</script>', re.S)
PRACTICE = {  # the section that stays visible: the toggle goes above it (docs/javascripts/practice.js)
    "quick-answer": ("Practice mode: hide all but the quick answer", "Practice mode is on: show everything"),
    "symptom": ("Diagnosis drill: hide all but the symptom", "Diagnosis drill is on: show everything"),
}


def practice_button(keep):
    off, on = PRACTICE[keep]
    return (f'<button type="button" class="md-button tfv-practice" data-keep="{keep}" data-off="{off}" '
            f'data-on="{on}" hidden>{off}</button>')


def on_page_content(html, page, config, files):
    if not page.file.src_uri.endswith(".ipynb"):  # a notebook keeps JupyterLab's own highlighting
        html = PLAIN_SPANS.sub(r"\1", html)
    for keep in PRACTICE:  # the toggle goes above the first section it keeps (attr_list may put the id last)
        heading = re.search(f'<h2[^>]*\\sid="{keep}"', html)
        if heading:
            return html[:heading.start()] + practice_button(keep) + html[heading.start():]
    return html


def on_post_page(output, page, config):
    output = output.replace("<body ", "<body data-md-color-switching ", 1)
    output = own_section_nav(output)
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    output = MATHJAX.sub("", output)
    if 'class="jp-Mermaid' not in output:
        output = MERMAID.sub("", output)
    used = {name for names in re.findall(r'class="([^"]*)"', output) for name in names.split()}
    output = STYLE.sub(lambda m: m[1] + _used_rules(m[2], used) + m[3], output)
    read = _read_variables([m[2] for m in STYLE.finditer(output)] + re.findall(r'style="([^"]*)"', output))
    return STYLE.sub(lambda m: m[1] + _without_unread_variables(m[2], read) + m[3], output)


def _used_rules(css, used):
    kept = []
    for rule in tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True):
        if rule.type == "qualified-rule":
            selectors = tinycss2.serialize(rule.prelude).split(",")
            if any(_classes(selector) <= used and not DEAD.search(selector) for selector in selectors):
                kept.append(rule.serialize())
        elif rule.type == "at-rule" and rule.lower_at_keyword == "media" and rule.content is not None:
            inner = _used_rules(tinycss2.serialize(rule.content), used)
            if inner:
                kept.append(f"@media {tinycss2.serialize(rule.prelude).strip()}{{{inner}}}")
        elif rule.type == "at-rule":
            kept.append(rule.serialize())
    return "\n".join(kept)


def _classes(selector):
    """The classes an element must have to match; a class inside :not(...) or a quoted string is not one."""
    return set(re.findall(r"\.(-?[_a-zA-Z][\w-]*)", NOT_REQUIRED.sub("", selector)))


def own_section_nav(html):
    """The primary navigation with every section but the page's own reduced to a link to its index page (the index
    lists and filters its pages: sections.py), and without the whitespace between its tags. Every page carried
    every page's link: at 165 pages, half of a question page's HTML."""
    start = html.find('<nav class="md-nav md-nav--primary"')
    if start < 0:
        return html
    depth = 0
    for tag in re.finditer(r"<nav\b|</nav>", html[start:]):
        depth += 1 if tag[0] == "<nav" else -1
        if depth == 0:
            end = start + tag.end()
            break
    soup = BeautifulSoup(html[start:end], "html.parser")
    for item in soup.select("nav.md-nav--primary > ul > li.md-nav__item--section:not(.md-nav__item--active)"):
        index = item.select_one(":scope > .md-nav__container > a[href]")
        if index is None:  # a section without an index page keeps its list: there is nowhere else to find its pages
            continue
        link = soup.new_tag("a", attrs={"href": index["href"], "class": "md-nav__link"})
        link.append(index.select_one(".md-ellipsis"))
        item.clear()
        item["class"] = ["md-nav__item"]
        item.append(link)
    nav = re.sub(r"\s+", " ", re.sub(r">\s+<", "><", str(soup)))  # a navigation has no preformatted text
    return html[:start] + nav + html[end:]


VAR = re.compile(r"var\(\s*(--[\w-]+)")


def _declarations(css):
    """(custom property or None, its value's text) for every declaration in the rules of css, at any depth."""
    for rule in tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True):
        if rule.content is None:
            continue
        if rule.type == "at-rule":
            yield from _declarations(tinycss2.serialize(rule.content))
            continue
        for item in tinycss2.parse_blocks_contents(rule.content, skip_comments=True, skip_whitespace=True):
            if item.type == "declaration":
                yield (item.name if item.name.startswith("--") else None), tinycss2.serialize(item.value)


def _read_variables(sheets):
    """The custom properties the page reads: in a property's value, or in a custom property that is read itself."""
    values, read = {}, set()
    for css in sheets:
        for name, value in _declarations(css) if "{" in css else [(None, css)]:  # a style attribute has no rules
            if name:
                values.setdefault(name, []).append(value)
            else:
                read |= set(VAR.findall(value))
    todo = list(read)
    while todo:
        for value in values.get(todo.pop(), []):
            new = set(VAR.findall(value)) - read
            read |= new
            todo += new
    return read


def _without_unread_variables(css, read):
    """css without its declarations of custom properties nothing reads: JupyterLab's theme defines some 450 on
    every notebook page, for its whole interface, and a notebook's cells read a tenth of them."""
    kept = []
    for rule in tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True):
        if rule.type == "at-rule" and rule.content is not None and rule.lower_at_keyword == "media":
            inner = _without_unread_variables(tinycss2.serialize(rule.content), read)
            if inner:
                kept.append(f"@media {tinycss2.serialize(rule.prelude).strip()}{{{inner}}}")
        elif rule.type == "qualified-rule":
            items = [item for item in tinycss2.parse_blocks_contents(rule.content, skip_comments=True,
                                                                      skip_whitespace=True)
                     if item.type == "declaration" and (not item.name.startswith("--") or item.name in read)]
            if items:
                kept.append(f"{tinycss2.serialize(rule.prelude).strip()}{{{';'.join(i.serialize() for i in items)}}}")
        else:
            kept.append(rule.serialize())
    return "\n".join(kept)

