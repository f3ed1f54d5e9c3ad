"""Multi-worker auto-sharding with too few files: one TFRecord file, two workers.

Run with no arguments: writes the data (one file, and the same data split into four files), starts
two MultiWorkerMirroredStrategy workers on 127.0.0.1, checks that the default AUTO policy fails on
one file and that both fixes (DATA policy, more files) give disjoint, complete shards; exits 0.
`python this.py worker OUT_DIR DATA_DIR` is one worker.
"""

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))
from localhost_cluster import free_ports, run_workers, tf_config  # noqa: E402,F401  (snippets/shared/)


# --8<-- [start:data]
def write_data(data_dir, examples=16, split_into=4):
    """The same examples twice: all in one file, and split over `split_into` files."""
    import tensorflow as tf

    Path(data_dir, "one").mkdir(parents=True, exist_ok=True)
    Path(data_dir, "many").mkdir(parents=True, exist_ok=True)
    def record(i):
        return tf.io.serialize_tensor(tf.constant(i, tf.int64)).numpy()
    with tf.io.TFRecordWriter(str(Path(data_dir, "one", "all.tfrecord"))) as writer:
        for i in range(examples):
            writer.write(record(i))
    per_file = examples // split_into
    for f in range(split_into):
        with tf.io.TFRecordWriter(str(Path(data_dir, "many", f"part-{f}.tfrecord"))) as writer:
            for i in range(f * per_file, (f + 1) * per_file):
                writer.write(record(i))
# --8<-- [end:data]


# --8<-- [start:worker]
def worker_main(out_dir, data_dir):
    import tensorflow as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()      # reads TF_CONFIG
    task_id = strategy.cluster_resolver.task_id
    Policy = tf.data.experimental.AutoShardPolicy

    def pipeline(pattern, policy=None):
        files = tf.data.Dataset.list_files(f"{data_dir}/{pattern}", shuffle=False)
        ds = tf.data.TFRecordDataset(files).map(lambda s: tf.io.parse_tensor(s, tf.int64)).batch(4)
        if policy is not None:
            options = tf.data.Options()
            options.experimental_distribute.auto_shard_policy = policy
            ds = ds.with_options(options)
        return ds

    def read_all(ds):
        seen = []
        try:
            for batch in strategy.experimental_distribute_dataset(ds):
                for part in strategy.experimental_local_results(batch):
                    seen += [int(v) for v in part]
            return {"ids": seen, "error": None}
        except Exception as error:                              # noqa: BLE001 (recorded, asserted by caller)
            return {"ids": seen, "error": type(error).__name__}

    result = {"task_id": task_id}
    # The fixes first: a failed collective leaves the cluster unusable for later steps.
    result["fix_data_policy"] = read_all(pipeline("one/*.tfrecord", Policy.DATA))
    result["fix_more_files"] = read_all(pipeline("many/*.tfrecord"))            # default AUTO
    result["bug_one_file"] = read_all(pipeline("one/*.tfrecord"))               # default AUTO

    path = Path(out_dir) / f"worker-{task_id}.json"
    path.with_suffix(".tmp").write_text(json.dumps(result))
    path.with_suffix(".tmp").rename(path)
# --8<-- [end:worker]


# --8<-- [start:check]
def shards_ok(results, key, examples=16):
    a, b = (r[key] for r in results)
    return (a["error"] is None and b["error"] is None and not set(a["ids"]) & set(b["ids"])
            and sorted(a["ids"] + b["ids"]) == list(range(examples)))


def check(results):
    bug = [r["bug_one_file"] for r in results]
    assert all(r["error"] is not None for r in bug), bug                 # no worker got through
    assert "InvalidArgumentError" in [r["error"] for r in bug], bug       # the auto-shard failure
    assert all(r["ids"] == [] for r in bug), bug                         # not a single example read
    assert shards_ok(results, "fix_data_policy"), [r["fix_data_policy"] for r in results]
    assert shards_ok(results, "fix_more_files"), [r["fix_more_files"] for r in results]
# --8<-- [end:check]


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker_main(sys.argv[2], sys.argv[3])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            data_dir = Path(tmp) / "data"
            write_data(data_dir)
            check(run_workers(Path(__file__).resolve(), data_dir, workdir=tmp))
            print("ok: AUTO fails on one file with two workers; DATA policy and more files both fix it")
