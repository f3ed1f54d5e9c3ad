"""Two processes on one GPU: the first holds the memory, the second starts cuDNN for its first convolution.

    python snippets/production-issues/cudnn-init-failure.py '{"role": "victim", "policy": "default"}'
    python snippets/production-issues/cudnn-init-failure.py '{"role": "holder", "leave_mb": 256}'
    python snippets/production-issues/cudnn-init-failure.py '{"role": "tf-holder", "policy": "growth"}'

victim:    configures its GPU memory policy ("default", "growth" or "cap"), runs one small op and then one
           2-D convolution (cuDNN on a GPU), and prints a JSON report: the outcome, the first line of the
           error, the device's free memory (nvidia-smi) before, after the first op and at the end.
holder:    takes all the device memory but `leave_mb` through the CUDA driver API (no TensorFlow), as any
           process that holds memory would, prints one JSON line and waits for a line on stdin.
tf-holder: a TensorFlow process with the given policy that has run a convolution; prints one JSON line
           and waits for a line on stdin.

No argument: the victim with the default policy (on a machine without a GPU it runs on the CPU).
"""

import ctypes
import json
import shutil
import subprocess
import sys


def free_mb(index=0):
    """Free device memory in MiB as the driver reports it (nvidia-smi), or None without a driver."""
    if not shutil.which("nvidia-smi"):
        return None
    out = subprocess.run(["nvidia-smi", "--query-gpu=memory.free", "--format=csv,noheader,nounits", "-i", str(index)],
                         capture_output=True, text=True, timeout=280, check=True).stdout
    return int(out.strip())


# --8<-- [start:configure]
def configure_gpu_memory(policy="default", cap_mb=1024):
    """The first thing the entry point does, before any op runs: growth, a cap, or TensorFlow's default."""
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    for gpu in gpus:
        if policy == "growth":
            tf.config.experimental.set_memory_growth(gpu, True)
        elif policy == "cap":
            tf.config.set_logical_device_configuration(gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=cap_mb)])
    return gpus
# --8<-- [end:configure]


# --8<-- [start:victim]
def first_convolution(policy="default", cap_mb=1024):
    report = {"policy": policy, "free_mb_before": free_mb()}
    import tensorflow as tf

    gpus = configure_gpu_memory(policy, cap_mb)
    report["gpus"] = len(gpus)
    device = "/GPU:0" if gpus else "/CPU:0"
    try:
        with tf.device(device):
            float(tf.constant(1.0) + 1.0)                       # creates the device (CUDA context, allocator)
            report["free_mb_after_first_op"] = free_mb()
            images = tf.random.stateless_normal([8, 64, 64, 3], seed=[0, 0])
            kernels = tf.random.stateless_normal([3, 3, 3, 16], seed=[0, 1])
            report["checksum"] = float(tf.reduce_sum(tf.nn.conv2d(images, kernels, strides=1, padding="SAME")))
        report["outcome"] = "ok"
    except Exception as error:                                  # the class depends on where it failed
        report["outcome"] = type(error).__name__
        report["error"] = str(error).strip().splitlines()[0][:300]
    report["free_mb_after"] = free_mb()
    return report
# --8<-- [end:victim]


def hold_raw(leave_mb):
    """Allocate device memory with the CUDA driver API until only leave_mb MiB are free."""
    cuda = ctypes.CDLL("libcuda.so.1")
    device, context = ctypes.c_int(), ctypes.c_void_p()
    assert cuda.cuInit(0) == 0 and cuda.cuDeviceGet(ctypes.byref(device), 0) == 0
    assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device) == 0 and cuda.cuCtxSetCurrent(context) == 0
    free, total, pointer = ctypes.c_size_t(), ctypes.c_size_t(), ctypes.c_uint64()
    chunk, held = 1 << 30, 0
    while chunk >= 1 << 21:
        assert cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)) == 0
        wanted = free.value - leave_mb * 2**20
        if wanted < 1 << 21:
            break
        size = min(chunk, wanted)
        if cuda.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(size)) == 0:
            held += size
        else:
            chunk //= 2
    return {"held_mb": held >> 20, "free_mb": free_mb()}


def hold_tf(policy="default", cap_mb=1024):
    report = first_convolution(policy, cap_mb)
    report["free_mb"] = free_mb()
    return report


if __name__ == "__main__":
    config = json.loads(sys.argv[1] if len(sys.argv) > 1 else "{}")
    role = config.pop("role", "victim")
    if role == "victim":
        print(json.dumps(first_convolution(**config)))
    else:
        print(json.dumps(hold_raw(**config) if role == "holder" else hold_tf(**config)), flush=True)
        sys.stdin.readline()                                    # hold until the parent says so
