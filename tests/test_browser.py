"""The built site in a real browser: Playwright drives headless Chromium against site/ served on
127.0.0.1; every request to any other host is blocked and counted. Needs `make site` first."""

import functools
import http.server
import json
import os
import re
import threading
from pathlib import Path
from urllib.parse import urljoin

import pytest
from playwright.sync_api import expect

from tfv.layout import DOCS
from tfv.pages import checked_pages, content_pages, is_content_page, notebook_name, page_key

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"
CHROME = os.environ.get("CHROME_PATH", "/usr/bin/chromium")
AXE = ROOT / "node_modules/axe-core/axe.min.js"
TENSORFLOW = re.search(r"^tensorflow==(\S+)", (ROOT / "requirements.lock").read_text(), re.M)[1]  # the pinned version
PAGE_TYPES = {  # one page of every kind the site has
    "home": "/",
    "section index": "/interview-questions/",
    "question": "/interview-questions/trace-lab/",
    "notebook": "/interview-questions/one-trace-not-faster/",
    "tags": "/tags/",
}
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not (SITE / "index.html").exists(), reason="no built site: run `make site` first")]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def base_url():  # pytest-playwright's `browser`, `context` and `page` resolve relative URLs against it
    assert (SITE / "index.html").exists(), "site/ is missing: run `make site` first"
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=SITE))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture(scope="session")
def browser_type_launch_args():  # pytest-playwright: launch this machine's Chromium
    assert Path(CHROME).exists(), f"no Chromium at {CHROME}: `apt-get install chromium` (or set CHROME_PATH)"
    return {"executable_path": CHROME, "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                                "--disable-component-update", "--disable-sync", "--no-first-run"]}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "permissions": ["clipboard-read", "clipboard-write"]}


@pytest.fixture(scope="module")
def external():
    return []  # every request to another host, across the whole module


@pytest.fixture
def page(page, base_url, external):
    """pytest-playwright's page, with every request to another host blocked and counted, and its errors kept."""

    def route(route):
        url = route.request.url
        if url.startswith(base_url) or url.startswith("data:"):
            return route.continue_()
        external.append(url)
        return route.abort()

    page.route("**/*", route)
    page.errors = []
    page.on("console", lambda message: page.errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    return page


def test_home_loads_without_console_errors(page, base_url):
    page.goto(base_url + "/")
    assert page.locator("h1").first.inner_text().startswith("TensorFlow Verified")
    for section in ("Interview questions", "Use cases", "Production issues", "Best practices"):
        assert page.locator(".md-content a", has_text=section).count() >= 1, f"home does not lead to {section}"
    page.wait_for_load_state("networkidle")
    assert page.errors == [], page.errors


def test_home_counts_what_the_last_run_verified_and_offers_a_prep_path(page, base_url):
    page.goto(base_url + "/")
    pages = len(content_pages())
    summary = page.locator(".tfv-summary.tfv-verified").inner_text()
    assert f"{pages} of {pages} pages verified" in summary and f"TF {TENSORFLOW}" in summary, summary
    path = page.locator("h2#interview-prep ~ ol").first.locator("a")
    assert path.count() >= 10, path.count()
    for href in path.evaluate_all("links => links.map(a => a.href)"):
        assert page.request.get(href).ok, href


def test_section_index_filters_by_words_and_difficulty(page, base_url):
    page.goto(base_url + "/interview-questions/")
    rows = page.locator(".tfv-pages tbody tr")
    shown = page.locator(".tfv-pages tbody tr:visible")
    total = rows.count()
    assert total == shown.count() >= 40, (total, shown.count())
    page.get_by_label("Filter pages").fill("retracing")
    assert 1 <= shown.count() < total and all("retrac" in t.lower() for t in shown.all_inner_texts()), shown.all_inner_texts()
    page.get_by_label("Filter pages").fill("")
    page.locator(".tfv-filter button[data-level=hard]").click()
    levels = shown.evaluate_all("rows => rows.map(r => r.cells[1].textContent.trim())")
    assert levels and set(levels) == {"hard"} and len(levels) < total, levels
    assert page.locator(".tfv-filter output").inner_text() == f"{len(levels)} of {total} pages"


# The layout shifts Chromium reports while a page loads, summed as Lighthouse sums them for CLS (one session window
# is enough here: the page is not scrolled). A script that inserts or shows content above what is already painted
# adds to it: the section indexes' filter did (0.075; sections.py now puts it in the HTML), the practice toggle and
# the practised mark appearing under the stamp did (0.02 to 0.03), and a class on the tracing lab's prediction table
# once took Material's table styles away after the first paint (0.95).
LAYOUT_SHIFT = """() => new Promise((done) => {
  let total = 0;
  new PerformanceObserver((list) => { for (const e of list.getEntries()) if (!e.hadRecentInput) total += e.value; })
    .observe({ type: "layout-shift", buffered: true });
  setTimeout(() => done(total), 1000);
})"""


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
@pytest.mark.parametrize("path", PAGE_TYPES.values(), ids=PAGE_TYPES.keys())
def test_nothing_moves_while_a_page_loads(page, base_url, path, viewport):
    page.set_viewport_size(VIEWPORTS[viewport])
    page.goto(base_url + path, wait_until="load")
    shift = page.evaluate(LAYOUT_SHIFT)
    assert shift < 0.01, f"{path} ({viewport}): layout shift {shift:.3f} at load"
    classed = page.evaluate("[...document.querySelectorAll('.md-content table')].filter(t => t.className"
                            " && /your prediction/i.test(t.tHead?.textContent || '')).length")
    assert classed == 0, "a prediction table has a class: Material no longer styles it"


def test_search_finds_the_right_page(page, base_url):
    page.goto(base_url + "/")
    page.keyboard.press("/")  # the search shortcut
    page.keyboard.type("reduce_retracing")
    results = page.locator(".md-search-result__link")
    results.first.wait_for(timeout=15000)
    hrefs = [results.nth(i).get_attribute("href") for i in range(results.count())]
    assert any("interview-questions/trace-lab/" in href for href in hrefs), hrefs


INDEX = "/search/search_index.json"
# What readers type, and the pages that must come up in the first three results.
QUERIES = {
    "set_memory_growth": {"best-practices/gpu-memory-growth-vs-cap/"},      # an API name inside a qualified call
    "memory growth": {"best-practices/gpu-memory-growth-vs-cap/"},
    "ResourceExhaustedError": {"production-issues/gpu-oom-batch-too-large/", "production-issues/gpu-oom-shared-card/",
                               "best-practices/gpu-memory-growth-vs-cap/"},
    "LossScaleOptimizer": {"best-practices/mixed-precision/", "production-issues/mixed-precision-nan/"},
    "reduce_retracing": {"interview-questions/trace-lab/"},
    "steps_per_execution": {"interview-questions/compile-and-fit/", "production-issues/slower-after-upgrade/",
                            "production-issues/mirrored-slower-than-one-gpu/"},
    # names that only a page's code uses: the index keeps them, not the code (tfv.site.search)
    "assert_cardinality": {"production-issues/input-ran-out-of-data/"},
    "set_inter_op_parallelism_threads": {"production-issues/cpu-threads-in-containers/"},
    "clip_by_global_norm": {"best-practices/gradient-clipping/"},
}
SECTION_INDEXES = {f"{section}/" for section in ("interview-questions", "use-cases", "production-issues", "best-practices")}


@pytest.mark.parametrize("query", QUERIES)
def test_search_ranks_the_page_that_answers(page, base_url, query):
    """The query's page is in the first three results; a section index never comes first; no excerpt is a
    stamp (the stamp and the section tables are kept out of the index with data-search-exclude)."""
    page.goto(base_url + "/")
    page.keyboard.press("/")
    page.keyboard.type(query)
    results = page.locator(".md-search-result__list > li")
    results.first.wait_for(timeout=15000)
    links = [re.sub(r"\?[^#]*", "", urljoin(base_url + "/", a.get_attribute("href")).removeprefix(base_url + "/"))
             for a in page.locator(".md-search-result__list > li > a.md-search-result__link").all()]
    pages = list(dict.fromkeys(link.split("#")[0] for link in links))  # one entry per page, in rank order
    assert QUERIES[query] & set(pages[:3]), (query, pages[:5])
    assert pages[0] not in SECTION_INDEXES | {""}, (query, pages[:5])
    excerpts = " ".join(results.all_inner_texts())
    assert "assertions passed" not in excerpts and "How to read a stamp" not in excerpts, excerpts[:500]


def test_the_search_index_holds_no_stamp_and_no_section_table():
    docs = json.loads((SITE / INDEX.lstrip("/")).read_text())["docs"]
    stamped = [d["location"] for d in docs if "assertions passed" in d["text"] and not d["location"].startswith("#")]
    assert stamped == [], stamped[:10]
    tables = [d["location"] for d in docs if d["location"].split("#")[0] in SECTION_INDEXES and "<td" in d["text"]]
    assert tables == [], tables[:10]
    code = [d["location"] for d in docs if "<pre" in d["text"]]  # code blocks leave; their names stay
    assert code == [], code[:10]


def test_notebook_search_entries_follow_its_sections():
    """tfv.site.notebooks lifts each H2 to the level of the cells, so a cell is found under its own section."""
    docs = json.loads((SITE / INDEX.lstrip("/")).read_text())["docs"]
    entries = {d["location"]: d for d in docs}
    page = PAGE_TYPES["notebook"].lstrip("/")
    assert "plt.subplots" in entries[page + "#chart"]["text"], entries[page + "#chart"]["text"][:300]
    assert "plt.subplots" not in entries[page]["text"] and "description:" not in entries[page]["text"]
    assert [d["location"] for d in docs if "Copied!" in d["text"] or "In\xa0[" in d["text"]] == []


@pytest.mark.parametrize("way_in", ["shortcut", "click", "phone icon"])
def test_search_index_loads_only_when_search_opens(page, base_url, way_in):
    """overrides/main.html holds Material's index request until the reader opens search."""
    requested = []
    page.on("request", lambda request: requested.append(request.url) if request.url.endswith(INDEX) else None)
    if way_in == "phone icon":
        page.set_viewport_size({"width": 390, "height": 800})
    page.goto(base_url + "/interview-questions/trace-lab/")
    page.wait_for_load_state("networkidle")
    assert requested == [], "reading a page must not download the search index"
    if way_in == "shortcut":
        page.keyboard.press("/")
    elif way_in == "click":
        with page.expect_request(lambda request: request.url.endswith(INDEX)):
            page.locator("input.md-search__input").hover()  # reaching for search starts the download
        page.locator("input.md-search__input").click()
    else:
        page.locator("label.md-header__button[for=__search]").click()
    page.keyboard.type("OperatorNotAllowedInGraphError")
    results = page.locator(".md-search-result__link")
    results.first.wait_for(timeout=15000)
    assert len(requested) == 1, requested
    hrefs = [results.nth(i).get_attribute("href") for i in range(results.count())]
    assert any("interview-questions/model-subclassing/" in href for href in hrefs), hrefs


def test_search_result_link_highlights_the_terms(page, base_url):
    page.goto(base_url + "/interview-questions/trace-lab/?h=retracing")
    marks = page.locator(".md-content mark[data-md-highlight]")
    marks.first.wait_for(timeout=15000)
    assert "retracing" in marks.first.inner_text().lower()


def test_deep_link_lands_on_the_question(page, base_url):
    page.goto(base_url + "/interview-questions/trace-lab/#contract")
    heading = page.locator("h2#contract")
    heading.wait_for()
    page.wait_for_timeout(300)
    top = heading.evaluate("element => element.getBoundingClientRect().top")
    assert 0 <= top < 200, f"the #contract heading is at {top}px, not at the top of the viewport"


@pytest.mark.parametrize("kind", ["question", "notebook"])
def test_heading_permalink_shows_on_hover_and_on_touch_screens(browser, base_url, kind):
    desktop = browser.new_page()
    desktop.goto(base_url + PAGE_TYPES[kind])
    link = desktop.locator("h2#quick-answer a.headerlink")
    assert link.evaluate("a => getComputedStyle(a).opacity") == "0"
    desktop.locator("h2#quick-answer").hover()  # Material fades it in
    desktop.wait_for_function("a => getComputedStyle(a).opacity === '1'", arg=link.element_handle(),
                              timeout=5000)  # raises if the permalink never shows on hover
    link.click()
    assert desktop.url.endswith(PAGE_TYPES[kind] + "#quick-answer"), desktop.url
    desktop.close()
    phone = browser.new_context(viewport={"width": 390, "height": 800}, is_mobile=True, has_touch=True).new_page()
    phone.goto(base_url + PAGE_TYPES[kind])
    assert phone.evaluate("matchMedia('(hover: none)').matches")
    opacity = phone.locator("h2#quick-answer a.headerlink").evaluate("a => getComputedStyle(a).opacity")
    assert opacity == "1", "a touch screen has no hover: the permalink must always show"
    phone.context.close()


def test_copy_button_copies_the_code(page, base_url):
    page.goto(base_url + "/interview-questions/trace-lab/")
    block = page.locator(".highlight").filter(has_text="def raises_type_error").first
    block.hover()
    block.locator("button[data-md-type=copy]").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert "def raises_type_error(fn, *args):" in copied and "--8<--" not in copied, copied[:200]


VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 800}}
QUESTION = "/interview-questions/custom-train-step/"
# Every block of every section but the kept one, as practice mode must leave it: [(section id, tag, display)]
SHOWN_BLOCKS = """keep => {
  const article = document.querySelector('.md-content__inner');
  const notebook = article.querySelector('.jp-Notebook');
  const blocks = notebook ? [...notebook.children].flatMap((cell) => {
      const md = cell.querySelector('.jp-RenderedMarkdown'); return md ? [...md.children] : [cell]; })
    : [...article.children];
  let section = null; const out = [];
  for (const el of blocks) {
    if (el.tagName === 'H2') { section = el.id; continue; }
    if (section && section !== keep && !el.matches('button.tfv-show, [data-tfv-question]')
        && !el.querySelector('[data-tfv-question]') && getComputedStyle(el).display !== 'none')
      out.push([section, el.tagName, getComputedStyle(el).display]);
  }
  return out;
}"""


