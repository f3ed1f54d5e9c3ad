"""Link previews on the built site (tfv.site.cards): every page in the sitemap carries Open Graph and Twitter
tags, its og:url is its canonical URL, and its card image exists at the declared size. Needs `make site`."""

import re
from urllib.parse import urlparse

import pytest
from bs4 import BeautifulSoup
from PIL import Image

from test_links import NEEDS_SITE, SITE

REQUIRED = ["og:title", "og:description", "og:url", "og:image", "og:image:width", "og:image:height", "og:type"]


def sitemap_urls():
    return re.findall(r"<loc>([^<]+)</loc>", (SITE / "sitemap.xml").read_text(encoding="utf-8"))


def local(url, base):
    """The file in site/ that serves an absolute URL under the site's base path."""
    path = urlparse(url).path.removeprefix(urlparse(base).path)
    return SITE / path / "index.html" if not path.endswith(".png") else SITE / path


@NEEDS_SITE
def test_every_page_in_the_sitemap_has_a_preview():
    urls = sitemap_urls()
    assert len(urls) >= 100, f"the sitemap lists {len(urls)} pages: run `make site` first"
    base = min(urls, key=len)  # the home page is the shortest URL
    problems = []
    for url in urls:
        soup = BeautifulSoup(local(url, base).read_text(encoding="utf-8"), "html.parser")
        og = {m["property"]: m["content"] for m in soup.find_all("meta", property=True)}
        tw = {m["name"]: m["content"] for m in soup.find_all("meta", attrs={"name": re.compile("^twitter:")})}
        canonical = soup.find("link", rel="canonical")["href"]
        missing = [k for k in REQUIRED if not og.get(k, "").strip()]
        if missing or tw.get("twitter:card") != "summary_large_image" or not tw.get("twitter:image"):
            problems.append(f"{url}: missing {missing or 'twitter tags'}")
            continue
        if og["og:url"] != canonical or canonical != url:
            problems.append(f"{url}: og:url {og['og:url']} / canonical {canonical}")
        card = local(og["og:image"], base)
        if not card.exists():
            problems.append(f"{url}: no card at {card.relative_to(SITE)}")
            continue
        with Image.open(card) as image:
            size = image.size
        if size != (int(og["og:image:width"]), int(og["og:image:height"])) or size != (1200, 630):
            problems.append(f"{url}: card is {size}, declared {og['og:image:width']}x{og['og:image:height']}")
    assert not problems, "\n".join(problems[:20])


@NEEDS_SITE
@pytest.mark.parametrize("path", ["interview-questions/gradient-tape/index.html"])
def test_a_question_card_names_the_question_and_its_stamp(path):
    soup = BeautifulSoup((SITE / path).read_text(encoding="utf-8"), "html.parser")
    alt = soup.find("meta", property="og:image:alt")["content"]
    title = soup.find("meta", property="og:title")["content"]
    assert title == soup.h1.get_text(" ", strip=True).replace("¶", "").strip(), title
    assert alt.startswith(title) and "TF 2." in alt, alt     # the stamp's versions are in the card's text
