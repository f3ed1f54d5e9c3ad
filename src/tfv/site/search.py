"""What the search index keeps of a code block: the names it uses, not its text. Code is over half of the index
(1.6 of 3.1 MB at 165 pages) and a reader searches it for API names, which the prose mostly names too. Each
section's code blocks leave its entry; the names they use (qualified names and called functions) that its prose
does not already contain follow the prose, so `set_memory_growth` or `tf.data.Dataset.prefetch` still finds the
section, and the excerpt a result shows is the section's prose. Measured: bench/findings.md, "Search index"."""

import json
import re
from pathlib import Path

from mkdocs.plugins import event_priority

CODE = re.compile(r"<pre>.*?</pre>", re.S)
NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z_]\w{3,}(?=\()")  # a.b.c, or a call of f(


def names_in(code_blocks, prose):
    """The names the code uses that the prose does not contain, once each, in order of first use."""
    names = []
    for block in code_blocks:
        names += [name for name in NAME.findall(block) if name not in names and name not in prose]
    return names


def slim(text):
    """A section's indexed text: its prose, then the names its code blocks use (in one code element)."""
    blocks = CODE.findall(text)
    prose = CODE.sub(" ", text)
    prose = re.sub(r"\s{2,}", " ", prose).strip()
    names = names_in(blocks, prose)
    return prose + (f" <p><code>{' '.join(names)}</code></p>" if names else "")


@event_priority(-10)  # after Material's search plugin (priority 0) has written the index
def on_post_build(config):
    path = Path(config.site_dir) / "search" / "search_index.json"
    if not path.is_file():
        return
    index = json.loads(path.read_text(encoding="utf-8"))
    for entry in index["docs"]:
        entry["text"] = slim(entry["text"])
    path.write_text(json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
