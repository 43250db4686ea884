"""Running compiled kernels on the local GPU: argument checks, launch, correctness checks, timing.

    out = compiled(a, b)                    # numpy arrays are copied in and out; torch/DLPack zero-copy
    txlab.check(compiled, (a, b), reference=lambda a, b: a * 2)
    txlab.bench(compiled, a, b, bytes=a.nbytes * 2)

Each takes a :class:`txlab.Compiled`, a ``@T.prim_func`` or an IRModule (compiled when it runs on
the GPU). Without a GPU (``txlab.config.device = "auto"``, the default) checks and calls run on the
CPU emulator, said once; timing needs a GPU, and :func:`bench` says what to use instead.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field

import numpy as np

from txlab.errors import InputError
from txlab.hooks import as_compiled
from txlab.launch import bind_symbols, check_args, check_launch  # noqa: F401  (public here too)
from txlab.launch import checked_then_gpu, staged_numpy, write_back
from txlab.launch import raise_inline_fault, timed_launches, to_device


def launch(kernel, *args, sync: bool = True, timeout_s: float | None = None, device: str | None = None):
    """Run ``kernel`` once. On the GPU ``kernel`` is a :class:`txlab.Compiled`; numpy arrays are
    copied in and written back in place (any order or stride: a C-ordered copy is what runs, on the GPU and the
    emulator alike); torch and DLPack tensors are passed zero-copy (inline) or
    staged through host memory (isolated). Returns None (kernels write their outputs).

    ``device`` (default ``txlab.config.device``): ``"auto"`` runs on the CPU emulator when there is
    no GPU (numpy arrays are written in place as after a GPU run; a finding of the emulator, e.g.
    an out-of-bounds access or a shared-memory race, is a :class:`txlab.KernelFault`
    ``kind="emulated"`` naming it at the user's line); ``"gpu"`` insists on a GPU; ``"cpu"`` always
    emulates (``kernel`` may then also be a ``@T.prim_func`` or an IRModule).

    With ``txlab.config.isolation == "process"`` a GPU run happens in the worker (txlab.worker): a
    fault or a hang raises :class:`txlab.KernelFault` and leaves this process and its arrays intact.
    ``timeout_s`` overrides ``txlab.config.timeout_s`` for this call (isolated GPU runs); on the emulator it bounds
    the emulation's wall time (none by default), and a run past it is ``KernelFault('timeout')``. An emulated call
    that faults leaves the numpy arrays passed in unchanged."""
    from txlab.device import choose

    if choose(device) == "cpu":
        return _emulated(kernel, args, timeout_s)
    kernel = as_compiled(kernel, what="txlab.run.launch")
    from txlab.launch import check_launch, checked_then_gpu, raise_inline_fault, to_device
    from txlab.launch import sync as wait_for_kernel
    from txlab.settings import config

    compiled = kernel
    args, staged = staged_numpy(args)
    info = checked_then_gpu(compiled, args, f"running {compiled.name}", writes_back=True)
    check_launch(compiled, info, args)
    if config.isolation == "process":
        from txlab import worker

        worker.run(compiled, args, timeout_s=timeout_s)
        write_back(staged)
        return None
    exe = compiled.executable
    dev_args, copies = to_device(args)
    try:
        exe(*dev_args)
    except Exception as exc:  # noqa: BLE001 - TVM's launch error (CUDALaunch Error: CUDA_ERROR_...)
        raise_inline_fault(compiled, args, str(exc))
    if sync or copies:
        wait_for_kernel(compiled, args)
    for host, tensor in copies:
        if host.flags.writeable:
            host[...] = tensor.numpy()
    write_back(staged)
    return None


def _emulated(kernel, args, timeout_s=None):
    """An emulated launch on copies of the numpy arrays, written back only when it ends clean: a faulting call
    leaves the caller's arrays as they were, as an isolated GPU run does."""
    from txlab.emulator import emulate
    from txlab.errors import KernelFault

    arrays = [a for a in args if isinstance(a, np.ndarray)]
    aliased = any(np.may_share_memory(x, y) for i, x in enumerate(arrays) for y in arrays[i + 1 :])
    # arrays that share memory (an in-place kernel given one array twice) run in place, copies would part them, unless
    # not C-contiguous (a strided view, Fortran order): those are staged as C-ordered copies, as on the GPU
    work, staged = staged_numpy(args, lambda a: not a.flags.c_contiguous or a.flags.writeable and not aliased)
    result = emulate(kernel, *work, timeout_s=timeout_s)
    bad = [f for f in result.findings if f.kind != "note"]
    if not bad:
        write_back(staged)
    if bad:
        more = f" (and {len(bad) - 1} more: txlab.emulate(kernel, *args) lists them)" if len(bad) > 1 else ""
        raise KernelFault(
            "emulated",
            f"{result.kernel} on the CPU emulator: {bad[0]}{more}",
            kernel=result.kernel,
            hint="the emulator stops short of what a GPU would do silently or fault on; fix the access it names",
        )
    return None


# ---------------------------------------------------------------------------------------------
def _poison_counts(o: dict) -> str:
    if o["ok"]:
        return ""
    parts = []
    if o.get("never_written"):
        parts.append(f"{o['never_written']} never written (still the poison {o['poison']})")
    if o.get("read_before_written"):
        parts.append(
            f"{o['read_before_written']} read before written ("
            + (
                "right when started from the values passed in"
                if o.get("read_from") == "input"
                else f"the poison {o['poison']} + what the kernel added"
            )
            + ")"
        )
    if o.get("poison_nan"):
        parts.append(f"{o['poison_nan']} NaN other than the poison (arithmetic on it?)")
    if o.get("wrong_from_input"):
        parts.append(f"{o['wrong_from_input']} wrong also when started from the values passed in")
    return "; " + ", ".join(parts) if parts else ""


def _error_text(o: dict) -> str:
    """The size of an output's error: max abs and relative Frobenius, over the numbers where some are NaN."""
    nan, nan_ref = o.get("nan", 0), o.get("nan_in_reference", 0)
    if not (nan or nan_ref):
        return f"max abs {o['max_abs_err']:.3g}, rel Frobenius {o['rel_frobenius']:.3g}"
    if nan == o["size"]:
        return "every element NaN where the reference has a number"
    text = ", ".join(
        f"{k} {what}"
        for k, what in ((nan, "NaN where the reference has a number"), (nan_ref, "numbers where the reference has NaN"))
        if k
    )
    if nan + nan_ref < o["size"]:
        text = f"max abs {o.get('max_abs_err_numbers', 0.0):.3g} where both are numbers, " + text
    return text


@dataclass
class CheckResult:
    """Outcome of :func:`check`: per output, the worst errors and where the first mismatch is."""

    ok: bool
    outputs: dict = field(default_factory=dict)
    rtol: float = 1e-5
    atol: float = 1e-6
    device: str = "gpu"
    findings: list = field(default_factory=list)  # the emulator's findings (device="cpu")

    def to_dict(self) -> dict:
        return asdict(self)

    def __bool__(self):
        return self.ok

    def assert_ok(self):
        if not self.ok:
            raise AssertionError(self.summary())
        return self

    def summary(self) -> str:
        parts = []
        for name, o in self.outputs.items():
            status = "ok" if o["ok"] else "MISMATCH"
            parts.append(
                f"{name}: {status} ({_error_text(o)}, {o['mismatches']} of {o['size']} "
                + ("unequal (integers: exact)" if o.get("exact") else f"outside rtol={self.rtol:g} atol={self.atol:g}")
                + (f"; unwritten {o['unwritten']}" if o.get("unwritten") and "never_written" not in o else "")
                + _poison_counts(o)
                + (
                    f"; first at {tuple(o['first_mismatch'])}: got {o['got']}, want {o['want']}"
                    if o["first_mismatch"] is not None
                    else ""
                )
                + (f" -- {o['explain']}" if o.get("explain") else "")
                + ")"
            )
        if self.device == "cpu":
            parts.append(
                "on the CPU emulator"
                + (f"; {len(self.findings)} finding(s): " + "; ".join(self.findings[:3]) if self.findings else "")
            )
        return "; ".join(parts)

    def __repr__(self):
        return f"CheckResult({'PASS' if self.ok else 'FAIL'}: {self.summary()})"


#: the poison :func:`check` fills outputs with before a launch, by dtype (bit patterns): floats get a
#: NaN with a payload of its own (a kernel that never wrote an element leaves these exact bits; one
#: that accumulated into it leaves another NaN), integers 0xA5 in every byte
_NAN_POISON = {"float64": 0x7FFCA5A5A5A5A5A5, "float32": 0x7FE5A5A5, "float16": 0x7EA5, "bfloat16": 0x7FE5}


def poison_bits(dtype) -> int | None:
    """The bit pattern :func:`check` poisons an output of ``dtype`` with (None: plain NaN, for the
    8-bit floats, which have no NaN payload to spare)."""
    name = np.dtype(dtype).name
    if name in _NAN_POISON:
        return _NAN_POISON[name]
    if np.issubdtype(np.dtype(dtype), np.floating) or name.startswith("float8"):
        return None
    return int.from_bytes(b"\xa5" * np.dtype(dtype).itemsize, "little")


def _uint_view(a: np.ndarray) -> np.ndarray:
    return a.view(f"uint{8 * a.dtype.itemsize}")


def _poison(a: np.ndarray):
    bits = poison_bits(a.dtype)
    if bits is None:
        a[...] = np.nan
    else:
        _uint_view(a)[...] = bits


def poison_text(dtype) -> str:
    """How the poison of ``dtype`` reads in a message: ``0xA5A5A5A5``, ``NaN 0x7FE5A5A5``."""
    bits = poison_bits(dtype)
    if bits is None:
        return "NaN"
    digits = 2 * np.dtype(dtype).itemsize
    return (
        f"NaN 0x{bits:0{digits}X}"
        if np.issubdtype(np.dtype(dtype), np.floating) or np.dtype(dtype).name == "bfloat16"
        else f"0x{bits:0{digits}X}"
    )


def _wrap(values: np.ndarray, dtype) -> np.ndarray:
    """int64 ``values`` wrapped to the range of the integer ``dtype`` (two's complement)."""
    bits = 8 * np.dtype(dtype).itemsize
    if bits >= 64:
        return values
    m = np.int64(1) << bits
    v = np.mod(values, m)
    return v - m * (v >= (m >> 1)) if np.dtype(dtype).kind == "i" else v


def poison_diagnosis(got: np.ndarray, want: np.ndarray, initial=None) -> dict:
    """What the poison says about an output :func:`check` poisoned: ``never_written`` (elements that
    still hold the poison's exact bits where something else was expected), ``read_before_written``
    (elements that hold the poison plus what the kernel added, i.e. the expected value less the
    ``initial`` value passed in: the kernel accumulated into an output it never initialised;
    integers), ``poison_nan`` (other NaNs where a number was expected: for a
    poisoned float output, usually arithmetic on the poison), and ``poison`` (how it reads)."""
    out = {"poison": poison_text(got.dtype), "never_written": 0, "read_before_written": 0, "poison_nan": 0}
    bits = poison_bits(got.dtype)
    if got.shape != want.shape or got.dtype.kind not in "iufb" and got.dtype.name != "bfloat16":
        return out
    floating = got.dtype.kind == "f" or got.dtype.name == "bfloat16"
    with np.errstate(invalid="ignore", over="ignore"):
        if floating:
            w = want.astype(np.float64)
            g = got.astype(np.float64)
            expected_number = ~np.isnan(w)
            exact = (_uint_view(got) == bits) if bits is not None else np.isnan(g)
            out["never_written"] = int((exact & expected_number).sum())
            if bits is not None:
                out["poison_nan"] = int((np.isnan(g) & ~exact & expected_number).sum())
            return out
        if bits is None:
            return out
        g = got.astype(np.int64)
        w = want.astype(np.int64)
        p = _wrap(np.array([bits], dtype=np.uint64).astype(np.int64), got.dtype)[0]
        exact = (_uint_view(got) == bits) & (w != g)
        out["never_written"] = int(exact.sum())
        added = _wrap(w - _initial(initial, got), got.dtype)
        out["read_before_written"] = int(((_wrap(g - p, got.dtype) == added) & (added != 0) & (g != w)).sum())
    return out


def _initial(initial, got: np.ndarray) -> np.ndarray:
    """The values passed in for an output, as int64 (zeros when unknown or not an array)."""
    if isinstance(initial, np.ndarray) and initial.shape == got.shape and initial.dtype.kind in "iub":
        return initial.astype(np.int64)
    return np.zeros(got.shape, np.int64)


def _inout_fix(param: str) -> str:
    return (
        f"if {param} starts from its input's values (an in-place update, a histogram, a += epilogue), pass "
        f"inout=({param!r},); else write every element before reading it"
    )


def _explain_first(
    o: dict, got: np.ndarray, want: np.ndarray, param: str, initial=None, *, read: bool = False
) -> str | None:
    """What the first mismatch of a poisoned output means, when the poison shows in it. ``read``: the kernel also
    reads ``param`` (:func:`buffer_uses`), so the poison's own bits there may be computed from the poison (NaN * 2
    keeps a NaN's payload on the CPU emulator), not left unwritten."""
    if o["first_mismatch"] is None:
        return None
    i = tuple(o["first_mismatch"])
    g, w = got[i], want[i]
    text = poison_text(got.dtype)
    bits = poison_bits(got.dtype)
    fix = _inout_fix(param)
    if got.dtype.kind == "f" or got.dtype.name == "bfloat16":
        raw = int(_uint_view(np.ascontiguousarray(got[i]).reshape(1))[0]) if bits is not None else None
        if bits is not None and raw == bits or bits is None and np.isnan(float(g)):
            if read:
                return (
                    f"got the poison {text}: never written, or computed from {param}'s poisoned values ({param} is "
                    f"also read by the kernel); {fix}"
                )
            return f"got the poison {text}: this element was never written"
        if bits is not None and np.isnan(float(g)) and not np.isnan(float(w)):
            return (
                f"got NaN (not the poison's bits {text}): usually arithmetic on the poison, i.e. "
                f"{param} was read before written; {fix}"
            )
        return None
    if bits is None:
        return None
    raw = int(np.asarray(g).astype(np.int64)) & ((1 << (8 * got.dtype.itemsize)) - 1)
    if raw == bits:
        if read:
            return (
                f"got the poison {text}: never written, or computed from {param}'s poisoned values ({param} is also "
                f"read by the kernel); {fix}"
            )
        return f"got the poison {text}: this element was never written"
    p = int(_wrap(np.array([bits], dtype=np.uint64).astype(np.int64), got.dtype)[0])
    delta = int(_wrap(np.array([int(g) - p], dtype=np.int64), got.dtype)[0])
    start = int(_initial(initial, got)[i])
    if delta == int(_wrap(np.array([int(w) - start], dtype=np.int64), got.dtype)[0]) and delta != 0:
        passed = f"; from the {start} passed in it makes {int(w)}, the expected value" if start else ""
        return (
            f"got {text} + {delta} = {int(g)}: {param} was read before written "
            f"(it accumulated into the poison {text}{passed}); {fix}"
        )
    return None


def _check_reference_arity(reference, names) -> None:
    """An InputError, before the reference runs, when it cannot take the kernel's arguments (it is called as
    ``reference(*args)``, one per kernel parameter); nothing for a callable whose signature is not known."""
    import inspect

    if not callable(reference):
        raise InputError(
            f"reference must be a function called as reference({', '.join(names)}), not {type(reference).__name__}",
            param="reference",
        )
    try:
        inspect.signature(reference).bind(*names)
    except TypeError as exc:
        raise InputError(
            f"reference is called as reference({', '.join(names)}) (one argument per kernel parameter) and cannot "
            f"take them: {exc}; give it {len(names)} parameters (lambda {', '.join(names)}: ...)",
            param="reference",
        ) from None
    except ValueError:  # a builtin or C function without a signature: called as is
        return


def check(
    kernel,
    args,
    reference,
    *,
    outputs=None,
    inout=(),
    rtol: float | None = None,
    atol: float | None = None,
    timeout_s: float | None = None,
    device: str | None = None,
) -> CheckResult:
    """Run the kernel on copies of ``args`` and compare with ``reference``.

    ``kernel``: a :class:`txlab.Compiled`, a ``@T.prim_func`` or an IRModule (compiled for the GPU,
    or emulated). ``args``: numpy arrays in any order or stride (a C-ordered copy is what runs), torch or DLPack
    tensors, scalars. ``reference(*args)`` gets numpy copies of the inputs and returns the expected
    output: one array, a tuple (matched to ``outputs``), or a dict ``{param_name: array}``. One array is compared with
    ``outputs=[name]``, the ``inout`` buffer, else the buffer parameter the kernel stores to (read from its IR,
    :func:`buffer_uses`; an :class:`txlab.InputError` names the buffers where it stores to several). A buffer the
    kernel only reads is never taken for an output.

    Output buffers are poisoned before the launch (integers 0xA5 in every byte, floats a NaN with
    its own payload), so unwritten elements are caught and the message says which: "never
    written" (the poison's bits), or "read before written" (the poison plus the right answer).
    An output the kernel also reads (an in-place ``X[i] = X[i] * 2``, an accumulation) is poisoned too, since a
    read before the first write is what the poison catches; where the poison shows in it, the check runs once
    more from the values passed in and says whether the output is then right ("with inout=('X',) every element
    of X matches"). ``inout``: names (or argument indices) of outputs that start from the values passed in (a
    histogram, a ``+=`` epilogue, an in-place update): they are not poisoned, and are outputs by default.

    Tolerances: an element matches when ``|got - want| <= atol + rtol * |want|`` (default ``rtol=1e-5``,
    ``atol=1e-6``); a NaN or infinity where the reference has the same matches (the poison never does).
    Integer and bool outputs must be equal unless ``rtol`` or ``atol`` is given.

    ``device`` (default ``txlab.config.device``, "auto"): "auto" runs on the GPU when one is usable,
    else on the CPU emulator (:func:`txlab.emulate`, said once); "gpu" insists; "cpu" emulates. The
    emulator's findings are in ``CheckResult.findings`` and fail the check. In isolated mode a GPU
    run happens in the worker (a fault raises :class:`txlab.KernelFault`; ``timeout_s`` bounds it).
    """
    from txlab.device import choose

    exact = rtol is None and atol is None
    rtol, atol = _tolerance("rtol", rtol, 1e-5), _tolerance("atol", atol, 1e-6)
    if not isinstance(args, (tuple, list)):
        raise InputError(
            f"txlab.check's args must be a tuple or list of the kernel's arguments, e.g. (a, b, n); got "
            f"{type(args).__name__} (one array? pass (a,))"
        )
    if not callable(reference):
        raise InputError(
            f"txlab.check's reference must be a function of the kernel's arguments returning the expected output; "
            f"got {type(reference).__name__}"
        )
    device = choose(device)
    # a build whose call prepares its arguments (hopper_gemm at a padded K or with split-K: A and B copied into
    # padded buffers, a workspace appended) is checked as it is called, with the operands
    prepare = getattr(kernel, "kernel_args", None) if hasattr(kernel, "call_params") else None
    staged = staged_numpy(args)[0]  # numpy arrays in any order or stride, as a call takes them
    if device == "gpu":
        kernel = as_compiled(kernel, what="txlab.check")
        checked_then_gpu(kernel, prepare(*staged) if prepare else staged, f"checking {kernel.name}")  # before reference
    params = (
        kernel.call_params
        if prepare
        else kernel.entry_params
        if hasattr(kernel, "entry_params")
        else _params_for(kernel)
    )
    if device != "gpu":  # the reference must not be the first to see a wrong argument
        from txlab.ir.signature import Signature

        check_args(Signature(_kernel_name(kernel, "txlab.check"), params), staged)
    inout_names = _inout_names(kernel, params, inout)
    host_args = _host_copies(args)
    _check_reference_arity(reference, [p["name"] for p in params])
    expected = reference(*[a.copy() if isinstance(a, np.ndarray) else a for a in host_args])
    if outputs is None and inout_names and not isinstance(expected, dict):
        outputs = inout_names
    uses = None if prepare else buffer_uses(kernel)  # a prepared call's operands are not the kernel's parameters
    exp = expected_outputs(kernel, expected, outputs, params=params, uses=uses)
    index = {p["name"]: i for i, p in enumerate(params)}
    poisoned = [n for n in exp if n not in inout_names]
    for n in poisoned:
        if isinstance(host_args[index[n]], np.ndarray):
            _poison(host_args[index[n]])

    def run(host):
        if device == "cpu":
            from txlab.emulator import emulate

            return [str(f) for f in emulate(kernel, *host, timeout_s=timeout_s).findings if f.kind != "note"]
        launch(kernel, *(prepare(*host) if prepare else host), timeout_s=timeout_s, device="gpu")
        return []

    def rerun(zeroed=(), as_passed=()):
        """One more run: the outputs in ``zeroed`` start from zeros, those in ``as_passed`` from the values passed in,
        the other poisoned outputs poisoned again."""
        again = _host_copies(args)
        for n in poisoned:
            a = again[index[n]]
            if isinstance(a, np.ndarray) and n not in as_passed:
                if n in zeroed:
                    a[...] = 0
                else:
                    _poison(a)
        run(again)
        return again

    # outputs the kernel also reads (an in-place update, an accumulation): the poison shows where it is read before
    # the kernel writes it, and a failure says so (a rerun from the values passed in tells whether that is all)
    reads = {n for n in poisoned if uses is not None and uses.get(n, set()) & {LOAD, OTHER}}
    findings = run(host_args)
    results, ok, unclear, reread = {}, True, [], []
    for n, want in exp.items():
        got = host_args[index[n]]
        want = np.asarray(want)
        if want.dtype.kind not in "biuf" and want.dtype.name != "bfloat16":
            raise InputError(
                f"the reference's value for {n} is {want.dtype} ({type(expected).__name__} returned), not numbers: "
                "return a numpy array (or a number) of the expected values"
            )
        poison = None
        if n in poisoned and isinstance(got, np.ndarray) and _is_float(got) and poison_bits(got.dtype) is not None:
            poison = _uint_view(got) == poison_bits(got.dtype)  # never written: no NaN of the reference matches it
        results[n] = compare(got, want, rtol, atol, exact_integers=exact, equal_nan=True, unmatched=poison)
        if n in poisoned and isinstance(got, np.ndarray) and got.shape == want.shape:
            initial = args[index[n]] if isinstance(args[index[n]], np.ndarray) else None
            results[n].update(poison_diagnosis(got, want, initial))
            if not results[n]["ok"]:
                results[n]["explain"] = _explain_first(results[n], got, want, n, initial, read=n in reads)
                if _is_float(got) and (results[n]["never_written"] or results[n]["poison_nan"]):
                    unclear.append(n)
                if n in reads:
                    reread.append(n)
        ok &= results[n]["ok"]
    if unclear:
        # A float NaN left where a number was expected is the poison never written, or arithmetic on
        # it (a read before the first write; on the CPU emulator NaN + x keeps the poison's bits):
        # one more run with those outputs zeroed tells them apart (a never-written element stays 0).
        again = rerun(zeroed=unclear)
        for n in unclear:
            _refine_float(results[n], host_args[index[n]], again[index[n]], np.asarray(exp[n]), n)
    if reread:
        # an output the kernel reads, run again from the values passed in: what is right then and wrong from the
        # poison was read before it was written (an in-place update, an accumulation: inout=)
        again = rerun(as_passed=reread)
        for n in reread:
            passed = _host_copies([args[index[n]]])[0]
            _refine_read(
                results[n], host_args[index[n]], again[index[n]], np.asarray(exp[n]), passed, n, rtol, atol, exact
            )
    return CheckResult(
        ok=bool(ok) and not findings, outputs=results, rtol=rtol, atol=atol, device=device, findings=findings
    )


def _tolerance(name: str, value, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"txlab.check's {name} must be a number, e.g. {name}={default:g}; got {value!r}")
    if not np.isfinite(value) or value < 0:
        raise InputError(f"txlab.check's {name} must be finite and >= 0, e.g. {name}={default:g}; got {value!r}")
    return float(value)


def _is_float(a: np.ndarray) -> bool:
    return a.dtype.kind == "f" or a.dtype.name == "bfloat16"


def _refine_float(o: dict, got: np.ndarray, zeroed: np.ndarray, want: np.ndarray, param: str) -> None:
    """Counts and the first mismatch's explanation of a float output from two runs: poisoned (``got``)
    and started from zeros (``zeroed``)."""
    with np.errstate(invalid="ignore"):
        expected_number = ~np.isnan(want.astype(np.float64))
        nan1 = np.isnan(got.astype(np.float64)) & expected_number
        z = zeroed.astype(np.float64)
        zero_bits = _uint_view(np.ascontiguousarray(zeroed)) == 0
        never = nan1 & zero_bits
        read = nan1 & ~zero_bits & ~np.isnan(z)
    o["never_written"] = int(never.sum())
    o["read_before_written"] = int(read.sum())
    o["poison_nan"] = int((nan1 & ~never & ~read).sum())
    if o["first_mismatch"] is None:
        return
    i = tuple(o["first_mismatch"])
    text = poison_text(got.dtype)
    if never[i]:
        o["explain"] = f"got the poison {text}: this element was never written"
    elif read[i]:
        o["explain"] = (
            f"got NaN: {param} was read before written (it accumulated into the poison {text}; "
            f"started from zeros it ends as {float(z[i]):g}); if {param} starts from its "
            f"input's values (a histogram, a += epilogue), pass inout=({param!r},); else "
            "write every element before reading it"
        )
    elif nan1[i]:
        o["explain"] = "got NaN also when the output starts from zeros: the kernel computes a NaN here"


def _refine_read(o: dict, got, again, want, passed, param: str, rtol, atol, exact) -> None:
    """Counts and the first mismatch's explanation of a poisoned output the kernel also reads, from two runs: poisoned
    (``got``) and started from the values passed in (``again``; ``passed`` holds them). An element wrong from the
    poison and right from the values passed in was read before it was written; one that holds the poison's bits and
    keeps the value passed in was never written."""
    bits = poison_bits(got.dtype)
    floating = _is_float(got)
    with np.errstate(invalid="ignore"):
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        at_poison = (_uint_view(got) == bits) if bits is not None else np.isnan(g)
        bad1 = _mismatched(got, want, rtol, atol, exact_integers=exact, equal_nan=True)
        if floating:
            bad1 |= at_poison
        bad2 = _mismatched(again, want, rtol, atol, exact_integers=exact, equal_nan=True)
        read = bad1 & ~bad2
        never = bad1 & bad2 & at_poison & (_uint_view(again) == _uint_view(passed))
        either = bad1 & bad2 & ~never
        o["read_before_written"] = int(read.sum())
        o["never_written"] = int(never.sum())
        o["wrong_from_input"] = int(either.sum())
        o["read_from"] = "input"
        if floating:
            o["poison_nan"] = 0  # each NaN is counted above: read before written, never written or wrong either way
    if o["first_mismatch"] is None:
        return
    i = tuple(o["first_mismatch"])
    text = poison_text(got.dtype)
    shown = f"the poison {text}" if at_poison[i] else "NaN" if floating and np.isnan(g[i]) else f"{got[i]}"
    if bad2.any():
        j = tuple(int(v) for v in np.argwhere(bad2)[0])
        still = (
            f"; but started from the values passed in {int(bad2.sum())} of {bad2.size} elements still differ "
            f"(first at {j}: got {again[j]}, want {want[j]})"
        )
    else:
        still = f"; with inout=({param!r},) every element of {param} matches"
    if read[i]:
        if "read before written" not in (o.get("explain") or ""):
            o["explain"] = (
                f"got {shown}: {param} is also read by the kernel, and this element was computed from its poisoned "
                f"values, i.e. read before written (started from the values passed in it is {again[i]}, as "
                f"expected); {_inout_fix(param)}"
            )
        o["explain"] += still
    elif never[i]:
        o["explain"] = f"got the poison {text}: this element was never written (it keeps the value passed in)"
    elif at_poison[i] or o.get("explain"):
        o["explain"] = (
            f"got {shown}; {param} is also read by the kernel, and started from the values passed in this element is "
            f"{again[i]}, want {want[i]}: wrong either way"
        )


def _inout_names(kernel, params, inout) -> list:
    """Buffer names for ``inout`` given as names or argument indices (one name/index, or several)."""
    if inout is None:
        return []
    items = [inout] if isinstance(inout, (str, int)) else list(inout)
    buffers = [p["name"] for p in params if p["kind"] == "buffer"]
    name = _kernel_name(kernel, "txlab.check")
    out = []
    for it in items:
        if isinstance(it, bool) or not isinstance(it, (str, int)):
            raise InputError(
                f"inout={inout!r}: give buffer parameter names or argument indices "
                f"(buffers of {name}: {', '.join(buffers)})",
                param="inout",
            )
        if isinstance(it, int):
            if not -len(params) <= it < len(params):
                raise InputError(
                    f"inout index {it} is out of range: {name} takes {len(params)} argument(s)", param="inout"
                )
            it = params[it]["name"]
        if it not in buffers:
            raise InputError(
                f"inout={inout!r}: {it!r} is not a buffer parameter of {name} (its buffers: {', '.join(buffers)})",
                param="inout",
            )
        out.append(it)
    return list(dict.fromkeys(out))


def _kernel_name(kernel, what: str = "txlab.bench") -> str:
    name = getattr(kernel, "name", None)
    if isinstance(name, str):
        return name
    from txlab import ir

    return ir.as_module(kernel, None, what=what)[1]


def _params_for(kernel):
    from txlab import build, ir

    mod, entry = ir.as_module(kernel, None, what="txlab.check")
    params = build.params_of(mod)
    return [p for p in params if p.get("function", entry) == entry] or params


def _to_numpy(a):
    if type(a).__module__.startswith("torch"):
        return a.detach().cpu().numpy()
    return a


def _host_copies(args) -> list:
    """C-ordered numpy copies of the array arguments (a tensor copied to the host first), the rest as they are."""
    out = []
    for a in args:
        a = _to_numpy(a)
        out.append(np.array(a, order="C", copy=True) if isinstance(a, np.ndarray) else a)
    return out


# ---------------------------------------------------------------------------------------------
# which buffer parameters the kernel stores to and loads from (its IR as written)
#: a buffer parameter's uses in :func:`buffer_uses`
STORE, LOAD, OTHER = "store", "load", "other"
_ADDRESS_CALLS = ("tirx.address_of", "tirx.tvm_access_ptr")


def buffer_uses(kernel) -> dict | None:
    """How the entry function of ``kernel`` (a ``@T.prim_func``, an IRModule or a :class:`txlab.Compiled`) uses each
    buffer parameter, read from its IR as written: ``{name: {"store", "load", "other"}}``. ``store``: a plain store
    (``Y[i] = ...``) or the destination of a tile primitive (``Tx.copy``, a TMA store); ``load``: a plain load or a
    tile primitive's source; ``other``: any use whose direction the IR does not say (an address passed to an atomic,
    ``ptx.st``/``ptx.ld`` or another function: it may read or write). Views of a parameter
    (``Tx.decl_buffer(..., data=C.data)``) count as the parameter. None when the IR cannot be read (what
    :func:`check` then falls back from)."""
    from txlab import ir

    try:
        mod, entry = ir.as_module(kernel, getattr(kernel, "name", None), what="txlab.check")
        func = mod[entry]
        params = [p for p in func.params if type(getattr(p, "ty", None)).__name__ == "BufferType"]
        return _uses_of(func.body, params)
    except Exception:  # noqa: BLE001 - IR this reader does not know: the caller says what it assumed
        return None


def _uses_of(body, params) -> dict:
    import tvm_ffi

    from txlab import ir

    def handle(node):
        return node.__chandle__() if isinstance(node, tvm_ffi.Object) else id(node)

    owner = {handle(p): str(p.name) for p in params}  # buffer variable -> the parameter it is (or views)
    uses: dict = {str(p.name): set() for p in params}
    region_use: dict = {}  # a tile primitive's region -> store / load

    def mark(var, use):
        name = owner.get(handle(var))
        if name is not None:
            uses[name].add(use)

    def roots(expr) -> set:
        return {owner[handle(n)] for n in ir.walk(expr) if handle(n) in owner}

    seen: set = set()
    stack = [body]
    while stack:
        node = stack.pop()
        if not isinstance(node, tvm_ffi.Object):
            if isinstance(node, (list, tuple)):
                stack.extend(reversed(node))
            continue
        t = type(node).__name__
        if t == "Var":  # a buffer variable anywhere but where a load or store names it: passed on, its address taken
            mark(node, OTHER)
            continue
        key = handle(node)
        if key in seen:
            continue
        seen.add(key)
        skip = ()
        if t == "BufferStore":
            mark(node.buffer, STORE)
            skip = (handle(node.buffer),)
        elif t in ("TensorLoad", "BufferLoad"):
            buf = node.source if t == "TensorLoad" else node.buffer
            mark(buf, LOAD)
            skip = (handle(buf),)
        elif t == "TensorRegion":
            mark(node.source, region_use.get(key, OTHER))
            skip = (handle(node.source),)
        elif t == "DeclBuffer":  # a view of a parameter's memory is the parameter
            found = roots(node.data)
            if len(found) == 1:
                owner[handle(node.buffer)] = found.pop()
                skip = (handle(node.buffer), handle(node.data))
            else:
                skip = (handle(node.buffer),)
        elif t == "TilePrimitiveCall":
            from tvm.tirx.tile_primitive import TilePrimitiveCall

            try:
                op = TilePrimitiveCall.downcast(node)
                for use, regions in ((STORE, op.dsts), (LOAD, op.srcs)):
                    for r in regions:
                        if type(r).__name__ == "TensorRegion":
                            region_use[handle(r)] = use if region_use.get(handle(r), use) == use else OTHER
            except Exception:  # noqa: BLE001 - an op without dsts/srcs: its regions stay "other"
                pass
        elif t == "Call" and getattr(node.op, "name", "") in _ADDRESS_CALLS:
            for a in node.args:  # an address (an atomic's, a ptx.st's): neither a load nor known to be a store
                if type(a).__name__ in ("TensorLoad", "BufferLoad"):
                    buf = a.source if type(a).__name__ == "TensorLoad" else a.buffer
                    mark(buf, OTHER)
                    seen.add(handle(a))
                    stack.extend(reversed(list(a.indices)))
        kids = [c for c in ir.children(node) if not (isinstance(c, tvm_ffi.Object) and handle(c) in skip)]
        stack.extend(reversed(kids))
    return uses


_FROM_KERNEL = object()  # expected_outputs' default ``uses``: read from the kernel's IR


def expected_outputs(compiled, expected, outputs=None, *, params=None, uses=_FROM_KERNEL) -> dict:
    """``{buffer parameter: expected array}`` from what a reference returned: a dict by name; a tuple matched to
    ``outputs``; or one array, for ``outputs=[name]``, else for the buffer parameter the kernel stores to.

    Which buffers the kernel stores to is read from its IR (:func:`buffer_uses`; ``uses`` gives it, None where it is
    not known: then one array is for the last buffer parameter). One array where the kernel stores to several
    buffers, or to none, is an :class:`InputError` naming them and the ``outputs=`` to pass; a buffer the kernel only
    reads is never taken for the output."""
    params = compiled.params if params is None else params
    buffers = [p["name"] for p in params if p["kind"] == "buffer"]
    if expected is None:
        raise InputError(
            "the reference returned None: it must return the expected output (one array, a tuple matching "
            "outputs=[...], or a dict by buffer name); writing into its arguments is not read (a missing return?)"
        )
    if isinstance(expected, dict):
        exp = dict(expected)
    else:
        values = list(expected) if isinstance(expected, (tuple, list)) else [expected]
        if outputs:
            names = list(outputs)
        else:
            if uses is _FROM_KERNEL:
                uses = buffer_uses(compiled)
            names = _default_outputs(compiled, buffers, uses, len(values))
        if len(values) != len(names):
            raise InputError(
                f"reference returned {len(values)} value(s) for outputs {names}; "
                "pass outputs=[...] naming each returned buffer"
            )
        exp = dict(zip(names, values))
    unknown = [n for n in exp if n not in buffers]
    if unknown:
        raise InputError(
            f"reference returned {unknown}, which are not buffer parameters of "
            f"{getattr(compiled, 'name', 'the kernel')} ({', '.join(buffers)})"
        )
    return exp


def _default_outputs(compiled, buffers: list, uses, count: int) -> list:
    """The buffer parameters ``count`` returned values are for when the reference names none: the one buffer the
    kernel stores to (or, with no plain store, the one it passes to a call that may write it)."""
    if uses is None or any(b not in uses for b in buffers):
        return buffers[-1:]  # the IR could not be read: the last buffer parameter, as always
    name = getattr(compiled, "name", None) or "the kernel"
    stored = [b for b in buffers if STORE in uses[b]]
    maybe = [b for b in buffers if OTHER in uses[b] and b not in stored]
    if count != 1:
        written = ", ".join(stored + maybe) or "none"
        raise InputError(
            f"the reference returned {count} values: pass outputs=[...] naming the buffer each is for, in order, "
            f"or return a dict by buffer name ({name} writes: {written})",
            param="outputs",
        )
    if len(stored) == 1:
        return stored
    if len(stored) > 1:
        raise InputError(
            f"the reference returned one array, but {name} stores to {len(stored)} buffers ({', '.join(stored)}): "
            f"say which it is for with outputs=[{stored[0]!r}], or return them all as a dict "
            f"({{{', '.join(f'{b!r}: ...' for b in stored)}}}) or a tuple with outputs={stored}",
            param="outputs",
        )
    if len(maybe) == 1 or maybe and maybe[-1] == buffers[-1]:
        return maybe[-1:]  # an atomic's, a ptx.st's target: the last buffer, as always, where it is one of them
    if maybe:
        raise InputError(
            f"the reference returned one array, and {name} has no plain store to a buffer parameter; it passes the "
            f"addresses of {', '.join(maybe)} to calls that may write them: say which is the output with "
            f"outputs=[{maybe[-1]!r}]",
            param="outputs",
        )
    raise InputError(
        f"the reference returned one array, but {name} stores to none of its buffer parameters ("
        f"{', '.join(buffers)}: it only reads them), so nothing can be compared; name the output with outputs=[...] "
        "if txlab misread the kernel",
        param="outputs",
    )


def compare(
    got: np.ndarray,
    want: np.ndarray,
    rtol,
    atol,
    *,
    exact_integers: bool = False,
    equal_nan: bool = False,
    unmatched=None,
) -> dict:
    """How ``got`` differs from ``want``: ``ok``, ``mismatches`` of ``size``, ``unwritten`` (NaN
    where a value was expected), ``nan`` (elements NaN where the reference has a number; ``nan_in_reference`` the
    reverse), ``max_abs_err`` (infinite where there is either; ``max_abs_err_numbers`` over the elements where both
    are numbers), ``rel_frobenius`` (the Frobenius norm of the error over the reference's, or the error's norm where
    the reference is all zeros), the ``first_mismatch`` index and its ``got``/``want``. An element matches when
    ``|got - want| <= atol + rtol * |want|``;
    NaN never matches, unless ``equal_nan`` (then NaN == NaN and inf == inf, as in
    ``np.isclose(equal_nan=True)``). ``exact_integers``: integer arrays must be equal (``exact`` in the
    result). ``unmatched``: a mask of elements that never match (a poison left in place).
    :func:`check` and ``txlab.api.verify`` both compare with this."""
    if got.shape != want.shape:
        raise InputError(f"reference shape {want.shape} differs from the output's {got.shape}")
    with np.errstate(invalid="ignore", over="ignore"):
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        nan_g, nan_w = np.isnan(g), np.isnan(w)
        unwritten = int(nan_g.sum() - nan_w.sum()) if np.issubdtype(g.dtype, np.floating) else 0
        nan = nan_g & ~nan_w  # NaN where the reference has a number, and the reverse: infinite errors
        nan_ref = nan_w & ~nan_g
        diff = np.abs(g - w)
        exact = exact_integers and got.dtype.kind in "iub" and want.dtype.kind in "iub"
        bad = _mismatched(got, want, rtol, atol, exact_integers=exact_integers, equal_nan=equal_nan)
        if unmatched is not None:
            bad = bad | unmatched
        first = np.argwhere(bad)[0].tolist() if bad.any() else None
        numbers = ~np.isnan(diff)  # both numbers (or equal infinities: inf - inf is NaN, and no error)
        max_abs = float(diff[numbers].max()) if numbers.any() else 0.0
        norm = float(np.linalg.norm(w[~nan_w].ravel()))
        err = (
            np.linalg.norm(np.where(nan | nan_ref, np.inf, np.where(numbers, diff, 0.0)).ravel()) if diff.size else 0.0
        )
        return {
            "ok": not bool(bad.any()),
            "size": int(g.size),
            "mismatches": int(bad.sum()),
            "unwritten": max(unwritten, 0),
            "nan": int(nan.sum()),
            "nan_in_reference": int(nan_ref.sum()),
            "max_abs_err": float("inf") if nan.any() or nan_ref.any() else max_abs,
            "max_abs_err_numbers": max_abs,
            "rel_frobenius": float(err / norm) if norm else float(err),
            "first_mismatch": first,
            "got": None if first is None else float(g[tuple(first)]),
            "want": None if first is None else float(w[tuple(first)]),
            "exact": exact,
        }


def _mismatched(got, want, rtol, atol, *, exact_integers: bool = False, equal_nan: bool = False) -> np.ndarray:
    """The elements of ``got`` that do not match ``want`` by :func:`compare`'s rule (a bool array)."""
    with np.errstate(invalid="ignore", over="ignore"):
        if exact_integers and got.dtype.kind in "iub" and want.dtype.kind in "iub":
            return got.astype(np.int64) != want.astype(np.int64)
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        if equal_nan:
            return ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        return ~(np.abs(g - w) <= atol + rtol * np.abs(w)) | (np.isnan(g) & ~np.isnan(w))


# ---------------------------------------------------------------------------------------------
@dataclass
class BenchResult:
    """Kernel time over ``rep`` launches (CUDA events, L2 flushed before each), in milliseconds."""

    name: str
    times_ms: list
    bytes: int | None = None
    flops: int | None = None
    l2_flushed: bool = True
    device: str = ""

    @property
    def median_ms(self):
        return statistics.median(self.times_ms)

    @property
    def p10_ms(self):
        return float(np.percentile(self.times_ms, 10))

    @property
    def p90_ms(self):
        return float(np.percentile(self.times_ms, 90))

    @property
    def gbps(self):
        return None if not self.bytes else self.bytes / (self.median_ms * 1e-3) / 1e9

    @property
    def tflops(self):
        return None if not self.flops else self.flops / (self.median_ms * 1e-3) / 1e12

    @property
    def intensity(self):
        return None if not (self.bytes and self.flops) else self.flops / self.bytes

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "median_ms": self.median_ms,
            "p10_ms": self.p10_ms,
            "p90_ms": self.p90_ms,
            "min_ms": min(self.times_ms),
            "rep": len(self.times_ms),
            "gbps": self.gbps,
            "tflops": self.tflops,
            "bytes": self.bytes,
            "flops": self.flops,
            "l2_flushed": self.l2_flushed,
            "device": self.device,
        }

    def __repr__(self):
        extra = ""
        if self.gbps:
            extra += f", {self.gbps:,.0f} GB/s"
        if self.tflops:
            extra += f", {self.tflops:,.1f} TFLOP/s"
        return (
            f"<BenchResult {self.name}: median {self.median_ms * 1000:.1f} µs "
            f"(p10 {self.p10_ms * 1000:.1f}, p90 {self.p90_ms * 1000:.1f}, n={len(self.times_ms)}){extra}>"
        )

    def plot(self, ax=None):
        """Histogram of the per-launch times."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(5, 2.4))
        ax.hist([t * 1000 for t in self.times_ms], bins=30)
        ax.axvline(self.median_ms * 1000, color="k", lw=1, label="median")
        ax.set_xlabel("µs per launch")
        ax.set_title(self.name)
        ax.legend()
        return ax.figure

    def roofline(self, ceilings=None, ax=None):
        """This result on the roofline of the measured device (see txlab.roofline.measure)."""
        from txlab.roofline import plot_roofline

        return plot_roofline([self], ceilings=ceilings, ax=ax)


#: what bench says without a GPU
NO_TIMING = (
    "the CPU emulator runs kernels but cannot time them: its clocks count emulated work, "
    "not time. Without a GPU: txlab.occupancy_of(kernel) (resident blocks and "
    "occupancy from ptxas's registers and shared memory), txlab.autotune(build, space) with no "
    "inputs (a compile-only sweep: registers, spills, shared memory, occupancy per "
    "configuration), and txlab.check / txlab.emulate for correctness."
)


def bench(
    kernel,
    *args,
    warmup: int = 10,
    rep: int = 100,
    bytes: int | None = None,  # noqa: A002
    flops: int | None = None,
    flush_l2: bool = True,
    timeout_s: float | None = None,
) -> BenchResult:
    """Time ``compiled(*args)``: ``warmup`` untimed launches, then ``rep`` launches each timed with
    CUDA events on the launch stream, the L2 cache flushed (a write over twice its size) before
    each. Give ``bytes`` / ``flops`` moved per launch to get GB/s and TFLOP/s. In isolated mode the
    timing runs in the worker; ``timeout_s`` is the budget of each launch. ``kernel``: a
    :class:`txlab.Compiled`, a ``@T.prim_func`` or an IRModule (compiled first).

    Needs a GPU whatever ``txlab.config.device`` says: without one it raises
    :class:`txlab.NoGPUError` saying why the emulator cannot stand in (emulated clocks are not
    time) and what answers without a GPU (``txlab.occupancy``, a compile-only ``txlab.tune``)."""
    from txlab.device import probe, require_gpu
    from txlab.settings import config

    args = staged_numpy(args)[0]  # numpy arrays in any order or stride, as a call takes them (nothing is written back)
    if not probe().available:  # said before compiling a @T.prim_func for nothing
        doing = f"benchmarking {_kernel_name(kernel)}"
        if hasattr(kernel, "entry_params"):
            checked_then_gpu(kernel, args, doing, alternative=NO_TIMING)
        require_gpu(doing, alternative=NO_TIMING)
    compiled = as_compiled(kernel, what="txlab.bench")
    info = checked_then_gpu(compiled, args, f"benchmarking {compiled.name}")
    check_launch(compiled, info, args)
    if config.isolation == "process":
        from txlab import worker

        times = worker.bench(
            compiled, args, warmup=warmup, rep=rep, flush_l2=flush_l2, l2_bytes=info.l2_bytes, timeout_s=timeout_s
        )
    else:
        from txlab.progress import Progress

        exe = compiled.executable
        dev_args, _ = to_device(args)
        progress = Progress(f"bench {compiled.name}", total=rep, delay_s=1.0)
        try:
            times = timed_launches(
                exe,
                dev_args,
                warmup=warmup,
                rep=rep,
                flush_l2=flush_l2,
                l2_bytes=info.l2_bytes,
                progress=progress,
                on_error=lambda text: raise_inline_fault(compiled, args, text),
            )
        finally:
            progress.close()
    return BenchResult(
        name=compiled.name,
        times_ms=[float(t) for t in times],
        bytes=bytes,
        flops=flops,
        l2_flushed=flush_l2,
        device=probe().name,
    )


__all__ = [
    "launch",
    "check",
    "bench",
    "check_args",
    "check_launch",
    "bind_symbols",
    "CheckResult",
    "BenchResult",
    "compare",
    "expected_outputs",
    "buffer_uses",
]
