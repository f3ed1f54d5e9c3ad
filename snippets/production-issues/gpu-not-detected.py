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
    """The NVIDIA packages that `tensorflow[and-cuda]` requires -> the version range the wheel declares,
    the installed version (None if missing), and whether it is in that range (None if unknown)."""
    try:
        from packaging.requirements import Requirement
    except ImportError:                                     # no `packaging`: names only, no range check
        Requirement = None
    wanted = {}
    for line in importlib.metadata.requires("tensorflow") or []:
        if 'extra == "and-cuda"' not in line:
            continue
        name = re.split(r"[<>=!~;\[\s]", line, maxsplit=1)[0]
        version = installed(name)
        specifier = Requirement(line).specifier if Requirement else None
        wanted[name] = {"required": None if specifier is None else str(specifier), "installed": version,
                        "in_range": None if version is None or specifier is None
                        else specifier.contains(version, prereleases=True)}
    return wanted


def nvidia_library_folders():
    """The folders TensorFlow's RUNPATH points at: site-packages/nvidia/*/lib next to the tensorflow package."""
    try:
        root = importlib.metadata.distribution("tensorflow").locate_file("nvidia")
    except importlib.metadata.PackageNotFoundError:
        return []
    return sorted(glob.glob(os.path.join(str(root), "*", "lib")))


# The CUDA libraries TensorFlow opens at run time (xla/tsl/platform/default/dso_loader.cc), by file name prefix.
LOADED_BY_TENSORFLOW = ("libcudart.so", "libcublas.so", "libcublasLt.so", "libcufft.so", "libcusolver.so",
                        "libcusparse.so", "libcudnn.so", "libnccl.so", "libcupti.so")


def nvidia_libraries(folders):
    """Load the libraries TensorFlow opens from those folders with ctypes, by full path: the dynamic loader
    resolves their own dependencies as it would for TensorFlow. -> {file name: None if it loaded, else the
    loader's error}. Failures are retried while others still load (a dependency loaded meanwhile counts)."""
    pending = {os.path.basename(path): path for folder in folders
               for path in sorted(glob.glob(os.path.join(folder, "lib*.so*")))
               if os.path.basename(path).startswith(LOADED_BY_TENSORFLOW)}
    errors, loaded = {}, {}
    while pending:
        errors = {}
        for name, path in pending.items():
            try:
                ctypes.CDLL(path)
                loaded[name] = None
            except OSError as error:
                errors[name] = str(error)
        if len(errors) == len(pending):                     # no progress: these cannot load
            break
        pending = {name: pending[name] for name in errors}
    return {**loaded, **errors}


def shadowing_libraries(folders, environ):
    """Libraries of the same file name earlier on LD_LIBRARY_PATH: the loader searches LD_LIBRARY_PATH
    before a library's RUNPATH, so these are loaded instead of the pip ones."""
    names = {os.path.basename(p) for folder in folders for p in glob.glob(os.path.join(folder, "lib*.so*"))
             if os.path.basename(p).startswith(LOADED_BY_TENSORFLOW)}
    shadows = []
    for folder in filter(None, environ.get("LD_LIBRARY_PATH", "").split(":")):
        if os.path.realpath(folder) in {os.path.realpath(f) for f in folders}:
            continue
        shadows += sorted(os.path.join(folder, n) for n in names if os.path.exists(os.path.join(folder, n)))
    return shadows


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
    folders = nvidia_library_folders()
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
        "nvidia_library_folders": folders,
        "nvidia_libraries": nvidia_libraries(folders),
        "ld_library_path_shadows": shadowing_libraries(folders, environ),
        "driver_cuda_version": driver_cuda_version(),
        "nvidia_smi": shutil.which("nvidia-smi"),
        "dev_nvidia": sorted(glob.glob("/dev/nvidia*")),
        "gpus": [dict(tf.config.experimental.get_device_details(gpu)) for gpu in gpus],
    }
    report["findings"], report["notes"] = findings(report)
    return report


