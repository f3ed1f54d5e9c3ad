"""The identity of a code block: whether a fence is Python, and the digest that ties a rendered block to its run."""

import hashlib
import textwrap
from pathlib import Path

from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound


def is_python(language):
    """Whether Pygments highlights a fence's language as Python (python, py, py3, ipython3, pycon, ...)."""
    try:
        lexer = get_lexer_by_name(language.strip().lstrip("{.").split()[0]) if language.strip() else None
    except (ClassNotFound, IndexError):
        return False
    return lexer is not None and "python" in lexer.name.lower() and "traceback" not in lexer.name.lower()


def lexer_name(language):
    """The name of the Pygments lexer a fence's language resolves to ('sh' -> 'Bash'), or None."""
    try:
        return get_lexer_by_name(language).name
    except ClassNotFound:
        return None


def digest(code):
    """The digest of a block of code as a reader sees it: indentation, trailing spaces and blank edges ignored."""
    lines = textwrap.dedent(code.expandtabs()).strip("\n").splitlines()
    return hashlib.sha256("\n".join(line.rstrip() for line in lines).encode()).hexdigest()


def file_digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
