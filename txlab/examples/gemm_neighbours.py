"""What the H200 measured near a shape, as a correction to the GEMM time model's ranking.

:mod:`txlab.examples.gemm_model` prices every candidate configuration from first principles (waves, k-steps,
epilogue, split-K), and its errors are not random: at a given kind of shape a given kind of configuration runs
faster or slower than priced (128 x 256 tiles at long K on grids of several waves, 144-wide tiles, ping-pong at mid
K). Every run of ``scripts/gemm_h200.py`` and ``scripts/gemm_explore_h200.py`` measured configurations beside
cuBLAS; ``txlab/data/hopper_gemm_measured.json`` keeps those measurements (shape, configuration, time), sealed.

Each measurement ``i`` has a residual ``r_i = log(measured / model time)``. Near a shape ``s`` (kernel weight
``w_i = exp(-|x_i - x_s|^2 / 2 BANDWIDTH^2)``, ``x = log2(M, N, K)``), the residuals are fitted as
``r_i = u_shape(i) + b_family(i)`` by weighted least squares with a ridge (:data:`PRIOR`) on ``b``: ``u`` absorbs what
every configuration at one shape shares (the model's error on that shape, the clocks of the runs), so a family's
``b`` says how it ran *against the other kinds measured at the same shapes*, which is what a ranking needs. The
candidates of :func:`family` ``f`` get their time multiplied by ``exp(b_f + RISK * PRIOR / (weight_f + PRIOR))``:
the second term charges what is unknown -- a family never measured near ``s`` pays :data:`RISK`, one measured
often nearly nothing -- so that the fastest-predicted of many unmeasured candidates (whose errors are the least
known) does not win by its luck alone. Where nothing was measured within :data:`CUTOFF` bandwidths, nothing changes.

Left-one-shape-out over the shipped measurements (``python scripts/gemm_measured.py --check``: each group of
configurations measured together ranked with only the other shapes' measurements), the pick's mean loss against
the group's fastest falls from 1.95 % (the model alone) to 1.14 %, and picks more than 8 % slower than the fastest from
73 to 38 of 1,057 groups (:func:`left_one_out`). Outputs of 64 rows or columns or fewer keep the model alone
(:data:`DECODE_ROWS`).

No TVM and no GPU here, and no import of the model: it is handed the model's ``predict`` (and the fingerprint of
its source, ``gemm_model.source_fingerprint``), so the model can use this module without a cycle. The file carries
the model's time for each measurement, trusted while the fingerprint matches. The file's rows are integers that index
its distinct shapes and configuration names (:data:`COLUMNS`): reading its ~4,900 rows, checking the checksum and
every column costs ~7 ms once per process; a row's configuration is parsed and checked against its shape when a
query first uses it (:func:`shipped`; :func:`load_measured` checks them all), and a shape's measurements are summed
by family once, so a correction costs ~3-6 ms.
"""
from __future__ import annotations

import functools
import itertools
import math
import operator
from dataclasses import dataclass, field

from txlab.cache import read_sealed_text, seal_text
from txlab.examples.gemm_config import GemmConfig, parse_config, row_phase
from txlab.files import shipped_data

