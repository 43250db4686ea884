"""``trace()``: run a scheduler's recorder program (:mod:`txlab.schedulers.recorder`) and collect the
tiles each CTA visits into a :class:`~txlab.schedulers.schedule.ScheduleTrace`."""

from __future__ import annotations

import numpy as np

from txlab.errors import InputError, TxlabError
from txlab.schedulers.catalogue import spec_of
from txlab.schedulers.params import MAX_TRACE_TILES, _as_int, _default_ctas, _grid_size, _normalize
from txlab.schedulers.recorder import (
    RUNTIME_EXTENTS,
    RUNTIME_PARAMETERS,
    SPECIALIZED,
    _ConstantDivideByZero,
    _executable,
    _recorder_text,
)
from txlab.schedulers.schedule import ScheduleTrace


def trace(
    name_or_class,
    num_ctas: int | None = None,
    *,
    device: str = "cpu",
    specialize: bool = True,
    concurrency: int | None = None,
    max_tiles: int = MAX_TRACE_TILES,
    **params,
) -> "ScheduleTrace":
    """Run a ``tvm.backend.cuda.lang`` tile scheduler and record the tiles each CTA visits.

    ``num_ctas`` is the persistent worker count the class strides by (``num_clusters`` for
    ``ClusterPersistentScheduler2D``, where a worker is a cluster); default: the GPU's SM count,
    or 132 without a GPU, capped at the tile count. For ``FlashAttentionLPTScheduler`` leaving it
    None keeps the class's one-task-per-CTA mode (pass ``persistent=True`` for the default count).
    ``IndexedTripleTileScheduler`` takes its CTA count from ``tiles_indptr``.
    ``RankAwareGroupMajorTileScheduler`` takes ``rank`` (0 <= rank < world_size): it replaces
    ``T.nvshmem.my_pe()`` as a kernel argument of the recorder (see the module docstring).

    ``device="cuda"`` launches the recorder as a real kernel (one CTA per worker, CTA index from
    ``T.cta_id``) and reads the buffers back; ``concurrency`` is the number of CTAs resident at once
    for the wave model (default: min(num_ctas, SM count)). ``max_tiles`` caps the grid (the product
    of the tile counts; default ``MAX_TRACE_TILES`` = 2**22): a larger grid raises InputError.

    Some parameter sets make TVM divide by a constant 0 in a branch of the class that is dead for them
    (e.g. ``group_size=1`` or ``world_size=1`` of ``RankAwareGroupMajorTileScheduler``, ``l2_group_size=1``):
    its constant folder refuses to compile that. The trace then runs the other build (specialized or
    runtime-extent), and where both fail one whose every integer parameter is a kernel argument (no constant
    divisor left; one compile of some seconds serves every parameter set). The result's ``build`` says which
    ran and ``notes`` why.
    """
    spec = spec_of(name_or_class)
    if device not in ("cpu", "cuda"):
        raise InputError(f"device must be 'cpu' or 'cuda', not {device!r}", param="device")
    if not isinstance(specialize, (bool, np.bool_)):
        raise InputError(f"specialize must be True or False, got {specialize!r}", param="specialize")
    p, workers, nworkers = _normalize(spec, num_ctas, params, max_tiles)
    if device == "cuda":
        from txlab.device import require_gpu

        require_gpu("tracing a scheduler on the GPU")
        specialize = True
    rank = spec.name == "RankAwareGroupMajorTileScheduler"
    # The build asked for first, then the other: the runtime-extent build keeps group sizes constant while
    # the extents are unknown, so a branch only some extents reach can divide by a constant 0 (l2_group_size=1)
    # where the specialized build folds it away, and the other way round (the specialized build sees a 0
    # divisor, final_rows of RankAwareGroupMajorTileScheduler at the catalogue's defaults, that runtime
    # extents hide). Where both fail (a divisor that is 0 from the constants alone, group_size=1 or
    # world_size=1), every integer parameter becomes a kernel argument, which leaves no constant divisor.
    # Running a build whose divisor is a run-time value is safe with TVM 0.27's classes: every divisor there is
    # a parameter _normalize checked to be >= 1, clamped (max(FINAL_ROWS, 1)), or inside a branch whose guard
    # is false when it is 0 (TAIL_ROWS > 0, M_BLOCKS > 0, group_rows > 0, linear_idx < remote rows): a live
    # division by 0 would be a SIGFPE, and the fuzz over every catalogue scheduler found none.
    ladder = [SPECIALIZED, RUNTIME_EXTENTS] if specialize else [RUNTIME_EXTENTS, SPECIALIZED]
    ladder.append(RUNTIME_PARAMETERS)
    failed = []
    for build in ladder:
        dynamic = {SPECIALIZED: False, RUNTIME_EXTENTS: True, RUNTIME_PARAMETERS: RUNTIME_PARAMETERS}[build]
        try:
            text, scalar_names = _recorder_text(spec, p, workers, nworkers, dynamic, device)
            exe, fn = _executable(text, rank, device)
            break
        except _ConstantDivideByZero as exc:
            failed.append((build, exc))
    else:
        raise TxlabError(
            f"{spec.name} with {_settings(spec, p)}: {failed[0][1]} Every build fails ("
            f"{', '.join(b for b, _ in failed)}), the last with every integer parameter a kernel argument, so "
            "txlab cannot trace it; change the parameters."
        ) from None
    notes = []
    if failed:
        what = {
            SPECIALIZED: "every parameter a constant",
            RUNTIME_EXTENTS: "extents and worker counts kernel arguments",
            RUNTIME_PARAMETERS: "every integer parameter a kernel argument",
        }[build]
        notes.append(
            f"traced the {build} build ({what}): the {' and the '.join(b for b, _ in failed)} build"
            f"{'s' if len(failed) > 1 else ''} of {spec.name} with {_settings(spec, p)} divide"
            f"{'' if len(failed) > 1 else 's'} by a constant 0 in a branch that is dead for these parameters "
            "(TVM's constant folder refuses it)"
        )

    import tvm

    dev = tvm.cuda(0) if device == "cuda" else tvm.cpu(0)
    scalar_values = {"p_nworkers": nworkers, "p_num_clusters": workers, "p_num_ctas": workers, "p_stride": workers}
    scalar_values.update({f"p_{k}": v for k, v in p.items() if not isinstance(v, list)})
    scalars = [int(scalar_values[s]) for s in scalar_names]
    if rank:
        scalars.append(int(p["rank"]))
    if spec.name == "IndexedTripleTileScheduler":
        total = len(p["b_indices"])
        idx = [
            tvm.runtime.tensor(np.asarray(p[k], dtype="int32"), device=dev)
            for k in ("b_indices", "h_indices", "q_indices", "tiles_indptr")
        ]
    else:
        total = _grid_size(spec, p)
        idx = []
    limit = min(4 * total + 16, 2**31 - 1)  # runaway guard: no correct scheduler revisits every tile
    cap = max(1, -(-total // max(nworkers, 1)) + 1)
    if spec.name == "IndexedTripleTileScheduler":
        ptr = p["tiles_indptr"]
        cap = max(1, max(b - a for a, b in zip(ptr, ptr[1:])))
    w = len(spec.attrs)
    for _ in range(2):
        out = tvm.runtime.tensor(np.full((nworkers, cap, w), -1, dtype="int32"), device=dev)
        cnt = tvm.runtime.tensor(np.zeros((nworkers,), dtype="int32"), device=dev)
        try:
            fn(out, cnt, *idx, cap, limit, *scalars)
        except Exception as exc:
            raise TxlabError(f"the {spec.name} recorder failed to run: {exc}") from exc
        counts = cnt.numpy()
        if counts.size and counts.max() >= limit:
            bad = int(np.argmax(counts))
            raise TxlabError(
                f"{spec.name} did not terminate for these parameters: CTA {bad} was "
                f"still valid() after {limit} tiles (grid of {total} tiles)"
            )
        if counts.size == 0 or counts.max() <= cap:
            break
        cap = int(counts.max())
    raw = out.numpy()
    steps = np.concatenate([np.arange(c, dtype=np.int32) for c in counts]) if counts.sum() else np.zeros(0, np.int32)
    ctas = np.repeat(np.arange(nworkers, dtype=np.int32), counts)
    mask = np.arange(cap)[None, :] < counts[:, None]
    values = raw[mask]  # (n, w) in CTA-major, step order
    if concurrency is None:
        concurrency = min(nworkers, _default_ctas())
    concurrency = _as_int("concurrency", concurrency, 1)
    public = {k: v for k, v in p.items()}
    if not counts.sum():
        notes.append(_empty_note(spec, p))
    return ScheduleTrace(
        spec.name,
        public,
        nworkers,
        ctas,
        steps,
        {a: values[:, i].copy() for i, a in enumerate(spec.attrs)},
        concurrency=concurrency,
        device=device,
        specialized=build == SPECIALIZED,
        build=build,
        notes=notes,
    )


def _settings(spec, p) -> str:
    """The constant parameters of a trace, as a reader would write them (extents and lists left out)."""
    shown = [f"{q.name}={p[q.name]!r}" for q in spec.params if q.kind != "ints" and not q.runtime]
    return ", ".join(shown) or "these parameters"


def _empty_note(spec, p) -> str:
    """Why no CTA visited a tile."""
    if spec.name == "IndexedTripleTileScheduler":
        ptr = p["tiles_indptr"]
        return (
            f"empty: no CTA visits a tile (tiles_indptr {ptr[:8]}{'...' if len(ptr) > 8 else ''} gives every one of "
            f"the {len(ptr) - 1} CTAs an empty range of the {len(p['b_indices'])} listed tiles)"
        )
    return "empty: no CTA visits a tile"
