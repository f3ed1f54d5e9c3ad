"""Four reasons a reloaded Keras model predicts differently, each located against a golden record.

Run with no arguments: trains a small model in a temporary folder, writes the artifacts and the golden
record, reloads them in a fresh Python process, checks that each cause is located and each fix removes it,
then exits 0. `python this.py reload FOLDER` is the fresh process: it prints one JSON line of findings.
"""

# --8<-- [start:model]
import json
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np


@keras.saving.register_keras_serializable(package="reload")
class Calibrate(keras.layers.Layer):
    """Divides the logit by a temperature fitted after training, then applies the sigmoid."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.temperature = 1.0                  # set by the calibration step after training

    def call(self, logit):
        return keras.ops.sigmoid(logit / self.temperature)


@keras.saving.register_keras_serializable(package="reload")
class SavedCalibrate(Calibrate):
    """The same layer with its temperature in get_config, so saving keeps it."""

    def __init__(self, temperature=1.0, **kwargs):
        super().__init__(**kwargs)
        self.temperature = temperature

    def get_config(self):
        return {**super().get_config(), "temperature": self.temperature}


TEMPERATURE = 1.7                               # what the calibration step found


def build_core(activation="relu", calibrate=SavedCalibrate, units=8):
    """The model as the training code defines it: it expects features that are already scaled."""
    inputs = keras.Input((3,), name="scaled")
    x = keras.layers.Dense(units, activation=activation, name="hidden")(inputs)
    x = keras.layers.BatchNormalization(name="norm")(x)
    x = keras.layers.Dense(1, name="logit")(x)
    return keras.Model(inputs, calibrate(name="calibrate")(x))
# --8<-- [end:model]


# --8<-- [start:locate]
def stages(model, x, training=False):
    """The output of every layer for input `x`, by layer name; the model's input is stage "scaled"."""
    layers = [layer for layer in model.layers if not isinstance(layer, keras.layers.InputLayer)]
    probe = keras.Model(model.input, [layer.output for layer in layers])
    outputs = probe(np.asarray(x, "float32"), training=training)
    found = {layer.name: np.asarray(out) for layer, out in zip(layers, outputs, strict=True)}
    found.setdefault("scaled", np.asarray(x, "float32"))
    return found


ORDER = ["scaled", "hidden", "norm", "logit", "calibrate"]


def locate(found, golden, atol=1e-6):
    """Largest difference from the golden record at each stage, and the first stage that differs."""
    gaps = {name: float(np.max(np.abs(found[name] - golden[name]))) for name in ORDER}
    first = next((name for name in ORDER if gaps[name] > atol), None)
    return {"gaps": gaps, "first": first, "predictions": found["calibrate"].ravel().tolist()}


def config_diff(saved, rebuilt):
    """(layer, key, saved value, rebuilt value) for every layer setting that differs between two configs."""
    def by_layer(config):
        return {layer["config"]["name"]: layer["config"] for layer in config["config"]["layers"]}
    old, new = by_layer(saved), by_layer(rebuilt)
    return [(name, key, old[name].get(key), new[name].get(key))
            for name in old.keys() & new.keys()
            for key in sorted(old[name].keys() | new[name].keys())
            if key != "name" and old[name].get(key) != new[name].get(key)]
# --8<-- [end:locate]


# --8<-- [start:preprocessing]
def serve_preprocessing(folder, golden):
    """Cause 1: the scaler lived in the training notebook; serving re-fits it on each request batch."""
    raw = golden["raw"]
    model = keras.saving.load_model(folder / "model.keras")
    per_batch = (raw - raw.mean(axis=0)) / raw.std(axis=0)
    bug = locate(stages(model, per_batch), golden)

    # Fix: the scaler is a Normalization layer inside the saved model, which takes raw features.
    with_scaler = keras.saving.load_model(folder / "with_scaler.keras")
    return bug, locate(stages(with_scaler, raw), golden)
# --8<-- [end:preprocessing]


# --8<-- [start:unsaved-state]
def serve_unsaved_state(folder, golden):
    """Cause 2: the temperature is a plain attribute, in neither get_config nor the weights."""
    unsaved = keras.saving.load_model(folder / "unsaved_state.keras")          # saved with Calibrate
    bug = {**locate(stages(unsaved, golden["scaled"]), golden),
           "temperature": unsaved.get_layer("calibrate").temperature}

    # Fix: SavedCalibrate returns it from get_config, so the .keras file restores it.
    model = keras.saving.load_model(folder / "model.keras")
    return bug, {**locate(stages(model, golden["scaled"]), golden),
                 "temperature": model.get_layer("calibrate").temperature}
# --8<-- [end:unsaved-state]


# --8<-- [start:training-mode]
def moving_statistics(model):
    return [np.asarray(v).copy() for v in model.get_layer("norm").non_trainable_weights]


def serve_training_mode(folder, golden):
    """Cause 3: the serving code calls the model the way the training loop did, with training=True."""
    model = keras.saving.load_model(folder / "model.keras")
    before = moving_statistics(model)
    bug = locate(stages(model, golden["scaled"], training=True), golden)
    alone = float(np.asarray(model(golden["scaled"][:1], training=True)).ravel()[0])
    bug.update(row0_alone=alone, statistics_moved=any(
        not np.array_equal(b, a) for b, a in zip(before, moving_statistics(model), strict=True)))

    # Fix: inference mode (training=False, or predict), on a fresh load: the calls above moved the statistics.
    model = keras.saving.load_model(folder / "model.keras")
    before = moving_statistics(model)
    fixed = locate(stages(model, golden["scaled"], training=False), golden)
    fixed["statistics_moved"] = any(not np.array_equal(b, a) for b, a in zip(before, moving_statistics(model), strict=True))
    return bug, fixed
