"""Which machine this is: the device the examples run on (split into two logical devices), its versions, the
CPU time a page's budget limits and how fast this CPU is. TensorFlow is imported only when the first page runs."""

import datetime
import os
import platform
import re
import resource
import subprocess
import sys
import time

import pytest

from tfv.layout import ROOT

FACTS = {}  # this process's facts, once computed


def gpus():
    import tensorflow as tf

    found = tf.config.list_physical_devices("GPU")
    if os.environ.get("TFV_REQUIRE_GPU") == "1" and not found:
        pytest.exit("TFV_REQUIRE_GPU=1 but TensorFlow sees no GPU: this runner cannot produce a GPU report", 3)
    return found


def facts():
    """Device and versions of the process that runs the examples, computed once, before its first example.
    Each report is written from the facts its examples ran with."""
    if not FACTS:
        configure_devices()
        FACTS.update(_device_facts())
    return FACTS


def configure_devices():
    """Split the device into two logical devices, so distribution pages run with two replicas on every
    runner: the CPU into two logical CPUs, or the first GPU into two logical GPUs of TFV_GPU_MEMORY_MB each
    (default 2048; a logical GPU needs a memory limit). Must run before TensorFlow initialises its devices."""
    import tensorflow as tf

    found = gpus()
    if found:
        memory = int(os.environ.get("TFV_GPU_MEMORY_MB", "2048"))
        tf.config.set_logical_device_configuration(found[0], [tf.config.LogicalDeviceConfiguration(memory)] * 2)
    else:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)


def _device_facts():
    import keras
    import tensorflow as tf

    found = gpus()
    model = tf.config.experimental.get_device_details(found[0]).get("device_name") if found else None
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return {
        "device": "gpu" if found else "cpu",
        "gpu_model": model,
        "versions": {"tensorflow": tf.__version__, "keras": keras.__version__, "python": platform.python_version()},
        "commit": commit if re.fullmatch("[0-9a-f]{40}", commit) else "unknown",
        "date": datetime.date.today().isoformat(),
    }


def cpu_seconds():
    """CPU time of this process (every thread) and of its children that have ended: what a page's budget limits.
    Unlike wall time it does not grow when another process loads the machine."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def calibration():
    """How slow this machine is: the CPU seconds (user and system) a fresh Python process takes to import
    TensorFlow and Keras, the same work on every machine and the largest single cost of the heaviest pages (those
    that start processes). A page's CPU time is scaled by tfv.pages.REFERENCE / this before its budget is compared.
    Measured after the examples ran, by the process that writes the reports; the child sees no GPU, so a GPU
    runner's figure is its CPU's (bench/findings.md: the figures and their spread)."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "-1", "TF_CPP_MIN_LOG_LEVEL": "3"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", "import keras, tensorflow"], env=env, check=True, timeout=280,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 3)
