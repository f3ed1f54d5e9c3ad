"""XLA recompiles on every new shape: count the compilations exactly.

Run with no arguments: starts itself as a child process with XLA_FLAGS=--xla_dump_to=<tmp dir> (XLA
writes one `*.before_optimizations.txt` file per module it compiles), replays the same request lengths
through four jit-compiled variants of one function and a Keras model compiled with jit_compile=True,
prints the counts as JSON and checks them; exits 0. `python this.py --child DUMP_DIR` is the child.
"""

# --8<-- [start:model]
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import tensorflow as tf

FEATURES = 16
_weights = np.random.default_rng(0)
W1 = tf.constant(_weights.normal(size=(FEATURES, 64)).astype("float32") / 4)
W2 = tf.constant(_weights.normal(size=(64, 8)).astype("float32") / 8)


def encode(tokens, mask):
    """A per-token MLP, then a masked mean over the sequence: [batch, length, 16] -> [batch, 8]."""
    hidden = tf.matmul(tf.nn.gelu(tf.matmul(tokens, W1)), W2)
    weights = mask[..., None]
    return tf.reduce_sum(hidden * weights, axis=1) / tf.reduce_sum(weights, axis=1)


def make_request(length, batch=4, seed=0):
    rng = np.random.default_rng(seed)
    tokens = tf.constant(rng.normal(size=(batch, length, FEATURES)).astype("float32"))
    return tokens, tf.ones([batch, length])


SPEC = [tf.TensorSpec([None, None, FEATURES], tf.float32), tf.TensorSpec([None, None], tf.float32)]
BUCKETS = (32, 64, 128)                      # every length is padded up to one of these


def pad_to_bucket(tokens, mask):
    length = int(tokens.shape[1])
    target = next(b for b in BUCKETS if b >= length)
    extra = [[0, 0], [0, target - length]]
    return tf.pad(tokens, extra + [[0, 0]]), tf.pad(mask, extra)   # padded positions get mask 0


def variants():
    """Fresh function objects (each starts with an empty cache)."""
    return {
        "exact": tf.function(encode, jit_compile=True),                         # keyed on exact shapes
        "relaxed": tf.function(encode, jit_compile=True, input_signature=SPEC),  # one trace for all shapes
        "bucketed": tf.function(encode, jit_compile=True),                      # only sees bucket shapes
        "reduce_retracing": tf.function(encode, jit_compile=True, reduce_retracing=True),  # generalises to None
    }
# --8<-- [end:model]


# --8<-- [start:count]
def count_modules(dump_dir):
    """XLA writes one *.before_optimizations.txt per module it compiles."""
    return len(glob.glob(os.path.join(dump_dir, "*.before_optimizations.txt")))


def child(dump_dir, lengths):
    import keras

    counts = {}
    for name, fn in variants().items():
        prepare = pad_to_bucket if name == "bucketed" else (lambda tokens, mask: (tokens, mask))
        before = count_modules(dump_dir)
        for length in lengths:
            fn(*prepare(*make_request(length)))
        counts[name] = {"compilations": count_modules(dump_dir) - before,
                        "traces": fn.experimental_get_tracing_count()}

    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((None, FEATURES)), keras.layers.Dense(32, activation="relu"),
                              keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)])
    model.compile("adam", "mse", jit_compile=True)
    before = count_modules(dump_dir)
    for length in lengths[:4]:
        model.predict_on_batch(make_request(length)[0])
    counts["keras_predict_on_batch"] = {"compilations": count_modules(dump_dir) - before, "calls": 4,
                                        "traces": model.predict_function.experimental_get_tracing_count()}
    return counts


def run_child(program, lengths, timeout=280):
    """Run `program --child` with XLA dumping on and INFO logs visible; return its counts and stderr."""
    with tempfile.TemporaryDirectory() as dump_dir:
        env = dict(os.environ, XLA_FLAGS=f"--xla_dump_to={dump_dir}", TF_CPP_MIN_LOG_LEVEL="0",
                   CUDA_VISIBLE_DEVICES="")           # count on the CPU backend, the same on every runner
        done = subprocess.run([sys.executable, str(program), "--child", dump_dir, json.dumps(lengths)],
                              env=env, capture_output=True, text=True, timeout=timeout, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr
# --8<-- [end:count]


def main():
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(child(sys.argv[2], json.loads(sys.argv[3]))))
        return
    lengths = [7, 19, 33, 50, 64, 77, 101, 120, 19, 50]          # 8 distinct lengths
    counts, stderr = run_child(os.path.abspath(__file__), lengths)
    print(json.dumps(counts, indent=1))
    distinct = len(set(lengths))
    assert counts["exact"] == {"compilations": distinct, "traces": distinct}, counts
    assert counts["relaxed"] == {"compilations": distinct, "traces": 1}, counts
    assert counts["reduce_retracing"] == {"compilations": distinct, "traces": 2}, counts
    assert counts["bucketed"] == {"compilations": len(BUCKETS), "traces": len(BUCKETS)}, counts
    assert counts["keras_predict_on_batch"] == {"compilations": 4, "calls": 4, "traces": 2}, counts
    assert stderr.count("Compiled cluster using XLA!  This line is logged at most once for the lifetime "
                        "of the process.") == 1, "the XLA log line is printed once per process"


if __name__ == "__main__":
    main()
