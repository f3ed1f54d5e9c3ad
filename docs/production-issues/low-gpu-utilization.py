# ---
# description: "An idle accelerator is usually an input-bound pipeline: measure the step-time split first, then parallelise native ops and overlap with prefetch."
# tags: [hard, tf.data, performance, gpu]
# ---

# %% [markdown]
# # The GPU sits idle: an input-bound pipeline
#
# <h2 id="symptom">Symptom</h2>
#
# Training is slower than expected and the accelerator is mostly idle: `nvidia-smi` shows GPU utilisation
# jumping between 0 % and a short spike, while one CPU core sits at 100 % in the training process. A bigger
# GPU does not help; adding `num_parallel_calls=tf.data.AUTOTUNE` to the `map` does not help either.
#
# This page runs on the CPU runner by splitting the CPU into two logical devices: the model runs on
# `/CPU:1` (on the GPU runner: `/GPU:0`), the input pipeline on the host, exactly as in production.
#
# <h2 id="detect">How to detect it in production</h2>
#
# - **Split the step time** before changing anything: time spent waiting for `next(iterator)` versus time in
#   the train step (with a host sync, e.g. `loss.numpy()`). More than a few percent of waiting means the
#   input pipeline is the bottleneck. This notebook does exactly that.
# - **Or profile a few warm steps.** On TensorFlow 2.21, `tensorflow` alone writes the profile
#   (`tf.profiler.experimental.start(logdir)` … `stop()`, each step wrapped in
#   `tf.profiler.experimental.Trace("train", step_num=step, _r=1)`); reading it needs the viewer package:
#   `pip install tensorboard xprof`, then `tensorboard --logdir logs` and its Profile tab, or `xprof --logdir logs`
#   on its own. The viewer's *input-pipeline analyzer* reports the same split as a share of step time spent
#   waiting for input, and the trace viewer shows the gaps between device steps. What each package is needed
#   for, and why Keras 3's `TensorBoard(profile_batch=...)` alone gives the analyzer no steps, is measured in
#   [Profile a training step](../../best-practices/profile-a-training-step/#rule); the official guide is
#   [Optimize TensorFlow performance using the Profiler](https://www.tensorflow.org/guide/profiler).
# - Process CPU usage pinned near **one core** while the pipeline uses `tf.py_function` or
#   `tf.numpy_function` is the signature of the Python global interpreter lock (GIL).

# %%
# The site's timing protocol (snippets/shared/timing.py), included:
# --8<-- "snippets/shared/timing.py:protocol"


import resource
import threading

import keras
import numpy as np
import tensorflow as tf

# A fresh kernel: devices can still be configured. One thread per op keeps the scaling measurements honest.
tf.config.threading.set_intra_op_parallelism_threads(1)
GPUS = tf.config.list_physical_devices("GPU")
if not GPUS:
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
ACCELERATOR = "/GPU:0" if GPUS else "/CPU:1"
assert len(tf.config.list_logical_devices("GPU" if GPUS else "CPU")) >= (1 if GPUS else 2)

tf.random.set_seed(0)
FEATURES, BATCH, STEPS = 4096, 32, 12
raw = np.random.default_rng(0).standard_normal((BATCH * STEPS, FEATURES)).astype(np.float32)
labels = (raw[:, :8].sum(axis=1) > 0).astype(np.float32)

# %% [markdown]
# <h2 id="root-cause">Root cause, reproduced</h2>
#
# The preprocessing is written in Python — a running normalisation, element by element — and wrapped in
# `tf.py_function`. The model is small, so each step is short. First, the same feature in Python and as
# native TensorFlow ops, checked to agree:

# %%
def python_features(x):
    """x / (1 + running sum of squares), one value at a time (pure Python)."""
    out, total = [], 0.0
    for v in x.numpy().tolist():
        total += v * v
        out.append(v / (1.0 + total))
    return np.asarray(out, dtype=np.float32)


def py_map(x, y):
    feats = tf.py_function(python_features, [x], tf.float32)
    feats.set_shape([FEATURES])
    return feats, y