MEASURED = "hopper_gemm_measured.json"
MEASURED_FORMAT = "txlab-hopper-gemm-measured/3"  # 3: rows index distinct shapes and names; 2: sha256 as written
#: the kernel's width in log2 units of M, N and K (1.0: a shape twice as large in one dimension weighs e^-0.5)
BANDWIDTH = 1.0
#: the ridge on the family effects: the weight of "no effect" against a family's measurements (a family whose
#: measurements near a shape weigh 0.5 in all gets about half its fitted effect)
PRIOR = 0.5
#: the log-time charged to a family never measured near a shape (less, the more it was: see the module docstring)
RISK = 0.03
#: rounds of the alternating fit of the shape and family effects, started from no effects. Not run to convergence
#: (after 5 rounds the effects are within 0.04 in log-time of the exact ridge solution): stopping early shrinks them a
#: little more, and left one shape out the exact solution picks hardly better (mean loss 0.83 % against 0.86 %) at 4.5
#: times the cost, which a choice cannot afford in plain Python
ROUNDS = 5
#: measurements farther than this many bandwidths from a shape count nothing there (their weight would be < 1 %)
CUTOFF = 3.0
#: the kernel width, in log2 units, of the average that gives a shape's :class:`Level` (how far the model's absolute
#: time was off at the shapes nearby, every kind included), and how far it reaches. The level changes faster across
#: shapes than the kinds' effects do: left one shape out (``scripts/gemm_measured.py --check``, 2,984 measurements),
#: the median |log(measured / time)| is 0.21 for the ranking's time, and with the level 0.15 at a width of 1.0, 0.11
#: at 0.35, 0.10 at 0.25 and at 0.15
LEVEL_BANDWIDTH = 0.25
LEVEL_REACH = 2.0


#: outputs this narrow on either side (decode-sized) are left to the model alone: every candidate streams an operand
#: from HBM, the model's stream term prices that, and the measured differences are within the runs' noise (left one
#: shape out, the corrections moved 2 of 18 such groups' picks, both the wrong way by 3 %)
DECODE_ROWS = 64


def corrects(M: int, N: int) -> bool:
    """Whether the corrections apply to an ``M x N`` output (not a decode-sized one, :data:`DECODE_ROWS`)."""
    return min(M, N) > DECODE_ROWS


def family(config: GemmConfig, K: int) -> tuple:
    """The kind of configuration a measurement speaks for: schedule (ping-pong or the cooperative consumers),
    tile rows, width (64, 96, 128, 192 and 256 as such; the widths between as narrow <= 160, middle <= 208 and wide),
    split kind (none, split tail, or the split order and fix-up), swap_ab, cluster, whether the epilogue is the staged
    one (odd N), and where K's rows start (:func:`gemm_config.row_phase`: on 128-byte lines, on 32-byte
    sectors only, or off both). Not the direct against the
    TMA epilogue: measured side by side they differ by a few per cent either way, so what tells them apart is the
    model's pricing of their stores, not noise at neighbouring shapes (left one shape out, keeping them apart moved 7
    more picks the wrong way for the same mean loss)."""
    bn = config.bn
    width = bn if bn in (64, 96, 128, 192, 256) else "narrow" if bn <= 160 else "middle" if bn <= 208 else "wide"
    split = ("none" if config.split_k == 1 else "tail" if config.split_tail
             else f"{config.split_order}-{config.fixup}")
    return (config.pingpong, config.bm, config.consumers, width, split, config.swap_ab, config.cluster_size > 1,
            config.epilogue == "staged", row_phase(K))


@dataclass(frozen=True)
class Correction:
    """What the measurements near a shape say about one configuration family there."""

    factor: float     # multiply the model's time by this (1.0: no correction)
    effect: float     # the family's fitted log-time against the other kinds at the same shapes (0: none measured)
    weight: float     # the family's total kernel weight near the shape (its evidence)
    measured: int     # the shapes the family was measured at within one BANDWIDTH of the shape
    nearest: tuple    # the nearest of them: (M, N, K), or () where none

    def describe(self) -> str:
        if self.factor == 1.0:
            return "nothing measured near this shape"
        if not self.weight:
            return (f"x{self.factor:.3f}: no configuration of this kind measured beside other kinds nearby (the charge "
                    "for not knowing)")
        near = "x".join(map(str, self.nearest))
        return (f"x{self.factor:.3f}: this kind ran {math.exp(self.effect) - 1:+.1%} against the model, relative to "
                f"the other kinds measured at the same shapes nearby (weight {self.weight:.1f}; {self.measured} within "
                f"a factor 2, nearest {near})")


NONE = Correction(1.0, 0.0, 0.0, 0, ())


