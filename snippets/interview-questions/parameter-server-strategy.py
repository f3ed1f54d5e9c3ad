"""ParameterServerStrategy on 127.0.0.1: one coordinator (chief), one parameter server, two workers.

Run with no arguments: starts the four processes, waits (bounded), checks that the workers updated the
variables on the parameter server asynchronously, exits 0. `python this.py worker OUT_DIR` is one process;
its launcher index picks its role (0 chief, 1 ps, 2 and 3 workers).
"""

import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))
from localhost_cluster import free_ports, run_workers, tf_config  # noqa: E402,F401  (snippets/shared/)

# --8<-- [start:roles]
ROLES = [("chief", 0), ("ps", 0), ("worker", 0), ("worker", 1)]   # launcher index -> (job, task index)


def role_config(launched):
    """The shared launcher describes every process as a `worker`; turn its ports into a
    chief/ps/worker cluster and pick this process's role from its launcher index."""
    ports = launched["cluster"]["worker"]
    cluster = {"chief": ports[:1], "ps": ports[1:2], "worker": ports[2:]}
    job, index = ROLES[launched["task"]["index"]]
    return {"cluster": cluster, "task": {"type": job, "index": index}}
# --8<-- [end:roles]


def write_result(out_dir, launcher_index, result):
    path = Path(out_dir) / f"worker-{launcher_index}.json"
    path.with_suffix(".tmp").write_text(json.dumps(result))
    path.with_suffix(".tmp").rename(path)


