"""`PyDataset` with workers hangs or crashes: every case runs in its own Python process, with a time limit.

Run with no arguments: runs every case below in a fresh process, kills and reaps the ones that do not end
in time, and checks each outcome; exits 0. `python this.py --case NAME` runs one case (the child).
"""

# --8<-- [start:imports]
import ctypes
import dataclasses
import faulthandler
import json
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import threading
import time

import keras
import numpy as np
import psutil

# --8<-- [end:imports]

# --8<-- [start:cases]
BATCH, BATCHES = 32, 8
_rng = np.random.default_rng(0)
IMAGES = _rng.random(size=(BATCH * BATCHES, 64, 64, 3), dtype=np.float32)
TARGETS = IMAGES.mean(axis=(1, 2, 3))[:, None]
STALL = 15.0          # seconds without a finished batch before the watchdog acts


def pool_numpy(images):
    """2x2 average pooling in NumPy: [n, 64, 64, 3] -> [n, 32, 32, 3]."""
    return images.reshape(len(images), 32, 2, 32, 2, 3).mean(axis=(2, 4))


class Images(keras.utils.PyDataset):
    """Pooled image batches. kind: "tf" pools with a TensorFlow op, "numpy" with NumPy, "dies" is "numpy"
    whose worker process is killed at batch 5."""

    def __init__(self, kind, **kwargs):
        super().__init__(**kwargs)                   # workers=, use_multiprocessing=
        self.kind, self.trainer_pid = kind, os.getpid()

    def __len__(self):
        return BATCHES

    def __getitem__(self, i):
        images = IMAGES[i * BATCH:(i + 1) * BATCH]
        if self.kind == "tf":
            import tensorflow as tf
            pooled = tf.nn.avg_pool2d(images, 2, 2, "VALID").numpy()          # a TensorFlow op
        else:
            pooled = pool_numpy(images)
        if self.kind == "dies" and i == 5 and os.getpid() != self.trainer_pid:
            print(f"worker {os.getpid()} killed at batch 5", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)        # stands in for the kernel's OOM killer
        return pooled, TARGETS[i * BATCH:(i + 1) * BATCH]


class LabelledImages(keras.utils.PyDataset):
    """Reads its targets from a file it opens once, in __init__ (a database handle behaves the same)."""

    def __init__(self, path="targets.txt", **kwargs):
        super().__init__(**kwargs)
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write("\n".join(str(float(t)) for t in TARGETS[:, 0]))
        self.path, self.targets_file = path, open(path)      # an open file object: it cannot be pickled

    def __len__(self):
        return BATCHES

    def __getitem__(self, i):
        self.targets_file.seek(0)
        targets = np.array(self.targets_file.read().split(), "float32")[:, None]
        return pool_numpy(IMAGES[i * BATCH:(i + 1) * BATCH]), targets[i * BATCH:(i + 1) * BATCH]


