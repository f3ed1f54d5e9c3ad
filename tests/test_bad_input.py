"""Bad input fails loudly and names the file (and line): each case runs the real machinery on a
throw-away copy of the project holding one broken page."""

import pytest

from sandbox import BIN, run


def pytest_page(project, name, text, **env):
    page = project.path / "docs/interview-questions" / name
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text)
    return run(project, str(BIN / "pytest"), "-p", "no:cacheprovider", f"docs/interview-questions/{name}", **env)


def test_failing_assert_names_page_and_line(project):
    code, out = pytest_page(project, "bad.md", "# Bad\n\ntext\n\n```python\nx = 1\nassert x == 2, 'x is not 2'\n```\n")
    assert code == 1 and "docs/interview-questions/bad.md:7" in out and "x is not 2" in out, out


def test_failing_titled_block_runs_and_fails(project):
    code, out = pytest_page(project, "t.md", '# T\n\n```python title="demo.py" hl_lines="2"\nraise ValueError("boom")\n```\n')
    assert code == 1 and "docs/interview-questions/t.md:4" in out and "ValueError: boom" in out, out


def test_failing_snippet_names_snippet_file_and_line(project):
    code, out = pytest_page(project, "s.md", '# S\n\n```python\na = 1\n--8<-- "snippets/interview-questions/lab.py:part"\n```\n')
    assert code == 1 and "snippets/interview-questions/lab.py:4" in out and "b is 2" in out, out


@pytest.mark.parametrize("spec, message", [
    ("snippets/interview-questions/missing.py", "snippets/interview-questions/missing.py' could not be found"),
    ("snippets/interview-questions/lab.py:nope", "section 'nope' could not be located")])
def test_missing_snippet_or_section_fails(project, spec, message):
    code, out = pytest_page(project, "m.md", f'# M\n\n```python\n--8<-- "{spec}"\n```\n')
    assert code == 1 and message in out and "docs/interview-questions/m.md" in out, out


def test_notebook_cell_that_raises_names_file_and_line(project):
    code, out = pytest_page(project, "nb.py", "# %% [markdown]\n# # NB\n\n# %%\nx = 1\n\n# %%\nraise KeyError('cell two')\n")
    assert code == 1 and "docs/interview-questions/nb.py:7: notebook cell raised" in out and "KeyError" in out, out


@pytest.mark.parametrize("spec, message", [  # a `# --8<--` line in a cell is the snippet itself: its assert runs
    ("snippets/interview-questions/lab.py:part", "inc.py:1: notebook cell raised"),
    ("snippets/interview-questions/missing.py", "inc.py:3: include failed")])
def test_notebook_cell_runs_its_include_or_names_the_missing_one(project, spec, message):
    code, out = pytest_page(project, "inc.py", f'# %%\na = 1\n# --8<-- "{spec}"\n')
    detail = "b is 2" if "lab.py" in spec else f"{spec}' could not be found"
    assert code == 1 and f"docs/interview-questions/{message}" in out and detail in out, out


def test_notebook_cell_that_shows_a_tensorflow_warning_names_file_and_line(project):
    code, out = pytest_page(project, "nb.py", "# %%\nimport tensorflow as tf\n\n# %%\n"
                            "tf.get_logger().warning('retracing')\n")
    assert code == 1 and "docs/interview-questions/nb.py:4: notebook cell shows a TensorFlow warning" in out, out


def test_require_gpu_without_gpu_fails_at_once(project):
    code, out = pytest_page(project, "g.md", "# G\n\n```python\nx = 1\n```\n", TFV_REQUIRE_GPU="1")
    assert code == 3 and "TFV_REQUIRE_GPU=1 but TensorFlow sees no GPU" in out, out
    assert not (project.path / "build/report").exists(), "no report may be written"


def test_link_to_missing_anchor_fails_the_build(project):
    (project.path / "docs/index.md").write_text("# Home\n\n## Part { #part }\n\n[x](#nowhere) [y](#part)\n")
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict")
    assert code == 1 and "index.md" in out and "#nowhere" in out and "#part'" not in out, out


