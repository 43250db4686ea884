"""The launch layer: everything between a compiled kernel and one launch of it, shared by inline
runs (txlab.run) and the isolated worker (txlab.worker).

* argument checks against the kernel's parameters (:func:`check_args`), symbolic extents bound
  from the arguments (:func:`bind_symbols`), launch shapes (:func:`launch_shape`) and device
  limits (:func:`check_launch`), all before anything is launched;
* device arguments and inline faults (:func:`to_device`, :func:`raise_inline_fault`);
* the timing loop (:func:`timed_launches`: CUDA events, L2 flushed before each launch).

``compiled`` is anything shaped like :class:`txlab.Compiled` (``name``, ``params``,
``entry_params``, ``launch``, ``resources``); nothing here imports the model.
"""

from __future__ import annotations

import ast
import functools
import operator
import re

import numpy as np

from txlab.errors import InputError, KernelFault, classify, hint
from txlab.ir import entry_params, prod


# ---------------------------------------------------------------------------------------------
# argument checks
def _describe(param) -> str:
    if param["kind"] == "buffer":
        return f"{param['name']}: {param['dtype']}[{', '.join(map(str, param['shape']))}]"
    return f"{param['name']}: {param['dtype']}"


def tensor_facts(value):
    """(shape, dtype, device, contiguous, data_ptr) of an array-like argument, or None."""
    if isinstance(value, np.ndarray):
        return tuple(value.shape), str(value.dtype), "host", value.flags.c_contiguous, value.ctypes.data
    mod = type(value).__module__
    if mod.startswith("torch"):
        dtype = str(value.dtype).removeprefix("torch.")
        device = "cuda" if value.is_cuda else str(value.device.type)
        return tuple(value.shape), dtype, device, value.is_contiguous(), value.data_ptr()
    if hasattr(value, "__dlpack__") or (type(value).__name__ == "Tensor" and mod.startswith("tvm")):
        import tvm

        t = value if mod.startswith("tvm") else tvm.runtime.from_dlpack(value)
        dev = "cuda" if t.device.dlpack_device_type() == 2 else "host"
        return tuple(int(s) for s in t.shape), str(t.dtype), dev, True, None
    return None


def _float_max(dtype: str) -> float:
    import ml_dtypes

    return float(ml_dtypes.finfo(np.dtype(getattr(ml_dtypes, dtype, dtype))).max)


def _float_overflows(v, dtype: str) -> bool:
    """A finite number past the largest ``dtype`` (float32, float16, bfloat16, ...) can hold."""
    try:
        big = _float_max(dtype)
    except (TypeError, ValueError, AttributeError):
        return False
    x = float(v)
    return bool(np.isfinite(x) and abs(x) > big)


def staged_numpy(args, copy=None) -> tuple[list, list]:
    """``(args, staged)``: ``args`` with each numpy array ``copy(a)`` picks (default: one that is not C-contiguous,
    a strided view such as ``a[::2]`` or Fortran order) replaced by a C-ordered copy (read-only where the array is),
    and the ``(array, copy)`` pairs whose results :func:`write_back` puts back into the caller's arrays. A kernel
    indexes each buffer as a dense row-major array; numpy arrays are copied in and out anyway, so every entry point
    (a call, ``check``, on the GPU or the emulator, ``txlab.emulate``) stages them. Torch and DLPack tensors pass as
    they are: they are passed zero-copy, and :func:`check_args` refuses a non-contiguous one."""
    pick = copy if copy is not None else (lambda a: not a.flags.c_contiguous)
    out, staged = [], []
    for a in args:
        if isinstance(a, np.ndarray) and pick(a):
            c = np.array(a, order="C", copy=True)
            if a.flags.writeable:
                staged.append((a, c))
            else:
                c.flags.writeable = False
            out.append(c)
        else:
            out.append(a)
    return out, staged


def write_back(staged) -> None:
    """Put the staged copies' values back into the caller's arrays (:func:`staged_numpy`)."""
    for a, c in staged:
        a[...] = c


