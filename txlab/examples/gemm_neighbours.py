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
the group's fastest falls from 1.88 % (the model alone) to 1.02 %, and picks more than 8 % slower than the fastest from
64 to 30 of 992 groups (:func:`left_one_out`). Outputs of 64 rows or columns or fewer keep the model alone
(:data:`DECODE_ROWS`).

No TVM and no GPU here, and no import of the model: it is handed the model's ``predict`` (and the fingerprint of
its source, ``gemm_model.source_fingerprint``), so the model can use this module without a cycle. The file carries
the model's time for each measurement, trusted while the fingerprint matches. Reading its ~4,500 rows and checking
the checksum costs ~10 ms once per process; a row's configuration is parsed and checked against its shape when a
query first uses it (:func:`shipped`; :func:`load_measured` checks them all), a correction ~5 ms.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

from txlab.examples.gemm_config import GemmConfig, parse_config, row_phase

MEASURED = "hopper_gemm_measured.json"
MEASURED_FORMAT = "txlab-hopper-gemm-measured/2"  # 2: the sha256 covers the body's bytes as written
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
    query scans the measured shapes (about a thousand) and fits the few hundred rows near it in a few ms, and needs
    no numpy import."""

    def __init__(self, records: list[dict], predict, *, verify=None):
        self.count = len(records)
        self._predict = predict  # gemm_model.predict: the model times of rows whose file did not carry them
        self._records = records
        #: None: every record's "parsed" is set (load_measured verified them); else ``verify(i, record)`` parses and
        #: checks row ``i`` before its first use, raising ValueError naming it (the shipped file: :func:`shipped`)
        self._verify = verify
        self._shapes = [tuple(rec["shape"]) for rec in records]
        self._t = [rec["time_us"] * 1e-6 for rec in records]
        self._residual: dict = {}  # record index -> log(measured / model time), once needed
        self._memo: dict = {}      # (shape, config name) -> model time
        self._fam: list = [None] * len(records)  # record index -> family(), once needed
        self._fams: dict = {}  # (config name, K's row phase) -> family: all family() reads of a row (a few hundred)
        # a query's distance scan runs over the distinct shapes (about a quarter of the rows): log2 sizes, shape, rows
        rows_of: dict = {}
        for i, sh in enumerate(self._shapes):
            rows_of.setdefault(sh, []).append(i)
        self._by_shape = [(tuple(math.log2(v) for v in sh), sh, ix) for sh, ix in rows_of.items()]

    def _parsed(self, i: int) -> GemmConfig:
        rec = self._records[i]
        if rec["parsed"] is None:
            self._verify(i, rec)
        return rec["parsed"]

    def _family(self, i: int) -> tuple:
        f = self._fam[i]
        if f is None:
            parsed = self._parsed(i)  # row i checked against its own shape, whether or not its family is known
            K = self._shapes[i][2]
            key = (self._records[i]["config"], row_phase(K))
            f = self._fams.get(key) or self._fams.setdefault(key, family(parsed, K))
            self._fam[i] = f
        return f

    @functools.cached_property
    def peak_flops(self) -> float:
        """The fastest rate measured (flop/s): explain's expected times are never faster (0.0: nothing measured).
        Only explain reads it, so a choice does not pay for it."""
        return max((2 * M * N * K / t for (M, N, K), t in zip(self._shapes, self._t)), default=0.0)

    def _log_residual(self, i: int) -> float:
        if i not in self._residual:
            key = (self._shapes[i], self._records[i]["config"])
            if key not in self._memo:
                stored = self._records[i].get("model_us")
                self._memo[key] = (stored * 1e-6 if stored is not None
                                   else self._predict(*self._shapes[i], self._parsed(i)).time_s)
            self._residual[i] = math.log(self._t[i] / self._memo[key])
        return self._residual[i]

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
            self.__init__([], self._predict)
            return {}, {}

    def _fit_rows(self, M: int, N: int, K: int, exclude) -> tuple[dict, dict]:
        qm, qn, qk = math.log2(M), math.log2(N), math.log2(K)
        cut = (CUTOFF * BANDWIDTH) ** 2
        skip = tuple(exclude) if exclude is not None else None
        by_shape: dict = {}  # shape -> [(family, weight, residual)]
        for (xm, xn, xk), sh, ix in self._by_shape:
            d2 = (xm - qm) ** 2 + (xn - qn) ** 2 + (xk - qk) ** 2
            if d2 < cut and sh != skip:
                w = math.exp(-d2 / (2 * BANDWIDTH**2))
                by_shape[sh] = [(self._family(i), w, self._log_residual(i)) for i in ix]
        # a shape where one kind alone was measured says nothing about kinds against each other
        rows = [v for v in by_shape.values() if len({f for f, _, _ in v}) > 1]
        weight: dict = {}
        for v in rows:
            for f, w, _ in v:
                weight[f] = weight.get(f, 0.0) + w
        b = dict.fromkeys(weight, 0.0)
        for _ in range(ROUNDS):
            u = [sum(w * (r - b[f]) for f, w, r in v) / sum(w for _, w, _ in v) for v in rows]
            num = dict.fromkeys(weight, 0.0)
            for v, level in zip(rows, u):
                for f, w, r in v:
                    num[f] += w * (r - level)
            b = {f: num[f] / (weight[f] + PRIOR) for f in weight}
        return {f: (b[f], weight[f]) for f in weight}, by_shape

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
        q = (math.log2(M), math.log2(N), math.log2(K))
        num = den = 0.0
        shapes, closest = 0, (math.inf, ())
        where: dict = {}  # family -> [(squared distance, shape)] of the shapes it was measured at
        for sh, v in near.items():
            d2 = sum((math.log2(a) - z) ** 2 for a, z in zip(sh, q))
            for f in {g for g, _, _ in v}:
                where.setdefault(f, []).append((d2, sh))
            if d2 > LEVEL_REACH**2:
                continue
            # the level: the residuals less their kinds' effects, averaged over a narrower kernel
            w = math.exp(-d2 / (2 * LEVEL_BANDWIDTH**2))
            shapes += d2 <= 1.0
            closest = min(closest, (d2, sh))
            for f, _, r in v:
                num += w * (r - effects.get(f, (0.0, 0.0))[0])
                den += w
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


#: a row of the measurements file: the shape, the configuration's name, the measured time, the ratio to cuBLAS in the
#: same run and the index of the result file it came from (in the body's "sources")
COLUMNS = ["M", "N", "K", "config", "time_us", "ratio", "source", "model_us"]


def write_measured(path, records: list[dict], *, device: str, predict, fingerprint: str) -> dict:
    """Write a measurements file :func:`load_measured` accepts: one sealed body of compact rows (:data:`COLUMNS`),
    each with the model's time (``predict``, the model whose source has ``fingerprint``). Returns the document
    written, without its checksum (which covers the body's bytes in the file)."""
    from pathlib import Path

    from txlab.cache import seal_text

    sources = list(dict.fromkeys(rec["source"] for rec in records))
    index = {name: i for i, name in enumerate(sources)}
    model: dict = {}
    for rec in records:
        key = (tuple(rec["shape"]), rec["config"])
        if key not in model:
            model[key] = round(predict(*key[0], parse_config(rec["config"])).time_s * 1e6, 4)
    rows = [[*rec["shape"], rec["config"], round(rec["time_us"], 3),
             round(rec["ratio"], 4) if isinstance(rec.get("ratio"), (int, float)) else None, index[rec["source"]],
             model[(tuple(rec["shape"]), rec["config"])]]
            for rec in records]
    body = {"columns": COLUMNS, "sources": sources, "rows": rows, "model": fingerprint}
    # a row a line (diffs stay readable), checksummed as written: reading needs no second dump of the body
    text = seal_text(body, "measurements", lines="rows", format=MEASURED_FORMAT, device=device)
    Path(path).write_text(text, encoding="utf-8", newline="\n")
    load_measured(path, fingerprint=fingerprint)  # what was written must load
    return {"format": MEASURED_FORMAT, "device": device, "measurements": body}


def _measured_path():
    from txlab.files import shipped_data

    return shipped_data(MEASURED)


def load_measured(path=None, *, fingerprint: str | None = None, verify: bool = True) -> list[dict]:
    """The measurements (``txlab/data/hopper_gemm_measured.json`` unless ``path``) as ``{"shape", "config", "parsed",
    "time_us", "ratio", "source", "model_us"}`` records, verified: format, checksum, columns, and every row a
    configuration valid for its shape with a positive, finite time. ``model_us`` (the model's time when the file was
    written) is None unless ``fingerprint`` is that of the model the file was written with
    (``gemm_model.source_fingerprint()``). Raises ValueError naming what is wrong. ``verify=False`` leaves the
    configurations unparsed (``"parsed"`` None) for :func:`row_verifier` to check row by row when first used."""
    from pathlib import Path

    from txlab.cache import read_sealed_text

    src = Path(path) if path is not None else _measured_path()
    body = read_sealed_text(src, "measurements", MEASURED_FORMAT, what="GEMM measurements file")["measurements"]
    if not isinstance(body, dict) or body.get("columns") != COLUMNS:
        raise ValueError(f"{src}: the measurements are not rows of {COLUMNS} (written by another version of txlab?)")
    sources, rows = body.get("sources"), body.get("rows")
    if not (isinstance(sources, list) and isinstance(rows, list)):
        raise ValueError(f"{src}: 'sources' and 'rows' must be lists")
    current = fingerprint is not None and body.get("model") == fingerprint  # the model_us column is this model's
    out = []
    width, nsources, inf, number = len(COLUMNS), len(sources), math.inf, (int, float)
    for i, row in enumerate(rows):  # once per process, a few thousand rows: kept lean (gemm_model.choose's setup)
        if type(row) is not list or len(row) != width:
            raise ValueError(f"{src}: row {i} is not a list of {width} values ({COLUMNS})")
        M, N, K, name, t, ratio, source, model_us = row
        if not (type(M) is int and type(N) is int and type(K) is int and M > 0 and N > 0 and K > 0):
            raise ValueError(f"{src}: row {i} has a bad shape {[M, N, K]!r}")
        if type(name) is not str:  # before it keys a dict: a list there would escape as a TypeError
            raise ValueError(f"{src}: row {i} ({M}x{N}x{K}): config {name!r}: not a configuration name")
        if not (isinstance(t, number) and 0 < t < inf):
            raise ValueError(f"{src}: row {i} ({M}x{N}x{K}): time_us {t!r} is not a positive number")
        if not (type(source) is int and 0 <= source < nsources):
            raise ValueError(f"{src}: row {i} ({M}x{N}x{K}): source {source!r} is not an index into 'sources'")
        if current and not (isinstance(model_us, number) and 0 < model_us < inf):
            raise ValueError(f"{src}: row {i} ({M}x{N}x{K}): model_us {model_us!r} is not a positive number")
        out.append({"shape": [M, N, K], "config": name, "parsed": None, "time_us": t, "ratio": ratio,
                    "source": sources[source], "model_us": model_us if current else None})
    if verify:
        check = row_verifier(src)
        for i, rec in enumerate(out):
            check(i, rec)
    return out


class DamagedRow(ValueError):
    """A measurement whose configuration cannot compute its shape (:func:`row_verifier`)."""


def row_verifier(src):
    """``check(i, record)``: parses row ``i``'s configuration (once per name) into ``record["parsed"]`` and checks it
    against the row's shape (once per shape and name), else ValueError naming the row of ``src``."""
    parsed: dict = {}
    checked: set = set()

    def check(i: int, rec: dict) -> None:
        (M, N, K), name = rec["shape"], rec["config"]
        key = (M, N, K, name)
        if key not in checked:
            try:
                if name not in parsed:
                    parsed[name] = parse_config(name)
                parsed[name].check_shape(M, N, K)
            except (ValueError, TypeError) as exc:
                raise DamagedRow(f"{src}: row {i} ({M}x{N}x{K}): config {name!r}: {exc}") from None
            checked.add(key)
        rec["parsed"] = parsed[name]

    return check


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
    """The shipped measurements' :class:`Neighbours` (once per process). The file's format and checksum are verified
    on reading, each row's configuration against its shape when a query first uses it (a choice touches a few hundred
    of the ~4,500 rows, so the first costs a few ms rather than ~15). A damaged file, or a row that fails its check,
    warns once and gives no corrections (the model alone) from then on."""
    try:
        records = load_measured(fingerprint=fingerprint, verify=False)
    except (ValueError, OSError) as exc:
        import warnings

        warnings.warn(f"gemm_neighbours: ignoring the measurements file: {exc}", stacklevel=2)
        return Neighbours([], predict)
    return Neighbours(records, predict, verify=row_verifier(_measured_path()))
