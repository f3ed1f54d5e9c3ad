"""A Keras model exported with model.export(), served by FastAPI under uvicorn.

Run with no arguments: exports a small model in a temporary folder, starts a uvicorn server on 127.0.0.1
(port 0: the OS picks one), checks its answers against the model and its 422 on a bad shape, stops it, exits 0.
`python this.py serve EXPORT_DIR` runs a server: it prints one JSON line ({"pid", "port"}) once it listens,
serves until SIGTERM, and prints one more JSON line (what it counted) when it has shut down.
"""

# --8<-- [start:app]
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from typing import Annotated

import numpy as np
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

N_FEATURES = 4
# strict: a number, not a string or a bool coerced to one; allow_inf_nan=False: NaN and Infinity are refused.
Feature = Annotated[float, Field(strict=True, allow_inf_nan=False)]
Row = Annotated[list[Feature], Field(min_length=N_FEATURES, max_length=N_FEATURES)]


class PredictRequest(BaseModel):
    """TF Serving's REST row format: {"instances": [[4 floats], ...]}, 1 to 256 rows."""

    instances: Annotated[list[Row], Field(min_length=1, max_length=256)]


class PredictResponse(BaseModel):
    predictions: list[list[float]]


COUNTS = {"loads": 0, "model_calls": 0}


def load_serving_fn(export_dir):
    """Load the SavedModel that model.export() wrote; the one place this process loads a model."""
    import tensorflow as tf

    COUNTS["loads"] += 1
    return tf.saved_model.load(export_dir).signatures["serving_default"]


def create_app(export_dir):
    @contextlib.asynccontextmanager
    async def lifespan(app):
        app.state.predict = load_serving_fn(export_dir)      # once, before the first request
        yield
        app.state.predict = None                             # at shutdown

    app = FastAPI(lifespan=lifespan)

    @app.exception_handler(RequestValidationError)
    async def invalid_body(request, exc):                    # FastAPI's 422, without echoing the input back:
        fields = ("type", "loc", "msg")                       # a NaN in it would not encode as JSON (a 500)
        return JSONResponse(status_code=422, content={"detail": [{k: e[k] for k in fields} for e in exc.errors()]})

    @app.post("/v1/models/iris:predict", response_model=PredictResponse)
    def predict(body: PredictRequest, request: Request):      # a plain def: FastAPI runs it in a thread pool
        fn = getattr(request.app.state, "predict", None)
        if fn is None:
            raise HTTPException(status_code=503, detail="model not loaded")
        import tensorflow as tf

        COUNTS["model_calls"] += 1
        out = fn(features=tf.constant(np.asarray(body.instances, dtype="float32")))["output_0"]
        return {"predictions": out.numpy().tolist()}

    @app.get("/v1/models/iris/metadata")
    def metadata(request: Request):                           # the contract, read from the loaded export
        fn = request.app.state.predict

        def describe(specs):
            return {key: [spec.dtype.name, spec.shape.as_list()] for key, spec in sorted(specs.items())}

        return {"inputs": describe(fn.structured_input_signature[1]), "outputs": describe(fn.structured_outputs)}

    @app.get("/health")
    def health():
        return {"pid": os.getpid(), **COUNTS}

    return app
# --8<-- [end:app]


# --8<-- [start:serve]
def serve(export_dir):
    """A uvicorn server on 127.0.0.1, on a port the OS picks; SIGTERM starts uvicorn's graceful shutdown."""
    import uvicorn

    listener = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(export_dir), log_level="warning", access_log=False))
    # uvicorn catches SIGTERM, shuts down gracefully (the lifespan's exit runs), then raises the signal again
    # for the handler it found; this one returns, so the process prints its counts and exits 0.
    signal.signal(signal.SIGTERM, lambda *_: None)
    print(json.dumps({"pid": os.getpid(), "port": listener.getsockname()[1]}), flush=True)
    server.run(sockets=[listener])
    print(json.dumps({"pid": os.getpid(), "stopped": True, **COUNTS}), flush=True)
# --8<-- [end:serve]


# --8<-- [start:client]
def start_server(export_dir, program=__file__):
    """Start `program serve export_dir` in a fresh Python process; return (process, port)."""
    import tempfile

    log = tempfile.TemporaryFile(mode="w+")                     # the server's stderr (TensorFlow's log)
    process = subprocess.Popen([sys.executable, str(program), "serve", str(export_dir)],
                               stdout=subprocess.PIPE, stderr=log, text=True)
    process.log = log
    line = process.stdout.readline()
    if not line:
        stop_server(process)
    return process, json.loads(line)["port"]


def wait_ready(client, port, attempts=600):
    """Poll /health until the lifespan has loaded the model (the port accepts before that)."""
    import time

    import httpx

    for _ in range(attempts):
        try:
            return client.get(f"http://127.0.0.1:{port}/health").json()
        except httpx.TransportError:
            time.sleep(0.1)
    raise TimeoutError(f"no answer on port {port}")


def stop_server(process):
    """SIGTERM, wait, and return the server's last JSON line (its counts after shutdown)."""
    process.send_signal(signal.SIGTERM)
    try:
        code = process.wait(timeout=280)
    except BaseException:                                       # a hang (TimeoutExpired): never leave it running
        process.kill()
        process.wait()
        raise
    tail = process.stdout.read()
    process.stdout.close()
    process.log.seek(0)
    log = process.log.read()
    process.log.close()
    assert code == 0, (code, log[-2000:])
    return json.loads(tail.strip().splitlines()[-1])
# --8<-- [end:client]


def check():
    import tempfile

    import httpx
    import keras

    with tempfile.TemporaryDirectory() as folder:
        model = keras.Sequential([keras.Input((N_FEATURES,), name="features"), keras.layers.Dense(3)])
        export_dir = os.path.join(folder, "1")
        model.export(export_dir, verbose=False)
        rows = np.random.default_rng(0).normal(size=(3, N_FEATURES)).astype("float32")
        process, port = start_server(export_dir)
        try:
            with httpx.Client(trust_env=False, timeout=120) as client:
                wait_ready(client, port)
                url = f"http://127.0.0.1:{port}/v1/models/iris:predict"
                good = client.post(url, json={"instances": rows.tolist()})
                bad = client.post(url, json={"instances": [[1.0, 2.0, 3.0]]})
                meta = client.get(f"http://127.0.0.1:{port}/v1/models/iris/metadata").json()
        finally:
            counts = stop_server(process)
        assert good.status_code == 200, good.text
        np.testing.assert_allclose(good.json()["predictions"], model(rows).numpy(), rtol=1e-6, atol=1e-6)
        assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "instances", 0], bad.text
        assert meta["inputs"] == {"features": ["float32", [None, N_FEATURES]]}, meta
        assert counts["loads"] == 1 and counts["model_calls"] == 1, counts


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2])
    else:
        check()
        print("ok")
