"""A small Keras 3 model written with keras.ops only, for any backend.

Run it with any installed Keras backend:  KERAS_BACKEND=tensorflow python tensorflow-vs-pytorch-jax.py
It builds the model, checks its output against the NumPy formula and prints the backend and the
output's tensor module.
"""

# --8<-- [start:model]
import keras
import numpy as np
from keras import ops


@keras.saving.register_keras_serializable(package="tfv")
class ResidualMLP(keras.layers.Layer):
    """y = x + relu(x W1 + b1) W2, with keras.ops only."""

    def __init__(self, hidden, **kwargs):
        super().__init__(**kwargs)
        self.hidden = hidden

    def build(self, input_shape):
        d = input_shape[-1]
        self.w1 = self.add_weight(shape=(d, self.hidden), initializer="glorot_uniform", name="w1")
        self.b1 = self.add_weight(shape=(self.hidden,), initializer="zeros", name="b1")
        self.w2 = self.add_weight(shape=(self.hidden, d), initializer="glorot_uniform", name="w2")

    def call(self, x):
        return x + ops.matmul(ops.relu(ops.matmul(x, self.w1) + self.b1), self.w2)

    def get_config(self):
        return {**super().get_config(), "hidden": self.hidden}


def make_model():
    return keras.Sequential([keras.Input((4,), name="features"), ResidualMLP(8, name="block"),
                             keras.layers.Dense(1, name="head")])
# --8<-- [end:model]


def main():
    keras.utils.set_random_seed(0)
    model = make_model()
    x = np.random.default_rng(0).normal(size=(6, 4)).astype("float32")
    out = model(x)
    w1, b1, w2, head_w, head_b = model.get_weights()
    by_hand = (x + np.maximum(x @ w1 + b1, 0) @ w2) @ head_w + head_b
    np.testing.assert_allclose(ops.convert_to_numpy(out), by_hand, rtol=1e-5, atol=1e-6)
    print(keras.backend.backend(), type(out).__module__.split(".")[0])


if __name__ == "__main__":
    main()
