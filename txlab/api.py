"""The TIRx CUDA authoring API, catalogued from the installed TVM.

    txlab.api.catalogue()            # every entry: name, category, signature, doc, arch, examples
    txlab.api.coverage()             # one dict per entry: has_example, compiles, verified_gpu
    txlab.api.verify("Tx.cuda.ballot_sync")   # run its example on this GPU, check the result
    python -m txlab.api verify --write        # all GPU-runnable examples -> txlab/data/api_verified.json

The list of names comes from introspecting ``T.cuda``, ``T.nvshmem``, ``tvm.backend.cuda.lang`` and
``tvm.backend.cuda.iket`` of the installed TVM, so a new TVM shows added names (no example, arch
``unknown``) and removed ones (``catalogue_drift()``).
"""
from __future__ import annotations

import datetime
import inspect
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

VERIFIED_JSON = Path(__file__).parent / "data" / "api_verified.json"
# Multi-GPU runs (scripts/nvshmem_2gpu.py --json): same "examples" layout, plus "n_gpus".
VERIFIED_MULTI_GPU_JSON = Path(__file__).parent / "data" / "api_verified_multi_gpu.json"
# Runs under NVIDIA's run-iket on an H200 (scripts/iket_h200.py --record=...): same "examples" layout.
VERIFIED_IKET_JSON = Path(__file__).parent / "data" / "api_verified_iket.json"

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


_catalogue_cache: list[Entry] | None = None


def catalogue() -> list[Entry]:
    """Every API entry of the installed TVM, with the ids of the example kernels that use it."""
    global _catalogue_cache
    if _catalogue_cache is None:
        from txlab.api_examples import all_examples

        entries = _introspect()
        by_name = {e.name: e for e in entries}
        for ex in all_examples():
            for used in ex.uses:
                if used in by_name:
                    by_name[used].examples.append(ex.id)
        _catalogue_cache = entries
    return _catalogue_cache


def catalogue_drift() -> list[str]:
    """Names our examples use that the installed TVM no longer has (removed or renamed upstream)."""
    from txlab.api_examples import all_examples

    have = {e.name for e in catalogue()}
    return sorted({u for ex in all_examples() for u in ex.uses if u not in have})


def examples() -> dict:
    from txlab.api_examples import all_examples

    return {e.id: e for e in all_examples()}


def entry(name: str) -> Entry:
    for e in catalogue():
        if e.name == name:
            return e
    raise KeyError(f"{name!r} is not in the TIRx CUDA API of the installed TVM "
                   f"(see txlab.api.catalogue() for the names)")


# ---- compiling examples -------------------------------------------------------------------------
class NVSHMEMNotFound(RuntimeError):
    """The NVSHMEM headers / device library are not installed here."""


def nvshmem_home() -> Path | None:
    """Root holding NVSHMEM's include/nvshmem.h and lib/libnvshmem_device.a: ``NVSHMEM_HOME``, else
    the ``nvidia-nvshmem-cu13`` wheel (``nvidia/nvshmem`` in site-packages), else None."""
    roots = []
    if os.environ.get("NVSHMEM_HOME"):
        roots.append(Path(os.environ["NVSHMEM_HOME"]))
    try:
        import importlib.util

        spec = importlib.util.find_spec("nvidia.nvshmem")
        if spec is not None and spec.submodule_search_locations:
            roots.extend(Path(p) for p in spec.submodule_search_locations)
    except (ImportError, ValueError):
        pass
    for root in roots:
        if (root / "include" / "nvshmem.h").is_file() and (root / "lib" / "libnvshmem_device.a").is_file():
            return root
    return None


def cuda_source(example_id: str, arch: str | None = None) -> str:
    """The CUDA C TVM generates for an example (no nvcc; works for every example, NVSHMEM too)."""
    import txlab

    ex = examples()[example_id]
    if "iket" in ex.needs:
        from txlab.api_examples.iket import enabled_source

        return enabled_source(ex)
    if "nvshmem" not in ex.needs:
        return txlab.compile(ex.prim_func(), arch=arch or ex.arch, progress=lambda *_: None).cuda_source
    from txlab.compiler import cuda_source as generate

    return generate(ex.prim_func(), arch or ex.arch)