@dataclass(frozen=True)
class Level:
    """How the model's absolute time compares with what was measured near a shape, every kind of configuration
    included: the factor that turns a (corrected) predicted time into the expected one. It multiplies every
    candidate alike, so it never changes a ranking."""

    factor: float     # multiply a candidate's time by this for the expected time
    weight: float     # the measurements' total weight in the average (LEVEL_BANDWIDTH)
    shapes: int       # measured shapes within a factor 2 (one log2 unit)
    nearest: tuple    # the nearest measured shape

    def describe(self) -> str:
        near = "x".join(map(str, self.nearest))
        return (f"x{self.factor:.2f}: what the H200 measured at the shapes nearest this one ran {self.factor - 1:+.0%} "
                f"against the model's time (nearest {near}; {self.shapes} measured shape(s) within a factor 2)")


class Neighbours:
    """The measured residuals of the time model and the family effects they give near a shape. Plain Python: a
    query scans the distinct measured shapes (about twelve hundred) and fits the few hundred near it, each shape's
    measurements summed by family once (:meth:`_terms`), in a few ms, and needs no numpy import.

    ``records``: :func:`load_measured`'s (or a test's) ``{"shape", "config", "parsed", "time_us", "model_us", ...}``;
    a record whose ``parsed`` is None is parsed and checked against its shape when a query first uses it (as
    :meth:`from_measured` does with every row of a file)."""

    def __init__(self, records: list[dict], predict):
        self._setup(Measured.from_records(records), predict)

    @classmethod
    def from_measured(cls, measured: Measured, predict) -> Neighbours:
        """Over a file's columns (:func:`read_measured`): each row's configuration is parsed and checked against its
        shape when a query first uses the row (:meth:`Measured.row_config`; a choice touches a few hundred of the
        ~1,200 shapes)."""
        self = cls.__new__(cls)
        self._setup(measured, predict)
        return self

    def _setup(self, measured: Measured, predict) -> None:
        self._m = measured
        self.count = len(measured.time_ns)
        self._predict = predict  # gemm_model.predict: the model times of rows whose file did not carry them
        self._memo: dict = {}  # (shape index, config index) -> model time (s)
        self._fams: dict = {}  # (config index, K's row phase) -> family
        self._terms_of: dict = {}  # shape index -> [(family, rows, sum of their log residuals)]
        rows_of: list = [[] for _ in measured.shapes]
        for i, si in enumerate(measured.shape):
            rows_of[si].append(i)
        self._rows_of = rows_of
        # a query's distance scan runs over the distinct shapes: log2 sizes, shape, index
        self._by_shape = [(tuple(map(math.log2, sh)), sh, si) for si, sh in enumerate(measured.shapes) if rows_of[si]]

    def _terms(self, si: int) -> list:
        """Shape ``si``'s measurements summed by family: ``[(family, rows, sum of log(measured / model time))]``
        (each row's configuration checked against the shape first: :meth:`Measured.row_config`)."""
        terms = self._terms_of.get(si)
        if terms is not None:
            return terms
        m = self._m
        shape = m.shapes[si]
        phase = row_phase(shape[2])
        sums: dict = {}
        for i in self._rows_of[si]:
            ci = m.config[i]
            cfg = m.row_config(i)
            key = (si, ci)
            f = self._fams.get((ci, phase))
            if f is None:
                f = self._fams[(ci, phase)] = family(cfg, shape[2])
            model_s = self._memo.get(key)
            if model_s is None:
                stored = m.model_ps[i] if m.model_ps is not None else None
                model_s = self._memo[key] = (stored * 1e-12 if stored is not None
                                             else self._predict(*shape, cfg).time_s)
            n, total = sums.get(f, (0, 0.0))
            sums[f] = (n + 1, total + math.log(m.time_ns[i] * 1e-9 / model_s))
        terms = self._terms_of[si] = [(f, n, total) for f, (n, total) in sums.items()]
        return terms

    @functools.cached_property
    def peak_flops(self) -> float:
        """The fastest rate measured (flop/s): explain's expected times are never faster (0.0: nothing measured).
        Only explain reads it, so a choice does not pay for it."""
        shapes = self._m.shapes
        return max((2 * math.prod(shapes[si]) / (t * 1e-9) for si, t in zip(self._m.shape, self._m.time_ns)),
                   default=0.0)

    def effects(self, M: int, N: int, K: int, *, exclude: tuple | None = None) -> dict:
        """``{family: (effect, weight)}`` fitted near ``M x N x K`` (see the module docstring); ``exclude``: a shape
        whose own measurements are left out (how the corrections are checked). Empty where nothing is near."""
        return self._fit(M, N, K, exclude)[0]

    def _fit(self, M: int, N: int, K: int, exclude) -> tuple[dict, dict]:
        try:
            return self._fit_rows(M, N, K, exclude)
        except DamagedRow as exc:
            # a row of the shipped file failed its check when first used: the file is not this txlab's, so none of
            # it counts from here on (as when load_measured refuses it up front)
            import warnings

            warnings.warn(f"gemm_neighbours: ignoring the measurements file: {exc}", stacklevel=4)
            self.__dict__.pop("peak_flops", None)  # nor its fastest rate
            self._setup(Measured.from_records([]), self._predict)
            return {}, {}

    def _fit_rows(self, M: int, N: int, K: int, exclude) -> tuple[dict, dict]:
        """``(effects, near)``: the family effects, and ``{shape: (squared distance, weight, terms)}`` of the shapes
        within :data:`CUTOFF`. Every measurement of a shape has the shape's weight, so the fit runs on each shape's
        per-family sums (:meth:`_terms`): the same solution as row by row, a fraction of the work."""
        qm, qn, qk = math.log2(M), math.log2(N), math.log2(K)
        cut = (CUTOFF * BANDWIDTH) ** 2
        skip = tuple(exclude) if exclude is not None else None
        near: dict = {}  # shape -> (squared distance, weight, [(family, rows, residual sum)])
        for (xm, xn, xk), sh, si in self._by_shape:
            d2 = (xm - qm) ** 2 + (xn - qn) ** 2 + (xk - qk) ** 2
            if d2 < cut and sh != skip:
                near[sh] = (d2, math.exp(-d2 / (2 * BANDWIDTH**2)), self._terms(si))
        # a shape where one kind alone was measured says nothing about kinds against each other
        groups = []  # (weight, families, rows per family, residual sums, rows, residual total)
        weight: dict = {}
        for _, w, terms in near.values():
            if len(terms) > 1:
                fams, ns, ts = zip(*terms)
                groups.append((w, fams, ns, ts, sum(ns), sum(ts)))
                for f, n in zip(fams, ns):
                    weight[f] = weight.get(f, 0.0) + w * n
        b = dict.fromkeys(weight, 0.0)
        for _ in range(ROUNDS):
            num = dict.fromkeys(weight, 0.0)
            for w, fams, ns, ts, rows, total in groups:
                level = (total - sum(map(operator.mul, ns, map(b.__getitem__, fams)))) / rows  # the shape's effect
                for f, n, t in zip(fams, ns, ts):
                    num[f] += w * (t - n * level)
            b = {f: num[f] / (weight[f] + PRIOR) for f in weight}
        return {f: (b[f], weight[f]) for f in weight}, near

    def corrections(self, M: int, N: int, K: int, configs, *, exclude: tuple | None = None) -> list[Correction]:
        """One :class:`Correction` per configuration of ``configs`` at ``M x N x K``; ``exclude``: a shape whose
        own measurements are left out."""
        return self.fit(M, N, K, configs, exclude=exclude)[0]

    def fit(self, M: int, N: int, K: int, configs, *, exclude: tuple | None = None) -> tuple:
        """``(corrections, level)``: :meth:`corrections` and the shape's :class:`Level` (None where nothing was
        measured near it), from one fit."""
        effects, near = self._fit(M, N, K, exclude)
        if not near:
            return [NONE for _ in configs], None
        num = den = 0.0
        shapes, closest = 0, (math.inf, ())
        where: dict = {}  # family -> [(squared distance, shape)] of the shapes it was measured at
        for sh, (d2, _, terms) in near.items():
            for f, _, _ in terms:
                where.setdefault(f, []).append((d2, sh))
            if d2 > LEVEL_REACH**2:
                continue
            # the level: the residuals less their kinds' effects, averaged over a narrower kernel
            w = math.exp(-d2 / (2 * LEVEL_BANDWIDTH**2))
            shapes += d2 <= 1.0
            closest = min(closest, (d2, sh))
            for f, n, t in terms:
                num += w * (t - n * effects.get(f, (0.0, 0.0))[0])
                den += w * n
        level = Level(math.exp(num / den), den, shapes, closest[1]) if den > 0 else None
        cache: dict = {}
        out = []
        for c in configs:
            f = family(c, K)
            if f not in cache:
                b, weight = effects.get(f, (0.0, 0.0))
                seen = where.get(f, []) if weight else []
                cache[f] = Correction(math.exp(b + RISK * PRIOR / (weight + PRIOR)), b, weight,
                                      sum(d2 <= 1.0 for d2, _ in seen), min(seen)[1] if seen else ())
            out.append(cache[f])
        return out, level


