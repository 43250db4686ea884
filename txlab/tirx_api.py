"""The names of the installed TVM's TIRx CUDA API, introspected: each :class:`Entry` with its
category, signature, doc and the arch it needs. A new TVM shows added and removed names.

This is a fact about TVM, below the compiler (``txlab.diagnose`` names the arch an API call needs
from it); :func:`txlab.api.catalogue` adds the ids of the example kernels that use each name.
"""

from __future__ import annotations

import dataclasses
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
    "MBarrier.remote_view": "sm_90",
    "SMEMPool.alloc_tcgen05_mma_AB": "sm_90",
    "SMEMPool.commit": "sm_90",
    "SmemDescriptor.make_lo_uniform": "sm_100a",
    "TMEMPool.alloc": "sm_100a",
    "TMEMPool.alloc_sf": "sm_100a",
    "TMEMPool.alloc_tcgen05_mma_A": "sm_100a",
    "TMEMPool.alloc_tcgen05_mma_C": "sm_100a",
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
    plain_signature: str = ""  # the signature without annotations (README's API table)
    signature_how: str = ""  # where the signature came from (inspect.signature, TVM's wrapper, ...)

    def to_dict(self) -> dict:
        return asdict(self)


def _unwrap_meta_init(init):
    """The user-written ``__init__`` under TVM's ``@T.meta_class`` wrapper (``__init__(self, *args,
    **kwargs)`` closing over the original), or None when ``init`` is not such a wrapper."""
    found, fn = None, init
    for _ in range(8):  # a subclass wraps its (already wrapped) parent's __init__
        inner = [
            c.cell_contents
            for c in (getattr(fn, "__closure__", None) or ())
            if callable(getattr(c, "cell_contents", None)) and getattr(c.cell_contents, "__name__", "") == "__init__"
        ]
        if not inner:
            break
        fn = found = inner[0]
    return found


def _drop_self(sig: inspect.Signature) -> inspect.Signature:
    params = list(sig.parameters.values())
    if params and params[0].name == "self":
        params = params[1:]
    return sig.replace(parameters=params)


def _real_signature(obj) -> tuple[inspect.Signature | None, str]:
    """(signature, how it was found) of a TVM API object; (None, why not) when nothing recovers it."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError) as exc:
        return None, f"inspect.signature failed: {exc}"
    hidden = [p.kind for p in sig.parameters.values()] == [
        inspect.Parameter.VAR_POSITIONAL,
        inspect.Parameter.VAR_KEYWORD,
    ]
    if not hidden:
        return sig, "inspect.signature"
    if inspect.isclass(obj):
        init = _unwrap_meta_init(obj.__init__)
        if init is object.__init__:  # the class defines no __init__ of its own
            return inspect.Signature(), "the class defines no __init__ (under TVM's meta_class wrapper)"
        if init is not None:
            return _drop_self(inspect.signature(init)), "the __init__ under TVM's meta_class wrapper"
    op_name = getattr(obj, "__tir_call_op_name__", None)  # e.g. T.nvshmem.putmem_nbi(...)
    if op_name:
        from tvm.backend.cuda import op as cuda_op

        fn = getattr(cuda_op, op_name, None)
        if fn is not None:
            return inspect.signature(fn), f"tvm.backend.cuda.op.{op_name}, which the namespace calls"
    return None, "TVM's wrapper takes (*args, **kwargs)"


def _plain(sig: inspect.Signature) -> str:
    """The signature without annotations, defaults that print an address shown as ``<unset>``."""
    import re

    class _Unset:
        def __repr__(self):
            return "<unset>"

    params = []
    for p in sig.parameters.values():
        default = p.default
        if default is not p.empty and re.search(r" at 0x[0-9a-f]+>$", repr(default)):
            default = _Unset()
        params.append(p.replace(annotation=p.empty, default=default))
    return str(sig.replace(parameters=params, return_annotation=sig.empty))


def signature_of(obj) -> tuple[str, str, str]:
    """(full signature, signature without annotations, how it was found) of a TVM API object:
    ``inspect.signature`` of the real object, looking through TVM's wrappers (``@T.meta_class``
    classes, namespaces that call a ``tvm.backend.cuda.op`` function); else ``(...)`` with the reason."""
    import re

    sig, how = _real_signature(obj)
    if sig is not None:
        return re.sub(r"<object object at 0x[0-9a-f]+>", "<unset>", str(sig)), _plain(sig), how
    return "(...)", "(...)", f"unknown: {how}"


def _make(name: str, category: str, obj, arch: str, kind: str) -> "Entry":
    full, plain, how = signature_of(obj)
    return Entry(name, category, full, _doc(obj), arch, kind, plain_signature=plain, signature_how=how)


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
        short = name[len("Tx.cuda.") :]
        entries.append(_make(name, _cuda_category(short), fn, _cuda_arch(short), "function"))
    for name, fn in _walk_namespace(T.nvshmem, "Tx.nvshmem."):
        entries.append(_make(name, "nvshmem (multi-GPU)", fn, "multi-GPU", "function"))
    for cname in sorted(getattr(lang, "__all__", ())):
        cls = getattr(lang, cname)
        entries.append(
            _make(
                f"tvm.backend.cuda.lang.{cname}",
                "tvm.backend.cuda.lang",
                cls,
                "sm_90",
                "class" if inspect.isclass(cls) else "function",
            )
        )
    for qual, arch in _METHODS.items():
        cname, meth = qual.split(".")
        cls = getattr(lang, cname, None)
        fn = getattr(cls, meth, None) if cls is not None else None
        if fn is not None:
            entries.append(_make(f"tvm.backend.cuda.lang.{qual}", "tvm.backend.cuda.lang", fn, arch, "method"))
    for e in entries:
        short = e.name.rsplit(".", 1)[-1]
        if e.name.startswith("tvm.backend.cuda.lang.") and short in _LANG_SM100:
            e.arch = "sm_100a"
    for attr in sorted(getattr(iket, "__all__", None) or [a for a in dir(iket) if not a.startswith("_")]):
        obj = getattr(iket, attr)
        if getattr(obj, "__module__", "") != iket.__name__:
            continue
        entries.append(
            _make(
                f"tvm.backend.cuda.iket.{attr}",
                "iket profiling",
                obj,
                "sm_90",
                "class" if inspect.isclass(obj) else "function",
            )
        )
    from tvm.backend.cuda import transforms

    if hasattr(transforms, "LowerIket"):
        entries.append(
            _make("tvm.backend.cuda.transforms.LowerIket", "iket profiling", transforms.LowerIket, "sm_90", "function")
        )
    return entries


_NAMES: list[Entry] | None = None


def names() -> list[Entry]:
    """Every API entry of the installed TVM (no example ids: see :func:`txlab.api.catalogue`).
    Computed once; callers get copies they may change."""
    global _NAMES
    if _NAMES is None:
        _NAMES = _introspect()
    return [dataclasses.replace(e, examples=[]) for e in _NAMES]
