"""Compile diagnostics at the user's line: nvcc/ptxas errors in generated CUDA/PTX mapped back
through the line map, hints for common mistakes (an API name that needs a newer arch, a missing
``T.device_entry()`` or ``pool.commit()``, shared memory past the limit, in KiB, naming the
allocations), and launchability checks: a kernel that compiles but cannot launch on its arch."""

from __future__ import annotations

import linecache
import re

from txlab import build, ir
from txlab.arch import DEFAULT_SMS, SM_LIMITS, arch_rank, needs_newer
from txlab import residency
from txlab.residency import resident_capacity, resident_per_sm
from txlab.toolchain import _instruction_arch

KiB = 1024


def _set_user_line(exc, user_file: str, line: int, generated: str) -> None:
    src = linecache.getline(user_file, line).rstrip("\n")
    exc.detail = (f"(generated code: {generated})\n" if generated else "") + (exc.detail or "")
    exc.lineno, exc.source_line, exc.filename = line, src or None, user_file


def map_toolchain_error(exc, mod, cuda_source, line_table, arch, ptx=None) -> bool:
    """Point an nvcc/ptxas error at the user's line through the line table. True when mapped."""
    from txlab import sourcemap

    if line_table is None or cuda_source is None:
        _too_much_shared(exc, mod, arch, line_table)
        return False
    cuda_line = None
    if exc.stage == "nvcc" and exc.lineno and (exc.filename or "").startswith("<generated CUDA"):
        cuda_line = exc.lineno
    elif exc.stage == "ptxas" and exc.lineno and ptx is not None:
        per = sourcemap.ptx_cuda_lines(ptx)
        for i in range(min(exc.lineno, len(per)) - 1, -1, -1):
            if per[i]:
                cuda_line = per[i]
                break
    mapped = False
    if cuda_line is not None:
        user = ir.user_line_of_cuda(cuda_source, line_table, cuda_line)
        if user is not None:
            where = "CUDA" if exc.stage == "nvcc" else "PTX"
            gen = f"{where} line {exc.lineno}: {(exc.source_line or '').strip()}"
            _set_user_line(exc, line_table.user_file, user, gen)
            mapped = True
    if _too_much_shared(exc, mod, arch, line_table):
        mapped = True
    return mapped


# ---------------------------------------------------------------------------------------------
def _shared_allocations(mod, arch) -> list[dict]:
    """Static shared-memory allocations of the kernel: name, bytes, user line."""
    import tvm
    from tvm.tirx import stmt as S

    from txlab import ir

    out = []
    user_file = ir.user_file_of(mod)
    for _, func in mod.functions_items():
        body = getattr(func, "body", None)
        if body is None:
            continue
        for node in ir.walk(body):
            if isinstance(node, S.AllocBuffer):
                buf = node.buffer
                scope = str(buf.scope()) if callable(getattr(buf, "scope", None)) else ""
                if not scope.startswith("shared"):
                    continue
                try:
                    n = 1
                    for d in buf.shape:
                        n *= int(d)
                    nbytes = n * tvm.runtime.DataType(str(buf.dtype)).bits // 8
                except (TypeError, ValueError):
                    nbytes = None
                out.append(
                    {
                        "name": str(buf.name),
                        "bytes": nbytes,
                        "scope": scope,
                        "line": ir.user_line(node.span, user_file) if user_file else None,
                    }
                )
    # (ptxas counts static shared memory only: an SMEMPool's dynamic arena is checked at compile
    # time by launchability() and, allocation by allocation, by txlab.pools.check)
    return [a for a in out if not a["scope"].startswith("shared.dyn")]


