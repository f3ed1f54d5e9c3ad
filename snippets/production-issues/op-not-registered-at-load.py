"""featlib: a stand-in for an extra op library such as tensorflow_text.

Importing it registers the op `Featlib>SoftClip` (y = x / (1 + |x|), float32) and its CPU kernel with the
TensorFlow of this process. A real op library is a compiled `.so` that `tf.load_op_library` loads; its
static initialisers make these registrations. This one makes the same registrations through TensorFlow's C
API for ops and kernels (tensorflow/c/ops.h, tensorflow/c/kernels.h), called with ctypes, so that no
compiler is needed. The page copies this file to `featlib.py` for the processes that "have the library".
"""

# --8<-- [start:library]
import ctypes
import os

import numpy as np
import tensorflow as tf
from tensorflow.python.framework import op_def_library, op_def_registry

OP = "Featlib>SoftClip"
_tf = ctypes.CDLL(os.path.join(tf.sysconfig.get_lib(), "libtensorflow_framework.so.2"))
_p, _i = ctypes.c_void_p, ctypes.c_int
for _name, _restype, _argtypes in [
    ("TF_NewStatus", _p, []), ("TF_DeleteStatus", None, [_p]), ("TF_GetCode", _i, [_p]),
    ("TF_Message", ctypes.c_char_p, [_p]),
    ("TF_NewOpDefinitionBuilder", _p, [ctypes.c_char_p]),
    ("TF_OpDefinitionBuilderAddInput", None, [_p, ctypes.c_char_p]),
    ("TF_OpDefinitionBuilderAddOutput", None, [_p, ctypes.c_char_p]),
    ("TF_OpDefinitionBuilderSetShapeInferenceFunction", None, [_p, _p]),
    ("TF_RegisterOpDefinition", None, [_p, _p]),
    ("TF_NewShapeHandle", _p, []), ("TF_DeleteShapeHandle", None, [_p]),
    ("TF_ShapeInferenceContextGetInput", None, [_p, _i, _p, _p]),
    ("TF_ShapeInferenceContextSetOutput", None, [_p, _i, _p, _p]),
    ("TF_NewKernelBuilder", _p, [ctypes.c_char_p, ctypes.c_char_p, _p, _p, _p]),
    ("TF_RegisterKernelBuilder", None, [ctypes.c_char_p, _p, _p]),
    ("TF_GetInput", None, [_p, _i, ctypes.POINTER(_p), _p]),
    ("TF_OpKernelContext_Failure", None, [_p, _p]),
    ("TF_NumDims", _i, [_p]), ("TF_Dim", ctypes.c_int64, [_p, _i]),
    ("TF_TensorData", _p, [_p]), ("TF_TensorByteSize", ctypes.c_size_t, [_p]),
    ("TF_AllocateOutput", _p, [_p, _i, _i, ctypes.POINTER(ctypes.c_int64), _i, ctypes.c_size_t, _p]),
    ("TF_DeleteTensor", None, [_p]),
]:
    getattr(_tf, _name).restype, getattr(_tf, _name).argtypes = _restype, _argtypes

_CALLBACK = ctypes.CFUNCTYPE(None, _p, _p)


@_CALLBACK
def _same_shape(ctx, status):                       # shape function: y has the shape of x
    handle = _tf.TF_NewShapeHandle()
    _tf.TF_ShapeInferenceContextGetInput(ctx, 0, handle, status)
    if _tf.TF_GetCode(status) == 0:
        _tf.TF_ShapeInferenceContextSetOutput(ctx, 0, handle, status)
    _tf.TF_DeleteShapeHandle(handle)


def _floats(tensor, n):
    return np.ctypeslib.as_array(ctypes.cast(_tf.TF_TensorData(tensor), ctypes.POINTER(ctypes.c_float)), (n,))


@_CALLBACK
def _compute(_kernel, ctx):                         # CPU kernel: y = x / (1 + |x|)
    status, x = _tf.TF_NewStatus(), _p()
    _tf.TF_GetInput(ctx, 0, ctypes.byref(x), status)
    if _tf.TF_GetCode(status) == 0:
        rank = _tf.TF_NumDims(x)
        dims = (ctypes.c_int64 * rank)(*[_tf.TF_Dim(x, i) for i in range(rank)])
        nbytes = _tf.TF_TensorByteSize(x)
        y = _tf.TF_AllocateOutput(ctx, 0, 1, dims, rank, nbytes, status)        # 1 = TF_FLOAT
        if _tf.TF_GetCode(status) == 0:
            xs = _floats(x, nbytes // 4)
            _floats(y, nbytes // 4)[:] = xs / (1.0 + np.abs(xs))
            _tf.TF_DeleteTensor(y)
        _tf.TF_DeleteTensor(x)
    if _tf.TF_GetCode(status) != 0:
        _tf.TF_OpKernelContext_Failure(ctx, status)
    _tf.TF_DeleteStatus(status)


def _register():
    status = _tf.TF_NewStatus()
    try:
        builder = _tf.TF_NewOpDefinitionBuilder(OP.encode())
        _tf.TF_OpDefinitionBuilderAddInput(builder, b"x: float")
        _tf.TF_OpDefinitionBuilderAddOutput(builder, b"y: float")
        _tf.TF_OpDefinitionBuilderSetShapeInferenceFunction(builder, ctypes.cast(_same_shape, _p))
        _tf.TF_RegisterOpDefinition(builder, status)
        if _tf.TF_GetCode(status) == 0:
            kernel = _tf.TF_NewKernelBuilder(OP.encode(), b"CPU", None, ctypes.cast(_compute, _p), None)
            _tf.TF_RegisterKernelBuilder(b"FeatlibSoftClipCpu", kernel, status)
        if _tf.TF_GetCode(status) != 0:
            raise RuntimeError(_tf.TF_Message(status).decode())
    finally:
        _tf.TF_DeleteStatus(status)


if op_def_registry.get(OP) is None:                 # importing twice registers once
    _register()


def soft_clip(x):
    """The Python wrapper a library exports; builds one Featlib>SoftClip node (call it in a tf.function)."""
    return op_def_library._apply_op_helper(OP, x=x)[2].outputs[0]
# --8<-- [end:library]


if __name__ == "__main__":  # runs on its own: the op is registered and computes x / (1 + |x|)
    assert op_def_registry.get(OP) is not None, "not registered"
    x = np.array([[-3.0, 0.0], [1.0, 4.0]], np.float32)
    y = tf.function(soft_clip)(tf.constant(x))
    assert y.shape == (2, 2), y.shape
    np.testing.assert_allclose(y.numpy(), x / (1 + np.abs(x)), rtol=1e-6)
