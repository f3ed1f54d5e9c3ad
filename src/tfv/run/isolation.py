"""Per page: a namespace, a temporary working folder, no network, no leaks. `setup` and `teardown` are the
Sybil document's; the page's namespace gets HAS_GPU, ROOT and `record`, and every page starts from seed 0."""

import ipaddress
import os
import shutil
import socket
import tempfile
import threading
import warnings
from pathlib import Path

import psutil

from tfv.layout import ROOT
from tfv.pages import front_matter, page_key
from tfv.run.device import FACTS, facts
from tfv.run.recorder import record


class SocketGuard:
    """Refuse every connection and datagram; with `network: loopback` in a page's front matter, allow
    addresses that resolve to loopback (127.0.0.0/8, ::1). The outer wall is the network namespace the
    Makefile runs examples in (only loopback exists there); this guard is the inner one."""

    CALLS = {"connect": 0, "connect_ex": 0, "sendto": -1, "sendmsg": 3}  # method: index of the address argument

    def __init__(self, loopback):
        self.loopback = loopback
        self.saved = {name: getattr(socket.socket, name) for name in self.CALLS}

    def check(self, sock, address):
        if sock.family == getattr(socket, "AF_UNIX", None):
            return  # a local file path (kernel plumbing), not the network
        if address is None:
            return  # sendmsg on a connected socket: its connect() was checked already
        host = address[0]
        try:
            resolved = {info[4][0] for info in socket.getaddrinfo(host, None)}
        except OSError:
            resolved = set()
        loopback = bool(resolved) and all(ipaddress.ip_address(ip.split("%")[0]).is_loopback for ip in resolved)
        if not loopback:
            raise OSError(f"network blocked in examples: refused {address!r}")
        if not self.loopback:
            raise OSError("network blocked: this page did not opt into loopback (`network: loopback`)")

    def install(self):
        for name, index in self.CALLS.items():
            def guarded(sock, *args, _original=self.saved[name], _index=index):
                self.check(sock, args[_index] if len(args) > abs(_index) - (_index < 0) else None)
                return _original(sock, *args)
            setattr(socket.socket, name, guarded)

    def remove(self):
        for name, original in self.saved.items():
            setattr(socket.socket, name, original)


def _globals():
    """Process-wide switches a page may flip; teardown puts back what setup saw."""
    import keras
    import tensorflow as tf

    return {
        "environment": dict(os.environ),
        "warning filters": list(warnings.filters),
        "keras dtype policy": keras.config.dtype_policy().name,
        "keras floatx": keras.config.floatx(),
        "functions run eagerly": tf.config.functions_run_eagerly(),
        "soft device placement": tf.config.get_soft_device_placement(),
        "XLA auto-jit": tf.config.optimizer.get_jit(),
    }


def _restore(saved):
    import keras
    import tensorflow as tf

    os.environ.clear()
    os.environ.update(saved["environment"])
    warnings.filters[:] = saved["warning filters"]
    keras.config.set_dtype_policy(saved["keras dtype policy"])
    keras.config.set_floatx(saved["keras floatx"])
    tf.config.run_functions_eagerly(saved["functions run eagerly"])
    tf.config.set_soft_device_placement(saved["soft device placement"])
    tf.config.optimizer.set_jit(saved["XLA auto-jit"])


def seed():
    """Every page starts from the same random state, whatever ran before it on this worker."""
    import keras

    keras.utils.set_random_seed(0)  # Python, NumPy and TensorFlow


def _running(children):
    """The processes still running: not exited, and not a zombie waiting for its parent to reap it (a zombie is
    not reaped here: its parent, a pool say, may still wait for it)."""
    alive = []
    for child in children:
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                alive.append(child)
        except psutil.NoSuchProcess:
            pass
    return alive


def _leaks(threads_before):
    """Threads and child processes a page started and left running (detected, then ended)."""
    found = []
    for child in _running(psutil.Process().children(recursive=True)):
        try:
            command = " ".join(child.cmdline()[:3])
            child.kill()
        except (psutil.ZombieProcess, psutil.NoSuchProcess):
            continue  # it exited while we looked
        found.append(f"child process {child.pid} ({command})")
    for thread in set(threading.enumerate()) - threads_before:
        thread.join(timeout=2)
        if thread.is_alive():
            found.append(f"thread {thread.name!r}")
    return found


def setup(namespace):
    page = Path(namespace["__file__"])
    facts()
    guard = SocketGuard(loopback=front_matter(page)[0].get("network") == "loopback")
    workdir = tempfile.mkdtemp(prefix=f"tfv-{page.stem}-")
    namespace.update(HAS_GPU=FACTS["device"] == "gpu", ROOT=ROOT, record=record, _guard=guard, _cwd=os.getcwd(),
                     _globals=_globals(), _threads=set(threading.enumerate()))
    seed()
    guard.install()
    os.chdir(workdir)  # examples write only here


def teardown(namespace):
    import keras

    namespace["_guard"].remove()
    workdir = os.getcwd()
    os.chdir(namespace["_cwd"])
    shutil.rmtree(workdir, ignore_errors=True)
    keras.backend.clear_session()
    _restore(namespace["_globals"])
    leaks = _leaks(namespace["_threads"])
    if leaks:
        raise RuntimeError(f"{page_key(namespace['__file__'])}: the page left running: {', '.join(leaks)}")
