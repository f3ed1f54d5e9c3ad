"""Checkpointing in multi-worker training: which workers must save, where, and what happens otherwise.

Run with no arguments: starts two MultiWorkerMirroredStrategy workers on 127.0.0.1 (TF_CONFIG), each
tries the save patterns below and records the outcome; checks the outcomes; exits 0.
`python this.py worker OUT_DIR` is one worker (OUT_DIR stands in for shared storage).
"""

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))
from localhost_cluster import free_ports, run_workers, tf_config  # noqa: E402,F401  (snippets/shared/)


# --8<-- [start:worker]
def worker_main(out_dir):
    import shutil

    import keras
    import tensorflow as tf

    # Bound every collective: a save that waits for a peer fails after 8 s instead of hanging.
    strategy = tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions(timeout_seconds=8))
    resolver = strategy.cluster_resolver
    task_id = resolver.task_id
    is_chief = resolver.task_type == "chief" or (resolver.task_type == "worker" and task_id == 0)
    shared = Path(out_dir) / "shared"                       # stands in for GCS / a shared file system
    shared.mkdir(exist_ok=True)

    keras.utils.set_random_seed(0)
    with strategy.scope():
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
        mean = keras.metrics.Mean()                         # its variables are SyncOnRead
    strategy.run(lambda: mean.update_state(float(task_id + 1)))   # worker 0 adds 1, worker 1 adds 2

    result = {"task_id": task_id, "is_chief": is_chief, "replicas": strategy.num_replicas_in_sync,
              "weights": [w.numpy().tolist() for w in model.weights],
              "metric_kind": type(mean.variables[0].value).__name__}

    def barrier(name, n=2):
        """A file barrier (no collective), so both workers reach each save together."""
        (shared / f"at-{name}-{task_id}").touch()
        deadline = time.monotonic() + 60
        while len(list(shared.glob(f"at-{name}-*"))) < n and time.monotonic() < deadline:
            time.sleep(0.05)

    def attempt(name, fn, together=True):
        if together:
            barrier(name)
        try:
            result[name] = {"ok": True, "path": fn()}
        except Exception as error:                          # noqa: BLE001 (recorded, asserted by caller)
            result[name] = {"ok": False, "error": type(error).__name__, "op_error": isinstance(error, tf.errors.OpError),
                            "message": str(error)[:400]}
            result["messages"] = result.get("messages", []) + [f"{name}: {str(error)[:300]}"]

    full = tf.train.Checkpoint(model=model, total=mean.variables[0], count=mean.variables[1])
    weights_only = tf.train.Checkpoint(model=model)

    # 1. The rule: every worker saves; the chief to the real path, the others to a temp dir they delete.
    def everyone_saves():
        target = shared / "ckpt" if is_chief else Path(tempfile.mkdtemp(prefix=f"worker{task_id}-"))
        path = full.write(str(target / "model"))
        if not is_chief:
            shutil.rmtree(target)                           # never leave a non-chief copy behind
        return path
    attempt("warm_up", lambda: float(strategy.reduce("SUM", strategy.run(lambda: tf.constant(1.0)), axis=None)))
    attempt("everyone_saves", everyone_saves)

    # 2. Every worker writes to the same path: nothing stops it.
    #    a. In turn (worker 1 waits until worker 0's write returned). A variable created outside the scope is
    #       not mirrored, so it can record which worker wrote the files that end up on shared storage.
    tagged = tf.train.Checkpoint(model=model, writer=tf.Variable(float(task_id)))

    def in_turn():
        first_done = shared / "in-turn-0-done"
        deadline = time.monotonic() + 60
        while task_id == 1 and not first_done.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        path = tagged.write(str(shared / "in-turn" / "model"))
        if task_id == 0:
            first_done.touch()
        return path
    attempt("same_path_in_turn", in_turn)
    #    b. At the same moment, ten times: an 8 MB checkpoint, both writers released together each round.
    big = tf.train.Checkpoint(w=tf.Variable(tf.zeros([2_000_000])), writer=tf.Variable(float(task_id)))
    result["same_path_rounds"] = []
    for r in range(10):
        (shared / f"round-{r}-{task_id}").touch()
        deadline = time.monotonic() + 60
        while len(list(shared.glob(f"round-{r}-*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.001)
        try:
            big.write(str(shared / "same" / "model"))
            result["same_path_rounds"].append("ok")
        except tf.errors.OpError as error:                   # recorded: which errors, and what they name
            result["same_path_rounds"].append(f"{type(error).__name__}: {error.message[:1000]}")

    # 3. Only the chief saves, weights only (MirroredVariables): no collective needed.
    attempt("chief_only_weights", lambda: weights_only.write(str(shared / "weights" / "model"))
            if is_chief else None)
    attempt("chief_only_keras", lambda: (model.save(str(shared / "model.keras")), "model.keras")[1]
            if is_chief else None)

    # 4. Only the chief saves a checkpoint holding SyncOnRead variables: reading them is an all-reduce.
    #    Last, because a timed-out collective leaves the cluster unusable.
    done = shared / "chief-finished"
    barrier("last")
    if is_chief:
        attempt("chief_only_full", lambda: full.write(str(shared / "chief-only" / "model")), together=False)
        done.touch()
    else:
        deadline = time.monotonic() + 60                    # stay alive while the chief waits on us
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        result["chief_only_full"] = {"ok": True, "path": None}

    path = Path(out_dir) / f"worker-{task_id}.json"
    path.with_suffix(".tmp").write_text(json.dumps(result))
    path.with_suffix(".tmp").rename(path)
# --8<-- [end:worker]


# --8<-- [start:check]
SHARED_TEMP = "same/model_temp/part-00000-of-00001"     # both writers' temporary shard, same name


def check(results, out_dir):
    import tensorflow as tf

    chief, other = results
    assert (chief["is_chief"], other["is_chief"]) == (True, False)
    assert chief["replicas"] == other["replicas"] == 2, (chief["replicas"], other["replicas"])
    assert chief["weights"] == other["weights"], "mirrored weights differ between workers"
    assert chief["warm_up"]["ok"] and other["warm_up"]["ok"], (chief["warm_up"], other["warm_up"])
    # 1. everyone saves: works; only the chief's copy remains on shared storage.
    assert chief["everyone_saves"]["ok"] and other["everyone_saves"]["ok"], (chief, other)
    saved = tf.train.load_checkpoint(chief["everyone_saves"]["path"])
    assert float(saved.get_tensor("total/.ATTRIBUTES/VARIABLE_VALUE")) == 3.0, "metric not all-reduced"
    assert not Path(other["everyone_saves"]["path"]).parent.exists(), "non-chief temp copy left behind"
    # 2a. same path, in turn: no error anywhere, and the shared checkpoint is the last writer's (worker 1's).
    assert chief["same_path_in_turn"]["ok"] and other["same_path_in_turn"]["ok"], (chief, other)
    in_turn = tf.train.load_checkpoint(chief["same_path_in_turn"]["path"])
    assert float(in_turn.get_tensor("writer/.ATTRIBUTES/VARIABLE_VALUE")) == 1.0, "the chief's files survived"
    # 2b. same path, together: every write returns or fails, saving or merging, on the temporary files both share.
    for outcome in chief["same_path_rounds"] + other["same_path_rounds"]:
        assert outcome == "ok" or (("MergeV2Checkpoints" in outcome or "SaveV2" in outcome) and SHARED_TEMP in outcome), outcome
    # 3. chief only, mirrored weights only: works.
    assert chief["chief_only_weights"]["ok"] and chief["chief_only_keras"]["ok"], chief
    # 4. chief only, SyncOnRead variables included: the chief times out waiting for the other worker.
    assert chief["chief_only_full"]["error"] == "DeadlineExceededError", chief["chief_only_full"]
    assert not list((Path(out_dir) / "shared").glob("chief-only/*.index")), "a checkpoint was written anyway"
# --8<-- [end:check]


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker_main(sys.argv[2])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            out = run_workers(Path(__file__).resolve(), workdir=tmp, keep=True)
            check(*out)
            print("ok: every worker must save; chief-only saves of SyncOnRead state time out")