_generated: dict = {}


def generated_cuda(example_id: str, arch: str | None = None) -> str:
    """The CUDA C TVM generates for an example, without running nvcc (what the APIExplorer shows;
    memoised per process). ``cuda_source`` is the same text through txlab.compile (builds a cubin)."""
    key = (example_id, arch)
    if key not in _generated:
        from txlab.compiler import cuda_source as generate

        ex = examples()[example_id]
        kernel = ex.prim_func()
        if "iket" in ex.needs:  # the IKET-enabled build, as cuda_source shows it
            import tvm

            kernel = tvm.IRModule({ex.id: kernel}).with_attr("tirx.iket.enabled", True)
        _generated[key] = generate(kernel, arch or ex.arch, name=ex.id if "iket" in ex.needs else None)
    return _generated[key]


def build_nvshmem(example_id: str, arch: str | None = None) -> bytes:
    """Cubin of an NVSHMEM example: TVM's CUDA compiled with ``nvcc -rdc=true`` and linked with
    ``nvlink -lnvshmem_device`` (what TVM's own nvcc path does). Cached in txlab's compile cache."""
    import shutil
    import subprocess
    import tempfile

    from txlab import cache, toolchain

    ex = examples()[example_id]
    arch = arch or ex.arch
    home = nvshmem_home()
    if home is None:
        raise NVSHMEMNotFound("NVSHMEM headers and libnvshmem_device.a not found: pip install "
                              "nvidia-nvshmem-cu13 or set NVSHMEM_HOME")
    src = cuda_source(example_id, arch)
    key = cache.make_key(kind="nvshmem-cubin", source=src, arch=arch, tools=toolchain.versions(),
                         nvshmem=sorted(p.name for p in (home / "lib").glob("libnvshmem_device*")),
                         home=str(home))
    hit = cache.load(key)
    if hit is not None:
        return hit["kernel.cubin"]
    nvcc, nvlink = shutil.which("nvcc"), shutil.which("nvlink")
    if nvcc is None or nvlink is None:
        raise RuntimeError("nvcc and nvlink must be on PATH to build NVSHMEM kernels")
    with tempfile.TemporaryDirectory(prefix="txlab-nvshmem-") as tmp:
        Path(tmp, "kernel.cu").write_text(src)
        steps = [
            [nvcc, "-c", "-rdc=true", *toolchain.gencode(arch), *toolchain.NVCC_FLAGS, "-w",
             "-I", str(home / "include"), "-o", "kernel.o", "kernel.cu"],
            [nvlink, f"-arch={arch}", "-L", str(home / "lib"), "-l", "nvshmem_device", "-l", "cudadevrt",
             "-o", "kernel.cubin", "kernel.o"],
        ]
        for cmd in steps:
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
            if proc.returncode != 0:
                out = (proc.stdout + proc.stderr).strip().splitlines()
                raise RuntimeError(f"{Path(cmd[0]).name} failed: {' / '.join(out[:3])}")
        cubin = Path(tmp, "kernel.cubin").read_bytes()
    cache.store(key, {"kernel.cubin": cubin, "meta.json": json.dumps({"example": example_id, "arch": arch})})
    return cubin


def _compile_one(example_id: str) -> tuple[str, bool, str]:
    """(id, ok, reason). Runs in a worker process; txlab's disk cache makes repeats instant."""
    import txlab

    ex = examples()[example_id]
    try:
        if "nvshmem" in ex.needs:
            build_nvshmem(example_id)
        elif ex.compile is not None:
            ex.compile(ex)
        else:
            txlab.compile(ex.prim_func(), arch=ex.arch, progress=lambda *_: None)
        return example_id, True, ""
    except Exception as exc:  # the reason is reported per example
        return example_id, False, f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"


