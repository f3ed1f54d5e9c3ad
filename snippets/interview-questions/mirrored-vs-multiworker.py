"""Two MultiWorkerMirroredStrategy workers on 127.0.0.1, configured by TF_CONFIG.

Run with no arguments: starts two worker processes, waits (bounded), checks that they trained in
lock-step and ended with identical weights, that a restore from the chief's checkpoint resumes to the
same weights, and that one slow worker stalls the other; exits 0. `python this.py worker OUT_DIR` is one worker.
"""

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))
from localhost_cluster import free_ports, run_workers, tf_config  # noqa: E402,F401  (snippets/shared/)


# --8<-- [start:worker]
def worker_main(out_dir):
    import shutil
    import time

    import keras
    import numpy as np
    import tensorflow as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()      # reads TF_CONFIG
    resolver = strategy.cluster_resolver
    task_id = resolver.task_id
    is_chief = strategy.extended.should_checkpoint              # True on the chief only
    result = {"task": [resolver.task_type, task_id], "replicas": strategy.num_replicas_in_sync,
              "should_checkpoint": is_chief}

    GLOBAL, EPOCHS = 16, 3                                     # global batch, split over workers
    rng = np.random.default_rng(0)                             # same data on every worker
    x = rng.normal(size=(64, 3)).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5]], dtype="float32") + 0.3).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL)
    STEPS = 64 // GLOBAL                                       # steps per epoch

    def build():
        keras.utils.set_random_seed(0)
        with strategy.scope():
            model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
            optimizer = keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
            optimizer.build(model.trainable_variables)         # momentum slots exist before any restore
        return model, optimizer

    def make_step(model, optimizer):
        def replica_step(inputs):
            features, labels = inputs
            with tf.GradientTape() as tape:
                per_example = tf.reduce_mean(tf.square(labels - model(features, training=True)), axis=-1)
                loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))  # all-reduce
            return loss

        @tf.function
        def step(inputs):
            return strategy.reduce(tf.distribute.ReduceOp.SUM,
                                   strategy.run(replica_step, args=(inputs,)), axis=None)
        return step

    def train(model, optimizer, manager=None):
        """Train up to EPOCHS, starting after the epochs the optimizer has already done."""
        step, losses = make_step(model, optimizer), []
        for _ in range(int(optimizer.iterations.numpy()) // STEPS, EPOCHS):
            losses += [float(step(batch)) for batch in strategy.experimental_distribute_dataset(dataset)]
            if manager is not None:
                manager.save()                                 # every worker saves (see distributed-checkpointing)
                if not is_chief:
                    shutil.rmtree(manager.directory)           # only the chief's copy stays on shared storage
        return losses, step

    # 1. Train 3 epochs; checkpoint after each one. out_dir stands in for storage every worker reaches.
    shared = Path(out_dir) / "ckpt"
    model, optimizer = build()
    result["initial"] = [w.numpy().tolist() for w in model.weights]
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model, optimizer=optimizer),
        shared if is_chief else Path(out_dir) / f"tmp-worker-{task_id}", max_to_keep=EPOCHS)
    first = next(iter(strategy.experimental_distribute_dataset(dataset)))
    result["local_batch"] = [int(t.shape[0]) for t in strategy.experimental_local_results(first[0])]
    result["losses"], step = train(model, optimizer, manager)
    result["final"] = [w.numpy().tolist() for w in model.weights]

    # 2. Resume as a restarted job would: fresh objects, restore the chief's checkpoint from the end of
    #    epoch 2 (the latest one had the job died during epoch 3), train the rest.
    model2, optimizer2 = build()
    status = tf.train.Checkpoint(model=model2, optimizer=optimizer2).restore(str(shared / "ckpt-2"))
    status.assert_consumed()                                   # every saved value found its variable
    result["resumed_at_step"] = int(optimizer2.iterations.numpy())
    result["resumed_losses"], _ = train(model2, optimizer2)
    result["resumed_final"] = [w.numpy().tolist() for w in model2.weights]
    result["ckpt_files"] = sorted(p.name for p in shared.iterdir())
    result["tmp_left"] = sorted(p.name for p in Path(out_dir).glob("tmp-worker-*"))

    # 3. Lock-step: worker 1 sleeps 3 s before the 4th of four steps; time every step on both workers.
    batches = list(strategy.experimental_distribute_dataset(dataset))
    result["step_seconds"] = []
    for i, batch in enumerate(batches):
        if i == 3 and task_id == 1:
            time.sleep(3.0)
        start = time.perf_counter()
        float(step(batch))
        result["step_seconds"].append(time.perf_counter() - start)

    # 4. Keras 3 `model.fit` under MultiWorkerMirroredStrategy (keras-team/keras#20585): record the outcome.
    with strategy.scope():
        fit_model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        fit_model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    try:
        fit_model.fit(dataset, epochs=1, verbose=0)
        result["fit_error"], result["fit_message"] = None, ""
    except Exception as error:                                  # noqa: BLE001 (recorded, asserted by caller)
        result["fit_error"], result["fit_message"] = type(error).__name__, str(error)[:300]

    path = Path(out_dir) / f"worker-{task_id}.json"
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


# --8<-- [start:check-resume]
def check_resume(results):
    import numpy as np

    chief, other = results
    assert chief["ckpt_files"] == ["checkpoint"] + [f"ckpt-{n}.{ext}" for n in (1, 2, 3)
                                                    for ext in ("data-00000-of-00001", "index")], chief["ckpt_files"]
    assert chief["tmp_left"] == [], chief["tmp_left"]               # no non-chief copy left behind
    for r in results:
        assert r["resumed_at_step"] == 8, r["resumed_at_step"]     # optimizer.iterations came back: 2 epochs x 4
        assert r["resumed_losses"] == r["losses"][8:], (r["resumed_losses"], r["losses"][8:])
        for got, want in zip(r["resumed_final"], r["final"], strict=True):
            np.testing.assert_array_equal(np.array(got), np.array(want))   # same bits as never stopping
# --8<-- [end:check-resume]


# --8<-- [start:check-stall]
def check_stall(results):
    fast, slow = results[0]["step_seconds"], results[1]["step_seconds"]
    # Worker 0 did nothing different, yet its 4th step waited for worker 1's 3 s sleep.
    assert fast[3] > 2.0, fast
    assert fast[3] > 5 * sorted(fast[:3])[1], fast                  # 5x its median ordinary step
    assert slow[3] < fast[3] / 2, (slow, fast)                      # the sleep was outside worker 1's timing
# --8<-- [end:check-stall]


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker_main(sys.argv[2])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            results = run_workers(Path(__file__).resolve(), workdir=tmp)
            check(results)
            check_resume(results)
            check_stall(results)
            assert all(r["fit_error"] == "ValueError" for r in results), (
                "upstream fixed keras#20585 (model.fit under MultiWorkerMirroredStrategy): update this page",
                [r["fit_error"] for r in results])
            assert all("Attempt to convert a value (PerReplica" in r["fit_message"] for r in results), results
            print("ok: two workers trained in lock-step; final weights identical; resume exact; stall seen")
