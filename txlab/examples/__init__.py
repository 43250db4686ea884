"""Complete kernels written with TIRx, each importable on its own (TVM is imported lazily):

* :mod:`txlab.examples.hopper_gemm` — warp-specialized persistent bf16 GEMM for sm_90a.
* :mod:`txlab.examples.bandwidth` — memory-bound companions: a vectorized copy and a row sum.
"""
