"""Checking a trace's parameters before anything runs (a zero divisor would kill the process with
SIGFPE), the grid a parameter set covers, and host-side LPT index lists."""

from __future__ import annotations

import numpy as np

from txlab.errors import InputError
from txlab.schedulers.catalogue import SchedulerSpec

DEFAULT_SM_COUNT = 132  # H100/H200 SXM; used when no GPU is present
# Default cap on the tiles one trace records: about 12 bytes per visit per attribute plus the
# recorder's padded output buffer, so 2**22 tiles cost roughly 0.2-0.4 GB. trace(max_tiles=) raises it.
MAX_TRACE_TILES = 2**22


def _as_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an int, got {value!r}", param=name)
    value = int(value)
    if value < minimum:
        what = "positive" if minimum == 1 else f">= {minimum}"
        raise InputError(f"{name}={value}: must be {what}", param=name)
    if value >= 2**31:
        raise InputError(f"{name}={value} does not fit the schedulers' int32 indices", param=name)
    return value


def _default_ctas() -> int:
    try:
        from txlab.device import probe

        info = probe()
        if info.available and info.sm_count:
            return info.sm_count
    except Exception:  # noqa: BLE001 - probe never raises, but never let it break a trace
        pass
    return DEFAULT_SM_COUNT


def _check_tiles(spec: SchedulerSpec, tiles: int, max_tiles: int) -> None:
    if tiles > max_tiles:
        raise InputError(
            f"{spec.name}: {tiles:,} tiles is more than one trace records by default "
            f"({max_tiles:,}; a trace keeps every visit, about 12 bytes x {len(spec.attrs)} attributes "
            f"each, and 2**31 is the int32 index limit): use a smaller grid, or pass "
            f"max_tiles={tiles} (at most {2**31 - 1:,}) to trace it anyway",
            param="max_tiles",
        )


