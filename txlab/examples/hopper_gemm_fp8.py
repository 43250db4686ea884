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

import re
from dataclasses import asdict, dataclass, fields

from txlab.examples.gemm_config import GemmConfig, parse_config as parse_bf16_config

BK = 128  #: e4m3 elements in one 128-byte swizzle row: the K extent of every shared-memory tile
E4M3_MAX = 448.0  #: largest finite float8_e4m3fn


@dataclass(frozen=True)
class Fp8GemmConfig(GemmConfig):
    """:class:`~txlab.examples.gemm_config.GemmConfig` for e4m3 operands. Shared memory per stage is
    the same as bf16's (``(bm + bn)`` rows of 128 bytes), so stage counts carry over; ``promote`` is
    the k-blocks between promotions of the accumulator (0: none, see the module docstring)."""

    dtype: str = "e4m3"
    promote: int = 0

    @property
    def accumulators(self) -> int:
        """fp32 registers per consumer thread holding the tile: wgmma's, plus the promoted copy."""
        return self.m_atoms * self.bn // 2 * (2 if self.promote else 1)

    @property
    def name(self) -> str:
        base = GemmConfig.name.fget(self)  # BMxBNx64_...: the bf16 name; FP8's K tile is 128
        base = re.sub(r"^(\d+x\d+)x\d+", rf"\1x{BK}", base)
        return base + (f"_p{self.promote}" if self.promote else "")

    def validate(self) -> None:
        if self.dtype != "e4m3":
            raise ValueError(f"dtype={self.dtype!r}: the FP8 GEMM takes e4m3 operands (dtype='e4m3')")
        if not isinstance(self.promote, int) or self.promote < 0:
            raise ValueError(f"promote={self.promote!r}: k-blocks between accumulator promotions, an int >= 0 "
                             "(0: accumulate the whole K in the tensor core)")
        super().validate()
        if self.promote and self.accumulators + 32 > self.consumer_regs_:
            raise ValueError(f"{self.name}: promotion keeps two copies of the {self.accumulators // 2} fp32 "
                             f"accumulators per thread ({self.accumulators} + addressing > {self.consumer_regs_} "
                             "registers): use a 128x128 cooperative tile (or bn <= 192), or promote=0")

    def check_shape(self, M: int, N: int, K: int) -> None:
        if K % 16:
            raise ValueError(f"K={K}: TMA loads need the row pitch of A and B (K bytes of e4m3) to be a multiple "
                             f"of 16: pad A and B with zero columns to K={K + (-K) % 16}")
        super().check_shape(M, N, K)

    def to_dict(self) -> dict:
        return {**super().to_dict(), "bk": BK, "name": self.name, "dtype": self.dtype, "promote": self.promote}


_BF16_FIELDS = tuple(f.name for f in fields(GemmConfig))


def from_gemm_config(config: GemmConfig, **changes) -> Fp8GemmConfig:
    """The FP8 twin of a bf16 :class:`GemmConfig` (same tile, ring, schedule, epilogue, order)."""
    base = {f: getattr(config, f) for f in _BF16_FIELDS}
    base.update({k: getattr(config, k) for k in ("dtype", "promote") if hasattr(config, k)})
    cfg = Fp8GemmConfig(**{**base, **changes})
    cfg.validate()
    return cfg


def parse_config(text: str, **defaults) -> Fp8GemmConfig:
    """``"128x256x128_s4_c2"`` (the bf16 grammar with a K tile of 128, ``_e4m3`` optional) and an
    optional ``_pN`` suffix for ``promote=N`` -> Fp8GemmConfig."""
    t = text.strip()
    m = re.fullmatch(r"(\d+x\d+)(?:x128)?(.*?)(?:_e4m3)?(?:_p(\d+))?", t)
    if not m or re.match(r"x\d", m.group(2)):
        raise ValueError(f"FP8 config {text!r}: write it as BMxBNx128_sSTAGES_cCONSUMERS[_pp][_tma][_clMxN][_np][_pN], "
                         "e.g. 128x256x128_s4_c2 or 128x128x128_s6_c2_p4 (K tile 128: one 128-byte row of e4m3)")
    promote = int(m.group(3) or defaults.pop("promote", 0))
    try:
        bf16 = parse_bf16_config(m.group(1) + m.group(2), **defaults)
    except ValueError as exc:
        raise ValueError(f"FP8 config {text!r}: {exc}") from None
    return from_gemm_config(bf16, promote=promote)


# --------------------------------------------------------------------------------------------
#: the accumulator promotion every default configuration uses (see the module docstring)
PROMOTE = 2
#: the configuration when the model has none (and its pick at 8192^3): in the H200 sweep at 8192^3,
#: 128x192 with promotion ran at 0.97 of cuBLAS FP8 (128x128 promoted 0.93, every k-block 0.76)
DEFAULT = Fp8GemmConfig(bn=192, stages=4, epilogue="tma", promote=PROMOTE)

#: what ``txlab.tune`` varies for FP8: hopper_gemm's knobs (the same shared memory per stage, so the
#: same stage range) and ``promote``.
TUNE_SPACE = {"schedule": ["cooperative", "pingpong"], "tile_m": [0, 64, 128], "bn": [128, 192, 256],
              "stages": [3, 4, 5, 6, 7], "consumers": [1, 2], "epilogue": ["direct", "tma"], "l2_group": [4, 8, 16],
              "serpentine": [False, True], "persistent": [True, False], "num_sms": [132, 128],
              "cluster_m": [1, 2], "cluster_n": [1, 2], "promote": [0, 1, 2, 4]}

