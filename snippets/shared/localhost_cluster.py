"""Start TensorFlow worker processes on 127.0.0.1, each with its own TF_CONFIG: shared by the multi-worker
pages (mirrored-vs-multiworker, multiworker-localhost, autoshard-too-few-files, distributed-checkpointing).

A worker program is run as `python <script> worker OUT_DIR [ARGS...]` and writes OUT_DIR/worker-<i>.json.
"""

# --8<-- [start:launcher]
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def free_ports(n):
    """Ask the OS for n free TCP ports on 127.0.0.1 (bind to port 0, read the port, close)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def tf_config(ports, index):
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    return {"cluster": cluster, "task": {"type": "worker", "index": index}}


def run_workers(script, *args, n=2, timeout=280, workdir=None, keep=False):
    """Start n workers of `script` (extra args passed on), wait for all (bounded), return their JSON
    (and the output folder, if keep)."""
    ports = free_ports(n)
    out_dir = Path(tempfile.mkdtemp(prefix="workers-", dir=workdir))
    procs, logs = [], []
    try:
        for i in range(n):
            env = dict(os.environ, TF_CONFIG=json.dumps(tf_config(ports, i)),
                       CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="2")
            log = open(out_dir / f"worker-{i}.log", "w")
            logs.append(log)
            procs.append(subprocess.Popen([sys.executable, str(script), "worker", str(out_dir), *map(str, args)],
                                          env=env, stdout=log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + timeout
        for p in procs:
            p.wait(timeout=max(1, deadline - time.monotonic()))   # raises TimeoutExpired
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
        for log in logs:
            log.close()
    for i, p in enumerate(procs):
        if p.returncode != 0:
            raise RuntimeError(f"worker {i} exited {p.returncode}:\n"
                               + (out_dir / f"worker-{i}.log").read_text()[-3000:])
    results = [json.loads((out_dir / f"worker-{i}.json").read_text()) for i in range(n)]
    return (results, out_dir) if keep else results
# --8<-- [end:launcher]
