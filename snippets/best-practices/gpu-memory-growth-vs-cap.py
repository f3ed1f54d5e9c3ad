"""Probe one GPU memory mode in a fresh process and print what it did as JSON.

    python snippets/best-practices/gpu-memory-growth-vs-cap.py '{"mode": "cap", "cap_mb": 1024, "alloc_mb": 2048}'
    python snippets/best-practices/gpu-memory-growth-vs-cap.py '{"mode": "release", "alloc_mb": 1024}'

Modes: "default" (TensorFlow's own policy), "growth" (set_memory_growth), "cap" (a logical
device with memory_limit), "env-growth" (TF_FORCE_GPU_ALLOW_GROWTH=true, no code change), and
"release" (growth on: device memory before, while a tensor lives, after it is freed, and when the
same size is allocated again), and "growth-then-cap" (growth, then a cap on the same GPU: accepted
without an error, but the growth is dropped). Device memory is what the driver reports (nvidia-smi), not what
TensorFlow's allocator counts.
Without a GPU the probe still runs: it reports gpus=0 and allocates on the CPU.
"""

import json
import os
import shutil
import subprocess
import sys


def same_gpu_order_as_nvidia_smi():
    """nvidia-smi numbers GPUs by PCI bus; make CUDA (and so TensorFlow's GPU:0) use the same order.
    Read when CUDA initialises, so call it before importing TensorFlow."""
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")


# --8<-- [start:device-memory]
def gpu_memory_mb(index=0):
    """Device memory of one GPU as the driver reports it: {"used", "free", "total"} in MiB,
    or None without nvidia-smi (no NVIDIA driver on this machine)."""
    if not shutil.which("nvidia-smi"):
        return None
    out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used,memory.free,memory.total",
                          "--format=csv,noheader,nounits", "-i", str(index)],
                         capture_output=True, text=True, timeout=280, check=True).stdout
    used, free, total = (int(v) for v in out.strip().split(","))
    return {"used": used, "free": free, "total": total}
# --8<-- [end:device-memory]


# --8<-- [start:configure]
def configure_gpu_memory(mode, cap_mb=None):
    """Call at process start, before TensorFlow runs any op."""
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if mode == "growth":
        for gpu in gpus:  # every visible GPU must get the same setting
            tf.config.experimental.set_memory_growth(gpu, True)
    elif mode == "cap":
        for gpu in gpus:
            tf.config.set_logical_device_configuration(
                gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=cap_mb)])
    return gpus
# --8<-- [end:configure]


def probe(mode="default", cap_mb=1024, alloc_mb=64):
    before = gpu_memory_mb()
    if mode == "env-growth":
        os.environ["TF_FORCE_GPU_ALLOW_GROWTH"] = "true"  # read when the GPU device is created
    import tensorflow as tf

    if mode == "growth-then-cap":    # both on one GPU, in the order that raises no error
        configure_gpu_memory("growth")
        gpus = configure_gpu_memory("cap", cap_mb)
    else:
        gpus = configure_gpu_memory(mode, cap_mb)
    result = {"mode": mode, "gpus": len(gpus),
              "growth_flags": [tf.config.experimental.get_memory_growth(gpu) for gpu in gpus]}
    try:
        with tf.device("/GPU:0" if gpus else "/CPU:0"):
            x = tf.zeros([alloc_mb * 256 * 1024])  # alloc_mb MiB of float32
            result["checksum"] = float(tf.reduce_sum(x[:4] + 1.0))
        result["alloc"] = "ok"
    except tf.errors.ResourceExhaustedError:
        result["alloc"] = "oom"
    if gpus:
        result["peak_mb"] = tf.config.experimental.get_memory_info("GPU:0")["peak"] / 2**20
    after = gpu_memory_mb()
    if before and after:
        result["taken_mb"] = after["used"] - before["used"]
        result["free_before_mb"], result["total_mb"] = before["free"], after["total"]
    return result


# --8<-- [start:release]
def probe_release(alloc_mb=1024):
    """Memory growth on: what the driver reports (nvidia-smi) and what TensorFlow's allocator counts,
    before, while an alloc_mb tensor lives, after it is freed, and after the same size is allocated again."""
    report = {"mode": "release", "before_tf_mb": (gpu_memory_mb() or {}).get("used")}
    import tensorflow as tf

    gpus = configure_gpu_memory("growth")
    report["gpus"] = len(gpus)
    if not gpus:
        return report

    def allocated_mb():
        return tf.config.experimental.get_memory_info("GPU:0")["current"] / 2**20

    def fill():
        with tf.device("/GPU:0"):
            x = tf.zeros([alloc_mb * 256 * 1024])    # alloc_mb MiB of float32
            float(x[-1])                             # wait until the device has really run it
        return x

    with tf.device("/GPU:0"):
        float(tf.constant(1.0) + 1.0)                # creates the device and its CUDA context
    report["start_mb"] = gpu_memory_mb()["used"]
    x = fill()
    report["held_mb"], report["allocated_held_mb"] = gpu_memory_mb()["used"], allocated_mb()
    del x                                            # the only reference: the tensor is freed
    report["freed_mb"], report["allocated_freed_mb"] = gpu_memory_mb()["used"], allocated_mb()
    again = fill()                                   # the same size again: served from what the process holds
    report["refilled_mb"], report["allocated_refilled_mb"] = gpu_memory_mb()["used"], allocated_mb()
    del again
    return report
# --8<-- [end:release]


if __name__ == "__main__":
    same_gpu_order_as_nvidia_smi()
    config = json.loads(sys.argv[1] if len(sys.argv) > 1 else "{}")
    if config.get("mode") == "release":
        print(json.dumps(probe_release(config.get("alloc_mb", 1024))))
    else:
        print(json.dumps(probe(**config)))
