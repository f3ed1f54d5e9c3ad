"""Which Keras does each spelling give in this process, and does KerasTuner accept the model?

Run it as it is, and again with TF_USE_LEGACY_KERAS=1 in the environment. Prints one JSON object: for each way
of reaching Keras ("tf.keras.layers.Dense", "from tensorflow.keras import layers", ...) the package that owns the
class it returns (`keras` is Keras 3, `tf_keras` is Keras 2), and what a one-trial KerasTuner search says about a
model built with `tf.keras` and about one built with `keras`. Writes only to temporary folders it removes;
exits 0.
"""

# --8<-- [start:program]
import json
import os
import sys
import tempfile

import keras
import keras_tuner
import numpy as np
import tensorflow as tf
import tf_keras
from tensorflow.keras import layers as tfk_layers


def package_of(obj):
    """'keras' (Keras 3) or 'tf_keras' (Keras 2): the top-level package that defines obj's class."""
    cls = obj if isinstance(obj, type) else type(obj)
    return cls.__module__.split(".")[0]


def owners():
    return {
        "tf.keras.layers.Dense": package_of(tf.keras.layers.Dense),
        "from tensorflow.keras import layers": package_of(tfk_layers.Dense),
        "tf.keras.Model": package_of(tf.keras.Model),
        "tf.keras.optimizers.Adam": package_of(tf.keras.optimizers.Adam),
        "import keras": package_of(keras.layers.Dense),
        "import tf_keras": package_of(tf_keras.layers.Dense),
    }


def one_trial(api):
    """A one-trial KerasTuner search on a model built with `api` (tf.keras or keras): 'ok' or the error."""
    def build(hp):
        model = api.Sequential([api.Input((3,)), api.layers.Dense(hp.Int("units", 1, 4))])
        model.compile(optimizer="adam", loss="mean_squared_error")
        return model

    x = np.ones((8, 3), "float32")
    with tempfile.TemporaryDirectory() as folder:
        tuner = keras_tuner.RandomSearch(build, objective="loss", max_trials=1, overwrite=True,
                                         directory=folder, project_name="mixed")
        try:
            tuner.search(x, x[:, :1], epochs=1, verbose=0)
            return "ok"
        except Exception as error:  # noqa: BLE001 - the report names whatever the tuner raised
            return f"{type(error).__name__}: {error}"


def report():
    return {"TF_USE_LEGACY_KERAS": os.environ.get("TF_USE_LEGACY_KERAS"), "owners": owners(),
            "tuner with tf.keras": one_trial(tf.keras), "tuner with keras": one_trial(keras)}
# --8<-- [end:program]


if __name__ == "__main__":
    json.dump(report(), sys.stdout, indent=1)
