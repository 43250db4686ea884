"""Loads, calls and diagnostics: __ldg, inline CUDA functions, printf, assertions, special registers."""
from __future__ import annotations

import numpy as np

from txlab.api_examples.example import Example, kernel_source

CALLS = kernel_source(
    "loads_and_calls", 'X: T.Buffer((64,), "float32"), Out: T.Buffer((3, 64), "float32")',
    threads=64,
    preamble='''
SQUARE = """
__device__ __forceinline__ float txlab_square(float x) { return x * x; }
"""
''',
    body='''
    v = T.cuda.ldg(T.address_of(X[tx]), "float32")
    Out[0, tx] = v
    Out[1, tx] = T.cuda.func_call("txlab_square", v, source_code=SQUARE, return_type="float32")
    Out[2, tx] = T.Cast("float32", T.cuda.mov_sreg(32, "laneid"))
    T.cuda.trap_when_assert_failed(v == v)  # traps only on NaN input
    if tx == 0:
        T.cuda.printf("txlab: X[0]=%f\\\\n", v)
''',
)

EXAMPLES = [
    Example(
        id="loads_and_calls", source=CALLS, arch="sm_80",
        emits={"Tx.cuda.func_call": r"txlab_square", "Tx.cuda.mov_sreg": r"fetch_register_laneid|%laneid"},
        uses=("Tx.cuda.ldg", "Tx.cuda.func_call", "Tx.cuda.mov_sreg",
              "Tx.cuda.trap_when_assert_failed", "Tx.cuda.printf"),
        inputs=lambda: [np.arange(64, dtype=np.float32) - 20, np.zeros((3, 64), np.float32)],
        expected=lambda X, O: np.stack([X, X * X, np.arange(64) % 32]).astype(np.float32),
    ),
]
