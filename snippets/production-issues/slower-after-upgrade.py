"""Training got slower after a TF/Keras upgrade: what Keras 2 (tf_keras) and Keras 3 do with the same script.

Run with no arguments: starts itself as a child process with XLA_FLAGS=--xla_dump_to=<tmp dir> (XLA writes one
`*.before_optimizations.txt` file per module it compiles) and the GPU hidden, trains the same model under Keras 3
and under Keras 2 (`tf_keras`), prints the counts as JSON and checks them; exits 0.
`python this.py --child DUMP_DIR` is the child (add `--gpu` to leave a GPU visible).
"""

# --8<-- [start:model]
import cProfile
import glob
import json
import os
import pstats
import subprocess
import sys
import tempfile

import numpy as np

ROWS, BATCH = 1000, 32                     # 31 full batches and a last one of 8 rows: 32 steps per epoch
_rng = np.random.default_rng(0)
X = _rng.normal(size=(ROWS, 8)).astype("float32")
Y = (X @ _rng.normal(size=(8, 1))).astype("float32")


def batches(tf, drop_remainder=False):
    return tf.data.Dataset.from_tensor_slices((X, Y)).batch(BATCH, drop_remainder=drop_remainder)


def make_model(keras, model_class=None, **compile_args):
    """The same small regression model under either Keras; compile_args go to compile()."""
    keras.utils.set_random_seed(0)
    model = (model_class or keras.Sequential)([keras.Input((8,)), keras.layers.Dense(32, activation="relu"),
                                               keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse", **compile_args)
    return model


def python_calls_per_epoch(model, data):
    """Python function calls of one epoch, after a warm-up epoch (counted with cProfile)."""
    model.fit(data, epochs=1, verbose=0, shuffle=False)
    profile = cProfile.Profile()
    profile.enable()
    model.fit(data, epochs=1, verbose=0, shuffle=False)
    profile.disable()
    return pstats.Stats(profile).total_calls
# --8<-- [end:model]


# --8<-- [start:count]
def count_modules(dump_dir):
    """XLA writes one *.before_optimizations.txt per module it compiles."""
    return len(glob.glob(os.path.join(dump_dir, "*.before_optimizations.txt")))


def child(dump_dir):
    import keras
    import tensorflow as tf
    import tf_keras

    counts = {}

    def compiled_per_epoch(model, data, epochs=2):
        per_epoch = []
        for _ in range(epochs):
            before = count_modules(dump_dir)
            model.fit(data, epochs=1, verbose=0, shuffle=False)
            per_epoch.append(count_modules(dump_dir) - before)
        return per_epoch

    # Keras 3: the default compile(), then XLA on, then XLA on with no short last batch
    for name, compile_args, drop in [("keras3 default", {}, False),
                                     ("keras3 jit_compile=True", {"jit_compile": True}, False),
                                     ("keras3 jit_compile=True, drop_remainder", {"jit_compile": True}, True)]:
        model = make_model(keras, **compile_args)
        counts[name] = {"jit_compile": model.jit_compile,
                        "xla_modules_per_epoch": compiled_per_epoch(model, batches(tf, drop))}

    # Keras 2 (tf_keras, what tf.keras was up to TensorFlow 2.15): the default compile()
    model = make_model(tf_keras)
    counts["keras2 default"] = {"jit_compile": model._jit_compile,
                                "steps_per_execution": int(model.steps_per_execution.numpy()),
                                "xla_modules_per_epoch": compiled_per_epoch(model, batches(tf))}

    # steps_per_execution="auto": Keras 2 accepts it, Keras 3 does not
    auto = make_model(tf_keras, steps_per_execution="auto")
    auto.fit(batches(tf), epochs=1, verbose=0)
    counts["keras2 steps_per_execution='auto'"] = {"autotune": bool(auto.autotune_steps_per_execution),
                                                   "steps": int(auto.optimizer.iterations)}

    # a debugging switch left on: what each Keras reports as model.run_eagerly
    tf.config.run_functions_eagerly(True)
    try:
        counts["run_functions_eagerly(True)"] = {"keras2 run_eagerly": make_model(tf_keras).run_eagerly,
                                                 "keras3 run_eagerly": make_model(keras).run_eagerly}
    finally:
        tf.config.run_functions_eagerly(False)

    # the training loop itself: Python calls per epoch, same process, same data
    counts["python calls per epoch"] = {"keras2": python_calls_per_epoch(make_model(tf_keras), batches(tf)),
                                        "keras3": python_calls_per_epoch(make_model(keras, jit_compile=False),
                                                                         batches(tf))}
    return counts


def run_child(program, gpu=False, timeout=300):
    """Run `program --child` with XLA dumping on; return its counts."""
    with tempfile.TemporaryDirectory() as dump_dir:
        env = dict(os.environ, XLA_FLAGS=f"--xla_dump_to={dump_dir}")
        if not gpu:
            env["CUDA_VISIBLE_DEVICES"] = ""           # count on the CPU backend, the same on every runner
        done = subprocess.run([sys.executable, str(program), "--child", dump_dir] + (["--gpu"] if gpu else []),
                              env=env, capture_output=True, text=True, timeout=timeout, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])
# --8<-- [end:count]


def main():
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(child(sys.argv[2])))
        return
    counts = run_child(os.path.abspath(__file__))
    print(json.dumps(counts, indent=1))
    assert counts["keras3 default"] == {"jit_compile": False, "xla_modules_per_epoch": [0, 0]}, counts
    assert counts["keras3 jit_compile=True"] == {"jit_compile": True, "xla_modules_per_epoch": [2, 0]}, counts
    assert counts["keras3 jit_compile=True, drop_remainder"] == {"jit_compile": True,
                                                                 "xla_modules_per_epoch": [1, 0]}, counts
    assert counts["keras2 default"] == {"jit_compile": None, "steps_per_execution": 1,
                                        "xla_modules_per_epoch": [0, 0]}, counts
    assert counts["keras2 steps_per_execution='auto'"] == {"autotune": True, "steps": 32}, counts
    assert counts["run_functions_eagerly(True)"] == {"keras2 run_eagerly": True, "keras3 run_eagerly": False}, counts
    calls = counts["python calls per epoch"]
    assert calls["keras3"] < 1.5 * calls["keras2"], calls


if __name__ == "__main__":
    main()
