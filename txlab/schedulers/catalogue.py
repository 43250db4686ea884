"""The schedulers txlab traces: what each of ``tvm.backend.cuda.lang``'s tile schedulers takes and
exposes (names are the class's own), and which parameters a runtime-extent build passes as arguments."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from txlab.errors import InputError


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "int" | "bool" | "ints"
    default: Any
    minimum: int = 1
    help: str = ""
    # a specialize=False build passes it as a kernel argument (extents and worker counts); group
    # sizes, cluster shape, swizzle and world size stay compile-time constants, as in kernels
    # (making them runtime values also sends TVM's lowering into very long compiles)
    runtime: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class SchedulerSpec:
    name: str
    family: str  # "gemm" (m,n[,k] tiles) or "attention" (batch, head, m-block)
    params: tuple  # Param, in constructor order (without prefix / worker count)
    attrs: tuple  # attribute names recorded per visit
    doc: str = ""

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "family": self.family,
            "attrs": list(self.attrs),
            "params": [p.to_dict() for p in self.params],
            "doc": self.doc,
        }


# the attention schedulers' work grid: (batch, head, m-block)
_ATTENTION_GRID = (
    Param("num_batches", "int", 2, runtime=True),
    Param("num_heads", "int", 8, runtime=True),
    Param("num_m_blocks", "int", 16, runtime=True),
)
_ATTENTION_ATTRS = ("batch_idx", "head_idx", "m_block_idx")

SCHEDULERS: dict[str, SchedulerSpec] = {
    s.name: s
    for s in (
        SchedulerSpec(
            "ClusterPersistentScheduler2D",
            "gemm",
            (
                Param("num_m_tiles", "int", 16, help="tiles along M", runtime=True),
                Param("num_n_tiles", "int", 16, help="tiles along N", runtime=True),
                Param("l2_group_size", "int", 8, help="M rows per L2 group (swizzle size if serpentine)"),
                Param("cluster_m", "int", 1, help="cluster extent in M (tiles)"),
                Param("cluster_n", "int", 1, help="cluster extent in N (tiles)"),
                Param("serpentine", "bool", False, 0, help="CUTLASS-style 2D block swizzle, serpentine"),
            ),
            ("m_idx", "n_idx"),
            "persistent: cluster c visits work c, c+num_clusters, ...",
        ),
        SchedulerSpec(
            "GroupMajor3D",
            "gemm",
            (
                Param("m_tiles", "int", 16, runtime=True),
                Param("n_tiles", "int", 16, runtime=True),
                Param("k_tiles", "int", 1, runtime=True),
                Param("group_rows", "int", 8),
                Param("step", "int", 0, 0, help="next_tile() stride; 0 means num_ctas", runtime=True),
            ),
            ("m_idx", "n_idx", "k_idx"),
            "grouped rows over (M, N, K), stride `step`",
        ),
        SchedulerSpec(
            "FlashAttentionLinearScheduler",
            "attention",
            _ATTENTION_GRID,
            _ATTENTION_ATTRS,
            "linear (batch, head, m_block), stride num_ctas",
        ),
        SchedulerSpec(
            "FlashAttentionLPTScheduler",
            "attention",
            _ATTENTION_GRID
            + (
                Param("l2_swizzle", "int", 4),
                Param(
                    "persistent",
                    "bool",
                    False,
                    0,
                    help="stride by num_ctas; otherwise one task per CTA (num_ctas=None)",
                ),
            ),
            _ATTENTION_ATTRS,
            "heaviest causal m-blocks first, L2 swizzle",
        ),
        SchedulerSpec(
            "IndexedTripleTileScheduler",
            "attention",
            (
                Param("b_indices", "ints", [0], 0),
                Param("h_indices", "ints", [0], 0),
                Param("q_indices", "ints", [0], 0),
                Param("tiles_indptr", "ints", [0, 1], 0),
            ),
            ("b_idx", "h_idx", "q_idx"),
            "CTA i visits entries tiles_indptr[i]..tiles_indptr[i+1]",
        ),
        SchedulerSpec(
            "RankAwareGroupMajorTileScheduler",
            "gemm",
            (
                Param("m_clusters", "int", 16, runtime=True),
                Param("n_clusters", "int", 16, runtime=True),
                Param("group_size", "int", 4),
                Param("world_size", "int", 4),
                Param("rank", "int", 0, 0, help="substituted for T.nvshmem.my_pe()"),
            ),
            ("m_idx", "n_idx"),
            "group-major, remote row-blocks first (rank-rotated)",
        ),
    )
}

#: tile schedulers of ``tvm.backend.cuda.lang`` that a CPU trace cannot run, and why
UNTRACEABLE: dict[str, str] = {
    "ClusterLaunchControlScheduler": (
        "its next tile is not computed by the class: a scheduler warp asks the GPU's cluster launch control "
        "(PTX clusterlaunchcontrol.try_cancel, sm_100 and later) to cancel a cluster not yet launched, and works "
        "on that cluster's tile, so the order is decided by the hardware at run time and cannot be traced on the "
        "CPU. Its tile ids map to tiles as ClusterPersistentScheduler2D's do with one worker per tile: "
        "trace('ClusterPersistentScheduler2D', num_m_tiles * num_n_tiles, num_m_tiles=..., num_n_tiles=..., "
        "l2_group_size=...) shows which tile each id is"
    ),
}

#: per scheduler, the parameters a specialize=False build passes as kernel arguments (``Param.runtime``)
_RUNTIME = {s.name: {p.name for p in s.params if p.runtime} for s in SCHEDULERS.values()}


def spec_of(name_or_class) -> SchedulerSpec:
    """The :class:`SchedulerSpec` of a scheduler, by name (any case) or by its TVM class."""
    if isinstance(name_or_class, str):
        name = name_or_class
    elif isinstance(getattr(name_or_class, "__name__", None), str):
        name = name_or_class.__name__
    else:
        raise InputError(
            f"the scheduler must be named by a string or given as its class, not "
            f"{name_or_class!r} ({type(name_or_class).__name__}); txlab traces: "
            f"{', '.join(SCHEDULERS)}",
            param="name_or_class",
        )
    for key, spec in SCHEDULERS.items():
        if key.lower() == name.strip().lower():
            return spec
    for key, why in UNTRACEABLE.items():
        if key.lower() == name.strip().lower():
            raise InputError(f"{key} cannot be traced: {why}", param="name_or_class")
    raise InputError(f"unknown scheduler {name!r}; txlab traces: {', '.join(SCHEDULERS)}", param="name_or_class")


_resolve = spec_of  # the former private name (other modules' branches may still use it)
