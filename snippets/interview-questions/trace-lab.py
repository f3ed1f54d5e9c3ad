"""The tracing lab: six tf.function questions, each answered by a check that runs.

Run it on its own:  python snippets/interview-questions/trace-lab.py
The page docs/interview-questions/trace-lab.md shows it section by section.
"""

# --8<-- [start:setup]
import logging
import os
import tempfile
import time

import numpy as np
import tensorflow as tf


def raises_type_error(fn, *args):
    """True when calling fn(*args) fails with TypeError (how tf.function rejects an input)."""
    try:
        fn(*args)
    except TypeError:
        return True
    return False
# --8<-- [end:setup]


# --8<-- [start:side-effects]
python_calls = []
printed = os.path.join(tempfile.mkdtemp(), "tf_print.txt")


@tf.function
def double(x):
    python_calls.append(x.shape)  # Python code: runs while tracing
    tf.print("executed", output_stream=f"file://{printed}")  # graph op: runs on every call
    return 2 * x


for value in (1.0, 2.0, 3.0):
    assert float(double(tf.constant(value))) == 2 * value, "wrong value"

with open(printed) as stream:
    print_lines = stream.read().splitlines()
assert len(python_calls) == 1, f"Python side effect ran {len(python_calls)} times, expected once (at trace)"
assert print_lines == ["executed"] * 3, f"tf.print ran {len(print_lines)} times, expected 3"
assert double.experimental_get_tracing_count() == 1
# --8<-- [end:side-effects]


# --8<-- [start:literals]
@tf.function
def shift(x, offset):
    return x + offset


x = tf.constant([1.0, 2.0])
shift(x, 1.0)
shift(x, 2.0)  # a new Python float is a new trace key: retrace
assert shift.experimental_get_tracing_count() == 2, shift.experimental_get_tracing_count()


@tf.function
def shift_t(x, offset):
    return x + offset


shift_t(x, tf.constant(1.0))
shift_t(x, tf.constant(2.0))  # same dtype and shape: the trace is reused
assert shift_t.experimental_get_tracing_count() == 1, shift_t.experimental_get_tracing_count()
np.testing.assert_allclose(shift_t(x, tf.constant(2.0)).numpy(), [3.0, 4.0])
# --8<-- [end:literals]


# --8<-- [start:signature]
@tf.function(input_signature=[tf.TensorSpec(shape=[None, 2], dtype=tf.float32)])
def row_sums(batch):
    return tf.reduce_sum(batch, axis=1)


np.testing.assert_allclose(row_sums(tf.constant([[1.0, 2.0]])).numpy(), [3.0])  # 1 row
np.testing.assert_allclose(row_sums(tf.constant([[1.0, 2.0], [3.0, 4.0]])).numpy(), [3.0, 7.0])  # 2 rows
assert row_sums.experimental_get_tracing_count() == 1, "batches of 1 and 2 rows must share one trace"
assert raises_type_error(row_sums, tf.ones([4, 3])), "the feature dimension is fixed at 2"
assert row_sums.experimental_get_tracing_count() == 1, "a rejected input never traces"
# --8<-- [end:signature]


# --8<-- [start:contract]
# (argument kind, shape, dtype) -> outcome, for row_sums and its [None, 2] float32 signature
CONTRACT = [
    ("tf.Tensor", (1, 2), "float32", "runs"),
    ("tf.Tensor", (5, 2), "float32", "runs"),
    ("tf.Tensor", (4, 3), "float32", "TypeError"),
    ("tf.Tensor", (2,), "float32", "TypeError"),
    ("tf.Tensor", (1, 2), "float64", "TypeError"),
    ("tf.Tensor", (1, 2), "int32", "TypeError"),
    ("np.ndarray", (1, 2), "float64", "runs"),
    ("np.ndarray", (1, 2), "int64", "runs"),
    ("list", (1, 2), "int", "runs"),
    ("list", (1, 3), "float", "TypeError"),
    ("float", (), "float", "TypeError"),
]


def make_input(kind, shape, dtype):
    if kind == "tf.Tensor":
        return tf.ones(shape, dtype=dtype)
    if kind == "np.ndarray":
        return np.ones(shape, dtype=dtype)
    if kind == "list":
        return np.ones(shape, dtype=dtype).tolist()
    return 1.0


