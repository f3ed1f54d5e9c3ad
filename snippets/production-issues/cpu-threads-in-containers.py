"""How many CPUs a process may use, and how many threads TensorFlow starts for it.

Run with no arguments: probes this process with TensorFlow's defaults, checks that both thread pools
have one thread per schedulable CPU, prints the report as JSON and exits 0.
`python this.py --pin CPU` pins the process to one CPU before TensorFlow starts;
`python this.py --fix --cgroup-root DIR --proc-cgroup FILE` sizes the pools from the CPU quota
found under DIR (a real or a fake cgroup tree) before TensorFlow starts.
"""

import argparse
import collections
import json
import math
import os
from pathlib import Path


# --8<-- [start:limits]
def cgroup_cpu_quota(root="/sys/fs/cgroup", proc_cgroup="/proc/self/cgroup"):
    """CPUs granted by the CFS quota of this process's cgroup and its parents, or None when unlimited.

    cgroup v2: `cpu.max` holds "<quota> <period>" or "max <period>" (microseconds).
    cgroup v1: `cpu.cfs_quota_us` (-1 = unlimited) and `cpu.cfs_period_us` under the `cpu` controller.
    """
    limits = []
    for line in Path(proc_cgroup).read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers == "":                                   # the v2 (unified) hierarchy
            base, files = Path(root), ("cpu.max",)
        elif "cpu" in controllers.split(","):                   # the v1 cpu controller
            base, files = Path(root, "cpu"), ("cpu.cfs_quota_us", "cpu.cfs_period_us")
        else:
            continue
        folder = base / path.lstrip("/")
        while True:                                             # the tightest limit on the way up counts
            found = [folder / f for f in files]
            if all(f.is_file() for f in found):
                quota, period = " ".join(f.read_text() for f in found).split()[:2]
                if quota not in ("max", "-1"):
                    limits.append(int(quota) / int(period))
            if folder == base:
                break
            folder = folder.parent
    return min(limits) if limits else None


def allowed_cpus(root="/sys/fs/cgroup", proc_cgroup="/proc/self/cgroup"):
    """What the process may really use: its CPU affinity, capped by the quota (rounded down, at least 1)."""
    affinity = len(os.sched_getaffinity(0))
    quota = cgroup_cpu_quota(root, proc_cgroup)
    return affinity if quota is None else max(1, min(affinity, math.floor(quota)))
# --8<-- [end:limits]


# --8<-- [start:configure]
def limit_blas_threads(cpus):
    """Size NumPy's OpenBLAS pool. Call it before `import numpy` (so before `import tensorflow`, which
    imports NumPy): OpenBLAS reads the variable once, when it is loaded, and starts its threads then."""
    os.environ["OPENBLAS_NUM_THREADS"] = str(cpus)


def configure_tf_threads(cpus):
    """Size TensorFlow's two CPU thread pools. Call it before the first op: afterwards it raises."""
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(cpus)   # threads inside one op (matmul, conv)
    tf.config.threading.set_inter_op_parallelism_threads(cpus)   # independent ops run side by side
# --8<-- [end:configure]


# --8<-- [start:probe]
def thread_names():
    """Name (comm) of every thread of this process. TensorFlow names its inter-op pool `tf_Compute`;
    threads nobody names keep the process name (`python`)."""
    tasks = Path("/proc/self/task")
    return collections.Counter((tasks / t / "comm").read_text().strip() for t in os.listdir(tasks))


def probe(cpus=None):
    """Start TensorFlow in this (fresh) process, run a few ops, and count the threads it started."""
    unnamed = Path("/proc/self/comm").read_text().strip()
    before_numpy = thread_names()
    import numpy  # noqa: F401  (NumPy's BLAS may start its own pool at import)

    after_numpy = thread_names()
    import tensorflow as tf

    tf.config.list_physical_devices("CPU")                  # does not start the runtime
    if cpus is not None:
        configure_tf_threads(cpus)
    settings = (tf.config.threading.get_intra_op_parallelism_threads(),
                tf.config.threading.get_inter_op_parallelism_threads())
    before_ops = thread_names()
    x = tf.random.stateless_normal([256, 256], seed=[0, 0])
    tf.matmul(x, x)
    tf.function(lambda t: tf.reduce_sum(tf.matmul(t, t)))(x)
    after_ops = thread_names()

    import psutil

    return {
        "os.cpu_count": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)),
        "intra_setting": settings[0],
        "inter_setting": settings[1],
        "inter_op_pool": after_ops["tf_Compute"],            # named threads of the inter-op pool
        "intra_op_pool": after_ops[unnamed] - before_ops[unnamed],   # unnamed threads the first ops started
        "numpy_import_threads": after_numpy[unnamed] - before_numpy[unnamed],
        "total_threads": psutil.Process().num_threads(),
    }
# --8<-- [end:probe]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pin", type=int, help="restrict this process to one CPU before TensorFlow starts")
    parser.add_argument("--fix", action="store_true", help="size the pools from allowed_cpus()")
    parser.add_argument("--cgroup-root", default="/sys/fs/cgroup")
    parser.add_argument("--proc-cgroup", default="/proc/self/cgroup")
    args = parser.parse_args()
    if args.pin is not None:
        os.sched_setaffinity(0, {args.pin})                  # what `taskset -c N` or a cpuset does
    cpus = allowed_cpus(args.cgroup_root, args.proc_cgroup) if args.fix else None
    if cpus is not None:
        limit_blas_threads(cpus)                             # before NumPy is imported
    report = probe(cpus)
    if args.pin is None and not args.fix:       # defaults: the environment variables, else the mask
        intra = int(os.environ.get("TF_NUM_INTRAOP_THREADS", "0")) or report["affinity"]
        inter = int(os.environ.get("TF_NUM_INTEROP_THREADS", "0")) or report["affinity"]
        assert (report["intra_op_pool"], report["inter_op_pool"]) == (intra, inter), report
    print(json.dumps(report))
