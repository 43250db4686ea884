"""Fit :class:`txlab.emulator.tensorcore.Model` parameters to H200 outputs collected by
``scripts/tensorcore_probe_h200.py``: for each instruction, every combination of block size,
alignment bits, truncation and rounding modes is tried on the finite families and the mismatch
count printed (the best first); ``--check`` instead replays the emulator's fitted model on every
trial and prints the mismatches per family.

    PYTHONPATH=. python scripts/fit_tensorcore.py DIR_OR_TAR [--only NAME] [--check]
"""

from __future__ import annotations

import argparse
import io
import itertools
import sys
import tarfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "scripts"))
from tensorcore_probe_h200 import FAMILIES  # noqa: E402 - the probe's input families, in its order


def load(paths):
    """name -> dict of arrays, from .npz files, folders or .tar files of them."""
    out = {}
    for p in paths:
        p = Path(p)
        if p.is_dir():
            for f in sorted(p.glob("*.npz")):
                out[f.stem] = dict(np.load(f))
            for f in sorted(p.glob("*.tar")):
                out.update(load([f]))
        elif p.suffix == ".tar":
            with tarfile.open(p) as t:
                for m in t.getmembers():
                    out[Path(m.name).stem] = dict(np.load(io.BytesIO(t.extractfile(m).read())))
        else:
            out[p.stem] = dict(np.load(p))
    return out


def parse(name):
    """'mma_m16n8k16_f16_f32' -> ('mma', k, atype, ctype)."""
    kind, shape, at, ct = name.split("_")
    k = int(shape.split("k")[1])
    return kind, k, at, ct


def bits(d, ct):
    """float64 results -> the accumulator's bit patterns (NaN canonical, as the hardware writes)."""
    dt = np.float32 if ct == "f32" else np.float16
    with np.errstate(over="ignore", invalid="ignore"):
        out = d.astype(dt).view(np.uint32 if ct == "f32" else np.uint16).copy()
    out[np.isnan(d)] = 0x7FFFFFFF if ct == "f32" else 0x7FFF
    return out


def main():
    from txlab.emulator import tensorcore as tc

    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--only", default="")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--keep", type=int, default=0, help="fraction bits of a block's result (0: format's)")
    ap.add_argument("--fmin", type=int, default=10)
    ap.add_argument("--fmax", type=int, default=30)
    ap.add_argument("--families", default="narrow,moderate,cdom,cancel,ties,staircase,exact")
    args = ap.parse_args()
    data = load(args.paths)
    total = 0
    for name, rec in data.items():
        if args.only and args.only not in name:
            continue
        kind, k, at, ct = parse(name)
        if at in ("s8", "u8"):
            continue
        D = rec["D"]
        fam = rec["family"]
        if args.check:
            got = tc.run_bits(kind, at, ct, rec["A"], rec["B"], rec["C"])
            bad = got != D
            total += int(bad.sum())
            per = {FAMILIES[f]: int(bad[fam == f].sum()) for f in np.unique(fam) if bad[fam == f].any()}
            print(f"{name:28} {int(bad.sum()):6} of {bad.size:6} differ  {per or ''}")
            continue
        A, B, C = tc.decode_operands(rec["A"], rec["B"], rec["C"], at, ct)
        keep = np.isin(fam, [FAMILIES.index(f) for f in args.families.split(",")])
        A, B, C, D = A[keep], B[keep], C[keep], D[keep]
        res = []
        blocks = sorted({k, max(1, k // 2), 4, 8, 16} & set(range(1, k + 1)))
        for blk, frac, align, rnd, raw in itertools.product(
            blocks, range(args.fmin, args.fmax), ("rz", "rd"), ("rz", "rne"), (False, True)
        ):
            order = tuple(tuple(range(i, min(i + blk, k))) for i in range(0, k, blk))
            m = tc.Model(frac=frac, round=rnd, keep=args.keep, order=order, raw_exp=raw, align=align)
            got = bits(tc.mma(A, B, C, m, ct, tc.OP_EMIN[at]), ct)
            res.append((int((got != D).sum()), blk, frac, align, rnd, raw))
        res.sort()
        print(name, D.size, "best (mismatches, block, frac, align, round, raw_exp):", res[:6])
    if args.check:
        print(f"total mismatches: {total}")
        sys.exit(1 if total else 0)


if __name__ == "__main__":
    main()
