"""Bad input fails loudly and names the file (and line): each case runs the real machinery on a
throw-away copy of the project holding one broken page."""

import pytest
from sandbox import BIN, run


def pytest_page(project, name, text, **env):
    page = project / "docs/qa" / name
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text)
    return run(project, str(BIN / "pytest"), "-p", "no:cacheprovider", f"docs/qa/{name}", **env)


def test_failing_assert_names_page_and_line(project):
    code, out = pytest_page(project, "bad.md", "# Bad\n\ntext\n\n```python\nx = 1\nassert x == 2, 'x is not 2'\n```\n")
    assert code == 1 and "docs/qa/bad.md:7" in out and "x is not 2" in out, out


def test_failing_titled_block_runs_and_fails(project):
    code, out = pytest_page(project, "t.md", '# T\n\n```python title="demo.py" hl_lines="2"\nraise ValueError("boom")\n```\n')
    assert code == 1 and "docs/qa/t.md:4" in out and "ValueError: boom" in out, out


def test_failing_snippet_names_snippet_file_and_line(project):
    code, out = pytest_page(project, "s.md", '# S\n\n```python\na = 1\n--8<-- "snippets/qa/lab.py:part"\n```\n')
    assert code == 1 and "snippets/qa/lab.py:4" in out and "b is 2" in out, out


@pytest.mark.parametrize("spec, message", [("snippets/qa/missing.py", "snippets/qa/missing.py' could not be found"),
                                           ("snippets/qa/lab.py:nope", "section 'nope' could not be located")])
def test_missing_snippet_or_section_fails(project, spec, message):
    code, out = pytest_page(project, "m.md", f'# M\n\n```python\n--8<-- "{spec}"\n```\n')
    assert code == 1 and message in out and "docs/qa/m.md" in out, out


def test_notebook_cell_that_raises_names_file_and_line(project):
    code, out = pytest_page(project, "nb.py", "# %% [markdown]\n# # NB\n\n# %%\nx = 1\n\n# %%\nraise KeyError('cell two')\n")
    assert code == 1 and "docs/qa/nb.py:7: notebook cell raised" in out and "KeyError" in out, out


def test_notebook_cell_that_shows_a_tensorflow_warning_names_file_and_line(project):
    code, out = pytest_page(project, "nb.py", "# %%\nimport tensorflow as tf\n\n# %%\n"
                            "tf.get_logger().warning('retracing')\n")
    assert code == 1 and "docs/qa/nb.py:4: notebook cell shows a TensorFlow warning" in out, out


def test_require_gpu_without_gpu_fails_at_once(project):
    code, out = pytest_page(project, "g.md", "# G\n\n```python\nx = 1\n```\n", REQUIRE_GPU="1")
    assert code == 3 and "REQUIRE_GPU=1 but TensorFlow sees no GPU" in out, out
    assert not (project / "build/report").exists(), "no report may be written"


def test_link_to_missing_anchor_fails_the_build(project):
    (project / "docs/index.md").write_text("# Home\n\n## Part { #part }\n\n[x](#nowhere) [y](#part)\n")
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict")
    assert code == 1 and "index.md" in out and "#nowhere" in out and "#part'" not in out, out


def test_publish_refuses_a_failed_or_missing_report(project):
    code, out = pytest_page(project, "bad.md", "# Bad\n\n```python\nassert False, 'no'\n```\n")
    assert code == 1, out
    (project / "docs/qa/fine.md").write_text("# Fine\n\n```python\nx = 1\n```\n")  # never run: no report
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="1")
    assert code == 1 and "refusing to publish" in out, out
    assert "docs/qa/bad.md: 1 example(s) failed on cpu, first at line 3" in out, out
    assert "docs/qa/fine.md: no cpu report" in out, out


def test_publish_refuses_a_stale_report(project):
    code, out = pytest_page(project, "p.md", "# P\n\n```python\nx = 1\n```\n")
    assert code == 0, out
    assert run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="1")[0] == 0
    (project / "docs/qa/p.md").write_text("# P\n\n```python\nx = 2\n```\n")  # edited after its run
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="1")
    assert code == 1 and "docs/qa/p.md: cpu report is stale" in out, out
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="1", TFV_COMMIT="f" * 40)
    assert "is from commit" in out, out


def test_network_is_blocked_unless_the_page_opts_into_loopback(project):
    probe = ("```python\nimport socket\ntry:\n    socket.create_connection(('127.0.0.1', 9), timeout=2)\n"
             "except OSError as e:\n    CHECK\n```\n")
    outside = "\n```python\nsocket.socket().connect(('192.0.2.1', 80))\n```\n"
    code, out = pytest_page(project, "net.md", "# Net\n\n" + probe.replace("CHECK", "pass") + outside)
    assert code == 1 and "network blocked in examples: refused ('192.0.2.1', 80)" in out, out
    opted_in = probe.replace("CHECK", "assert 'blocked' not in str(e), e")
    code, out = pytest_page(project, "lo.md", "---\nnetwork: loopback\n---\n# Lo\n\n" + opted_in)
    assert code == 0, out
    code, out = pytest_page(project, "no.md", "# No\n\n" + probe.replace("CHECK", "assert 'opt into loopback' in str(e), e"))
    assert code == 0, out
