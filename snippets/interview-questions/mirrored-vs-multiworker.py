"""Two MultiWorkerMirroredStrategy workers on 127.0.0.1, configured by TF_CONFIG.

Run with no arguments: starts two worker processes, waits (bounded), checks that they trained in
lock-step and ended with identical weights, exits 0. `python this.py worker OUT_DIR` is one worker.
"""

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))
from localhost_cluster import free_ports, run_workers, tf_config  # noqa: E402,F401  (snippets/shared/)


# --8<-- [start:worker]
def worker_main(out_dir):
    import keras
    import numpy as np
    import tensorflow as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()      # reads TF_CONFIG
    resolver = strategy.cluster_resolver
    result = {"task": [resolver.task_type, resolver.task_id],
              "replicas": strategy.num_replicas_in_sync}

    GLOBAL = 16                                                # global batch, split over workers
    rng = np.random.default_rng(0)                             # same data on every worker
    x = rng.normal(size=(64, 3)).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5]], dtype="float32") + 0.3).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL)

    keras.utils.set_random_seed(0)
    with strategy.scope():
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        optimizer = keras.optimizers.SGD(learning_rate=0.1)
    result["initial"] = [w.numpy().tolist() for w in model.weights]

    def replica_step(inputs):
        features, labels = inputs
        with tf.GradientTape() as tape:
            per_example = tf.reduce_mean(tf.square(labels - model(features, training=True)), axis=-1)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))   # all-reduce across workers
        return loss

    @tf.function
    def step(inputs):
        return strategy.reduce(tf.distribute.ReduceOp.SUM,
                               strategy.run(replica_step, args=(inputs,)), axis=None)

    first = next(iter(strategy.experimental_distribute_dataset(dataset)))
    result["local_batch"] = [int(t.shape[0]) for t in strategy.experimental_local_results(first[0])]
    result["losses"] = [float(step(batch)) for _ in range(3)
                        for batch in strategy.experimental_distribute_dataset(dataset)]
    result["final"] = [w.numpy().tolist() for w in model.weights]

    # Keras 3 `model.fit` under MultiWorkerMirroredStrategy (keras-team/keras#20585): record the outcome.
    with strategy.scope():
        fit_model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        fit_model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    try:
        fit_model.fit(dataset, epochs=1, verbose=0)
        result["fit_error"] = None
    except Exception as error:                                  # noqa: BLE001 (recorded, asserted by caller)
        result["fit_error"] = type(error).__name__

    path = Path(out_dir) / f"worker-{resolver.task_id}.json"
    path.with_suffix(".tmp").write_text(json.dumps(result))
    path.with_suffix(".tmp").rename(path)
# --8<-- [end:worker]


# --8<-- [start:check]
def check(results):
    import numpy as np

    assert [r["task"] for r in results] == [["worker", 0], ["worker", 1]], [r["task"] for r in results]
    assert all(r["replicas"] == 2 for r in results), [r["replicas"] for r in results]
    a, b = results
    assert a["losses"] == b["losses"], "workers saw different global losses: not in lock-step"
    assert len(a["losses"]) == 12, len(a["losses"])              # 64 examples / 16 x 3 epochs
    for wa, wb in zip(a["final"], b["final"], strict=True):
        np.testing.assert_array_equal(np.array(wa), np.array(wb))  # bit-identical weights
    assert a["losses"][-1] < a["losses"][0], a["losses"]
# --8<-- [end:check]


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker_main(sys.argv[2])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            results = run_workers(Path(__file__).resolve(), workdir=tmp)
            check(results)
            assert all(r["fit_error"] == "ValueError" for r in results), (
                "upstream fixed keras#20585 (model.fit under MultiWorkerMirroredStrategy): update this page",
                [r["fit_error"] for r in results])
            print("ok: two workers trained in lock-step; final weights identical")