def _normalize(
    spec: SchedulerSpec, num_ctas, params: dict, max_tiles: int = MAX_TRACE_TILES
) -> tuple[dict, int | None, int]:
    """Checked params, the worker count handed to the class (None = one task per CTA), and the
    number of CTAs the recorder loops over."""
    max_tiles = min(_as_int("max_tiles", max_tiles, 1), 2**31 - 1)
    params = dict(params)
    if spec.name == "ClusterPersistentScheduler2D" and "num_clusters" in params:
        nc = params.pop("num_clusters")
        if num_ctas is not None and nc != num_ctas:
            raise InputError("give num_ctas or num_clusters, not both", param="num_clusters")
        num_ctas = nc
    if spec.name == "FlashAttentionLPTScheduler" and "num_ctas" in params:
        num_ctas = params.pop("num_ctas")
    known = {p.name for p in spec.params}
    unknown = sorted(set(params) - known)
    if unknown:
        raise InputError(
            f"{spec.name} has no parameter {', '.join(map(repr, unknown))}; "
            f"it takes {', '.join(sorted(known))} (and num_ctas)",
            param=unknown[0],
        )
    out = {}
    for p in spec.params:
        v = params.get(p.name, p.default)
        if p.kind == "int":
            out[p.name] = _as_int(p.name, v, p.minimum)
        elif p.kind == "bool":
            if not isinstance(v, (bool, np.bool_)):
                raise InputError(f"{p.name} must be True or False, got {v!r}", param=p.name)
            out[p.name] = bool(v)
        else:
            arr = np.asarray(list(v) if not isinstance(v, np.ndarray) else v)
            if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
                raise InputError(f"{p.name} must be a 1-D list of ints", param=p.name)
            if arr.size and (arr.min() < 0 or arr.max() >= 2**31):
                raise InputError(f"{p.name} has values outside [0, 2**31)", param=p.name)
            out[p.name] = [int(x) for x in arr]
    name = spec.name
    if name == "IndexedTripleTileScheduler":
        b, hh, q, ptr = (out[k] for k in ("b_indices", "h_indices", "q_indices", "tiles_indptr"))
        if not (len(b) == len(hh) == len(q)):
            raise InputError(
                f"b_indices, h_indices, q_indices must have equal length (got {len(b)}, {len(hh)}, {len(q)})",
                param="q_indices",
            )
        if len(b) == 0:
            raise InputError("the index lists are empty: zero tiles to schedule", param="b_indices")
        _check_tiles(spec, len(b), max_tiles)
        if len(ptr) < 2:
            raise InputError("tiles_indptr needs num_ctas + 1 entries (at least 2)", param="tiles_indptr")
        if any(x > y for x, y in zip(ptr, ptr[1:])) or ptr[-1] > len(b):
            raise InputError(
                f"tiles_indptr must be non-decreasing and end at most at "
                f"len(b_indices)={len(b)}; got {ptr[:8]}{'...' if len(ptr) > 8 else ''}",
                param="tiles_indptr",
            )
        if num_ctas is not None and num_ctas != len(ptr) - 1:
            raise InputError(f"num_ctas={num_ctas} but tiles_indptr describes {len(ptr) - 1} CTAs", param="num_ctas")
        return out, None, len(ptr) - 1
    if name == "ClusterPersistentScheduler2D":
        tiles = out["num_m_tiles"] * out["num_n_tiles"]
    elif name == "GroupMajor3D":
        tiles = out["m_tiles"] * out["n_tiles"] * out["k_tiles"]
    elif name == "RankAwareGroupMajorTileScheduler":
        tiles = out["m_clusters"] * out["n_clusters"]
        if out["world_size"] > out["m_clusters"]:
            raise InputError(
                f"world_size={out['world_size']} exceeds m_clusters="
                f"{out['m_clusters']}: each rank owns m_clusters // world_size rows",
                param="world_size",
            )
        if out["rank"] >= out["world_size"]:
            raise InputError(f"rank={out['rank']} must be < world_size={out['world_size']}", param="rank")
    else:
        tiles = out["num_batches"] * out["num_heads"] * out["num_m_blocks"]
    _check_tiles(spec, tiles, max_tiles)
    if name == "FlashAttentionLPTScheduler" and not out["persistent"] and num_ctas is None:
        return out, None, tiles  # one task per CTA: the grid is the task count
    if num_ctas is None:
        num_ctas = min(_default_ctas(), tiles)
    num_ctas = _as_int("num_ctas", num_ctas, 1)
    if num_ctas > tiles:
        raise InputError(
            f"num_ctas={num_ctas} is more than the {tiles} tiles: "
            f"{num_ctas - tiles} CTAs would get no work; use num_ctas <= {tiles}",
            param="num_ctas",
        )
    if name == "FlashAttentionLPTScheduler":
        out["persistent"] = True
    if name == "GroupMajor3D" and out["step"] == 0:
        out["step"] = num_ctas
    return out, num_ctas, num_ctas


def _grid_size(spec, p) -> int:
    n = spec.name
    if n == "ClusterPersistentScheduler2D":
        return p["num_m_tiles"] * p["num_n_tiles"]
    if n == "GroupMajor3D":
        return p["m_tiles"] * p["n_tiles"] * p["k_tiles"]
    if n == "RankAwareGroupMajorTileScheduler":
        return p["m_clusters"] * p["n_clusters"]
    if n == "IndexedTripleTileScheduler":
        return len(p["b_indices"])
    return p["num_batches"] * p["num_heads"] * p["num_m_blocks"]


def lpt_index_lists(num_batches: int, num_heads: int, num_m_blocks: int, num_ctas: int, causal: bool = True) -> dict:
    """Index lists for ``IndexedTripleTileScheduler``: tasks sorted by causal cost (heaviest first)
    and assigned greedily to the least-loaded CTA (host-side LPT). Returns the four lists."""
    import heapq

    tasks = [(b, h, q) for b in range(num_batches) for h in range(num_heads) for q in range(num_m_blocks)]
    cost = (lambda q: q + 1) if causal else (lambda q: num_m_blocks)
    tasks.sort(key=lambda t: -cost(t[2]))
    heap = [(0, c) for c in range(num_ctas)]
    per = [[] for _ in range(num_ctas)]
    for t in tasks:
        load, c = heapq.heappop(heap)
        per[c].append(t)
        heapq.heappush(heap, (load + cost(t[2]), c))
    b, hh, q, ptr = [], [], [], [0]
    for lst in per:
        for x, y, z in lst:
            b.append(x), hh.append(y), q.append(z)
        ptr.append(len(b))
    return {"b_indices": b, "h_indices": hh, "q_indices": q, "tiles_indptr": ptr}
