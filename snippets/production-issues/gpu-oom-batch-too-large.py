"""A training step whose batch does not fit its device's memory, and the two fixes that make it fit.

    python snippets/production-issues/gpu-oom-batch-too-large.py                       # CPU, 256 MiB cap
    python snippets/production-issues/gpu-oom-batch-too-large.py '{"device": "gpu", "cap_mb": 1024}'
    python snippets/production-issues/gpu-oom-batch-too-large.py '{"mode": "measure"}'

The program caps the allocator before TensorFlow starts: on the CPU through TF_MKL_ALLOC_MAX_BYTES (the
limit of the oneDNN CPU allocator, "mklcpu", read when that allocator is created), on a GPU with a logical
device of memory_limit=cap_mb. It measures one training step at a batch that fits, picks a batch that needs
about 1.3 times the cap, runs it (the out-of-memory error), then runs the same samples with gradient
accumulation and with recomputed segments, and prints what happened as JSON on its last line.

With {"mode": "measure"} it sets no cap and prints instead every allocator figure the page reads on CPU:0
(measure()). The CPU allocator keeps statistics only when oneDNN is on, so a CPU run sets TF_ENABLE_ONEDNN_OPTS=1
(and hides any GPU) unless its environment sets them.
"""

import json
import os
import re
import sys

if __name__ == "__main__":  # the cap must exist before TensorFlow creates its allocators
    CONFIG = {"device": "cpu", "cap_mb": 256, **json.loads(sys.argv[1] if len(sys.argv) > 1 else "{}")}
    MODE = CONFIG.pop("mode", "probe")
    if CONFIG["device"] == "cpu":
        os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")     # the mklcpu allocator: statistics and the cap
        os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")
    if CONFIG["device"] == "cpu" and MODE == "probe":
        os.environ["TF_MKL_ALLOC_MAX_BYTES"] = str(CONFIG["cap_mb"] * 2**20)

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

# --8<-- [start:model]
SEQ, FEATURES, DEPTH = 256, 64, 16       # a deep, narrow model: tiny weights, large activations


class Segment(keras.layers.Layer):
    """A few Dense+ReLU layers. With recompute=True the backward pass keeps only the segment's input and
    runs the segment again (tf.recompute_grad) instead of keeping every layer's output."""

    def __init__(self, layers, recompute=False, **kwargs):
        super().__init__(**kwargs)
        self.recompute = recompute
        self.inner = [keras.layers.Dense(FEATURES, activation="relu") for _ in range(layers)]
        self.forward_runs = 0            # Python-side count of segment runs (meaningful when eager)

    def build(self, input_shape):
        for layer in self.inner:
            layer.build(input_shape)     # Dense(FEATURES) keeps the shape

    def run(self, h):
        self.forward_runs += 1
        for layer in self.inner:
            h = layer(h)
        return h

    def call(self, x):
        return tf.recompute_grad(self.run)(x) if self.recompute else self.run(x)


def make_model(segment=4, recompute=False, depth=DEPTH, optimizer=None, device="CPU:0"):
    """DEPTH Dense+ReLU layers over [batch, SEQ, FEATURES], in segments of `segment` layers, then a head."""
    keras.utils.set_random_seed(0)
    with tf.device(device):              # the variables live on the device that trains
        inputs = keras.Input((SEQ, FEATURES))
        h = inputs
        for _ in range(depth // segment):
            h = Segment(segment, recompute)(h)
        outputs = keras.layers.Dense(1)(keras.layers.GlobalAveragePooling1D()(h))
        model = keras.Model(inputs, outputs)
    model.compile(optimizer=optimizer or keras.optimizers.SGD(0.01), loss="mse",
                  jit_compile=False)    # the same graph on CPU and GPU ("auto" may pick XLA on a GPU)
    return model


def make_batch(batch, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(batch, SEQ, FEATURES)).astype("float32"),
            rng.normal(size=(batch, 1)).astype("float32"))
# --8<-- [end:model]


# --8<-- [start:peak]
def step_peak(model, x, y, device="CPU:0", micro_batch=None):
    """Peak bytes TensorFlow's allocator on `device` held above its level before one training step of
    (x, y), as consecutive train_on_batch calls of `micro_batch` samples (default: the whole batch).
    The step is run once first, so tracing and variable creation are not counted."""
    micro_batch = micro_batch or len(x)
    with tf.device(device):
        parts = [(tf.constant(x[i:i + micro_batch]), tf.constant(y[i:i + micro_batch]))
                 for i in range(0, len(x), micro_batch)]
        for part in parts:
            model.train_on_batch(*part)
        tf.config.experimental.reset_memory_stats(device)
        before = tf.config.experimental.get_memory_info(device)["current"]
        for part in parts:
            model.train_on_batch(*part)
        return tf.config.experimental.get_memory_info(device)["peak"] - before
# --8<-- [end:peak]


# --8<-- [start:probe]
OOM = re.compile(r"OOM when allocating tensor with shape\[[\d,]*\] and type \w+ on \S+ by allocator \w+")


def attempt(run):
    """'ok', or the OOM line of the ResourceExhaustedError that run() raised."""
    try:
        run()
        return "ok"
    except tf.errors.ResourceExhaustedError as error:
        return OOM.search(str(error)).group(0)


