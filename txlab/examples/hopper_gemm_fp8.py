"""The Hopper GEMM in FP8: ``C = scale_a * scale_b * (A @ B.T)``, e4m3 in, bf16 out, fp32 accumulation.

The same warp-specialised, persistent kernel as :mod:`txlab.examples.hopper_gemm` (TMA ring, producer
and consumer warpgroups, ``setmaxnreg``, grouped tile order, direct or TMA epilogue, clusters), built
from a :class:`Fp8GemmConfig`: the operands are ``float8_e4m3fn``, both K-major as FP8 wgmma requires
(``A (M, K)`` row-major, ``B (N, K)`` row-major, the layout ``torch._scaled_mm`` takes as its
column-major second operand), one 128-byte swizzle row holds 128 of them (the K tile is 128), and
each k32 step is one ``wgmma.m64nBNk32.f32.e4m3.e4m3`` (SASS ``QGMMA``). The per-tensor scales are two
fp32 device tensors of one element (as ``torch._scaled_mm``'s ``scale_a``/``scale_b``), multiplied into
the fp32 result before its rounding to bf16. Kernel parameters: ``(A, B, C, scale_a, scale_b)``.

Accumulation: Hopper's tensor cores add FP8 products into the accumulator with fewer mantissa bits
than fp32 (DeepSeek-V3 measured about 14 on H800). ``promote=p`` drains the wgmma pipeline every
``p`` k-blocks (128 K each), adds the tensor core's partial accumulator into a second set of fp32
registers and restarts it at zero, as CUTLASS's FP8 mainloop without fast accumulation and DeepGEMM
do; ``promote=0`` accumulates the whole K in the tensor core. Measured on an H200 (rel. error against
float64, 4096x4096x8192): on N(0, 1) inputs promote=0 gives 2.6e-3 (7.2e-3 at K = 65536), but on
same-sign inputs (|N(0, 1)|, where the sum grows with K) 1.3e-1 (5.1e-1 at K = 65536) -- exactly what
``torch._scaled_mm(..., use_fast_accum=True)`` gives; promote=4 gives 5.6e-3, promote=1 1.9e-3, the
same as cuBLAS's default (``use_fast_accum=False``), which therefore promotes. So the default
promotes (every 2 k-blocks); ``promote=0`` is the fast-accumulation mode for callers who know their
data. The second register set doubles the accumulators, so promotion needs tiles with at most 96
accumulators per thread (128x128 or 128x192 cooperative, 64-row tiles); ``docs/hopper-gemm-notes.md``
has the measurements.

Nothing here imports TVM until a kernel is built.
"""
from __future__ import annotations

from txlab.examples.gemm_fp8_config import (  # noqa: F401 - the FP8 GEMM's public names, in one place
    BK,
    DEFAULT,
    E4M3_MAX,
    PROMOTE,
    Fp8AccumulationWarning,
    Fp8Choice,
    Fp8GemmConfig,
    explain,
    from_gemm_config,
    parse_config,
    resolve,
    tuned_config,
)
from txlab.examples.gemm_config import shape_builder, shape_space

#: what ``txlab.tune`` varies for FP8: hopper_gemm's knobs (the same shared memory per stage, so the
#: same stage range) and ``promote``.
TUNE_SPACE = {"schedule": ["cooperative", "pingpong"], "tile_m": [0, 64, 128], "bn": [128, 192, 256],
              "stages": [3, 4, 5, 6, 7], "consumers": [1, 2], "epilogue": ["direct", "tma"], "l2_group": [4, 8, 16],
              "serpentine": [False, True], "persistent": [True, False], "num_sms": [132, 128],
              "cluster_m": [1, 2], "cluster_n": [1, 2], "promote": [0, 1, 2, 4]}

#: points every FP8 sweep measures first
TUNE_PRIOR = ["128x192x128_s4_c2_tma_p2", "128x192x128_s4_c2_tma_p4", "128x256x128_s4_c2_tma",
              "128x256x128_s3_c2_tma", "128x256x128_s4_c2", "128x128x128_s6_c2_pp_tma", "128x128x128_s6_c2_tma", "128x128x128_s6_c2_tma_p4",
              "128x128x128_s6_c2_tma_p2", "64x256x128_s4_c2_pp_tma", "128x256x128_s4_c2_tma_cl2x1",
              "128x192x128_s4_c2_tma_p4"]


def tune_space(M: int, N: int, K: int) -> dict:
    """:data:`TUNE_SPACE` with the constraint for one shape (valid config, shape checks)."""
    return shape_space(TUNE_SPACE, Fp8GemmConfig, M, N, K, "hopper_gemm_fp8")


def tune_build(M: int, N: int, K: int):
    """``build(**config)`` for :data:`TUNE_SPACE` at one shape."""
    return shape_builder(kernel, Fp8GemmConfig, M, N, K, "hopper_gemm_fp8")