def native_features(x):               # the same arithmetic as TensorFlow ops; works per row or per batch
    return x / (1.0 + tf.math.cumsum(x * x, axis=-1))


np.testing.assert_allclose(python_features(tf.constant(raw[0])), native_features(raw[0]).numpy(), rtol=1e-4, atol=1e-6)

with tf.device(ACCELERATOR):
    model = keras.Sequential([keras.Input((FEATURES,)), keras.layers.Dense(16, activation="relu"),
                                 keras.layers.Dense(1)])
    optimizer = keras.optimizers.SGD(0.01)
loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)


@tf.function
def train_step(x, y):
    with tf.device(ACCELERATOR):
        with tf.GradientTape() as tape:
            loss = loss_fn(y[:, None], model(x, training=True))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables, strict=True))
    return loss


NO_INJECTED_PREFETCH = tf.data.Options()
NO_INJECTED_PREFETCH.experimental_optimization.inject_prefetch = False   # TF injects one by default


def base():
    return tf.data.Dataset.from_tensor_slices((raw, labels))


def step_split(ds, warmup=2):
    """Median milliseconds per step waiting for input and computing, measured the way production should
    (the median: one step stalled by a busy machine does not move it)."""
    waits, computes = [], []
    iterator = iter(ds)
    while True:
        t0 = time.perf_counter()
        try:
            x, y = next(iterator)
        except StopIteration:
            break
        t1 = time.perf_counter()
        train_step(x, y).numpy()                 # .numpy() waits for the device: the step really finished
        t2 = time.perf_counter()
        waits.append(t1 - t0)
        computes.append(t2 - t1)
    return 1e3 * np.median(waits[warmup:]), 1e3 * np.median(computes[warmup:])


slow = base().map(py_map).batch(BATCH).with_options(NO_INJECTED_PREFETCH)
step_split(base().batch(BATCH))                  # trace the train step once, outside the measurements
split = {"py_function map": step_split(slow)}
wait, compute = split["py_function map"]
print(f"py_function pipeline: wait {wait:.1f} ms, compute {compute:.1f} ms per step")
assert wait > compute, split                     # input-bound: the device waits more than it works

# %% [markdown]
# The usual first reaction — parallel map — does not fix it. A `py_function` runs Python, and Python
# bytecode runs one thread at a time (the GIL), so two parallel calls take turns: the process never uses
# much more than one core for this work, so the wall time cannot halve. Native kernels release the GIL, so
# their parallel calls can run at the same time on free cores. Measured on the pipeline alone (process CPU
# time / wall time = cores used). Only the cap is asserted: wall-time speedups on a shared 2-core runner are
# too noisy for an honest assert, so they are printed and plotted.

# %%
def cores_used(ds, repeats=2):
    best = None
    for _ in range(repeats):
        r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        for _ in ds:
            pass
        r1, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - t0
        cpu_s = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        if best is None or wall < best[0]:
            best = (wall, cpu_s / wall)
    return best


def heavy_native(x, y):                          # per-element native work of a few milliseconds
    m = tf.reshape(x[:1024], [32, 32])
    for _ in range(3):
        m = tf.tanh(tf.matmul(tf.tile(m, [8, 8]), tf.tile(m, [8, 8]))[:32, :32] * 1e-3)
    return x + tf.reduce_mean(m), y


scaling = {}
for name, fn, elements in [("py_function", py_map, BATCH * STEPS), ("native", heavy_native, 4 * BATCH)]:
    for calls in (1, 2):
        ds = base().take(elements).map(fn, num_parallel_calls=calls).batch(BATCH).with_options(NO_INJECTED_PREFETCH)
        scaling[(name, calls)] = cores_used(ds)
for (name, calls), (wall, cores) in scaling.items():
    print(f"{name:12s} num_parallel_calls={calls}: {wall * 1e3:6.0f} ms, {cores:.2f} cores used")

_, py_cores_2 = scaling[("py_function", 2)]
assert py_cores_2 < 1.4, scaling                  # the GIL caps Python work near one core, however many calls

