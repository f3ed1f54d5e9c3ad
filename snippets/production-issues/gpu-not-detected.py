"""Why does TensorFlow not see the GPU? A diagnosis you can run anywhere.

Run with no arguments: prints a JSON report (the CUDA/cuDNN versions this TensorFlow wheel was built
for, the NVIDIA pip packages and driver it needs and what is installed, the GPUs it sees) followed by
the findings, one likely cause per line; exits 0. Run it in a fresh process with
TF_CPP_MIN_LOG_LEVEL=0 to see TensorFlow's own start-up messages as well.
"""

# --8<-- [start:diagnose]
import ctypes
import glob
import importlib.metadata
import json
import os
import platform
import re
import shutil


def installed(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def cuda_pip_packages():
    """The NVIDIA packages that `tensorflow[and-cuda]` requires -> the installed version or None."""
    wanted = {}
    for requirement in importlib.metadata.requires("tensorflow") or []:
        if 'extra == "and-cuda"' in requirement:
            name = re.split(r"[<>=!~;\s]", requirement, maxsplit=1)[0]
            wanted[name] = installed(name)
    return wanted


def driver_cuda_version():
    """The newest CUDA version the installed NVIDIA driver supports (12040 means 12.4), or None."""
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")         # installed by the driver, not by pip
    except OSError:
        return None
    version = ctypes.c_int()
    return version.value if libcuda.cuDriverGetVersion(ctypes.byref(version)) == 0 else None


def diagnose(environ=None):
    environ = os.environ if environ is None else environ
    import tensorflow as tf

    build = dict(tf.sysconfig.get_build_info())
    gpus = tf.config.list_physical_devices("GPU")
    report = {
        "platform": platform.system(),
        "tensorflow": tf.__version__,
        "distributions": {name: installed(name) for name in ("tensorflow", "tensorflow-cpu", "tf-nightly")},
        "is_cuda_build": bool(build.get("is_cuda_build")),
        "cuda_version": build.get("cuda_version"),
        "cudnn_version": build.get("cudnn_version"),
        "cuda_compute_capabilities": build.get("cuda_compute_capabilities", []),
        "cuda_visible_devices": environ.get("CUDA_VISIBLE_DEVICES"),
        "cuda_pip_packages": cuda_pip_packages(),
        "driver_cuda_version": driver_cuda_version(),
        "nvidia_smi": shutil.which("nvidia-smi"),
        "dev_nvidia": sorted(glob.glob("/dev/nvidia*")),
        "gpus": [dict(tf.config.experimental.get_device_details(gpu)) for gpu in gpus],
    }
    report["findings"] = findings(report)
    return report


def findings(r):
    """The usual causes of "no GPU", in the order worth checking; with GPUs visible, only their support."""
    found = []
    if not r["gpus"]:
        found += no_gpu_causes(r)
    oldest = min((int(c.split("_")[1]) for c in r["cuda_compute_capabilities"]), default=None)
    for gpu in r["gpus"]:
        major, minor = gpu.get("compute_capability", (0, 0))
        if oldest is not None and major * 10 + minor < oldest:
            found.append(f"{gpu.get('device_name')} has compute capability {major}.{minor}; "
                         f"this wheel starts at {oldest // 10}.{oldest % 10}")
    return found


def no_gpu_causes(r):
    found = []
    if r["platform"] != "Linux":
        found.append(f"{r['platform']}: TensorFlow's CUDA builds are for Linux (on Windows use WSL2)")
    if r["distributions"]["tensorflow-cpu"]:
        found.append("tensorflow-cpu is installed: a CPU-only build")
    if not r["is_cuda_build"]:
        found.append("this TensorFlow wheel was built without CUDA")
    if r["cuda_visible_devices"] is not None and r["cuda_visible_devices"].strip() in ("", "-1"):
        found.append(f"CUDA_VISIBLE_DEVICES={r['cuda_visible_devices']!r} hides every GPU from this process")
    missing = sorted(name for name, version in r["cuda_pip_packages"].items() if version is None)
    if r["is_cuda_build"] and missing:
        found.append(f"{len(missing)} NVIDIA pip packages of the and-cuda extra are missing ({missing[0]}, ...): "
                     f"pip install 'tensorflow[and-cuda]=={r['tensorflow']}'")
    if r["driver_cuda_version"] is None:
        found.append("no NVIDIA driver (libcuda.so.1 not found): install it on the host, "
                     "or give the container the GPU (docker run --gpus all)")
    elif r["cuda_version"] and r["driver_cuda_version"] // 1000 < int(r["cuda_version"].split(".")[0]):
        found.append(f"driver supports CUDA {r['driver_cuda_version'] // 1000}.{r['driver_cuda_version'] % 1000 // 10}, "
                     f"the wheel needs CUDA {r['cuda_version']}: upgrade the driver")
    if r["driver_cuda_version"] is not None and not r["dev_nvidia"]:
        found.append("driver library present but no /dev/nvidia* device files: the container has no GPU access")
    if not found:
        found.append("everything above looks right: run with TF_CPP_MIN_LOG_LEVEL=0 TF_CPP_MAX_VLOG_LEVEL=1; "
                     "the per-library 'Could not load dynamic library' lines are VLOG(1)")
    return found
# --8<-- [end:diagnose]


if __name__ == "__main__":
    result = diagnose()
    print(json.dumps(result, indent=1))
    print("\n".join(["findings:"] + [f"- {line}" for line in result["findings"]] if result["findings"] else ["no problem found"]))
