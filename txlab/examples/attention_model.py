"""Choosing a configuration of the Hopper FlashAttention kernel: the measured table, then a model.

``hopper_attention.build(...)`` without a config takes, in order:

1. the shipped table's entry for exactly this shape (``txlab/data/hopper_attention_tuned.json``: the
   fastest correct candidate an H200 sweep measured, ``scripts/attention_tune_h200.py``), verified on
   load (format, SHA-256 of the body, every configuration valid for its shape and correct when
   measured, every time positive);
2. else :func:`choose`: the candidates of the shape (``hopper_attention.tune_candidates`` and the
   winners of the nearest measured shapes) each get a predicted time and the fastest wins.
   :func:`explain` shows the candidates, their predicted times and why the winner won.

The prediction, per candidate: a cost model's time, times the ratio *measured / model* of the same
configuration on the two nearest measured shapes of the same head_dim and masking (weighted by
nearness; a shape's median ratio where it did not measure this configuration). A candidate replaces
the default configuration only when predicted :data:`MARGIN` faster (the sweep's run-to-run noise).
The cost model, per CTA (one persistent CTA per SM, tasks handed out with the scheduler's own static
stride):

* each task (batch, head, 64·consumers query rows) streams its key blocks: the causal ones only up to
  the diagonal; a key block costs the larger of its two GEMMs on the tensor cores
  (``4 · bm · bn · head_dim`` flops at the SM's peak), its online softmax (``bm · bn`` exp2 on the
  SFU plus the row max/sum and the O rescale) and feeding its K and V tiles into shared memory;
* the softmax is exposed in part when ping-pong or the intra-warpgroup overlap is off;
* per task: the Q load, the epilogue (``bm · head_dim`` outputs through shared memory and TMA) and
  the pipeline's fill; per masked block (the diagonal, a ragged tail) the element-wise mask;
* the busiest CTA (the scheduler's order decides which tasks share a CTA) sets the time.

Its coefficients (:data:`CALIBRATION`) are fitted (:func:`calibrate`: non-negative least squares on
relative error, the softmax rate by a grid search) to the 93 candidates the H200 sweep measured (9%
rms). At a fixed 128-row tile the K/V feed and the GEMMs both scale with ``bn · head_dim``, so the fit
cannot tell them apart; the feed rate's grid starts where the tensor cores bind (ncu: tensor pipe 83%
active). :func:`leave_one_out` re-chooses each measured shape from a table without it: within 2% of
that shape's measured best on 8 of the 10, the two others (GQA's LPT order, D 64 causal's swizzle of
16) being wins only that shape measured. Nothing here imports TVM or needs a GPU; a choice costs a few
milliseconds and a few MB whatever the shape (past a few thousand tasks the busiest CTA is counted from the
order's structure, not task by task). The scheduler orders are TVM's ``FlashAttentionLinearScheduler`` /
``FlashAttentionLPTScheduler`` index maps, checked against the real classes by tests/test_hopper_attention.py.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import txlab.errors as _errors
from txlab.examples.attention_config import _ceil

#: per-SM bf16 dense tensor-core peak (flop/s), as txlab.examples.gemm_model assumes
SM_PEAK_FLOPS = 7.2e12
#: fitted to the H200 sweep (:func:`calibrate`); times in seconds
CALIBRATION = {
    "softmax_s_per_score": 4.527e-11,  # per score of a block: exp2 on the SFU, row max and sum
    "block": 1.6264,  # scale of max(tensor, softmax, feed) per key block: ~61% of the tensor peak
    "softmax_exposed_no_overlap": 0.0,
    "softmax_exposed_no_pingpong": 0.0,
    "per_task_s": 0.0,
    "per_task_out_s_per_elem": 0.0,
    "per_masked_score_s": 5.262e-11,  # the element-wise mask of a diagonal or ragged block
    "per_launch_s": 0.0,
    "ring_per_stage": 0.0,
    "feed_bytes_per_s": 2.0e11,
    "fitted_on": "H200 sweep of 2026-12-02 04:01 UTC: 93 measured candidates, 10 shapes (rms relative error 9.0%)",
}
FEATURES = (
    "block",
    "softmax_exposed_no_overlap",
    "softmax_exposed_no_pingpong",
    "per_task_s",
    "per_task_out_s_per_elem",
    "per_masked_score_s",
    "per_launch_s",
    "ring_per_stage",
)
#: a candidate replaces the default only when predicted this much faster (the sweep's run-to-run noise)
MARGIN = 0.03
TABLE_NAME = "hopper_attention_tuned.json"
TABLE_FORMAT = "txlab-hopper-attention-tuned/1"
SHAPE_KEYS = ("batch", "heads", "kv_heads", "seqlen_q", "seqlen_kv", "head_dim", "causal")


# ---- the scheduler orders (TVM's index maps, as numpy) --------------------------------------------
#: tasks the cost model walks one by one; past that it counts them per CTA from the order's structure
#: (:func:`_structured_cta_sums`: the same counts, whatever the number of tasks)
EXACT_TASKS = 1 << 12
#: CTAs the structured count takes at most (it is O(CTAs²)); past that (a num_sms far above any GPU's SMs) the
#: busiest CTA is estimated from :data:`SAMPLED_CTAS` of them (:func:`_sampled_cta_sums`)
STRUCTURED_CTAS = 512
SAMPLED_CTAS = 1024
#: tasks :func:`task_order` maps without ``idx`` at most (the whole order as int64 arrays: 128 MiB each)
ORDER_LIMIT = 1 << 24
#: numpy elements a step of the model holds at once (512 KiB of int64)
_CHUNK = 1 << 16


def task_order(batch: int, heads: int, m_blocks: int, lpt: bool, swizzle: int, idx=None):
    """``(head index, m block)`` of every linear task index, in order (numpy int arrays), or of the task
    indices ``idx`` only: what ``FlashAttentionLPTScheduler`` (``lpt``) or ``FlashAttentionLinearScheduler``
    compute on the GPU."""
    import numpy as np

    tasks = batch * heads * m_blocks
    if idx is None:
        if tasks > ORDER_LIMIT:
            raise _errors.InputError(
                f"task_order: {tasks:,} tasks is more than the {ORDER_LIMIT:,} it maps at once; pass idx= "
                "(the task indices you want, e.g. numpy.arange(start, stop)) for a part of the order",
                param="idx",
            )
        idx = np.arange(tasks, dtype=np.int64)
    else:
        idx = np.asarray(idx, dtype=np.int64)
    if not lpt:
        return idx // m_blocks, idx % m_blocks
    hb = batch * heads
    major = swizzle * m_blocks
    quot = hb // swizzle
    rem = max(hb % swizzle, 1)
    bid = idx // major
    l2 = idx % major
    full = bid < quot
    m_raw = np.where(full, l2 // swizzle, l2 // rem)
    res = np.where(full, l2 % swizzle, l2 % rem)
    return bid * swizzle + res, (m_blocks - 1) - m_raw


@dataclass
class Prediction:
    """The model's account of one configuration on one shape (times in seconds)."""

    config: object  # AttentionConfig
    time_s: float  # the prediction (model x neighbour correction)
    model_s: float  # the cost model alone
    correction: float  # measured / model on the neighbour shape (1.0: none)
    tasks: int
    ctas: int
    busiest_tasks: int
    busiest_blocks: int
    ideal_blocks: float  # key blocks per CTA with perfect balance
    bound: str  # "tensor cores", "softmax" or "operand feed"
    flops: float = 0.0
    neighbour: str = ""

    @property
    def balance(self) -> float:
        return self.ideal_blocks / self.busiest_blocks if self.busiest_blocks else 1.0

    @property
    def tflops(self) -> float:
        return self.flops / self.time_s / 1e12 if self.time_s else 0.0

    def to_dict(self) -> dict:
        return {
            "config": self.config.name,
            "time_us": self.time_s * 1e6,
            "model_us": self.model_s * 1e6,
            "correction": self.correction,
            "neighbour": self.neighbour,
            "tflops": self.tflops,
            "tasks": self.tasks,
            "ctas": self.ctas,
            "busiest_tasks": self.busiest_tasks,
            "busiest_blocks": self.busiest_blocks,
            "balance": self.balance,
            "bound": self.bound,
        }