def _too_much_shared(exc, mod, arch, table) -> bool:
    m = re.search(r"uses too much shared data \((0x[0-9a-f]+) bytes, (0x[0-9a-f]+) max\)", exc.message or "")
    if not m:
        return False
    used, cap = int(m.group(1), 16), int(m.group(2), 16)
    allocs = sorted((a for a in _shared_allocations(mod, arch) if a["bytes"]), key=lambda a: -a["bytes"])
    names = ", ".join(
        f"{a['name']} ({a['bytes'] / KiB:g} KiB" + (f", line {a['line']}" if a["line"] else "") + ")"
        for a in allocs[:6]
    )
    static = cap == STATIC_SMEM_LIMIT
    exc.message = (
        f"shared memory {used / KiB:g} KiB is more than {arch}'s {cap / KiB:g} KiB per CTA "
        + ("of static shared memory (sized arrays) " if static else "")
        + f"(over by {(used - cap) / KiB:g} KiB)"
        + (f"; allocations: {names}" if names else "")
    )
    exc.hint = exc.hint or (
        "more than 48 KiB must be dynamic shared memory: allocate the large buffers from an SMEMPool or with scope "
        "'shared.dyn' (the launch opts into up to the arch's limit), or shrink them"
        if static
        else "shrink the largest allocation (fewer pipeline stages, a smaller tile) or split it"
    )
    big = next((a for a in allocs if a["line"]), None)
    if big is not None and table is not None and exc.lineno is None:
        _set_user_line(exc, table.user_file, big["line"], "")
    elif big is not None and exc.lineno is None:
        exc.lineno = big["line"]
    return True


# ---------------------------------------------------------------------------------------------
def add_hints(exc, mod, arch) -> None:
    """Hints for mistakes txlab recognises; TVM's own text stays in ``detail``."""
    msg = exc.message or ""
    detail = exc.detail or ""
    user_file = None
    src_lines: list[str] = []
    try:
        user_file = ir.user_file_of(mod) if mod is not None else None
        src_lines = linecache.getlines(user_file) if user_file else []
    except Exception:  # noqa: BLE001 - a hint is best effort
        pass
    text = "".join(src_lines)
    if exc.stage in ("nvcc", "ptxas"):
        hint = _arch_name_hint(exc, arch, _kernel_source(mod, user_file, src_lines))
        if hint:
            exc.hint = hint
    # the failing kernel's own lines where the IR says which they are (another kernel of the file may have one)
    own_at = _kernel_lines(mod, user_file) if exc.stage == "lower" else set()
    own = [src_lines[i - 1] for i in sorted(own_at) if 0 < i <= len(src_lines)]
    if (
        exc.stage == "lower"
        and "are used, but are not passed in as API arguments" in msg
        and "device_entry(" not in ("".join(own) if own else text)
    ):
        t = ir.tirx_alias(text)
        exc.message = (
            f"the kernel has no {t}.device_entry(): its body is host code, so {t}.cta_id/{t}.thread_id are unbound"
        )
        exc.hint = f"put {t}.device_entry() as the first statement of the kernel body"
        exc.detail = msg + ("\n" + detail if detail and detail != msg else "")
        ids = re.compile(r"\b\w+\.(cta_id|thread_id)\(")  # T.thread_id, Tx.thread_id, whatever the alias
        line = next((i for i, l in enumerate(src_lines, 1) if ids.search(l) and (not own_at or i in own_at)), None)
        if line and exc.lineno is None:
            exc.lineno, exc.source_line, exc.filename = line, src_lines[line - 1].rstrip("\n"), user_file
    if exc.stage == "lower" and mod is not None:
        _index_overflow(exc, mod, src_lines, user_file)
    if exc.stage == "lower" and "kDLFloat (4 vs. 2)" in msg and mod is not None:
        _bf16_scalar_param(exc, mod, src_lines, user_file, msg, detail)
    if exc.stage == "lower" and "placeholder extent" in msg and "dyn_smem_bytes" in msg:
        exc.message = "an SMEMPool was never committed: its allocations have no size"
        exc.hint = "call pool.commit() after the pool's last alloc (it sizes the dynamic shared memory)"
        exc.detail = msg + ("\n" + detail if detail and detail != msg else "")
        line = next((i for i, l in enumerate(src_lines, 1) if "SMEMPool(" in l.split("#")[0]), None)
        if line and exc.lineno is None:
            exc.lineno, exc.source_line, exc.filename = line, src_lines[line - 1].rstrip("\n"), user_file