#: points every FP8 sweep measures first
TUNE_PRIOR = ["128x256x128_s4_c2_tma", "128x256x128_s3_c2_tma", "128x256x128_s4_c2",
              "128x128x128_s6_c2_pp_tma", "128x128x128_s6_c2_tma", "128x128x128_s6_c2_tma_p4",
              "128x128x128_s6_c2_tma_p2", "64x256x128_s4_c2_pp_tma", "128x256x128_s4_c2_tma_cl2x1",
              "128x192x128_s4_c2_tma_p4"]


def tune_space(M: int, N: int, K: int) -> dict:
    """:data:`TUNE_SPACE` with the constraint for one shape (valid config, shape checks)."""
    def constraint(config: dict) -> bool:
        try:
            cfg = Fp8GemmConfig(**config)
            cfg.validate()
            cfg.check_shape(M, N, K)
        except (ValueError, TypeError):
            return False
        return True

    constraint.__name__ = f"hopper_gemm_fp8_valid_{M}x{N}x{K}"
    return {**TUNE_SPACE, "constraint": constraint}


def tune_build(M: int, N: int, K: int):
    """``build(**config)`` for :data:`TUNE_SPACE` at one shape."""
    def build(**config):
        return kernel(M, N, K, Fp8GemmConfig(**config))

    build.__name__ = f"hopper_gemm_fp8_{M}x{N}x{K}"
    return build


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
def tuned_config(M: int, N: int, K: int) -> Fp8GemmConfig:
    """The configuration :func:`build` uses without one (:func:`explain` says why)."""
    return explain(M, N, K).winner


class Fp8Choice:
    """:func:`explain`'s answer: ``winner``, ``source``, ``why`` and the model's ranked candidates."""

    def __init__(self, shape, winner, source, why, model=None):
        self.shape, self.winner, self.source, self.why, self.model = shape, winner, source, why, model

    @property
    def predictions(self):
        return self.model.predictions if self.model is not None else []

    def __str__(self) -> str:
        M, N, K = self.shape
        return f"FP8 GEMM {M}x{N}x{K}: {self.source} -> {self.winner.name}: {self.why}"


def explain(M: int, N: int, K: int, *, num_sms: int = 132) -> Fp8Choice:
    """Why :func:`build` without a config picks what it picks (no GPU needed, a few ms). The time
    model of :mod:`txlab.examples.gemm_model` ranks the bf16 kernel's candidates on the equivalent
    problem -- an FP8 k-block of 128 moves the same bytes and takes the same tensor-core time as a
    bf16 k-block of 64, so ``M x N x K`` in FP8 is ``M x N x K/2`` to the model -- and the best whose
    FP8 twin with :data:`PROMOTE` fits the registers wins. 64-row pingpong tiles are left out: one
    warpgroup issuing m64 wgmmas at a time does not keep up with FP8's rate (0.84 of cuBLAS at
    8192^3 on the H200, against 1.0 for 128x256)."""
    import txlab.examples.gemm_model as gemm_model

    for v, name in ((M, "M"), (N, "N"), (K, "K")):
        if not isinstance(v, int) or v <= 0:
            raise ValueError(f"{name}={v!r}: GEMM sizes are positive integers")
    if K % 16:
        DEFAULT.check_shape(M, N, K)  # raises, naming the padding
    half = -(-K // 2)
    choice = gemm_model.explain(M, N, half, num_sms=num_sms)
    for p in choice.predictions:
        if p.config.pingpong and p.config.bm == 64:
            continue
        try:
            cfg = from_gemm_config(p.config, promote=PROMOTE)
            cfg.check_shape(M, N, K)
        except ValueError:
            continue
        why = (f"the model's best promoted configuration for {M}x{N}x{half} in bf16 terms (same bytes and "
               f"tensor-core time per k-block): {p.tiles} tiles on {p.ctas} CTAs = {p.waves} wave(s), last wave "
               f"{p.tail_idle:.0%} idle, {p.bound}-bound")
        return Fp8Choice((M, N, K), cfg, "model", why, choice)
    return Fp8Choice((M, N, K), DEFAULT, "default", "no model candidate fits this shape", choice)


def kernel(M: int, N: int, K: int, config: Fp8GemmConfig | str | None = None, *, profile: bool = False):
    """The FP8 ``gemm_kernel`` for a config (an :class:`Fp8GemmConfig`, its name, or a bf16
    GemmConfig whose FP8 twin is meant); without one, :func:`tuned_config`'s."""
    from txlab.examples.hopper_gemm import gemm_kernel

    if isinstance(config, str):
        config = parse_config(config)
    elif config is None:
        config = tuned_config(M, N, K)
    elif not isinstance(config, Fp8GemmConfig):
        if not isinstance(config, GemmConfig):
            raise TypeError(f"config={config!r}: pass an Fp8GemmConfig, its name, or None")
        config = from_gemm_config(config)
    config.validate()
    config.check_shape(M, N, K)
    return gemm_kernel(M, N, K, config, profile=profile)


def build(M: int, N: int, K: int, config: Fp8GemmConfig | str | None = None, *, arch: str = "sm_90a",
          profile: bool = False, **kw):
    """Compile the FP8 kernel for one shape; returns a ``txlab.Compiled`` whose parameters are
    ``(A, B, C, scale_a, scale_b)``."""
    from txlab.compiler import compile as compile_kernel

    return compile_kernel(kernel(M, N, K, config, profile=profile), arch=arch, **kw)


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


def config_dict(config: Fp8GemmConfig) -> dict:
    return asdict(config)