def tune_inputs(M: int, N: int, K: int, seed: int = 0):
    """``inputs(config)``: ``A (M, K)``, ``B (N, K)`` e4m3 (quantised standard normals), ``C (M, N)``
    bf16 and the two scales, made once per process and shape."""
    held: dict = {}

    def inputs(config=None):
        if not held:
            import ml_dtypes
            import numpy as np

            rng = np.random.default_rng(seed)
            a, sa = quantize(rng.standard_normal((M, K), dtype=np.float32))
            b, sb = quantize(rng.standard_normal((N, K), dtype=np.float32))
            held["v"] = (a, b, np.zeros((M, N), ml_dtypes.bfloat16), sa, sb)
        return held["v"]

    inputs.__name__ = f"hopper_gemm_fp8_inputs_{M}x{N}x{K}_s{seed}"
    return inputs


# --------------------------------------------------------------------------------------------
def kernel(M: int, N: int, K: int, config: Fp8GemmConfig | str | None = None, *, profile: bool = False):
    """The FP8 ``gemm_kernel`` for a config (an :class:`Fp8GemmConfig`, its name, or a bf16
    GemmConfig whose FP8 twin is meant); without one, :func:`tuned_config`'s."""
    from txlab.examples.hopper_gemm import gemm_kernel

    return gemm_kernel(M, N, K, resolve(M, N, K, config), profile=profile)


def build(M: int, N: int, K: int, config: Fp8GemmConfig | str | None = None, *, arch: str = "sm_90a",
          profile: bool = False, **kw):
    """Compile the FP8 kernel for one shape; returns a ``txlab.Compiled`` whose parameters are
    ``(A, B, C, scale_a, scale_b)``, and a split-K configuration's workspace after them (made and kept
    by the Compiled when called with five: see ``hopper_gemm.build``). K % 16 != 0: built for K rounded
    up to 16, the Compiled copies A and B into zero-padded buffers it keeps on each call (``padded_k``,
    ``pad_bytes``; ``kernel_args(...)`` for launching ``.executable`` with :func:`kernel_arg`)."""
    from txlab.examples.hopper_gemm import build as build_gemm

    return build_gemm(M, N, K, config, arch=arch, profile=profile, dtype="e4m3", **kw)


def quantize(x, scale=None):
    """Per-tensor e4m3 quantisation of ``x`` (numpy array or torch tensor): returns
    ``(x_e4m3, scale)`` with ``x ~= x_e4m3 * scale``; ``scale`` defaults to ``amax / 448``. The scale
    comes back as a one-element fp32 array/tensor, the form the kernel (and ``torch._scaled_mm``) takes."""
    if hasattr(x, "detach"):  # torch
        import torch

        xf = x.float()
        s = (xf.abs().amax() / E4M3_MAX).clamp(min=1e-12) if scale is None else torch.as_tensor(scale).float()
        s = s.reshape(1).to(xf.device)
        return (xf / s).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn), s
    import ml_dtypes
    import numpy as np

    xf = np.asarray(x, np.float32)
    s = np.float32(max(float(np.abs(xf).max()) / E4M3_MAX, 1e-12) if scale is None else scale)
    q = np.clip(xf / s, -E4M3_MAX, E4M3_MAX).astype(ml_dtypes.float8_e4m3fn)
    return q, np.array([s], np.float32)


def reference(A, B, scale_a=1.0, scale_b=1.0):
    """``scale_a * scale_b * (A @ B.T)`` in float64 from the e4m3 inputs (numpy or torch; on the GPU
    through torch when the inputs are there), the reference the FP8 kernel is checked against."""
    if hasattr(A, "detach"):
        import torch

        sa = torch.as_tensor(scale_a, device=A.device).double().reshape(())
        sb = torch.as_tensor(scale_b, device=A.device).double().reshape(())
        return (A.double() @ B.double().T) * (sa * sb)
    import numpy as np

    a, b = np.asarray(A).astype(np.float64), np.asarray(B).astype(np.float64)
    return (a @ b.T) * (float(np.asarray(scale_a).reshape(-1)[0]) * float(np.asarray(scale_b).reshape(-1)[0]))


def kernel_arg(t):
    """A torch float8 tensor as the kernel's runtime takes it: itself where torch's DLPack export
    carries float8, else a TVM view of its bytes (``uint8`` through DLPack) re-typed as e4m3; the
    view keeps the tensor alive. Other values pass through."""
    if type(t).__module__.split(".")[0] != "torch" or "float8" not in str(t.dtype):
        return t
    import tvm

    dtype = str(t.dtype).removeprefix("torch.")
    try:
        view = tvm.runtime.from_dlpack(t)
        if str(view.dtype) == dtype:
            return view
    except Exception:  # noqa: BLE001 - older DLPack exporters reject float8: go through bytes
        pass
    import torch

    return tvm.runtime.from_dlpack(t.contiguous().view(torch.uint8))._create_view(tuple(t.shape), dtype)


def rel_error(C, ref) -> float:
    """``||C - ref|| / ||ref||`` (Frobenius), C in any float type."""
    if hasattr(C, "detach"):
        import torch

        d = C.double() - ref
        return (torch.linalg.vector_norm(d) / torch.linalg.vector_norm(ref)).item()
    import numpy as np

    c = np.asarray(C).astype(np.float64)
    return float(np.linalg.norm(c - ref) / np.linalg.norm(ref))
