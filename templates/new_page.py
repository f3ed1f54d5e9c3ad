"""make new PAGE=<section>/<slug>: a new page from its section's template, which runs and passes as it is."""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(page: str) -> Path:
    match = re.fullmatch(r"([a-z-]+)/([a-z0-9]+(?:-[a-z0-9]+)*)", page)
    template = ROOT / "templates" / f"{match[1]}.md" if match else None
    if template is None or not template.exists():
        sections = sorted(p.stem for p in (ROOT / "templates").glob("*.md"))
        sys.exit(f"PAGE must be <section>/<slug>, a section one of {sections}, a slug like my-topic; got {page!r}")
    target = ROOT / "docs" / f"{page}.md"
    if target.exists():
        sys.exit(f"{target.relative_to(ROOT)} exists already")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(template.read_text(encoding="utf-8"), encoding="utf-8")
    return target


if __name__ == "__main__":
    created = main(sys.argv[1] if len(sys.argv) > 1 else "")
    print(f"created {created.relative_to(ROOT)}: edit it, then run .venv/bin/pytest {created.relative_to(ROOT)}")