def practice_on(page, base_url, path, viewport="desktop"):
    page.set_viewport_size(VIEWPORTS[viewport])
    page.goto(base_url + "/")
    page.evaluate("localStorage.setItem('tfv-practice', '1')")
    page.goto(base_url + path)


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_practice_mode_hides_every_block_but_the_quick_answer(page, base_url, viewport):
    page.set_viewport_size(VIEWPORTS[viewport])
    page.goto(base_url + QUESTION)
    toggle = page.locator("button.tfv-practice")
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    assert page.locator("h2#quick-answer + *").is_visible()
    assert page.locator("details").count() >= 5, "the sample page has lost its collapsed blocks"
    shown = page.evaluate(SHOWN_BLOCKS, "quick-answer")
    assert shown == [], f"practice mode leaves answers in view: {shown[:5]}"   # <details> included
    page.reload()  # the choice persists
    assert page.evaluate(SHOWN_BLOCKS, "quick-answer") == []
    page.locator("button.tfv-practice").click()
    assert page.locator("h2#pitfalls ~ details").first.is_visible(), "switching off must show everything again"


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_section_toggle_is_named_reveals_moves_focus_and_hides_again(page, base_url, viewport):
    practice_on(page, base_url, QUESTION, viewport)
    button = page.locator("h2#pitfalls + button.tfv-show")
    assert button.inner_text() == "Show: Where candidates lose the point", button.inner_text()
    assert button.get_attribute("aria-expanded") == "false"
    button.focus()
    page.keyboard.press("Enter")
    assert button.get_attribute("aria-expanded") == "true" and button.inner_text().startswith("Hide: ")
    assert page.locator("h2#pitfalls ~ details").first.is_visible()
    inside = page.evaluate("""() => { const a = document.activeElement, h = document.getElementById('pitfalls');
        let el = h.nextElementSibling; while (el && el.tagName !== 'H2') { if (el === a || el.contains(a)) return true;
        el = el.nextElementSibling; } return false; }""")
    assert inside, "focus must move into the revealed section"
    controlled = button.get_attribute("aria-controls").split()
    assert controlled and all(page.locator(f"#{i}").count() == 1 for i in controlled), controlled
    button.click()
    assert button.get_attribute("aria-expanded") == "false" and not page.locator("h2#pitfalls ~ details").first.is_visible()


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_link_or_toc_click_into_a_hidden_section_reveals_it(page, base_url, viewport):
    practice_on(page, base_url, QUESTION + "#pitfalls", viewport)
    assert page.locator("h2#pitfalls ~ p").first.is_visible(), "a shared #pitfalls link must land on the section"
    assert page.evaluate("document.activeElement.id") == "pitfalls"
    assert not page.locator("h2#proof ~ p").first.is_visible(), "only the linked section opens"
    page.goto(base_url + QUESTION + "#proof")   # the fragment changes: hashchange
    assert page.locator("h2#proof ~ p").first.is_visible()
    if viewport == "desktop":
        page.locator('.md-sidebar--secondary a[href="#strong-answer"]').click()
        assert page.locator("h2#strong-answer ~ *:not(button)").first.is_visible(), "a TOC click must reveal"