def _bf16_scalar_param(exc, mod, src_lines, user_file, msg, detail) -> None:
    """TVM 0.27's host code takes no bfloat16 scalar argument: lowering a kernel with one stops in a check that
    expects a float (type code 2) and finds a bfloat16 (4), with no line. Name the parameter and the fix."""
    names = [
        str(p.name)
        for _, func in mod.functions_items()
        for p in getattr(func, "params", ())
        if str(getattr(p, "ty", "")) == "bfloat16"
    ]
    if not names:
        return
    exc.message = f"bfloat16 scalar parameter {names[0]!r}: TVM 0.27 cannot pass a bfloat16 scalar to a kernel"
    exc.hint = (
        f'take it as T.float32 and convert inside (T.Cast("bfloat16", {names[0]})), or pass a '
        "one-element bfloat16 buffer"
    )
    exc.detail = msg + ("\n" + detail if detail and detail != msg else "")
    pat = re.compile(rf"\b{re.escape(names[0])}\s*:\s*(T|Tx)\.bfloat16\b")
    line = next((i for i, l in enumerate(src_lines, 1) if pat.search(l.split("#")[0])), None)
    if line and exc.lineno is None:
        exc.lineno, exc.source_line, exc.filename = line, src_lines[line - 1].rstrip("\n"), user_file


def _kernel_lines(mod, user_file) -> set:
    """The line numbers of the user's file that the failing kernel is made of (its statements and the
    macros inlined into it): another kernel in the same file is not this error's cause."""
    try:
        return set(ir.user_lines_of(mod, user_file)) if mod is not None and user_file else set()
    except Exception:  # noqa: BLE001 - a hint is best effort
        return set()


def _kernel_source(mod, user_file, src_lines) -> list[str]:
    """The lines (text) of :func:`_kernel_lines`."""
    return [src_lines[i - 1] for i in sorted(_kernel_lines(mod, user_file)) if 0 < i <= len(src_lines)]


_INT32_MAX = 2**31 - 1


def _const(e) -> int | None:
    v = getattr(e, "value", None)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _decl_line(name: str, src_lines: list[str]) -> int | None:
    """The line declaring buffer parameter ``name`` (``name: T.Buffer(`` or ``name = T.match_buffer(``)."""
    rx = re.compile(r"\b" + re.escape(name) + r"\s*(:\s*\w+\.Buffer\(|=\s*\w+\.match_buffer\()")
    return next((i for i, l in enumerate(src_lines, 1) if rx.search(l.split("#")[0])), None)


def _overflow_in(mod, src_lines, user_file):
    """(message, hint, line) for the first buffer or CTA/thread extent past int32, else None."""
    import tvm
    from tvm.tirx import stmt as S

    for _, func in mod.functions_items():
        if not isinstance(func, tvm.tirx.PrimFunc):
            continue
        bufs = [
            (v.name, list(v.shape), _decl_line(v.name, src_lines), "global") for v in func.params if hasattr(v, "shape")
        ]
        for node in ir.walk(func.body):
            if type(node).__name__ in ("AllocBuffer", "DeclBuffer"):
                buf = node.buffer
                bufs.append((buf.name, list(buf.shape), ir.user_line(node.span, user_file), str(buf.scope())))
            elif isinstance(node, S.ScopeIdDefStmt):
                for ext in getattr(getattr(node, "def"), "extents", ()):
                    n = _const(ext)
                    if n is not None and n > _INT32_MAX:
                        return (
                            f"a launch extent of {n:,} is past what CUDA launches (2^31 - 1 CTAs along x, "
                            "65,535 along y and z, 1,024 threads per CTA)",
                            "launch fewer CTAs and loop over the work in each (a persistent kernel), "
                            "or split it over several launches",
                            ir.user_line(node.span, user_file),
                        )
        for name, shape, line, scope in bufs:
            dims = [_const(d) for d in shape]
            if not dims or None in dims or any(str(getattr(d, "ty", "int32")) != "int32" for d in shape):
                continue
            total = 1
            for d in dims:
                total *= d
            if total > _INT32_MAX:
                return (
                    f"buffer {name} has {total:,} elements (shape {tuple(dims)}), more than int32 "
                    "indices reach (2^31 - 1)",
                    f"give {name}'s shape int64 extents (e.g. Tx.int64({dims[0]})), or make it smaller"
                    if scope.startswith("global")
                    else f"make it smaller: a {scope} buffer holds far less (shared memory: at most 227 KiB per CTA)",
                    line,
                )
    return None


