"""Skip labels come from what the run did (tfv.site.stamp `label`), not from the directive's wording; the one
directive grammar (tfv.directives) reads every form a page uses."""

from sandbox import mkdocs_config
from tfv import directives
from tfv.pages import content_pages, page_key
from tfv.site import stamp

CPU = {"gpu_model": None, "date": "2026-12-01", "examples": [
    {"line": 4, "outcome": "passed", "reason": None},
    {"line": 9, "outcome": "skipped", "reason": "needs a GPU: TensorFlow's peak counter is GPU-only"},
    {"line": 15, "outcome": "skipped", "reason": 'needs "TF Serving" (the tensorflow_model_server binary)'}]}
GPU = {"gpu_model": "NVIDIA L4", "date": "2026-12-02", "examples": [
    {"line": 4, "outcome": "passed", "reason": None}, {"line": 9, "outcome": "passed", "reason": None},
    {"line": 15, "outcome": "skipped", "reason": "needs TF Serving"}]}


def test_a_block_that_ran_has_no_label():
    assert stamp.label(3, CPU, None) is None  # a skip directive above a block the CPU run executed


def test_reason_with_an_apostrophe_survives_whole():
    assert stamp.label(8, CPU, None) == (
        "<strong>Skipped on the CPU run:</strong> needs a GPU: TensorFlow&#x27;s peak counter is GPU-only")


def test_reason_with_quotes_and_parentheses_survives_whole():
    assert "needs &quot;TF Serving&quot; (the tensorflow_model_server binary)" in stamp.label(14, CPU, None)


def test_gpu_report_says_where_the_block_ran():
    assert stamp.label(8, CPU, GPU).endswith(" · ran on the GPU runner (NVIDIA L4, 2026-12-02)")
    assert stamp.label(14, CPU, GPU).endswith(" · skipped on the GPU runner too")
    failed = {**GPU, "examples": [{**GPU["examples"][1], "outcome": "failed"}]}
    assert stamp.label(8, CPU, failed).endswith(" · failed on the GPU runner"), stamp.label(8, CPU, failed)


def test_no_report_says_so():
    assert stamp.label(3, None, None) == "<strong>Not run yet:</strong> this page has no verification report"


def test_directive_lines_include_indented_and_conditional_ones():
    text = ('# T\n\n<!-- skip: next "a" -->\n```python\nx\n```\n\n??? note\n'
            '    <!-- skip: next if(not HAS_GPU, reason="b\'s") -->\n    ```python\n    y\n    ```\n'
            '<!-- not-executed: shell -->\n```bash\nls\n```\n')
    assert directives.skip_lines(text) == [3, 9]


def test_not_executed_label_keeps_every_word():
    assert directives.not_executed_label("needs the TensorBoard web server, which isn't run here") == (
        "<strong>Not executed here:</strong> needs the TensorBoard web server, which isn&#x27;t run here")
    assert directives.not_executed_label('"quoted reason"') == "<strong>Not executed here:</strong> quoted reason"


def test_a_page_reads_only_its_own_reports(monkeypatch):
    """The home page's summary reads every report; any other page reads its own two, so a build reads a
    number of reports linear in the pages (the summary on every page made the build quadratic: 224 s, now 31 s)."""
    import types

    read = []
    real = stamp.read_report
    monkeypatch.setattr(stamp, "read_report", lambda device, key: read.append(key) or real(device, key))
    key = page_key(content_pages()[0])
    page = types.SimpleNamespace(file=types.SimpleNamespace(src_uri=key))
    config = mkdocs_config()
    stamp.on_page_markdown("# T\n\n<!-- skip: next \"r\" -->\n", page, config, None)
    assert read == [key, key], read
    read.clear()
    home = stamp.on_page_markdown("# Home\n\n<!-- verified -->\n", types.SimpleNamespace(
        file=types.SimpleNamespace(src_uri="index.md")), config, None)
    assert "pages verified" in home and len(read) >= len(content_pages()), (home[:300], len(read))
