"""The FP8 Hopper GEMM's configuration and its choice for a shape: :class:`Fp8GemmConfig` (a
:class:`~txlab.examples.gemm_config.GemmConfig` with ``dtype="e4m3"`` and ``promote``), its names,
:data:`DEFAULT` and :func:`explain` / :func:`tuned_config`. No TVM here; the kernel is
:mod:`txlab.examples.hopper_gemm_fp8` (which re-exports all of this).
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, fields

from txlab.errors import InputError
from txlab.examples.gemm_config import GemmConfig, check_sizes, parse_config as parse_bf16_config

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
            raise InputError(f"dtype={self.dtype!r}: the FP8 GEMM takes e4m3 operands (dtype='e4m3')")
        if not isinstance(self.promote, int) or self.promote < 0:
            raise InputError(f"promote={self.promote!r}: k-blocks between accumulator promotions, an int >= 0 "
                             "(0: accumulate the whole K in the tensor core)")
        super().validate()
        if self.promote and self.accumulators + 32 > self.consumer_regs_:
            raise InputError(f"{self.name}: promotion keeps two copies of the {self.accumulators // 2} fp32 "
                             f"accumulators per thread ({self.accumulators} + addressing > {self.consumer_regs_} "
                             "registers): use a 128x128 cooperative tile (or bn <= 192), or promote=0")

    def check_shape(self, M: int, N: int, K: int) -> None:
        if K % 16:
            kp = K + (-K) % 16
            raise InputError(f"K={K}: TMA loads need the row pitch of A and B (K bytes of e4m3) to be a multiple "
                             f"of 16: hopper_gemm.build(M, N, K, dtype='e4m3') pads for you (it builds for K={kp} "
                             f"and copies A and B into zero-padded (M, {kp}) and (N, {kp}) buffers on each call), "
                             f"or pad A and B with zero columns to K={kp}")
        if self.split_k > -(-K // BK):  # before the bf16 checks, whose k-steps are of 64: their bound would not hold
            raise InputError(f"split_k={self.split_k} splits K={K} ({-(-K // BK)} k-steps of {BK}) into empty slices: "
                             f"use split_k <= {-(-K // BK)}")
        super().check_shape(M, N, K)

    def to_dict(self) -> dict:
        return {**super().to_dict(), "bk": BK, "name": self.name, "dtype": self.dtype, "promote": self.promote}


_BF16_FIELDS = tuple(f.name for f in fields(GemmConfig))


class Fp8AccumulationWarning(UserWarning):
    """An FP8 build runs without fp32 promotion of its accumulator although none was asked for."""


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
        raise InputError(f"FP8 config {text!r}: write it as BMxBNx128_sSTAGES_cCONSUMERS[_pp][_tma][_clMxN][_np][_pN], "
                         "e.g. 128x256x128_s4_c2 or 128x128x128_s6_c2_p4 (K tile 128: one 128-byte row of e4m3)")
    promote = int(m.group(3) or defaults.pop("promote", 0))
    try:
        bf16 = parse_bf16_config(m.group(1) + m.group(2), **defaults)
    except ValueError as exc:
        raise InputError(f"FP8 config {text!r}: {exc}") from None
    return from_gemm_config(bf16, promote=promote)


# --------------------------------------------------------------------------------------------
#: the accumulator promotion every default configuration uses (see the module docstring)
PROMOTE = 2
#: the configuration when the model has none (and its pick at 8192^3): in the H200 sweep at 8192^3,
#: 128x192 with promotion ran at 0.97 of cuBLAS FP8 (128x128 promoted 0.93, every k-block 0.76)
DEFAULT = Fp8GemmConfig(bn=192, stages=4, epilogue="tma", promote=PROMOTE)

def tuned_config(M: int, N: int, K: int, *, num_sms: int = 132) -> Fp8GemmConfig:
    """The configuration :func:`build` uses without one (:func:`explain` says why)."""
    return explain(M, N, K, num_sms=num_sms).winner


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

    def __repr__(self) -> str:
        return f"Fp8Choice(shape={self.shape!r}, source={self.source!r}, winner={self.winner.name!r})"

    def to_dict(self) -> dict:
        """As the bf16 choice's ``to_dict`` (shape, source, winner, why), with the winner's fields and the problem the
        bf16 model ranked (``M x N x K/2``); no times: the model's are of that bf16 problem, not of this one."""
        return {"shape": list(self.shape), "dtype": "e4m3", "source": self.source, "winner": self.winner.name,
                "winner_config": self.winner.to_dict(), "why": self.why,
                "model_shape": list(self.model.shape) if self.model is not None else None}


