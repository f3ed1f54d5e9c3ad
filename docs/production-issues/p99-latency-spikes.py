# ---
# description: "Server-side batching trades tail latency for throughput: a seeded queue simulation and a measured TensorFlow batch-cost curve show when to raise max_batch_size, when to lower it, what padding costs and why a bounded queue keeps p99 flat."
# tags: [hard, serving, performance]
# budget: {seconds: 90, reason: "timing protocol repeats over several batch sizes; 42 CPU s measured on a 2-core AMD EPYC (AVX2)"}
# ---

# %% [markdown]
# # p50 flat, p99 exploding under load
#
# TF Serving with server-side batching: the median latency stays at a few milliseconds while the
# 99th percentile climbs to tens of milliseconds as traffic grows. This page reproduces the effect
# with a **seeded queueing simulation** of the batching scheduler (pure NumPy, no server: TF Serving
# cannot run on the machine that verifies this site), shows which batching knob causes it, and
# parses the real configuration file format. The latencies come from the simulation, so their asserts
# check *directions* (bigger, smaller). The cost of a batch through a TensorFlow model is proven by the work
# TensorFlow counts (floating-point operations per batch, exact); its time on this CPU is printed, and only
# ratios far from their thresholds are asserted.
#
# <h2 id="symptom">Symptom</h2>
#
# - Dashboards show p50 latency flat (≈ 3–4 ms) across the day, but p99 grows 10× at peak hours.
# - CPU is not saturated on average; errors are rare.
# - Scaling out "fixes" it, at a cost that does not match the average load.
#
# The reason the average hides it: traffic arrives in **bursts**. During a 50 ms burst the batcher
# cannot drain requests as fast as they come, a backlog builds, and the few percent of requests that
# land in or just after a burst wait in the queue. The median request never sees a backlog.

# %%
import collections
import heapq

import numpy as np