class ReopeningLabelledImages(LabelledImages):
    """The fix: never share the open file between processes. Pickle without it, and open it again in each
    process on first use (after a fork too: a file copied by fork shares its read position)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.targets_file.close()
        self.targets_file, self.opened_in = None, None

    def __getstate__(self):
        return dict(self.__dict__, targets_file=None, opened_in=None)

    def __getitem__(self, i):
        if self.opened_in != os.getpid():
            self.targets_file, self.opened_in = open(self.path), os.getpid()
        return super().__getitem__(i)


def make_model():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((32, 32, 3)), keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    return model


class BatchLog(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        print(f"epoch {self.epoch} batch {batch} done", flush=True)


class StallWatchdog(keras.callbacks.Callback):
    """If no batch ends for STALL seconds, write every thread's stack to stderr; with exit=True, then end
    the process with exit code 1 (faulthandler.dump_traceback_later)."""

    def __init__(self, exit):
        super().__init__()
        self.exit = exit

    def on_epoch_begin(self, epoch, logs=None):
        faulthandler.dump_traceback_later(STALL, exit=self.exit)

    def on_train_batch_end(self, batch, logs=None):
        faulthandler.dump_traceback_later(STALL, exit=self.exit)        # re-arming replaces the timer

    def on_train_end(self, logs=None):
        faulthandler.cancel_dump_traceback_later()


def train(dataset, epochs=2, watchdog=None):
    model = make_model()
    print("FIT STARTED", flush=True)
    extra = [StallWatchdog(exit=watchdog == "exit")] if watchdog else []
    model.fit(dataset, epochs=epochs, verbose=0, shuffle=False, callbacks=[BatchLog()] + extra)
    return int(model.optimizer.iterations)


def case(name):
    """One case, in this (fresh) process; returns what it printed as its last line."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)   # forked workers inherit it: the page can ask for stacks
    processes = {"workers": 2, "use_multiprocessing": True}
    if name == "tf op in forked worker":
        return {"steps": train(Images("tf", **processes), watchdog="dump")}
    if name == "worker process killed":
        return {"steps": train(Images("dies", **processes), watchdog="dump")}
    if name == "worker process killed, watchdog":
        return {"steps": train(Images("dies", **processes), watchdog="exit")}
    if name == "unpicklable under spawn":
        multiprocessing.set_start_method("spawn", force=True)   # the default on macOS and Windows
        return {"steps": train(LabelledImages(**processes))}
    if name == "fixed":
        import tensorflow as tf
        threads = {"workers": 2, "use_multiprocessing": False}
        copied = pickle.loads(pickle.dumps(ReopeningLabelledImages(**processes)))   # what spawn does with it
        try:
            pickle.dumps(LabelledImages(**processes))
        except TypeError as error:
            unpicklable = str(error)
        return {"tf op, threads": train(Images("tf", **threads)),
                "numpy, processes": train(Images("numpy", **processes)),
                "same pooling": bool(np.allclose(tf.nn.avg_pool2d(IMAGES, 2, 2, "VALID").numpy(),
                                                 pool_numpy(IMAGES), atol=1e-6)),
                "reopening dataset, processes": train(ReopeningLabelledImages(**processes)),
                "unpickled copy reads batch 3": bool(np.array_equal(copied[3][1], TARGETS[96:128])),
                "plain dataset pickles": unpicklable}
    raise ValueError(name)
# --8<-- [end:cases]


# --8<-- [start:runner]
PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 36, 37     # Linux prctl(2)


@dataclasses.dataclass
class Run:
    case: str
    limit: float                       # seconds allowed after the case printed FIT STARTED
    status: str = ""                   # "finished" (exit 0), "failed" (exit != 0) or "timed out" (killed)
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    busy_cpu: float | None = None      # CPU seconds its process tree used in the 3 s before the kill
    workers_at_kill: list = dataclasses.field(default_factory=list)
    reaped: int = 0                    # processes of its group reaped after the case process ended


class reaping:
    """While active, orphaned descendants are re-parented to this process (PR_SET_CHILD_SUBREAPER), so the
    page can reap the worker processes of a case it killed; the previous setting is put back afterwards."""

    def __enter__(self):
        self.libc, previous = ctypes.CDLL(None, use_errno=True), ctypes.c_int()
        self.libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(previous), 0, 0, 0)
        self.previous = previous.value
        self.libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        return self

    def __exit__(self, *exc):
        self.libc.prctl(PR_SET_CHILD_SUBREAPER, self.previous, 0, 0, 0)


def _tree(proc):
    try:
        root = psutil.Process(proc.pid)
        return [root] + root.children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _cpu(processes):
    total = 0.0
    for p in processes:
        try:
            times = p.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


def _read(pipe, lines, name, started):
    for line in pipe:
        lines.append(line)
        if line.strip() == "FIT STARTED":
            started.setdefault(name, time.monotonic())


