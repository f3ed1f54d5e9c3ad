"""First-call cost of a loaded SavedModel, and a TF Serving warm-up file that removes it.

Run with no arguments: exports a small Keras model into a temporary folder, writes
assets.extra/tf_serving_warmup_requests, measures in this (fresh) process, checks the result and
exits 0. `python this.py measure EXPORT_DIR` measures an existing export and prints JSON.
"""

import json
import os
import statistics
import sys
import tempfile
import time


# --8<-- [start:warmup-file]
def warmup_path(export_dir):
    """Where TF Serving looks for warm-up requests inside a SavedModel version folder."""
    return os.path.join(export_dir, "assets.extra", "tf_serving_warmup_requests")


def write_warmup_file(export_dir, batches, model_name, signature="serving_default"):
    """One PredictionLog (holding a PredictRequest) per batch, written as a TFRecord file."""
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

    os.makedirs(os.path.dirname(warmup_path(export_dir)), exist_ok=True)
    with tf.io.TFRecordWriter(warmup_path(export_dir)) as writer:
        for inputs in batches:                                  # inputs: {input name: array}
            request = predict_pb2.PredictRequest()
            request.model_spec.name = model_name
            request.model_spec.signature_name = signature
            for key, value in inputs.items():
                request.inputs[key].CopyFrom(tf.make_tensor_proto(value))
            log = prediction_log_pb2.PredictionLog(
                predict_log=prediction_log_pb2.PredictLog(request=request))
            writer.write(log.SerializeToString())


def read_warmup_file(export_dir):
    """The PredictionLog records, parsed back with tensorflow-serving-api."""
    import tensorflow as tf
    from tensorflow_serving.apis import prediction_log_pb2

    return [prediction_log_pb2.PredictionLog.FromString(record.numpy())
            for record in tf.data.TFRecordDataset(warmup_path(export_dir))]
# --8<-- [end:warmup-file]


# --8<-- [start:replay]
def call_ms(fn, inputs):
    """Wall time of one call, in milliseconds, including fetching the result."""
    start = time.perf_counter()
    outputs = fn(**inputs)
    for value in outputs.values():
        value.numpy()
    return (time.perf_counter() - start) * 1000


def replay_warmup(loaded, logs):
    """Send every warm-up request to the signature it names, as a server does at load time."""
    import tensorflow as tf

    times = []
    for log in logs:
        request = log.predict_log.request
        fn = loaded.signatures[request.model_spec.signature_name or "serving_default"]
        inputs = {k: tf.constant(tf.make_ndarray(v)) for k, v in request.inputs.items()}
        times.append(call_ms(fn, inputs))
    return times
# --8<-- [end:replay]


# --8<-- [start:measure]
def measure(export_dir, rounds=3, steady_calls=50):
    """Run in a fresh process: what does the first request cost, with and without warm-up?"""
    import numpy as np
    import tensorflow as tf

    logs = read_warmup_file(export_dir)
    request = {"features": tf.constant(np.random.default_rng(1).normal(size=(4, 16)).astype("float32"))}

    # 1. The process's first load: replay the warm-up file, then serve.
    loaded = tf.saved_model.load(export_dir)
    replay = replay_warmup(loaded, logs)                      # replay[0] is the process's first call
    fn = loaded.signatures["serving_default"]
    first_after_warmup = call_ms(fn, request)                 # the first real request
    steady = statistics.median(call_ms(fn, request) for _ in range(steady_calls))

    # 2. Later loads of the same export (a new version, a model reload): cold vs warmed up.
    #    One first request per load, so each list holds one sample per round.
    reload_cold, reload_warmed = [], []
    for _ in range(rounds):
        cold = tf.saved_model.load(export_dir)
        reload_cold.append(call_ms(cold.signatures["serving_default"], request))
        warmed = tf.saved_model.load(export_dir)
        replay_warmup(warmed, logs)
        reload_warmed.append(call_ms(warmed.signatures["serving_default"], request))

    return {"replay_ms": replay, "first_after_warmup_ms": first_after_warmup, "steady_ms": steady,
            "reload_cold_ms": reload_cold, "reload_warmed_ms": reload_warmed}
# --8<-- [end:measure]


def demo_export(export_dir):
    """A small Keras model exported for serving (input `features`: float32 (None, 16))."""
    import keras
    import numpy as np

    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input(shape=(16,), name="features"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(3, name="scores"),
    ])
    model.export(export_dir, verbose=False)
    rng = np.random.default_rng(0)
    batches = [{"features": rng.normal(size=(n, 16)).astype("float32")} for n in (1, 4, 8)]
    write_warmup_file(export_dir, batches, model_name="scorer")


if __name__ == "__main__":
    if sys.argv[1:2] == ["measure"]:
        print(json.dumps(measure(sys.argv[2])))
    else:
        with tempfile.TemporaryDirectory() as folder:
            export = os.path.join(folder, "scorer", "1")
            demo_export(export)
            result = measure(export)
            assert result["replay_ms"][0] > 20 * result["steady_ms"], result
            # A stall only makes a call slower: the fastest warmed first request against the median cold one.
            warmed_best = min([result["first_after_warmup_ms"], *result["reload_warmed_ms"]])
            assert warmed_best < statistics.median(result["reload_cold_ms"]) / 5, result
            print(json.dumps(result))
