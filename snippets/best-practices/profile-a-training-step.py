"""Profile a few training steps and report, as JSON, which files each way of profiling wrote.

    python snippets/best-practices/profile-a-training-step.py                        # everything installed
    python snippets/best-practices/profile-a-training-step.py tensorboard xprof      # as if those were missing

The arguments name top-level packages to hide from the import system, which is what a fresh environment
without them looks like. Importing TensorFlow and Keras imports neither package, so hiding them after those
imports is enough; the JSON's "imported" field confirms it at the end.
"""

import importlib.abc
import json
import sys

# --8<-- [start:program]
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf


class ProfileSteps(keras.callbacks.Callback):
    """Profile batches first..last of the first epoch, each marked as one step for the profile viewer."""

    def __init__(self, logdir, first, last):
        super().__init__()
        self.logdir, self.first, self.last = logdir, first, last
        self.done = False

    def on_train_batch_begin(self, batch, logs=None):
        if self.done or not self.first <= batch <= self.last:
            return
        if batch == self.first:
            tf.profiler.experimental.start(self.logdir)
        self.step = tf.profiler.experimental.Trace("train", step_num=batch, _r=1)   # _r=1: a step marker
        self.step.__enter__()

    def on_train_batch_end(self, batch, logs=None):
        if self.done or not self.first <= batch <= self.last:
            return
        self.step.__exit__(None, None, None)
        if batch == self.last:
            tf.profiler.experimental.stop()       # writes the profile
            self.done = True

    def on_train_end(self, logs=None):
        if not self.done and getattr(self, "step", None) is not None:   # fewer batches than `last`
            self.step.__exit__(None, None, None)
            tf.profiler.experimental.stop()
            self.done = True


def make_data_and_model(seed=0):
    keras.utils.set_random_seed(seed)
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(256, 16)).astype("float32")
    y = (x.sum(axis=1) > 0).astype("float32")
    model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return x, y, model


def files_under(root):
    return sorted(p.relative_to(root).as_posix() for p in Path(root).rglob("*") if p.is_file())


def produce(root="logs"):
    """Profile batches 3-6 three ways; return the files each wrote (or the error it raised)."""
    x, y, model = make_data_and_model()
    model.train_on_batch(x[:32], y[:32])                      # warm-up: trace the train function first
    report = {}

    tf.profiler.experimental.start(f"{root}/api")             # 1. the profiler API around a few steps
    for step in range(3, 7):
        with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
            model.train_on_batch(x[32 * step:32 * (step + 1)], y[32 * step:32 * (step + 1)])
    tf.profiler.experimental.stop()
    report["api"] = files_under(f"{root}/api")

    model.fit(x, y, batch_size=32, epochs=1, verbose=0,       # 2. a callback that uses only that API
              callbacks=[ProfileSteps(f"{root}/steps", 3, 6)])
    report["callback"] = files_under(f"{root}/steps")

    try:                                                      # 3. Keras' TensorBoard callback
        model.fit(x, y, batch_size=32, epochs=1, verbose=0,
                  callbacks=[keras.callbacks.TensorBoard(f"{root}/tensorboard", profile_batch=(4, 7))])
        report["tensorboard_callback"] = files_under(f"{root}/tensorboard")
    except Exception as exc:
        report["tensorboard_callback"] = {"error": type(exc).__name__, "message": str(exc),
                                          "files": files_under(f"{root}/tensorboard")}
    return report
# --8<-- [end:program]


class HidePackages(importlib.abc.MetaPathFinder):
    """An import hook that makes the named top-level packages look uninstalled."""

    def __init__(self, names):
        self.names = set(names)

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


if __name__ == "__main__":
    sys.meta_path.insert(0, HidePackages(sys.argv[1:]))   # TensorFlow and Keras import neither package
    result = produce()
    result["hidden"] = sys.argv[1:]
    result["imported"] = sorted({"tensorboard", "xprof"} & set(sys.modules))
    print(json.dumps(result))
