"""How much host memory a tf.data prefetch buffer holds, per pipeline setting.

Run as a program, it sets TF_ENABLE_ONEDNN_OPTS=1 unless its environment sets it: TensorFlow then uses oneDNN's CPU allocator,
which keeps the statistics tf.config.experimental.get_memory_info("CPU:0") reports, on any x86 CPU
(oneDNN is on by default only on CPUs with VNNI, BF16 or AMX; elsewhere the default allocator has no
statistics). TF_CPU_ALLOCATOR_USE_BFC=1 also gives statistics, but counts whole allocator chunks.
It runs every drive in DRIVES, in order, and prints one JSON line per drive on stdout:
{"drive": name, "result": ...}. On stderr, `-- start NAME` and `-- end NAME` bracket
what TensorFlow's C++ runtime logged during each drive. Nothing is written to disk.
"""

import json
import os
import sys
import time

if __name__ == "__main__":                      # before TensorFlow starts: oneDNN's allocator keeps statistics
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

import psutil  # noqa: E402
import tensorflow as tf  # noqa: E402

# --8<-- [start:pipeline]
SHAPE = (256, 256)                              # one element: 256 x 256 float32 = 256 KiB
ELEMENT_BYTES = 256 * 256 * 4

produced = 0                                    # elements the source has produced: the work, counted


def tick(index):
    """Stand-in for reading and decoding one record: counts it and takes 1 ms."""
    global produced
    produced += 1
    time.sleep(0.001)
    return index


def decode(index):
    index = tf.ensure_shape(tf.numpy_function(tick, [index], tf.int64), [])
    return tf.fill(SHAPE, tf.cast(index, tf.float32))     # a 256 KiB tensor from TensorFlow's allocator


def source():
    """An endless stream of 256 KiB elements, each one counted when it is produced."""
    return tf.data.Dataset.range(2**40).map(decode)


def with_options(dataset, ram_budget=None, inject_prefetch=None, autotune=None):
    options = tf.data.Options()
    if ram_budget is not None:
        options.autotune.ram_budget = ram_budget
    if inject_prefetch is not None:
        options.experimental_optimization.inject_prefetch = inject_prefetch
    if autotune is not None:
        options.autotune.enabled = autotune
    return dataset.with_options(options)


def allocated():
    """Bytes TensorFlow's CPU allocator holds right now (needs allocator stats: see the docstring)."""
    return tf.config.experimental.get_memory_info("CPU:0")["current"]


def wait_until_idle(consumed):
    """Wait until the producer stops (its buffer is full); return the elements produced ahead.
    The quiet window is long (0.5 s) so that a producer thread descheduled on a busy machine is not
    taken for a full buffer; one element may still be in flight (counted, not yet allocated)."""
    last, quiet = -1, 0
    while quiet < 20:                           # 20 x 25 ms without a new element
        time.sleep(0.025)
        quiet, last = (quiet + 1, last) if produced == last else (0, produced)
    return produced - consumed


def drive(dataset, cycles=8, stop_above=None, on_cycle=None):
    """A bursty consumer: pause until the pipeline is idle (a checkpoint, an evaluation), then read as
    fast as possible until it has caught up with the producer (the buffer is empty), plus 3 more
    elements (the next steps). Returns [(elements buffered, allocator bytes above the start)] per pause."""
    global produced
    produced, start = 0, allocated()
    iterator, consumed, cycles_seen = iter(dataset), 0, []
    next(iterator)
    consumed += 1
    for _ in range(cycles):
        buffered = wait_until_idle(consumed)
        cycles_seen.append((buffered, allocated() - start))
        if on_cycle is not None:
            on_cycle(*cycles_seen[-1])
        if stop_above is not None and buffered > stop_above:
            break
        reads = 0
        while consumed < produced and reads < 10 * buffered + 100:   # everything buffered, and what
            next(iterator)                      # the producer adds meanwhile (bounded: never endless)
            consumed, reads = consumed + 1, reads + 1
        for _ in range(3):                      # these 3 find the buffer empty and wait
            next(iterator)
            consumed += 1
    del iterator
    return cycles_seen


DRIVES = {}                                     # name -> a function that runs one drive


def drives(**named):
    DRIVES.update(named)
# --8<-- [end:pipeline]


# --8<-- [start:incident]
process = psutil.Process()
rss_growth_mib = []                             # RSS growth of this process at each pause of "autotuned"


