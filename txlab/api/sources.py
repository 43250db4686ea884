"""The CUDA C TVM generates for an API example, and where each API name shows up in it."""

from __future__ import annotations

from txlab.api.entries import entry, examples


def cuda_source(example_id: str, arch: str | None = None) -> str:
    """The CUDA C TVM generates for an example (no nvcc; works for every example, NVSHMEM too)."""
    from txlab.compiler import compile as compile_kernel

    ex = examples()[example_id]
    if "iket" in ex.needs:
        from txlab.api_examples.iket import enabled_source

        return enabled_source(ex)
    if "nvshmem" not in ex.needs:
        return compile_kernel(ex.prim_func(), arch=arch or ex.arch, progress=lambda *_: None).cuda_source
    from txlab.compiler import cuda_source as generate

    return generate(ex.prim_func(), arch or ex.arch)


_generated: dict = {}


def generated_cuda(example_id: str, arch: str | None = None) -> str:
    """The CUDA C TVM generates for an example, without running nvcc (what the APIView shows;
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
    from txlab.ir import cuda_functions  # the one CUDA function-extent scanner

    funcs = cuda_functions("\n".join(lines))
    kernel_at = next((f.first - 1 for f in funcs if f.is_kernel), len(lines))
    defs = {}
    for f in funcs:
        defs.setdefault(f.name, (f.first - 1, min(f.last - 1, len(lines) - 1)))
    return kernel_at, defs


def emitted_lines(name: str, example_id: str | None = None, context: int = 3, source: str | None = None) -> dict:
    """The CUDA lines API ``name`` produced in its example (what the APIView highlights).

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
            return {
                "name": name,
                "example_id": None,
                "arch": e.arch,
                "example_source": "",
                "total_lines": 0,
                "lines": [],
                "highlight": [],
                "definitions": [],
                "how": "no example kernel uses this name yet",
            }
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
        calls = [
            (i, m.group(1))
            for i in range(kernel_at, len(lines))
            for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", lines[i])
        ]
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
        how = (
            "Python-side API: it emits no device code itself (the example shows it in use)"
            if name.startswith(_HOST_SIDE)
            else "found no line in the generated CUDA attributable to this name (it shapes the IR "
            "rather than emitting an instruction of its own)"
        )
    show = set(defn)
    for i in hi:
        show.update(range(max(0, i - context), min(len(lines), i + context + 1)))
    if len(show) > 400:  # a regex that matches everywhere: keep the first highlights
        hi = set(sorted(hi)[:60])
        show = {j for i in hi for j in range(max(0, i - context), min(len(lines), i + context + 1))}
    return {
        "name": name,
        "example_id": example_id,
        "arch": ex.arch,
        "example_source": ex.source,
        "total_lines": len(lines),
        "lines": [[i + 1, lines[i]] for i in sorted(show)],
        "highlight": sorted(i + 1 for i in hi),
        "definitions": sorted(i + 1 for i in defn & show),
        "how": how,
    }


def example_cell(example_id: str, magic: bool = False) -> str:
    """Text of a notebook cell that defines and compiles an example: a ``%%tirx`` cell when the
    txlab magic is loaded, else plain Python with the imports it needs."""
    import re

    ex = examples()[example_id]
    if magic:
        return f"%%tirx --arch {ex.arch}\n{ex.source}"
    from txlab.namespace import lang_names

    used = sorted(n for n in lang_names() if re.search(rf"\b{re.escape(n)}\b", ex.source))
    head = [
        "import txlab",
        "import txlab.compat  # parse-time workarounds for this TVM",
        "from tvm.script import tirx as T",
    ]
    if used:
        head.append(f"from tvm.backend.cuda.lang import {', '.join(used)}")
    return (
        "\n".join(head)
        + "\n\n"
        + ex.source.rstrip("\n")
        + "\n\n"
        + f"{ex.id}_compiled = txlab.compile({ex.id}, arch={ex.arch!r})\n{ex.id}_compiled\n"
    )


# ---- docs ---------------------------------------------------------------------------------------
