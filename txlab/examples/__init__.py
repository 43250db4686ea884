"""Complete kernels written with TIRx, each importable on its own (TVM is imported lazily):

* :mod:`txlab.examples.hopper_gemm` — warp-specialized persistent bf16 GEMM for sm_90a.
* :mod:`txlab.examples.blackwell_gemm` — its sm_100a counterpart (tcgen05, TMEM, cta_group::2): a
  worked example that runs on the CPU emulator, not a benchmark.
* :mod:`txlab.examples.bandwidth` — memory-bound companions: a vectorized copy and a row sum.
"""
