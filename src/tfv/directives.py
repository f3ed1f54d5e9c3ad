"""The in-page directives, one grammar for the run and the build: `<!-- skip: next "why" -->` above a block the
run skips (Sybil's skip directive, allowed only with a written reason), `<!-- not-executed: why -->` above a
block that is not Python, and the visible label the build puts under either (the class the census looks for)."""

import ast
import html
import re

DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)<!--\s*(?P<kind>skip|not-executed):\s*(?P<text>.*?)\s*-->[ \t]*$", re.M)
NOT_EXECUTED = re.compile(r"<!--\s*not-executed:\s*(?P<text>.*?)\s*-->")  # anywhere (a notebook's Markdown cell)
LABEL = "tfv-not-run"  # the class of every visible label


def skip_problem(action, argument):
    """Why Sybil's parsed skip directive (action, argument) is not allowed here; None when it is."""
    if action != "next":
        return f"`skip: {action}` is not allowed: put `skip: next \"reason\"` above each block to skip"
    try:
        expression = ast.parse((argument or "").strip().replace("if(", "if_(", 1), mode="eval").body
    except SyntaxError:
        return f"cannot read the skip's reason: {argument!r}"
    if isinstance(expression, ast.Call) and getattr(expression.func, "id", "") == "if_":
        reasons = [k.value for k in expression.keywords if k.arg == "reason"] + expression.args[1:2]
        reason = reasons[0] if len(reasons) == 1 else None
    else:
        reason = expression
    if not (isinstance(reason, ast.Constant) and isinstance(reason.value, str) and reason.value.strip()):
        return 'a skip needs a written reason: `skip: next "why"` or `skip: next if(not HAS_GPU, reason="why")`'
    return None


def skip_lines(text):
    """The source line of every skip directive in a page's text, in order."""
    return [text.count("\n", 0, m.start()) + 1 for m in DIRECTIVE.finditer(text) if m["kind"] == "skip"]


def not_executed_label(text):
    """`<!-- not-executed: why -->` marks a non-Python block: its reason as written, whole."""
    reason = text.strip()
    if len(reason) > 1 and reason[0] == reason[-1] and reason[0] in "\"'":
        reason = reason[1:-1]
    return f"<strong>Not executed here:</strong> {html.escape(reason)}"


def visible(label, indent=""):
    """A label as the page shows it."""
    return f'{indent}<p class="{LABEL}">{label}</p>'
