"""Train a tiny model reproducibly and print a fingerprint of the result as JSON.

    python snippets/best-practices/reproducible-runs.py            # seeded + deterministic
    python snippets/best-practices/reproducible-runs.py --seed 1   # another seed

Two runs with the same seed print the same fingerprint, bit for bit. "unseeded_start" fingerprints a
model built with op determinism on but before any seed is set: it differs from run to run.
"""

import argparse
import hashlib
import json

# --8<-- [start:setup]
import keras
import numpy as np
import tensorflow as tf


def make_reproducible(seed):
    keras.utils.set_random_seed(seed)                 # Python `random`, NumPy and TensorFlow
    tf.config.experimental.enable_op_determinism()    # deterministic kernels (process-wide)
# --8<-- [end:setup]


# --8<-- [start:train]
def train(seed):
    make_reproducible(seed)
    x = np.random.rand(256, 8).astype("float32")
    y = (x[:, :4].sum(axis=1) > x[:, 4:].sum(axis=1)).astype("float32")
    data = (tf.data.Dataset.from_tensor_slices((x, y))
            .shuffle(256, seed=seed)                  # data order is part of the run
            .batch(32)
            .prefetch(tf.data.AUTOTUNE))
    model = keras.Sequential([
        keras.Input((8,)),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dropout(0.3),                    # randomness during training, seeded too
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    history = model.fit(data, epochs=2, verbose=0)
    return model, history.history["loss"]


def fingerprint(model, losses):
    digest = hashlib.sha256()
    for weight in model.get_weights():
        digest.update(weight.tobytes())
    digest.update(np.asarray(losses, dtype="float64").tobytes())
    return digest.hexdigest()
# --8<-- [end:train]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    tf.config.experimental.enable_op_determinism()
    unseeded = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])   # op determinism on, no seed yet
    model, losses = train(args.seed)
    print(json.dumps({"fingerprint": fingerprint(model, losses), "final_loss": float(losses[-1]),
                      "unseeded_start": fingerprint(unseeded, []),
                      "gpus": len(tf.config.list_physical_devices("GPU"))}))