# --8<-- [start:server]
def server_main(out_dir, launcher_index):
    """A parameter server or a worker: start a gRPC server and serve until the chief is done
    (or, for the worker the chief stops on purpose, until told to stop)."""
    import tensorflow as tf

    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
                         task_index=resolver.task_id, protocol="grpc", start=True)
    done, stop = Path(out_dir) / "done", Path(out_dir) / f"stop-{launcher_index}"
    deadline = time.monotonic() + 300
    while not (done.exists() or stop.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    write_result(out_dir, launcher_index, {"task": [resolver.task_type, resolver.task_id],
                                           "stopped_early": stop.exists()})
    os._exit(0)        # a tf.distribute.Server cannot be shut down cleanly; leave at once
# --8<-- [end:server]


# --8<-- [start:coordinator]
def coordinator_main(out_dir, launcher_index):
    import keras
    import numpy as np
    import tensorflow as tf

    tf.get_logger().setLevel("INFO")               # the coordinator logs each closure it puts back
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    result = {"task": [resolver.task_type, resolver.task_id]}

    # 1. Two steps in flight at once. Each step reads the weight, then waits (at most 30 s) until the
    #    other step has read it too, then applies its own update. Nothing on the PS stops that.
    #    Then both steps, now running at the same time, add 1 fifty times to two counters on the PS.
    LR, TARGET, INCREMENTS = 0.25, 3.0, 50
    with strategy.scope():
        w = tf.Variable(1.0)                       # loss 0.5 * (w - TARGET)**2, gradient w - TARGET
        atomic_count = tf.Variable(0)              # tf.Variable.assign_add: one AssignAddVariableOp
        keras_count = keras.Variable(0, dtype="int64")   # keras.Variable.assign_add, as optimizer.iterations
        arrived = tf.Variable(0)
        steps_here = tf.Variable(0, per_worker_variable=True)    # one copy on each worker
    result["w_device"] = w.device
    result["keras_count_device"] = keras_count.value.device

    @tf.function
    def racing_step():
        w_seen = w.read_value()
        with tf.control_dependencies([w_seen]):
            arrived.assign_add(1)
            start = tf.timestamp()

        def waiting(others_seen):
            return tf.logical_and(others_seen < 2, tf.timestamp() - start < 30.0)

        others_seen = tf.while_loop(waiting, lambda _: arrived.read_value(), [arrived.read_value()])[0]
        with tf.control_dependencies([others_seen]):
            w.assign_sub(LR * (w_seen - TARGET))   # gradient computed from the weight this step read
            for _ in range(INCREMENTS):            # the other step is counting at the same time
                atomic_count.assign_add(1)
                keras_count.assign_add(1)
            steps_here.assign_add(1)
        return w_seen, others_seen

    first = coordinator.schedule(racing_step)      # returns at once: the step runs on a worker
    deadline = time.monotonic() + 30
    while int(arrived.numpy()) < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    result["done_before_second"] = coordinator.done()   # the first step is still waiting on its worker
    second = coordinator.schedule(racing_step)
    coordinator.join()
    result["race"] = {
        "w_seen": [float(r.fetch()[0]) for r in (first, second)],
        "others_seen": [int(r.fetch()[1]) for r in (first, second)],
        "w": float(w.numpy()), "increments": 2 * INCREMENTS,
        "atomic_count": int(atomic_count.numpy()), "keras_count": int(keras_count.numpy()),
        "steps_per_worker": [int(v) for v in steps_here.read_all()],
    }

    # 2. Train a Keras model the PS way: variables on the PS, steps scheduled on whichever worker is free.
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 3)).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5]], dtype="float32") + 0.3).astype("float32")
    with strategy.scope():
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        optimizer = keras.optimizers.SGD(learning_rate=0.05)
        applied = tf.Variable(0)
        trained_here = tf.Variable(0, per_worker_variable=True)
    contexts = []

    def make_dataset():
        return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(256, seed=0).repeat().batch(16)

    def dataset_fn(ctx):
        contexts.append([ctx.num_input_pipelines, ctx.input_pipeline_id])   # runs when traced, here
        return make_dataset()

    @tf.function
    def per_worker_dataset_fn():
        return strategy.distribute_datasets_from_function(dataset_fn)

    iterator = iter(coordinator.create_per_worker_dataset(per_worker_dataset_fn))

    @tf.function
    def train_step(iterator):
        def replica_fn(batch):
            features, labels = batch
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(labels - model(features, training=True)))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            applied.assign_add(1)
            steps_before = trained_here.read_value()     # 0 on this worker's first step
            with tf.control_dependencies([steps_before]):
                trained_here.assign_add(1)
            return loss, tf.reshape(labels, [-1]), steps_before
        return strategy.run(replica_fn, args=(next(iterator),))

    STEPS = 60
    outputs = [coordinator.schedule(train_step, args=(iterator,)) for _ in range(STEPS)]
    coordinator.join()
    outputs = [r.fetch() for r in outputs]
    _, start_labels = next(iter(make_dataset()))   # the same pipeline, read here from its start
    result["train"] = {
        "steps": STEPS,
        "losses": [float(loss) for loss, _, _ in outputs],
        "applied": int(applied.numpy()),
        "keras_iterations": int(optimizer.iterations.numpy()),
        "steps_per_worker": [int(v) for v in trained_here.read_all()],
        "contexts": contexts,
        "first_labels": [labels.tolist() for _, labels, before in outputs if before == 0],   # 1 per worker
        "dataset_start": start_labels.numpy().ravel().tolist(),
        "devices": sorted({v.value.device for v in model.weights + optimizer.variables}),
        "kernel": model.weights[0].numpy().ravel().tolist(),
        "bias": float(model.weights[1].numpy()[0]),
    }

    # 3. Keras 3 `fit` under ParameterServerStrategy: record what happens.
    with strategy.scope():
        fit_model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        fit_model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    try:
        fit_model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(16).repeat(), epochs=1,
                      steps_per_epoch=4, verbose=0)
        result["fit_error"] = None
    except Exception as error:                                  # noqa: BLE001 (recorded, asserted by caller)
        result["fit_error"] = [type(error).__name__, str(error)[:200]]

    # 4. Lose a worker: stop worker 1 (launcher index 3), then schedule more steps.
    (Path(out_dir) / "stop-3").write_text("stop")
    deadline = time.monotonic() + 30
    while not (Path(out_dir) / "worker-3.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)                                            # let the process exit
    before = int(atomic_count.numpy())

    @tf.function
    def small_step():
        atomic_count.assign_add(1)

    for _ in range(20):
        coordinator.schedule(small_step)
    coordinator.join()
    result["after_loss"] = {"before": before, "after": int(atomic_count.numpy())}

    (Path(out_dir) / "done").write_text("done")               # the servers may leave now
    write_result(out_dir, launcher_index, result)
    os._exit(0)        # the coordinator keeps threads retrying the stopped worker; leave at once
# --8<-- [end:coordinator]


# --8<-- [start:check]
def check(results):
    chief, ps, worker0, worker1 = results
    assert [r["task"] for r in results] == [["chief", 0], ["ps", 0], ["worker", 0], ["worker", 1]], results
    assert worker1["stopped_early"] and not worker0["stopped_early"], (worker0, worker1)
    assert chief["w_device"] == "/job:ps/replica:0/task:0/device:CPU:0", chief["w_device"]
    race = chief["race"]
    assert race["others_seen"] == [2, 2], race          # both steps got past the wait: they overlapped
    assert race["steps_per_worker"] == [1, 1], race      # one step on each worker
    train = chief["train"]
    assert train["applied"] == train["steps"] == sum(train["steps_per_worker"]), train
    assert all(d.startswith("/job:ps/") for d in train["devices"]), train["devices"]
# --8<-- [end:check]


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        launched = json.loads(os.environ["TF_CONFIG"])
        os.environ["TF_CONFIG"] = json.dumps(role_config(launched))
        if ROLES[launched["task"]["index"]][0] == "chief":
            coordinator_main(sys.argv[2], launched["task"]["index"])
        else:
            server_main(sys.argv[2], launched["task"]["index"])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            results = run_workers(Path(__file__).resolve(), n=4, timeout=280, workdir=tmp)
            check(results)
            print("ok: two workers updated the parameter server asynchronously:", results[0]["race"])