def test_publish_refuses_a_failed_or_missing_report(project):
    code, out = pytest_page(project, "bad.md", "# Bad\n\n```python\nassert False, 'no'\n```\n")
    assert code == 1, out
    (project.path / "docs/interview-questions/fine.md").write_text("# Fine\n\n```python\nx = 1\n```\n")  # never run: no report
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="true")
    assert code == 1 and "refusing to publish" in out, out
    assert "docs/interview-questions/bad.md: 1 example(s) failed on cpu, first at line 3" in out, out
    assert "docs/interview-questions/fine.md: no cpu report" in out, out


def test_publish_refuses_a_stale_report(project):
    code, out = pytest_page(project, "p.md", "# P\n\n```python\nx = 1\n```\n")
    assert code == 0, out
    assert run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="true")[0] == 0
    (project.path / "docs/interview-questions/p.md").write_text("# P\n\n```python\nx = 2\n```\n")  # edited after its run
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="true")
    assert code == 1 and "docs/interview-questions/p.md: cpu report is stale" in out, out
    code, out = run(project, str(BIN / "mkdocs"), "build", "--strict", TFV_PUBLISH="true", TFV_COMMIT="f" * 40)
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


@pytest.mark.parametrize("directive", ['skip: next', "skip: next if(True)", 'skip: next ""', "skip: next if(True, reason='')",
                                       'skip: start "a range"', "skip:next", "skip: next some_variable"])
def test_skip_without_a_written_reason_fails_at_collection(project, directive):
    code, out = pytest_page(project, "s.md", f"# S\n\n<!-- {directive} -->\n```python\nassert False\n```\n")
    assert code != 0 and "docs/interview-questions/s.md:3:" in out, out


def test_gpu_only_block_is_linted_on_cpu(project):
    code, out = pytest_page(project, "g.md", "# G\n\n```python\nx = 1\n```\n\n"
                            '<!-- skip: next if(not HAS_GPU, reason="needs a GPU: a test") -->\n'
                            "```python\ny = x + undefined_name\n```\n")
    assert code == 1 and "g.md:8" in out and "undefined_name" in out, out


@pytest.mark.parametrize("cell", ['# %% tags=["raises-exception"]\nraise KeyError(1)\n',
                                  '# %% tags=["skip-execution"]\nraise KeyError(1)\n', "# %% [raw]\n# x = 1\n"])
def test_notebook_cells_that_would_not_run_are_refused(project, cell):
    code, out = pytest_page(project, "nb.py", "# %% [markdown]\n# # NB\n\n# %%\nx = 1\n\n" + cell)
    assert code == 1 and "docs/interview-questions/nb.py:7: cell " in out, out


def test_code_before_the_first_notebook_cell_marker_is_reported_at_its_line(project):
    code, out = pytest_page(project, "nb.py", "# ---\n# description: x\n# ---\n\nimport os\nraise KeyError('early')\n\n"
                            "# %%\nx = 1\n")
    assert code == 1 and "docs/interview-questions/nb.py:5: notebook cell raised" in out, out


def test_kernel_death_names_the_page_and_cell(project):
    code, out = pytest_page(project, "nb.py", "# %%\nx = 1\n\n# %%\nimport os\nos._exit(3)\n")
    assert code == 1 and "docs/interview-questions/nb.py:4: the kernel died in this cell" in out, out


def test_broken_front_matter_fails_alone(project):
    (project.path / "docs/interview-questions").mkdir(parents=True)
    (project.path / "docs/interview-questions/good.md").write_text("# Good\n\n```python\nx = 1\n```\n")
    bad = {"yaml.md": "---\ntags: [a\n---\n", "list.md": "---\n- a\n---\n", "budget.md": "---\nbudget: {reason: slow}\n---\n"}
    for name, front in bad.items():
        (project.path / "docs/interview-questions" / name).write_text(front + "# Bad\n\n```python\nx = 1\n```\n")
    code, out = run(project, str(BIN / "pytest"), "-p", "no:cacheprovider", "docs")
    assert code == 1, out
    for name in bad:
        assert f"docs/interview-questions/{name}:1: " in out, (name, out)
    assert (project.path / "build/report/cpu/interview-questions/good.md.json").exists(), "the good page lost its report"