def compile_examples(ids=None, workers: int | None = None) -> dict[str, tuple[bool, str]]:
    """Compile examples to cubin for their arch, in a pool of ``workers`` processes (default 2)."""
    ids = list(ids if ids is not None else examples())
    workers = workers or min(2, os.cpu_count() or 1)
    if workers <= 1 or len(ids) <= 1:
        results = [_compile_one(i) for i in ids]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(_compile_one, ids))
    return {i: (ok, why) for i, ok, why in results}


def _verified(path: Path | None = None) -> dict:
    try:
        return json.loads((path or VERIFIED_JSON).read_text())
    except FileNotFoundError:
        return {}


def coverage(compile: bool = True, workers: int | None = None) -> list[dict]:  # noqa: A002
    """One dict per API entry: name, category, arch, has_example, compiles, verified_gpu, examples.

    ``compiles`` is True when every example using the name builds to a cubin for its arch here
    (False with ``compile_error`` otherwise; None when ``compile=False``). ``verified_gpu`` comes
    from txlab/data/api_verified.json (written by ``python -m txlab.api verify --write`` on an
    H200): True/False per the recorded run, None where an H200 cannot run the example.
    ``verified_multi_gpu`` (present only for names whose examples have a multi-GPU record in
    txlab/data/api_verified_multi_gpu.json, written from ``scripts/nvshmem_2gpu.py --json``): True when
    every such recorded run passed.
    """
    exs = examples()
    built = compile_examples(workers=workers) if compile else {}
    verified = _verified().get("examples", {})
    multi = _verified(VERIFIED_MULTI_GPU_JSON).get("examples", {})
    under_iket = _verified(VERIFIED_IKET_JSON).get("examples", {})
    rows = []
    for e in catalogue():
        used = [exs[i] for i in e.examples]
        row = {"name": e.name, "category": e.category, "arch": e.arch, "has_example": bool(used),
               "examples": list(e.examples), "compiles": None, "verified_gpu": False}
        if compile:
            oks = [built[x.id][0] for x in used]
            row["compiles"] = bool(used) and all(oks)
            errs = [f"{x.id}: {built[x.id][1]}" for x in used if not built[x.id][0]]
            if errs:
                row["compile_error"] = "; ".join(errs)
        runnable = [x for x in used if x.runnable]
        multi_ids = [x.id for x in used if x.id in multi]
        if multi_ids:  # checked on several GPUs (e.g. NVSHMEM): True/False per the recorded run
            row["verified_multi_gpu"] = all(multi[i].get("ok") is True for i in multi_ids)
        if used and not runnable and all(x.id in under_iket for x in used):
            # IKET examples run only under run-iket; an H200 with NVIDIA's runtime checked them
            row["verified_gpu"] = all(under_iket[x.id].get("ok") is True for x in used)
            row["verified_by"] = "run-iket on an H200 (scripts/iket_h200.py)"
        elif used and not runnable:
            row["verified_gpu"] = None
            row["not_on_h200"] = "; ".join(sorted({x.not_on_h200 or "no GPU check written" for x in used}))
        elif runnable:
            row["verified_gpu"] = all(verified.get(x.id, {}).get("ok") is True for x in runnable)
        rows.append(row)
    return rows


# ---- running examples on a GPU ------------------------------------------------------------------
def _compare(got, want, rtol, atol) -> str | None:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape} != expected {want.shape}"
    if got.dtype.kind in "iub" and want.dtype.kind in "iub":
        bad = np.flatnonzero(got.astype(np.int64).ravel() != want.astype(np.int64).ravel())
    else:
        g, w = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
        bad = np.flatnonzero(~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True))
    if bad.size:
        i = int(bad[0])
        return f"{bad.size} of {got.size} differ; first at flat index {i}: got {got.ravel()[i]}, want {want.ravel()[i]}"
    return None


