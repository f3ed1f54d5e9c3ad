"""A production-readiness gate for SavedModel version folders: seven checks, each with a verdict and a reason.

`python production-readiness-checklist.py gate SPEC.json DIR [DIR ...]` checks each folder against the spec, in
this (fresh) process, and prints one JSON object: {folder: {check: [verdict, detail]}}, where the verdict is
"pass", "fail", or "not run" (its prerequisite did not pass). With no arguments it exports a good model and one
without a warm-up file into a temporary folder, gates both, and exits 0 if only the second fails, on that check.
"""

import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import tensorflow as tf


def _site_timing():
    """The site's timing protocol, snippets/shared/timing.py, loaded from its file."""
    sys.dont_write_bytecode = True          # leave no __pycache__ beside the snippet
    spec = importlib.util.spec_from_file_location("timing", Path(__file__).resolve().parents[1] / "shared" / "timing.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


measure = _site_timing().measure


# --8<-- [start:gate]
PY_CALLBACK_OPS = {"EagerPyFunc", "PyFunc", "PyFuncStateless"}      # tf.py_function, tf.numpy_function
WARMUP = os.path.join("assets.extra", "tf_serving_warmup_requests")


def describe(specs):
    return {key: [spec.dtype.name, spec.shape.as_list()] for key, spec in sorted(specs.items())}


def check_versioned_directory(path, spec, state):
    name = os.path.basename(os.path.normpath(path))
    return name.isdigit(), f"folder name {name!r}" + ("" if name.isdigit() else " is not an integer version")


def check_no_py_function(path, spec, state):
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel.FromString(Path(path, "saved_model.pb").read_bytes())
    meta = saved.meta_graphs[0]
    ops = {op.name for op in meta.meta_info_def.stripped_op_list.op}
    ops |= {node.op for node in meta.graph_def.node}
    ops |= {node.op for function in meta.graph_def.library.function for node in function.node_def}
    found = sorted(ops & PY_CALLBACK_OPS)
    return not found, f"ops that call back into Python: {found}"


def check_fresh_load(path, spec, state):
    state["loaded"] = tf.saved_model.load(path)
    return True, f"signatures {sorted(state['loaded'].signatures)}"


def check_signature(path, spec, state):
    signatures = state["loaded"].signatures
    if spec["signature"] not in signatures:
        return False, f"no signature {spec['signature']!r} in {sorted(signatures)}"
    state["fn"] = fn = signatures[spec["signature"]]
    found = {"inputs": describe(fn.structured_input_signature[1]), "outputs": describe(fn.structured_outputs)}
    wanted = {"inputs": spec["inputs"], "outputs": spec["outputs"]}
    return found == wanted, "as declared" if found == wanted else f"found {found}, declared {wanted}"


def check_golden_parity(path, spec, state):
    golden = np.load(spec["golden"])
    outputs = state["fn"](**{key: tf.constant(golden[key]) for key in spec["inputs"]})
    worst = max(float(np.max(np.abs(outputs[key].numpy() - golden[key]))) for key in spec["outputs"])
    close = all(np.allclose(outputs[key].numpy(), golden[key], rtol=spec["rtol"], atol=spec["atol"])
                for key in spec["outputs"])
    return close, f"largest difference from the golden outputs {worst:.3g}"


def check_latency_budget(path, spec, state):
    golden, rows = np.load(spec["golden"]), spec["latency_batch"]
    batch = {key: tf.constant(np.resize(golden[key], (rows, *golden[key].shape[1:]))) for key in spec["inputs"]}

    def call():
        for value in state["fn"](**batch).values():
            value.numpy()

    call()                                        # the first call pays the cold start, not the budget
    timing = measure({"call": call}, repeats=spec["latency_repeats"])["call"]
    state["latency_ms"] = ms = 1000 * timing["median"]
    return ms <= spec["latency_budget_ms"], (f"median {ms:.2f} CPU ms per {rows}-row call, budget "
                                             f"{spec['latency_budget_ms']} ms, spread {timing['spread']:.2f}")


def check_warmup_file(path, spec, state):
    from tensorflow_serving.apis import prediction_log_pb2

    file = os.path.join(path, WARMUP)
    if not os.path.isfile(file):
        return False, f"no {WARMUP}"
    logs = [prediction_log_pb2.PredictionLog.FromString(record.numpy()) for record in tf.data.TFRecordDataset(file)]
    if not 0 < len(logs) <= 1000:
        return False, f"{len(logs)} records: TF Serving takes 1 to 1000"
    for i, log in enumerate(logs):
        if log.WhichOneof("log_type") != "predict_log":
            return False, f"record {i} holds a {log.WhichOneof('log_type')}, not a predict_log"
        request = log.predict_log.request
        name = request.model_spec.signature_name or "serving_default"
        if name not in state["loaded"].signatures:
            return False, f"record {i} names the signature {name!r}, which the model does not have"
        fn = state["loaded"].signatures[name]
        declared = fn.structured_input_signature[1]
        if set(request.inputs) != set(declared):
            return False, f"record {i} sends {sorted(request.inputs)}, the signature takes {sorted(declared)}"
        wrong = sorted(key for key, proto in request.inputs.items() if proto.dtype != declared[key].dtype.as_datatype_enum)
        if wrong:
            return False, f"record {i} sends {wrong} with a dtype the signature does not declare"
        fn(**{key: tf.constant(tf.make_ndarray(proto)) for key, proto in request.inputs.items()})   # replay it
    return True, f"{len(logs)} predict requests, replayed"


CHECKS = [  # name, check, the check that must pass first
    ("versioned_directory", check_versioned_directory, None),
    ("no_py_function", check_no_py_function, None),
    ("fresh_load", check_fresh_load, None),
    ("signature", check_signature, "fresh_load"),
    ("golden_parity", check_golden_parity, "signature"),
    ("latency_budget", check_latency_budget, "signature"),
    ("warmup_file", check_warmup_file, "signature"),
]


def run_gate(path, spec):
    """Every check on one version folder; a check that raises has failed, with the error as its reason."""
    state, verdicts = {}, {}
    for name, check, needs in CHECKS:
        if needs and verdicts[needs][0] != "pass":
            verdicts[name] = ["not run", f"needs {needs}"]
            continue
        try:
            ok, detail = check(path, spec, state)
        except Exception as error:
            ok, detail = False, f"{type(error).__name__}: {' '.join(str(error).split())[:240]}"
        verdicts[name] = ["pass" if ok else "fail", detail]
    return verdicts
# --8<-- [end:gate]


# --8<-- [start:warmup]
def write_warmup_file(export_dir, batches, model_name, signature="serving_default"):
    """One PredictionLog per batch (a dict of input name -> array), as TFRecords where TF Serving looks."""
    from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

    file = os.path.join(export_dir, WARMUP)
    os.makedirs(os.path.dirname(file), exist_ok=True)
    with tf.io.TFRecordWriter(file) as writer:
        for batch in batches:
            request = predict_pb2.PredictRequest()
            request.model_spec.name, request.model_spec.signature_name = model_name, signature
            for key, value in batch.items():
                request.inputs[key].CopyFrom(tf.make_tensor_proto(value))
            log = prediction_log_pb2.PredictionLog(predict_log=prediction_log_pb2.PredictLog(request=request))
            writer.write(log.SerializeToString())
    return file
# --8<-- [end:warmup]


def demo(folder):
    """A good export and one without its warm-up file: the gate must tell them apart, on that check only."""
    import keras

    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input(shape=(8,), name="features"), keras.layers.Dense(3, name="scores")])
    rows = np.random.default_rng(0).normal(size=(16, 8)).astype("float32")
    golden = os.path.join(folder, "golden.npz")
    np.savez(golden, features=rows, output_0=model(rows).numpy())
    spec = {"signature": "serving_default", "inputs": {"features": ["float32", [None, 8]]},
            "outputs": {"output_0": ["float32", [None, 3]]}, "golden": golden, "rtol": 1e-5, "atol": 1e-6,
            "latency_budget_ms": 50, "latency_batch": 32, "latency_repeats": 3}
    good, bare = os.path.join(folder, "good", "1"), os.path.join(folder, "bare", "1")
    for path in (good, bare):
        model.export(path, verbose=False)
    write_warmup_file(good, [{"features": rows[:n]} for n in (1, 16)], model_name="scorer")
    verdicts = {path: run_gate(path, spec) for path in (good, bare)}
    assert all(v == "pass" for v, _ in verdicts[good].values()), verdicts[good]
    assert {k for k, (v, _) in verdicts[bare].items() if v != "pass"} == {"warmup_file"}, verdicts[bare]
    return verdicts


if __name__ == "__main__":
    if sys.argv[1:2] == ["gate"]:
        tf.config.threading.set_intra_op_parallelism_threads(1)   # CPU time = the work, on any number of cores
        tf.config.threading.set_inter_op_parallelism_threads(1)
        gate_spec = json.loads(Path(sys.argv[2]).read_text())
        print(json.dumps({path: run_gate(path, gate_spec) for path in sys.argv[3:]}))
    else:
        with tempfile.TemporaryDirectory() as scratch:
            print(json.dumps(demo(scratch)))