def test_sendto_and_sendmsg_are_blocked_too(project):
    code, out = pytest_page(project, "udp.md", "# U\n\n```python\nimport socket\n"
                            "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                            "to = ('192.0.2.1', 53)\n"
                            "for send in (lambda: s.sendto(b'x', to), lambda: s.sendmsg([b'x'], [], 0, to)):\n"
                            "    try:\n        send()\n        raise AssertionError('sent')\n"
                            "    except OSError as e:\n        assert 'network blocked' in str(e), e\n```\n")
    assert code == 0, out


def test_state_a_page_leaves_behind_is_reset_or_detected(project):
    (project.path / "docs/interview-questions").mkdir(parents=True)
    (project.path / "docs/interview-questions/a.md").write_text(
        "# A\n\n```python\nimport os, warnings\nos.environ['TFV_LEAK'] = '1'\nwarnings.simplefilter('ignore')\n"
        "import keras\nkeras.config.set_dtype_policy('mixed_float16')\n```\n")
    (project.path / "docs/interview-questions/b.md").write_text(
        "# B\n\n```python\nimport os, warnings, keras\nassert 'TFV_LEAK' not in os.environ\n"
        "assert keras.config.dtype_policy().name == 'float32', keras.config.dtype_policy()\n```\n")
    code, out = run(project, str(BIN / "pytest"), "-p", "no:cacheprovider", "docs/interview-questions/a.md",
                    "docs/interview-questions/b.md")
    assert code == 0, out
    # The thread outlives the run's 2 s wait for it by 6 s (the run then waits for it at exit); the child is killed.
    code, out = pytest_page(project, "c.md", "# C\n\n```python\nimport subprocess, threading, time\n"
                            "child = subprocess.Popen(['sleep', '30'])\n"
                            "threading.Thread(target=time.sleep, args=(8,)).start()\n```\n")
    assert code == 1 and "left running: child process" in out and "thread" in out, out
    code, out = pytest_page(project, "d.md", "# D\n\n```python\nimport subprocess, time\n"
                            "finished = subprocess.Popen(['true'])\ntime.sleep(1)   # exited, not yet reaped\n```\n")
    assert code == 0, out  # a zombie has exited: it is not left running (CI once crashed on its cmdline)


def test_examples_cannot_write_into_the_repository(project):
    page = project.path / "docs/interview-questions/w.md"
    page.parent.mkdir(parents=True)
    page.write_text("# W\n\n```python\n(ROOT / 'docs' / 'planted.md').write_text('# hi')\n```\n")
    code, out = run(project, "tests/offline.sh", str(BIN / "pytest"), "-p", "no:cacheprovider", "docs/interview-questions/w.md")
    assert code == 1 and "Read-only file system" in out and "w.md:4" in out, out
    assert not (project.path / "docs/planted.md").exists()


def test_subprocesses_and_notebook_kernels_have_no_network_but_loopback(project):
    """The outer wall (tests/offline.sh): a network namespace with loopback only, for everything the run starts."""
    probe = "import socket\nprint(sorted(name for _, name in socket.if_nameindex()))\n"
    page = project.path / "docs/interview-questions/sub.md"
    page.parent.mkdir(parents=True)
    page.write_text(f"# S\n\n```python\nimport subprocess, sys\nout = subprocess.run([sys.executable, '-c', {probe!r}], "
                    "capture_output=True, text=True).stdout\nassert out.strip() == \"['lo']\", out\n```\n")
    kernel_check = probe.replace("print(", "assert ['lo'] == (") + "\n"
    (project.path / "docs/interview-questions/nb.py").write_text("# %%\n" + kernel_check)
    code, out = run(project, "tests/offline.sh", str(BIN / "pytest"), "-p", "no:cacheprovider", "docs/interview-questions")
    assert code == 0 and "2 passed" in out, out


def test_failing_indented_snippet_section_names_its_real_line(project):
    (project.path / "snippets/interview-questions/nested.py").write_text(
        "def outer():\n    # --8<-- [start:inner]\n    x = 1\n    assert x == 2, 'x is 1'\n    # --8<-- [end:inner]\n")
    code, out = pytest_page(project, "n.md", '# N\n\n```python\n--8<-- "snippets/interview-questions/nested.py:inner"\n```\n')
    assert code == 1 and "snippets/interview-questions/nested.py:4" in out and "x is 1" in out, out