def _index_overflow(exc, mod, src_lines, user_file) -> None:
    """A buffer or launch extent past int32 makes TVM fail deep in lowering ("Divide by zero", an
    IterVar dtype mismatch) with no line: say which one, and where."""
    try:
        found = _overflow_in(mod, src_lines, user_file)
    except Exception:  # noqa: BLE001 - a hint is best effort
        return
    if found is None:
        return
    message, hint, line = found
    exc.detail = (exc.message or "") + ("\n" + exc.detail if exc.detail and exc.detail != exc.message else "")
    exc.message, exc.hint = message, hint
    if line and 0 < line <= len(src_lines):
        exc.lineno, exc.source_line, exc.filename = line, src_lines[line - 1].rstrip("\n"), user_file


def _arch_name_hint(exc, arch, src_lines) -> str | None:
    """An API name on the error's line that needs a newer arch, or one elsewhere in the kernel's own
    ``src_lines`` when the error has no line of its own or its text names it."""
    try:
        from txlab.tirx_api import names  # TVM's API names (txlab.api sits above the compiler)

        entries = [e for e in names() if e.arch and e.arch.startswith("sm_")]
    except Exception:  # noqa: BLE001 - a hint is best effort
        return None
    # ptxas names the feature and the target it needs: then a name on another line is the cause
    # only when the error has no line of its own and that name needs the same target
    said = re.search(r"Feature '([^']+)' requires \.target (sm_\d+[af]?)", f"{exc.message}\n{exc.detail or ''}")
    named = re.search(r"[Ii]nstruction '([^']+)' not supported on \.target", f"{exc.message}\n{exc.detail or ''}")
    if named and _instruction_arch(named.group(1)):
        return None  # nvcc named the instruction and the toolchain's hint says what it needs: no name guessed
    required = said.group(2) if said else None
    on_line = [exc.source_line or ""] if exc.lineno and exc.source_line else []
    error_text = f"{exc.message}\n{exc.detail or ''}"
    for k, text in enumerate(on_line + list(src_lines)):
        code = text.split("#")[0]
        for e in entries:
            # the name's last two parts: "encode_matrix_descriptor" alone is both tcgen05's (sm_100a) and
            # wgmma's (sm_90a), and a Hopper kernel's wgmma call was blamed on Blackwell
            tail = ".".join(e.name.split(".")[-2:])
            if not (re.search(r"\b" + re.escape(tail) + r"\s*\(", code) and needs_newer(e.arch, arch)):
                continue
            if required and k >= len(on_line) and (on_line or arch_rank(e.arch) != arch_rank(required)):
                continue  # the line map found the line: another line's name is not the cause
            if on_line and k >= len(on_line) and not re.search(re.escape(e.name.rsplit(".", 1)[-1]), error_text):
                continue  # the error is at a line without the name, and its text does not name it either
            return (
                f"{e.name} needs {e.arch}; this kernel is compiled for {arch} "
                f"(compile with arch={e.arch!r}, or --arch {e.arch})"
            )
    if required and needs_newer(required, arch):
        where = f" (what line {exc.lineno} compiles to)" if exc.lineno else ""
        return (
            f"PTX {said.group(1)}{where} needs {required}; this kernel is compiled for {arch} "
            f"(compile with arch={required!r}, or --arch {required})"
        )
    return None