def explain(M: int, N: int, K: int, *, num_sms: int = 132) -> Fp8Choice:
    """Why :func:`build` without a config picks what it picks (no GPU needed, a few ms). The time
    model of :mod:`txlab.examples.gemm_model` ranks the bf16 kernel's candidates on the equivalent
    problem -- an FP8 k-block of 128 moves the same bytes and takes the same tensor-core time as a
    bf16 k-block of 64, so ``M x N x K`` in FP8 is ``M x N x K/2`` to the model -- and the best whose
    FP8 twin with :data:`PROMOTE` fits the registers wins, split-K included (serial or parallel fix-up, as
    bf16's). 64-row tiles of one warpgroup (pingpong, or one consumer) are left out, except where the kernel's M
    (the user's M; N for a tile of the transposed output) is 64 or fewer rows, which stream the other operand
    (16x8192x8192: 64x64 0.97 of cuBLAS FP8, 128x128 0.85): one warpgroup issuing
    m64 wgmmas alone does not keep up with FP8's rate (64x256 pingpong 0.84 of cuBLAS at 8192^3 on the
    H200, against 1.0 for 128x256; at 1024x1024x32768 64x128 split in 2 0.74, 128x128 split in 2 1.00);
    so are bf16's in-between tile widths unswapped (:data:`gemm_model.FIT_WIDTHS`: 128x144 at 1536^3 ran at 0.62x of
    128x192's FP8 speed) and the widths sized to the grid. Split tails (the last wave's tiles split) are taken as
    the model ranks them."""
    import txlab.examples.gemm_model as gemm_model

    M, N, K = check_sizes(M, N, K)
    if K % 16:
        DEFAULT.check_shape(M, N, K)  # raises, naming the padding
    half = -(-K // 2)
    # the model alone: the measured neighbours' corrections (gemm_neighbours) are of bf16 runs
    choice = gemm_model.explain(M, N, half, num_sms=num_sms, neighbours=False)
    for p in choice.predictions:
        # one warpgroup issuing alone, except where the kernel's M is decode-sized (the user's M, or N where the
        # output is tiled transposed): the tensor cores wait on the other operand's stream anyway
        if p.config.bm == 64 and (p.config.pingpong or p.config.consumers == 1) and (N if p.config.swap_ab else M) > 64:
            continue
        if p.config.split_k > 1 and p.config.cluster_size > 1:  # measured in bf16 only
            continue
        # split tails are taken as ranked (H200, 2026-12-03, r14g/r14h: 9 of 9 FP8 shapes whose pick they moved
        # gained, 1120x6128x64768 0.74 -> 0.98 of cuBLAS FP8; the one short-K shape where a tail lost 7 %,
        # 1360x7712x4864, the model does not give one)
        # H200, 1536^3 e4m3: 128x144 ran at 0.62x of 128x192's speed; a swapped tile stages 64-column rows whatever
        # its width (320x8192x8192: 128x160 swapped 0.98 of cuBLAS FP8, 128x192 unswapped 0.85)
        if p.config.bn in gemm_model.FIT_WIDTHS and not p.config.swap_ab:
            continue
        # the widths sized to the grid (gemm_model.FILL_WIDTHS beyond FIT_WIDTHS): measured in bf16 only
        if p.config.bn not in gemm_model.FIXED_WIDTHS + gemm_model.FIT_WIDTHS:
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


def resolve(M: int, N: int, K: int, config=None, *, num_sms: int = 132) -> Fp8GemmConfig:
    """The :class:`Fp8GemmConfig` to build for a config given as one, as its name, as a bf16
    GemmConfig (its FP8 twin), or None (:func:`tuned_config`); validated for this shape. A bf16
    GemmConfig's twin promotes its accumulator every :data:`PROMOTE` k-blocks, as :func:`build`'s own
    choices do; where two copies of its accumulators do not fit the registers it runs with ``promote=0``
    (the tensor core's own FP8 accumulation) and says so in an :class:`Fp8AccumulationWarning`."""
    M, N, K = check_sizes(M, N, K)
    if isinstance(config, str):
        config = parse_config(config)
    elif config is None:
        config = tuned_config(M, N, K, num_sms=num_sms)
    elif not isinstance(config, Fp8GemmConfig):
        if not isinstance(config, GemmConfig):
            raise InputError(f"config={config!r}: pass an Fp8GemmConfig, its name (e.g. '128x192x128_s4_c2_tma_p2'), "
                             "a bf16 GemmConfig (its FP8 twin) or None", param="config")
        try:
            config = from_gemm_config(config, promote=PROMOTE)
        except InputError:
            config = from_gemm_config(config, promote=0)
            warnings.warn(Fp8AccumulationWarning(
                f"FP8 {config.name}: the {config.bm}x{config.bn} tile's accumulators fit the registers only once, so "
                "it accumulates in the tensor core's FP8 mode (promote=0; 13 % off at K = 8192 on same-sign data on "
                "the H200). For fp32 promotion pass a tile of bn <= 192 (e.g. '128x192x128_s4_c2_tma_p2'); to keep "
                "this one and silence this, pass Fp8GemmConfig(..., promote=0) or its name"), stacklevel=3)
    config.validate()
    config.check_shape(M, N, K)
    return config
