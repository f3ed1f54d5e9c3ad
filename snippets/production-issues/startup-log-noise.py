"""What does a TensorFlow process print when it starts? Run this with TF_CPP_MIN_LOG_LEVEL=0, 1, 2 or 3 and read
its stderr.

It imports TensorFlow, runs one op on the default device, runs one op that fails (the error is raised to Python,
caught here, and also logged by TensorFlow's C++ runtime), and logs one warning through Python's `tensorflow`
logger. Lines starting with `-- ` on stderr mark where each phase ends. With `--set-level-after-import N` it
sets TF_CPP_MIN_LOG_LEVEL=N only after `import tensorflow` has run, as a notebook cell or a `main()` would.
Exits 0.
"""

# --8<-- [start:program]
import os
import sys

import tensorflow as tf


def main(argv):
    print("-- imported", file=sys.stderr, flush=True)
    if "--set-level-after-import" in argv:
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = argv[argv.index("--set-level-after-import") + 1]

    total = tf.reduce_sum(tf.ones([2, 2]))
    print(f"-- first op ran on {total.device}", file=sys.stderr, flush=True)

    try:
        tf.io.read_file("no-such-file.txt")
    except tf.errors.NotFoundError:
        print("-- NotFoundError raised to Python and handled", file=sys.stderr, flush=True)

    tf.get_logger().warning("a warning from Python's tensorflow logger")
# --8<-- [end:program]


if __name__ == "__main__":
    main(sys.argv)