# ---------------------------------------------------------------------------------------------
_ONE_INDEX = re.compile(r"^\s*(\w+) = T\.(thread_id|cta_id)\(\[([^\],]*)\]", re.M)
_CUDA_INDEX = {"thread_id": "threadIdx", "cta_id": "blockIdx"}


def aliased_indices(compiled) -> list[str]:
    """Two names bound by separate one-dimensional ``Tx.thread_id`` (or ``Tx.cta_id``) calls of one kernel: each call
    binds the same dimension (x), so the second name is the first, not a second dimension (CUDA's ``tx, ty`` habit;
    the CUDA shows ``int ty = ((int)threadIdx.x)``). Read from the kernel's TVMScript and confirmed in its CUDA."""
    out = []
    for func in re.split(r"\n\s*@T\.prim_func", compiled.script or "")[1:]:
        fname = re.search(r"def (\w+)\(", func)
        names: dict = {}
        for m in _ONE_INDEX.finditer(func):
            names.setdefault(m.group(2), []).append(m.group(1))
        for call, found in names.items():
            dim = _CUDA_INDEX[call]
            same = [
                n for n in dict.fromkeys(found) if re.search(rf"\bint {n} = \(\(int\){dim}\.x\);", compiled.cuda_source)
            ]
            if len(same) > 1:
                out.append(
                    f"{fname.group(1) if fname else compiled.name}: {' and '.join(same)} are the same {dim}.x: each "
                    f"Tx.{call}([n]) binds dimension x, so {same[1]} is {same[0]}, not a second dimension; for a 2-D "
                    f"{'block' if call == 'thread_id' else 'grid'} write {same[0]}, {same[1]} = Tx.{call}([32, 8])"
                )
    return out


#: statically sized shared memory per CTA: more must be dynamic (CUDA C++ Programming Guide, "shared memory")
STATIC_SMEM_LIMIT = 48 * 1024


def _grid_sync_kernels(compiled) -> set:
    """The kernels whose CUDA calls TVM's grid barrier helper (``Tx.cuda.grid_sync``)."""
    text = getattr(compiled, "cuda_source", "") or ""
    if "tvm_builtin_cuda_grid_sync();" not in text:
        return set()
    lines = text.splitlines()
    return {
        f.name
        for f in ir.cuda_functions(text)
        if f.is_kernel and any("tvm_builtin_cuda_grid_sync();" in x for x in lines[f.first - 1 : f.last])
    }