def verify_example(example_id: str) -> dict:
    """Run one example on this GPU and check its outputs against the numpy expectation."""
    import txlab
    from txlab.run import launch

    ex = examples()[example_id]
    if not ex.runnable:
        return {"id": ex.id, "ok": None, "reason": ex.not_on_h200 or "no GPU check written"}
    # ex.arch is the oldest arch the example needs; a cubin only loads on its own major arch,
    # so run it compiled for this GPU's arch.
    compiled = txlab.compile(ex.prim_func(), arch=None)
    args = ex.inputs()
    want = ex.expected(*[a.copy() for a in args])
    buffers = [p["name"] for p in compiled.params if p["kind"] == "buffer"]
    if isinstance(want, dict):
        expected = want
    else:
        names = list(ex.outputs or buffers[-1:])
        values = list(want) if isinstance(want, (tuple, list)) else [want]
        expected = dict(zip(names, values))
    launch(compiled, *args)
    index = {p["name"]: i for i, p in enumerate(compiled.params)}
    problems = {}
    if ex.invariant is not None:  # runs first: it may also mask nondeterministic bits (timestamps)
        msg = ex.invariant(*args)
        if msg:
            problems["invariant"] = msg
    for n, w in expected.items():
        p = _compare(args[index[n]], w, ex.rtol, ex.atol)
        if p:
            problems[n] = p
    return {"id": ex.id, "ok": not problems, "problems": problems, "uses": list(ex.uses)}


def verify(name: str) -> list[dict]:
    """Verify every example that uses API ``name`` on this GPU."""
    from txlab.device import require_gpu

    require_gpu("verifying an API example")
    return [verify_example(i) for i in entry(name).examples]


def verify_all(gpu: bool = True, write: bool = False) -> dict:
    """Run every H200-runnable example; with ``write`` record the results in api_verified.json."""
    from txlab.device import probe, require_gpu

    if gpu:
        require_gpu("verifying the API examples")
    results = {}
    for ex_id, ex in examples().items():
        if not ex.runnable:
            continue
        try:
            results[ex_id] = verify_example(ex_id)
        except Exception as exc:
            results[ex_id] = {"id": ex_id, "ok": False, "problems": {"error": f"{type(exc).__name__}: {exc}"}}
    info = probe()
    record = {"device": getattr(info, "name", None), "arch": getattr(info, "arch", None),
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "tvm": _tvm_version(), "examples": results}
    if write:
        VERIFIED_JSON.write_text(json.dumps(record, indent=1, default=str) + "\n")
    return record


def _tvm_version():
    from txlab.compat import tvm_version

    return tvm_version()


