"""``trace()``: run a scheduler's recorder program (:mod:`txlab.schedulers.recorder`) and collect the
tiles each CTA visits into a :class:`~txlab.schedulers.schedule.ScheduleTrace`."""

from __future__ import annotations

import numpy as np

from txlab.errors import InputError, TxlabError
from txlab.schedulers.catalogue import spec_of
from txlab.schedulers.params import MAX_TRACE_TILES, _as_int, _default_ctas, _grid_size, _normalize
from txlab.schedulers.recorder import _ConstantDivideByZero, _executable, _recorder_text
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
    dynamic = not specialize
    rank = spec.name == "RankAwareGroupMajorTileScheduler"
    try:
        text, scalar_names = _recorder_text(spec, p, workers, nworkers, dynamic, device)
        exe, fn = _executable(text, rank, device)
    except _ConstantDivideByZero as exc:
        if not dynamic:
            raise TxlabError(f"{exc} Or pass specialize=False to trace the runtime-extent build.") from None
        # The runtime-extent build keeps group sizes constant while the extents are unknown, so a
        # branch that only some extents reach divides by a constant 0 (e.g. l2_group_size=1).
        # With every parameter known that branch folds away: trace the specialized build.
        dynamic, specialize = False, True
        try:
            text, scalar_names = _recorder_text(spec, p, workers, nworkers, dynamic, device)
            exe, fn = _executable(text, rank, device)
        except _ConstantDivideByZero as exc2:
            raise TxlabError(f"{exc2} (both the runtime-extent and the specialized build fail)") from None

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
    return ScheduleTrace(
        spec.name,
        public,
        nworkers,
        ctas,
        steps,
        {a: values[:, i].copy() for i, a in enumerate(spec.attrs)},
        concurrency=concurrency,
        device=device,
        specialized=specialize,
    )
