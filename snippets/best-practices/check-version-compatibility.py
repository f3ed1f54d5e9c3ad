"""A start-up check that TensorFlow, Keras, Python and CUDA versions fit together.

    python snippets/best-practices/check-version-compatibility.py         # a CPU-only machine is fine
    python snippets/best-practices/check-version-compatibility.py --gpu   # a GPU must be usable

It prints a JSON report (versions, build, Keras routing, the problems found) and exits with status 1,
naming every problem, when one check fails. Page: docs/best-practices/check-version-compatibility.md.
"""

# --8<-- [start:check]
import json
import os
import platform
import sys
from importlib import metadata

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

# TensorFlow's tested build configurations, Linux GPU table: https://www.tensorflow.org/install/source#gpu
# (Python range, cuDNN, CUDA). Add the row of a new TensorFlow before upgrading to it: the check refuses
# a TensorFlow it has no row for.
TESTED = {
    "2.21": {"python": ("3.10", "3.13"), "cudnn": "9.3", "cuda": "12.5"},
    "2.20": {"python": ("3.9", "3.13"), "cudnn": "9.3", "cuda": "12.5"},
}
LEGACY_VALUES = ("true", "True", "1")  # what tensorflow/python/util/lazy_loader.py accepts


def unmet(distribution, extra=None):
    """Requirements of an installed distribution that the installed packages do not satisfy: its
    unconditional ones, or with `extra` only those of that extra (e.g. "and-cuda")."""
    problems = []
    for line in metadata.requires(distribution) or []:
        requirement = Requirement(line)
        marker = str(requirement.marker or "")
        if (extra is None) == ("extra" in marker):
            continue                                   # an extra's line when checking the base, or the reverse
        if requirement.marker and not requirement.marker.evaluate({"extra": extra or ""}):
            continue                                   # another extra, or another platform
        try:
            installed = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            problems.append(f"{distribution} requires {requirement}: not installed")
            continue
        if not requirement.specifier.contains(installed, prereleases=True):
            problems.append(f"{distribution} requires {requirement}: {requirement.name} {installed} is installed")
    return problems