def _work(shape: tuple, cfg):
    """Per CTA: tasks, key blocks, masked blocks of the busiest CTA (nominal cost: a key block is 1, a
    task's own cost 1.5 blocks), the ideal blocks per CTA, CTAs, tasks."""
    from txlab.examples.attention_config import l2_swizzle

    b, h, hk, sq, sk, d, causal = shape
    lpt = cfg.scheduler == "lpt" or (cfg.scheduler == "auto" and causal)
    swz = min(cfg.swizzle or l2_swizzle(sk, d), b * h)
    return _work_of(tuple(shape), cfg.bm, cfg.bn, cfg.num_sms, lpt, swz if lpt else 0)


@functools.lru_cache(maxsize=256)
def _work_of(shape: tuple, bm: int, bn: int, num_sms: int, lpt: bool, swz: int):
    """:func:`_work` for what it depends on (candidates that differ in ring depth or overlap share it). Its cost
    is bounded whatever the shape (a few milliseconds, a few MB): up to :data:`EXACT_TASKS` tasks it walks
    them, else it counts them per CTA from the order's structure (:func:`_structured_cta_sums`); the total
    in closed form (:meth:`_Blocks.ap_sums`)."""
    import numpy as np

    b, h, hk, sq, sk, d, causal = shape
    w = _Blocks(bm, bn, _ceil(sq, bm), _ceil(sk, bn), sk - sq, bool(causal), sk % bn != 0)
    mb, hb = w.mb, b * h
    tasks = hb * mb
    ctas = min(num_sms, tasks)
    total = hb * int(w.ap_sums(1, np.zeros(1, np.int64))[0][0])

    def query_blocks(i):
        return task_order(b, h, mb, lpt, swz, idx=i)[1]

    if tasks > EXACT_TASKS and ctas > STRUCTURED_CTAS:
        per_blocks, per_masked, per_tasks = _sampled_cta_sums(tasks, ctas, w, query_blocks)
    else:
        per_tasks = np.full(ctas, tasks // ctas, dtype=np.int64)
        per_tasks[: tasks % ctas] += 1
        if tasks <= EXACT_TASKS:
            i = np.arange(tasks, dtype=np.int64)
            blk, msk = w.of(query_blocks(i))
            per_blocks = np.bincount(i % ctas, weights=blk, minlength=ctas)
            per_masked = np.bincount(i % ctas, weights=msk, minlength=ctas)
        else:
            per_blocks, per_masked = _structured_cta_sums(hb, ctas, w, lpt, swz)
    busiest = int(np.argmax(per_blocks + 1.5 * per_tasks))
    return (
        int(per_tasks[busiest]),
        int(round(per_blocks[busiest])),
        int(round(per_masked[busiest])),
        float(total) / ctas,
        ctas,
        tasks,
    )


@dataclass(frozen=True)
class _Blocks:
    """The key blocks a query block ``m`` (of ``mb``) streams and how many of them are masked: the kernel's
    ``n_blocks`` and ``masked`` (each a floor of a linear function of ``m``, clipped)."""

    bm: int
    bn: int
    mb: int
    nb: int
    diag: int  # seqlen_kv - seqlen_q: key j is visible to query i iff j <= i + diag
    causal: bool
    ragged: bool

    def of(self, m):
        """(blocks, masked) of the query blocks ``m`` (numpy)."""
        import numpy as np

        bm, bn, nb, diag = self.bm, self.bn, self.nb, self.diag
        if not self.causal:
            return np.full(m.shape, nb, dtype=np.int64), np.full(m.shape, int(self.ragged), dtype=np.int64)
        blocks = np.clip((m * bm + bm + diag + bn - 1) // bn, 0, nb)
        first_masked = np.minimum((m * bm + diag) // bn, nb - 1)
        return blocks, np.clip(blocks - np.maximum(first_masked, 0), 0, None)

    def ap_sums(self, stride: int, r):
        """(blocks, masked) summed over the query blocks ``m < mb`` with ``m % stride == r``, per ``r`` of the
        int64 array ``r`` (each ``< stride``), in closed form."""
        import numpy as np

        n = np.where(r < self.mb, (self.mb - 1 - r) // stride + 1, 0)
        if not self.causal:
            return n * self.nb, n * int(self.ragged)
        a, bm, bn, diag = self.bm * stride, self.bm, self.bn, self.diag
        blocks = _sum_clip_floor(n, a, bm * r + bm + diag + bn - 1, bn, 0, self.nb)
        # masked = blocks - clip(floor((m*bm + diag) / bn), 0, nb - 1), never negative
        return blocks, blocks - _sum_clip_floor(n, a, bm * r + diag, bn, 0, self.nb - 1)


def _floor_sum(n, m, a, b):
    """``sum(floor((a*i + b) / m) for i in range(n))`` elementwise over int64 arrays, for ``a, b >= 0`` and
    ``m > 0``, in O(log) numpy steps (the Euclid-like reduction)."""
    import numpy as np

    n, m, a, b = (np.array(x, dtype=np.int64) for x in np.broadcast_arrays(n, m, a, b))
    total = np.zeros(n.shape, np.int64)
    live = n > 0
    while live.any():
        q, a = np.where(live, a // m, 0), np.where(live, a % m, a)
        total += n * (n - 1) // 2 * q
        q, b = np.where(live, b // m, 0), np.where(live, b % m, b)
        total += n * q
        y = a * n + b
        live &= y >= m
        n, b = np.where(live, y // m, n), np.where(live, y % m, b)
        m, a = np.where(live, a, m), np.where(live, m, a)
    return total


def _sum_clip_floor(n, a: int, b, c: int, lo: int, hi: int):
    """``sum(clip(floor((a*i + b) / c), lo, hi) for i in range(n))`` elementwise over int64 arrays ``n`` and
    ``b``, for ``a > 0``, ``c > 0``, ``lo <= hi``: the terms are non-decreasing, so ``lo`` up to the first
    above it, ``hi`` from the first at it, and a floor sum between."""
    import numpy as np

    n, b = np.asarray(n, dtype=np.int64), np.asarray(b, dtype=np.int64)
    i1 = np.clip(-((b - (lo + 1) * c) // a), 0, n)  # first i with floor(...) > lo
    i2 = np.maximum(np.clip(-((b - hi * c) // a), 0, n), i1)  # first i with floor(...) >= hi
    q, r = np.divmod(a * i1 + b, c)
    return lo * i1 + (i2 - i1) * q + _floor_sum(i2 - i1, c, a, r) + hi * (n - i2)


def _structured_cta_sums(hb: int, ctas: int, w: _Blocks, lpt: bool, swz: int):
    """Key blocks and masked blocks per CTA (task ``i`` runs on CTA ``i % ctas``), exactly, in O(ctas²) whatever
    the number of tasks. Both orders are runs of ``mb`` tasks, one per query block, a fixed ``stride`` apart
    (the linear order: a head's blocks in a row, ascending; LPT: a group of ``swz`` heads interleaved,
    descending; its last, partial group ``hb % swz`` heads), so a run that starts on CTA ``s`` puts its block
    ``k`` on CTA ``(s + k * stride) % ctas``: per CTA, the run's blocks are a sum over an arithmetic
    progression of ``m`` (:meth:`_Blocks.ap_sums`), the same for every run up to a rotation by ``s``. So: one
    run's sums per CTA, times how many runs start on each CTA, as a circular convolution."""
    import numpy as np

    C, mb = ctas, w.mb
    blocks, masked = np.zeros(C, np.int64), np.zeros(C, np.int64)
    if lpt:
        quot, rest = divmod(hb, swz)
        groups = _periodic_counts(C, swz * mb, quot)  # CTA each full group starts on
        runs = [(swz, False, _circular_spread(C, groups, swz))]
        if rest:
            start = np.zeros(C, np.int64)
            start[quot * swz * mb % C] = 1
            runs.append((rest, False, _circular_spread(C, start, rest)))
    else:
        runs = [(1, True, _periodic_counts(C, mb, hb))]
    for stride, ascending, starts in runs:
        g = math.gcd(stride, C)
        cp = C // g
        inv = pow(stride // g, -1, cp) if cp > 1 else 0
        c1 = np.arange(cp, dtype=np.int64)  # CTA g*c1 gets blocks k with k*stride = g*c1 (mod C)
        k0 = c1 * inv % cp
        rb, rm = w.ap_sums(cp, k0 if ascending else (mb - 1 - k0) % cp)
        one_b, one_m = np.zeros(C, np.int64), np.zeros(C, np.int64)
        one_b[c1 * g], one_m[c1 * g] = rb, rm
        s = np.flatnonzero(starts)
        step = max(1, _CHUNK // max(len(s), 1))
        for lo in range(0, C, step):  # out[c] = sum over s of starts[s] * one[(c - s) % C]
            idx = (np.arange(lo, min(lo + step, C))[:, None] - s[None, :]) % C
            blocks[lo : lo + step] += one_b[idx] @ starts[s]
            masked[lo : lo + step] += one_m[idx] @ starts[s]
    return blocks, masked


def _periodic_counts(C: int, step: int, n: int):
    """How many of ``0, step, 2*step, ... (n terms)`` fall on each residue mod ``C`` (int64 array)."""
    import numpy as np

    p = C // math.gcd(step, C)
    full, rest = divmod(n, p)
    offs = np.arange(p, dtype=np.int64) * (step % C) % C
    return np.bincount(offs, minlength=C) * full + np.bincount(offs[:rest], minlength=C)


def _circular_spread(C: int, starts, width: int):
    """Each of ``starts[s]`` runs adds one to ``width`` consecutive residues from ``s`` (mod ``C``)."""
    import numpy as np

    laps, r = divmod(width, C)
    out = np.full(C, laps * int(starts.sum()), np.int64)
    if r:  # the partial lap: a difference array over two turns of the circle, folded
        d = np.zeros(2 * C + 1, np.int64)
        d[:C] += starts
        d[r : C + r] -= starts
        d = np.cumsum(d)[: 2 * C]
        out += d[:C] + d[C:]
    return out


def _sampled_cta_sums(tasks: int, ctas: int, w: _Blocks, query_blocks):
    """Past :data:`STRUCTURED_CTAS` CTAs: (blocks, masked, tasks) of :data:`SAMPLED_CTAS` CTAs evenly spaced
    (with the first, and the last one that has an extra task), each over the full rounds sampled at the
    midpoints of equal strata (scaled to all of them) plus its task of the last, partial round. An estimate:
    the busiest of these, not necessarily the busiest CTA. ``query_blocks(i)``: the m block of tasks ``i``."""
    import numpy as np

    full, extra = divmod(tasks, ctas)
    picks = [np.linspace(0, ctas - 1, SAMPLED_CTAS).astype(np.int64), [0]] + ([[extra - 1]] if extra else [])
    cs = np.unique(np.concatenate(picks)).astype(np.int64)
    s = max(1, min(full, _CHUNK // len(cs)))
    rounds = (2 * np.arange(s, dtype=np.int64) + 1) * full // (2 * s)
    wb, wm = w.of(query_blocks((rounds[:, None] * ctas + cs[None, :]).ravel()))
    blocks = wb.reshape(s, len(cs)).sum(axis=0) * (full / s)
    masked = wm.reshape(s, len(cs)).sum(axis=0) * (full / s)
    more = cs < extra
    if more.any():
        lb, lm = w.of(query_blocks(full * ctas + cs[more]))
        blocks[more] += lb
        masked[more] += lm
    return blocks, masked, full + more.astype(np.int64)


def _features(shape: tuple, cfg, soft_rate: float, feed: float):
    """The model's feature row (coefficients :data:`FEATURES`), and (tasks, blocks, ideal, ctas, n tasks,
    bound) of the busiest CTA."""
    b, h, hk, sq, sk, d, causal = shape
    bm, bn = cfg.bm, cfg.bn
    t_tasks, t_blocks, t_masked, ideal, ctas, tasks = _work(shape, cfg)
    issue = 1.0 if cfg.consumers == 2 else 0.5
    tensor = 4.0 * bm * bn * d / (SM_PEAK_FLOPS * issue)
    soft = bm * bn * soft_rate
    fed = 2.0 * bn * d * 2 / feed
    blk = max(tensor, soft, fed)
    bound = "tensor cores" if blk == tensor else ("softmax" if blk == soft else "operand feed")
    row = [
        t_blocks * blk,
        t_blocks * soft * (0 if cfg.overlap else 1),
        t_blocks * soft * (0 if cfg.pingpong else 1),
        t_tasks,
        t_tasks * bm * d,
        t_masked * bm * bn,
        1.0,
        t_blocks * fed / cfg.stages,  # a shallow ring exposes more of each block's load
    ]
    return row, (t_tasks, t_blocks, ideal, ctas, tasks, bound)


def model_time(shape: tuple, cfg, calibration: dict | None = None) -> tuple:
    """``(seconds, (busiest tasks, busiest blocks, ideal blocks, CTAs, tasks, bound))`` by the cost model."""
    cal = calibration or CALIBRATION
    row, info = _features(shape, cfg, cal["softmax_s_per_score"], cal["feed_bytes_per_s"])
    return sum(cal[k] * x for k, x in zip(FEATURES, row)), info


# ---- the shipped table -----------------------------------------------------------------------------
_override: list = []  # [path] while use_tuned_table(path) is in force
_cache: dict = {}


def table_path():
    from txlab.files import shipped_data

    return _override[0] if _override else shipped_data(TABLE_NAME)


def use_tuned_table(path=None) -> None:
    """Read the table at ``path`` (one :func:`write_tuned_table` wrote) from now on; ``None``: the
    shipped one again."""
    from pathlib import Path

    _override[:] = [Path(path)] if path is not None else []
    _cache.clear()


def _shape_of(entry: dict, where: str) -> tuple:
    s = entry.get("shape")
    if not isinstance(s, dict) or set(s) != set(SHAPE_KEYS):
        raise ValueError(f"{where}: shape {s!r} must name {', '.join(SHAPE_KEYS)}")
    vals = tuple(s[k] for k in SHAPE_KEYS)
    if not isinstance(vals[-1], bool) or not all(isinstance(v, int) and not isinstance(v, bool) for v in vals[:-1]):
        raise ValueError(f"{where}: shape {s!r}: integers and a causal flag")
    from txlab.examples.attention_config import check_shape

    try:
        check_shape(*vals[:-1])
    except _errors.InputError as exc:
        raise ValueError(f"{where}: {exc}") from None
    return vals


def _config_of(entry: dict, shape: tuple, where: str):
    from txlab.examples.attention_config import AttentionConfig

    cfg = entry.get("config")
    fields = set(AttentionConfig.__dataclass_fields__)
    if not isinstance(cfg, dict) or set(cfg) - fields:
        raise ValueError(f"{where}: config {cfg!r} has unknown fields")
    try:
        c = AttentionConfig(**cfg)
        c.validate(shape[5])
    except (_errors.InputError, TypeError) as exc:
        raise ValueError(f"{where}: {exc}") from None
    return c


def _check_measured(e: dict, where: str) -> None:
    rel, lse, ms = e.get("rel_error"), e.get("lse_abs_error"), e.get("time_ms")
    if not isinstance(rel, (int, float)) or not rel <= 1e-2:
        raise ValueError(f"{where}: rel_error {rel!r} is not <= 1e-2")
    if not isinstance(lse, (int, float)) or not lse <= 1e-3:
        raise ValueError(f"{where}: lse_abs_error {lse!r} is not <= 1e-3")
    if not isinstance(ms, (int, float)) or not 0 < ms < 1e5:
        raise ValueError(f"{where}: time_ms {ms!r} is not a positive time")


def load_tuned_table(path=None) -> dict:
    """The tuned table (``txlab/data/hopper_attention_tuned.json`` unless ``path``), verified: its
    format, the SHA-256 of its body, every shape valid, every configuration valid at its head_dim and
    correct when measured (rel. error <= 1e-2, LSE <= 1e-3), every time positive, one best entry per
    shape. Raises ValueError naming what is wrong."""
    from pathlib import Path

    from txlab.cache import read_sealed

    src = Path(path) if path is not None else table_path()
    doc = read_sealed(src, "table", TABLE_FORMAT, what="tuned table")
    body = doc["table"]
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("best"), list)
        or not isinstance(body.get("measured"), list)
    ):
        raise ValueError(f"{src}: the body needs 'best' and 'measured' lists")
    seen = set()
    for i, e in enumerate(body["best"]):
        where = f"{src}: best[{i}]"
        shape = _shape_of(e, where)
        if shape in seen:
            raise ValueError(f"{where}: a second entry for {shape}")
        seen.add(shape)
        _config_of(e, shape, where)
        _check_measured(e, where)
    for i, e in enumerate(body["measured"]):
        where = f"{src}: measured[{i}]"
        _config_of(e, _shape_of(e, where), where)
        _check_measured(e, where)
    return doc


def write_tuned_table(path, best: list, measured: list, *, device: str, source: str) -> dict:
    """Write a table :func:`load_tuned_table` accepts: ``best`` and ``measured`` rows ``{"shape": {...},
    "config": {...}, "time_ms", "rel_error", "lse_abs_error", ...}``."""
    import json
    from pathlib import Path

    from txlab.cache import seal

    body = json.loads(json.dumps({"best": best, "measured": measured}))
    doc = seal(body, "table", format=TABLE_FORMAT, device=device, source=source)
    Path(path).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    load_tuned_table(path)  # what was written must load
    return doc


def _table() -> dict:
    """The verified table's body (empty when it is missing or damaged: one warning)."""
    if "body" not in _cache:
        try:
            _cache["body"] = load_tuned_table()["table"]
        except (ValueError, OSError, _errors.TxlabError) as exc:
            import warnings

            warnings.warn(f"hopper_attention: ignoring the tuned table: {exc}", stacklevel=3)
            _cache["body"] = {"best": [], "measured": []}
    return _cache["body"]


def table_config(shape: tuple):
    """The table's measured best configuration for exactly ``shape``
    ``(batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, causal)``, or None."""
    from txlab.examples.attention_config import AttentionConfig

    for e in _table()["best"]:
        if tuple(e["shape"][k] for k in SHAPE_KEYS) == tuple(shape):
            return AttentionConfig(**e["config"])
    return None


# ---- choosing ---------------------------------------------------------------------------------------
def _distance(a: tuple, b: tuple) -> float:
    """How far measured shape ``b`` is from ``a`` (same head_dim and masking only: inf otherwise)."""
    if a[5] != b[5] or a[6] != b[6]:
        return math.inf
    return (
        abs(math.log2(a[3] / b[3]))
        + abs(math.log2(a[4] / b[4]))
        + abs(math.log2((a[1] // a[2]) / (b[1] // b[2])))
        + 0.25 * abs(math.log2(a[0] * a[1] / (b[0] * b[1])))
    )


def neighbours(shape: tuple, n: int = 2) -> list:
    """The ``n`` nearest measured shapes (same head_dim and masking), nearest first: ``[(distance, shape,
    {config name: (config, measured seconds, measured / model)})]``."""
    from txlab.examples.attention_config import AttentionConfig

    by: dict = {}
    for e in _table()["measured"]:
        s = tuple(e["shape"][k] for k in SHAPE_KEYS)
        c = AttentionConfig(**e["config"])
        by.setdefault(s, {})[c.name] = (c, e["time_ms"] * 1e-3)
    near = sorted(((_distance(shape, s), s) for s in by), key=lambda t: t)
    out = []
    ratios = _cache.setdefault("ratios", {})  # per measured shape, for the table in force (reset with it)
    for dist, s in [t for t in near if t[0] < math.inf][:n]:
        if s not in ratios:
            ratios[s] = {k: (c, t, t / model_time(s, c)[0]) for k, (c, t) in by[s].items()}
        out.append((dist, s, ratios[s]))
    return out


def candidates(shape: tuple, num_sms: int = 132, near: list | None = None) -> list:
    """The configurations :func:`explain` ranks: ``tune_candidates`` of the shape and every
    configuration measured on its two nearest measured shapes (valid at its head_dim)."""
    from dataclasses import replace

    from txlab.examples.attention_config import AttentionConfig, tune_candidates

    out = {}
    for c in tune_candidates(*shape):
        cfg = replace(AttentionConfig(**c), num_sms=num_sms)
        out[cfg.name] = cfg
    for _, _, meas in neighbours(shape) if near is None else near:
        for cfg, _t, _r in meas.values():
            cfg = replace(cfg, num_sms=num_sms)
            out.setdefault(cfg.name, cfg)
    return list(out.values())


def predict(shape: tuple, cfg, near: list | None = None) -> Prediction:
    """The predicted time of ``cfg`` on ``shape`` (see the module docstring)."""
    from dataclasses import replace

    from txlab.examples.attention_config import flops

    t, (t_tasks, t_blocks, ideal, ctas, tasks, bound) = model_time(shape, cfg)
    near = neighbours(shape) if near is None else near
    key = replace(cfg, num_sms=132).name
    logs, weights, who = [], [], []
    for dist, ns, meas in near:
        ratios = {name: r for name, (_c, _t, r) in meas.items()}
        if not ratios:
            continue
        if key in ratios:
            r, how = ratios[key], "this configuration"
        else:
            import statistics

            r, how = statistics.median(ratios.values()), "median"
        logs.append(math.log(r))
        weights.append(1 / (1 + dist))
        who.append(f"{shape_name(ns)} ({how})")
    corr = math.exp(sum(w * x for w, x in zip(weights, logs)) / sum(weights)) if logs else 1.0
    b, h, hk, sq, sk, d, causal = shape
    return Prediction(
        cfg,
        t * corr,
        t,
        corr,
        tasks,
        ctas,
        t_tasks,
        t_blocks,
        ideal,
        bound,
        flops(b, h, sq, sk, d, causal),
        "; ".join(who),
    )


def shape_name(s: tuple) -> str:
    b, h, hk, sq, sk, d, causal = s
    kv = f"/{hk}kv" if hk != h else ""
    seq = f"S{sq}" if sq == sk else f"Sq{sq}/Skv{sk}"
    return f"B{b} H{h}{kv} {seq} D{d}{' causal' if causal else ''}"


@dataclass
class AttentionChoice:
    """What :func:`explain` returns: the ranked candidates and the winner."""

    shape: tuple
    predictions: list  # Prediction: the winner first, then fastest first
    source: str  # "tuned table (measured)" or "model"
    winner: object  # AttentionConfig
    notes: list = field(default_factory=list)

    @property
    def why(self) -> str:
        if self.source.startswith("tuned table"):
            return f"{self.winner.name}: measured fastest on an H200 for exactly this shape (the shipped table)"
        p = self.predictions[0]
        best = min(self.predictions, key=_rank)
        runner = self.predictions[1] if len(self.predictions) > 1 else None
        if best.time_s < p.time_s:  # explain() kept the default: nothing is predicted MARGIN faster
            lead = math.floor((1 - best.time_s / p.time_s) * 1000) / 10  # rounded down: never "3.0%" for 2.96%
            gap = (
                f"; {best.config.name} is predicted {lead:.1f}% faster, within the {MARGIN:.0%} margin (the sweep's "
                f"run-to-run noise): the default {p.config.name} is kept"
            )
        else:
            gap = f", {runner.time_s / p.time_s - 1:.1%} ahead of {runner.config.name}" if runner else ""
        corr = f" x {p.correction:.2f} measured/model on {p.neighbour}" if p.neighbour else " (no measured neighbour)"
        return (
            f"{p.config.name}: {p.tasks} tasks on {p.ctas} CTAs, busiest CTA {p.busiest_tasks} tasks / "
            f"{p.busiest_blocks} key blocks (balance {p.balance:.0%}), {p.bound}-bound per block; model "
            f"{p.model_s * 1e6:.0f} us{corr} = {p.time_s * 1e6:.0f} us, {p.tflops:.0f} TFLOP/s{gap}"
        )

    def table(self, top: int = 10) -> str:
        """The candidates: the chosen one first, then the others fastest first (by predicted time)."""
        head = f"{'config':<30} {'pred. us':>9} {'model us':>9} {'corr.':>6} {'balance':>8} {'TFLOP/s':>8}  bound"
        rows = [head] + [
            f"{p.config.name:<30} {p.time_s * 1e6:>9.0f} {p.model_s * 1e6:>9.0f} {p.correction:>6.2f} "
            f"{p.balance:>8.0%} {p.tflops:>8.0f}  {p.bound}"
            for p in self.predictions[:top]
        ]
        return "\n".join(rows)

    def to_dict(self) -> dict:
        return {
            "shape": dict(zip(SHAPE_KEYS, self.shape)),
            "source": self.source,
            "winner": self.winner.name,
            "config": self.winner.to_dict(),
            "why": self.why,
            "candidates": [p.to_dict() for p in self.predictions],
            "notes": list(self.notes),
        }

    def __str__(self) -> str:
        notes = "".join(f"\nnote: {n}" for n in self.notes)
        return f"attention {shape_name(self.shape)}: {self.source} -> {self.why}\n{self.table()}{notes}"

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


def explain(shape: tuple, *, num_sms: int = 132) -> AttentionChoice:
    """The candidates for ``shape`` ``(batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, causal)``
    ranked by predicted time, and the winner: the table's measured entry for exactly this shape wins
    over the model."""
    from dataclasses import replace

    from txlab.examples.attention_config import check_causal, check_shape, default_config

    shape = tuple(shape)
    if len(shape) != 7:
        raise _errors.InputError(
            "shape: (batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, causal), e.g. (4, 32, 32, 8192, 8192, 128, True)"
        )
    shape = (*check_shape(*shape[:6]), check_causal(shape[6]))
    near = neighbours(shape)
    preds = sorted((predict(shape, c, near) for c in candidates(shape, num_sms, near)), key=_rank)
    notes = [] if near else [f"no measured shape with head_dim {shape[5]} and causal={shape[6]}: the model alone"]
    measured = table_config(shape)
    if measured is not None:
        measured = replace(measured, num_sms=min(measured.num_sms, num_sms))
        if all(p.config != measured for p in preds):
            preds.insert(0, predict(shape, measured, near))
        else:
            preds.sort(key=lambda p: p.config != measured)
        return AttentionChoice(shape, preds, "tuned table (measured)", measured, notes)
    default = replace(default_config(shape[5], shape[6]), num_sms=num_sms)
    base = next((p for p in preds if p.config == default), None)
    if base is not None and preds[0].time_s > base.time_s * (1 - MARGIN):
        preds.sort(key=lambda p: p.config != default)
        notes.append(
            f"no candidate is predicted {MARGIN:.0%} faster than the default (the sweep's run-to-run noise): "
            "the default stays, listed first; the others follow fastest first"
        )
    return AttentionChoice(shape, preds, "model", preds[0].config, notes)


def choose(shape: tuple, *, num_sms: int = 132):
    """The configuration :func:`explain` picks (the table's, else the least predicted time)."""
    return explain(shape, num_sms=num_sms).winner


def _rank(p: Prediction):
    return (round(p.time_s, 12), p.config.name)


# ---- calibration ------------------------------------------------------------------------------------
def sweep_records(path) -> list:
    """``[(shape, AttentionConfig, seconds)]`` of every correct, timed candidate in a sweep written by
    ``scripts/attention_tune_h200.py`` (``benchmarks/results/attention_tune.json``)."""
    import json
    from pathlib import Path

    from txlab.examples.attention_config import AttentionConfig

    doc = json.loads(Path(path).read_text())
    out = []
    for s in doc.get("shapes", []):
        shape = tuple(s["shape"][k] for k in SHAPE_KEYS)
        for r in s["candidates"]:
            if r.get("status") == "ok" and r.get("time_ms"):
                out.append((shape, AttentionConfig(**r["config"]), r["time_ms"] * 1e-3))
    return out


def table_from_sweep(sweep_path, out_path) -> dict:
    """Write the tuned table (:func:`write_tuned_table`) from a sweep ``scripts/attention_tune_h200.py``
    wrote: per shape its fastest correct candidate (``best``) and every correct, timed candidate
    (``measured``, what :func:`predict` corrects the model with)."""
    import json
    from pathlib import Path

    doc = json.loads(Path(sweep_path).read_text())
    best, measured = [], []
    for s in doc.get("shapes", []):
        shape = {k: s["shape"][k] for k in SHAPE_KEYS}
        rows = []
        for r in s["candidates"]:
            if r.get("status") != "ok" or not r.get("time_ms"):
                continue
            row = {
                "shape": shape,
                "config": r["config"],
                "time_ms": r["time_ms"],
                "rounds_ms": r.get("rounds_ms"),
                "tflops": r.get("tflops"),
                "ratio_cudnn": r.get("ratio_cudnn"),
                "rel_error": r["rel_error"],
                "lse_abs_error": r["lse_abs_error"],
            }
            rows.append(row)
        measured += rows
        if rows:
            best.append({**min(rows, key=lambda r: r["time_ms"]), "cudnn_ms": s.get("cudnn_ms")})
    src = f"scripts/attention_tune_h200.py on {doc.get('device')}, {doc.get('recorded')}"
    return write_tuned_table(out_path, best, measured, device=doc.get("device", ""), source=src)


def calibrate(records, soft_rates=None, feeds=None) -> dict:
    """Fit :data:`CALIBRATION` to measured ``records`` (:func:`sweep_records`): non-negative least
    squares on relative error for the linear coefficients, a grid search for the softmax rate and the
    operand feed."""
    import numpy as np

    from txlab.examples.gemm_model import _nnls  # the GEMM's fit uses the same numpy-only solver

    y = np.array([t for _, _, t in records])
    best = None
    for sr in soft_rates if soft_rates is not None else np.geomspace(2e-11, 4e-10, 12):
        for feed in feeds if feeds is not None else np.geomspace(2e11, 2e12, 5):
            X = np.array([_features(s, c, sr, feed)[0] for s, c, _ in records])
            A = X / y[:, None]
            scale = A.max(axis=0)
            scale[scale == 0] = 1
            x = _nnls(A / scale, np.ones_like(y)) / scale
            err = float(np.mean((X @ x / y - 1) ** 2))
            if best is None or err < best[0]:
                best = (err, sr, feed, x)
    err, sr, feed, x = best
    return {
        "softmax_s_per_score": float(sr),
        "feed_bytes_per_s": float(feed),
        **{k: float(v) for k, v in zip(FEATURES, x)},
        "fitted_on": f"{len(records)} measured candidates (rms relative error {err**0.5:.1%})",
    }


def leave_one_out(path=None) -> list:
    """For every shape of the tuned table (``path``, else the shipped one): the choice :func:`explain`
    makes from the table without that shape, and how much slower than the shape's measured best the
    choice and the default measured there (``None`` where the choice was not measured).
    ``[(shape, chosen config name, chosen / best - 1, default / best - 1)]``."""
    import tempfile
    from pathlib import Path

    from txlab.examples.attention_config import AttentionConfig, default_config

    doc = load_tuned_table(path)
    body = doc["table"]

    def key(e):
        return tuple(e["shape"][k] for k in SHAPE_KEYS)

    saved = list(_override)
    out = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for shape in sorted({key(e) for e in body["measured"]}):
                part = Path(tmp) / "t.json"
                write_tuned_table(
                    part,
                    [e for e in body["best"] if key(e) != shape],
                    [e for e in body["measured"] if key(e) != shape],
                    device=doc.get("device", ""),
                    source="leave_one_out",
                )
                use_tuned_table(part)
                chosen = explain(shape).winner.name
                times = {AttentionConfig(**e["config"]).name: e["time_ms"] for e in body["measured"] if key(e) == shape}
                best = min(times.values())
                dflt = times.get(default_config(shape[5], shape[6]).name)
                rel = None if chosen not in times else times[chosen] / best - 1
                out.append((shape, chosen, rel, None if dflt is None else dflt / best - 1))
    finally:
        _override[:] = saved
        _cache.clear()
    return out