def records_from_results(paths) -> list[dict]:
    """The bf16 measurements of ``scripts/gemm_h200.py`` / ``scripts/gemm_explore_h200.py`` result files: every row
    that ran correct (``status`` ok) with a configuration txlab can parse, as ``{"shape", "config", "time_us",
    "ratio", "source"}`` (FP8 rows and the library baselines are left out)."""
    import json
    from pathlib import Path

    out = []
    for path in paths:
        doc = json.loads(Path(path).read_text())
        for r in doc.get("rows", []):
            if r.get("status") != "ok" or r.get("dtype", "bf16") != "bf16" or not r.get("tflops"):
                continue
            try:
                c = parse_config(r["config"])
                c.check_shape(*r["shape"])
            except (ValueError, TypeError, KeyError):
                continue
            M, N, K = r["shape"]
            out.append({"shape": [M, N, K], "config": c.name, "time_us": 2 * M * N * K / (r["tflops"] * 1e6),
                        "ratio": r.get("ratio"), "source": Path(path).name})
    return out


#: a row of the measurements file: the index of its shape (in the body's "shapes") and of its configuration's name (in
#: "configs"), the measured time in ns, the index of the result file it came from (in "sources") and the model's time
#: in ps when the file was written. Integers all: JSON reads them in a third of the time of floats, and the reading
#: is a choice's setup (the ratios to cuBLAS stay in the result files)
COLUMNS = ["shape", "config", "time_ns", "source", "model_ps"]


