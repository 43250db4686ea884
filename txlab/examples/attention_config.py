"""The Hopper FlashAttention kernel's configuration (:class:`AttentionConfig`), its shape checks and
tune space: what :mod:`txlab.examples.hopper_attention` builds from and
:mod:`txlab.examples.attention_model` ranks. No TVM here.
"""

from __future__ import annotations

from numbers import Integral

import math
from dataclasses import asdict, dataclass

import txlab.errors as _errors

#: what ``txlab.tune`` may vary (see :class:`AttentionConfig`)
TUNE_SPACE = {
    "bn": [64, 96, 128, 176],
    "stages": [2, 3, 4],
    "consumers": [1, 2],
    "pingpong": [False, True],
    "overlap": [False, True],
    "scheduler": ["auto", "linear", "lpt"],
    "swizzle": [0, 1, 2, 4, 8, 16],
    "num_sms": [132],
}

HEAD_DIMS = (64, 128, 256)
SMEM_LIMIT = 227 * 1024  # bytes of dynamic shared memory per CTA on sm_90
#: batch * heads * seqlen_q at most: the kernel's LSE index and its scheduler's task index (a task count plus
#: the CTAs' stride past it) are int32 (at D 64 that is already 128 GiB of Q)
MAX_QUERY_ROWS = 2**30
#: seqlen_kv at most: the key coordinates and the causal block count reach up to two blocks past it, in int32
MAX_SEQLEN_KV = 2**31 - 1024


@dataclass(frozen=True)
class AttentionConfig:
    """Knobs of :func:`attention_kernel`.

    ``bn``: key/value rows per block (a multiple of 16, at most 256); ``stages``: depth of the
    K/V ring; ``consumers``: warpgroups of 64 query rows each (the tile is ``64 * consumers``
    rows); ``pingpong``: two consumers alternate on the tensor cores (needs ``consumers == 2``);
    ``overlap``: issue the next ``Q Kᵀ`` before this block's ``P V``; ``scheduler``: ``"lpt"``,
    ``"linear"`` or ``"auto"`` (LPT when causal); ``swizzle``: heads the LPT scheduler keeps together
    for L2 reuse of their K/V (a power of two; 0: :func:`l2_swizzle`'s choice); ``num_sms``:
    persistent CTAs at most."""

    bn: int = 128
    stages: int = 2
    consumers: int = 2
    pingpong: bool = True
    overlap: bool = True
    scheduler: str = "auto"
    num_sms: int = 132
    swizzle: int = 0

    @property
    def bm(self) -> int:
        return 64 * self.consumers

    @property
    def threads(self) -> int:
        return 128 * (self.consumers + 1)

    @property
    def name(self) -> str:
        """``128x128_s2_pp_ov``: tile rows x key block, ring depth, ping-pong, overlap, then what is not
        the default (scheduler, swizzle, SM cap)."""
        return (
            f"{self.bm}x{self.bn}_s{self.stages}{'_pp' if self.pingpong else ''}{'_ov' if self.overlap else ''}"
            f"{'' if self.scheduler == 'auto' else '_' + self.scheduler}{f'_swz{self.swizzle}' if self.swizzle else ''}"
            f"{'' if self.num_sms == 132 else f'_sm{self.num_sms}'}"
        )

    def smem_bytes(self, head_dim: int) -> int:
        """Q tile + K and V rings + the O staging tiles + barriers (q full/empty, K/V full/empty)."""
        tiles = (2 * self.bm + 2 * self.stages * self.bn) * head_dim * 2
        return tiles + 8 * (2 + 4 * self.stages)

    def producer_regs(self) -> int:
        return 24

    def consumer_regs(self) -> int:
        """``setmaxnreg`` targets. The CTA's register file is fixed at launch (ptxas' count, 168 per
        thread for 384 threads under ``__launch_bounds__(384, 1)``); ``setmaxnreg.inc`` waits until
        the other warpgroups' ``.dec`` have freed enough, so 128·producer + 128·consumers·consumer must
        fit in it or the consumers wait forever: 24 + 2·240 = 3·168."""
        return 240

    def validate(self, head_dim: int | None = None) -> None:
        bad = _errors.InputError
        for f in ("pingpong", "overlap"):
            v = getattr(self, f)
            if v is not True and v is not False and v not in (0, 1):
                raise bad(f"{f}={v!r}: True or False")
        if not isinstance(self.bn, int) or self.bn % 16 or not 16 <= self.bn <= 256:
            raise bad(f"bn={self.bn!r}: key blocks are a multiple of 16 rows, 16..256 (try bn=128)")
        if self.consumers not in (1, 2):
            raise bad(f"consumers={self.consumers!r}: 1 or 2 consumer warpgroups (64 query rows each)")
        if not isinstance(self.stages, int) or self.stages < 1:
            raise bad(f"stages={self.stages!r}: the K/V ring needs at least 1 stage (try stages=2)")
        if self.pingpong and self.consumers != 2:
            raise bad("pingpong=True orders two consumer warpgroups: use consumers=2 or pingpong=False")
        if self.scheduler not in ("auto", "linear", "lpt"):
            raise bad(f"scheduler={self.scheduler!r}: 'auto', 'linear' or 'lpt'")
        if not isinstance(self.num_sms, int) or self.num_sms < 1:
            raise bad(f"num_sms={self.num_sms!r}: a positive number of persistent CTAs")
        if not isinstance(self.swizzle, int) or self.swizzle < 0 or self.swizzle & (self.swizzle - 1):
            raise bad(f"swizzle={self.swizzle!r}: 0 (automatic) or a power of two of heads kept together")
        if head_dim is not None:
            regs = self.bn // 2 + head_dim // 2 + self.bn // 4
            if regs > 200:
                raise bad(
                    f"bn={self.bn} with head_dim={head_dim}: {regs} registers of S, O and P per "
                    "thread leave too few of the 240 a consumer has; use a smaller bn"
                )
            if self.smem_bytes(head_dim) > SMEM_LIMIT:
                raise bad(
                    f"bn={self.bn}, stages={self.stages}, head_dim={head_dim}: "
                    f"{self.smem_bytes(head_dim)} bytes of shared memory > {SMEM_LIMIT}; "
                    "use fewer stages or a smaller bn"
                )

    def to_dict(self) -> dict:
        return asdict(self)