# ---- where an API name shows up in the generated CUDA (APIExplorer) -----------------------------
# What a name lowers to when its own name does not appear in the CUDA (classes of
# tvm.backend.cuda.lang act through the PTX they emit). Keys are qualified names.
_EMITS_FALLBACK = {
    "tvm.backend.cuda.lang.MBarrier": r"mbarrier\.",
    "tvm.backend.cuda.lang.TMABar": r"mbarrier\.|expect_tx|cp\.async\.bulk",
    "tvm.backend.cuda.lang.TCGen05Bar": r"tcgen05\.commit|mbarrier\.",
    "tvm.backend.cuda.lang.Pipeline": r"mbarrier\.",
    "tvm.backend.cuda.lang.PipelineState": r"mbarrier\.try_wait\.parity|phase",
    "tvm.backend.cuda.lang.SMEMPool": r"extern __shared__|__shared__ .*\[|buf_dyn_shmem",
    "tvm.backend.cuda.lang.SMEMPool.commit": r"extern __shared__|buf_dyn_shmem",
    "tvm.backend.cuda.lang.SMEMPool.alloc_tcgen05_mma_AB": r"buf_dyn_shmem|extern __shared__",
    "tvm.backend.cuda.lang.TMEMPool": r"tcgen05\.(alloc|dealloc|relinquish)",
    "tvm.backend.cuda.lang.TMEMPool.alloc": r"tcgen05\.(alloc|dealloc|relinquish)",
    "tvm.backend.cuda.lang.TMEMPool.alloc_sf": r"tcgen05\.(alloc|cp|mma)",
    "tvm.backend.cuda.lang.TMEMPool.alloc_tcgen05_mma_A": r"tcgen05\.(alloc|mma)",
    "tvm.backend.cuda.lang.TMEMPool.alloc_tcgen05_mma_C": r"tcgen05\.(alloc|mma|ld)",
    "tvm.backend.cuda.lang.TMEMPool.alloc_tcgen05_mma_D": r"tcgen05\.(alloc|mma|ld)",
    "tvm.backend.cuda.lang.SmemDescriptor": r"desc",
    "tvm.backend.cuda.lang.SmemDescriptor.make_lo_uniform": r"desc",
    "tvm.backend.cuda.lang.WarpRole": r"threadIdx\.x\) >> 5|/ 32\)",
    "tvm.backend.cuda.lang.WarpgroupRole": r"threadIdx\.x\) >> 7|/ 128\)",
    "tvm.backend.cuda.transforms.LowerIket": r"__iket_meta_info|tvm_builtin_iket_",
}
_HOST_SIDE = ("tvm.backend.cuda.iket.",)  # Python-side APIs: they emit no device code themselves


def _words(name: str) -> list[str]:
    return [w for w in name.lower().replace(".", "_").split("_") if w]


def _in_order(words: list[str], ident: str) -> bool:
    """True when every word occurs in ``ident`` (lower case), in order."""
    ident, pos = ident.lower(), 0
    for w in words:
        pos = ident.find(w, pos)
        if pos < 0:
            return False
        pos += len(w)
    return True


def _blocks(lines: list[str]) -> tuple[int, dict]:
    """(first line of the __global__ kernel, {function name: (first, last) line index}) of the
    device functions and kernels a CUDA source defines (brace matched)."""
    import re

    kernel_at = next((i for i, ln in enumerate(lines) if "__global__" in ln and ln.rstrip().endswith("{")),
                     len(lines))
    defs = {}
    rx = re.compile(r"__device__.*?\b([A-Za-z_]\w*)\s*\(")
    for i, ln in enumerate(lines):
        m = rx.search(ln) if ("__device__" in ln or "__global__" in ln) else None
        if not m or ln.rstrip().endswith(";"):
            continue
        depth, seen, j = 0, False, i
        while j < len(lines):
            depth += lines[j].count("{") - lines[j].count("}")
            seen = seen or "{" in lines[j]
            if seen and depth <= 0:
                break
            j += 1
        defs.setdefault(m.group(1), (i, min(j, len(lines) - 1)))
    return kernel_at, defs


