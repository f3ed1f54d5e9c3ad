"""What a notebook page's kernel runs before its first cell, so a notebook page gets the page API and isolation of a
Markdown page: two logical devices, seed 0, the socket guard, HAS_GPU, ROOT and `record`. The kernel's own facts
(device, versions) and recorded results go back to the test run through a file outside the page's working folder."""

import json
from pathlib import Path

from tfv.layout import ROOT

_FILE = []  # the file this kernel reports to (set by start)


def prelude(loopback, file):
    """The code the kernel runs first, in the page's namespace (not stored in its history: cells still count from 1)."""
    return (f"from tfv.run.kernel import start as _tfv_start\n"
            f"HAS_GPU, ROOT, record = _tfv_start({bool(loopback)!r}, {str(file)!r})\n"
            f"del _tfv_start\n")


def start(loopback, file):
    from tfv.run.device import facts
    from tfv.run.isolation import SocketGuard, seed

    found = dict(facts())  # configures the two logical devices, then reads the device and versions
    _FILE[:] = [Path(file)]
    _write({"facts": found, "results": {}})
    seed()
    SocketGuard(loopback=loopback).install()
    return found["device"] == "gpu", ROOT, record


def record(name, value, *, rtol=1e-6, atol=0.0):
    """Record a named numeric result, as on a Markdown page (tfv.run.recorder.record): the publish build fails when
    the GPU run's value differs from the CPU run's by more than atol + rtol * |cpu value|."""
    state = json.loads(_FILE[0].read_text())
    state["results"][name] = {"value": float(value), "rtol": rtol, "atol": atol}
    _write(state)


def _write(state):
    _FILE[0].write_text(json.dumps(state))