def test_a_link_to_a_follow_up_opens_it(page, base_url):
    page.goto(base_url + QUESTION)
    anchor = page.locator("details.question[id^=fu-]").first.get_attribute("id")
    page.goto(base_url + QUESTION + "#" + anchor)
    assert page.locator(f"details#{anchor}").evaluate("d => d.open"), "a follow-up link must open it"
    practice_on(page, base_url, QUESTION + "#" + anchor)
    assert page.locator(f"details#{anchor}").is_visible() and page.locator(f"details#{anchor}").evaluate("d => d.open")


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_tracing_lab_hides_each_answer_and_checks_predictions(page, base_url, viewport):
    practice_on(page, base_url, PAGE_TYPES["question"], viewport)
    assert page.evaluate(SHOWN_BLOCKS, "none") == [], "every answer, the six-answer summary included, must hide"
    questions = page.locator("h2[id]").filter(has_text=re.compile(r"^[1-6]\. "))
    assert questions.count() == 6 and all(questions.nth(i).is_visible() for i in range(6)), "the questions stay"
    selects = page.locator("table select")
    assert selects.count() == 11, selects.count()
    assert selects.first.is_visible(), "the prediction table is the question: it stays in view"
    selects.nth(0).select_option("runs")        # row 1: a float32 (1, 2) tensor runs (asserted on the page)
    selects.nth(2).select_option("runs")        # row 3: a (4, 3) tensor is a TypeError
    verdicts = page.locator(".tfv-verdict")
    assert verdicts.nth(0).get_attribute("data-right") == "true", verdicts.nth(0).inner_text()
    assert verdicts.nth(2).get_attribute("data-right") == "false" and "TypeError" in verdicts.nth(2).inner_text()