def check_args(compiled, args) -> None:
    """Reject arguments that do not match the kernel's parameters, naming the parameter."""
    params = compiled.entry_params
    sig = f"{compiled.name}({', '.join(_describe(p) for p in params)})"
    if len(args) != len(params):
        raise InputError(f"{compiled.name} takes {len(params)} argument(s), got {len(args)}: expected {sig}")
    bound: dict[str, int] = {}
    for i, (p, v) in enumerate(zip(params, args)):
        where = f"argument #{i} ({p['name']})"
        if v is None:
            raise InputError(f"{where} is None; expected {_describe(p)}", param=p["name"])
        if p["kind"] == "scalar":
            if tensor_facts(v) is not None:
                raise InputError(f"{where} is an array, but {p['name']} is a scalar {p['dtype']}", param=p["name"])
            want_int = p["dtype"].startswith(("int", "uint"))
            if isinstance(v, (bool, np.bool_)):
                raise InputError(
                    f"{where} is a bool; {p['name']} is {p['dtype']}: pass {int(v)} if that is what you mean",
                    param=p["name"],
                )
            if want_int and not isinstance(v, (int, np.integer)):
                raise InputError(
                    f"{where} must be a Python int for {p['dtype']}, got {type(v).__name__}", param=p["name"]
                )
            if not want_int and not isinstance(v, (int, float, np.floating, np.integer)):
                raise InputError(f"{where} must be a number for {p['dtype']}, got {type(v).__name__}", param=p["name"])
            if not want_int and _float_overflows(v, p["dtype"]):
                raise InputError(
                    f"{where} = {float(v):g} does not fit in {p['dtype']} (largest {_float_max(p['dtype']):g}): it "
                    "would arrive as inf",
                    param=p["name"],
                )
            if want_int:
                lo, hi = _int_range(p["dtype"])
                if not lo <= int(v) <= hi:
                    raise InputError(f"{where} = {int(v)} does not fit in {p['dtype']} ([{lo}, {hi}])", param=p["name"])
                prev = bound.setdefault(p["name"], int(v))
                if prev != int(v):
                    raise InputError(f"{where} is {int(v)}, but the arrays say {p['name']} = {prev}", param=p["name"])
            continue
        facts = tensor_facts(v)
        if facts is None:
            raise InputError(
                f"{where} must be a numpy array, a torch tensor or a DLPack tensor "
                f"of {_describe(p)}, got {type(v).__name__}",
                param=p["name"],
            )
        shape, dtype, device, contiguous, ptr = facts
        if isinstance(v, np.ndarray) and not v.dtype.isnative:
            raise InputError(
                f"{where} is {v.dtype.str} (non-native byte order); the GPU reads "
                f"little-endian {p['dtype']}: pass a.astype('{p['dtype']}')",
                param=p["name"],
            )
        if dtype != p["dtype"]:
            raise InputError(
                f"{where} has dtype {dtype}, but {p['name']} is {p['dtype']}; "
                f"convert it (e.g. a.astype('{p['dtype']}'))",
                param=p["name"],
            )
        if len(shape) != len(p["shape"]):
            raise InputError(
                f"{where} has shape {shape} ({len(shape)}-d), but {p['name']} is {len(p['shape'])}-d: {_describe(p)}",
                param=p["name"],
            )
        for axis, (got, want) in enumerate(zip(shape, p["shape"])):
            if isinstance(want, int):
                if got != want:
                    raise InputError(
                        f"{where} has shape {shape}, but {p['name']} needs "
                        f"{tuple(p['shape'])} (axis {axis}: {got} != {want})",
                        param=p["name"],
                    )
            else:
                prev = bound.setdefault(want, got)
                if prev != got:
                    raise InputError(
                        f"{where}: axis {axis} is {got}, but {want} = {prev} from an earlier argument", param=p["name"]
                    )
        if device not in ("cuda", "host"):
            raise InputError(
                f"{where} lives on {device}; pass a CUDA tensor (zero-copy) or a numpy array (copied to the GPU)",
                param=p["name"],
            )
        if device == "host" and not isinstance(v, np.ndarray):
            raise InputError(
                f"{where} is a CPU tensor; move it to the GPU (t.cuda()) or pass a numpy array", param=p["name"]
            )
        if not contiguous:
            raise InputError(_not_contiguous(where, p["name"], v), param=p["name"])
        if ptr is not None and device == "cuda" and ptr % 16:
            raise InputError(
                f"{where} starts at an address that is not 16-byte aligned (0x{ptr:x}); slice-free or .clone() it",
                param=p["name"],
            )