def probe(device="cpu", cap_mb=256, accumulation=8, segment=4):
    dev = "GPU:0" if device == "gpu" else "CPU:0"
    if device == "gpu":
        gpu = tf.config.list_physical_devices("GPU")[0]
        tf.config.set_logical_device_configuration(gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=cap_mb)])
    report = {"device": dev, "cap_mb": cap_mb}

    sizing = make_model(device=dev)
    small_x, small_y = make_batch(32)
    peak_16, peak_32 = (step_peak(sizing, small_x[:n], small_y[:n], dev) for n in (16, 32))
    report["linear_ratio"] = peak_32 / peak_16                   # 2.0 when the step peak is proportional to the batch
    report["per_sample_mb"] = peak_32 / 32 / 2**20
    big = int(1.3 * cap_mb / report["per_sample_mb"]) // accumulation * accumulation   # needs ~1.3 times the cap
    x, y = make_batch(big)
    report["batch"], report["input_mb"] = big, x.nbytes / 2**20

    results = {}

    def measured(name, model, micro_batch=None):
        results[f"{name}_mb"] = step_peak(model, x, y, dev, micro_batch) / 2**20

    results["plain"] = attempt(lambda: measured("plain", make_model(segment, device=dev)))
    accumulating = make_model(segment, device=dev,
                              optimizer=keras.optimizers.SGD(0.01, gradient_accumulation_steps=accumulation))
    results["accumulation"] = attempt(lambda: measured("accumulation", accumulating, big // accumulation))
    results["recompute"] = attempt(lambda: measured("recompute", make_model(segment, recompute=True, device=dev)))
    report.update(results)
    return report
# --8<-- [end:probe]


# --8<-- [start:detect]
def bytes_held_by(make_tensor, device="CPU:0"):
    """How many bytes the allocator of `device` holds more while the tensor make_tensor() returns lives."""
    before = tf.config.experimental.get_memory_info(device)["current"]
    with tf.device(device):
        tensor = make_tensor()
    held = tf.config.experimental.get_memory_info(device)["current"] - before
    del tensor
    return held
# --8<-- [end:detect]


# --8<-- [start:prevent]
def assert_step_fits(model, x, y, budget_bytes, micro_batch=None):
    peak = step_peak(model, x, y, micro_batch=micro_batch)
    assert peak < 0.8 * budget_bytes, f"step peak {peak / 2**20:.0f} MiB > 80% of {budget_bytes / 2**20:.0f} MiB"


class PeakMemory(keras.callbacks.Callback):
    """Logs the allocator's peak bytes of each epoch as `peak_memory_mb`."""

    def __init__(self, device="CPU:0"):
        super().__init__()
        self.device = device

    def on_epoch_begin(self, epoch, logs=None):
        tf.config.experimental.reset_memory_stats(self.device)

    def on_epoch_end(self, epoch, logs=None):
        logs["peak_memory_mb"] = tf.config.experimental.get_memory_info(self.device)["peak"] / 2**20
# --8<-- [end:prevent]


# --8<-- [start:measure]
def budget_error(model, x, y, budget_bytes, micro_batch=None):
    """None when the step fits the budget, else the AssertionError's message."""
    try:
        assert_step_fits(model, x, y, budget_bytes, micro_batch)
        return None
    except AssertionError as error:
        return str(error)


def measure():
    """Every allocator figure of the page, all on CPU:0, in this one process (oneDNN on, no cap)."""
    figures = {"held": bytes_held_by(lambda: tf.zeros([256, 1024]))}       # 1 MiB of float32
    plain = make_model()
    x, y = make_batch(64)
    figures["peaks"] = {str(batch): step_peak(plain, x[:batch], y[:batch]) for batch in (8, 16, 32, 64)}
    accumulating = make_model(optimizer=keras.optimizers.SGD(0.01, gradient_accumulation_steps=4))
    figures["accumulated_peak"] = step_peak(accumulating, x, y, micro_batch=16)      # 64 samples as 4 x 16
    figures["recomputed_peaks"] = {str(segment): step_peak(make_model(segment=segment, recompute=True), x, y)
                                   for segment in (1, 4, 16)}
    with keras.RematScope(mode="activations"):
        remat_activations = make_model()
    figures["activations_peak"] = step_peak(remat_activations, x, y)
    figures["budget_plain"] = budget_error(plain, x, y, 64 * 2**20)
    figures["budget_accumulating"] = budget_error(accumulating, x, y, 64 * 2**20, micro_batch=16)
    with tf.device("CPU:0"):
        history = make_model().fit(x, y, batch_size=32, epochs=2, verbose=0, callbacks=[PeakMemory()])
    figures["epoch_peaks_mb"] = history.history["peak_memory_mb"]
    return figures
# --8<-- [end:measure]


if __name__ == "__main__" and MODE == "measure":
    print(json.dumps(measure()))
elif __name__ == "__main__":
    outcome = probe(**CONFIG)
    assert outcome["plain"].startswith("OOM when allocating tensor"), outcome
    assert outcome["accumulation"] == "ok" and outcome["recompute"] == "ok", outcome
    print(json.dumps(outcome))