def test_a_production_issue_is_a_diagnosis_drill(page, base_url):
    page.goto(base_url + "/production-issues/retracing-storm/")
    page.locator("button.tfv-practice").click()
    assert page.locator("h2#symptom + *").is_visible(), "the symptom stays"
    assert page.evaluate(SHOWN_BLOCKS, "symptom") == [], "root cause and fix must hide"
    assert page.locator("h2#root-cause + button.tfv-show").inner_text() == "Show: Root cause, reproduced"


def test_practice_mode_on_a_notebook_page_hides_cells_too(page, base_url):
    page.goto(base_url + PAGE_TYPES["notebook"])
    chart = page.locator(".jp-Cell").filter(has=page.locator("img")).first  # a code cell of the chart section
    page.locator("button.tfv-practice").click()
    assert page.locator("h2#quick-answer + .jp-Cell p").first.is_visible()  # tfv.site.notebooks lifts each H2
    assert page.evaluate(SHOWN_BLOCKS, "quick-answer") == [], "practice mode must hide the notebook's later cells"
    page.locator("h2#chart + button.tfv-show").click()
    assert chart.is_visible(), "Show must reveal the section's cells"


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_copy_link_copies_the_canonical_url_of_a_section_and_of_a_follow_up(page, base_url, viewport):
    page.set_viewport_size(VIEWPORTS[viewport])
    page.goto(base_url + QUESTION + "?h=tape")   # search terms in the address bar must not leak into the link
    canonical = page.locator("link[rel=canonical]").get_attribute("href")
    assert canonical.startswith("https://") and canonical.endswith(QUESTION), canonical
    button = page.locator("h2#pitfalls button.tfv-link")
    assert button.is_visible() and button.get_attribute("aria-label") == "Copy link to: Where candidates lose the point"
    button.click()
    assert page.evaluate("navigator.clipboard.readText()") == canonical + "#pitfalls"
    assert button.get_attribute("data-copied") is not None and "copied" in page.locator(".tfv-status").inner_text()
    follow_up = page.locator("details.question[id^=fu-]").first
    copy = page.locator(f".tfv-fu-link button[data-anchor='{follow_up.get_attribute('id')}']")   # beside its summary
    assert copy.is_visible(), "a collapsed follow-up shows its copy link"
    copy.click()
    assert page.evaluate("navigator.clipboard.readText()") == canonical + "#" + follow_up.get_attribute("id")
    assert not follow_up.evaluate("d => d.open"), "the copy button must not open the follow-up"
    assert all(page.locator("h2[id]").nth(i).locator("button.tfv-link").count() == 1
               for i in range(page.locator("h2[id]").count())), "every H2 has its copy link"


@pytest.mark.parametrize("kind", ["question", "notebook"])
def test_title_uses_the_width_on_a_phone(page, base_url, kind):
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(base_url + PAGE_TYPES[kind])
    title = page.locator(".md-content h1").first.bounding_box()
    content = page.locator(".md-content__inner").bounding_box()
    assert title["width"] > 0.8 * content["width"], f"the title is squeezed: {title['width']:.0f} of {content['width']:.0f} px"


def test_light_dark_toggle_switches(page, base_url):
    page.goto(base_url + "/")
    # the page starts with transitions off (tfv.site.weight); Material's palette turns them back on
    page.wait_for_function("!document.body.hasAttribute('data-md-color-switching')", timeout=5000)
    scheme = "document.body.getAttribute('data-md-color-scheme')"
    before = page.evaluate(scheme)
    page.locator("form[data-md-component=palette] label:visible").first.click()
    after = page.evaluate(scheme)
    assert {before, after} == {"default", "slate"}, (before, after)


def test_notebook_page_shows_its_plot_and_download(page, base_url):
    page.goto(base_url + "/interview-questions/one-trace-not-faster/")
    image = page.locator(".jp-RenderedImage img, .jp-OutputArea-output img").first
    image.wait_for()
    image.scroll_into_view_if_needed()  # it loads lazily
    assert re.fullmatch(r"chart-\d+\.png", image.get_attribute("src")), "the chart is not a file beside the page"
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
    assert image.evaluate("img => img.naturalWidth") > 300, "the chart did not load"
    download = page.locator("a", has_text="Download the executed notebook")
    response = page.request.get(urljoin(page.url, download.get_attribute("href")))  # as the browser resolves it
    assert response.ok, f"the download link is broken: {response.url} {response.status}"
    notebook = response.json()
    assert any(o.get("output_type") == "display_data" for c in notebook["cells"] for o in c.get("outputs", [])), \
        "the downloadable notebook has no outputs"


