"""The `--8<--` include: the one grammar for it, a snippet spec expanded by pymdownx.snippets as mkdocs.yml
configures it, the snippet's line, and the files a page includes (for its content hash).

Markdown pages include a snippet on a line of its own inside a fence; notebook pages on a comment line of a code
cell (`# --8<-- "snippets/shared/timing.py:protocol"`), expanded when the notebook is read, so the executed
notebook a reader downloads holds the code itself. Both run the snippet's text as pymdownx renders it.
"""

import re
from functools import cache
from pathlib import Path

from mkdocs.utils.yaml import yaml_load

from tfv.layout import ROOT

LINE = re.compile(r"""^(?P<indent>[ \t]*)--8<--\s+["'](?P<spec>[^"']+)["']\s*$""")          # in a Markdown fence
CELL_LINE = re.compile(r"""^(?P<indent>[ \t]*)#\s*--8<--\s+["'](?P<spec>[^"']+)["']\s*$""", re.M)  # in a cell
INCLUDE = re.compile(r"""--8<--\s+["']([^"':]+)""")  # any include's file name, for the hash


def config():
    """pymdownx.snippets' options as mkdocs.yml gives them, read with MkDocs' own YAML loader (it knows !ENV)
    without loading MkDocs' plugins."""
    return _options((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


@cache  # every page's content hash asks: parse each version of mkdocs.yml once
def _options(text):
    extensions = yaml_load(text)["markdown_extensions"]
    return next(e["pymdownx.snippets"] for e in extensions if isinstance(e, dict) and "pymdownx.snippets" in e)


@cache
def _preprocessor():
    import markdown

    options = dict(config())
    options["base_path"] = [str(ROOT / base) for base in options["base_path"]]  # examples run in a tmp dir
    md = markdown.Markdown(extensions=["pymdownx.snippets"], extension_configs={"pymdownx.snippets": options})
    return md.preprocessors["snippet"]


def expand(spec):
    """The text a `--8<-- "spec"` line stands for, as the rendered page shows it."""
    return "\n".join(_preprocessor().run([f'--8<-- "{spec}"'])) + "\n"


def expand_cell(source):
    """A notebook code cell with each `# --8<-- "spec"` line replaced by the snippet, indented like the line."""
    def replace(match):
        return "".join(match["indent"] + line for line in expand(match["spec"]).splitlines(keepends=True)).rstrip("\n")
    return CELL_LINE.sub(replace, source)


def offset(path, spec):
    """Lines before an included snippet's first line in its file: from the section's start marker (also right
    for an indented section that pymdownx dedents), a `file:start:end` line range, or 0 for a whole file."""
    part = (spec.split(":") + [""])[1]
    if part.isdigit():
        return int(part) - 1
    if part:
        marker = re.compile(rf"--8<--\s*\[start:{re.escape(part)}\]")
        return next(n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if marker.search(line))
    return 0


def included(path, seen=None):
    """Every file a page includes with --8<--, and every file those include, once each."""
    seen = set() if seen is None else seen
    text = Path(path).read_text(encoding="utf-8") if Path(path).exists() else ""
    for name in INCLUDE.findall(text):
        file = ROOT / name
        if file not in seen:
            seen.add(file)
            included(file, seen)
    return seen
