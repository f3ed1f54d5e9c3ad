"""Locate the first layer where a LiteRT (TFLite) file stops agreeing with its Keras model.

Run with no arguments: trains the small model of the page, converts it, checks that the correct file agrees
at every stage and that a file converted without its preprocessing layer is located at that layer, exits 0.
"""

# --8<-- [start:model]
import re
import warnings

import keras
import numpy as np
import tensorflow as tf

# Eight sensor readings; all of them follow one hidden factor, so they are strongly correlated.
MEANS = np.array([50, 40, 35, 60, 30, 45, 80, 40], "float32")
STDS = np.array([8, 6, 5, 10, 4, 7, 12, 6], "float32")


def make_data(rng, n):
    """Raw readings, and the quantity to estimate (a wear index that follows the hidden factor)."""
    factor = rng.normal(size=(n, 1))
    z = factor + 0.3 * rng.normal(size=(n, 8))
    return (MEANS + STDS * z).astype("float32"), (50 + 10 * z.mean(axis=1)).astype("float32")


def build(x_train):
    """The trained model takes raw readings; `core` is the same layers without the scaler."""
    scale = keras.layers.Normalization(name="scale")
    scale.adapt(x_train)
    hidden1 = keras.layers.Dense(32, activation="relu", name="hidden1")
    hidden2 = keras.layers.Dense(32, activation="relu", name="hidden2")
    estimate = keras.layers.Dense(1, name="estimate")
    raw = keras.Input((8,), name="features")
    model = keras.Model(raw, estimate(hidden2(hidden1(scale(raw)))), name="sensor")
    scaled = keras.Input((8,), name="features")
    core = keras.Model(scaled, estimate(hidden2(hidden1(scaled))), name="core")
    return model, core
# --8<-- [end:model]


# --8<-- [start:locate]
STAGES = ["features", "quantized features", "scale", "hidden1", "hidden2", "estimate"]


def keras_stages(model, x):
    """The golden record: the model's input and every layer's output, by layer name. Keras quantises
    nothing, so the ideal "quantized features" are the features themselves."""
    layers = [layer for layer in model.layers if not isinstance(layer, keras.layers.InputLayer)]
    probe = keras.Model(model.input, [layer.output for layer in layers])
    with tf.device("/CPU:0"):            # on the interpreter's device
        outputs = probe(x, training=False)
    stages = {layer.name: np.asarray(out) for layer, out in zip(layers, outputs, strict=True)}
    return {"features": np.asarray(x), "quantized features": np.asarray(x), **stages}


def debug_interpreter(flatbuffer):
    """An interpreter that keeps every intermediate tensor, without the default (XNNPACK) delegate."""
    with warnings.catch_warnings():
        # TF 2.21's tf.lite.Interpreter warns that it moves to LiteRT (asserted on the conversion page)
        warnings.filterwarnings("ignore", message=".*tf.lite.Interpreter is deprecated", category=UserWarning)
        return tf.lite.Interpreter(
            model_content=flatbuffer, experimental_preserve_all_tensors=True,
            experimental_op_resolver_type=tf.lite.experimental.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)


def as_float(interp, index, details):
    """A tensor's values in real units: integer tensors are dequantised with their scale and zero point."""
    value = interp.get_tensor(index)
    scale, zero_point = details[index]["quantization"]
    if np.issubdtype(value.dtype, np.integer) and scale:
        return (value.astype("float32") - zero_point) * scale
    return value.astype("float32")


def litert_stages(flatbuffer, x):
    """Run the file on x and read every stage back from the interpreter:
    - "features": the input tensor, as the caller filled it;
    - "quantized features": what the first op made of it, if that op is a QUANTIZE (else the input);
    - each layer: the last tensor written by an op in that layer's name scope;
    - the last stage: the signature's output tensor (it carries the signature's name, not the layer's)."""
    interp = debug_interpreter(flatbuffer)
    interp.get_signature_runner("serving_default")(features=x)
    details = {t["index"]: t for t in interp.get_tensor_details()}
    ops = interp._get_ops_details()                                   # private API: ops in execution order
    written = [int(i) for op in ops for i in op["outputs"]]
    found = {"features": as_float(interp, interp.get_input_details()[0]["index"], details)}
    found["quantized features"] = (as_float(interp, int(ops[0]["outputs"][0]), details)
                                   if ops[0]["op_name"] == "QUANTIZE" else found["features"])
    for stage in STAGES[2:-1]:
        scope = re.compile(rf"(^|/){stage}(_\d+)?/")
        mine = [i for i in written if scope.search(details[i]["name"])]
        if mine:
            found[stage] = as_float(interp, mine[-1], details)
    found[STAGES[-1]] = as_float(interp, interp.get_output_details()[0]["index"], details)
    return found


def first_divergence(found, golden, tolerance):
    """Relative error of every stage (largest difference over the golden stage's largest value),
    and the first stage that is missing from the file or over the tolerance (None: they agree)."""
    errors = {stage: float(np.max(np.abs(found[stage] - golden[stage])) / np.max(np.abs(golden[stage])))
              for stage in STAGES if stage in found}
    first = next((stage for stage in STAGES if stage not in errors or errors[stage] > tolerance), None)
    return first, errors
# --8<-- [end:locate]


if __name__ == "__main__":
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x_train, y_train = make_data(rng, 1024)
    model, core = build(x_train)
    model.compile(keras.optimizers.Adam(3e-3), "mse")
    model.fit(x_train, y_train, epochs=2, batch_size=64, verbose=0)
    x = make_data(rng, 16)[0]
    golden = keras_stages(model, x)
    good = litert_stages(tf.lite.TFLiteConverter.from_keras_model(model).convert(), x)
    assert first_divergence(good, golden, 1e-5)[0] is None, first_divergence(good, golden, 1e-5)
    no_scaler = litert_stages(tf.lite.TFLiteConverter.from_keras_model(core).convert(), x)
    assert first_divergence(no_scaler, golden, 1e-5)[0] == "scale", first_divergence(no_scaler, golden, 1e-5)
    print("ok")