# %% [markdown]
# **Predict the output.** With `num_parallel_calls=tf.data.AUTOTUNE` on the `py_function` map, calls finish
# in whatever order the threads get the GIL. Do the elements come out in a different order?
#
# <details><summary>Answer</summary>
#
# No. `map` is deterministic by default: results are returned in input order whatever the completion order.
# Only `deterministic=False` (or `Options().deterministic = False`) lets them out of order.
#
# </details>

# %%
def tag(i):
    return tf.py_function(lambda v: v * 10, [i], tf.int64)


in_order = [int(v) for v in tf.data.Dataset.range(40).map(tag, num_parallel_calls=tf.data.AUTOTUNE)]
assert in_order == [10 * i for i in range(40)], in_order

# %% [markdown]
# <h2 id="fix">The fix</h2>
#
# 1. **Rewrite the Python preprocessing as TensorFlow ops**, and since the feature is row-wise, apply it
#    **after `batch`** — one vectorised call per batch.
# 2. **Parallelise** what remains (`num_parallel_calls=AUTOTUNE`) and **prefetch** at the end so the next
#    batch is produced while the device computes.

# %%
fixed = (base().batch(BATCH)
         .map(lambda x, y: (native_features(x), y), num_parallel_calls=tf.data.AUTOTUNE)
         .prefetch(tf.data.AUTOTUNE))
split["py_function, parallel"] = step_split(base().map(py_map, num_parallel_calls=tf.data.AUTOTUNE)
                                            .batch(BATCH).with_options(NO_INJECTED_PREFETCH))
split["native, batched"] = step_split(base().batch(BATCH).map(lambda x, y: (native_features(x), y))
                                      .with_options(NO_INJECTED_PREFETCH))
split["native + prefetch"] = step_split(fixed)
for name, (w, c) in split.items():
    print(f"{name:22s} wait {w:6.1f} ms  compute {c:5.1f} ms")

py_parallel_wait, py_parallel_compute = split["py_function, parallel"]
assert py_parallel_wait > py_parallel_compute, split         # parallel py_function: still input-bound

# %% [markdown]
# The split is what production sees, but its waits depend on how much CPU the pipeline gets: on a loaded
# 2-core machine, the fixed pipeline's median wait was measured from 0.3 ms up to 8 ms, against 21 to 62 ms
# for the `py_function` pipeline, so the split is shown, not asserted. What the fix removed is work. It
# calls no Python per element (counted), and producing an epoch of batches costs far less CPU time,
# measured with the site's timing protocol (`snippets/shared/timing.py`, included in the first code cell):
# candidates interleaved, CPU time of the whole process, median and spread.

# %%
python_calls = [0]


def counted_features(x):
    python_calls[0] += 1
    return python_features(x)


def counted_map(x, y):
    feats = tf.py_function(counted_features, [x], tf.float32)
    feats.set_shape([FEATURES])
    return feats, y


def drain(ds):
    for _ in ds:
        pass


pipelines = {"py_function map": base().map(counted_map).batch(BATCH).with_options(NO_INJECTED_PREFETCH),
             "native + prefetch": fixed}
calls_per_epoch = {}
for name, ds in pipelines.items():
    python_calls[0] = 0
    drain(ds)
    calls_per_epoch[name] = python_calls[0]
production = measure({name: (lambda ds=ds: drain(ds)) for name, ds in pipelines.items()}, repeats=3)
print("Python calls per epoch:", calls_per_epoch)
print({name: f"{t['median'] * 1e3:.0f} CPU ms per epoch (spread {t['spread']:.2f})" for name, t in production.items()})
assert calls_per_epoch == {"py_function map": BATCH * STEPS, "native + prefetch": 0}, calls_per_epoch
assert ratio(production, "py_function map", "native + prefetch") > 5, production

# %% [markdown]
# The `py_function` pipeline calls Python once per element, 384 times an epoch; the fixed one never does
# (asserted). Producing an epoch with it cost more than 5 times the CPU time of the fixed one (asserted;
# 10.6 to 15.4 times in the runs made for this page). What is left of the fixed pipeline's cost is mostly
# slicing and batching the arrays, which both pipelines do.