def test_every_content_page_has_stamp_and_edit_link():
    """Read from each page's built HTML, which holds the stamp and the links (the build writes them; no script adds
    them): a browser walk of every page for the same facts cost 148 s on a slow 2-core machine."""
    from bs4 import BeautifulSoup

    pages = sorted(p.parent for p in SITE.glob("*/*/index.html") if p.parent.parent.name != "tags")
    assert len(pages) >= 2
    for folder in pages:
        path = "/" + folder.relative_to(SITE).as_posix() + "/"
        soup = BeautifulSoup((folder / "index.html").read_text(encoding="utf-8"), "html.parser")
        stamp = soup.select(".tfv-stamp .tfv-verified")
        assert len(stamp) >= 1, f"{path}: no verified stamp"
        assert f"TF {TENSORFLOW}" in stamp[0].get_text(" ", strip=True), f"{path}: stamp does not name TensorFlow {TENSORFLOW}"
        edit = soup.select("a[rel=edit]")
        assert len(edit) == 1 and "/edit/main/docs/" in edit[0]["href"], f"{path}: no edit link"
        view = [a for a in soup.find_all("a") if a.get("aria-label", a.get_text(" ", strip=True)) == "View source"]
        source = edit[0]["href"].replace("/edit/main/docs/", "/blob/main/docs/")
        assert len(view) == 1 and view[0]["href"] == source, f"{path}: no view-source link"
        assert is_content_page(source.split("/blob/main/docs/")[1]), source  # the .md or .py itself


SITE_PATHS = ["/"] + sorted("/" + html.parent.relative_to(SITE).as_posix() + "/"
                           for html in [*SITE.glob("*/index.html"), *SITE.glob("*/*/index.html")])
AXED = SITE_PATHS if "TFV_PAGES" not in os.environ else [  # make test-changed: the changed pages only
    f"/{page_key(p).rsplit('.', 1)[0]}/" for p in checked_pages()]


@pytest.fixture(scope="module", params=["light", "dark"])
def scheme_page(request, browser):
    """One tab per colour scheme, reused across pages (a new context per page costs more than axe itself)."""
    context = browser.new_context(color_scheme=request.param)
    yield context.new_page()
    context.close()


def test_the_site_has_every_page_type():
    assert set(PAGE_TYPES.values()) <= set(SITE_PATHS) and len(SITE_PATHS) >= 50, "run `make site` first"


COLOUR_RULES = ["color-contrast", "link-in-text-block"]  # the axe rules whose outcome a colour scheme can change
# Colour contrast is most of axe's time, and most of its nodes are code tokens: a page of code has a thousand
# spans in a few dozen looks. What axe's color-contrast weighs for a token is its computed colour, font size and
# weight, text shadow, stroke, filter and opacity and the backgrounds behind it, so a visible token that matches an
# earlier one on all of them passes or fails with it: axe checks the first and leaves the repeats out. Not in the key:
# what lies over a token (in a code block, only the copy button in its corner). Hidden tokens (a collapsed block's)
# are neither: axe skips them either way. Measured on four code-heavy pages, colour rule only: 3.4 -> 2.0, 4.3 -> 1.5,
# 5.7 -> 1.9 and 3.2 -> 1.3 s per page and scheme (bench/findings.md), with the same violations (none) either way.
REPEATED_TOKENS = """() => {
  const behind = new Map();
  const backgrounds = (el) => {
    if (!el) return "";
    if (!behind.has(el)) {
      const s = getComputedStyle(el);
      behind.set(el, `${s.backgroundColor} ${s.backgroundImage} ${s.opacity} ${s.mixBlendMode}|${backgrounds(el.parentElement)}`);
    }
    return behind.get(el);
  };
  const seen = new Set(), repeats = [];
  for (const token of document.querySelectorAll("pre span:not(:has(*))")) {
    if (!token.checkVisibility()) continue;
    const s = getComputedStyle(token);
    const key = [s.color, s.fontSize, s.fontWeight, s.textShadow, s.webkitTextStroke, s.filter, s.opacity,
                 backgrounds(token)].join(" ");
    if (seen.has(key)) repeats.push(token); else seen.add(key);
  }
  return repeats;
}"""


def axe(page, options="{}"):
    """axe's violations on the page, repeated code tokens left out (REPEATED_TOKENS)."""
    return page.evaluate(f"(() => {{ const repeats = ({REPEATED_TOKENS})();"
                         f" return axe.run(repeats.length ? {{exclude: repeats}} : document, {options}); }})()")["violations"]


@pytest.mark.parametrize("path", AXED)
def test_axe_finds_no_serious_violation(scheme_page, base_url, path):
    """Every published page, in both colour schemes: contrast depends on each page's code and outputs. A scheme is
    Material's palette: its colours, and the template's palette toggle. So the dark scheme runs every rule on one
    page of each type (the template) and the colour rules on every page."""
    scheme_page.goto(base_url + path)
    scheme_page.add_script_tag(path=str(AXE))
    dark = scheme_page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches")
    rules = "" if not dark or path in PAGE_TYPES.values() else f", runOnly: {COLOUR_RULES}"
    violations = axe(scheme_page, f"{{resultTypes: ['violations']{rules}}}")
    serious = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in violations
               if v["impact"] in ("serious", "critical")]
    assert serious == [], serious


@pytest.mark.parametrize("token", ["first", "last"])
def test_a_repeated_token_leaves_axe_only_when_it_looks_the_same(page, base_url, token):
    """One keyword token (class k) given a pale colour of its own, the first or the last: axe reports exactly that
    node, so a token that looks different is checked wherever it is on the page."""
    page.goto(base_url + "/production-issues/gpu-oom-batch-too-large/")
    page.add_script_tag(path=str(AXE))
    left_out = page.evaluate(f"({REPEATED_TOKENS})().length")
    assert left_out > 500, left_out  # the page has many repeats: the check is worth its keep
    page.evaluate(f"() => {{ const names = [...document.querySelectorAll('pre span.k')].filter(e => e.checkVisibility());"
                  f" names.at({0 if token == 'first' else -1}).style.color = '#bbbbbb'; }}")
    violations = axe(page, "{resultTypes: ['violations'], runOnly: ['color-contrast']}")
    assert [v["id"] for v in violations] == ["color-contrast"] and len(violations[0]["nodes"]) == 1, violations