def launchability(compiled) -> list[str]:
    """Why each kernel cannot launch on its arch as compiled (empty when it can): threads per CTA
    past 1024, shared memory past the per-CTA limit, registers x threads past the register file."""
    from txlab import pools

    try:
        lim = pools.arch_limits(compiled.arch)
    except ValueError:
        return []
    out = []
    grid_syncs = _grid_sync_kernels(compiled)
    for k in compiled.kernels:
        launch = compiled.launch.get(k, {})
        # a count that is not an int (a damaged cache entry's) is left out, never trusted
        res = {n: v for n, v in compiled.resources.get(k, {}).items() if type(v) is int}
        threads = launch.get("threads_per_block")
        if isinstance(threads, int) and threads > 1024:
            out.append(
                f"{k}: {threads} threads per CTA (block {'x'.join(map(str, launch.get('block', ())))}); "
                "CUDA allows at most 1024"
            )
        # static shared memory past 48 KiB: ptxas refuses it for sm_80..sm_90 (a CompileError with the hint to go
        # dynamic) and takes it for sm_90a, where it launches (H100, 2026-12-07: 100 KiB, the result right)
        static = res.get("static_smem_bytes", 0) or 0
        dyn = res.get("dynamic_smem_bytes", 0)
        smem = static + (dyn if isinstance(dyn, int) else 0)
        cap = lim["smem_per_block_optin"]
        if smem > cap:
            out.append(
                f"{k}: {smem / KiB:g} KiB of shared memory per CTA (static {static / KiB:g} + dynamic "
                f"{(dyn if isinstance(dyn, int) else 0) / KiB:g}); {compiled.arch} allows {cap / KiB:g} KiB"
            )
        regs = res.get("registers")
        grid = launch.get("grid", ())
        if not launch.get("cooperative") and k in grid_syncs:
            out.append(
                f"{k}: calls grid_sync (cg::this_grid().sync()) but is not launched cooperatively, and "
                f"{build.NOT_COOPERATIVE_FAULT}: declare {build.COOPERATIVE_DECLARATION}"
            )
        sm_lim = SM_LIMITS.get(str(compiled.arch).rstrip("af"))
        if (
            launch.get("cooperative")
            and sm_lim is not None
            and isinstance(threads, int)
            and grid
            and all(isinstance(g, int) for g in grid)
        ):
            cl = ir.prod(launch.get("cluster") or (1,))
            per_sm = resident_per_sm(sm_lim, threads, smem, regs or 0)
            ctas, cap = ir.prod(grid), resident_capacity(sm_lim, threads, smem, regs or 0, cluster=cl)
            if ctas > cap:
                out.append(
                    f"{k}: a cooperative launch (grid_sync) of {ctas} CTAs; all must be resident at once, and "
                    f"{DEFAULT_SMS} SMs (an H100/H200) hold {cap} ({per_sm} per SM at {threads} threads"
                    + (f", {regs} registers" if regs else "")
                    + (f", {smem / KiB:g} KiB of shared memory" if smem else "")
                    + (f", in clusters of {cl}" if cl > 1 else "")
                    + f"): launch at most {cap} CTAs and loop over the work"
                )
        if isinstance(threads, int) and regs:
            warps = residency.warps_per_cta(threads)
            need = residency.regs_per_warp(regs) * warps
            if need > lim["regs_per_sm"]:
                out.append(
                    f"{k}: {regs} registers x {threads} threads = {need:,} registers (allocated per warp); "
                    f"the register file has {lim['regs_per_sm']:,} (cap with maxrregcount="
                    f"{max(16, lim['regs_per_sm'] // (warps * 32) // 8 * 8)})"
                )
    return out


# ---------------------------------------------------------------------------------------------
def kernel_name_error(mod):
    """A :class:`txlab.CompileError` at the ``def`` line of a function whose name is not ASCII (nvcc refuses the
    ``__global__`` function TVM names after it: "Universal character is not allowed in device entity name", on a
    line of the generated CUDA), or None. Parameter and local names may be any Python identifier."""
    import unicodedata

    from txlab.errors import CompileError

    names = []
    for gv, func in mod.functions_items():
        attrs = getattr(func, "attrs", None)
        symbol = attrs.get("global_symbol") if attrs is not None else None
        names += [n for n in (gv.name_hint, str(symbol) if symbol is not None else None) if n and not n.isascii()]
    if not names:
        return None
    name = names[0]
    user_file = ir.user_file_of(mod)
    src_lines = linecache.getlines(user_file) if user_file else []
    pattern = re.compile(rf"\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(")
    line = next((i for i, text in enumerate(src_lines, 1) if pattern.match(text)), None)
    plain = re.sub(r"\W", "_", unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode())
    hint = f"e.g. def {plain}(...)" if plain.isidentifier() and plain.strip("_") else "give the function an ASCII name"
    return CompileError(
        "parse",
        f"CUDA kernel names must be ASCII: rename {name!r} (nvcc refuses a non-ASCII __global__ function name; "
        "parameters and local variables may keep theirs)",
        lineno=line,
        source_line=src_lines[line - 1].rstrip("\n") if line else None,
        filename=user_file if line else None,
        hint=hint,
        kernel=name,
    )