# --8<-- [end:training-mode]


# --8<-- [start:changed-model]
def serve_changed_model(folder, golden):
    """Cause 4: the weights file is loaded into a model built by code that changed since it was saved."""
    saved_config = json.loads((folder / "core.json").read_text())             # written beside the weights
    changed = build_core(activation="gelu")                                     # model.py was edited
    changed.load_weights(folder / "core.weights.h5")
    changed.get_layer("calibrate").temperature = TEMPERATURE                    # not a weight: from serving config
    bug = {**locate(stages(changed, golden["scaled"]), golden),
           "config_diff": config_diff(saved_config, json.loads(changed.to_json()))}

    # Fix: build the model from the config saved with the weights (or load the .keras file, which holds both).
    rebuilt = keras.models.model_from_json(json.dumps(saved_config))
    rebuilt.load_weights(folder / "core.weights.h5")
    return bug, {**locate(stages(rebuilt, golden["scaled"]), golden),
                 "config_diff": config_diff(saved_config, json.loads(rebuilt.to_json()))}
# --8<-- [end:changed-model]


# --8<-- [start:fresh]
CAUSES = ["preprocessing", "unsaved_state", "training_mode", "changed_model"]


def reload(folder):
    """The fresh process: every cause and its fix, compared with the golden record."""
    import warnings

    folder = Path(folder)
    golden = dict(np.load(folder / "golden.npz"))
    report = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for cause in CAUSES:
            report[cause], report[cause + "_fixed"] = globals()["serve_" + cause](folder, golden)
    report["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    return report


def reload_in_fresh_process(folder, program=__file__):
    """Run `reload` in a new Python process, which shares nothing with the one that trained the model."""
    done = subprocess.run([sys.executable, str(program), "reload", str(folder)],
                          capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
# --8<-- [end:fresh]


# --8<-- [start:train]
def train_and_save(folder):
    """The training process: fit, calibrate, save every artifact and the golden record."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    raw = np.stack([rng.normal(50_000, 15_000, 2048),      # income
                    rng.normal(40, 12, 2048),              # age
                    rng.normal(3, 1, 2048)], axis=1).astype("float32")
    labels = ((raw[:, 0] - 50_000) / 15_000 + (raw[:, 1] - 40) / 12 > 0.3).astype("float32")

    mean, std = raw.mean(axis=0), raw.std(axis=0)          # the scaler, in the training notebook only
    core = build_core()
    core.compile(optimizer=keras.optimizers.Adam(0.01), loss="binary_crossentropy")
    core.fit((raw - mean) / std, labels, epochs=3, batch_size=64, verbose=0)
    core.get_layer("calibrate").temperature = TEMPERATURE  # calibrated after training

    core.save(folder / "model.keras")
    core.save_weights(folder / "core.weights.h5")
    (folder / "core.json").write_text(core.to_json())

    unsaved = build_core(calibrate=Calibrate)               # same weights, layer without get_config
    unsaved.set_weights(core.get_weights())
    unsaved.get_layer("calibrate").temperature = TEMPERATURE
    unsaved.save(folder / "unsaved_state.keras")

    raw_in = keras.Input((3,), name="raw")
    scaled = keras.layers.Normalization(mean=mean, variance=std ** 2, name="scaled")(raw_in)
    x = scaled
    for layer in core.layers[1:]:                           # the trained layers, shared
        x = layer(x)
    keras.Model(raw_in, x).save(folder / "with_scaler.keras")

    golden_raw = raw[:8]
    golden = stages(core, (golden_raw - mean) / std)
    np.savez(folder / "golden.npz", raw=golden_raw, **golden)
    return core, unsaved, golden_raw, golden
# --8<-- [end:train]


def check(report):
    expected_first = {"preprocessing": "scaled", "unsaved_state": "calibrate", "training_mode": "norm",
                      "changed_model": "hidden"}
    for cause, stage in expected_first.items():
        assert report[cause]["first"] == stage, (cause, report[cause])
        assert report[cause + "_fixed"]["first"] is None, (cause, report[cause + "_fixed"])
    assert report["unsaved_state"]["temperature"] == 1.0, report["unsaved_state"]
    assert report["training_mode"]["statistics_moved"], report["training_mode"]
    assert not report["training_mode_fixed"]["statistics_moved"], report["training_mode_fixed"]
    assert report["changed_model"]["config_diff"] == [["hidden", "activation", "relu", "gelu"]], report
    assert report["changed_model_fixed"]["config_diff"] == [], report


if __name__ == "__main__":
    if sys.argv[1:2] == ["reload"]:
        print(json.dumps(reload(sys.argv[2])))
    else:
        import tempfile

        keras.utils.set_random_seed(0)
        with tempfile.TemporaryDirectory() as tmp:
            train_and_save(tmp)
            check(reload_in_fresh_process(tmp))
        print("ok")
