"""The Keras 2 side of moving model files between Keras 3 and Keras 2 (tf_keras).

Run it with TF_USE_LEGACY_KERAS=1 (so `tf.keras` is tf_keras) in a folder that holds the files a Keras 3 job
wrote: k3_sequential.keras, k3_sequential.h5, k3_functional.keras, k3_functional.h5, k3.weights.h5, the
SavedModel folder k3_export and probe.npy (a batch of inputs with 4 features). It tries to load each file,
tries the usual "rename batch_shape" fix, runs the two routes that work, and writes the Keras 2 files
(k2_*) for the opposite direction. Prints a JSON report; writes only into the current folder; exits 0.

Run without TF_USE_LEGACY_KERAS, it plays both sides: it writes the Keras 3 files (if probe.npy is missing),
then runs itself again with TF_USE_LEGACY_KERAS=1.
"""

import os  # noqa: I001 - os and subprocess serve only main(), outside the sections the page shows
import subprocess

# --8<-- [start:load]
import json
import sys
import zipfile

import numpy as np
import tensorflow as tf


def error_of(fn):
    """None if fn() returns, else 'ExceptionType: message'."""
    try:
        fn()
    except Exception as error:  # noqa: BLE001 - the report names whatever the loader raised
        return f"{type(error).__name__}: {error}"
    return None


def load_attempts(paths):
    """What this process's tf.keras.models.load_model says about each file: 'loaded' or the error."""
    return {path: error_of(lambda path=path: tf.keras.models.load_model(path)) or "loaded" for path in paths}
# --8<-- [end:load]


# --8<-- [start:rename]
def rename_batch_shape(path, renamed):
    """The fix found in many answers: rewrite config.json in the .keras zip, batch_shape -> batch_input_shape."""
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(renamed, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "config.json":
                data = data.replace(b'"batch_shape"', b'"batch_input_shape"')
            target.writestr(item, data)
    return renamed
# --8<-- [end:rename]


# --8<-- [start:routes]
def build(api):
    """The architecture as code: features (4) -> hidden (8, relu) -> score (1), in the Keras `api` given."""
    inputs = api.Input((4,), name="features")
    hidden = api.layers.Dense(8, activation="relu", name="hidden")(inputs)
    return api.Model(inputs, api.layers.Dense(1, name="score")(hidden))


def via_weights(api, weights_file, probe):
    """Route 1: rebuild the model in code, then load only the weights (.weights.h5)."""
    model = build(api)
    model.load_weights(weights_file)
    return model.predict(probe, verbose=0)


def via_savedmodel(directory, probe):
    """Route 2, inference only: the exported SavedModel is TensorFlow's format, not a Keras one."""
    served = tf.saved_model.load(directory)
    return served.serve(tf.constant(probe)).numpy()
# --8<-- [end:routes]


def write_keras3_files():
    """The training side, in Keras 3: the files listed above."""
    import warnings

    import keras

    keras.utils.set_random_seed(0)
    np.save("probe.npy", np.random.default_rng(0).normal(size=(5, 4)).astype("float32"))
    functional = build(keras)
    sequential = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
    for name, model in [("k3_functional", functional), ("k3_sequential", sequential)]:
        model.compile(optimizer="adam", loss="mean_squared_error")
        model.save(f"{name}.keras")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.save(f"{name}.h5")
    functional.save_weights("k3.weights.h5")
    functional.export("k3_export", verbose=False)


def main():
    if tf.keras.Model.__module__.split(".")[0] == "keras":          # tf.keras is Keras 3 in this process
        if not os.path.exists("probe.npy"):
            write_keras3_files()
        subprocess.run([sys.executable, __file__], env={**os.environ, "TF_USE_LEGACY_KERAS": "1"}, check=True)
        return
    probe = np.load("probe.npy")
    report = {"tf.keras is": tf.keras.Model.__module__.split(".")[0]}
    report["load"] = load_attempts(["k3_sequential.keras", "k3_sequential.h5", "k3_functional.keras",
                                    "k3_functional.h5"])
    report["renamed"] = load_attempts([rename_batch_shape("k3_sequential.keras", "k3_renamed.keras")])
    np.save("k2_via_weights.npy", via_weights(tf.keras, "k3.weights.h5", probe))
    np.save("k2_via_savedmodel.npy", via_savedmodel("k3_export", probe))

    # the opposite direction: what a Keras 2 job writes
    tf.keras.utils.set_random_seed(0)
    functional = build(tf.keras)
    functional.compile(optimizer="adam", loss="mean_squared_error")
    sequential = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8, activation="relu"),
                                      tf.keras.layers.Dense(1)])
    sequential.compile(optimizer="adam", loss="mean_squared_error")
    for name, model in [("k2_functional", functional), ("k2_sequential", sequential)]:
        model.save(f"{name}.keras")
        model.save(f"{name}.h5")
        np.save(f"{name}_expected.npy", model.predict(probe, verbose=0))
    functional.save_weights("k2.weights.h5")
    functional.save("k2_savedmodel")                      # Keras 2: a path without a suffix is a SavedModel
    json.dump(report, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