# %% [markdown]
# **Prefetch overlaps production and consumption.** When producing a batch has a real cost (here a 15 ms
# read from slow storage, stood in for by a wait) and the device step takes as long, prefetch runs them at
# the same time instead of one after the other. The injected prefetch is switched off for the baseline
# (TF 2.21 adds one automatically to pipelines that end synchronously, which hides the mistake). Every read
# and every step records when it ran, so the overlap is counted, not inferred from a total time: a read
# overlaps if a step was running at any moment of it.

# %%
read_spans, step_spans = [], []                  # (start, end) of every read and every step, perf_counter


def slow_read(x, y):
    def read(v):
        start = time.perf_counter()
        time.sleep(0.015)
        read_spans.append((start, time.perf_counter()))
        return v
    return tf.numpy_function(read, [x], tf.float32), y


def overlapped_pass(ds):
    """One pass: (seconds, reads that overlapped a step, reads)."""
    read_spans.clear()
    step_spans.clear()
    start = time.perf_counter()
    for x, y in ds:
        began = time.perf_counter()
        train_step(x, y).numpy()
        time.sleep(0.015)                        # stand-in for a 15 ms accelerator step
        step_spans.append((began, time.perf_counter()))
    seconds = time.perf_counter() - start
    overlapping = sum(any(r0 < s1 and s0 < r1 for s0, s1 in step_spans) for r0, r1 in read_spans)
    return seconds, overlapping, len(read_spans)


reader = base().batch(BATCH).map(slow_read)
sequential = [overlapped_pass(reader.with_options(NO_INJECTED_PREFETCH)) for _ in range(3)]
overlapped = [overlapped_pass(reader.prefetch(tf.data.AUTOTUNE)) for _ in range(3)]
t_sequential, t_overlapped = min(p[0] for p in sequential), min(p[0] for p in overlapped)
print(f"read then step: {t_sequential * 1e3:.0f} ms, reads overlapping a step {[p[1] for p in sequential]}; "
      f"with prefetch: {t_overlapped * 1e3:.0f} ms, overlapping {[p[1] for p in overlapped]} (of {STEPS} reads)")
assert all(p[1:] == (0, STEPS) for p in sequential), sequential            # no prefetch: never at the same time
assert all(p[2] == STEPS and p[1] >= STEPS // 2 for p in overlapped), overlapped   # prefetch: reads run during steps

# %% [markdown]
# Without prefetch, no read ran while a step ran, in any of the three passes; with prefetch, at least half
# of the 12 reads did (asserted; 11 of 12, the first read having no step before it, is what the printed
# counts show when nothing stalls). The time saved is shown, not asserted: the best of three passes was 1.47
# to 1.73 times faster with prefetch in the runs made for this page, and 1.30 in an earlier run next to
# another busy process.

# %% [markdown]
# **Read files in parallel: TFRecord shards with `interleave`.** Data that does not fit in memory is read
# from files, and every read waits for storage. Written as a few shards, the files can be read at the same
# time: `interleave(..., num_parallel_calls=AUTOTUNE)` keeps `cycle_length` shards open and pulls from them on
# parallel threads, while `flat_map` reads one shard after the other. Here each record read waits 4 ms, a
# stand-in for network storage. Each wait also counts how many reads are waiting at that moment, which
# shows whether the reads run one after the other or together:

# %%
SHARDS, PER_SHARD = 8, 16
shard_paths = []
for s in range(SHARDS):
    path = f"train-{s:02d}-of-{SHARDS:02d}.tfrecord"        # the page's temporary folder
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(PER_SHARD):
            example = tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=raw[s * PER_SHARD + i, :64])),
                "y": tf.train.Feature(float_list=tf.train.FloatList(value=[labels[s * PER_SHARD + i]]))}))
            writer.write(example.SerializeToString())
    shard_paths.append(path)
RECORD_SPEC = {"x": tf.io.FixedLenFeature([64], tf.float32), "y": tf.io.FixedLenFeature([1], tf.float32)}


class InFlight:
    """How many storage reads are waiting at the same moment (now), and the most at once (most)."""

    def __init__(self):
        self.lock, self.now, self.most = threading.Lock(), 0, 0

    def __enter__(self):
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def __exit__(self, *exc):
        with self.lock:
            self.now -= 1