def test_a_table_that_scrolls_sideways_is_reachable_by_keyboard(page, base_url):
    """Material wraps a table in a scroll wrapper but never makes it focusable; scroll-focus.js does."""
    page.set_viewport_size(VIEWPORTS["phone"])
    page.goto(base_url + "/best-practices/make-inference-faster/")
    page.wait_for_selector(".md-typeset__scrollwrap[tabindex]", state="attached")
    wraps = page.locator(".md-content .md-typeset__scrollwrap").all()
    wide = [wrap for wrap in wraps if wrap.evaluate("e => e.scrollWidth > e.clientWidth")]
    assert wide, "no table scrolls sideways at 390 px: pick a page with a wider table"
    for wrap in wide:
        assert wrap.get_attribute("tabindex") == "0", wrap.inner_html()[:200]
        assert wrap.get_attribute("aria-label").startswith("Table: "), wrap.get_attribute("aria-label")
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("axe.run(document, {runOnly: ['scrollable-region-focusable']})")
    assert result["violations"] == [], result["violations"]


def test_zero_external_requests(page, base_url, external):
    for path in PAGE_TYPES.values():
        page.goto(base_url + path)
        page.wait_for_load_state("networkidle")
    assert external == [], f"requests left the machine: {sorted(set(external))}"


def prep_path(page, base_url):
    """The home page's prep path: [(title, absolute URL)] in path order."""
    page.goto(base_url + "/")
    return page.locator("h2#interview-prep ~ ol").first.locator(":scope > li > a:first-child").evaluate_all(
        "links => links.map(a => [a.textContent.trim(), a.href])")


def test_the_navigation_lists_the_own_section_and_links_the_others(page, base_url):
    """tfv.site.weight.own_section_nav: on a production issue, the nav holds that section's pages and, for every
    other section, one link to its index; if Material's markup changed under it, every page's link comes back."""
    page.goto(base_url + "/production-issues/retracing-storm/")
    links = page.locator(".md-nav--primary a.md-nav__link[href]").evaluate_all(
        "links => links.map(a => new URL(a.href).pathname)")
    own = {path for path in links if path.startswith("/production-issues/") and path != "/production-issues/"}
    others = {path for path in links if not path.startswith("/production-issues/")}
    assert len(own) == len([p for p in content_pages() if p.parent.name == "production-issues"]), len(own)
    for section in ("interview-questions", "use-cases", "best-practices"):
        assert f"/{section}/" in others, f"no link to the {section} index"
        assert not [path for path in others if path.startswith(f"/{section}/") and path != f"/{section}/"], section


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_prep_path_is_the_navigation(page, base_url, viewport):
    page.set_viewport_size(VIEWPORTS[viewport])
    steps = prep_path(page, base_url)
    assert len(steps) >= 10, steps
    for k in (1, 2, len(steps)):  # the first, a middle and the last step
        page.goto(steps[k - 1][1])
        step = page.locator("nav.tfv-step")
        assert step.is_visible() and f"step {k} of {len(steps)}" in step.inner_text(), step.inner_text()
        following = step.locator("a[rel=next]")
        if k < len(steps):
            assert following.evaluate("a => a.href") == steps[k][1], "the step's next link must be the next step"
            assert page.locator("a.md-footer__link--next").evaluate("a => a.href") == steps[k][1]
        else:
            assert following.count() == 0 and "last step" in step.inner_text(), step.inner_text()
        if k > 1:
            assert page.locator("a.md-footer__link--prev").evaluate("a => a.href") == steps[k - 2][1]
    sidebar = page.locator(".md-nav--primary .md-nav__item").filter(
        has=page.locator(":scope > label, :scope > .md-nav__link", has_text="Interview prep path")).first
    links = sidebar.locator("nav a.md-nav__link[href]").evaluate_all(
        "links => links.filter(a => !a.getAttribute('href').startsWith('#')).map(a => a.href)")
    assert links == [url for _, url in steps], "the nav's prep path must be the home page's, in order"
    page.goto(base_url + "/use-cases/serve-with-fastapi/")
    assert page.locator("nav.tfv-step").count() == 0, "a page off the path says no step"


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_practised_marks_persist_count_filter_and_travel_as_a_file(page, base_url, viewport, tmp_path):
    page.set_viewport_size(VIEWPORTS[viewport])
    steps = prep_path(page, base_url)
    page.evaluate("localStorage.clear()")
    page.goto(steps[1][1])
    mark = page.locator("button.tfv-mark")
    assert mark.is_visible() and mark.get_attribute("aria-pressed") == "false"
    mark.click()
    page.reload()  # kept in the browser
    assert page.locator("button.tfv-mark").get_attribute("aria-pressed") == "true"
    pages = len(content_pages())
    page.goto(base_url + "/")
    count = page.locator(".tfv-progress p").first
    assert count.inner_text() == f"Practised: 1 of {len(steps)} steps of the path · 1 of {pages} pages in all"
    practised = page.locator("h2#interview-prep ~ ol").first.locator(":scope > li.tfv-practised")
    assert practised.count() == 1 and practised.locator("a").first.evaluate("a => a.href") == steps[1][1]

    page.goto(base_url + "/interview-questions/")
    rows = page.locator(".tfv-pages tbody tr")
    shown = page.locator(".tfv-pages tbody tr:visible")
    total = rows.count()
    page.locator(".tfv-filter button[data-mark=practised]").click()
    assert shown.count() == 1 and shown.locator("a").first.evaluate("a => a.href") == steps[1][1]
    assert shown.locator("td:nth-child(4)").inner_text() == "✓"
    page.locator(".tfv-filter button[data-mark='not yet']").click()
    assert shown.count() == total - 1, (shown.count(), total)

    page.goto(base_url + "/")
    with page.expect_download() as download:
        page.get_by_role("button", name="Save marks to a file").click()
    saved = tmp_path / "marks.json"
    download.value.save_as(saved)
    marks = json.loads(saved.read_text())["practised"]
    assert list(marks) == [steps[1][1].removeprefix(base_url + "/")], marks
    page.evaluate("localStorage.clear()")
    page.reload()
    assert count.inner_text().startswith(f"Practised: 0 of {len(steps)} steps"), "cleared storage: no marks"
    status = page.locator(".tfv-progress p[role=status]")
    page.locator(".tfv-progress input[type=file]").set_input_files(saved)
    expect(status).to_contain_text("Loaded 1 marks")  # the file is read asynchronously: wait for the status line
    assert count.inner_text().startswith(f"Practised: 1 of {len(steps)} steps")
    bad = tmp_path / "notes.json"
    bad.write_text('{"todo": ["tensors"]}')
    page.locator(".tfv-progress input[type=file]").set_input_files(bad)
    expect(status).to_contain_text("notes.json is not a file of marks")
    assert count.inner_text().startswith(f"Practised: 1 of {len(steps)} steps"), "a bad file changes nothing"


