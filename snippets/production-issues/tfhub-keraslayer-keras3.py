"""A stand-in for `tensorflow_hub.KerasLayer`, which is not installed on this site.

It copies the two things that decide how `hub.KerasLayer` behaves under Keras 3, from tensorflow_hub 0.16's
`keras_layer.py` (https://github.com/tensorflow/hub/blob/master/tensorflow_hub/keras_layer.py): how it picks
its Keras (`tf_keras` when `tf.keras` is Keras 3) and how it adopts the variables of the SavedModel it loads
(`add_weight` with a `getter` that returns the existing variable). Everything else (signatures, output keys,
`training`, regularization losses, TF1 Hub format) is left out. The page copies this file to
`hub_standin.py` for the process that runs with `TF_USE_LEGACY_KERAS=1`.
"""

# --8<-- [start:standin]
import tensorflow as tf

version_fn = getattr(tf.keras, "version", None)       # tensorflow_hub/keras_layer.py, "Use Keras 2."
if version_fn and version_fn().startswith("3."):
    import tf_keras as keras_2
else:
    keras_2 = tf.keras


class KerasLayer(keras_2.layers.Layer):
    """Load a TF2 SavedModel (hub.load wraps tf.saved_model.load), adopt its variables, call it."""

    def __init__(self, handle, trainable=False, **kwargs):
        super().__init__(trainable=trainable, **kwargs)
        self._func = tf.saved_model.load(handle)
        trainable_ids = {id(v) for v in self._func.trainable_variables}
        for v in self._func.variables:
            self.add_weight(name=v.name, shape=v.shape, dtype=v.dtype, trainable=id(v) in trainable_ids,
                            getter=lambda *_, existing=v, **__: existing)

    def call(self, inputs):
        return self._func(inputs)
# --8<-- [end:standin]


if __name__ == "__main__":  # runs on its own: wraps a tiny SavedModel and adopts its variable
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        export = tf.train.Checkpoint(w=tf.Variable([2.0]))
        export.__call__ = tf.function(lambda x: x * export.w, input_signature=[tf.TensorSpec([None], tf.float32)])
        export.variables = [export.w]
        export.trainable_variables = [export.w]
        tf.saved_model.save(export, folder)
        layer = KerasLayer(folder, trainable=True)
        assert layer(tf.constant([1.0, 3.0])).numpy().tolist() == [2.0, 6.0]
        assert len(layer.trainable_weights) == 1, layer.trainable_weights
        assert isinstance(layer, keras_2.layers.Layer)
