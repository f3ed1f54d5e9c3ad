"""Link previews. Every page gets Open Graph and Twitter tags and its own 1200x630 card image,
drawn at build time with Pillow's bundled font (nothing fetched), naming the page's question and its stamp."""

import hashlib
import html as entities
import re
import shutil
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from tfv.layout import ROOT

SIZE = (1200, 630)
BACKGROUND, TEXT, MUTED, GREEN = "#1e2129", "#f5f5f5", "#b8bcc8", "#5cc27e"
SECTIONS = {"interview-questions": "Interview question", "use-cases": "Use case",
            "production-issues": "Production issue", "best-practices": "Best practice"}
CACHE = ROOT / "build" / "cards"
TAG = re.compile(r"<[^>]+>")
STAMP = re.compile(r'<p class="(tfv-verified|tfv-unverified)">(.*?)(?:<br>|</p>)', re.S)


def plain(fragment):
    return " ".join(entities.unescape(TAG.sub("", fragment)).replace("\u00b6", "").split())  # no permalink ¶


def card_path(page):
    """The card's path inside the site: assets/cards/<page URL with / as ->.png (index.png for the home page)."""
    return f"assets/cards/{page.url.strip('/').replace('/', '-') or 'index'}.png"


def wrap(pen, text, font, width, rows):
    """Lines of text that fit width pixels, at most rows of them (the last one cut with an ellipsis)."""
    lines = []
    for word in text.split():
        if lines and pen.textlength(f"{lines[-1]} {word}", font=font) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    if len(lines) > rows:
        lines = lines[:rows]
        lines[-1] += " …"
    return lines


def draw(title, kind, stamp, verified):
    image = Image.new("RGB", SIZE, BACKGROUND)
    pen = ImageDraw.Draw(image)
    font = ImageFont.load_default  # Pillow's own FreeType font, at any size
    pen.rectangle([0, 0, 16, SIZE[1]], fill=GREEN if verified else MUTED)
    pen.text((72, 60), f"TensorFlow Verified  ·  {kind}", font=font(34), fill=MUTED)
    for row, line in enumerate(wrap(pen, title, font(64), SIZE[0] - 144, 4)):
        pen.text((72, 140 + row * 78), line, font=font(64), fill=TEXT)
    for row, line in enumerate(wrap(pen, stamp, font(30), SIZE[0] - 144, 2)):
        pen.text((72, 490 + row * 44), line, font=font(30), fill=GREEN if verified else MUTED)
    return image


def on_post_page(output, page, config):
    if page.url.startswith("404") or not config.get("site_url"):
        return output
    title = plain(re.search(r"<h1[^>]*>(.*?)</h1>", output, re.S)[1]) if "<h1" in output else page.title
    stamp = STAMP.search(output)
    verified = bool(stamp) and stamp[1] == "tfv-verified"
    line = plain(stamp[2]).removeprefix("✓ ") if stamp else "Every code example on this site ran before publishing"
    kind = SECTIONS.get(page.url.split("/")[0], "Reference")
    target = Path(config["site_dir"]) / card_path(page)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = ("Verified: " if verified else "") + line
    cached = CACHE / (hashlib.sha256(repr((title, kind, text, verified, SIZE)).encode()).hexdigest()[:20] + ".png")
    if not cached.exists():  # drawing and encoding costs ~0.1 s a card: `make serve` rebuilds reuse them
        cached.parent.mkdir(parents=True, exist_ok=True)
        draw(title, kind, text, verified).quantize(32).save(cached, optimize=True)  # 32 colours: a quarter the bytes
    shutil.copyfile(cached, target)
    description = page.meta.get("description") or config.get("site_description") or ""
    image = config["site_url"].rstrip("/") + "/" + card_path(page)
    tags = {"og:type": "article" if stamp else "website", "og:site_name": config["site_name"], "og:title": title,
            "og:description": description, "og:url": page.canonical_url, "og:image": image,
            "og:image:width": str(SIZE[0]), "og:image:height": str(SIZE[1]), "og:image:alt": f"{title}: {line}"}
    twitter = {"twitter:card": "summary_large_image", "twitter:title": title, "twitter:description": description,
               "twitter:image": image}
    meta = "".join(f'<meta property="{k}" content="{entities.escape(v, quote=True)}">' for k, v in tags.items())
    meta += "".join(f'<meta name="{k}" content="{entities.escape(v, quote=True)}">' for k, v in twitter.items())
    return output.replace("</head>", meta + "</head>", 1)
