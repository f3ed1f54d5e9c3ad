"""What a tf.data shuffle buffer costs: resident memory and time to the first element.

Run with no arguments: writes 16 small TFRecord shards into the current folder (if missing), measures a
default list of pipelines in this fresh process and prints one JSON line per pipeline.
`python this.py '[["decode_then_shuffle", 250, 1.0], ...]'` measures the given
(kind, buffer_size, decode_wait_ms) triples instead, in the order given.
"""

import ctypes
import gc
import json
import os
import sys
import time

import numpy as np
import psutil
import tensorflow as tf

# --8<-- [start:pipelines]
RECORDS, SHARDS, CLASSES = 4000, 16, 8
IMAGE_SHAPE = (32, 32, 32)                      # one decoded example: 32*32*32 float32 = 128 KiB


def write_shards(folder="."):
    """RECORDS small tf.train.Examples (index, label) in SHARDS files, written in label order."""
    per_shard = RECORDS // SHARDS
    for shard in range(SHARDS):
        path = os.path.join(folder, f"train-{shard:02d}-of-{SHARDS:02d}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for i in range(shard * per_shard, (shard + 1) * per_shard):
                feature = {"index": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
                           "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i * CLASSES // RECORDS]))}
                writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())


SPEC = {"index": tf.io.FixedLenFeature([], tf.int64), "label": tf.io.FixedLenFeature([], tf.int64)}


decodes = 0                                     # calls of the stand-in decoder: the work, counted


def decoder(wait_ms):
    """Stand-in for image decoding: waits `wait_ms` and returns a 128 KiB float32 tensor for a record
    index. Each call adds 1 to `decodes`, so the work a pipeline does is counted, not timed."""
    def work(index):
        global decodes
        decodes += 1
        time.sleep(wait_ms / 1000)
        return np.full(IMAGE_SHAPE, index, np.float32)

    def decode(index):
        return tf.ensure_shape(tf.numpy_function(work, [index], tf.float32), IMAGE_SHAPE)
    return decode


def pipeline(kind, buffer_size, wait_ms=0.0, folder=".", seed=0):
    decode = decoder(wait_ms)
    if kind == "no_shuffle":
        return tf.data.Dataset.range(RECORDS).map(decode)
    if kind == "decode_then_shuffle":              # the incident: the buffer holds decoded tensors
        return tf.data.Dataset.range(RECORDS).map(decode).shuffle(buffer_size, seed=seed)
    if kind == "shuffle_then_decode":              # the buffer holds int64 indices
        return tf.data.Dataset.range(RECORDS).shuffle(buffer_size, seed=seed).map(decode)
    if kind == "sharded":                          # shuffle shard order, read 16 shards at once, small buffer
        files = tf.data.Dataset.list_files(os.path.join(folder, "train-*.tfrecord"), shuffle=True, seed=seed)
        records = files.interleave(tf.data.TFRecordDataset, cycle_length=16, block_length=1)
        records = records.shuffle(buffer_size, seed=seed)
        return records.map(lambda r: decode(tf.io.parse_single_example(r, SPEC)["index"]))
    if kind == "huge_buffer_tiny_data":            # shuffle(10_000_000) "to be safe" on 100 elements
        return tf.data.Dataset.range(100).shuffle(buffer_size, seed=seed)
    if kind == "indices":                          # a whole-dataset shuffle of buffer_size int64 indices
        return tf.data.Dataset.range(buffer_size).shuffle(buffer_size, seed=seed)
    if kind == "index_pairs":                      # the same with two int64 scalars per element
        indices = tf.data.Dataset.range(buffer_size)
        return tf.data.Dataset.zip(indices, indices).shuffle(buffer_size, seed=seed)
    raise ValueError(f"unknown pipeline kind {kind!r}")
# --8<-- [end:pipelines]


# --8<-- [start:measure]
class _MallInfo2(ctypes.Structure):                # glibc's allocator statistics (struct mallinfo2)
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]


def heap_in_use():
    """Bytes the program holds from malloc (glibc >= 2.33), or None with another C library."""
    try:
        mallinfo2 = ctypes.CDLL("libc.so.6").mallinfo2
    except (OSError, AttributeError):
        return None
    mallinfo2.restype = _MallInfo2
    info = mallinfo2()
    return info.uordblks + info.hblkhd             # small chunks in use + mmapped chunks


def release_freed_memory():
    """Collect garbage and hand freed heap pages back to the OS (glibc's malloc_trim), so that the next
    measurement does not reuse memory an earlier pipeline left resident."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):              # not glibc: measurements are only less exact
        pass


# By default tf.data adds a prefetch at the end of a pipeline whose last transformation is synchronous
# (`inject_prefetch`), and it runs ahead of the consumer; without it the decode counts below are exact.
EXACT_COUNTS = tf.data.Options()
EXACT_COUNTS.experimental_optimization.inject_prefetch = False


def measure(kind, buffer_size, wait_ms=0.0, steady_elements=50):
    """Resident-memory growth once the first element is out (the buffer is full by then), the decodes
    done before that first element and per later element, and the times (shown, not asserted)."""
    process = psutil.Process()
    release_freed_memory()
    before, heap_before = process.memory_info().rss, heap_in_use()
    iterator = iter(pipeline(kind, buffer_size, wait_ms).with_options(EXACT_COUNTS))
    decodes_at_start = decodes
    start = time.perf_counter()
    next(iterator)
    first_s = time.perf_counter() - start
    growth = process.memory_info().rss - before
    decodes_at_first = decodes
    start = time.perf_counter()
    for _ in range(steady_elements):
        next(iterator, None)
    per_element_s = (time.perf_counter() - start) / steady_elements
    del iterator
    gc.collect()
    still_resident = process.memory_info().rss - before         # the buffer is freed: what stays resident
    still_held = None if heap_before is None else heap_in_use() - heap_before    # what malloc still hands out
    release_freed_memory()
    return {"kind": kind, "buffer_size": buffer_size, "rss_growth_mib": growth / 2**20,
            "rss_after_free_mib": still_resident / 2**20,
            "heap_in_use_after_free_mib": None if still_held is None else still_held / 2**20,
            "decodes_before_first": decodes_at_first - decodes_at_start,
            "decodes_per_later_element": (decodes - decodes_at_first) / steady_elements,
            "first_element_s": first_s, "per_element_s": per_element_s}
# --8<-- [end:measure]


DEFAULT = [
    ["no_shuffle", 0, 1.0],                        # warm-up: first-iterator costs land here
    ["indices", 200_000, 0.0],                     # small elements first, in a heap nothing has used yet
    ["index_pairs", 200_000, 0.0],
    ["huge_buffer_tiny_data", 10_000_000, 0.0],
    ["huge_buffer_tiny_data", 1_000_000, 0.0],
    ["huge_buffer_tiny_data", 100, 0.0],           # the same data, buffer clamped to its size
    ["shuffle_then_decode", 1000, 1.0],
    ["sharded", 64, 1.0],
    ["decode_then_shuffle", 250, 1.0],             # growing buffers last, in ascending order
    ["decode_then_shuffle", 1000, 1.0],
]

if __name__ == "__main__":
    if not os.path.exists(f"train-00-of-{SHARDS:02d}.tfrecord"):
        write_shards()
    for config in json.loads(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT:
        print(json.dumps(measure(*config)), flush=True)