@dataclass
class Measured:
    """The measurements' columns, one entry per row (:data:`COLUMNS`), over the distinct shapes, configuration names
    and result files they index. :func:`read_measured` checks every column; a row's configuration against its shape
    is checked when it is first used (:class:`Neighbours`) or by :func:`load_measured`."""

    path: str
    shapes: list      # distinct (M, N, K)
    configs: list     # distinct configuration names
    sources: list     # result file names
    shape: tuple      # per row: index into shapes
    config: tuple     # per row: index into configs
    time_ns: tuple    # per row: the measured time
    source: tuple     # per row: index into sources
    model_ps: tuple | None = None  # per row the model's time, where the file was written by this model (else None)
    #: configuration name -> its GemmConfig, parsed once (records may bring theirs)
    parsed: dict = field(default_factory=dict, repr=False, compare=False)
    #: (shape index, config index) of the rows whose configuration is known to compute their shape
    checked: set = field(default_factory=set, repr=False, compare=False)

    def where(self, i: int) -> str:
        """``row i (MxNxK)``: how errors name a row."""
        return f"row {i} ({'x'.join(map(str, self.shapes[self.shape[i]]))})"

    def row_config(self, i: int) -> GemmConfig:
        """Row ``i``'s configuration: its name parsed (once per name) and checked against the row's shape (once per
        shape and name); :class:`DamagedRow` naming the row where either fails. What every reader of a row's
        configuration goes through, the checks of :func:`load_measured` (all rows at once) and of
        :class:`Neighbours` (a shape's rows when a query first reaches them) alike."""
        si, ci = self.shape[i], self.config[i]
        name = self.configs[ci]
        cfg = self.parsed.get(name)
        if cfg is not None and (si, ci) in self.checked:
            return cfg
        try:
            if cfg is None:
                cfg = self.parsed[name] = parse_config(name)
            cfg.check_shape(*self.shapes[si])
        except (ValueError, TypeError) as exc:
            raise DamagedRow(f"{self.path}: {self.where(i)}: config {name!r}: {exc}") from None
        self.checked.add((si, ci))
        return cfg

    def records(self) -> list[dict]:
        """A dict per row: ``{"shape", "config", "parsed" (None), "time_us", "source", "model_us"}``."""
        mps = self.model_ps or (None,) * len(self.shape)
        return [{"shape": list(self.shapes[si]), "config": self.configs[ci], "parsed": None, "time_us": t / 1e3,
                 "source": self.sources[so], "model_us": mp / 1e6 if mp is not None else None}
                for si, ci, t, so, mp in zip(self.shape, self.config, self.time_ns, self.source, mps)]

    @classmethod
    def from_records(cls, records: list[dict], path: str = "records") -> Measured:
        shapes: dict = {}
        configs: dict = {}
        sources: dict = {}
        shape = tuple(shapes.setdefault(tuple(r["shape"]), len(shapes)) for r in records)
        config = tuple(configs.setdefault(r["config"], len(configs)) for r in records)
        source = tuple(sources.setdefault(r.get("source"), len(sources)) for r in records)
        mps = tuple(r["model_us"] * 1e6 if r.get("model_us") is not None else None for r in records)
        # a record that brings its parsed configuration was checked by whoever parsed it (load_measured, a test)
        parsed = {r["config"]: r["parsed"] for r in records if r.get("parsed") is not None}
        checked = {(si, ci) for r, si, ci in zip(records, shape, config) if r.get("parsed") is not None}
        return cls(path, list(shapes), list(configs), list(sources), shape, config,
                   tuple(r["time_us"] * 1e3 for r in records), source, mps if any(m is not None for m in mps) else None,
                   parsed, checked)


