"""Markdown pages under Sybil: every fence Pygments shows as Python runs, in order, in one namespace per page;
`--8<--` lines run the snippet under its own file and line; skips need a written reason; a skipped block is
still compiled and linted against the page's namespace."""

import subprocess
import sys
from pathlib import Path

from sybil import Sybil
from sybil.evaluators.python import PythonEvaluator, pad
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

from tfv import includes
from tfv.code import digest, is_python
from tfv.directives import skip_problem
from tfv.layout import DOCS, ROOT, rel
from tfv.run import isolation
from tfv.run.recorder import RAN


class IncludingEvaluator(PythonEvaluator):
    """Runs a block; a `--8<-- "file:section"` line is expanded by pymdownx itself (tfv.includes) and compiled
    under the snippet's own file name and line. Records the digest of the code as the page shows it, which is
    how the build matches a rendered block to its execution."""

    @classmethod
    def shown(cls, example):
        """(code as the reader sees it, [(source, filename) chunks to compile])."""
        chunks, shown, start = [], [], 0
        lines = str(example.parsed).splitlines(keepends=True)
        first_line = example.line + example.parsed.line_offset
        for i, line in enumerate(lines + [None]):
            match = includes.LINE.match(line) if line is not None else None
            if match or line is None:
                if i > start:
                    chunks.append((pad("".join(lines[start:i]), first_line + start), str(example.path)))
                    shown.append("".join(lines[start:i]))
                if match:
                    path, text = ROOT / match["spec"].split(":")[0], includes.expand(match["spec"])
                    chunks.append((pad(text, includes.offset(path, match["spec"])), str(path)))
                    shown.append("".join(match["indent"] + part for part in text.splitlines(keepends=True)))
                start = i + 1
        return "".join(shown), chunks

    def __call__(self, example):
        __tracebackhide__ = True
        code, chunks = self.shown(example)
        for source, filename in chunks:
            exec(compile(source, filename, "exec", flags=self.flags, dont_inherit=True), example.namespace)
        example.namespace.pop("__builtins__", None)
        RAN.append(digest(code))


class MaterialFenceParser(CodeBlockParser):
    """Sybil's stock parser runs only fences whose info string is exactly `python`; this one runs every
    fence Pygments highlights as Python: ```py, ```python3, ```python title="…", ``` {.python hl_lines="2"}."""

    def __call__(self, document):
        for region in self.lexers(document):
            if is_python(region.lexemes["arguments"]):
                region.parsed = region.lexemes["source"]
                region.evaluator = self._evaluator
                yield region


class PythonParser(PythonCodeBlockParser):
    codeblock_parser_class = MaterialFenceParser

    def __init__(self):
        super().__init__()
        self.codeblock_parser = MaterialFenceParser("python", IncludingEvaluator())


class ReasonedSkipParser(SkipParser):
    """Sybil's skip directive, accepted only as `skip: next "reason"` or `skip: next if(cond, reason="...")`:
    a skip without a reason would pass silently, and a `start`...`end` range would hide blocks that show no label."""

    def __call__(self, document):
        for region in super().__call__(document):
            problem = skip_problem(*region.parsed)
            if problem:
                line = document.text.count("\n", 0, region.start) + 1
                raise ValueError(f"{rel(document.path)}:{line}: {problem}")
            yield region


def page_path(document):
    """Not a parser: records the page path so `setup` can read the page's front matter."""
    document.namespace["__file__"] = document.path
    return []


SYBIL = Sybil(parsers=[page_path, PythonParser(), ReasonedSkipParser()], path=str(DOCS), patterns=["*.md"],
              setup=isolation.setup, teardown=isolation.teardown)
collect_markdown = SYBIL.pytest()


def is_python_example(item):
    from sybil.integration.pytest import SybilItem

    return isinstance(item, SybilItem) and isinstance(item.example.region.evaluator, PythonEvaluator)


def lint_skipped(example):
    """A block that does not run here (a GPU-only block on the CPU runner) is still compiled and checked
    for undefined names against the page's namespace, so the GPU run cannot fail on a typo. Its digest."""
    code, chunks = IncludingEvaluator.shown(example)
    for source, filename in chunks:
        compile(source, filename, "exec", dont_inherit=True)
    known = sorted(set(example.namespace) | {"__file__"})
    result = subprocess.run(
        [str(Path(sys.executable).parent / "ruff"), "check", "--no-cache", "--isolated", "--output-format", "concise",
         "--select", "F821,F822,F823,E9", "--config", f"builtins = {known!r}".replace("'", '"'),
         "--stdin-filename", "block.py", "-"],  # a .md name would make ruff read Markdown
        input=pad(code, example.line + example.parsed.line_offset), capture_output=True, text=True)
    if result.returncode != 0:
        found = (result.stdout.strip() or result.stderr.strip()).replace("block.py:", f"{rel(example.path)}:")
        raise SyntaxError(f"skipped block does not lint:\n{found}")
    return digest(code)