def run_cases(limits, *, program, start_limit=280):
    """Run each case (name -> seconds allowed after FIT STARTED) in its own process, all at once. A case
    still running at its limit is killed with its whole process group; every process of the group is reaped."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")   # CPU only, fewer log lines
    runs, procs, readers, started, output = {}, {}, [], {}, {}
    with reaping():
        for name, limit in limits.items():
            runs[name] = Run(name, limit)
            procs[name] = subprocess.Popen([sys.executable, str(program), "--case", name], env=env, text=True,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
            output[name] = {"stdout": [], "stderr": []}
            for pipe, lines in ((procs[name].stdout, output[name]["stdout"]), (procs[name].stderr, output[name]["stderr"])):
                readers.append(threading.Thread(target=_read, args=(pipe, lines, name, started), daemon=True))
                readers[-1].start()
        launched, pending = time.monotonic(), set(limits)
        while pending:
            time.sleep(0.25)
            for name in sorted(pending):
                proc, run = procs[name], runs[name]
                if proc.poll() is not None:
                    run.status = "finished" if proc.returncode == 0 else "failed"
                elif time.monotonic() > (started[name] + limits[name] if name in started else launched + start_limit):
                    tree = _tree(proc)
                    before = _cpu(tree)
                    time.sleep(3)
                    run.busy_cpu = round(_cpu(tree) - before, 3)
                    run.workers_at_kill = [p.pid for p in _tree(proc)[1:]]
                    for pid in run.workers_at_kill:            # ask each worker where it is stuck, one at a
                        os.kill(pid, signal.SIGUSR1)           # time: they share one stderr pipe
                        time.sleep(1)
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    run.status = "timed out"
                else:
                    continue
                run.returncode = proc.returncode
                try:
                    os.killpg(proc.pid, signal.SIGKILL)        # anything of its group still alive
                except ProcessLookupError:
                    pass
                while True:                                    # reap the group: the case's orphaned workers
                    try:
                        os.waitpid(-proc.pid, 0)
                        run.reaped += 1
                    except ChildProcessError:
                        break
                pending.discard(name)
        for reader in readers:
            reader.join(timeout=30)
    for name, run in runs.items():
        run.stdout, run.stderr = "".join(output[name]["stdout"]), "".join(output[name]["stderr"])
        procs[name].stdout.close()
        procs[name].stderr.close()
        try:
            os.killpg(procs[name].pid, 0)
            raise AssertionError(f"{name}: a process of its group is still alive")
        except ProcessLookupError:
            pass                                               # the group is gone: nothing left running
    return runs


def result(run):
    """The JSON line a case prints when it returns."""
    return json.loads(run.stdout.strip().splitlines()[-1])
# --8<-- [end:runner]


def main():
    if sys.argv[1:2] == ["--case"]:
        print(json.dumps(case(sys.argv[2])), flush=True)
        return
    import tempfile

    program, home = os.path.abspath(__file__), os.getcwd()
    with tempfile.TemporaryDirectory() as workdir:
        os.chdir(workdir)                                   # the cases write targets.txt here
        try:
            runs = run_cases({"tf op in forked worker": 45, "worker process killed": 45, "unpicklable under spawn": 120,
                              "worker process killed, watchdog": 90, "fixed": 120}, program=program)   # all at once
        finally:
            os.chdir(home)
    for run in runs.values():
        print(run.case, run.status, run.returncode, run.busy_cpu, run.workers_at_kill, run.reaped)
    assert runs["tf op in forked worker"].status == "timed out", runs["tf op in forked worker"]
    assert runs["worker process killed"].status == "timed out", runs["worker process killed"]
    assert runs["unpicklable under spawn"].status == "failed", runs["unpicklable under spawn"]
    assert "TypeError: cannot pickle '_io.TextIOWrapper' object" in runs["unpicklable under spawn"].stderr
    assert runs["worker process killed, watchdog"].status == "failed", runs["worker process killed, watchdog"]
    assert runs["worker process killed, watchdog"].returncode == 1
    assert runs["fixed"].status == "finished", runs["fixed"].stderr[-3000:]
    fixed = result(runs["fixed"])
    assert fixed == {"tf op, threads": 16, "numpy, processes": 16, "same pooling": True,
                     "reopening dataset, processes": 16, "unpickled copy reads batch 3": True,
                     "plain dataset pickles": "cannot pickle '_io.TextIOWrapper' object"}, fixed


if __name__ == "__main__":
    main()
