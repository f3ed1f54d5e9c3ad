"""A custom layer written only with add_weight and keras.ops.

Run it with any installed Keras backend:  KERAS_BACKEND=tensorflow python portable-layers-keras-ops.py
It builds the layer, calls it on NumPy input and prints: backend, tensor module, output shape.
"""

# --8<-- [start:layer]
import keras
import numpy as np
from keras import ops


class GatedDense(keras.layers.Layer):
    """y = (x W + b) * sigmoid(x V): backend-neutral."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        d = input_shape[-1]
        self.w = self.add_weight(shape=(d, self.units), initializer="glorot_uniform", name="w")
        self.v = self.add_weight(shape=(d, self.units), initializer="glorot_uniform", name="v")
        self.b = self.add_weight(shape=(self.units,), initializer="zeros", name="b")

    def call(self, x):
        return (ops.matmul(x, self.w) + self.b) * ops.sigmoid(ops.matmul(x, self.v))

    def get_config(self):
        return {**super().get_config(), "units": self.units}
# --8<-- [end:layer]


def main():
    keras.utils.set_random_seed(0)
    x = np.linspace(-1, 1, 6, dtype="float32").reshape(2, 3)
    layer = GatedDense(4)
    y = layer(x)
    w, v, b = (ops.convert_to_numpy(t) for t in (layer.w, layer.v, layer.b))
    np.testing.assert_allclose(ops.convert_to_numpy(y), (x @ w + b) / (1 + np.exp(-(x @ v))), rtol=1e-5, atol=1e-6)
    assert len(layer.trainable_weights) == 3, layer.trainable_weights
    print(keras.config.backend(), type(y).__module__.split(".")[0], "x".join(map(str, y.shape)))


if __name__ == "__main__":
    main()
