# ---
# description: "Interleave, shuffle, map, batch, prefetch — with batch-before-map vectorisation and cache placement measured."
# tags: [medium, tf.data, performance]
# ---

# %% [markdown]
# # Order the tf.data pipeline
#
# <h2 id="rule">The rule</h2>
#
# Read files → **interleave** (parallel) → **shuffle** → **map** (parallel) → **batch** → **prefetch**, with two
# refinements:
#
# - If the per-element function can work on a batch, **batch first, then map** with the vectorised function:
#   one call per batch instead of one per element.
# - **Cache** after the expensive *deterministic* work and **before** anything random (shuffle,
#   augmentation); a cache placed after a random step replays the same "random" values every epoch.
#
# Shuffling after batching only permutes whole batches, and a prefetch overlaps only the work placed before
# it: with tf.data's automatic prefetch injection off, work placed after the prefetch runs only when the
# training loop asks for the next element, so it does not overlap with the training step. In TF 2.21 the
# injection is on by default and adds a second prefetch after such work, which hides the mistake (all measured
# below). The official guide,
# [Better performance with the tf.data API](https://www.tensorflow.org/guide/data_performance), covers the
# same transformations; below each rule is measured or asserted on this machine.

# %%
import os
import tempfile
import time

import numpy as np
import tensorflow as tf

tf.random.set_seed(0)
AUTOTUNE = tf.data.AUTOTUNE
workdir = tempfile.mkdtemp()


def write_shards(n_files=4, per_file=256):
    paths = []
    for f in range(n_files):
        path = os.path.join(workdir, f"train-{f:02d}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for i in range(per_file):
                value = f * per_file + i
                example = tf.train.Example(features=tf.train.Features(feature={
                    "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[value])),
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=[value / 1000.0] * 8)),
                }))
                writer.write(example.SerializeToString())
        paths.append(path)
    return paths


FILES = write_shards()
N = 4 * 256
SPEC = {"id": tf.io.FixedLenFeature([], tf.int64), "x": tf.io.FixedLenFeature([8], tf.float32)}

# %% [markdown]
# <h2 id="evidence">Evidence (executed)</h2>
#
# **The recommended order**, end to end. One epoch yields every record exactly once, in full batches,
# in a shuffled order. The parse runs *after* batching with `tf.io.parse_example`, the vectorised parser.

# %%
def pipeline(files, batch_size=32, seed=0):
    return (tf.data.Dataset.from_tensor_slices(files)
            .shuffle(len(files), seed=seed)                                  # file order
            .interleave(tf.data.TFRecordDataset, cycle_length=2,
                        num_parallel_calls=AUTOTUNE)                         # read shards in parallel
            .shuffle(512, seed=seed)                                         # element order
            .batch(batch_size, drop_remainder=True)
            .map(lambda records: tf.io.parse_example(records, SPEC),
                 num_parallel_calls=AUTOTUNE)                                # vectorised parse per batch
            .prefetch(AUTOTUNE))                                             # last: overlap with the step


epoch = list(pipeline(FILES))
ids = np.concatenate([b["id"].numpy() for b in epoch])
assert len(epoch) == N // 32 and all(b["x"].shape == (32, 8) for b in epoch), len(epoch)
assert sorted(ids.tolist()) == list(range(N)), "every record exactly once"
assert ids.tolist() != list(range(N)), "and shuffled"

# %% [markdown]
# **Batch, then map (vectorised)** against map-then-batch with the same arithmetic. Same values, one
# function call per batch instead of one per element:

# %%
def normalise(x):
    return (tf.cast(x, tf.float32) - 500.0) / 300.0


numbers = tf.data.Dataset.range(5_000)
per_element = numbers.map(normalise).batch(256)
vectorised = numbers.batch(256).map(normalise)


def epoch_seconds(ds, repeats=3):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in ds:
            pass
        best = min(best, time.perf_counter() - start)
    return best


for a, b in zip(per_element, vectorised, strict=True):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
t_per_element = epoch_seconds(per_element)
t_vectorised = epoch_seconds(vectorised)
print(f"map then batch {t_per_element * 1e3:.0f} ms, batch then map {t_vectorised * 1e3:.0f} ms")
assert t_per_element > 2 * t_vectorised, (t_per_element, t_vectorised)