def cuda_number(version):
    """'12.5.1' -> 12050, the form cuDriverGetVersion uses."""
    major, minor = (int(part) for part in version.split(".")[:2])
    return major * 1000 + minor * 10


def findings(r):
    """The usual causes of "no GPU", in the order worth checking; with GPUs visible, only their support.
    Returns (findings, notes): a note is worth knowing but does not stop the GPU from working."""
    found, notes = [], []
    if not r["gpus"]:
        found += no_gpu_causes(r)
    sass = [(int(c[3]), int(c[4:])) for c in r["cuda_compute_capabilities"] if c.startswith("sm_")]
    ptx = [(int(c[8]), int(c[9:])) for c in r["cuda_compute_capabilities"] if c.startswith("compute_")]
    for gpu in r["gpus"]:
        major, minor = gpu.get("compute_capability", (0, 0))
        name = gpu.get("device_name")
        if any(m == major and n <= minor for m, n in sass):
            continue                                     # the wheel has machine code (SASS) for this GPU
        if not any((m, n) <= (major, minor) for m, n in ptx):
            oldest = min(sass + ptx, default=(0, 0))
            found.append(f"{name} has compute capability {major}.{minor}; this wheel starts at {oldest[0]}.{oldest[1]}")
            continue
        notes.append(f"{name} (compute capability {major}.{minor}) has no machine code in this wheel: its kernels "
                     "are JIT-compiled from PTX at start-up, which TensorFlow warns can take 30 minutes or longer")
        if r["cuda_version"] and r["driver_cuda_version"] is not None \
                and r["driver_cuda_version"] < cuda_number(r["cuda_version"]):
            found.append(f"{name} needs this wheel's CUDA {r['cuda_version']} PTX JIT-compiled, but the driver "
                         f"only supports CUDA {r['driver_cuda_version'] // 1000}.{r['driver_cuda_version'] % 1000 // 10}: "
                         "upgrade the driver")
    return found, notes


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
    packages = r["cuda_pip_packages"]
    missing = sorted(name for name, p in packages.items() if p["installed"] is None)
    if r["is_cuda_build"] and missing:
        found.append(f"{len(missing)} NVIDIA pip packages of the and-cuda extra are missing ({missing[0]}, ...): "
                     f"pip install 'tensorflow[and-cuda]=={r['tensorflow']}'")
    for name, p in sorted(packages.items()):
        if p["in_range"] is False:
            found.append(f"{name} {p['installed']} is installed, this wheel needs {p['required']}: "
                         f"pip install 'tensorflow[and-cuda]=={r['tensorflow']}' (pip check shows who pins it)")
    unloadable = {name: error for name, error in r["nvidia_libraries"].items() if error is not None}
    if unloadable:
        name = sorted(unloadable)[0]
        found.append(f"{len(unloadable)} of the NVIDIA libraries TensorFlow opens cannot be loaded, "
                     f"e.g. {name}: {unloadable[name]}")
    if r["ld_library_path_shadows"]:
        found.append(f"LD_LIBRARY_PATH holds other copies of the NVIDIA libraries ({r['ld_library_path_shadows'][0]}, "
                     "...), which are loaded instead of the pip ones: remove them from LD_LIBRARY_PATH")
    if r["driver_cuda_version"] is None:
        found.append("no NVIDIA driver (libcuda.so.1 not found): install it on the host, "
                     "or give the container the GPU (docker run --gpus all)")
    elif r["cuda_version"] and r["driver_cuda_version"] // 1000 < int(r["cuda_version"].split(".")[0]):
        found.append(f"driver supports CUDA {r['driver_cuda_version'] // 1000}.{r['driver_cuda_version'] % 1000 // 10}, "
                     f"the wheel needs CUDA {r['cuda_version'].split('.')[0]}: upgrade the driver")
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
    print("\n".join(f"note: {line}" for line in result["notes"]))
