"""Custom Keras objects that survive a `.keras` round trip, kept in one importable module.

The page copies this file to its working folder as `shop_layers.py`; a fresh process imports it before
`keras.models.load_model`. Run on its own, it builds a model from these objects, saves it, loads it back
and checks that the predictions are identical.
"""

# --8<-- [start:layers]
import keras
from keras import ops

PACKAGE = "tfv_shop"          # registered names become "tfv_shop>GatedDense", ...


@keras.saving.register_keras_serializable(package=PACKAGE)
def soft_clip(x):
    """A custom activation: tanh-shaped clipping to (-3, 3)."""
    return 3.0 * ops.tanh(x / 3.0)


@keras.saving.register_keras_serializable(package=PACKAGE)
class GatedDense(keras.layers.Layer):
    """value * sigmoid(gate); takes Keras objects (an activation, a regularizer) as arguments."""

    def __init__(self, units, activation=soft_clip, kernel_regularizer=None, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.activation = keras.activations.get(activation)          # accepts a name, a function or its config
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], 2 * self.units), name="kernel",
                                      regularizer=self.kernel_regularizer)
        self.bias = self.add_weight(shape=(2 * self.units,), initializer="zeros", name="bias")

    def call(self, inputs):
        value, gate = ops.split(ops.matmul(inputs, self.kernel) + self.bias, 2, axis=-1)
        return self.activation(value) * ops.sigmoid(gate)

    def get_config(self):
        # Every constructor argument, as JSON-friendly values; Keras objects through their serialize().
        return {**super().get_config(),
                "units": self.units,
                "activation": keras.activations.serialize(self.activation),
                "kernel_regularizer": keras.regularizers.serialize(self.kernel_regularizer)}


@keras.saving.register_keras_serializable(package=PACKAGE)
class Residual(keras.layers.Layer):
    """inputs + inner(inputs): the constructor takes a layer OBJECT, so from_config must rebuild it."""

    def __init__(self, inner, **kwargs):
        super().__init__(**kwargs)
        self.inner = inner

    def build(self, input_shape):
        if not self.inner.built:            # build() creates ALL state, the inner layer's included;
            self.inner.build(input_shape)   # on load, the deserialized inner layer is already built

    def call(self, inputs):
        return inputs + self.inner(inputs)

    def get_config(self):
        return {**super().get_config(), "inner": keras.layers.serialize(self.inner)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["inner"] = keras.layers.deserialize(config["inner"])   # config dict -> layer object
        return cls(**config)


@keras.saving.register_keras_serializable(package=PACKAGE)
class Codebook(keras.layers.Layer):
    """Embeds integer codes. The table's size is learnt by adapt(), not implied by the input shape,
    so the build config records it and build_from_config() recreates the table before loading."""

    def __init__(self, dim, **kwargs):
        super().__init__(**kwargs)
        self.dim = dim
        self.num_codes = None

    def adapt(self, codes):
        self.num_codes = int(ops.max(codes)) + 1
        self._make_table()

    def _make_table(self):
        self.table = self.add_weight(shape=(self.num_codes, self.dim), name="table")

    def call(self, codes):
        return ops.take(self.table, ops.cast(codes, "int32"), axis=0)

    def get_config(self):
        return {**super().get_config(), "dim": self.dim}

    def get_build_config(self):
        return {**super().get_build_config(), "num_codes": self.num_codes}

    def build_from_config(self, config):
        self.num_codes = config["num_codes"]
        self._make_table()
        self.built = True
# --8<-- [end:layers]


def build_model(seed=0):
    """features (4 floats) and a code (1 int) -> one number."""
    keras.utils.set_random_seed(seed)
    features = keras.Input((4,), name="features")
    code = keras.Input((1,), dtype="int32", name="code")
    codebook = Codebook(2, name="codebook")
    codebook.adapt(ops.arange(6))
    hidden = Residual(GatedDense(4, kernel_regularizer=keras.regularizers.L2(1e-3)), name="residual")(features)
    merged = keras.layers.Concatenate()([hidden, keras.layers.Flatten()(codebook(code))])
    return keras.Model([features, code], keras.layers.Dense(1, name="head")(merged))


if __name__ == "__main__":
    import numpy as np

    model = build_model()
    rng = np.random.default_rng(0)
    inputs = [rng.normal(size=(8, 4)).astype("float32"), rng.integers(0, 6, size=(8, 1)).astype("int32")]
    expected = model.predict(inputs, verbose=0)
    model.save("shop.keras")
    reloaded = keras.models.load_model("shop.keras")
    np.testing.assert_array_equal(reloaded.predict(inputs, verbose=0), expected)
    assert reloaded.get_layer("residual").inner.built, "the deserialized inner layer comes back built"
    print("round trip: identical predictions")
