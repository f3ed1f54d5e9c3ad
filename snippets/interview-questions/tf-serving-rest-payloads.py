"""TF Serving REST predict payloads, decoded without a server.

The decoder follows the TF Serving REST API document (https://www.tensorflow.org/tfx/serving/api_rest):
row format ("instances"), columnar format ("inputs"), {"b64": ...} for binary strings, and the response
keys ("predictions" for rows, "outputs" for columns). It is a small stand-in written for this site, not
TF Serving's own parser.

Run with no arguments: exports a two-input model, sends a row payload and a columnar payload through a
fresh process, checks both give the model's prediction, exits 0.
`python this.py serve EXPORT_DIR` reads a JSON list of request bodies on stdin and prints a JSON list
of response bodies.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path


# --8<-- [start:export]
def export_model(export_dir):
    """A two-input signature: `features` (float32, (None, 2)) and `image` (4 raw bytes per example).
    score = Dense(features) + mean byte value / 255. The Keras input is named `x`: the served names
    come from the TensorSpecs below."""
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((2,), name="x"), keras.layers.Dense(1)])   # not the served name

    def serve(features, image):
        pixels = tf.io.decode_raw(image, tf.uint8, fixed_length=4)      # the 4 bytes, as numbers
        brightness = tf.reduce_mean(tf.cast(pixels, tf.float32), axis=-1, keepdims=True) / 255.0
        return {"score": model(features) + brightness}

    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.add_endpoint("serving_default", serve, input_signature=[
        tf.TensorSpec([None, 2], tf.float32, name="features"),
        tf.TensorSpec([None], tf.string, name="image"),
    ])
    archive.write_out(str(export_dir), verbose=False)
    return model
# --8<-- [end:export]


# --8<-- [start:decoder]
import base64  # noqa: E402  (shown with the decoder on the page)

import numpy as np  # noqa: E402


def _is_b64(value):
    return isinstance(value, dict) and set(value) == {"b64"}


def _is_named(value):
    """A JSON object mapping input names to values (a {"b64": ...} object is a value, not names)."""
    return isinstance(value, dict) and not _is_b64(value)


def _json_to_python(value):
    """{"b64": s} -> the decoded bytes; a JSON string -> its UTF-8 bytes; lists element-wise."""
    if _is_b64(value):
        return base64.b64decode(value["b64"], validate=True)
    if isinstance(value, list):
        return [_json_to_python(v) for v in value]
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, dict):
        raise ValueError(f"an object that is not {{'b64': ...}} cannot be a tensor value: {value!r}")
    return value                                       # numbers and booleans


def decode_predict_request(body, specs):
    """A parsed `:predict` body -> {input name: NumPy array} for a signature whose inputs are `specs`
    ({name: tf.TensorSpec}). Row format: a list of instances, one object of named values per example
    (or bare values when the signature has one input). Columnar format: one (nested) list per input."""
    if ("instances" in body) == ("inputs" in body):
        raise ValueError('a predict request holds exactly one of "instances" (rows) or "inputs" (columns)')
    names = set(specs)
    if "instances" in body:
        rows = body["instances"]
        if len(names) == 1 and not any(_is_named(r) for r in rows):
            columns = {next(iter(names)): rows}
        else:
            for row in rows:
                if not _is_named(row) or set(row) != names:
                    raise ValueError(f"every instance must name exactly the inputs {sorted(names)}: {row!r}")
            columns = {name: [row[name] for row in rows] for name in names}
    else:
        given = body["inputs"]
        columns = given if _is_named(given) else {next(iter(names)): given}
        if set(columns) != names:
            raise ValueError(f"inputs must name exactly {sorted(names)}, got {sorted(columns)}")
    arrays = {}
    for name, values in columns.items():
        spec = specs[name]
        dtype = object if spec.dtype.name == "string" else spec.dtype.as_numpy_dtype
        arrays[name] = np.array(_json_to_python(values), dtype=dtype)
        if not spec.shape.is_compatible_with(arrays[name].shape):
            raise ValueError(f"{name}: shape {arrays[name].shape} does not fit the signature's {spec.shape}")
    return arrays


def _python_to_json(value, name):
    if isinstance(value, bytes):                       # outputs named *_bytes are sent as base64
        return {"b64": base64.b64encode(value).decode()} if name.endswith("_bytes") else value.decode()
    if isinstance(value, list):
        return [_python_to_json(v, name) for v in value]
    return value


def encode_predict_response(outputs, row_format):
    """{output name: NumPy array} -> {"predictions": ...} (row request) or {"outputs": ...} (columnar).
    With a single output the name is left out."""
    plain = {name: _python_to_json(np.asarray(v).tolist(), name) for name, v in outputs.items()}
    if not row_format:
        return {"outputs": next(iter(plain.values())) if len(plain) == 1 else plain}
    if len(plain) == 1:
        return {"predictions": next(iter(plain.values()))}
    batch = len(next(iter(plain.values())))
    return {"predictions": [{name: plain[name][i] for name in plain} for i in range(batch)]}
# --8<-- [end:decoder]


# --8<-- [start:serve]
def serve_main(export_dir):
    """The fresh process: only the SavedModel on disk and the decoder. One response per request body;
    a failure becomes {"error": "<type>: <message>"}, the shape of a TF Serving error body."""
    import tensorflow as tf

    signature = tf.saved_model.load(export_dir).signatures["serving_default"]
    specs = signature.structured_input_signature[1]
    responses = []
    for body in json.load(sys.stdin):
        try:
            inputs = decode_predict_request(body, specs)
            outputs = signature(**{name: tf.constant(value) for name, value in inputs.items()})
            responses.append(encode_predict_response({k: v.numpy() for k, v in outputs.items()},
                                                     row_format="instances" in body))
        except (ValueError, tf.errors.InvalidArgumentError) as error:
            message = getattr(error, "message", str(error))
            responses.append({"error": f"{type(error).__name__}: {message}"})
    print(json.dumps(responses))
# --8<-- [end:serve]


# --8<-- [start:ask]
def ask_fresh_process(export_dir, bodies, script=None):
    """Send request bodies to a new Python process running serve_main; return its response bodies."""
    script = script or Path(__file__).resolve()
    done = subprocess.run([sys.executable, str(script), "serve", str(export_dir)], input=json.dumps(bodies),
                          capture_output=True, text=True, timeout=280)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])
# --8<-- [end:ask]


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve_main(sys.argv[2])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            model = export_model(Path(tmp) / "model" / "1")
            row = {"instances": [{"features": [0.5, -1.0], "image": {"b64": "ABCA/w=="}},
                                 {"features": [1.5, 2.0], "image": {"b64": "//4AAQ=="}}]}
            col = {"inputs": {"features": [[0.5, -1.0], [1.5, 2.0]],
                              "image": [{"b64": "ABCA/w=="}, {"b64": "//4AAQ=="}]}}
            by_row, by_col = ask_fresh_process(Path(tmp) / "model" / "1", [row, col])
            features = np.array([[0.5, -1.0], [1.5, 2.0]], dtype="float32")
            brightness = np.array([[0 + 16 + 128 + 255], [255 + 254 + 0 + 1]], dtype="float32") / 4 / 255
            expected = np.asarray(model(features)) + brightness
            np.testing.assert_allclose(by_row["predictions"], expected, rtol=1e-6)
            np.testing.assert_allclose(by_col["outputs"], expected, rtol=1e-6)
            print("ok: row and columnar payloads give the model's prediction in a fresh process")
