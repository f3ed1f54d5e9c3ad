"""Where a page sits for a reader: its step on the interview prep path, its practised mark, its address.

Under the stamp of every content page (tfv.site.stamp puts the stamp under the title):
- on a page of the prep path (the "Interview prep path" section of docs/interview-questions/.nav.yml, in path
  order), "Interview prep path · step k of n" and a link to the next step;
- a "Mark as practised" button, hidden until docs/javascripts/progress.js shows it (marks live in the browser);
- the canonical URL, shown only when the page is printed (docs/stylesheets/site.css, `@media print`).
The home page's `<!-- progress -->` marker becomes the place where progress.js reports "k of n" and offers the
marks' export and import.
"""

import html

from mkdocs.structure.nav import Section
from mkdocs.utils import get_relative_url

from tfv.pages import is_content_page, source_key

PREP_PATH = "Interview prep path"  # the section title in docs/interview-questions/.nav.yml
_path = []  # this build's prep path (on_nav)


def prep_path(nav):
    """The prep path's pages in path order (empty when the nav has no such section)."""
    sections = [item for item in _walk(nav.items) if isinstance(item, Section) and item.title == PREP_PATH]
    return [child for child in sections[0].children if child.is_page] if sections else []


def _walk(items):
    for item in items:
        yield item
        if isinstance(item, Section):
            yield from _walk(item.children)


def on_nav(nav, config, files):
    _path[:] = prep_path(nav)
    return nav


def on_page_markdown(markdown, page, config, files):
    if "<!-- progress -->" not in markdown:
        return markdown
    pages = sum(is_content_page(source_key(f.src_uri)) for f in files.documentation_pages())
    return markdown.replace("<!-- progress -->", f'<div class="tfv-progress" data-pages="{pages}" hidden></div>')


def on_post_page(output, page, config):
    key = source_key(page.file.src_uri)
    if not is_content_page(key):
        return output
    stamp = output.find('<div class="tfv-stamp"')
    end = output.find("</div>", stamp) + len("</div>") if stamp >= 0 else -1
    if end < 0:
        raise ValueError(f"{page.file.src_uri}: no verification stamp to put the page's path under")
    return output[:end] + _place(page) + output[end:]


def _place(page):
    parts = []
    path = _path
    if page in path:
        k, n = path.index(page) + 1, len(path)
        home = get_relative_url("./", page.url) + "#interview-prep"
        following = (f'Next: <a href="{get_relative_url(path[k].url, page.url)}" rel="next">'
                     f"{html.escape(path[k].title)}</a>" if k < n else
                     f'the last step: <a href="{home}">back to the path</a>')
        parts.append(f'<nav class="tfv-step" aria-label="{PREP_PATH}"><a href="{home}">{PREP_PATH}</a> · '
                     f"step {k} of {n} · {following}</nav>")
    parts.append('<button type="button" class="md-button tfv-mark" aria-pressed="false" hidden>'
                 "Mark as practised</button>")
    if page.canonical_url:
        parts.append(f'<p class="tfv-print-url">{html.escape(page.canonical_url)}</p>')
    return "".join(parts)