def write_measured(path, records: list[dict], *, device: str, predict, fingerprint: str) -> dict:
    """Write a measurements file :func:`load_measured` accepts: one sealed body of compact rows (:data:`COLUMNS`),
    each with the model's time (``predict``, the model whose source has ``fingerprint``). Returns the document
    written, without its checksum (which covers the body's bytes in the file)."""
    from pathlib import Path

    m = Measured.from_records(records, str(path))
    model: dict = {}
    rows = []
    for si, ci, t, so in zip(m.shape, m.config, m.time_ns, m.source):
        if (si, ci) not in model:
            model[(si, ci)] = round(predict(*m.shapes[si], parse_config(m.configs[ci])).time_s * 1e12)
        rows.append([si, ci, max(1, round(t)), so, model[(si, ci)]])
    body = {"columns": COLUMNS, "configs": m.configs, "model": fingerprint, "rows": rows,
            "shapes": [list(s) for s in m.shapes], "sources": m.sources}
    # a row a line (diffs stay readable), checksummed as written: reading needs no second dump of the body
    text = seal_text(body, "measurements", lines="rows", format=MEASURED_FORMAT, device=device)
    Path(path).write_text(text, encoding="utf-8", newline="\n")
    load_measured(path, fingerprint=fingerprint)  # what was written must load
    return {"format": MEASURED_FORMAT, "device": device, "measurements": body}


def _measured_path():
    return shipped_data(MEASURED)