def default_config(head_dim: int, causal: bool) -> AttentionConfig:
    """FlashAttention-3's choices for H100-class parts: 128-row query tiles over two consumer
    warpgroups; 128-row key blocks at head_dim 128, 2 stages; deeper rings at head_dim 64. At
    head_dim 256 the Q tile, the O staging tiles and a 2-stage K/V ring of 48-row blocks fill 224 KiB
    of shared memory (64-row blocks would need 256 KiB), and O takes 128 of a consumer's registers."""
    if head_dim == 64:
        return AttentionConfig(bn=128, stages=3)
    if head_dim == 256:
        return AttentionConfig(bn=48, stages=2)
    return AttentionConfig(bn=128, stages=2)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def check_shape(batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim) -> tuple:
    """The six sizes as Python ints (numpy's integers too), or :class:`~txlab.errors.InputError` naming the size that
    is wrong and the fix: also a shape past the kernel's 32-bit indices (:data:`MAX_QUERY_ROWS` query rows,
    :data:`MAX_SEQLEN_KV` keys) or past a TMA descriptor's 2**40-byte stride (K and V of one batch)."""
    bad = _errors.InputError
    for name, v in (
        ("batch", batch),
        ("heads", heads),
        ("kv_heads", kv_heads),
        ("seqlen_q", seqlen_q),
        ("seqlen_kv", seqlen_kv),
    ):
        if not isinstance(v, Integral) or isinstance(v, bool) or v < 1:
            raise bad(f"{name}={v!r}: a positive int", param=name)
        if v >= 2**31:
            raise bad(
                f"{name}={v}: the kernel's TMA coordinates and indices are 32-bit: keep it below 2**31", param=name
            )
    if not isinstance(head_dim, Integral) or isinstance(head_dim, bool) or head_dim not in HEAD_DIMS:
        raise bad(f"head_dim={head_dim!r}: this kernel is built for head_dim in {HEAD_DIMS}")
    if heads % kv_heads:
        raise bad(
            f"kv_heads={kv_heads} does not divide heads={heads}: grouped-query attention shares "
            "each kv head among heads // kv_heads query heads; pick a divisor"
        )
    rows = int(batch) * int(heads) * int(seqlen_q)
    if rows > MAX_QUERY_ROWS:
        raise bad(
            f"batch*heads*seqlen_q = {rows:,} query rows: the kernel indexes LSE and counts its tasks in 32-bit "
            f"ints, which holds at most 2**30 = {MAX_QUERY_ROWS:,} rows; split the batch (or the heads) over "
            "several calls",
            param="batch",
        )
    if seqlen_kv > MAX_SEQLEN_KV:
        raise bad(
            f"seqlen_kv={seqlen_kv}: the kernel's 32-bit key coordinates run up to two blocks past seqlen_kv; "
            f"keep it at most 2**31 - 1024 = {MAX_SEQLEN_KV:,} (split the keys and merge the partial results "
            "by their LSE)",
            param="seqlen_kv",
        )
    stride = int(kv_heads) * int(seqlen_kv) * int(head_dim) * 2
    if stride >= 2**40:
        raise bad(
            f"kv_heads*seqlen_kv*head_dim*2 = {stride:,} bytes: K and V's batch stride is past what a TMA "
            "descriptor takes (< 2**40 bytes); split the heads (kv heads with their query heads) over several calls",
            param="kv_heads",
        )
    return tuple(int(v) for v in (batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim))


