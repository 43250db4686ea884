"""The names of the installed TVM's TIRx CUDA API, introspected: each :class:`Entry` with its
category, signature, doc and the arch it needs. A new TVM shows added and removed names.

This is a fact about TVM, below the compiler (``txlab.diagnose`` names the arch an API call needs
from it); :func:`txlab.api.catalogue` adds the ids of the example kernels that use each name.
"""
from __future__ import annotations

import inspect
from dataclasses import asdict, dataclass, field


# Category of each Tx.cuda name (the categories of TVM's "CUDA Authoring and Support APIs" page).
_CATEGORY_OF = {
    "sync": "synchronization and participation",
    "memory": "barriers and memory ordering",
    "reduce": "reductions",
    "desc": "descriptors and addresses",
    "calls": "loads, calls and diagnostics",
    "convert": "numeric conversion and packed math",
    "instrument": "instrumentation",
}
_CUDA_CATEGORIES = {
    "sync": "any_sync elect_sync warp_sync warpgroup_sync cta_sync grid_sync cluster_sync "
            "syncthreads_and syncthreads_or thread_rank ballot_sync __shfl_sync __shfl_up_sync "
            "__shfl_down_sync __shfl_xor_sync __activemask",
    "memory": "mbarrier_wait mbarrier_wait_acquire_cluster thread_fence atomic_add atomic_cas wait_until",
    "reduce": "warp_reduce warp_sum warp_max warp_min cta_reduce cta_sum cta_max cta_min "
              "reduce_add_sync_u32 reduce_min_sync_u32",
    "desc": "wgmma.noop_barrier wgmma.encode_matrix_descriptor tcgen05.encode_matrix_descriptor "
            "tcgen05.encode_instr_descriptor tcgen05.encode_instr_descriptor_block_scaled "
            "runtime_instr_desc get_tmem_addr cvta_generic_to_shared smem_addr_from_uint64 "
            "sm100_2sm_leader_smem_addr mov_sreg",
    "calls": "ldg func_call printf trap_when_assert_failed nano_sleep clock64 ffs_u32",
    "instrument": "iket.mark iket.range_start iket.range_end iket.range_push iket.range_pop "
                  "iket.sentinel_token iket.official_event timer_init timer_start timer_end "
                  "timer_finalize mma_store mma_fill mma_store_legacy mma_fill_legacy",
}
# Arch a name needs (the lowest target its PTX/CUDA exists on); everything else in Tx.cuda is sm_80.
_ARCH = {
    "sm_90": "elect_sync mbarrier_wait mbarrier_wait_acquire_cluster cluster_sync "
             "cvta_generic_to_shared smem_addr_from_uint64",
    "sm_90a": "wgmma.noop_barrier wgmma.encode_matrix_descriptor",
    "sm_100a": "tcgen05.encode_matrix_descriptor tcgen05.encode_instr_descriptor "
               "tcgen05.encode_instr_descriptor_block_scaled runtime_instr_desc get_tmem_addr "
               "sm100_2sm_leader_smem_addr fmul2_rn fadd2_rn",
}


# lang methods the issue names explicitly (catalogued as their own entries), with the arch they need.
_METHODS = {
    "MBarrier.remote_view": "sm_90", "SMEMPool.alloc_tcgen05_mma_AB": "sm_90", "SMEMPool.commit": "sm_90",
    "SmemDescriptor.make_lo_uniform": "sm_100a", "TMEMPool.alloc": "sm_100a", "TMEMPool.alloc_sf": "sm_100a",
    "TMEMPool.alloc_tcgen05_mma_A": "sm_100a", "TMEMPool.alloc_tcgen05_mma_C": "sm_100a",
    "TMEMPool.alloc_tcgen05_mma_D": "sm_100a",
}
_LANG_SM100 = {"TMEMPool", "TCGen05Bar", "SmemDescriptor"}  # tcgen05 / TMEM classes