def read_measured(path=None, *, fingerprint: str | None = None) -> Measured:
    """The measurements file (``txlab/data/hopper_gemm_measured.json`` unless ``path``) as :class:`Measured`
    columns: format and checksum verified, every column checked (indices in range, times positive integers, names
    strings), not yet each configuration against its shape. ``model_ps`` is None unless ``fingerprint`` is
    that of the model the file was written with (``gemm_model.source_fingerprint()``). Raises ValueError naming
    what is wrong. Column by column (C loops over the ~4,900 rows): a few ms once per process, a choice's setup."""
    from pathlib import Path

    src = Path(path) if path is not None else _measured_path()
    body = read_sealed_text(src, "measurements", MEASURED_FORMAT, what="GEMM measurements file")["measurements"]
    if not isinstance(body, dict) or body.get("columns") != COLUMNS:
        raise ValueError(f"{src}: the measurements are not rows of {COLUMNS} (written by another version of txlab?)")
    shapes, configs, sources, rows = (body.get(k) for k in ("shapes", "configs", "sources", "rows"))
    if not all(isinstance(v, list) for v in (shapes, configs, sources, rows)):
        raise ValueError(f"{src}: 'shapes', 'configs', 'sources' and 'rows' must be lists")
    sizes = list(itertools.chain.from_iterable(shapes)) if set(map(type, shapes)) <= {list} else None
    if (sizes is None or not set(map(len, shapes)) <= {3} or not set(map(type, sizes)) <= {int}
            or min(sizes, default=1) < 1):
        j = next(j for j, sh in enumerate(shapes)
                 if not (type(sh) is list and len(sh) == 3 and all(type(v) is int and v > 0 for v in sh)))
        raise ValueError(f"{src}: shape {j} is not three positive integers: {shapes[j]!r}")
    shapes = list(map(tuple, shapes))
    if len(set(shapes)) != len(shapes):
        raise ValueError(f"{src}: the shapes are not distinct")
    width = len(COLUMNS)
    if not set(map(type, rows)) <= {list} or not set(map(len, rows)) <= {width}:
        i = next(i for i, row in enumerate(rows) if type(row) is not list or len(row) != width)
        raise ValueError(f"{src}: row {i} is not a list of {width} values ({COLUMNS})")
    cols = list(zip(*rows)) if rows else [()] * width
    shape, config, time_ns, source, model_ps = cols

    def bad(i: int, what: str):
        at = f"row {i}"
        if type(shape[i]) is int and 0 <= shape[i] < len(shapes):
            at += f" ({'x'.join(map(str, shapes[shape[i]]))})"
        return ValueError(f"{src}: {at}: {what}")

    def index(col, n: int, name: str) -> None:
        if not (set(map(type, col)) <= {int} and (not col or (min(col) >= 0 and max(col) < n))):
            i = next(i for i, v in enumerate(col) if not (type(v) is int and 0 <= v < n))
            raise bad(i, f"{name} {col[i]!r} is not an index into {n} {name}s")

    def positive(col, name: str) -> None:
        if not (set(map(type, col)) <= {int} and (not col or min(col) > 0)):
            i = next(i for i, v in enumerate(col) if not (type(v) is int and v > 0))
            raise bad(i, f"{name} {col[i]!r} is not a positive integer")

    index(shape, len(shapes), "shape")
    if not set(map(type, configs)) <= {str}:
        j = next(j for j, c in enumerate(configs) if type(c) is not str)
        i = next((i for i, c in enumerate(config) if c == j), None)
        raise (bad(i, f"config {configs[j]!r}: not a configuration name") if i is not None else
               ValueError(f"{src}: config {j} ({configs[j]!r}): not a configuration name"))
    index(config, len(configs), "config")
    index(source, len(sources), "source")
    positive(time_ns, "time_ns")
    current = fingerprint is not None and body.get("model") == fingerprint  # the model_ps column is this model's
    if current:
        positive(model_ps, "model_ps")
    return Measured(str(src), shapes, configs, sources, shape, config, time_ns, source, model_ps if current else None)


