"""Notebook pages: a jupytext percent file (docs/<section>/<slug>.py) executed once by nbclient, in a kernel set up
as a Markdown page's namespace is (tfv.run.kernel), its outputs kept in build/executed/ (the site renders that
notebook), every failure named by the source line of its cell."""

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from pymdownx.snippets import SnippetMissingError

from tfv.code import digest, file_digest
from tfv.includes import CELL_LINE
from tfv.layout import ROOT, rel
from tfv.pages import NOTEBOOK_HEADER, executed_notebook, front_matter, page_key, read_notebook
from tfv.run.kernel import prelude
from tfv.run.recorder import RECORDED

REFUSED_TAGS = {"skip-execution", "raises-exception"}  # nbclient would skip the cell, or let it raise
TIMEOUT = 300  # seconds a cell may run, as pytest-timeout allows a test (pyproject.toml)


class NotebookItem(pytest.Item):
    def runtest(self):
        import nbformat
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

        try:
            notebook = read_notebook(self.path)
        except SnippetMissingError as error:  # a `# --8<--` line naming a missing snippet or section: its line
            text = self.path.read_text(encoding="utf-8").splitlines()
            named = [n for n, t in enumerate(text, 1) if (m := CELL_LINE.match(t))
                     and any(part and f"'{part}'" in str(error) for part in m["spec"].split(":"))]
            raise NotebookCellError(self.path, (named or [1])[0], f"include failed: {error}") from None
        lines = _cell_lines(self.path, len(notebook.cells))
        for index, cell in enumerate(notebook.cells):
            refused = REFUSED_TAGS & set(cell.metadata.get("tags", []))
            if refused or cell.cell_type == "raw":
                what = f"is tagged {sorted(refused)}" if refused else "is a raw cell"
                raise NotebookCellError(self.path, lines[index], f"cell {what}: every cell of a page must run and pass")
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        workdir = tempfile.mkdtemp(prefix=f"tfv-{self.path.stem}-")
        state = Path(tempfile.mkdtemp(prefix="tfv-kernel-")) / "state.json"  # outside the page's working folder
        current = [0]
        client = NotebookClient(notebook, timeout=TIMEOUT, kernel_name="python3", allow_errors=False,
                                resources={"metadata": {"path": workdir}},
                                on_cell_start=lambda cell, cell_index: current.__setitem__(0, cell_index))
        loopback = front_matter(self.path)[0].get("network") == "loopback"
        client.on_notebook_start = lambda notebook: self._prelude(client, loopback, state)
        try:
            client.execute(env={**os.environ, "TFV_ROOT": str(ROOT)})  # the kernel starts in the page's working folder
        except CellExecutionError as error:
            raise NotebookCellError(self.path, lines[current[0]], f"notebook cell raised\n{error}") from None
        except CellTimeoutError:
            raise NotebookCellError(self.path, lines[current[0]], f"notebook cell timed out ({TIMEOUT} s)") from None
        except DeadKernelError as error:
            raise NotebookCellError(self.path, lines[current[0]], f"the kernel died in this cell: {error}") from None
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
            if state.exists():  # the prelude ran: the kernel's facts, and what its cells recorded
                kernel = json.loads(state.read_text())
                RECORDED.extend(kernel["results"].items())  # as `record` on a Markdown page
                self.user_properties.append(("facts", kernel["facts"]))  # the kernel ran the cells, not this process
            shutil.rmtree(state.parent, ignore_errors=True)
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type == "code" and cell.source.strip() and cell.get("execution_count") is None:
                raise NotebookCellError(self.path, lines[index], "cell did not run")
            for output in cell.get("outputs", []):
                if "WARNING:tensorflow" in output.get("text", ""):  # outputs are published as they are
                    raise NotebookCellError(self.path, lines[index], "notebook cell shows a TensorFlow warning on "
                                            f"the page; fix its cause:\n{output['text'][:300]}")
        target = executed_notebook(page_key(self.path))
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, target)
        ran = [c for c in notebook.cells if c.cell_type == "code" and c.get("execution_count") is not None]
        self.user_properties += [("cells", len(ran)), ("ran", [digest(c.source) for c in ran]),
                                 ("notebook", file_digest(target))]

    async def _prelude(self, client, loopback, state):
        """Run tfv.run.kernel's prelude in the fresh kernel; a failure there is the page's first line's."""
        reply = await client.kc.execute_interactive(prelude(loopback, state), store_history=False, timeout=TIMEOUT,
                                                    output_hook=lambda message: None)
        if reply["content"]["status"] != "ok":
            content = reply["content"]
            raise NotebookCellError(self.path, 1, f"the page's kernel could not be set up: "
                                    f"{content.get('ename')}: {content.get('evalue')}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, NotebookCellError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, 0, f"notebook {self.path.name}"


class NotebookCellError(Exception):
    def __init__(self, path, line, message):
        super().__init__(f"{rel(path)}:{line}: {message}")


def _cell_lines(path, count):
    """The line where each cell starts in a jupytext percent file (1-based): code before the first
    `# %%` marker, when jupytext made a cell of it, starts at its own first line."""
    text = Path(path).read_text(encoding="utf-8").splitlines()
    markers = [n for n, line in enumerate(text, 1) if line.startswith("# %%")]
    if count > len(markers):
        header = NOTEBOOK_HEADER.match("\n".join(text) + "\n")
        skip = header.group(0).count("\n") if header else 0
        markers.insert(0, next(n for n, line in enumerate(text, 1) if n > skip and line.strip()))
    return markers + [1] * (count - len(markers))


class NotebookFile(pytest.File):
    def collect(self):
        yield NotebookItem.from_parent(self, name=self.path.name)