def check_versions(expect_gpu=False):
    """Return a report of the versions this process runs with; report["problems"] lists what does not fit."""
    import keras
    import tensorflow as tf

    problems = []
    tf_minor = ".".join(tf.__version__.split(".")[:2])
    python_minor = ".".join(platform.python_version_tuple()[:2])
    legacy = os.environ.get("TF_USE_LEGACY_KERAS") in LEGACY_VALUES
    report = {"python": platform.python_version(), "tensorflow": tf.__version__, "keras": keras.__version__,
              "TF_USE_LEGACY_KERAS": os.environ.get("TF_USE_LEGACY_KERAS")}

    # 1. The installed metadata describes the modules this process imported, and one distribution owns
    #    the `tensorflow` folder (tensorflow and tensorflow-cpu share it: the second install overwrites files).
    owners = sorted(set(metadata.packages_distributions().get("tensorflow", [])))
    report["tensorflow distributions"] = owners
    if len(owners) != 1:
        problems.append(f"the tensorflow package folder belongs to {owners or 'no distribution'}: install exactly one")
    distribution = owners[0] if len(owners) == 1 else "tensorflow"
    for name, module in ((distribution, tf), ("keras", keras)):  # tensorflow-cpu alone is a healthy install
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = None
        if installed != module.__version__:
            problems.append(f"imported {name} {module.__version__} from {module.__file__}, "
                            f"but the installed {name} distribution is {installed}")
    # 2. TensorFlow's own requirements (keras>=3..., protobuf, h5py, ml_dtypes, numpy) are met.
    problems += unmet(distribution)

    # 3. Python: inside the wheel's Requires-Python and the tested range.
    requires_python = metadata.metadata(distribution)["Requires-Python"]
    if requires_python and not SpecifierSet(requires_python).contains(platform.python_version()):
        problems.append(f"TensorFlow {tf.__version__} requires Python {requires_python}; this is {report['python']}")
    tested = TESTED.get(tf_minor)
    if tested is None:
        problems.append(f"no tested configuration recorded for TensorFlow {tf_minor}: add its row to TESTED")
    elif not Version(tested["python"][0]) <= Version(python_minor) <= Version(tested["python"][1]):
        problems.append(f"TensorFlow {tf_minor} is tested on Python {'-'.join(tested['python'])}, this is {python_minor}")

    # 4. Which Keras `tf.keras` is. Touch tf.keras only when it can resolve: with TF_USE_LEGACY_KERAS and
    #    no tf_keras, the first tf.keras attribute raises an ImportError that blames Keras.
    if legacy:
        try:
            import tf_keras
        except ImportError:
            problems.append(f"TF_USE_LEGACY_KERAS={report['TF_USE_LEGACY_KERAS']} but tf_keras cannot be imported: "
                            f"install tf-keras=={tf_minor}.* or unset the variable")
        else:
            report["tf_keras"] = tf_keras.__version__
            report["tf.keras"] = tf.keras.Model.__module__.split(".")[0]
            problems += unmet("tf-keras")              # tf-keras pins the TensorFlow minor it belongs to
            if tf.keras.Model is not tf_keras.Model:
                problems.append("TF_USE_LEGACY_KERAS is set but tf.keras is not tf_keras: "
                                "the variable was set after tf.keras was first used")
    else:
        report["tf.keras"] = tf.keras.Model.__module__.split(".")[0]
        if Version(tf.__version__) >= Version("2.16") and tf.keras.Model is not keras.Model:
            problems.append(f"tf.keras.Model comes from {tf.keras.Model.__module__}, not from Keras 3")

    # 5. The build, against the tested row, and the GPU when one is expected.
    build = tf.sysconfig.get_build_info()
    report["build"] = {key: build.get(key) for key in ("is_cuda_build", "cuda_version", "cudnn_version")}
    if build.get("is_cuda_build") and tested:
        if not build["cuda_version"].startswith(tested["cuda"]):
            problems.append(f"built with CUDA {build['cuda_version']}, the tested row says {tested['cuda']}")
        if build["cudnn_version"].split(".")[0] != tested["cudnn"].split(".")[0]:
            problems.append(f"built with cuDNN {build['cudnn_version']}, the tested row says {tested['cudnn']}")
    gpus = tf.config.list_physical_devices("GPU")
    report["gpus"] = len(gpus)
    if expect_gpu:
        if not build.get("is_cuda_build"):
            problems.append("a GPU is expected but this TensorFlow was not built with CUDA")
        if not gpus:
            problems.append("a GPU is expected but TensorFlow sees none (driver, CUDA libraries, CUDA_VISIBLE_DEVICES)")
        cuda_wheels = [r for r in metadata.requires(distribution) or [] if "and-cuda" in r]
        if any(_installed(Requirement(r).name) for r in cuda_wheels):   # CUDA from pip: the [and-cuda] extra's ranges
            problems += unmet(distribution, extra="and-cuda")
        report["compute capability"] = [
            tf.config.experimental.get_device_details(gpu).get("compute_capability") for gpu in gpus]

    report["problems"] = problems
    return report


def _installed(name):
    try:
        metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def require_compatible(expect_gpu=False):
    """Call first in the entry point: raise, naming every problem, when the versions do not fit."""
    report = check_versions(expect_gpu)
    if report["problems"]:
        raise RuntimeError("version check failed:\n  " + "\n  ".join(report["problems"]))
    return report
# --8<-- [end:check]


if __name__ == "__main__":
    found = check_versions(expect_gpu="--gpu" in sys.argv[1:])
    print(json.dumps(found))
    if found["problems"]:
        sys.exit("version check failed:\n  " + "\n  ".join(found["problems"]))
