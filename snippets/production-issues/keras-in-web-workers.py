"""A pre-fork WSGI server (gunicorn's model, built from the standard library) serving a Keras model.

Run with no arguments: saves a small model in a temporary folder, starts a master with two workers that
load it after the fork, checks their answers against the model, starts a --preload master and checks what
its workers inherit, then exits 0.
`python this.py serve MODEL_PATH WORKERS [--preload]` runs a master: it prints one JSON line per process
({"role": "master"|"worker", ...}) and serves on 127.0.0.1 until it receives SIGTERM.
"""

# --8<-- [start:imports]
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

# --8<-- [end:imports]


# --8<-- [start:app]
def thread_count():
    """Threads of this process as the kernel counts them (Python's and TensorFlow's C++ threads)."""
    return len(os.listdir("/proc/self/task"))


MODEL = {"path": os.environ.get("MODEL_PATH", "model.keras"), "model": None, "pid": None}
_load_lock = threading.Lock()


class LoadedBeforeFork(RuntimeError):
    pass


def get_model():
    """Load the model once per process, on first use, which is after the fork."""
    if MODEL["model"] is None:
        with _load_lock:
            if MODEL["model"] is None:
                import keras

                MODEL["model"], MODEL["pid"] = keras.saving.load_model(MODEL["path"]), os.getpid()
    if MODEL["pid"] != os.getpid():           # inherited through fork: never touch it
        raise LoadedBeforeFork(f"model loaded in process {MODEL['pid']}, before the fork; this is {os.getpid()}")
    return MODEL["model"]


def app(environ, start_response):
    """The WSGI application (what gunicorn imports): POST {"rows": [[...], ...]} -> {"scores": ...}."""
    import numpy as np

    body = json.loads(environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0)))
    if body.get("meet"):                      # test hook: wait until every worker holds one request
        MEETING.wait(timeout=280)
    try:
        model = get_model()
    except LoadedBeforeFork as error:
        status, answer = "503 Service Unavailable", {"error": str(error)}
    else:
        scores = model(np.asarray(body["rows"], dtype="float32"), training=False).numpy()
        status, answer = "200 OK", {"scores": scores.tolist()}
    payload = json.dumps({"pid": os.getpid(), "threads": thread_count(), **answer}).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))])
    return [payload]
# --8<-- [end:app]


# --8<-- [start:master]
class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):             # no access log on stderr
        pass


class InheritedSocketServer(WSGIServer):
    """A sync worker: one request at a time, on the listening socket the master opened before forking."""

    def __init__(self, listener):
        self.listener = listener
        super().__init__(listener.getsockname(), QuietHandler)

    def server_bind(self):
        self.socket.close()
        self.socket = self.listener
        self.server_address = self.listener.getsockname()
        self.server_name, self.server_port = "127.0.0.1", self.server_address[1]
        self.setup_environ()

    def server_activate(self):                # the master already called listen()
        pass

    def service_actions(self):                # as gunicorn's workers do: exit when the master is gone
        if os.getppid() != self.master:
            os._exit(0)


def report(role, **facts):
    line = json.dumps({"role": role, "pid": os.getpid(), "threads": thread_count(), **facts}) + "\n"
    os.write(1, line.encode())                # one write: lines from several processes never interleave


def worker(listener):
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    report("worker", tensorflow_imported="tensorflow" in sys.modules,
           model_loaded=MODEL["model"] is not None)
    server = InheritedSocketServer(listener)
    server.master = os.getppid()
    server.set_app(app)
    server.serve_forever()


def serve(model_path, workers, preload=False):
    """The master (gunicorn's arbiter): bind once, fork the workers, wait for SIGTERM, stop them."""
    global MEETING
    import multiprocessing

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})   # first: every thread started later inherits it
    MODEL["path"] = model_path
    MEETING = multiprocessing.get_context("fork").Barrier(workers)
    listener = socket.create_server(("127.0.0.1", 0), backlog=64)
    imported = {}
    if preload:                               # gunicorn --preload: the app, and here the model, load first
        import keras  # noqa: F401  (imported first, to count the threads the load itself starts)

        imported = {"threads_before_load": thread_count()}
        get_model()
    children = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
            worker(listener)
            os._exit(0)
        children.append(pid)
    report("master", port=listener.getsockname()[1], workers=children,
           tensorflow_imported="tensorflow" in sys.modules, model_loaded=MODEL["model"] is not None, **imported)
    signal.sigwait({signal.SIGTERM})
    for pid in children:
        os.kill(pid, signal.SIGTERM)
    for pid in children:
        os.waitpid(pid, 0)
# --8<-- [end:master]


# --8<-- [start:client]
def start_master(model_path, workers, preload=False, program=__file__):
    """Start a master in a fresh Python process; return (process, {"master": facts, "workers": [facts]})."""
    args = [sys.executable, str(program), "serve", str(model_path), str(workers)] + (["--preload"] if preload else [])
    import tempfile

    log = tempfile.TemporaryFile(mode="w+")     # the master's stderr (TensorFlow's start-up log)
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, text=True)
    process.log = log
    try:
        lines = [json.loads(process.stdout.readline()) for _ in range(workers + 1)]
    except ValueError:
        stop_master(process)
        raise
    return process, {"master": next(line for line in lines if line["role"] == "master"),
                     "workers": [line for line in lines if line["role"] == "worker"]}


def stop_master(process):
    process.send_signal(signal.SIGTERM)
    code = process.wait(timeout=280)                  # hang guards: a loaded machine is slow, not wrong
    process.stdout.close()
    process.log.seek(0)
    log = process.log.read()
    process.log.close()
    assert code == 0, (code, log[-2000:])


def post(port, body):
    """POST a JSON body to the server; return (HTTP status, decoded JSON answer)."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(f"http://127.0.0.1:{port}/predict", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=280) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())
# --8<-- [end:client]


def check(model_path):
    """Both modes, as the page runs them: lazy load answers correctly, --preload inherits a loaded model."""
    from concurrent.futures import ThreadPoolExecutor

    import keras
    import numpy as np

    rows = np.random.default_rng(0).normal(size=(3, 4)).astype("float32").tolist()
    expected = np.asarray(keras.saving.load_model(model_path)(np.asarray(rows, "float32")))
    process, started = start_master(model_path, 2)
    try:
        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(lambda _: post(started["master"]["port"], {"rows": rows, "meet": True}), range(2)))
    finally:
        stop_master(process)
    assert len({a["pid"] for _, a in answers}) == 2, answers
    for status, answer in answers:
        assert status == 200, answer
        np.testing.assert_allclose(answer["scores"], expected, rtol=1e-6)
    process, started = start_master(model_path, 2, preload=True)
    try:
        status, answer = post(started["master"]["port"], {"rows": rows})
    finally:
        stop_master(process)
    assert started["master"]["threads"] > 1, started
    assert all(w["model_loaded"] and w["threads"] == 1 for w in started["workers"]), started
    assert status == 503 and "before the fork" in answer["error"], (status, answer)


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2], int(sys.argv[3]), preload="--preload" in sys.argv)
    else:
        import tempfile

        import keras

        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "model.keras")
            keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(2)]).save(path)
            check(path)
        print("ok")
