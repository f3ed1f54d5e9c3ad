"""MkDocs hook: lighter pages, measured with `make lighthouse` (bench/lighthouse.py).

Every style recalculation on a page costs time in proportion to its elements, and Material recomputes
the whole page several times at load (palette, `no-js` -> `js`, code-block buttons). So:

- Code blocks of Markdown pages keep colour for what carries meaning (keywords, strings, numbers,
  comments, builtins, function and class names) and drop the token spans for plain names (`n`:
  Material colours them with the code's own colour anyway), whitespace (`w`), operators (`o`) and
  punctuation (`p`), which Material greys slightly; here they take the code's colour. That removes
  two thirds of the spans of a code-heavy page: on /interview-questions/trace-lab/ 1,371 -> 455;
  Lighthouse total blocking time ~420 ms -> 180-300 ms, performance 0.89-0.90 -> 0.93-0.97 over a
  dozen runs.
- A notebook page keeps only the notebook CSS rules that can match it: mkdocs-jupyter inlines all of
  JupyterLab's stylesheet (575 kB, 3,188 rules) into every notebook page, and nearly all of it styles
  JupyterLab's own interface. A rule is kept when some selector in it names only classes the page uses
  and can match at all (mkdocs-jupyter prefixes every rule with `.jupyter-wrapper`, so its 87 kB of
  `.jupyter-wrapper :root` and `.jupyter-wrapper body` rules never apply). 575 kB -> 36 kB.
- The practice-mode button (docs/javascripts/practice.js) is in the HTML, hidden until the script
  shows it, so the script does not insert anything into the page at load.
- Code blocks mount lazily (`content.lazy` in mkdocs.yml): Material inserts each block's copy button
  and measures it when the block comes into view, not all at load, where every block cost a style
  recalculation and a layout. trace-lab: performance 0.93 -> 0.98 (median of 5). The keyboard part
  of the mount, focus for a block that scrolls sideways, is done for all blocks at load in one pass
  (docs/javascripts/code-focus.js); without it axe finds unreachable scrollable blocks further down.
- Every page's body starts with `data-md-color-switching`, the attribute Material's palette sets when
  it first applies the colours and removes one frame later (its CSS turns transitions off under it).
  Set by the bundle, it made the whole page's style recalculate once more at load; already there,
  the bundle's set changes nothing. Notebook page, 4x CPU throttling, style recalculation at load:
  601 -> 532 ms (mean of 4 traces each). Lighthouse does not resolve it: mean performance 0.961 ->
  0.966 over 8 interleaved runs each, where whether Material's long tasks fall before or after the
  first paint moves a run's total blocking time between ~55 and ~270 ms.
"""

import re

import tinycss2

PLAIN_SPANS = re.compile(r'<span class="[nwop]">([^<]*)</span>')
STYLE = re.compile(r"(<style[^>]*>)(.*?)(</style>)", re.S)
NOT_REQUIRED = re.compile(r""":not\([^)]*\)|"[^"]*"|'[^']*'""")
DEAD = re.compile(r"\s(:root|html|body)\b")  # the root element is never inside another: `.jupyter-wrapper :root`
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
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    used = {name for names in re.findall(r'class="([^"]*)"', output) for name in names.split()}
    return STYLE.sub(lambda m: m[1] + _used_rules(m[2], used) + m[3], output)


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