def as_config(config) -> AttentionConfig | None:
    """``config`` if it is an :class:`AttentionConfig` or None (the caller's choice), else an
    :class:`~txlab.errors.InputError` saying what to pass."""
    if config is None or isinstance(config, AttentionConfig):
        return config
    hint = " (AttentionConfig(**d) makes one from a dict of its fields)" if isinstance(config, dict) else ""
    raise _errors.InputError(f"config={config!r}: pass an AttentionConfig or None{hint}", param="config")


def check_causal(causal) -> bool:
    """``causal`` as a bool, or an :class:`~txlab.errors.InputError` unless it is one."""
    if causal is not True and causal is not False and causal not in (0, 1):
        raise _errors.InputError(f"causal={causal!r}: True (the bottom-right causal mask) or False", param="causal")
    return bool(causal)


def visible_pairs(seqlen_q: int, seqlen_kv: int, causal: bool) -> int:
    """The (query, key) pairs one head computes: ``Sq·Skv``, or under the kernel's causal mask (aligned to the
    bottom-right corner: query ``i`` sees keys ``j <= i + Skv - Sq``, the only alignment it has) exactly
    ``n·(Skv - n) + n·(n + 1)/2`` with ``n = min(Sq, Skv)``: the last ``n`` query rows see ``Skv - n`` keys plus
    1, 2, ... n more, the first ``Sq - n`` rows none. ``S(S + 1)/2`` when ``Sq == Skv`` (torch's ``is_causal``
    is the same mask there); ``Skv·(Skv + 1)/2`` for ``Sq >= Skv``; nearly ``Sq·Skv`` for ``Sq << Skv``."""
    sq, sk = int(seqlen_q), int(seqlen_kv)
    if not causal:
        return sq * sk
    n = min(sq, sk)
    return n * (sk - n) + n * (n + 1) // 2


def flops(batch, heads, seqlen_q, seqlen_kv, head_dim, causal) -> float:
    """4·B·H·D per visible (query, key) pair (two GEMMs, :func:`visible_pairs`): 4·B·H·Sq·Skv·D, and under the
    causal mask only the pairs it leaves (about half of them when ``Sq == Skv``, FlashAttention's convention,
    but all but a triangle for ``Sq << Skv`` and a triangle of ``Skv`` for ``Sq >> Skv``)."""
    return float(4 * int(batch) * int(heads) * visible_pairs(seqlen_q, seqlen_kv, causal) * int(head_dim))


def l2_swizzle(seqlen_kv: int, head_dim: int) -> int:
    """Heads grouped together by the LPT scheduler: as many as keep their K and V in ~50 MB of L2."""
    one = seqlen_kv * head_dim * 2 * 2
    return 1 if one >= 50 * 2**20 else 1 << int(math.log2(50 * 2**20 // one))


def tune_valid(config: dict, head_dim: int = 128) -> bool:
    """The space's constraint: the configuration builds at ``head_dim`` (shared memory, registers)."""
    try:
        AttentionConfig(**config).validate(head_dim)
    except (_errors.InputError, TypeError):
        return False
    return True


def tune_space(head_dim: int) -> dict:
    """:data:`TUNE_SPACE` with :func:`tune_valid` at ``head_dim`` as its constraint."""

    def constraint(config: dict) -> bool:
        return tune_valid(config, head_dim)

    constraint.__name__ = f"hopper_attention_valid_d{head_dim}"
    return {**TUNE_SPACE, "constraint": constraint}


def tune_candidates(batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, causal=False) -> list[dict]:
    """The configurations a sweep measures at one shape (valid at ``head_dim``, default first): the
    default; ping-pong off; the other key-block sizes and ring depths that fit shared memory; the other
    scheduler; and, causal, the LPT scheduler's L2 swizzle from 1 to 16 heads."""
    base = default_config(head_dim, causal).to_dict()
    out = [base]

    def add(**kw):
        c = {**base, **kw}
        if tune_valid(c, head_dim) and c not in out:
            out.append(c)

    add(pingpong=False)
    if head_dim == 128:
        for bn, stages in ((96, 2), (96, 3), (64, 3), (64, 4)):
            add(bn=bn, stages=stages)
    else:
        for bn, stages in ((128, 2), (128, 4), (176, 2), (176, 3), (96, 4), (64, 4)):
            add(bn=bn, stages=stages)
    add(scheduler="linear" if causal else "lpt")
    if causal:
        auto = min(l2_swizzle(seqlen_kv, head_dim), batch * heads)
        for z in (1, 2, 4, 16):
            if z != auto and z <= batch * heads:
                add(swizzle=z)
    return out