def test_a_printed_page_is_a_study_sheet(page, base_url):
    page.goto(base_url + QUESTION)
    canonical = page.locator("link[rel=canonical]").get_attribute("href")
    page.locator(".md-content .highlight").first.hover()  # content.lazy: its copy button mounts in view
    page.locator("button[data-md-type=copy]").first.wait_for(state="attached")
    page.emulate_media(media="print")
    for chrome in ("button.tfv-practice", "button.tfv-mark", ".tfv-link", ".md-tags", "button[data-md-type=copy]", ".md-header",
                   ".md-sidebar--primary"):
        assert page.locator(chrome).count() >= 1, f"the sample page has no {chrome}"
        printed = page.locator(chrome).evaluate_all("els => els.filter(e => e.checkVisibility()).length")
        assert printed == 0, f"{chrome} must not print"
    url, stamp = page.locator(".tfv-print-url"), page.locator(".tfv-stamp")
    assert url.is_visible() and url.inner_text() == canonical, url.inner_text()
    first_section = page.locator("h2").first.bounding_box()["y"]
    assert url.bounding_box()["y"] < first_section and stamp.bounding_box()["y"] < first_section
    assert page.locator("h2#pitfalls ~ details").first.is_visible(), "practice mode off: the whole page prints"

    page.emulate_media(media="screen")
    page.locator("button.tfv-practice").click()
    page.emulate_media(media="print")
    assert page.locator("h2#quick-answer + *").is_visible(), "the quick answer prints first"
    assert not page.locator("h2#pitfalls").first.is_visible(), "the answers' headings print after the break"
    answers = page.locator(".tfv-print-answers")
    assert answers.is_visible() and answers.evaluate("a => getComputedStyle(a).breakBefore") == "page"
    assert answers.locator("h2").first.inner_text() == "Answers"
    assert "Where candidates lose the point" in answers.inner_text()
    assert answers.locator("details").count() >= 5 and answers.locator("details:not([open])").count() == 0
    assert answers.locator("[id]").count() == 0, "a copy must not duplicate the page's ids"
    page.emulate_media(media="screen")
    assert not answers.is_visible(), "the copy is for print only"


def test_the_tracing_lab_prints_its_questions_then_the_answers(page, base_url):
    practice_on(page, base_url, PAGE_TYPES["question"])
    page.emulate_media(media="print")
    questions = page.locator(".md-content__inner > h2[id]").filter(has_text=re.compile(r"^[1-6]\. "))
    assert questions.count() == 6 and all(questions.nth(i).is_visible() for i in range(6)), "the questions print"
    assert page.locator(".md-content__inner [data-tfv-question]").first.is_visible()
    answers = page.locator(".tfv-print-answers")
    assert answers.is_visible() and answers.locator("table").count() >= 1
    last_question = questions.nth(5).bounding_box()["y"]
    assert answers.bounding_box()["y"] > last_question, "the answers come after every question"