in_flight = InFlight()


def slow_storage(record):
    def wait(r):
        with in_flight:
            time.sleep(0.004)
        return r
    return tf.numpy_function(wait, [record], tf.string)


def read_shard(path):
    return tf.data.TFRecordDataset(path).map(slow_storage)


files = tf.data.Dataset.from_tensor_slices(shard_paths)
one_by_one = files.flat_map(read_shard)
in_parallel = files.interleave(read_shard, cycle_length=4, num_parallel_calls=tf.data.AUTOTUNE)
parsed = in_parallel.batch(BATCH).map(lambda r: tf.io.parse_example(r, RECORD_SPEC))   # vectorised parse
assert sum(int(b["x"].shape[0]) for b in parsed) == SHARDS * PER_SHARD


def read_pass(ds):
    """(seconds, most reads waiting at once) for one pass over `ds`."""
    in_flight.most = 0
    start = time.perf_counter()
    for _ in ds:
        pass
    return time.perf_counter() - start, in_flight.most


(t_one_by_one, most_one_by_one), (t_in_parallel, most_in_parallel) = read_pass(one_by_one), read_pass(in_parallel)
print(f"{SHARDS} shards x {PER_SHARD} records: flat_map {t_one_by_one * 1e3:.0f} ms, at most {most_one_by_one} "
      f"read at once; parallel interleave {t_in_parallel * 1e3:.0f} ms, at most {most_in_parallel} at once")
assert most_one_by_one == 1, most_one_by_one          # flat_map: one read after the other
assert most_in_parallel >= 2, most_in_parallel        # interleave: reads from several shards wait together

# %% [markdown]
# `flat_map` never had two reads waiting at once; the parallel `interleave` had several (asserted: at least
# two). The time is shown, not asserted: the overlap shortens the pass only when the threads get the
# cores, and on a loaded 2-core machine `flat_map` took from 1.09 to 3.0 times as long as the parallel
# `interleave` in the runs made for this page.

# %% [markdown]
# **Size the shuffle buffer.** `shuffle(buffer_size)` fills a buffer and then hands out a random element of
# it, refilling one element at a time. Two ways to get it wrong:
#
# - **Too large**: the first element waits until the buffer is full, and the buffer holds `buffer_size`
#   elements in memory, so the RAM grows with `buffer_size` × element size and the start-up stall with
#   `buffer_size` × the time to produce one element (both measured, with decoded-image-sized elements, in
#   [Memory climbs with the shuffle buffer](../shuffle-buffer-memory/#symptom)). The accelerator idles through
#   the stall at the start of every epoch.
# - **Too small**: the order leaks through. The element at output position `i` can only come from the first
#   `i + buffer_size` inputs, so data stored in order (by label, by time, by source) stays nearly in order.
#   With every label-0 record stored before the label-1 records, a 16-element buffer gives a first batch of
#   label 0 only:

# %%
by_label = np.argsort(labels, kind="stable")                 # records stored grouped by label
stored = tf.data.Dataset.from_tensor_slices(by_label)


def shuffled(buffer_size):
    return [int(v) for v in stored.shuffle(buffer_size, seed=0)]


small_buffer = shuffled(16)
positions = {int(index): pos for pos, index in enumerate(by_label)}
assert all(positions[v] < i + 16 for i, v in enumerate(small_buffer)), "output i comes from the first i + 16 inputs"
first_batch_labels = labels[small_buffer[:BATCH]]
full_buffer_labels = labels[shuffled(len(by_label))[:BATCH]]
print(f"label-1 share of the first batch: buffer 16 -> {first_batch_labels.mean():.2f}, "
      f"full buffer -> {full_buffer_labels.mean():.2f} (data: {labels.mean():.2f})")
assert first_batch_labels.max() == 0.0, first_batch_labels              # one class only
assert 0.0 < full_buffer_labels.mean() < 1.0, full_buffer_labels         # both classes
assert shuffled(1) == by_label.tolist()                                  # a buffer of 1 does not shuffle at all