for kind, shape, dtype, expected in CONTRACT:
    outcome = "TypeError" if raises_type_error(row_sums, make_input(kind, shape, dtype)) else "runs"
    assert outcome == expected, f"{kind} {shape} {dtype}: expected {expected}, got {outcome}"
assert row_sums.experimental_get_tracing_count() == 1, "every accepted input reused the one trace"

# NumPy input is converted to the signature's dtype: float64 0.1 silently becomes float32 0.1
result = row_sums(np.array([[0.1, 0.0]]))
assert result.dtype == tf.float32, result.dtype
assert float(result[0]) != 0.1 and abs(float(result[0]) - 0.1) < 1e-7, float(result[0])
# --8<-- [end:contract]


# --8<-- [start:shapes]
class WarningCounter(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def traces_for_lengths(**options):
    @tf.function(**options)
    def total(v):
        return tf.reduce_sum(v)

    for length in range(1, 7):
        total(tf.ones([length]))
    return total.experimental_get_tracing_count()


warnings = WarningCounter()
tf.get_logger().addHandler(warnings)
try:
    plain = traces_for_lengths()
    relaxed = traces_for_lengths(reduce_retracing=True)
finally:
    tf.get_logger().removeHandler(warnings)

assert plain == 6, f"one trace per new length expected, got {plain}"
assert relaxed == 2, f"reduce_retracing: one exact trace, then one with shape [None]; got {relaxed}"
assert any("triggered tf.function retracing" in m for m in warnings.messages), "no retracing warning was logged"
# --8<-- [end:shapes]


# --8<-- [start:first-call]
@tf.function
def small_step(x):
    for _ in range(20):  # a Python loop: unrolled into 20 ops at trace time
        x = tf.tanh(x) * 0.5
    return x


start = time.perf_counter()
small_step(tf.ones([8]))  # trace + run
first_call = time.perf_counter() - start
steady = []
for _ in range(20):
    start = time.perf_counter()
    small_step(tf.ones([8]))
    steady.append(time.perf_counter() - start)
assert small_step.experimental_get_tracing_count() == 1
assert first_call > 2 * float(np.median(steady)), (first_call, np.median(steady))  # tracing dominates call 1
# --8<-- [end:first-call]


# --8<-- [start:width-3]
@tf.function(input_signature=[tf.TensorSpec(shape=[None, None], dtype=tf.float32)])
def row_sums_any_width(batch):
    return tf.reduce_sum(batch, axis=1)


three_wide = tf.constant([[1.0, 2.0, 3.0]])
assert raises_type_error(row_sums, three_wide), "the old [None, 2] signature rejects width 3"
np.testing.assert_allclose(row_sums_any_width(three_wide).numpy(), [6.0])
np.testing.assert_allclose(row_sums_any_width(tf.constant([[1.0, 2.0]])).numpy(), [3.0])
assert row_sums_any_width.experimental_get_tracing_count() == 1, "widths 2 and 3 share the [None, None] trace"

# Step 3: the signature now accepts width 3; the arithmetic written for width 2 must be reviewed too.
W_WIDTH_2 = tf.ones([2, 1])
width_3 = tf.TensorSpec(shape=[None, 3], dtype=tf.float32)


@tf.function(input_signature=[width_3])
def project(batch):
    return tf.matmul(batch, W_WIDTH_2)  # a weight shaped for two features


@tf.function(input_signature=[width_3])
def row_means_stale(batch):
    return tf.reduce_sum(batch, axis=1) / 2.0  # "the mean of two features", written for width 2


@tf.function(input_signature=[width_3])
def row_means(batch):
    return tf.reduce_mean(batch, axis=1)


rows3 = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 9.0]], np.float32)
try:
    project(rows3)
    project_error = None
except ValueError as error:  # raised while tracing the first call: shape inference of MatMul
    project_error = error
assert project_error is not None and "Dimensions must be equal" in str(project_error), project_error

expected_means = rows3.mean(axis=1)  # derived from the input, not copied from a width-2 test
np.testing.assert_allclose(row_means(rows3).numpy(), expected_means, rtol=1e-6)
stale = row_means_stale(rows3).numpy()  # no error, no TypeError: the signature checks shapes, not arithmetic
assert row_means_stale.experimental_get_tracing_count() == 1
assert not np.allclose(stale, expected_means), (stale, expected_means)
# --8<-- [end:width-3]

if __name__ == "__main__":
    print("trace lab: every check passed")