def emitted_lines(name: str, example_id: str | None = None, context: int = 3, source: str | None = None) -> dict:
    """The CUDA lines API ``name`` produced in its example (what the APIExplorer highlights).

    Found with, in order: the example's ``emits`` regex for the name; for ``tvm.backend.cuda.lang``
    classes, the PTX they lower to; the calls in the kernel to an identifier spelling the name
    (exactly, e.g. ``__shfl_xor_sync``, ``tvm_builtin_nvshmem_putmem_nbi_warp``; else its words in
    order, ``elect_sync`` -> ``tvm_builtin_elect_one_sync_op``). Device functions the highlighted
    kernel lines call are shown whole (the PTX / intrinsic inside highlighted too). When nothing is
    found, ``how`` says so plainly.

    Returns {name, example_id, arch, example_source, total_lines, lines: [[lineno, text], ...]
    (1-based; highlights with ``context`` lines around them and called definitions whole),
    highlight: [lineno, ...], definitions: [lineno, ...], how}.
    """
    import re

    e = entry(name)
    if example_id is None:
        if not e.examples:
            return {"name": name, "example_id": None, "arch": e.arch, "example_source": "", "total_lines": 0,
                    "lines": [], "highlight": [], "definitions": [], "how": "no example kernel uses this name yet"}
        example_id = e.examples[0]
    ex = examples()[example_id]
    src = source if source is not None else generated_cuda(example_id)
    lines = src.splitlines()
    kernel_at, defs = _blocks(lines)
    hi: set[int] = set()
    how = ""

    def grep(rx, lo=0):
        return {i for i in range(lo, len(lines)) if re.search(rx, lines[i])}

    if ex.emits.get(name):
        hi = grep(ex.emits[name])
        how = f"lines matching the example's regex for this name: /{ex.emits[name]}/"
    if not hi and name in _EMITS_FALLBACK:
        rx = _EMITS_FALLBACK[name]
        hi = grep(rx, kernel_at) or grep(rx)
        if hi:
            how = f"what this lowers to: lines matching /{rx}/"
    if not hi and not name.startswith(_HOST_SIDE):
        short = name.rsplit(".", 1)[-1] if name.startswith("tvm.") else name.split(".", 2)[-1]
        flat = short.replace(".", "_")
        calls = [(i, m.group(1)) for i in range(kernel_at, len(lines))
                 for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", lines[i])]
        exact = {c for _, c in calls if c == flat or c.endswith("_" + flat.lstrip("_"))}
        words = _words(short)
        chosen = exact or {c for _, c in calls if _in_order(words, c)}
        hi = {i for i, c in calls if c in chosen}
        if hi:
            how = f"calls in the kernel to {', '.join(sorted(chosen))} (the identifier spelling '{short}')"
    # device functions called from highlighted kernel lines (and what they call): shown whole
    defn: set[int] = set()
    todo = [i for i in hi if i >= kernel_at]
    seen_fn = set()
    while todo:
        i = todo.pop()
        for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", lines[i]):
            fn = m.group(1)
            if fn in seen_fn or fn not in defs or defs[fn][0] >= kernel_at:
                continue
            seen_fn.add(fn)
            a, b = defs[fn]
            if b - a > 60:  # a huge helper: show its head only
                b = a + 12
            defn.update(range(a, b + 1))
            hi.add(a)
            for j in range(a + 1, b + 1):
                if re.search(r'"[^"]*\b[a-z]+\d*\.[a-z0-9_.:]+|\b__[a-z]\w*\s*\(|\bcg::|\batomic[A-Z]\w*\(', lines[j]):
                    hi.add(j)
                todo.append(j)
    if defn and how:
        how += "; the device functions they call are shown whole"
    if not hi:
        how = ("Python-side API: it emits no device code itself (the example shows it in use)"
               if name.startswith(_HOST_SIDE) else
               "found no line in the generated CUDA attributable to this name (it shapes the IR "
               "rather than emitting an instruction of its own)")
    show = set(defn)
    for i in hi:
        show.update(range(max(0, i - context), min(len(lines), i + context + 1)))
    if len(show) > 400:  # a regex that matches everywhere: keep the first highlights
        hi = set(sorted(hi)[:60])
        show = {j for i in hi for j in range(max(0, i - context), min(len(lines), i + context + 1))}
    return {"name": name, "example_id": example_id, "arch": ex.arch, "example_source": ex.source,
            "total_lines": len(lines), "lines": [[i + 1, lines[i]] for i in sorted(show)],
            "highlight": sorted(i + 1 for i in hi), "definitions": sorted(i + 1 for i in defn & show),
            "how": how}


def example_cell(example_id: str, magic: bool = False) -> str:
    """Text of a notebook cell that defines and compiles an example: a ``%%tirx`` cell when the
    txlab magic is loaded, else plain Python with the imports it needs."""
    import re

    ex = examples()[example_id]
    if magic:
        return f"%%tirx --arch {ex.arch}\n{ex.source}"
    from txlab.magic import lang_names

    used = sorted(n for n in lang_names() if re.search(rf"\b{re.escape(n)}\b", ex.source))
    head = ["import txlab", "import txlab.compat  # parse-time workarounds for this TVM",
            "from tvm.script import tirx as T"]
    if used:
        head.append(f"from tvm.backend.cuda.lang import {', '.join(used)}")
    return ("\n".join(head) + "\n\n" + ex.source.rstrip("\n") + "\n\n" +
            f"{ex.id}_compiled = txlab.compile({ex.id}, arch={ex.arch!r})\n{ex.id}_compiled\n")


# ---- docs ---------------------------------------------------------------------------------------
_MARK = {True: "yes", False: "no", None: "n/a"}


def verified_cell(row: dict) -> str:
    """The "verified on H200" cell of a coverage row, as the Markdown table shows it."""
    text = _MARK[row["verified_gpu"]]
    if "verified_by" in row and row["verified_gpu"] is not None:
        text += " (run-iket)"
    if "verified_multi_gpu" in row:
        text += f"; {_MARK[row['verified_multi_gpu']]} on 2 H200s"
    return text


def coverage_markdown(rows: list[dict] | None = None) -> str:
    rows = rows if rows is not None else coverage()
    n = len(rows)
    ex = sum(r["has_example"] for r in rows)
    ok = sum(bool(r["compiles"]) for r in rows)
    gpu = sum(r["verified_gpu"] is True for r in rows)
    na = sum(r["verified_gpu"] is None for r in rows)
    runnable = n - na
    by_iket = sum(r["verified_gpu"] is True and "verified_by" in r for r in rows)
    multi = sum(r.get("verified_multi_gpu") is True for r in rows)
    out = [f"{n} API names in the installed TVM; {ex} have an example kernel, {ok} of those compile "
           f"to cubin here, {runnable} have an example an H200 can run and check, {gpu} of them verified "
           f"on an H200 (txlab/data/api_verified.json; {by_iket} of them under NVIDIA's run-iket, "
           f"api_verified_iket.json), {na} cannot be checked on one H200 (sm_100a, multi-GPU NVSHMEM, "
           f"cooperative launch: see the last column); {multi} of those were verified on 2 H200s "
           f"(api_verified_multi_gpu.json).", "",
           "| name | category | arch | example | compiles | verified on H200 | why not |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        why = "; ".join(x for x in (r.get("compile_error"), r.get("not_on_h200")) if x).replace("|", "/")
        out.append(f"| `{r['name']}` | {r['category']} | {r['arch']} | "
                   f"{', '.join(r['examples']) or '—'} | {_MARK[r['compiles']] if r['has_example'] else '—'} | "
                   f"{verified_cell(r)} | {why} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m txlab.api")
    sub = p.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("verify", help="run every H200-runnable example and check its result")
    v.add_argument("--write", action="store_true", help=f"record the results in {VERIFIED_JSON}")
    c = sub.add_parser("coverage", help="print the coverage table (compiles every example)")
    c.add_argument("--markdown", metavar="FILE", help="write the table as Markdown to FILE")
    args = p.parse_args(argv)
    if args.cmd == "verify":
        rec = verify_all(write=args.write)
        bad = [k for k, r in rec["examples"].items() if not r["ok"]]
        for k, r in rec["examples"].items():
            print(f"{'PASS' if r['ok'] else 'FAIL'} {k}" + ("" if r["ok"] else f"  {r.get('problems')}"))
        print(f"{len(rec['examples']) - len(bad)}/{len(rec['examples'])} examples verified on {rec['device']}")
        return 1 if bad else 0
    rows = coverage()
    md = coverage_markdown(rows)
    if args.markdown:
        Path(args.markdown).write_text("# TIRx CUDA API coverage\n\nGenerated by `python -m txlab.api "
                                       "coverage --markdown docs/api-coverage.md`.\n\n" + md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