@dataclass
class Entry:
    name: str
    category: str
    signature: str
    doc: str
    arch: str
    kind: str  # "function" | "class" | "method" | "module"
    examples: list = field(default_factory=list)  # example ids that use it

    def to_dict(self) -> dict:
        return asdict(self)


def _sig(obj) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def _doc(obj) -> str:
    return inspect.getdoc(obj) or ""


def _walk_namespace(obj, prefix: str):
    for attr, value in sorted(vars(obj).items()):
        if attr.startswith("_") and not attr.startswith("__"):
            continue
        name = prefix + attr
        if type(value).__name__.endswith("Namespace"):
            if callable(value):  # e.g. T.nvshmem.putmem_nbi is callable and has .warp / .block
                yield name, value
            yield from _walk_namespace(value, name + ".")
        elif callable(value):
            yield name, value


def _cuda_category(short: str) -> str:
    for key, names in _CUDA_CATEGORIES.items():
        if short in names.split():
            return _CATEGORY_OF[key]
    return _CATEGORY_OF["convert"] if not short.startswith(("iket.", "timer_")) else _CATEGORY_OF["instrument"]


def _cuda_arch(short: str) -> str:
    for arch, names in _ARCH.items():
        if short in names.split():
            return arch
    return "sm_80"


def _introspect() -> list[Entry]:
    from tvm.script import tirx as T

    import tvm.backend.cuda.iket as iket
    import tvm.backend.cuda.lang as lang

    entries: list[Entry] = []
    for name, fn in _walk_namespace(T.cuda, "Tx.cuda."):
        short = name[len("Tx.cuda."):]
        entries.append(Entry(name, _cuda_category(short), _sig(fn), _doc(fn), _cuda_arch(short), "function"))
    for name, fn in _walk_namespace(T.nvshmem, "Tx.nvshmem."):
        entries.append(Entry(name, "nvshmem (multi-GPU)", _sig(fn), _doc(fn), "multi-GPU", "function"))
    for cname in sorted(getattr(lang, "__all__", ())):
        cls = getattr(lang, cname)
        entries.append(Entry(f"tvm.backend.cuda.lang.{cname}", "tvm.backend.cuda.lang", _sig(cls), _doc(cls),
                             "sm_90", "class" if inspect.isclass(cls) else "function"))
    for qual, arch in _METHODS.items():
        cname, meth = qual.split(".")
        cls = getattr(lang, cname, None)
        fn = getattr(cls, meth, None) if cls is not None else None
        if fn is not None:
            entries.append(Entry(f"tvm.backend.cuda.lang.{qual}", "tvm.backend.cuda.lang", _sig(fn), _doc(fn),
                                 arch, "method"))
    for e in entries:
        short = e.name.rsplit(".", 1)[-1]
        if e.name.startswith("tvm.backend.cuda.lang.") and short in _LANG_SM100:
            e.arch = "sm_100a"
    for attr in sorted(getattr(iket, "__all__", None) or [a for a in dir(iket) if not a.startswith("_")]):
        obj = getattr(iket, attr)
        if getattr(obj, "__module__", "") != iket.__name__:
            continue
        entries.append(Entry(f"tvm.backend.cuda.iket.{attr}", "iket profiling", _sig(obj), _doc(obj),
                             "sm_90", "class" if inspect.isclass(obj) else "function"))
    from tvm.backend.cuda import transforms

    if hasattr(transforms, "LowerIket"):
        entries.append(Entry("tvm.backend.cuda.transforms.LowerIket", "iket profiling",
                             _sig(transforms.LowerIket), _doc(transforms.LowerIket), "sm_90", "function"))
    return entries


_NAMES: list[Entry] | None = None


def names() -> list[Entry]:
    """Every API entry of the installed TVM (no example ids: see :func:`txlab.api.catalogue`).
    Computed once; callers get copies they may change."""
    global _NAMES
    if _NAMES is None:
        _NAMES = _introspect()
    return [Entry(e.name, e.category, e.signature, e.doc, e.arch, e.kind) for e in _NAMES]
