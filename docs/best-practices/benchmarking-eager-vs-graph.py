# ---
# description: "Exclude warm-up, time tracing separately, report min/median of many runs: only then compare eager with tf.function."
# tags: [medium, tf.function, performance]
# ---

# %% [markdown]
# # Benchmark eager vs graph honestly
#
# <h2 id="rule">The rule</h2>
#
# A benchmark of eager code against a `tf.function` measures three different things unless you separate
# them: the **first call** (which traces the Python function into a graph), the **steady-state call**, and
# noise from the machine. Do it like this:
#
# 1. **Trace separately.** Time `get_concrete_function(...)` (or the first call) on its own and report it as
#    the tracing cost. Assert the trace count, so a retrace cannot hide inside the numbers.
# 2. **Warm up, then repeat.** Exclude warm-up calls; time *N* calls with `time.perf_counter` (or
#    `timeit.repeat`) and report the **minimum** (best case the code can do) and the **median** (typical);
#    never the mean of a list that contains the first call.
# 3. **Force the result.** Include `.numpy()` (or another host copy) in the timed region: on a GPU, ops are
#    dispatched asynchronously and a call can return before the work is done (see the
#    [TensorFlow performance guide](https://www.tensorflow.org/guide/function)).
# 4. **Benchmark the workload you have.** Graphs remove per-op Python overhead, so the answer depends on
#    how much of it your step has: many tiny ops gain an order of magnitude, one big matmul little
#    (0.4x to 2x across runs, within the machine's noise; measured on [Does one trace prove a function is faster?](../../interview-questions/one-trace-not-faster/#proof)).
#
# Related: [Order the tf.data pipeline](../tf-data-pipeline-order/) measures pipelines with the same method.

# %%
import statistics
import time

import numpy as np
import tensorflow as tf

tf.random.set_seed(0)


def many_small_ops(x):
    for _ in range(60):               # 60 tiny elementwise ops: dispatch overhead dominates
        x = tf.tanh(x) * 1.01 + 0.01
    return x


small = tf.random.uniform([64])


def time_calls(fn, arg, n):
    """Per-call wall times in seconds, each forcing the result to the host."""
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn(arg).numpy()
        times.append(time.perf_counter() - start)
    return times

# %% [markdown]
# <h2 id="evidence">Evidence (executed)</h2>
#
# Tracing is measured on its own, with a trace counter; then both versions are warmed up and timed over
# *N* calls.

# %%
N = 40
traces = []


def counted(x):
    traces.append(1)                  # Python side effect: runs only while tracing
    return many_small_ops(x)


graph_small = tf.function(counted)
start = time.perf_counter()
concrete = graph_small.get_concrete_function(tf.TensorSpec([64], tf.float32))
trace_seconds = time.perf_counter() - start
assert len(traces) == 1, traces

eager_times = time_calls(many_small_ops, small, N)
graph_times = time_calls(graph_small, small, N)    # already traced: no first-call cost here
assert len(traces) == 1, "calling with the traced signature must not retrace"

eager_min, eager_median = min(eager_times), statistics.median(eager_times)
graph_min, graph_median = min(graph_times), statistics.median(graph_times)
print(f"tracing: {trace_seconds * 1e3:.1f} ms")
print(f"eager  min {eager_min * 1e3:.3f} ms  median {eager_median * 1e3:.3f} ms")
print(f"graph  min {graph_min * 1e3:.3f} ms  median {graph_median * 1e3:.3f} ms")

assert trace_seconds > 5 * graph_median, (trace_seconds, graph_median)       # tracing is not a steady cost
assert eager_min > 1.5 * graph_min, (eager_min, graph_min)                    # many tiny ops: graph wins

# %% [markdown]
# That gain belongs to this workload. The same method on one large matmul finds little, because
# there is little per-op overhead to remove; the two workloads are measured side by side on
# [Does one trace prove a function is faster?](../../interview-questions/one-trace-not-faster/#proof).

# %% [markdown]
# <h2 id="anti-pattern">The anti-pattern (executed)</h2>
#
# A one-shot timing of a *fresh* `tf.function` includes tracing, and the mean of a list that includes the
# first call is dominated by it. Both make the graph version look slower than it is:

# %%
naive_fn = tf.function(many_small_ops)
start = time.perf_counter()
naive_fn(small).numpy()                           # first call: trace + run
naive_first = time.perf_counter() - start
naive_list = [naive_first] + time_calls(naive_fn, small, N - 1)
naive_mean = statistics.mean(naive_list)