# %% [markdown]
# **Cache after the expensive deterministic step.** The stand-in for expensive decoding waits 2 ms per
# element (a wait, so the result does not depend on how busy the machine is). The first epoch pays for
# it; later epochs read from the cache:

# %%
def slow_decode(i):
    def work(v):
        time.sleep(0.002)
        return np.float32(v) * 2
    return tf.numpy_function(work, [i], tf.float32)


cached = tf.data.Dataset.range(120).map(slow_decode).cache().shuffle(120, seed=1).batch(20)
start = time.perf_counter()
first_epoch = [v for b in cached for v in b.numpy().tolist()]
t_cache_fill = time.perf_counter() - start
start = time.perf_counter()
second_epoch = [v for b in cached for v in b.numpy().tolist()]
t_cache_hit = time.perf_counter() - start
print(f"epoch 1 (fills the cache) {t_cache_fill * 1e3:.0f} ms, epoch 2 (from cache) {t_cache_hit * 1e3:.0f} ms")
assert t_cache_fill > 3 * t_cache_hit, (t_cache_fill, t_cache_hit)
assert sorted(first_epoch) == sorted(second_epoch) and first_epoch != second_epoch, "shuffle after cache reshuffles"

# %% [markdown]
# <h2 id="anti-pattern">The anti-pattern (executed)</h2>
#
# **A cache after a random step freezes it.** Random augmentation placed *before* `cache()` runs once, and
# every later epoch replays the same "random" values:

# %%
def augment(x):
    return tf.cast(x, tf.float32) + tf.random.uniform([], -1.0, 1.0)


frozen = tf.data.Dataset.range(8).map(augment).cache()        # wrong: random step before the cache
frozen_1, frozen_2 = [v.numpy() for v in frozen], [v.numpy() for v in frozen]
assert np.array_equal(frozen_1, frozen_2), "cached augmentation repeats exactly"

# %% [markdown]
# **A trap found while verifying this page.** Moving the augmentation after the cache is not enough when a
# global seed is set (`tf.random.set_seed`, or `keras.utils.set_random_seed`, which this notebook and most
# reproducible training scripts call): the stateful `tf.random.uniform` op inside `map` gets a fixed seed,
# and every *new iterator* — one per `for` loop over the dataset — restarts its sequence. The augmentation
# repeats exactly each epoch. A `tf.random.Generator` keeps its state in a variable across iterators and
# does give new values per epoch, still reproducibly from its seed:

# %%
after_cache = tf.data.Dataset.range(8).cache().map(augment)   # global seed set: same values per iterator
after_1, after_2 = [v.numpy() for v in after_cache], [v.numpy() for v in after_cache]
assert np.array_equal(after_1, after_2), "observed on TF 2.21: a seeded stateful op restarts per iterator"

generator = tf.random.Generator.from_seed(42)
fresh = tf.data.Dataset.range(8).cache().map(
    lambda x: tf.cast(x, tf.float32) + generator.uniform([], -1.0, 1.0))
fresh_1, fresh_2 = [v.numpy() for v in fresh], [v.numpy() for v in fresh]
assert not np.array_equal(fresh_1, fresh_2), "a Generator's state carries over: new values each epoch"

# %% [markdown]
# `model.fit` starts a new iterator every epoch as well, so the trap reaches Keras training. Recorded from
# inside the pipeline during a two-epoch `fit`:

# %%
import keras

seen = []


def record(v):
    seen.append(float(v))
    return v


def augment_and_record(x):
    x = tf.py_function(record, [augment(x)], tf.float32)
    x.set_shape([])
    return tf.reshape(x, [1]), tf.reshape(x, [1])


tiny = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
tiny.compile(optimizer="sgd", loss="mse")
tiny.fit(tf.data.Dataset.range(4).cache().map(augment_and_record).batch(4), epochs=2, shuffle=False, verbose=0)
assert len(seen) == 8 and seen[:4] == seen[4:], seen   # epoch 2 saw exactly epoch 1's "random" values

# %% [markdown]
# **Shuffle after batch only permutes batches.** The batches keep their members every epoch, so the model
# sees the same groups of examples in a different order:

# %%
late_shuffle = tf.data.Dataset.range(64).batch(8).shuffle(8, seed=3)
early_shuffle = tf.data.Dataset.range(64).shuffle(64, seed=3).batch(8)


def batch_sets(ds):
    return {frozenset(b.numpy().tolist()) for b in ds}


assert batch_sets(late_shuffle) == batch_sets(late_shuffle) == {frozenset(range(i, i + 8)) for i in range(0, 64, 8)}
assert batch_sets(early_shuffle) != batch_sets(early_shuffle), "shuffle before batch regroups examples"

# %% [markdown]
# **Prefetch last, or the step waits.** The training step is stood in for by a 20 ms wait (what the host
# does while an accelerator computes) and producing a batch takes about 20 ms. With nothing running ahead the
# two add up; with a prefetch at the end they overlap. Both are checked without a timing threshold. Each
# batch's work records when it starts, and the loop records when it asks for each batch. A pipeline that
# runs ahead starts a batch's work before the loop asks for it; one that does not can only start it after.
# With nothing running ahead, the 15 steps also cannot take less than 15 × (20 + 20) ms, because a sleep
# never ends early. The epoch times are printed.
#
# Found while verifying: in TF 2.21 a pipeline that ends in a synchronous transformation already gets a
# prefetch **injected** by tf.data's default optimisations (`Options().experimental_optimization.inject_prefetch`,
# on by default). So "forgot `prefetch`" costs little today; you see the full cost only when the injection
# is off. The same holds for a slow `map` placed *after* an explicit prefetch: the injection adds a prefetch
# behind it. The explicit `prefetch(AUTOTUNE)` still belongs at the end: it states the intent and does not
# depend on a default.

# %%
STEPS, WAIT = 15, 0.020
work_started = []                     # when the work for each batch began (in tf.data's thread)


def slow_batch(i):
    def work(v):
        work_started.append(time.perf_counter())
        time.sleep(WAIT)
        return v
    return tf.numpy_function(work, [i], tf.int64)


def train(ds, repeats=2):
    """Best epoch time, and per repeat the number of batches whose work began before the loop asked."""
    best, ran_ahead = float("inf"), []
    for _ in range(repeats):
        work_started.clear()
        asked = []
        start = time.perf_counter()
        iterator = iter(ds)
        while True:
            asked.append(time.perf_counter())
            try:
                next(iterator)
            except StopIteration:
                break
            time.sleep(WAIT)          # the "training step"
        best = min(best, time.perf_counter() - start)
        assert len(work_started) == STEPS, work_started
        ran_ahead.append(sum(began < wanted for began, wanted in zip(work_started, asked, strict=False)))  # asked has one more: the final StopIteration
    return best, ran_ahead


no_injection = tf.data.Options()
no_injection.experimental_optimization.inject_prefetch = False

base = tf.data.Dataset.range(STEPS).map(slow_batch)
early = tf.data.Dataset.range(STEPS).prefetch(tf.data.AUTOTUNE).map(slow_batch)   # the slow step after the prefetch
runs = {"no prefetch": train(base.with_options(no_injection)),             # nothing runs ahead
        "injected": train(base),                                           # no prefetch written, one injected
        "prefetch last": train(base.prefetch(tf.data.AUTOTUNE)),           # the rule
        "prefetch before the slow map": train(early.with_options(no_injection)),
        "prefetch before, default injection": train(early)}               # a prefetch is injected after the map
for name, (seconds, ahead) in runs.items():
    print(f"{name:36s} {seconds * 1e3:4.0f} ms, batches started before they were asked for: {ahead} of {STEPS}")
for name in ("no prefetch", "prefetch before the slow map"):               # on demand: work and step add up
    seconds, ahead = runs[name]
    assert ahead == [0, 0], (name, ahead)
    assert seconds >= STEPS * 2 * WAIT, (name, seconds)
for name in ("injected", "prefetch last", "prefetch before, default injection"):   # runs ahead: they overlap
    assert min(runs[name][1]) >= STEPS - 5, (name, runs[name])
(t_no_prefetch, _), (t_default, _), (t_prefetch, _) = runs["no prefetch"], runs["injected"], runs["prefetch last"]
print(f"epoch time without a prefetch / with a prefetch last: {t_no_prefetch / t_prefetch:.2f}x (printed, not asserted)")

