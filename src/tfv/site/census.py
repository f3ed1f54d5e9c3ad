"""The HTML census, the publish gate's last word. It reads what readers get, every HTML file
in site/, after everything else has written it.

Every code block the site renders as Python (a Pygments language class or a notebook cell that resolves to a
Python lexer, in any admonition, tab, list or included file) must be code that this build's report records
as having run and passed on that page (digests match), or a skipped block that stands right after its
visible reason. Any other highlighted block must be in a language that does not run here and is on the short
allow-list below (by the lexer Pygments resolves it to, so `sh` is Bash), and stand after a visible label
unless tests/test_census.py parses every block of its language (JSON, YAML, TF Serving's text configs). A block
in any other language (`cython`, `julia`, `ruby`...) fails, labelled or not: nothing runs it, and the site does
not show code that nothing checks. A highlighted block whose language cannot be told (a notebook Markdown cell)
must stand after a visible label. Anything else fails the publish build, naming the page and the block.
"""

from pathlib import Path

from bs4 import BeautifulSoup
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

from tfv.code import digest, is_python, lexer_name
from tfv.directives import LABEL
from tfv.pages import source_key
from tfv.report import read_report
from tfv.site.config import settings

PAGES = {}  # built HTML file -> the page source it came from (docs-relative)
NON_EXECUTABLE = {"Bash", "Bash Session", "Text only", "Text output", "JSON", "YAML", "TOML", "INI", "Docker"}
PARSED_BY_TESTS = {"JSON", "YAML", "Text only"}  # tests/test_census.py parses every such block in docs/


@event_priority(-100)  # after every other hook has changed the page
def on_post_page(output, page, config):
    uri = page.file.src_uri
    PAGES[Path(page.file.abs_dest_path).resolve()] = source_key(uri)
    return output


def on_post_build(config):
    if not settings(config)["publish"]:
        return
    errors = []
    for html in sorted(Path(config.site_dir).rglob("*.htm*")):
        key = PAGES.get(html.resolve())
        errors += [f"{html.relative_to(config.site_dir)} (docs/{key or '?'}): {e}" for e in check(html.read_text("utf-8"), key)]
    PAGES.clear()
    if errors:
        raise PluginError("HTML census: code on the built site that no run vouches for:\n  " + "\n  ".join(errors))


def check(html, key):
    """Problems with the code blocks of one built page; `key` is its source page, None for a file no page made."""
    report = read_report("cpu", key) if key else None
    ran = {d for e in (report or {}).get("examples", []) if e["outcome"] == "passed" for d in e.get("ran", [])}
    skipped = {e["source"] for e in (report or {}).get("examples", []) if e["outcome"] == "skipped" and "source" in e}
    problems = []
    soup = BeautifulSoup(html, "html.parser")
    for number, pre in enumerate(soup.find_all("pre"), 1):
        if pre.find_parent(class_="jp-OutputArea"):
            continue  # a notebook cell's output: part of the executed notebook the report hashes
        language, highlighted = language_of(pre)
        if language is None and not highlighted:
            continue  # preformatted text, not code shown as any language
        code = pre.find("code") or pre
        for lines in code.select(".linenos, .linenodiv"):
            lines.decompose()
        ran_digest = digest(code.get_text())
        first = code.get_text().strip().splitlines()[0][:60] if code.get_text().strip() else ""
        where = f"block {number} ({first!r})"
        if language is None:
            if not _labelled(pre):
                problems.append(f"{where}: highlighted code of unknown language without a visible label")
        elif is_python(language):
            if ran_digest in ran:
                continue
            if ran_digest in skipped and _labelled(pre):
                continue
            problems.append(f"{where}: Python that this build's report does not record as run and passed"
                            + ("" if report else " (the page has no report)"))
        elif lexer_name(language) not in NON_EXECUTABLE:
            problems.append(f"{where}: a {language!r} block ({lexer_name(language) or 'no Pygments lexer'}): "
                            f"neither Python that runs nor a non-executable language ({', '.join(sorted(NON_EXECUTABLE))})")
        elif lexer_name(language) not in PARSED_BY_TESTS and not _labelled(pre):
            problems.append(f"{where}: a {language!r} block without a visible label (<!-- not-executed: why -->)")
    return problems


def language_of(pre):
    """(language or None, whether Pygments highlighted it) for a <pre> from any of the renderers."""
    for element in [pre, *pre.find_all("code", limit=1), *pre.parents]:
        for css in element.get("class") or []:
            if css.startswith(("language-", "hl-")):
                return css.split("-", 1)[1], True
        if element.name == "div" and "highlight" in (element.get("class") or []):
            return None, True
        if element.name in ("body", "article"):
            break
    return None, bool(pre.find("span", class_=True))


def _labelled(pre):
    """Whether the block stands right after a visible label (its reason): the element before the block is the
    label, or ends with it (Markdown may wrap the directive and its label in one paragraph)."""
    block = pre.find_parent("div", class_="highlight") or pre
    previous = block.find_previous_sibling()
    if previous is None:
        return False
    last = ([previous] + previous.find_all(True))[-1]
    label = last if LABEL in (last.get("class") or []) else last.find_parent(class_=LABEL)
    return label is not None and (label is previous or previous in label.parents or label in previous.descendants)