assert naive_first > eager_median, (naive_first, eager_median)        # "graph is slower than eager!" — wrong
assert naive_mean > 1.5 * graph_median, (naive_mean, graph_median)    # the mean is pulled up by one call
print(f"naive first call {naive_first * 1e3:.1f} ms, naive mean {naive_mean * 1e3:.3f} ms, "
      f"honest median {graph_median * 1e3:.3f} ms")

# %% [markdown]
# **Predict the output.** After all the calls above, `graph_small` has traced once. It is now called with a
# `float64` tensor of the same shape, inside what a careless benchmark would count as a steady-state call.
# How many traces does it have afterwards?
#
# <details><summary>Answer</summary>
#
# Two. A new dtype is a new input signature, so the call traces again and that call's time includes
# tracing. Keep the benchmark's inputs on the traced signature, and assert the trace count after timing.
#
# </details>

# %%
graph_small(tf.cast(small, tf.float64)).numpy()
assert len(traces) == 2, traces

# %% [markdown]
# <h2 id="follow-ups">Follow-up practice</h2>
#
# **Follow-up: does `jit_compile=True` change the method?** No, it makes it matter more: XLA compiles on the
# first call (on top of tracing), so the first call is even further from the steady state.
#
# <details><summary>Answer, checked</summary>
#
# The first call of an XLA-compiled function is many times slower than its median steady-state call.
#
# </details>

# %%
xla_fn = tf.function(many_small_ops, jit_compile=True)
start = time.perf_counter()
xla_fn(small).numpy()
xla_first = time.perf_counter() - start
xla_median = statistics.median(time_calls(xla_fn, small, 20))
assert xla_first > 5 * xla_median, (xla_first, xla_median)

# %% [markdown]
# **Follow-up: is `model.predict(x)` a fair way to time a Keras model on one small batch?** No: each
# `predict` call sets up a data adapter and a step loop around the traced function, overhead that a
# serving path calling the model directly does not pay. Time what production runs.
#
# <details><summary>Answer, checked</summary>
#
# On a small batch, the median `predict` call is far slower than the median direct call of the same model.
#
# </details>

# %%
import keras

net = keras.Sequential([keras.Input((16,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
batch16 = np.ones((8, 16), np.float32)
net.predict(batch16, verbose=0)
net(batch16)
predict_median = statistics.median(time_calls(lambda x: tf.constant(net.predict(x, verbose=0)), batch16, 10))
direct_median = statistics.median(time_calls(lambda x: net(x, training=False), batch16, 10))
print(f"predict {predict_median * 1e3:.2f} ms, direct call {direct_median * 1e3:.2f} ms")
assert predict_median > 2 * direct_median, (predict_median, direct_median)

# %%
# alt: Two log-scale panels. Left: wall time of each of the calls, eager and tf.function with its first call included; the tf.function's first call, which traces, stands far above the rest. Right: bars for the eager median, the naive tf.function mean, and the graph median and minimum.
import matplotlib.pyplot as plt

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
left.plot(range(1, N + 1), np.array(eager_times) * 1e3, "o-", ms=3, label="eager")
left.plot(range(1, N + 1), np.array(naive_list) * 1e3, "s-", ms=3, label="tf.function, first call included")
left.set_yscale("log")
left.set_xlabel("call number")
left.set_ylabel("wall time per call (ms, log)")
left.set_title("60 small ops: per-call times")
left.legend()

labels = ["eager\nmedian", "graph naive\nmean", "graph\nmedian", "graph\nmin"]
values = [eager_median, naive_mean, graph_median, graph_min]
right.bar(labels, np.array(values) * 1e3, color=["tab:blue", "tab:red", "tab:orange", "tab:orange"])
right.set_yscale("log")
right.set_ylabel("ms per call (log)")
right.set_title(f"summaries (tracing alone: {trace_seconds * 1e3:.0f} ms)")
fig.tight_layout()
plt.show()

# %% [markdown]
# <h2 id="checklist">Checklist</h2>
#
# - Tracing timed separately (`get_concrete_function` or the first call) and the trace count asserted.
# - Warm-up calls excluded; *N* timed calls; report min and median, not a mean that includes call 1.
# - Every timed call forces its result (`.numpy()`), so asynchronous GPU dispatch is not mistaken for speed.
# - Inputs with the traced signature (shape, dtype) — a new shape retraces inside your timing loop.
# - Compare on the real workload: many tiny ops and one big kernel give very different answers, a large
#       gain against little or none ([measured](../../interview-questions/one-trace-not-faster/#proof)).
# - On a shared machine, assert only wide-margin ratios and show the rest in a plot.