def bursty_arrivals(rate_per_ms, seconds=20, burst_factor=3.0, burst_ms=50, period_ms=1000, seed=0):
    """Poisson traffic at `rate_per_ms`, plus one burst per second at `burst_factor` x the rate."""
    rng = np.random.default_rng(seed)
    horizon = seconds * 1000.0
    base = rng.uniform(0, horizon, rng.poisson(rate_per_ms * horizon))
    starts = np.arange(0, horizon, period_ms) + rng.uniform(0, period_ms - burst_ms, int(horizon // period_ms))
    bursts = [rng.uniform(s, s + burst_ms, rng.poisson(rate_per_ms * (burst_factor - 1) * burst_ms)) for s in starts]
    return np.sort(np.concatenate([base, *bursts]))


def linear_cost(fixed_ms=2.0, per_item_ms=0.05):
    """Service time of a batch of `rows` rows: a fixed cost plus a cost per row."""
    return lambda rows: fixed_ms + per_item_ms * rows


def simulate(arrivals, max_batch_size, batch_timeout_ms, num_batch_threads=1, cost=linear_cost(),  # noqa: B008 (one immutable default)
             allowed_batch_sizes=None, max_enqueued_batches=None):
    """Batching scheduler: a batch is ready when it is full or its oldest request has waited
    `batch_timeout_ms`; it starts when a batch thread is free, taking every request that has
    arrived by then (up to `max_batch_size`). A batch is padded up to the next allowed size, if any.
    With `max_enqueued_batches`, a request that finds that many full batches waiting is turned away.
    Returns (latency, queue_wait) per request, in milliseconds; NaN for a request turned away."""
    n = len(arrivals)
    start_of, done_of = np.full(n, np.nan), np.full(n, np.nan)
    limit = np.inf if max_enqueued_batches is None else max_enqueued_batches * max_batch_size
    free = [0.0] * num_batch_threads
    waiting = collections.deque()
    i = 0
    while i < n or waiting:
        thread_free = heapq.heappop(free)
        if not waiting:
            waiting.append(i)
            i += 1
        while True:
            full = len(waiting) >= max_batch_size
            ready = arrivals[waiting[max_batch_size - 1]] if full else arrivals[waiting[0]] + batch_timeout_ms
            start = max(thread_free, ready)
            if i < n and arrivals[i] <= start:
                if not full or len(waiting) < limit:
                    waiting.append(i)
                i += 1
                continue
            break
        batch = [waiting.popleft() for _ in range(min(max_batch_size, len(waiting)))]
        rows = min(b for b in allowed_batch_sizes if b >= len(batch)) if allowed_batch_sizes else len(batch)
        finish = start + cost(rows)
        start_of[batch], done_of[batch] = start, finish
        heapq.heappush(free, finish)
    return done_of - arrivals, start_of - arrivals


def p(latency, q):
    return float(np.nanpercentile(latency, q))


# %% [markdown]
# <h2 id="detect">How to detect it in production</h2>
#
# - **Percentiles, not averages**: alert on p99 (and p99.9) of the server-side request latency,
#   alongside p50. A ratio p99/p50 that grows with traffic is this signature.
# - **Split queueing from compute**, from the server's own Prometheus metrics, before turning any knob.
#   TF Serving exports them when started with `--monitoring_config_file` pointing at
#   `prometheus_config { enable: true, path: "/monitoring/prometheus/metrics" }` and a `--rest_api_port`
#   ([monitoring configuration](https://www.tensorflow.org/tfx/serving/serving_config)).
#   Compare `:tensorflow:serving:batching_session:queuing_latency` (time *waiting for a batch*) with
#   `:tensorflow:serving:runtime_latency` (time in the TensorFlow runtime) and
#   `:tensorflow:serving:request_latency` (the whole request): names from the server's source
#   ([`batching_session.cc`](https://github.com/tensorflow/serving/blob/master/tensorflow_serving/batching/batching_session.cc),
#   [`util.cc`](https://github.com/tensorflow/serving/blob/master/tensorflow_serving/servables/tensorflow/util.cc);
#   [the exporter](https://github.com/tensorflow/serving/blob/master/tensorflow_serving/util/prometheus_exporter.cc)
#   turns `/` into `:`), not scraped here. If the tail is all waiting, the model is not slow —
#   the batcher is under-provisioned for bursts.
# - **Batch-size histogram**: at peak, batches pinned at `max_batch_size` mean the batcher is at
#   capacity.
#
# In the simulation the same three signals are available, and the next cells compute them.
#
# <h2 id="root-cause">Root cause, reproduced</h2>
#
# Configuration under test: `max_batch_size=8`, `batch_timeout=1 ms`, one batch thread. Each batch
# costs 2 ms fixed (kernel launches, framework overhead) plus 0.05 ms per request. Peak capacity is
# therefore 8 / 2.4 ms ≈ 3.3 requests/ms — fine on average, too little for a burst at 3× a
# 2 requests/ms base rate.

# %%
SMALL = dict(max_batch_size=8, batch_timeout_ms=1.0)
rates = [0.5, 1.0, 1.5, 2.0, 2.5]
small = {r: simulate(bursty_arrivals(r), **SMALL) for r in rates}

p50_small = [p(small[r][0], 50) for r in rates]
p99_small = [p(small[r][0], 99) for r in rates]

# The symptom: from the lightest to the heaviest load, p50 barely moves while p99 explodes.
assert p50_small[-1] < 2 * p50_small[0], p50_small
assert p99_small[-1] > 10 * p99_small[0], p99_small
assert p99_small[-1] > 10 * p50_small[-1], (p50_small[-1], p99_small[-1])

# Detection: at peak, the tail is queueing, not compute (a batch of 8 runs in 2.4 ms).
latency, wait = small[2.5]
tail = latency >= np.percentile(latency, 99)
assert wait[tail].mean() > 0.8 * latency[tail].mean(), (wait[tail].mean(), latency[tail].mean())
print({r: (round(a, 2), round(b, 2)) for r, a, b in zip(rates, p50_small, p99_small, strict=True)})

# %% [markdown]
# <h2 id="fix">The fix</h2>
#
# Here, raise `max_batch_size` so one batch absorbs a burst: the fixed cost is paid once for 64 requests
# instead of 8, and peak capacity rises to 64 / 5.2 ms ≈ 12 requests/ms. That is the right move *because*
# the fixed cost dominates; [when a large batch hurts](#large-batch) shows the regime where the same knob
# must go down. The timeout stays small: it only matters when traffic is light. Bound the queue too:
# `max_enqueued_batches` equal to `num_batch_threads`, as TF Serving's
# [batching guide](https://github.com/tensorflow/serving/blob/master/tensorflow_serving/batching/README.md)
# suggests for online serving, depending on how requests are routed ([why](#bounded-queue)). In TF Serving these knobs live in the batching
# parameters file passed with `--enable_batching --batching_parameters_file=...`. The file is a
# `BatchingParameters` text proto; the cell below parses it and feeds the parsed values to the simulator.
#
# `tensorflow-serving-api` 2.21 does **not** ship the Python module for this message
# (`tensorflow_serving.servables.tensorflow.session_bundle_config_pb2`, where TF Serving defines it),
# so the cell builds the message from its upstream field definitions (same names, numbers and
# wrapper types) and asserts that the module is still missing — the cell turns red when a future
# release ships it, and should then import it instead.

# %%
import importlib

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format, wrappers_pb2

try:
    importlib.import_module("tensorflow_serving.servables.tensorflow.session_bundle_config_pb2")
    shipped = True
except ModuleNotFoundError:
    shipped = False
assert not shipped, "tensorflow-serving-api now ships session_bundle_config_pb2: import BatchingParameters from it"


def batching_parameters_class():
    """tensorflow.serving.BatchingParameters, fields 1-7 as in TF Serving's session_bundle_config.proto."""
    pool = descriptor_pool.DescriptorPool()
    wrappers = descriptor_pb2.FileDescriptorProto()
    wrappers_pb2.DESCRIPTOR.CopyToProto(wrappers)
    pool.Add(wrappers)
    f = descriptor_pb2.FileDescriptorProto(name="tensorflow_serving/batching_parameters.proto",
                                           package="tensorflow.serving", syntax="proto3",
                                           dependency=["google/protobuf/wrappers.proto"])
    msg = f.message_type.add(name="BatchingParameters")
    F = descriptor_pb2.FieldDescriptorProto
    for number, name, kind in [(1, "max_batch_size", "Int64Value"), (2, "batch_timeout_micros", "Int64Value"),
                               (3, "max_enqueued_batches", "Int64Value"), (4, "num_batch_threads", "Int64Value"),
                               (5, "thread_pool_name", "StringValue")]:
        msg.field.add(name=name, number=number, label=F.LABEL_OPTIONAL, type=F.TYPE_MESSAGE,
                      type_name=f".google.protobuf.{kind}")
    msg.field.add(name="allowed_batch_sizes", number=6, label=F.LABEL_REPEATED, type=F.TYPE_INT64)
    msg.field.add(name="pad_variable_length_inputs", number=7, label=F.LABEL_OPTIONAL, type=F.TYPE_BOOL)
    pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorflow.serving.BatchingParameters"))


BatchingParameters = batching_parameters_class()

BATCHING_PARAMETERS_TXT = """
max_batch_size { value: 64 }
batch_timeout_micros { value: 1000 }
max_enqueued_batches { value: 1 }
num_batch_threads { value: 1 }
"""
with open("batching_parameters.txt", "w") as fh:
    fh.write(BATCHING_PARAMETERS_TXT)
params = text_format.Parse(open("batching_parameters.txt").read(), BatchingParameters())

assert params.max_batch_size.value == 64 and params.batch_timeout_micros.value == 1000, params
assert params.HasField("num_batch_threads") and not params.HasField("thread_pool_name"), params

# A typo in the file is caught here, not at server start.
try:
    text_format.Parse("max_batch_size { value: 64 }\nbatch_timeout_ms { value: 1 }", BatchingParameters())
    typo_parsed = True
except text_format.ParseError:
    typo_parsed = False
assert not typo_parsed, "an unknown field must not parse"

LARGE = dict(max_batch_size=int(params.max_batch_size.value),
             batch_timeout_ms=params.batch_timeout_micros.value / 1000.0,
             num_batch_threads=int(params.num_batch_threads.value),
             max_enqueued_batches=int(params.max_enqueued_batches.value))
large = {r: simulate(bursty_arrivals(r), **LARGE) for r in rates}
assert not any(np.isnan(large[r][0]).any() for r in rates), "the bounded queue turned nobody away at these loads"
p50_large = [p(large[r][0], 50) for r in rates]
p99_large = [p(large[r][0], 99) for r in rates]

# The fix removes the tail at every load level without hurting the median.
assert all(b <= a for a, b in zip(p99_small, p99_large, strict=True)), (p99_small, p99_large)
assert p99_large[-1] < p99_small[-1] / 5, (p99_small[-1], p99_large[-1])
assert p99_large[-1] < 3 * p50_large[-1], (p50_large[-1], p99_large[-1])
assert all(b <= 1.1 * a for a, b in zip(p50_small, p50_large, strict=True)), (p50_small, p50_large)

# %% [markdown]
# **The timeout is the other knob, and it works the opposite way.** A longer `batch_timeout_micros`
# lets batches fill at light load, which raises *every* request's latency (p50 included) and does
# nothing for bursts, where batches fill before the timeout anyway. The sweep below holds
# `max_batch_size=64` and varies the timeout at light load.

# %%
light = bursty_arrivals(0.5)
timeouts = [0.5, 1.0, 2.0, 5.0, 10.0]
p50_by_timeout = [p(simulate(light, 64, t)[0], 50) for t in timeouts]
p99_by_timeout = [p(simulate(light, 64, t)[0], 99) for t in timeouts]
assert all(b > a for a, b in zip(p50_by_timeout, p50_by_timeout[1:], strict=False)), p50_by_timeout
assert p50_by_timeout[-1] > 2 * p50_by_timeout[0], p50_by_timeout

# %%
# alt: Left: simulated p50 and p99 latency on a log scale against base load, for max_batch_size 8 and 64 with a 1 ms batch timeout. Right: p50 and p99 at light load against batch_timeout, for max_batch_size 64.
import matplotlib.pyplot as plt
import matplotlib.ticker

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
ax1.plot(rates, p50_small, "o--", color="tab:blue", label="p50, max_batch_size=8")
ax1.plot(rates, p99_small, "o-", color="tab:blue", label="p99, max_batch_size=8")
ax1.plot(rates, p50_large, "s--", color="tab:orange", label="p50, max_batch_size=64")
ax1.plot(rates, p99_large, "s-", color="tab:orange", label="p99, max_batch_size=64")
ax1.set_yscale("log")
ax1.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
ax1.set_yticks([3, 5, 10, 20, 50, 100])
ax1.set_xlabel("base load (requests / ms, bursts at 3x)")
ax1.set_ylabel("latency (ms, simulated)")
ax1.set_title("Tail latency vs load (timeout 1 ms)")
ax1.legend(fontsize=8)

ax2.plot(timeouts, p50_by_timeout, "o--", label="p50")
ax2.plot(timeouts, p99_by_timeout, "o-", label="p99")
ax2.set_xlabel("batch_timeout (ms)")
ax2.set_ylabel("latency (ms, simulated)")
ax2.set_title("Timeout at light load (max_batch_size=64)")
ax2.legend(fontsize=8)
fig.tight_layout()
plt.show()

# %% [markdown]
# <h3 id="large-batch">Raise it or tune it down? When a large batch hurts</h3>
#
# The common advice says "tune `max_batch_size` down"; this page raised it. TF Serving's
# [batching guide](https://github.com/tensorflow/serving/blob/master/tensorflow_serving/batching/README.md)
# says neither as a rule: `max_batch_size` "governs the throughput/latency tradeoff" and keeps a batch within
# resource limits such as GPU memory. Its starting points are a "really high value" with
# `batch_timeout_micros` 0 on a CPU-only server, and on a GPU a `max_batch_size` tuned (with a high timeout)
# for "the desired balance between throughput and average latency", the timeout then brought down to rein in
# tail latency. Both answers are right in their regime, and the regime is a property of your model's batch
# cost, which you can measure:
#
# - **raise it** while a bigger batch still buys throughput, because a fixed per-batch cost dominates (the
#   root cause above);
# - **bring it down** where it stops buying throughput: when the cost of a batch grows in proportion to its
#   rows, or faster, a bigger batch only makes every request in it wait longer; and padding to
#   `allowed_batch_sizes` makes small batches pay for large ones.
#
# The TensorFlow part can run here: the cost of one batch through an exported model's `serving_default`
# signature, on this CPU, for several batch sizes. It is timed with the site's timing protocol
# (`snippets/shared/timing.py`): the sizes take turns in interleaved rounds, so a burst of load from other
# processes hits all of them alike; each size is timed in CPU seconds of the whole process (every TensorFlow
# thread), over enough calls to make about 2,048 rows; the median of 7 rounds is kept. Only ratios far from
# their thresholds are asserted; the numbers themselves are printed as measured:

# %%
import logging
import statistics
import time

import keras
import tensorflow as tf

logging.getLogger("tensorflow").setLevel(logging.ERROR)   # keep the saver's INFO line and the v1 profiler's notes off the page
keras.utils.set_random_seed(0)
ranker = keras.Sequential([keras.Input((256,), name="features"), keras.layers.Dense(512, activation="relu"),
                           keras.layers.Dense(512, activation="relu"), keras.layers.Dense(1)])
ranker.export("ranker/1", verbose=False)
serving_fn = tf.saved_model.load("ranker/1").signatures["serving_default"]
rng = np.random.default_rng(0)


def batch_cost_ms(sizes, rounds=7, rows_per_sample=2048):
    """Median CPU time (ms) of one call of the serving signature per batch size, sizes interleaved."""
    batches = {rows: tf.constant(rng.standard_normal((rows, 256)).astype("float32")) for rows in sizes}
    calls = {rows: max(1, rows_per_sample // rows) for rows in sizes}
    for batch in batches.values():
        serving_fn(features=batch)                               # first call: warm-up
    samples = {rows: [] for rows in sizes}
    for _ in range(rounds):
        for rows, batch in batches.items():
            start = time.process_time()
            for _ in range(calls[rows]):
                serving_fn(features=batch)["output_0"].numpy()
            samples[rows].append(1e3 * (time.process_time() - start) / calls[rows])
    return {rows: statistics.median(times) for rows, times in samples.items()}


cost_ms = batch_cost_ms((1, 3, 64, 512, 4096))
for rows, ms in cost_ms.items():
    print(f"{rows:5d} rows: {ms:7.3f} CPU ms per batch, {1e3 * ms / rows:6.1f} us per row")

per_row = {rows: ms / rows for rows, ms in cost_ms.items()}
gain_small = per_row[1] / per_row[64]          # throughput bought by going from 1 to 64 rows
gain_large = per_row[512] / per_row[4096]      # throughput bought by going from 512 to 4096 rows
print(f"per-row gain 1 -> 64 rows: {gain_small:.1f}x, 512 -> 4096 rows: {gain_large:.2f}x")
# Batching pays at first: a row costs far less in a batch of 64 than alone (the fixed cost of a call is
# amortised; measured 19-20x on a loaded 2-core machine, asserted > 3x) ...
assert gain_small > 3, per_row
# ... and then stops paying: 8x the rows (512 -> 4096) buys under 2.5x throughput (0.3-1.2x measured), far less
# than the first 64 rows bought.
assert gain_large < 2.5, per_row
assert gain_large < gain_small / 2, (gain_small, gain_large)

# %% [markdown]
# Past a few hundred rows, more rows no longer buy this model throughput: the per-row cost stops falling,
# so a `max_batch_size` of 4096 instead of 512 adds no capacity, and any request that lands in a 4096-row
# batch waits for all of it. The work itself says why: TensorFlow's own operation count
# (`tf.compat.v1.profiler`, floating-point operations of the traced model) grows exactly with the rows, so
# once the fixed cost of a call is amortised, nothing is left to amortise:

# %%
from tensorflow.python.profiler import model_analyzer, option_builder


def model_flops(rows):
    """Floating-point operations TensorFlow's profiler counts in the model's graph for a batch of `rows`."""
    graph = tf.function(ranker).get_concrete_function(tf.TensorSpec([rows, 256], tf.float32)).graph
    options = {**option_builder.ProfileOptionBuilder.float_operation(), "output": "none"}
    return model_analyzer.profile(graph, options=options).total_float_ops


flops = {rows: model_flops(rows) for rows in (3, 64, 512, 4096)}
print("floating-point operations per batch:", flops)
assert flops[4096] == 8 * flops[512], flops                 # 8x the rows: exactly 8x the work
assert abs(flops[64] / flops[3] - 64 / 3) < 0.01, flops     # 3 rows padded to 64: the work of 64 rows

# %% [markdown]
# On the 2-core machine that verified this page, the 512 -> 4096 time gain printed above was 0.3-1.2x in
# different runs: the per-row cost stayed flat or *rose* (the big batch no longer fits the caches). That
# depends on the machine, so only "no real gain" is asserted; the simulation below assumes a superlinear law,
# and says so.
#
# The queue model shows the consequence at a heavy, bursty load, with two cost laws: a small fixed cost plus a
# cost proportional to the rows (the gentlest law the measurement allows), and an *assumed* superlinear one:

# %% [markdown]
# **Padding.** With `allowed_batch_sizes`, the batcher pads an underfull batch "with dummy data to round up
# to the next valid size" (the guide's words). The answers for the real rows do not change; the cost does.
# Three requests padded to 64 rows, through the same signature:

# %%
three = rng.standard_normal((3, 256)).astype("float32")
padded = np.concatenate([three, np.zeros((61, 256), "float32")])
np.testing.assert_allclose(serving_fn(features=tf.constant(padded))["output_0"].numpy()[:3],
                           serving_fn(features=tf.constant(three))["output_0"].numpy(), rtol=1e-5, atol=1e-5)
# The padded batch does 64/3 = 21x the work (asserted above from the profiler's count); what that costs in time
# depends on how much of a small call is fixed overhead on this CPU, so the time is shown, not asserted:
print(f"3 real rows: {cost_ms[3]:.3f} CPU ms alone, {cost_ms[64]:.3f} CPU ms padded to 64 "
      f"({cost_ms[64] / cost_ms[3]:.1f}x, measured)")

# In the queue model at light load: one allowed size of 64 makes every lone request pay for 64 rows;
# a ladder of sizes keeps most of the padding away.
light_p50 = {name: p(simulate(light, 64, 1.0, allowed_batch_sizes=sizes)[0], 50)
             for name, sizes in [("no padding", None), ("[64]", [64]), ("[8, 16, 32, 64]", [8, 16, 32, 64])]}
print("p50 at light load (ms, simulated):", {k: round(v, 2) for k, v in light_p50.items()})
assert light_p50["[64]"] > 2 * light_p50["no padding"], light_p50
assert light_p50["[8, 16, 32, 64]"] < 1.2 * light_p50["no padding"], light_p50

# %% [markdown]
# <h3 id="bounded-queue">A bounded queue: fail fast instead of waiting</h3>
#
# `max_enqueued_batches` bounds how many batches may wait; a request that finds the queue full is turned away
# at once instead of joining a backlog. For online serving the guide suggests considering (depending on how
# requests are routed to server instances) setting it equal to `num_batch_threads`, "to minimize queueing delay at a given server while keeping it busy", and something generous for
# bulk jobs. Under overload (bursts at 6x), the queue model with the page's first configuration:

# %%
overload = bursty_arrivals(2.5, burst_factor=6.0)
queue = {}
for bound in (None, 100, 1):
    latency, _ = simulate(overload, 8, 1.0, max_enqueued_batches=bound)
    queue[bound] = {"p99": p(latency, 99), "turned away": float(np.isnan(latency).mean())}
print({str(k): {m: round(v, 3) for m, v in d.items()} for k, d in queue.items()})

assert queue[None]["turned away"] == 0.0, queue[None]
assert queue[1]["p99"] < queue[None]["p99"] / 10, queue        # the accepted requests stay fast ...
assert queue[1]["turned away"] > 0.05, queue[1]                # ... because the excess fails at once
assert queue[100]["p99"] > 0.5 * queue[None]["p99"], queue     # a generous bound is no bound online

# %% [markdown]
# The requests turned away fail at once, so a client or load balancer can retry another replica, instead of
# waiting for a prediction that arrives too late to be useful. The same model says what more batch threads
# do:
#
# **`num_batch_threads`** is how many batches run at once. When every batch thread is busy, batches queue,
# which is the backlog above; the guide's starting point is one thread per CPU core. The simulation treats a
# second thread as a second, independent server, which a real CPU is not (the threads share the cores with
# the model's own op threads), so on a server it is a knob to measure, not a free win:

# %%
threads_p99 = {t: p(simulate(bursty_arrivals(2.5), 8, 1.0, num_batch_threads=t)[0], 99) for t in (1, 2)}
print("p99 at peak (ms, simulated):", {k: round(v, 1) for k, v in threads_p99.items()})
assert threads_p99[2] < threads_p99[1] / 3, threads_p99

# %% [markdown]
# The server would be started with these flags:
#
# <!-- not-executed: needs the tensorflow_model_server binary, which the verification machine does not have -->
# ```bash
# tensorflow_model_server --rest_api_port=8501 --model_name=ranker --model_base_path=/models/ranker \
#   --enable_batching --batching_parameters_file=/config/batching_parameters.txt
# ```
#
# <h2 id="prevent">How to prevent it</h2>
#
# - **Load-test with bursts, not a constant rate.** A constant-rate test at the daily average is the
#   p50 line above; it passes. Replay recorded traffic or add bursts, and gate on p99.
# - **Measure the batch cost curve first** (as [above](#large-batch)), then size `max_batch_size` for peak
#   capacity: `max_batch_size / service_time(max_batch_size)` must exceed the burst rate with margin, and
#   going past the size where throughput stops growing only adds latency. Keep `batch_timeout_micros` small
#   (it sets the light-load floor), keep `allowed_batch_sizes` a ladder rather than one large size, and set
#   `max_enqueued_batches` to `num_batch_threads` so overload sheds requests with an error instead of growing
#   a tail.
# - **Several models or versions on one server or GPU**: separate batch schedulers compete for the same
#   device; the guide recommends one shared scheduler and thread pool that interleaves batches of each model
#   (TF Serving's `SharedBatchScheduler`), which is also what serves two versions at once during a
#   rollout. A p99 spike right after a new version loads can also be its cold first requests: ship warm-up
#   data ([the first requests after a deploy are slow](../serving-cold-start/#fix)).
# - **Keep the config under test**: parse `batching_parameters.txt` in CI (as above) and re-run the
#   queueing model with the measured per-batch cost whenever the model or hardware changes.
# - **Alert on the p99/p50 ratio** and on queueing delay as a share of latency.
#
# Simplifications of the queue model: a service-time law instead of a server (the TensorFlow batch costs
# above are measured, TF Serving's scheduler is not run), independent batch threads, a queue bound counted in
# full batches, no network or serialisation time. The `num_batch_threads` result depends directly on the
# independent-threads assumption; the other directions asserted above do not rest on it, but their sizes
# are the model's, not a server's.