def autotuned():
    """The incident's pipeline, driven until more than 64 elements are buffered (at most 20 pauses),
    after a warm-up drive so that first-iterator costs do not land in the RSS figures."""
    drive(source().prefetch(8), cycles=2)
    rss_before = process.memory_info().rss

    def note_rss(buffered, allocator_bytes):
        rss_growth_mib.append((process.memory_info().rss - rss_before) / 2**20)

    return drive(source().prefetch(tf.data.AUTOTUNE), cycles=20, stop_above=64, on_cycle=note_rss)


drives(autotuned=autotuned, rss_growth_mib=lambda: rss_growth_mib)
# --8<-- [end:incident]

# --8<-- [start:detect]
drives(
    tiny_budget=lambda: drive(with_options(source().prefetch(tf.data.AUTOTUNE), ram_budget=100 * 1024),
                              cycles=3),
    within_budget=lambda: drive(with_options(source().prefetch(tf.data.AUTOTUNE), ram_budget=16 * 2**20),
                                cycles=4),
)
# --8<-- [end:detect]

# --8<-- [start:root-cause]
drives(
    injected=lambda: drive(source(), cycles=20, stop_above=64),           # no .prefetch() in the code
    no_prefetch=lambda: drive(with_options(source(), inject_prefetch=False), cycles=4),
    autotune_off=lambda: drive(with_options(source().prefetch(tf.data.AUTOTUNE), autotune=False),
                               cycles=20, stop_above=64),
)
# --8<-- [end:root-cause]

# --8<-- [start:fix]
BUDGET = 16 * 2**20


def brighten(image):
    return image + 1.0


drives(
    fixed=lambda: drive(source().prefetch(8), cycles=6),
    budgeted=lambda: drive(with_options(source().prefetch(tf.data.AUTOTUNE), ram_budget=BUDGET), cycles=14),
    capped_injected=lambda: drive(with_options(source(), ram_budget=BUDGET), cycles=10),
    capped_autotune_off=lambda: drive(with_options(source().prefetch(tf.data.AUTOTUNE), ram_budget=BUDGET,
                                                   autotune=False), cycles=10),
    capped_two_prefetches=lambda: drive(with_options(source().prefetch(tf.data.AUTOTUNE).map(brighten)
                                                     .prefetch(tf.data.AUTOTUNE), ram_budget=BUDGET), cycles=10),
)
# --8<-- [end:fix]

# --8<-- [start:prevent]
def check_buffer_bounded(dataset, budget_bytes, pauses=16):
    """Raises AssertionError if a bursty consumer makes the pipeline buffer more than budget_bytes
    (one element of slack: an element may be in flight when a pause is read)."""
    start = allocated()
    run = drive(dataset, cycles=pauses, stop_above=budget_bytes // ELEMENT_BYTES)
    peak = max(allocator_bytes for _, allocator_bytes in run)
    assert peak <= budget_bytes + ELEMENT_BYTES, f"buffered {peak:,} bytes, budget {budget_bytes:,}"
    assert allocated() - start < ELEMENT_BYTES, "the buffer outlived its iterator"
    return peak


def outcome(check):
    """What the check did: {"peak": bytes} if it passed, {"failed": message} if it raised."""
    try:
        return {"peak": check()}
    except AssertionError as error:
        return {"failed": str(error)}


drives(
    check_incident=lambda: outcome(lambda: check_buffer_bounded(source().prefetch(tf.data.AUTOTUNE),
                                                                budget_bytes=8 * 2**20)),
    check_fixed=lambda: outcome(lambda: check_buffer_bounded(source().prefetch(8), budget_bytes=8 * 2**20)),
    check_budgeted=lambda: outcome(lambda: check_buffer_bounded(
        with_options(source().prefetch(tf.data.AUTOTUNE), ram_budget=8 * 2**20), budget_bytes=8 * 2**20)),
)
# --8<-- [end:prevent]


if __name__ == "__main__":
    allocated()                                 # raises here, not mid-run, if the allocator has no stats
    drive(source().prefetch(tf.data.AUTOTUNE), cycles=1)   # lines a first iterator logs land before the marks
    for name, run in DRIVES.items():
        print(f"-- start {name}", file=sys.stderr, flush=True)
        result = run()
        print(f"-- end {name}", file=sys.stderr, flush=True)
        print(json.dumps({"drive": name, "result": result}), flush=True)
