"""One source of versions: requirements.lock. Everything else either reads it or agrees with it."""

import re
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCK = {canonicalize_name(name): version for name, version in
        (line.split("==") for line in (ROOT / "requirements.lock").read_text().split() if "==" in line)}


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


def test_gpu_lock_pins_exactly():
    lines = [line for line in (ROOT / "requirements-gpu.lock").read_text().splitlines() if not line.startswith("#")]
    assert lines and all(re.fullmatch(r"nvidia-[\w-]+==[\w.]+", line) for line in lines), lines
    assert "requirements-gpu.lock" in (ROOT / "Makefile").read_text()
