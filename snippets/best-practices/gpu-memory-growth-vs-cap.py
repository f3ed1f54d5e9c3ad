"""Probe one GPU memory mode in a fresh process and print what it did as JSON.

    python snippets/best-practices/gpu-memory-growth-vs-cap.py '{"mode": "cap", "cap_mb": 1024, "alloc_mb": 2048}'

Modes: "default" (TensorFlow's own policy), "growth" (set_memory_growth), "cap" (a logical
device with memory_limit), "env-growth" (TF_FORCE_GPU_ALLOW_GROWTH=true, no code change).
Without a GPU the probe still runs: it reports gpus=0 and allocates on the CPU.
"""

import json
import os
import shutil
import subprocess
import sys


def gpu_used_mb():
    """(used, total) MiB of GPU 0 as the driver sees it, or None without nvidia-smi."""
    if not shutil.which("nvidia-smi"):
        return None
    out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used,memory.total", "--format=csv,noheader,nounits",
                          "-i", "0"], capture_output=True, text=True, timeout=60, check=True).stdout
    used, total = (int(v) for v in out.strip().split(","))
    return used, total


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
    before = gpu_used_mb()
    if mode == "env-growth":
        os.environ["TF_FORCE_GPU_ALLOW_GROWTH"] = "true"  # read when the GPU device is created
    import tensorflow as tf

    gpus = configure_gpu_memory(mode, cap_mb)
    result = {"mode": mode, "gpus": len(gpus)}
    try:
        with tf.device("/GPU:0" if gpus else "/CPU:0"):
            x = tf.zeros([alloc_mb * 256 * 1024])  # alloc_mb MiB of float32
            result["checksum"] = float(tf.reduce_sum(x[:4] + 1.0))
        result["alloc"] = "ok"
    except tf.errors.ResourceExhaustedError:
        result["alloc"] = "oom"
    if gpus:
        result["peak_mb"] = tf.config.experimental.get_memory_info("GPU:0")["peak"] / 2**20
    after = gpu_used_mb()
    if before and after:
        result["taken_mb"], result["total_mb"] = after[0] - before[0], after[1]
    return result


if __name__ == "__main__":
    print(json.dumps(probe(**json.loads(sys.argv[1] if len(sys.argv) > 1 else "{}"))))