def _not_contiguous(where: str, name: str, v) -> str:
    """Why a non-contiguous array is refused, with the fix of its own library."""
    if isinstance(v, np.ndarray):
        what = "a numpy array in Fortran order" if v.ndim > 1 and v.flags.f_contiguous else "a strided numpy view"
        return (
            f"{where} is not contiguous ({what}); the kernel indexes {name} as a dense row-major "
            "array: pass c = np.ascontiguousarray(a) and read results back from c (a kernel call and txlab.check "
            "stage numpy arrays this way themselves)"
        )
    return (
        f"{where} is not contiguous; the kernel indexes {name} as a dense row-major array, and a tensor is passed "
        "zero-copy: pass t.contiguous()"
    )


def check_writeable(compiled, args) -> None:
    """launch() copies every numpy argument back after the run, so each must be writeable (txlab
    cannot tell from the kernel which buffers it writes; a read-only one would lose results)."""
    for i, (p, v) in enumerate(zip(compiled.entry_params, args)):
        if p["kind"] == "buffer" and isinstance(v, np.ndarray) and not v.flags.writeable:
            raise InputError(
                f"argument #{i} ({p['name']}) is a read-only numpy array: launch() "
                "writes every numpy argument back after the run, so results for it would "
                "be lost; pass a writeable copy (np.array(a)), or a torch tensor",
                param=p["name"],
            )


def checked_then_gpu(compiled, args, doing: str, *, writes_back: bool = False, alternative: str | None = None):
    """Check the arguments (no GPU needed) before asking for the GPU, so a user without one learns
    about both; returns the GPUInfo. ``alternative``: what the NoGPUError suggests instead."""
    from txlab.device import probe, require_gpu

    try:
        check_args(compiled, args)
        if writes_back:
            check_writeable(compiled, args)
    except InputError as exc:
        info = probe()
        if not info.available:
            exc.args = (f"{exc.args[0]}\n(and {doing} needs a CUDA GPU, which this machine lacks: {info.reason})",)
        raise
    return require_gpu(doing, alternative=alternative)


