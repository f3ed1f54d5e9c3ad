"""Links that last: every published page URL, H2 anchor and follow-up anchor is in the committed registry
(tests/published-links.txt); one may disappear only when mkdocs.yml redirects its page.
After adding pages or sections, update the registry: python tests/test_links.py --update"""

import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"
REGISTRY = ROOT / "tests/published-links.txt"
H2 = re.compile(r"<h2[^>]*\sid=\"([^\"]+)\"")  # attr_list puts the id after a class
FOLLOW_UP = re.compile(r"<details class=\"question\" id=\"(fu-[^\"]+)\"")  # tfv.site.links


NEEDS_SITE = pytest.mark.skipif(not (SITE / "index.html").exists(), reason="no built site: run `make site` first")


def published():
    links = set()
    for html in SITE.rglob("index.html"):
        url = "/" + html.parent.relative_to(SITE).as_posix() + "/" if html.parent != SITE else "/"
        if url.startswith(("/assets/", "/search/")) or html.parent.name == "404":
            continue
        links.add(url)
        article = html.read_text(encoding="utf-8").split('<article class="md-content__inner', 1)[-1]
        links.update(f"{url}#{anchor}" for anchor in H2.findall(article) + FOLLOW_UP.findall(article))
    return links


def redirected_pages():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    plugins = [p for p in config["plugins"] if isinstance(p, dict) and "redirects" in p]
    maps = plugins[0]["redirects"].get("redirect_maps") or {} if plugins else {}
    return {"/" + re.sub(r"(index)?\.md$", "", old).removesuffix("/") + "/" for old in maps}


@NEEDS_SITE
def test_no_published_link_disappears():
    registry = set(REGISTRY.read_text().split())
    current = published()
    moved = redirected_pages()
    lost = sorted(link for link in registry - current if link.split("#")[0] not in moved)
    assert not lost, f"published links disappeared (keep the id/slug, or redirect the page in mkdocs.yml): {lost}"
    new = sorted(current - registry)
    assert not new, f"new links are not in the registry; run `python tests/test_links.py --update`: {new[:20]}"


def test_every_h2_has_an_explicit_id():
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for number, line in enumerate(page.read_text().splitlines(), 1):
            if line.startswith("## "):
                explicit = re.search(r"\{ ?#[a-z0-9-]+( \.[a-z-]+)* ?\}\s*$", line)  # an id, then any classes
                assert explicit, f"{page.relative_to(ROOT)}:{number}: H2 without {{ #id }}"
    for notebook in sorted((ROOT / "docs").rglob("*.py")):
        text = notebook.read_text()
        assert not re.search(r"^# ## ", text, re.M), f"{notebook.relative_to(ROOT)}: write H2s as <h2 id=...>"


@NEEDS_SITE
def test_every_h2_has_a_permalink_and_a_toc_entry():
    pages = [html for html in SITE.glob("*/*/index.html") if html.parent.parent.name != "tags"]
    assert len(pages) >= 40, "site/ is incomplete: run `make site` first"
    for html in pages:
        text = html.read_text(encoding="utf-8")
        article = text.split('<article class="md-content__inner', 1)[-1]
        toc = text.split('data-md-component="toc"', 1)[-1].split('<div class="md-content"', 1)[0]
        anchors = H2.findall(article)
        assert not anchors or 'data-md-component="toc"' in text, f"{html.relative_to(SITE)}: no table of contents"
        for anchor in anchors:
            where = f"{html.relative_to(SITE).parent}/#{anchor}"
            assert f'<a class="headerlink" href="#{anchor}"' in article, f"{where}: the H2 has no permalink"
            assert f'href="#{anchor}"' in toc, f"{where}: the H2 is not in the table of contents"


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    REGISTRY.write_text("".join(f"{link}\n" for link in sorted(published() | set(REGISTRY.read_text().split())
                                                                   if REGISTRY.exists() else published())))
    print(f"{REGISTRY.relative_to(ROOT)}: {len(REGISTRY.read_text().split())} links")