# %% [markdown]
# **Predict the output.** `tf.data.Dataset.range(10).batch(4).shuffle(3, seed=0)`: how many batches per
# epoch, and how many elements are in the smallest one?
#
# <details><summary>Answer</summary>
#
# Three batches (`drop_remainder=False` is the default), one of them with two elements — and because the
# shuffle comes after the batch, that short batch can turn up anywhere in the epoch, not only last.
#
# </details>

# %%
drill = [b.numpy().tolist() for b in tf.data.Dataset.range(10).batch(4).shuffle(3, seed=0)]
assert len(drill) == 3 and sorted(len(b) for b in drill) == [2, 4, 4], drill

# %% [markdown]
# <h2 id="follow-ups">Follow-up practice</h2>
#
# **Follow-up: `shuffle` then `repeat`, or `repeat` then `shuffle`?** Shuffle first: each epoch is then a
# complete permutation. Repeating first lets the buffer mix neighbouring epochs, so an element can come
# twice before another has come once.
#
# <details><summary>Answer, checked</summary>
#
# With `shuffle().repeat()` the first ten elements are exactly the ten distinct values; with
# `repeat().shuffle()` (same seed) they are not.
#
# </details>

# %%
epoch_first = [int(v) for v in tf.data.Dataset.range(10).shuffle(10, seed=5).repeat(2)]
blurred = [int(v) for v in tf.data.Dataset.range(10).repeat(2).shuffle(20, seed=5)]
assert sorted(epoch_first[:10]) == list(range(10)), epoch_first
assert sorted(blurred[:10]) != list(range(10)), blurred

# %% [markdown]
# **Follow-up: is a 512-element shuffle buffer enough for four files of 256 records?** It mixes only what
# the interleave has already read. With `cycle_length=2` the first 512 records come from two files, so the
# first batch of an epoch draws almost only from those two (a few records of the next file enter the buffer
# as it drains); global mixing comes from shuffling the *file list* and from the cycle length, not from the
# element buffer alone.
#
# <details><summary>Answer, checked</summary>
#
# At least 28 of the 32 ids in the first batch come from just two of the four files.
#
# </details>

# %%
from collections import Counter

first_batch_ids = next(iter(pipeline(FILES)))["id"].numpy()
per_file = Counter(int(i) // 256 for i in first_batch_ids)
assert sum(n for _, n in per_file.most_common(2)) >= 28, per_file   # nearly all from two of four files

# %%
# alt: Bar chart of wall time in milliseconds for seven tf.data choices, in pairs: map then batch against batch then map, the cache's first and second epoch, and no prefetch, the injected prefetch and a final prefetch; red bars are the worse choice of each pair, green the better.
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(8, 3.8))
groups = ["map → batch", "batch → map", "cache: epoch 1", "cache: epoch 2",
          "no prefetch", "injected\nprefetch", "prefetch last"]
values = np.array([t_per_element, t_vectorised, t_cache_fill, t_cache_hit,
                   t_no_prefetch, t_default, t_prefetch]) * 1e3
colors = ["tab:red", "tab:green"] * 2 + ["tab:red", "tab:olive", "tab:green"]
ax.bar(groups, values, color=colors)
ax.set_ylabel("wall time (ms)")
ax.set_title("tf.data ordering choices, measured (red: worse, green: better)")
ax.tick_params(axis="x", labelrotation=20)
fig.tight_layout()
plt.show()

# %% [markdown]
# <h2 id="checklist">Checklist</h2>
#
# - Files shuffled, then `interleave(..., num_parallel_calls=AUTOTUNE)` for parallel reads.
# - `shuffle` before `batch`, with a buffer large enough to mix files (and a seed when runs must repeat).
# - Vectorisable work after `batch` (`tf.io.parse_example`, arithmetic, image resizing on a batch).
# - `cache()` after expensive deterministic work, before shuffle and augmentation; memory or a file path.
# - Random augmentation in `map` draws from a `tf.random.Generator` (or Keras random layers), not from a
#       seeded `tf.random.uniform`, if each epoch must see new values.
# - `prefetch(AUTOTUNE)` last.
# - Measure each change by epoch time (min of several), not by intuition.