# %% [markdown]
# The remedy for both is the same: shuffle the *file names* (cheap), interleave several shards, and keep the
# element buffer modest, as in [Order the tf.data pipeline](../../best-practices/tf-data-pipeline-order/#evidence).
#
# %% [markdown]
# <h2 id="follow-ups">Follow-up practice</h2>
#
# **Follow-up: would `tf.numpy_function` instead of `tf.py_function` scale better?** No. It avoids the
# eager-tensor wrapping, but the body is still Python under the GIL.
#
# <details><summary>Answer, checked</summary>
#
# With two parallel calls, the `numpy_function` pipeline also stays under about one core.
#
# </details>

# %%
def np_map(x, y):
    feats = tf.numpy_function(lambda v: python_features(tf.constant(v)), [x], tf.float32)
    feats.set_shape([FEATURES])
    return feats, y


_, np_cores = cores_used(base().map(np_map, num_parallel_calls=2).batch(BATCH).with_options(NO_INJECTED_PREFETCH), repeats=1)
assert np_cores < 1.4, np_cores

# %% [markdown]
# **Follow-up: does `cache()` fix it?** After the first epoch, yes — if the preprocessed data fits in memory
# (or on local disk) and the preprocessing is deterministic. The first epoch still pays the full cost.
#
# <details><summary>Answer, checked</summary>
#
# Epoch 2 of a cached `py_function` pipeline waits far less per step than epoch 1.
#
# </details>

# %%
cached_slow = base().map(py_map).cache().batch(BATCH).with_options(NO_INJECTED_PREFETCH)
epoch1_wait, _ = step_split(cached_slow)
epoch2_wait, _ = step_split(cached_slow)
print(f"cached py_function pipeline: epoch 1 wait {epoch1_wait:.1f} ms, epoch 2 wait {epoch2_wait:.1f} ms")
assert epoch2_wait < 0.3 * epoch1_wait, (epoch1_wait, epoch2_wait)

# %%
# alt: Left: stacked bars of milliseconds per step for each pipeline, time spent waiting for input in red under the train step in blue. Right: cores used (CPU time over wall time) for each parallel map, with a dashed line at one core, the GIL's cap, and a dotted line at the runner's two cores.
import matplotlib.pyplot as plt

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 2]})
names = list(split)
waits = [split[n][0] for n in names]
computes = [split[n][1] for n in names]
left.bar(names, waits, label="waiting for input", color="tab:red")
left.bar(names, computes, bottom=waits, label="train step (device)", color="tab:blue")
left.set_ylabel("ms per step")
left.set_title("Step time split: where each step goes")
left.tick_params(axis="x", labelrotation=15)
left.legend()

labels_ = [f"{n}\n{c} call{'s' if c > 1 else ''}" for (n, c) in scaling]
right.bar(labels_, [cores for _, cores in scaling.values()],
          color=["tab:orange", "tab:orange", "tab:green", "tab:green"])
right.axhline(1.0, color="grey", linestyle="--", linewidth=1, label="one core (GIL cap)")
right.axhline(2.0, color="black", linestyle=":", linewidth=1, label="cores on this runner")
right.set_ylim(0, 2.3)
right.legend(loc="upper right", fontsize=8)
right.set_ylabel("cores used (CPU time / wall time)")
right.set_title("Parallel map: cores used per pipeline")
fig.tight_layout()
plt.show()

# %% [markdown]
# The right panel is measured on a shared 2-core machine: native calls can only go above one core when
# the second core is free, so their bar varies from run to run; the Python bars cannot pass one core
# however free the machine is.
#
# <h2 id="prevent">How to prevent it</h2>
#
# - **A metric**: export the input-wait fraction per step (`wait / (wait + compute)`) from the training loop,
#   or read it from the profiler's input-pipeline analyzer; alert above ~10 %.
# - **A test**: a CI benchmark that runs a few hundred steps of the real pipeline against a stub model and
#   asserts a wide-margin bound on the wait fraction.
# - **A review rule**: `tf.py_function` / `tf.numpy_function` in an input pipeline needs a reason; vectorise
#   after `batch`; `prefetch(AUTOTUNE)` last. See also the best practice
#   [Order the tf.data pipeline](../../best-practices/tf-data-pipeline-order/).