def _int_range(dtype: str) -> tuple[int, int]:
    bits = int("".join(ch for ch in dtype if ch.isdigit()) or 32)
    if dtype.startswith("uint"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def bind_symbols(compiled, args) -> dict:
    """Values of the symbolic extents (``n``, ...) implied by the scalar arguments and buffer shapes."""
    names: dict[str, int] = {}
    params = entry_params(compiled.name, compiled.params)
    for p, v in zip(params, args):
        if p["kind"] == "scalar":
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                names.setdefault(p["name"], int(v))
            continue
        facts = tensor_facts(v) if v is not None else None
        if facts is None:
            continue
        for got, want in zip(facts[0], p["shape"]):
            if isinstance(want, str) and want.isidentifier():
                names.setdefault(want, int(got))
    return names


def block_problems(block, static_smem: int, dyn_smem: int, max_threads, max_smem, who: str = "the device") -> list:
    """What a CTA of ``block`` threads and ``static_smem + dyn_smem`` bytes of shared memory asks past ``max_threads``
    / ``max_smem`` (a falsy limit: not known), as phrases naming ``who`` allows what."""
    problems = []
    threads = prod(block)
    if threads is not None and max_threads and threads > max_threads:
        problems.append(f"{threads} threads per block (block={tuple(block)}), {who} allows {max_threads}")
    if max_smem and static_smem + dyn_smem > max_smem:
        problems.append(
            f"{static_smem + dyn_smem} bytes of shared memory per block ({static_smem} static + {dyn_smem} "
            f"dynamic), {who} allows {max_smem}"
        )
    return problems


def grid_problems(grid) -> list:
    """Grid y and z past the 65535 every GPU allows, as a phrase."""
    if len(grid) == 3 and all(isinstance(g, int) for g in grid) and (grid[1] > 65535 or grid[2] > 65535):
        return [f"grid={tuple(grid)}: grid y and z are limited to 65535"]
    return []


def whole_cluster_grid(grid, cluster) -> tuple | None:
    """The smallest grid of whole clusters that covers ``grid``, where ``grid`` is not one (cuLaunchKernelEx refuses
    it: CUDA_ERROR_INVALID_CLUSTER_SIZE); None where it is, or where a dimension is known only at launch."""
    g = (tuple(grid or ()) + (1, 1, 1))[:3]
    c = (tuple(cluster or ()) + (1, 1, 1))[:3]
    if not all(isinstance(v, int) for v in (*g, *c)) or not any(d % k for d, k in zip(g, c) if k):
        return None
    return tuple(-(-d // k) * k if k else d for d, k in zip(g, c))


def cluster_problems(grid, cluster) -> list:
    """A grid that is not a whole number of clusters, as a phrase (:func:`whole_cluster_grid`); [] otherwise."""
    fix = whole_cluster_grid(grid, cluster)
    if fix is None:
        return []
    g = (tuple(grid or ()) + (1, 1, 1))[:3]
    c = (tuple(cluster or ()) + (1, 1, 1))[:3]
    return [
        f"grid={g} is not a whole number of clusters of {c} (every grid dimension must be a multiple of the "
        f"cluster's: a grid of {fix} would be)"
    ]


def check_launch(compiled, info, args=()) -> None:
    """Raise ``KernelFault('launch_config')`` before launching if a kernel asks for more threads,
    shared memory, registers or cluster CTAs than the device ``info`` (a GPUInfo) offers."""
    names = bind_symbols(compiled, args)
    for kname, launch in compiled.launch.items():
        shape = {
            "kernel": kname,
            **{k: eval_dims(launch.get(k), names) for k in ("grid", "block", "cluster", "dynamic_smem_bytes")},
        }
        res = compiled.resources.get(kname, {})
        block = shape["block"]
        threads = prod(block)
        dyn = shape["dynamic_smem_bytes"] if isinstance(shape["dynamic_smem_bytes"], int) else 0
        static = int(res.get("static_smem_bytes") or 0)
        problems = block_problems(block, static, dyn, info.max_threads_per_block, info.max_smem_per_block_optin)
        regs = int(res.get("registers") or 0)
        if threads and regs and info.max_regs_per_block and regs * threads > info.max_regs_per_block:
            problems.append(
                f"{regs} registers x {threads} threads = {regs * threads} registers per "
                f"block, the device has {info.max_regs_per_block}"
            )
        cluster = prod(shape["cluster"] or (1,))
        if cluster is not None and cluster > 16:
            problems.append(
                f"a cluster of {cluster} CTAs (cluster={tuple(shape['cluster'])}); "
                f"the most a cluster can hold is 16 (8 portable)"
            )
        problems += grid_problems(shape["grid"])
        if shape["cluster"]:
            problems += cluster_problems(shape["grid"], shape["cluster"])
        if problems:
            raise KernelFault(
                "launch_config",
                f"kernel {kname} {fmt_shape(shape)} cannot launch on "
                f"{info.name or 'this GPU'}: " + "; ".join(problems) + ". Nothing was launched.",
                kernel=kname,
                launch=shape,
                hint="lower the block size, shared memory or cluster size, or cap registers (launch bounds)",
            )


# ---------------------------------------------------------------------------------------------
def to_device(args):
    """Device arguments for TVM and the (numpy array, device tensor) pairs to copy back."""
    import tvm

    dev = tvm.cuda(0)
    out, copies = [], []
    for v in args:
        if isinstance(v, np.ndarray):
            t = tvm.runtime.tensor(v, device=dev)
            copies.append((v, t))
            out.append(t)
        else:
            out.append(v)
    return out, copies


def raise_inline_fault(compiled, args, text: str):
    kind = classify(text)
    first = next((l for l in text.splitlines() if l.strip()), text)
    shape = launch_shape(compiled, args)
    sticky = kind in ("illegal_address", "misaligned", "trap", "illegal_instruction", "stack_overflow", "timeout")
    raise KernelFault(
        kind,
        f"{compiled.name} {fmt_shape(shape)}: {short_message(first)}."
        + (
            " This process's CUDA context is now unusable: restart the kernel, and use "
            "txlab.config.isolation = 'process' to survive faults."
            if sticky
            else ""
        ),
        kernel=shape["kernel"] if shape else None,
        launch=shape,
        hint=hint(kind),
    ) from None


def sync(compiled=None, args=()):
    from cuda.bindings import runtime as rt

    (err,) = rt.cudaDeviceSynchronize()[:1]
    if err != rt.cudaError_t.cudaSuccess:
        if compiled is not None:
            raise_inline_fault(compiled, args, err.name)
        raise KernelFault(classify(err.name), f"the kernel failed: {err.name}", cuda_error=err.name)


def fmt_shape(shape) -> str:
    if not shape:
        return ""
    parts = [f"grid={tuple(shape['grid'])}", f"block={tuple(shape['block'])}"]
    if shape.get("cluster"):
        parts.append(f"cluster={tuple(shape['cluster'])}")
    if shape.get("dynamic_smem_bytes"):
        parts.append(f"dyn_smem={shape['dynamic_smem_bytes']} B")
    return "[" + ", ".join(parts) + "]"


def launch_shape(compiled, args) -> dict | None:
    """The first kernel's launch shape with symbolic extents evaluated from the scalar arguments
    and buffer shapes (e.g. ``(n + 255) // 256`` with ``n`` = 1000 -> 4)."""
    if not compiled.launch:
        return None
    names = bind_symbols(compiled, args)
    kname = next(iter(compiled.launch))
    info = compiled.launch[kname]
    return {
        "kernel": kname,
        **{k: eval_dims(info.get(k), names) for k in ("grid", "block", "cluster", "dynamic_smem_bytes")},
    }


def eval_dims(value, names):
    """``value`` (an int, a TVMScript expression's text, or a tuple of them) with the names in ``names``
    bound: an int where the expression is closed arithmetic, else the text unchanged."""
    if isinstance(value, (tuple, list)):
        return tuple(eval_dims(v, names) for v in value)
    if isinstance(value, str):
        try:
            return eval_int_text(value, names)
        except (ValueError, KeyError, ZeroDivisionError, SyntaxError, TypeError):
            return value
    return value


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _trunc_mod(a, b):
    return a - b * _trunc_div(a, b)


#: the ``T.`` functions of an integer launch expression TVMScript prints (casts keep the value: a launch
#: dimension or byte count that overflows its type is an error TVM's own host code reports)
_INT_CALLS = {
    "floordiv": lambda a, b: a // b,
    "floormod": lambda a, b: a % b,
    "truncdiv": _trunc_div,
    "truncmod": _trunc_mod,
    "Div": _trunc_div,
    "Mod": _trunc_mod,
    "max": max,
    "min": min,
    "Max": max,
    "Min": min,
    "if_then_else": lambda c, a, b: a if c else b,
    "Select": lambda c, a, b: a if c else b,
    "shift_left": lambda a, b: a << b,
    "shift_right": lambda a, b: a >> b,
    "bitwise_and": lambda a, b: a & b,
    "bitwise_or": lambda a, b: a | b,
    "bitwise_xor": lambda a, b: a ^ b,
}


_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Div: _trunc_div,  # TIR's integer division of a Div node
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
_UNOPS = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert, ast.Not: lambda v: int(not v)}
_COMPARES = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


@functools.lru_cache(maxsize=256)
def _parsed(text: str):
    """The expression tree of a launch extent's text (parsed once: a launch evaluates it at every call)."""
    return ast.parse(text.strip(), mode="eval").body


def eval_int_text(text: str, names: dict) -> int:
    """The integer value of a TVMScript expression's text (``T.Cast("int64", n) * T.int64(4)``,
    ``(n + 255) // 256``, ``T.max(m, 1)``) with ``names`` bound. Only integer arithmetic, comparisons and
    the ``T.`` functions above are read (no Python is executed); anything else raises ValueError, a
    name not in ``names`` KeyError."""
    binops, unops, compares = _BINOPS, _UNOPS, _COMPARES

    def value(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int)):
            return int(node.value)
        if isinstance(node, ast.Name):
            v = names[node.id]
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                raise ValueError(f"{node.id} is not an integer")
            return int(v)
        if isinstance(node, ast.UnaryOp) and type(node.op) in unops:
            return unops[type(node.op)](value(node.operand))
        if isinstance(node, ast.BinOp) and type(node.op) in binops:
            return binops[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.BoolOp):
            vals = [value(v) for v in node.values]
            return int(all(vals)) if isinstance(node.op, ast.And) else int(any(vals))
        if isinstance(node, ast.Compare) and all(type(o) in compares for o in node.ops):
            left = value(node.left)
            for op, right in zip(node.ops, node.comparators):
                r = value(right)
                if not compares[type(op)](left, r):
                    return 0
                left = r
            return 1
        if isinstance(node, ast.Call) and not node.keywords and isinstance(node.func, ast.Attribute):
            base, fn = node.func.value, node.func.attr
            if not (isinstance(base, ast.Name) and base.id in ("T", "Tx")):
                raise ValueError(f"unsupported call {fn}")
            if fn == "Cast" and len(node.args) == 2:
                dtype = node.args[0]
                if not (isinstance(dtype, ast.Constant) and str(dtype.value).startswith(("int", "uint"))):
                    raise ValueError("a cast to a non-integer type")
                return value(node.args[1])
            if re.fullmatch(r"u?int(8|16|32|64)", fn) and len(node.args) == 1:
                return value(node.args[0])
            if fn in _INT_CALLS:
                return int(_INT_CALLS[fn](*[value(a) for a in node.args]))
            raise ValueError(f"unsupported call T.{fn}")
        raise ValueError(f"unsupported expression {ast.dump(node)[:60]}")

    return value(_parsed(text))


def short_message(line: str) -> str:
    line = re.sub(r"^(\w+Error|InternalError):\s*", "", line.strip())
    return line if len(line) <= 300 else line[:297] + "..."


def timed_launches(
    exe, dev_args, *, warmup: int, rep: int, flush_l2: bool, l2_bytes: int, progress=None, beat=None, on_error=None
) -> list[float]:
    """The timing loop shared by inline and isolated runs. ``beat(i)`` (the worker's heartbeat) is
    called as each launch completes; without it the launches are queued back to back."""
    from cuda.bindings import runtime as rt

    from txlab.device import cuda_ok

    def fail(text):
        if on_error is not None:
            on_error(text)
        raise KernelFault(classify(text), f"benchmark launch failed: {text}")

    def _check(res):
        return cuda_ok(res, fail)

    def run_once():
        try:
            exe(*dev_args)
        except Exception as exc:  # noqa: BLE001 - TVM launch errors carry the CUDA error name
            fail(str(exc))

    flush = None  # (device pointer, bytes) of a buffer twice the L2 size, rewritten before each launch
    if flush_l2:
        nbytes = max(2 * (l2_bytes or 64 << 20), 128 << 20)
        flush = (_check(rt.cudaMalloc(nbytes)), nbytes)
    start = [_check(rt.cudaEventCreate()) for _ in range(rep)]
    end = [_check(rt.cudaEventCreate()) for _ in range(rep)]
    try:
        for _ in range(warmup):
            run_once()
            if beat is not None:
                _check(rt.cudaDeviceSynchronize())
                beat(-1)
        _check(rt.cudaDeviceSynchronize())
        for i in range(rep):
            if flush is not None:
                _check(rt.cudaMemsetAsync(flush[0], i & 0xFF, flush[1], 0))
            _check(rt.cudaEventRecord(start[i], 0))
            run_once()
            _check(rt.cudaEventRecord(end[i], 0))
            if progress is not None and i % 16 == 15:
                progress.update(f"{i + 1}/{rep}", advance=16)
        if beat is not None:
            for i, ev in enumerate(end):
                _check(rt.cudaEventSynchronize(ev))
                beat(i)
        _check(rt.cudaDeviceSynchronize())
        return [float(_check(rt.cudaEventElapsedTime(s, e))) for s, e in zip(start, end)]
    finally:
        for ev in start + end:
            rt.cudaEventDestroy(ev)
        if flush is not None:
            rt.cudaFree(flush[0])