def load_measured(path=None, *, fingerprint: str | None = None, verify: bool = True) -> list[dict]:
    """:func:`read_measured`'s rows as ``{"shape", "config", "parsed", "time_us", "source", "model_us"}``
    records, each configuration parsed and checked against its shape (``verify=False``: left unparsed, ``"parsed"``
    None). Raises ValueError naming what is wrong."""
    m = read_measured(path, fingerprint=fingerprint)
    out = m.records()
    if verify:
        for i, rec in enumerate(out):
            rec["parsed"] = m.row_config(i)
    return out


class DamagedRow(ValueError):
    """A measurement whose configuration cannot compute its shape."""


@dataclass
class LeftOneOut:
    """:func:`left_one_out`'s account: per group of configurations measured together on one shape, the pick's time
    over the group's fastest, ranked by the model alone and with the other shapes' corrections."""

    groups: list       # [(source, shape)]
    model: list        # the model alone's pick / fastest, per group
    corrected: list    # with the neighbours' corrections, per group
    #: per measurement of every group: |log(measured / time)| for the model's time times its kind's correction, and
    #: for that times the shape's Level as well (the expected time explain shows)
    absolute_ranked: list = field(default_factory=list)
    absolute_expected: list = field(default_factory=list)

    def summary(self) -> dict:
        def stats(xs):
            return {"mean_loss": sum(xs) / len(xs) - 1, "over_3pct": sum(x > 1.03 for x in xs),
                    "over_8pct": sum(x > 1.08 for x in xs)}

        def median(xs):
            return sorted(xs)[len(xs) // 2] if xs else math.nan

        moved = list(zip(self.model, self.corrected))
        return {"groups": len(self.groups), "model": stats(self.model), "corrected": stats(self.corrected),
                "faster": sum(b < a * 0.99 for a, b in moved), "slower": sum(b > a * 1.01 for a, b in moved),
                "absolute": {"measurements": len(self.absolute_expected),
                             "ranked_median_log_error": median(self.absolute_ranked),
                             "expected_median_log_error": median(self.absolute_expected)}}


def left_one_out(records: list[dict], predict) -> LeftOneOut:
    """Rank every group of ``records`` measured together (one result file, one shape, two or more configurations)
    by the model alone and by the model with the corrections of every *other* shape's measurements (the shape's own
    left out): how much the corrections help on shapes they have not seen."""
    nb = Neighbours(records, predict)
    groups: dict = {}
    for r in records:
        groups.setdefault((r["source"], tuple(r["shape"])), []).append(r)
    out = LeftOneOut([], [], [])
    for (source, shape), rows in groups.items():
        if len(rows) < 2:
            continue
        configs = [r["parsed"] for r in rows]
        model = [predict(*shape, c).time_s for c in configs]
        corr, level = (nb.fit(*shape, configs, exclude=shape) if corrects(*shape[:2])
                       else ([NONE] * len(configs), None))
        for r, t, c in zip(rows, model, corr):
            err = math.log(r["time_us"] * 1e-6 / (t * c.factor))
            out.absolute_ranked.append(abs(err))
            out.absolute_expected.append(abs(err - (math.log(level.factor) if level is not None else 0.0)))
        best = min(r["time_us"] for r in rows)
        out.groups.append((source, shape))
        out.model.append(rows[min(range(len(rows)), key=lambda i: model[i])]["time_us"] / best)
        out.corrected.append(rows[min(range(len(rows)), key=lambda i: model[i] * corr[i].factor)]["time_us"] / best)
    return out


@functools.lru_cache(maxsize=1)
def shipped(predict, fingerprint: str) -> Neighbours:
    """The shipped measurements' :class:`Neighbours` (once per process). The file's format, checksum and columns are
    verified on reading, each row's configuration against its shape when a query first uses it (a choice touches a
    few hundred of the ~1,200 shapes). A damaged file, or a row that fails its check, warns once and gives no
    corrections (the model alone) from then on."""
    try:
        measured = read_measured(fingerprint=fingerprint)
    except (ValueError, OSError) as exc:
        import warnings

        warnings.warn(f"gemm_neighbours: ignoring the measurements file: {exc}", stacklevel=2)
        return Neighbours([], predict)
    return Neighbours.from_measured(measured, predict)
