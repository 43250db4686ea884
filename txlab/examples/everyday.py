"""Four of the most common kernels, written the way the README teaches (one thread per row or per
element, ``T.exp``/``T.tanh``/``T.erf``/``T.rsqrt``, local accumulators), with numpy references:
notebook 10 checks them on the CPU emulator, ``tests/test_emulator_math.py`` too.

=================  ===========================================================================
``softmax``        a row softmax, one thread per row: max, sum of ``exp(x - max)``, divide
``layernorm``      mean and variance per row, ``(x - mean) * rsqrt(var + eps) * gamma + beta``
``gelu_tanh``      ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``
``gelu_erf``       ``0.5 x (1 + erf(x / sqrt 2))``
``clamp``          ``min(max(x, lo), hi)``
=================  ===========================================================================

``kernel(name)`` gives the ``@T.prim_func``, ``inputs(name)`` its arguments and
``reference(name)`` the numpy function ``txlab.check`` compares with.
"""
from __future__ import annotations

import numpy as np

NAMES = ("softmax", "layernorm", "gelu_tanh", "gelu_erf", "clamp")
ROWS, COLS = 512, 256
N = 1 << 14
THREADS = 128


def _softmax(rows=ROWS, cols=COLS):
    from tvm.script import tirx as T

    @T.prim_func
    def softmax(X: T.Buffer((rows, cols), "float32"), Y: T.Buffer((rows, cols), "float32")):
        T.device_entry()
        bx = T.cta_id([rows // THREADS])
        tx = T.thread_id([THREADS])
        r = bx * THREADS + tx
        m = T.alloc_local((1,), "float32")
        s = T.alloc_local((1,), "float32")
        m[0] = X[r, 0]
        for j in range(1, cols):
            m[0] = T.max(m[0], X[r, j])
        s[0] = T.float32(0)
        for j in range(cols):
            s[0] = s[0] + T.exp(X[r, j] - m[0])
        for j in range(cols):
            Y[r, j] = T.exp(X[r, j] - m[0]) / s[0]
    return softmax


def _layernorm(rows=ROWS, cols=COLS):
    from tvm.script import tirx as T

    @T.prim_func
    def layernorm(X: T.Buffer((rows, cols), "float32"), gamma: T.Buffer((cols,), "float32"),
                  beta: T.Buffer((cols,), "float32"), Y: T.Buffer((rows, cols), "float32")):
        T.device_entry()
        bx = T.cta_id([rows // THREADS])
        tx = T.thread_id([THREADS])
        r = bx * THREADS + tx
        mean = T.alloc_local((1,), "float32")
        var = T.alloc_local((1,), "float32")
        mean[0] = T.float32(0)
        for j in range(cols):
            mean[0] = mean[0] + X[r, j]
        mean[0] = mean[0] / T.float32(cols)
        var[0] = T.float32(0)
        for j in range(cols):
            var[0] = var[0] + (X[r, j] - mean[0]) * (X[r, j] - mean[0])
        var[0] = var[0] / T.float32(cols)
        for j in range(cols):
            Y[r, j] = (X[r, j] - mean[0]) * T.rsqrt(var[0] + T.float32(1e-5)) * gamma[j] + beta[j]
    return layernorm


def _gelu(approximate: str):
    """GELU, elementwise: ``approximate="tanh"`` the tanh form, ``"none"`` the exact erf form (the
    two ``approximate`` choices of ``torch.nn.functional.gelu``)."""
    from tvm.script import tirx as T

    n = N

    def gelu(x):
        if approximate == "tanh":
            return T.float32(0.5) * x * (T.float32(1) + T.tanh(T.float32(0.7978845608) * (x + T.float32(0.044715) * x * x * x)))
        return T.float32(0.5) * x * (T.float32(1) + T.erf(x * T.float32(0.7071067811865476)))

    @T.prim_func
    def gelu_kernel(X: T.Buffer((n,), "float32"), Y: T.Buffer((n,), "float32")):
        T.device_entry()
        bx = T.cta_id([n // THREADS])
        tx = T.thread_id([THREADS])
        i = bx * THREADS + tx
        x = X[i]
        Y[i] = gelu(x)
    return gelu_kernel.with_attr("global_symbol", "gelu_tanh" if approximate == "tanh" else "gelu_erf")


def _clamp():
    from tvm.script import tirx as T

    n = N

    @T.prim_func
    def clamp(X: T.Buffer((n,), "float32"), Y: T.Buffer((n,), "float32"), lo: T.float32, hi: T.float32):
        T.device_entry()
        bx = T.cta_id([n // THREADS])
        tx = T.thread_id([THREADS])
        i = bx * THREADS + tx
        Y[i] = T.min(T.max(X[i], lo), hi)
    return clamp


_BUILDERS = {"softmax": _softmax, "layernorm": _layernorm, "gelu_tanh": lambda: _gelu("tanh"),
             "gelu_erf": lambda: _gelu("none"), "clamp": _clamp}


def kernel(name: str, **shape):
    """The ``@T.prim_func`` of kernel ``name`` (one of :data:`NAMES`); softmax and layernorm take
    ``rows=`` (a multiple of 128) and ``cols=``."""
    if name not in _BUILDERS:
        from txlab.errors import InputError

        raise InputError(f"unknown kernel {name!r}; one of {', '.join(NAMES)}", param="name")
    return _BUILDERS[name](**shape)


def inputs(name: str, seed: int = 0) -> tuple:
    """Arguments for kernel ``name``: random inputs, zeroed outputs."""
    rng = np.random.default_rng(seed)
    if name in ("softmax", "layernorm"):
        x = (rng.standard_normal((ROWS, COLS)) * 3).astype(np.float32)
        y = np.zeros_like(x)
        if name == "softmax":
            return x, y
        g = rng.uniform(0.5, 1.5, COLS).astype(np.float32)
        b = rng.standard_normal(COLS).astype(np.float32)
        return x, g, b, y
    x = (rng.standard_normal(N) * 3).astype(np.float32)
    if name == "clamp":
        x[::97] = np.nan
        return x, np.zeros_like(x), np.float32(-1.5), np.float32(2.0)
    return x, np.zeros_like(x)


def _erf(x):
    import math

    return np.frompyfunc(math.erf, 1, 1)(x).astype(np.float64)


def reference(name: str):
    """numpy reference for kernel ``name`` (float64 math, the output as float32)."""
    def softmax(x, y):
        x = x.astype(np.float64)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)

    def layernorm(x, g, b, y):
        x = x.astype(np.float64)
        m = x.mean(axis=1, keepdims=True)
        v = ((x - m) ** 2).mean(axis=1, keepdims=True)
        return ((x - m) / np.sqrt(v + 1e-5) * g + b).astype(np.float32)

    def gelu_tanh(x, y):
        x = x.astype(np.float64)
        return (0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))).astype(np.float32)

    def gelu_erf(x, y):
        x = x.astype(np.float64)
        return (0.5 * x * (1 + _erf(x / np.sqrt(2)))).astype(np.float32)

    def clamp(x, y, lo, hi):
        # fmaxf/fminf: a NaN input gives the bound
        return np.fmin(np.fmax(x, lo), hi).astype(np.float32)

    return {"softmax": softmax, "layernorm": layernorm, "gelu_tanh": gelu_tanh, "gelu_erf": gelu_erf,
            "clamp": clamp}[name]


#: check tolerances: the float64 reference vs the GPU's float32 (fast math: MUFU exp/tanh)
TOLERANCE = {"softmax": (1e-5, 1e-7), "layernorm": (1e-4, 1e-5), "gelu_tanh": (1e-3, 1e-4),
             "gelu_erf": (1e-5, 1e-6), "clamp": (0.0, 0.0)}
