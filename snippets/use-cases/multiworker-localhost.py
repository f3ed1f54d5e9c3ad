"""Multi-worker training on one host: two MultiWorkerMirroredStrategy workers on 127.0.0.1.

Run with no arguments: writes four TFRecord files, starts two workers with TF_CONFIG, checks that the
per-worker shards are disjoint and together cover the dataset, exits 0.
`python this.py worker OUT_DIR DATA_DIR` is one worker.
"""

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))
from localhost_cluster import free_ports, run_workers, tf_config  # noqa: E402,F401  (snippets/shared/)


# --8<-- [start:data]
def write_files(data_dir, num_files=4, per_file=8):
    """Example i goes to file i // per_file, so a file's examples are easy to recognise."""
    import tensorflow as tf

    Path(data_dir).mkdir(parents=True, exist_ok=True)
    paths = []
    for f in range(num_files):
        path = str(Path(data_dir) / f"part-{f}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for i in range(f * per_file, (f + 1) * per_file):
                writer.write(tf.io.serialize_tensor(tf.constant(i, tf.int64)).numpy())
        paths.append(path)
    return paths
# --8<-- [end:data]


# --8<-- [start:worker]
def worker_main(out_dir, data_dir):
    import tensorflow as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()      # reads TF_CONFIG
    task_id = strategy.cluster_resolver.task_id
    GLOBAL = 4
    Policy = tf.data.experimental.AutoShardPolicy

    def ids_seen(dist_dataset):
        seen = []
        for batch in dist_dataset:
            for part in strategy.experimental_local_results(batch):
                seen += [int(v) for v in part]
        return seen

    def with_policy(ds, policy):
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = policy
        return ds.with_options(options)

    def from_files():
        files = tf.data.Dataset.list_files(f"{data_dir}/part-*.tfrecord", shuffle=False)
        return tf.data.TFRecordDataset(files).map(lambda s: tf.io.parse_tensor(s, tf.int64))

    result = {"task_id": task_id, "replicas": strategy.num_replicas_in_sync}
    # 1. Files + AUTO: FILE sharding, each worker reads whole files.
    result["files_auto"] = ids_seen(strategy.experimental_distribute_dataset(from_files().batch(GLOBAL)))
    # 2. In-memory data + AUTO: no file reader to shard, so TF falls back to DATA sharding.
    result["memory_auto"] = ids_seen(strategy.experimental_distribute_dataset(
        tf.data.Dataset.range(32).batch(GLOBAL)))
    # 3. Manual sharding: one input pipeline per worker, sharded by its input context.
    def dataset_fn(ctx):
        ds = tf.data.Dataset.range(32).shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
        return ds.batch(ctx.get_per_replica_batch_size(GLOBAL))
    result["manual"] = ids_seen(strategy.distribute_datasets_from_function(dataset_fn))
    # 4. Sharding turned OFF: every worker reads everything.
    result["off"] = ids_seen(strategy.experimental_distribute_dataset(
        with_policy(tf.data.Dataset.range(32).batch(GLOBAL), Policy.OFF)))
    # 5. Shuffle BEFORE DATA sharding, each worker with its own seed (seed=None draws one per process):
    #    each worker keeps its positions of a different order.
    result["shuffle_own_seed"] = ids_seen(strategy.experimental_distribute_dataset(
        tf.data.Dataset.range(32).shuffle(32, seed=10 + task_id).batch(GLOBAL)))
    # 6. The same seed on every worker: one order, so DATA sharding partitions it again.
    result["shuffle_same_seed"] = ids_seen(strategy.experimental_distribute_dataset(
        tf.data.Dataset.range(32).shuffle(32, seed=10).batch(GLOBAL)))
    # 7. Shard first, then shuffle with each worker's own seed: each worker reorders only its own share.
    def shard_then_shuffle(ctx):
        ds = tf.data.Dataset.range(32).shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
        return ds.shuffle(16, seed=10 + ctx.input_pipeline_id).batch(ctx.get_per_replica_batch_size(GLOBAL))
    result["shard_then_shuffle"] = ids_seen(strategy.distribute_datasets_from_function(shard_then_shuffle))

    path = Path(out_dir) / f"worker-{task_id}.json"
    path.with_suffix(".tmp").write_text(json.dumps(result))
    path.with_suffix(".tmp").rename(path)
# --8<-- [end:worker]


# --8<-- [start:check]
def disjoint_and_complete(a, b, everything):
    return not set(a) & set(b) and sorted(a + b) == sorted(everything)


def check(results):
    w0, w1 = results
    assert [w0["task_id"], w1["task_id"]] == [0, 1], (w0["task_id"], w1["task_id"])
    assert w0["replicas"] == w1["replicas"] == 2, (w0["replicas"], w1["replicas"])
    for key in ("files_auto", "memory_auto", "manual", "shuffle_same_seed", "shard_then_shuffle"):
        assert disjoint_and_complete(w0[key], w1[key], list(range(32))), (key, w0[key], w1[key])
    def files(ids):
        return sorted({i // 8 for i in ids})
    assert (files(w0["files_auto"]), files(w1["files_auto"])) == ([0, 2], [1, 3]), "FILE sharding"
    assert sorted(w0["off"]) == sorted(w1["off"]) == list(range(32)), "OFF: both read everything"
    a, b = set(w0["shuffle_own_seed"]), set(w1["shuffle_own_seed"])
    assert a & b and set(range(32)) - a - b, ("shuffle before shard with own seeds", sorted(a), sorted(b))
# --8<-- [end:check]


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker_main(sys.argv[2], sys.argv[3])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            data_dir = Path(tmp) / "data"
            write_files(data_dir)
            check(run_workers(Path(__file__).resolve(), data_dir, workdir=tmp))
            print("ok: per-worker shards are disjoint and cover the dataset")
