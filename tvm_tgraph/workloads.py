"""Built-in TIR workloads, one per operator family the converter supports.

Each workload is a function of its shape parameters that returns a ``PrimFunc`` built with
``tvm.topi`` compute definitions and ``te.create_prim_func``; :data:`WORKLOADS` names a
default instance of each. ``load_module`` resolves a CLI ``MODULE`` argument.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

from .model_zoo import relax_model


def _prim_func(*tensors):
    from tvm import te

    return te.create_prim_func(list(tensors))


def matmul(n: int = 256, m: int = 256, k: int = 256):
    """C[n, m] = A[n, k] @ B[k, m], float32."""
    from tvm import te, topi

    a = te.placeholder((n, k), name="A")
    b = te.placeholder((k, m), name="B")
    return _prim_func(a, b, topi.nn.matmul(a, b))


def dense_bias_relu(batch: int = 64, in_dim: int = 256, out_dim: int = 256):
    """relu(X @ W^T + bias), float32: a fully connected layer."""
    from tvm import te, topi

    x = te.placeholder((batch, in_dim), name="X")
    w = te.placeholder((out_dim, in_dim), name="W")
    bias = te.placeholder((out_dim,), name="bias")
    out = topi.nn.relu(topi.add(topi.nn.dense(x, w), bias))
    return _prim_func(x, w, bias, out)


def batch_matmul(batch: int = 8, n: int = 64, m: int = 64, k: int = 64):
    """C[b] = A[b] @ B[b]^T, float32."""
    from tvm import te, topi

    a = te.placeholder((batch, n, k), name="A")
    b = te.placeholder((batch, m, k), name="B")
    return _prim_func(a, b, topi.nn.batch_matmul(a, b))


def conv2d_nchw(n: int = 1, c: int = 32, hw: int = 28, k: int = 32, kernel: int = 3, stride: int = 1):
    """2-d convolution, NCHW input, OIHW weight, 'same' padding, float32."""
    from tvm import te, topi

    x = te.placeholder((n, c, hw, hw), name="X")
    w = te.placeholder((k, c, kernel, kernel), name="W")
    return _prim_func(x, w, topi.nn.conv2d_nchw(x, w, stride, kernel // 2, 1))


def conv2d_nhwc(n: int = 1, c: int = 32, hw: int = 28, k: int = 32, kernel: int = 3, stride: int = 1):
    """2-d convolution, NHWC input, HWIO weight, 'same' padding, float32."""
    from tvm import te, topi

    x = te.placeholder((n, hw, hw, c), name="X")
    w = te.placeholder((kernel, kernel, c, k), name="W")
    return _prim_func(x, w, topi.nn.conv2d_nhwc(x, w, stride, kernel // 2, 1))


def depthwise_conv2d(n: int = 1, c: int = 64, hw: int = 28, kernel: int = 3, stride: int = 1):
    """Depthwise 2-d convolution, NCHW, 'same' padding, float32."""
    from tvm import te, topi

    x = te.placeholder((n, c, hw, hw), name="X")
    w = te.placeholder((c, 1, kernel, kernel), name="W")
    return _prim_func(x, w, topi.nn.depthwise_conv2d_nchw(x, w, stride, kernel // 2, 1))


def softmax(rows: int = 128, cols: int = 512):
    """Row-wise softmax, float32."""
    from tvm import te, topi

    x = te.placeholder((rows, cols), name="X")
    return _prim_func(x, topi.nn.softmax(x, axis=-1))


def layer_norm(rows: int = 128, cols: int = 512):
    """Layer normalisation over the last axis with scale and shift, float32."""
    from tvm import te, topi

    x = te.placeholder((rows, cols), name="X")
    gamma = te.placeholder((cols,), name="gamma")
    beta = te.placeholder((cols,), name="beta")
    return _prim_func(x, gamma, beta, topi.nn.layer_norm(x, gamma, beta, axis=[1]))


def max_pool2d(n: int = 1, c: int = 64, hw: int = 56, kernel: int = 3, stride: int = 2):
    """2-d max pooling, NCHW, padding 1, float32."""
    from tvm import te, topi

    x = te.placeholder((n, c, hw, hw), name="X")
    out = topi.nn.pool2d(x, (kernel, kernel), (stride, stride), (1, 1), (1, 1, 1, 1), "max", layout="NCHW")
    return _prim_func(x, out)


def fused_elementwise(rows: int = 256, cols: int = 1024):
    """gelu-like chain: tanh(x * y + 1) * 0.5 + sigmoid(x), float32."""
    from tvm import te, topi

    x = te.placeholder((rows, cols), name="X")
    y = te.placeholder((rows, cols), name="Y")
    out = topi.add(topi.multiply(topi.tanh(topi.add(topi.multiply(x, y), 1.0)), 0.5), topi.sigmoid(x))
    return _prim_func(x, y, out)


#: Built-in workloads by name; each maps to a zero-argument constructor of a PrimFunc.
WORKLOADS: dict[str, Callable] = {
    "matmul": matmul,
    "matmul_128": lambda: matmul(128, 128, 128),
    "dense_bias_relu": dense_bias_relu,
    "batch_matmul": batch_matmul,
    "conv2d_nchw": conv2d_nchw,
    "conv2d_nhwc": conv2d_nhwc,
    "depthwise_conv2d": depthwise_conv2d,
    "softmax": softmax,
    "layer_norm": layer_norm,
    "max_pool2d": max_pool2d,
    "fused_elementwise": fused_elementwise,
}


def _relax_model(family: str, **sizes):
    def build():
        return relax_model(family, **sizes)

    build.__doc__ = f"Relax IRModule of the {family} model at {sizes}."
    return build


#: Whole models (Relax IRModules imported from PyTorch), at sizes other than the training
#: data's (``collect``'s suite uses width 16 / image 32 and seq 64 / hidden 128).
MODEL_WORKLOADS: dict[str, Callable] = {
    "model_resnet": _relax_model("resnet", width=24, image=40),
    "model_mobilenet_v2": _relax_model("mobilenet_v2", width=24, image=40),
    "model_transformer": _relax_model("transformer", seq=32, hidden=96, heads=4),
}


def as_ir_module(obj):
    """Wrap a ``PrimFunc`` as an ``IRModule`` with one function ``main``; pass modules through.

    Raises
    ------
    TypeError
        If ``obj`` is neither.
    """
    import tvm

    if isinstance(obj, tvm.IRModule):
        return obj
    if isinstance(obj, tvm.tirx.PrimFunc):
        return tvm.IRModule({"main": obj})
    raise TypeError(f"expected an IRModule or a PrimFunc, got {type(obj).__name__}")


def load_module(spec: str):
    """Resolve a CLI ``MODULE`` argument to an ``IRModule``.

    Parameters
    ----------
    spec : str
        A built-in workload name (see :data:`WORKLOADS`, :data:`MODEL_WORKLOADS`) or
        ``path/to/file.py:NAME`` where ``NAME`` is an ``IRModule`` (TIR, or a Relax model
        for whole-model tuning), a ``PrimFunc`` or a function returning one.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the name is unknown, the file fails to import, does not define ``NAME``, or
        ``NAME`` is not (and does not return) a module or PrimFunc.
    """
    if spec in WORKLOADS:
        return as_ir_module(WORKLOADS[spec]())
    if spec in MODEL_WORKLOADS:
        return MODEL_WORKLOADS[spec]()
    if ":" not in spec:
        raise ValueError(
            f"unknown workload {spec!r}: use one of {', '.join(sorted(WORKLOADS) + sorted(MODEL_WORKLOADS))} "
            "or path/to/file.py:NAME"
        )
    path_str, name = spec.rsplit(":", 1)
    path = Path(path_str)
    if not path.is_file():
        raise FileNotFoundError(f"module file {path} does not exist (from MODULE {spec!r})")
    module_spec = importlib.util.spec_from_file_location(f"_tgraph_user_{path.stem}", path)
    user_module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(user_module)
    except Exception as err:  # noqa: BLE001 - the user's file: report it in one line
        raise ValueError(f"{path} failed to import: {type(err).__name__}: {_first_line(err)}") from None
    if not hasattr(user_module, name):
        raise ValueError(f"{path} defines no {name!r}")
    obj = getattr(user_module, name)
    if callable(obj) and not hasattr(obj, "script"):
        try:
            obj = obj()
        except Exception as err:  # noqa: BLE001
            raise ValueError(f"{spec}: calling {name}() failed: {type(err).__name__}: {_first_line(err)}") from None
    try:
        return as_ir_module(obj)
    except TypeError as err:
        raise ValueError(f"{spec}: {name} must be an IRModule, a PrimFunc or a function returning one; {err}") \
            from None


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else "(no message)"