def test_the_404_page_offers_search_and_the_sections(page, base_url):
    page.goto(base_url + "/404.html")
    assert page.locator("h1").inner_text() == "This page is not here"
    hrefs = page.locator(".md-content a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    for section in ("interview-questions/", "use-cases/", "production-issues/", "best-practices/"):
        assert any(h.endswith("/" + section) and h.startswith("/") for h in hrefs), (section, hrefs)  # root-relative
    page.locator(".md-content label[for=__search]").click()
    assert page.locator("#__search").is_checked(), "the label opens the site's search"
    page.keyboard.press("Escape")
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    assert [v["id"] for v in result["violations"] if v["impact"] in ("serious", "critical")] == []


WIDE_CODE = ["/production-issues/mirrored-slower-than-one-gpu/", "/production-issues/gpu-oom-batch-too-large/",
             PAGE_TYPES["question"]]  # the pages with the most code lines over 100 characters, and the tracing lab


@pytest.mark.parametrize("path", WIDE_CODE)
def test_code_does_not_scroll_sideways_on_a_1280_px_screen(page, base_url, path):
    page.set_viewport_size(VIEWPORTS["desktop"])
    page.goto(base_url + path)
    scrolling = page.locator(".md-content pre > code").evaluate_all(
        "codes => codes.filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent.slice(0, 60))")
    assert page.locator(".md-content pre > code").count() >= 5 and scrolling == [], scrolling


def test_no_page_skips_a_heading_level():
    skipped = {}
    for html in sorted(SITE.rglob("*.html")):
        text = html.read_text(encoding="utf-8")
        article = text[text.find('<article class="md-content__inner'):text.find("</article>")]
        levels = [int(level) for level in re.findall(r"<h([1-6])[\s>]", article)]
        jumps = [(a, b) for a, b in zip([0] + levels[:-1], levels, strict=True) if b > a + 1]
        if jumps:
            skipped[html.relative_to(SITE).as_posix()] = jumps[:3]
    assert len(list(SITE.rglob("*.html"))) >= 50 and skipped == {}, skipped


def test_every_chart_has_alt_text():
    """A chart's alt text comes from its cell's `# alt:` line (tfv.site.notebooks); none keeps nbconvert's."""
    images = {}
    for html in sorted(SITE.rglob("*.html")):
        text = html.read_text(encoding="utf-8")
        article = text[text.find('<article class="md-content__inner'):text.find("</article>")]
        for tag in re.findall(r"<img\b[^>]*>", article):
            alt = re.search(r'\balt="([^"]*)"', tag)
            images[f"{html.relative_to(SITE).as_posix()}: {tag[:80]}"] = alt.group(1) if alt else ""
    bad = {where: alt for where, alt in images.items() if len(alt) < 40 or "No description has been provided" in alt}
    assert images and bad == {}, bad


def test_every_chart_is_opaque_so_it_reads_on_the_dark_page():
    """A transparent chart would put black axes and labels on the dark scheme's near-black page. Each is a file beside
    its page, with its size, loaded lazily (so no layout shift and no base64 in the HTML)."""
    from PIL import Image

    charts = {}
    for html in sorted(SITE.rglob("*.html")):
        text = html.read_text(encoding="utf-8")
        assert "data:image/png;base64," not in text, f"{html}: a chart inlined (tfv.site.notebooks writes files)"
        for tag in re.findall(r'<img\b[^>]*src="chart-\d+\.png"[^>]*>', text):
            path = html.parent / re.search(r'src="([^"]+)"', tag)[1]
            image = Image.open(path).convert("RGBA")
            w, h = image.size
            assert (f'width="{w}"' in tag and f'height="{h}"' in tag and 'loading="lazy"' in tag), tag[-200:]
            corners = [image.getpixel(xy)[3] for xy in ((0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1))]
            charts[f"{html.relative_to(SITE).as_posix()} #{len(charts)}"] = min(corners)
    assert charts and all(alpha == 255 for alpha in charts.values()), charts


def test_a_chart_cell_without_alt_text_is_named():
    from bs4 import BeautifulSoup

    from tfv.site import notebooks

    cell = ('<div class="jp-CodeCell"><div class="jp-InputArea"><pre>{code}</pre></div>'
            '<div class="jp-OutputArea"><img alt="No description has been provided for this image" src="x.png"></div></div>')
    soup = BeautifulSoup(cell.format(code="# alt: Loss per epoch, falling\nplt.show()")
                         + cell.format(code="fig, ax = plt.subplots()\nplt.show()"), "html.parser")
    assert notebooks.describe_charts(soup) == ["fig, ax = plt.subplots()"]
    assert [img["alt"] for img in soup.select("img")] == ["Loss per epoch, falling",
                                                           "No description has been provided for this image"]


@pytest.mark.parametrize("path", [PAGE_TYPES["question"], PAGE_TYPES["notebook"], "/interview-questions/"])
def test_small_links_have_a_24_px_hit_area(browser, base_url, path):
    """WCAG 2.2 target size, on a touch screen: the page actions, every permalink, every copy-link button."""
    phone = browser.new_context(viewport=VIEWPORTS["phone"], is_mobile=True, has_touch=True).new_page()
    phone.goto(base_url + path)
    boxes = phone.eval_on_selector_all(
        ".tfv-actions a, .md-typeset .headerlink, .md-typeset .tfv-link",
        "els => els.filter(e => e.offsetParent).map(e => [e.className, e.textContent.trim().slice(0, 20),"
        " e.getBoundingClientRect().width, e.getBoundingClientRect().height])")
    small = [box for box in boxes if box[2] < 24 or box[3] < 24]
    assert boxes and small == [], small[:5]
    phone.context.close()


@pytest.mark.parametrize("section", ["interview-questions", "use-cases", "production-issues", "best-practices"])
def test_a_section_index_fits_a_phone(page, base_url, section):
    """Below 600 px each row is a card: nothing on the index is wider than the screen, the title spans the card."""
    page.set_viewport_size(VIEWPORTS["phone"])
    page.goto(base_url + f"/{section}/")
    rows = page.locator(".tfv-pages tbody tr")
    rows.first.wait_for()
    wide = page.evaluate("() => [...document.querySelectorAll('.md-content *')]"
                         ".filter(e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible')"
                         ".map(e => e.className).slice(0, 5)")
    assert page.evaluate("document.documentElement.scrollWidth") <= VIEWPORTS["phone"]["width"]
    assert wide == [], wide
    first = rows.first.locator("td").first.bounding_box()
    assert first["width"] > 0.8 * VIEWPORTS["phone"]["width"] - 60, first  # the title takes the card's width


def test_the_publish_build_refuses_a_chart_without_alt_text_and_names_its_line():
    import types

    from mkdocs.exceptions import PluginError

    from sandbox import mkdocs_config
    from tfv.site import notebooks

    key = "interview-questions/one-trace-not-faster.py"
    line = (DOCS / key).read_text(encoding="utf-8").splitlines().index("import matplotlib.pyplot as plt") + 1
    page = types.SimpleNamespace(file=types.SimpleNamespace(src_uri=notebook_name(key)), toc=None)
    html = ('<div class="jp-Notebook"><div class="jp-CodeCell"><div class="jp-InputArea"><pre>import matplotlib.pyplot as plt'
            '</pre></div><div class="jp-OutputArea"><img alt="" src="x.png"></div></div></div>')
    with pytest.raises(PluginError, match=f"docs/{key}:{line}: add a line `# alt: "):
        notebooks.on_page_content(html, page, mkdocs_config(publish=True), None)
