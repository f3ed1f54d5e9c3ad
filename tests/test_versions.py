"""One source of versions: requirements.lock. Everything else either reads it or agrees with it."""

import re
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


def pins(lock):
    """{package: version} of a lock file written by `make lock` (uv, with hashes)."""
    return {canonicalize_name(name): version for name, version in
            (token.split("==") for token in (ROOT / lock).read_text().split() if "==" in token)}


LOCK = pins("requirements.lock")


def test_lock_satisfies_every_requirement():
    for line in (ROOT / "requirements.in").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            requirement = Requirement(line)
            name = canonicalize_name(requirement.name)
            assert name in LOCK, f"{name} is in requirements.in but not locked"
            assert requirement.specifier.contains(LOCK[name]), f"lock has {name}=={LOCK[name]}, not {requirement}"


def test_nothing_else_pins_a_package_version():
    for path in [ROOT / "Makefile", ROOT / ".ci/run", *sorted((ROOT / ".github/workflows").glob("*.yml"))]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            assert not re.search(r"pip install[^#\n]*==\d", line), f"{path.relative_to(ROOT)}:{number} pins a version"
    assert "requirements.lock" in (ROOT / "Makefile").read_text()


def test_python_and_prose_versions_agree_with_the_lock():
    workflow = yaml.safe_load((ROOT / ".github/workflows/site.yml").read_text())
    pythons = {step["with"]["python-version"] for job in workflow["jobs"].values() for step in job.get("steps", [])
               if "setup-python" in step.get("uses", "")}
    assert pythons == {"3.11"}, pythons
    assert 'requires-python = ">=3.11"' in (ROOT / "pyproject.toml").read_text()
    major_minor = ".".join(LOCK["tensorflow"].split(".")[:2])
    home = (ROOT / "docs/index.md").read_text()
    assert f"TensorFlow {major_minor}" in home, f"docs/index.md should name TensorFlow {major_minor}"
    assert f"TF {LOCK['tensorflow']}" in home and f"Keras {LOCK['keras']}" in home, "the sample stamp names other versions"


@pytest.mark.parametrize("lock", ["requirements.lock", "requirements-docs.lock", "requirements-gpu.lock", "requirements-uv.lock"])
def test_every_lock_pins_every_package_with_hashes(lock):
    entries = re.split(r"\n(?=\S)", (ROOT / lock).read_text().strip())
    packages = [e for e in entries if not e.startswith("#")]
    assert packages, f"{lock} is empty"
    for entry in packages:
        assert re.match(r"[\w.-]+(\[[\w,-]+\])?==[\w.+]+ \\\n", entry) and "--hash=sha256:" in entry, f"{lock}: {entry[:80]}"
    assert "--require-hashes" in (ROOT / "Makefile").read_text(), "the Makefile must install with --require-hashes"


@pytest.mark.parametrize("lock", ["requirements-docs.lock", "requirements-gpu.lock", "requirements-uv.lock"])
def test_other_locks_take_their_versions_from_the_main_lock(lock):
    other = pins(lock)
    shared = {name: (version, LOCK[name]) for name, version in other.items() if name in LOCK and LOCK[name] != version}
    assert not shared, f"{lock} disagrees with requirements.lock: {shared}"


def test_docs_lock_has_no_tensorflow_and_gpu_lock_adds_cuda():
    docs, gpu = pins("requirements-docs.lock"), pins("requirements-gpu.lock")
    assert not {"tensorflow", "keras", "tf-keras", "sybil", "pytest"} & set(docs), sorted(docs)
    assert "mkdocs-material" in docs and "mkdocs-jupyter" in docs
    assert any(name.startswith("nvidia-cudnn") for name in gpu) and gpu["tensorflow"] == LOCK["tensorflow"], sorted(gpu)
