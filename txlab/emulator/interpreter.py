"""The interpreter: TIR of one device kernel compiled once into Python closures over numpy lane
vectors, then run per CTA.

Values are numpy: a per-lane scalar is an array of shape ``(L,)`` (one entry per thread of the
group), a uniform scalar is a 0-d numpy scalar, a per-lane vector type (``float32x4``) is
``(L, 4)`` and a uniform vector ``(1, 4)``. Statements run under the group's active mask
(divergence); statements that can block (barriers, mbarrier waits) are generators that yield
while blocked, so several groups (warps) of a CTA can progress independently.
"""

from __future__ import annotations

import numpy as np

import txlab.emulator.axes as axes
import txlab.emulator.diverged as diverged
import txlab.emulator.memory as M
import txlab.emulator.shuffle_sites as shuffle_sites
import txlab.emulator.warp_sync as warp_sync
from txlab.emulator.nan import canonical, canonicalising, cast_rule, first_nan64
from txlab.ir import semantics, spans
from txlab.errors import NotEmulatedError

#: said once per run of a kernel with shared memory: what an unwritten read gives here (local buffers start as zeros
#: too; every local scalar is one, so saying it for them would be said of every kernel)
ZEROED = (
    "shared memory starts as zeros here: a read of shared memory that nothing of the CTA wrote before it gives 0, and "
    "is reported as an uninitialized_shared_read finding when the run is checked (check=True, the default; on a "
    "GPU it reads whatever was there; compute-sanitizer's initcheck checks global memory only)"
)


def _truth(c):
    """A condition as lanes' truth: a per-lane array of another type (``elect_sync()``'s uint32) becomes bool, so it
    masks lanes rather than indexing them (a uint32 [1, 0, ...] used as a mask picked lanes 1 and 0)."""
    if isinstance(c, np.ndarray) and c.ndim and c.dtype != np.bool_:
        return c != 0
    return c


#: rounds of one ``while`` loop after which the emulator calls it a hang
WHILE_ROUNDS = 10_000_000


def _hang_check(g, rounds: int, line) -> None:
    """A ``while`` loop at ``line`` ran ``rounds`` rounds: past :data:`WHILE_ROUNDS`, or past the emulation's
    ``timeout_s``, it is a hang (``KernelFault('timeout')``), as the GPU run would be."""
    import time

    prog = g.cta.program
    deadline = prog.deadline
    late = deadline is not None and time.perf_counter() > deadline[0]
    if rounds <= WHILE_ROUNDS and not late:
        return
    from txlab.errors import KernelFault

    why = f"past timeout_s={deadline[1]:g} s" if late else f"{rounds:,} rounds"
    raise KernelFault(
        "timeout",
        f"{prog.kernel_name} on the CPU emulator: the while loop at line {line} ran {why} without ending; on a GPU this "
        "kernel would hang there",
        kernel=prog.kernel_name,
        hint="a loop waiting on a value nothing changes (a spin on shared or global memory no other thread writes, "
        "a condition that never turns false); check what the loop's condition reads",
    )


class Group:
    """Threads of one CTA that run in lockstep: the whole CTA, or one warp (warp mode)."""

    __slots__ = (
        "cta",
        "tid",
        "L",
        "env",
        "mask",
        "slots",
        "blocked",
        "warp_of_lane",
        "first_warp",
        "lane_cta",
        "gtid",
        "nw",
        "wsync",
        "shfl_sites",
        "parked",
        "park_serial",
        "left_poll",
        "diverge",
        "catching_up",
        "branch_switch",
        "switch_branch",
        "exited",
    )

    def __init__(self, cta, tid: np.ndarray, lane_cta: np.ndarray | None = None):
        self.cta = cta
        self.tid = tid  # thread index within its CTA
        self.L = int(tid.size)
        self.env: dict = {}
        self.mask = None  # None: every lane active; else bool (L,)
        self.slots: dict = {}  # results of blocking calls, by call node id
        self.blocked = None  # (what, line) while blocked
        # CTA batching: lanes of several independent CTAs in one vector; lane_cta is each lane's
        # CTA within the batch (None: one CTA), gtid a batch-wide thread id (warps never span CTAs)
        self.lane_cta = lane_cta
        self.gtid = tid if lane_cta is None else (lane_cta * cta.nthreads + tid).astype(np.int32)
        self.warp_of_lane = self.gtid // 32
        self.first_warp = int(tid[0]) // 32
        self.nw = (self.L + 31) // 32  # warps of the group: its statements' weight on the clocks
        self.wsync = None  # a __syncwarp its lanes wait at for lanes of another branch (txlab.emulator.warp_sync)
        self.shfl_sites = None  # shuffles waiting for lanes of another branch (txlab.emulator.shuffle_sites)
        # lanes parked in a polling loop while the lanes that left it run ahead (txlab.emulator.diverged): the
        # records, the lanes that left the loop the group now polls in, and the scheduler's ask to let them run
        self.parked: list = []
        self.park_serial = 0
        self.left_poll = None
        self.diverge = False
        self.catching_up = None  # the barrier or collective parked lanes catch up to (diverged.catch_up)
        self.branch_switch = None  # the divergent if whose spinning branch may yield to another (warp_sync.branches)
        self.switch_branch = False
        self.exited = None  # lanes that returned (an early ``return``): None, or bool (L,)

    def present(self) -> np.ndarray:
        """The lanes that have not exited (returned early)."""
        return np.ones(self.L, bool) if self.exited is None else ~self.exited

    def n_present(self) -> int:
        return self.L if self.exited is None else self.L - int(np.count_nonzero(self.exited))

    def skipped(self) -> np.ndarray:
        """The lanes that neither execute now nor have exited (a divergent branch holds them)."""
        if self.mask is None:
            return np.zeros(self.L, bool)
        return ~self.mask if self.exited is None else ~(self.mask | self.exited)

    def cta_of(self, lane: int) -> tuple:
        """The (x, y, z) index of the CTA that lane ``lane`` of this group belongs to."""
        return self.cta.index if self.lane_cta is None else self.cta.index_of(int(self.lane_cta[lane]))

    def active(self) -> np.ndarray:
        return np.ones(self.L, bool) if self.mask is None else self.mask

    def active_tids(self) -> np.ndarray:
        return self.tid if self.mask is None else self.tid[self.mask]


def _uniform(v) -> bool:
    return not isinstance(v, np.ndarray) or v.ndim == 0


def _lane_iterations(g, a, n):
    """A loop whose bounds ``[a, a + n)`` differ per lane, run as the union of the active lanes' iterations:
    ``(i, lanes whose own range holds i)`` for each ``i`` some lane runs, in order. The active lanes are read
    now, so the caller may mask ``g`` while it iterates."""
    a = np.broadcast_to(np.asarray(a), (g.L,))
    hi = a + np.broadcast_to(np.asarray(n), (g.L,))
    base = np.ones(g.L, bool) if g.mask is None else g.mask
    span = range(int(a[base].min()), int(hi[base].max())) if base.any() else range(0)
    return ((i, m) for i in span for m in (base & (a <= i) & (i < hi),) if m.any())


_ROWS: dict = {}  # np.arange(L) by L: the row of each lane in a local buffer's (L, n) array
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _rows(n: int) -> np.ndarray:
    r = _ROWS.get(n)
    if r is None:
        r = _ROWS[n] = np.arange(n)
        r.flags.writeable = False
    return r


def _in_range(i: np.ndarray, n: int) -> bool:
    """Whether every entry of the integer index array ``i`` lies in ``[0, n)``: one reduction (a negative index
    seen as unsigned is past any ``n``), the local-buffer access's fast path."""
    u = _UNSIGNED.get(i.dtype.itemsize) if i.dtype.kind in "iu" else None
    if u is None:
        return bool(((i >= 0) & (i < n)).all())
    return i.size == 0 or i.view(u).max() < n


def _local_bounds(g, prog, i, n, dt, line, info, write):
    """A local buffer's index ``i`` (uniform, per lane, or per lane and element) that some lane, active or not,
    has outside ``[0, n)``: reports the active lanes outside it (``Program.local_out_of_bounds``; an inactive
    lane's index is never checked, as its access never happens) and returns ``(index, out)``, the index per lane
    (and element) with those entries 0 and where they were."""
    i = np.asarray(i).astype(np.int64)
    i = np.full(g.L, int(i), np.int64) if i.ndim == 0 else np.broadcast_to(i, (g.L,) + i.shape[1:])
    out = (i < 0) | (i >= n)
    bad = out if g.mask is None else out & (g.mask if out.ndim == 1 else g.mask[:, None])
    if bad.any():
        prog.local_out_of_bounds(g, i, bad, n, dt, line, info, write)
    return np.where(out, 0, i), out


def _same_on_active(v, mask):
    """A per-lane value that every active lane holds alike (a loop bound read from a per-thread
    scalar that the warp keeps uniform, e.g. a tile scheduler's index) as that one value; else ``v``."""
    if _uniform(v):
        return v
    act = v if mask is None else v[mask]
    return act[0] if act.size and (act == act[0]).all() else v


#: TIR nodes that are float arithmetic (FADD/FMUL/FMNMX..., HADD2...) on float operands
_FLOAT_ARITH = frozenset({"Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Min", "Max"})


def _half_max(a, b):
    """TVM's ``max(half a, half b)`` (and bfloat16's): ``__hgt(a, b) ? a : b`` (HSETP2.GT + SEL, not HMNMX2): a NaN
    on either side gives ``b`` as its bits are, and ``max(-0, +0)`` is ``+0`` but ``max(+0, -0)`` is ``-0``."""
    return semantics.select(np.greater(a, b), a, b)


def _half_min(a, b):
    """TVM's ``min(half a, half b)``: ``__hlt(a, b) ? a : b`` (see :func:`_half_max`)."""
    return semantics.select(np.less(a, b), a, b)


#: Min/Max of float16/bfloat16 (scalars and vector lanes), as TVM's CUDA helpers define them
_HALF_MINMAX = {"Max": _half_max, "Min": _half_min}


def _payload_free(dtype: str) -> bool:
    """True for the float formats whose units return the canonical NaN (float32, float16, bfloat16; vectors too)."""
    return str(dtype).split("x")[0] in ("float32", "float16", "bfloat16")


def _dtype_of(expr) -> str:
    ty = getattr(expr, "ty", None)
    if ty is None:
        return "int32"
    d = getattr(ty, "dtype", None)
    if d is not None:
        return str(d)
    return "handle"


class Compiler:
    """Compiles TIR into closures. One per kernel; ``program`` supplies shared-memory layout and
    call handlers (txlab.emulator.ops)."""

    def __init__(self, program):
        self.program = program
        self.line = None  # the user line inherited by statements without their own span
        self.blocking = program.blocking_ops
        self.calls = program.call_handlers
        self.static_smem = 0  # bytes of static shared memory allocated so far
        self.dyn_buffers = []
        self.lines_own = 0
        self.lines_total = 0
        self.fast_math = getattr(program, "fast_math", True)  # the build emulated (txlab's default)
        self._contraction = None
        self.polling = False  # compiling a polling loop's test: its atomics acquire (races.RaceChecker.fence)
        self._stmts: list = []  # the statements being compiled, outermost first (nearest_line)
        self._near: dict = {}

    @property
    def contraction(self):
        """Where nvcc fuses a multiply and an add of this kernel (computed on first use)."""
        if self._contraction is None:
            from txlab.emulator.contract import Contraction

            self._contraction = Contraction(getattr(self.program, "func", None), self.fast_math)
        return self._contraction

    # ---- lines -------------------------------------------------------------------------------
    def _span_line(self, node):
        """The user's line of a statement's span (:func:`txlab.ir.spans.user_frame`)."""
        frame = spans.user_frame(getattr(node, "span", None), self.program.filename)
        if frame is None:
            return None
        if self.program.filename is None:
            self.program.filename = frame[0]
        return frame[1] if frame[1] > 0 else None

    def not_emulated(self, name: str, detail: str = ""):
        line = self.line if self.line is not None else self.nearest_line()

        def fail(g, *_):
            raise NotEmulatedError(name, lineno=line, detail=detail)

        return fail

    def nearest_line(self):
        """The user's line nearest the statement being compiled, where it has none of its own and inherits none
        (code TVM made at the kernel's top, a let its lowering re-made): the first user line inside it, else inside
        the statements around it (a refusal always names a line)."""
        for s in reversed(self._stmts):
            k = _key(s)
            if k not in self._near:
                self._near[k] = spans.first_user_line(s, self.program.filename)
            if self._near[k] is not None:
                return self._near[k]
        return None

    # ---- expressions -------------------------------------------------------------------------
    def expr(self, e):
        t = type(e).__name__
        fn = getattr(self, "e_" + t, None)
        if fn is None:
            return self.not_emulated(f"expression {t}")
        return fn(e)

    def e_IntImm(self, e):
        dt = M.np_dtype(_dtype_of(e))
        v = dt.type(int(e.value)) if dt != np.bool_ else np.bool_(bool(e.value))
        return lambda g: v

    def e_FloatImm(self, e):
        v = M.np_dtype(_dtype_of(e)).type(float(e.value))
        return lambda g: v

    def e_StringImm(self, e):
        v = str(e.value)
        return lambda g: v

    def e_Var(self, e):
        def get(g):
            try:
                return g.env[e]
            except KeyError:
                raise NotEmulatedError(f"unbound variable {e.name}", lineno=line) from None

        line = self.line
        return get

    def e_Cast(self, e):
        src = self.expr(e.value)
        dt = M.np_dtype(_dtype_of(e))
        fast = self.fast_math
        cast = semantics.cast
        pre, post = cast_rule(_dtype_of(e.value), dt, fast)  # the GPU's NaNs (txlab.emulator.nan)
        if pre is not None:
            return lambda g: cast(pre(src(g)), dt, fast_math=fast)
        if post is not None:

            def converted(g):
                v = src(g)
                return post(cast(v, dt, fast_math=fast), v)

            return converted
        return lambda g: cast(src(g), dt, fast_math=fast)

    def _bin(self, e, op):
        a = self.expr(e.a)
        b = self.expr(e.b)
        return lambda g: op(a(g), b(g))

    def _arith(self, name: str, dtype: str):
        """``semantics.binary(name, dtype)`` (the one table, txlab.ir.semantics) with the GPU's NaNs
        (txlab.emulator.nan): float32/float16/bfloat16 arithmetic gives the canonical NaN, float16/bfloat16 min/max
        are TVM's compare and select, float64 min/max of two NaNs give the first."""
        if name in _HALF_MINMAX and str(dtype).split("x")[0] in ("float16", "bfloat16"):
            return _HALF_MINMAX[name]
        fn = semantics.binary(name, dtype, self.fast_math)
        if fn is not None and name in _FLOAT_ARITH and _payload_free(dtype):
            return canonicalising(fn)
        if name in _HALF_MINMAX and str(dtype).split("x")[0] == "float64":
            return first_nan64(fn)  # fmax/fmin (DMNMX): of two NaNs the first, quieted
        return fn

    def _binop(self, e):
        """A TIR binary node through the one table (txlab.ir.semantics) for its operands' dtype."""
        return self._bin(e, self._arith(type(e).__name__, _dtype_of(e.a)))

    def e_Add(self, e):
        return self._fused(e) or self._binop(e)

    def e_Sub(self, e):
        return self._fused(e) or self._binop(e)

    e_Mul = e_Div = e_Mod = e_FloorDiv = e_FloorMod = e_Min = e_Max = _binop
    e_EQ = e_NE = e_LT = e_LE = e_GT = e_GE = e_And = e_Or = _binop
    e_BitwiseAnd = e_BitwiseOr = e_BitwiseXor = e_LShift = e_RShift = _binop

    def _fused(self, e):
        """``a * b + c`` as the build's ``fma.rn`` where nvcc contracts it, or ptxas fuses scalar
        half/bfloat16 ``mul`` and ``add`` into HFMA2 (txlab.emulator.contract); None where not."""
        if not (
            _dtype_of(e).startswith(("float32", "float64")) or _dtype_of(e).split("x")[0] in ("float16", "bfloat16")
        ):
            return None
        plan = self.contraction.plan(e)
        if plan is None:
            return None
        mul_a, mul_b, other, negate = plan
        fa = self._product_operand(mul_a)
        fb = self._product_operand(mul_b)
        fc = self.expr(other)
        flush = self.fast_math and _dtype_of(e).startswith("float32")
        fma = semantics.fma
        if negate == "addend":
            return lambda g: canonical(fma(fa(g), fb(g), np.negative(fc(g)), flush=flush))
        if negate == "product":
            return lambda g: canonical(fma(np.negative(fa(g)), fb(g), fc(g), flush=flush))
        return lambda g: canonical(fma(fa(g), fb(g), fc(g), flush=flush))

    def _product_operand(self, x):
        from txlab.emulator.contract import Reciprocal

        if isinstance(x, tuple):  # a product bound to a variable: its operands, kept by s_Bind
            key, k = x
            return lambda g: g.env[key][k]
        if isinstance(x, Reciprocal):  # a fast-math a / b: MUFU.RCP, then the multiply fuses
            f = self.expr(x.node)
            return lambda g: semantics.rcp_approx_ftz(f(g))
        return self.expr(x)

    def _captured_operands(self, value):
        """(a, b, mul) closures of a product whose operands a later add fuses: ``a * b``, or a
        fast-math ``a / b`` as ``a * rcp(b)``."""
        from txlab.emulator.contract import Reciprocal

        fb = Reciprocal(value.b) if type(value).__name__ == "Div" else value.b
        return self.expr(value.a), self._product_operand(fb), self._arith("Mul", _dtype_of(value))

    def e_Not(self, e):
        a = self.expr(e.a)
        return lambda g: np.logical_not(a(g))

    def e_BitwiseNot(self, e):
        a = self.expr(e.a)
        return lambda g: np.invert(a(g))

    def e_Select(self, e):
        c = self.expr(e.condition)
        t = self.expr(e.true_value)
        f = self.expr(e.false_value)
        guarded = _has_load(e.true_value) or _has_load(e.false_value)
        sel = semantics.select

        def select(g):
            cv = c(g)
            if _uniform(cv):
                return t(g) if cv else f(g)
            if not guarded:
                return sel(cv, t(g), f(g))
            return _masked_pair(g, cv, t, f)

        return select

    def e_Ramp(self, e):
        base = self.expr(e.base)
        stride = self.expr(e.stride)
        n = int(e.lanes.value) if hasattr(e.lanes, "value") else int(e.lanes)
        steps = np.arange(n)

        def ramp(g):
            b = base(g)
            s = stride(g)
            if _uniform(b) and _uniform(s):
                return (b + steps.astype(np.asarray(b).dtype) * s)[None, :]
            return np.asarray(b)[..., None] + steps.astype(np.asarray(b).dtype) * np.asarray(s)[..., None]

        return ramp

    def e_Broadcast(self, e):
        v = self.expr(e.value)
        n = int(e.lanes.value) if hasattr(e.lanes, "value") else int(e.lanes)

        def bcast(g):
            x = v(g)
            if _uniform(x):
                return np.full((1, n), x)
            return np.repeat(np.asarray(x)[:, None], n, axis=1)

        return bcast

    def e_Shuffle(self, e):
        """Lanes ``indices`` of the vectors concatenated (a scalar for one index)."""
        vecs = [self.expr(v) for v in e.vectors]
        idx = [int(i.value) for i in e.indices]

        def shuffle(g):
            parts = [np.asarray(v(g)) for v in vecs]
            parts = [p[..., None] if p.ndim < 2 else p for p in parts]
            rows = max(p.shape[0] for p in parts)
            cat = np.concatenate([np.broadcast_to(p, (rows, p.shape[1])) for p in parts], axis=1)
            out = cat[:, idx]
            if len(idx) == 1:
                out = out[:, 0]
                return out[0] if rows == 1 else out
            return out

        return shuffle

    def e_Let(self, e):
        val = self.expr(e.value)
        body = self.expr(e.body)
        var = e.var

        def let(g):
            g.env[var] = val(g)
            return body(g)

        return let

    def e_TensorLoad(self, e):
        return self.load(e.source, list(e.indices), _dtype_of(e), node=e)

    def e_Call(self, e):
        name = getattr(e.op, "name", None) or str(e.op)
        if _key(e) in self.program.blocking_nodes:
            key = _key(e)
            return lambda g: g.slots[key]
        handler = self.calls.get(name)
        if handler is None:
            return self.not_emulated(name)
        return handler(self, e)

    # ---- memory ------------------------------------------------------------------------------
    def buffer_info(self, bufvar):
        info = self.program.buffers.get(bufvar)
        if info is None:
            bt = bufvar.ty
            info = self.program.buffers[bufvar] = {
                "name": bufvar.name,
                "dtype": str(bt.dtype),
                "scope": str(bt.storage_scope or "global"),
                "shape": [int(s.value) if hasattr(s, "value") else None for s in bt.shape],
                "elem_offset": int(bt.elem_offset.value) if hasattr(bt.elem_offset, "value") else 0,
            }
        return info

    def _flat_index(self, bufvar, indices):
        info = self.buffer_info(bufvar)
        if len(indices) == 1:
            return self.expr(indices[0])
        shape = info["shape"]
        if None in shape[1:]:
            return self.not_emulated(f"multi-dimensional access to {info['name']} with symbolic shape")
        parts = [self.expr(i) for i in indices]
        strides = [int(np.prod(shape[k + 1 :])) for k in range(len(shape))]

        def flat(g):
            out = 0
            for p, s in zip(parts, strides):
                out = out + np.asarray(p(g)).astype(np.int64) * s
            return out

        return flat

    def _axis_checked(self, idx, node, info, write):
        """``idx`` (a flat index's closure), also checking the per-axis indices the user wrote for the access ``node``
        where there are some to check (txlab.emulator.axes)."""
        check = axes.checker(self, node, info, write)
        if check is None:
            return idx

        def checked(g):
            i = idx(g)
            check(g, i)
            return i

        return checked

    def load(self, bufvar, indices, dtype, node=None):
        """A plain load; ``node``: the load as the kernel has it (a user's access is checked per axis too)."""
        info = self.buffer_info(bufvar)
        idx = self._axis_checked(self._flat_index(bufvar, indices), node, info, False)
        dt = M.np_dtype(info["dtype"] if M.lanes_of(dtype) > 1 or dtype == "handle" else dtype)
        line = self.line
        prog = self.program
        ldt = M.np_dtype(info["dtype"])
        if info["scope"].startswith("local"):

            def load_local(g):
                arr = g.env[bufvar]
                if arr.dtype != ldt:  # a view of registers as another type (decl_buffer(data=...))
                    arr = arr.view(ldt)
                i = idx(g)
                pending = g.slots.get("tcgen05_ld_pending")
                if pending is not None:  # registers a tcgen05.ld fills, not waited for yet (txlab.emulator.tmem)
                    pending(g, arr, i, line)
                if _uniform(i):
                    k = int(i)
                    if 0 <= k < arr.shape[1]:
                        return arr[:, k]
                else:
                    i = np.asarray(i)
                    if _in_range(i, arr.shape[1]):
                        if i.ndim == 2:
                            if i.shape[0] == 1:
                                return arr[:, i[0]]
                            return np.take_along_axis(arr, i, axis=1)
                        return arr[_rows(g.L), i]
                # an index outside the buffer, of an active lane (reported; it reads 0) or of an inactive one
                i, out = _local_bounds(g, prog, i, arr.shape[1], ldt, line, info, False)
                v = np.take_along_axis(arr, i, axis=1) if i.ndim == 2 else arr[_rows(g.L), i]
                return np.where(out, np.zeros((), ldt), v)

            return load_local
        off = info["elem_offset"]

        def load_mem(g):
            return prog.mem_read(g, g.env[bufvar], idx(g), off, dt, line, info, plain=True)

        return load_mem

    def store(self, bufvar, indices, value_fn, node=None):
        """A plain store; ``node``: the store as the kernel has it (a user's access is checked per axis too)."""
        info = self.buffer_info(bufvar)
        idx = self._axis_checked(self._flat_index(bufvar, indices), node, info, True)
        dt = M.np_dtype(info["dtype"])
        line = self.line
        prog = self.program
        if info["scope"].startswith("local"):

            def store_local(g):
                arr = g.env[bufvar]
                if arr.dtype != dt:
                    arr = arr.view(dt)
                i = idx(g)
                v = value_fn(g)
                m = g.mask
                n = arr.shape[1]
                if _uniform(i):
                    i = int(i)
                    if not 0 <= i < n:  # every active lane stores outside the buffer: reported, nothing written
                        _local_bounds(g, prog, i, n, dt, line, info, True)
                        return
                    if m is None:
                        arr[:, i] = v
                    else:
                        arr[m, i] = v[m] if not _uniform(v) else v
                    return
                i = np.asarray(i)
                if not _in_range(i, n):  # the lanes outside the buffer store nothing (active ones reported)
                    i, out = _local_bounds(g, prog, i, n, dt, line, info, True)
                    keep = ~out if m is None else ~out & (m if out.ndim == 1 else m[:, None])
                    rows = np.broadcast_to(_rows(g.L).reshape((-1,) + (1,) * (i.ndim - 1)), i.shape)
                    arr[rows[keep], i[keep]] = np.broadcast_to(v, i.shape)[keep]
                    return
                if i.ndim == 2:
                    i = np.broadcast_to(i, (g.L, i.shape[1]))
                    v = np.broadcast_to(v, i.shape)
                    rows = np.broadcast_to(_rows(g.L)[:, None], i.shape)
                    if m is not None:
                        rows, i, v = rows[m], i[m], v[m]
                    arr[rows, i] = v
                    return
                rows = _rows(g.L)
                v = np.broadcast_to(v, (g.L,))
                if m is not None:
                    rows, i, v = rows[m], i[m], v[m]
                arr[rows, i] = v

            return store_local
        off = info["elem_offset"]

        def store_mem(g):
            prog.mem_write(g, g.env[bufvar], idx(g), off, dt, value_fn(g), line, info, plain=True)

        return store_mem

    # ---- statements --------------------------------------------------------------------------
    def kernel_body(self, s):
        """The kernel's body ``s`` as a generator function of a group: when the group's run ends, it reports the
        shuffles that waited for lanes no shuffle brought (txlab.emulator.shuffle_sites)."""
        from txlab import ir

        self.returns = any(type(n).__name__ == "Return" for n in ir.walk(s))
        fn, is_gen = self.stmt(s)

        def body(g):
            if is_gen:
                yield from fn(g)
                yield from diverged.resume(g, 0)
            else:
                fn(g)
            shuffle_sites.reconverged(g, final=True)

        return body

    def stmt(self, s):
        """(fn, is_generator) for statement ``s``."""
        saved = self.line
        own = self._span_line(s)
        t = type(s).__name__
        if own is None and t == "Bind":  # a let TVM re-made keeps the user's variable, and its line
            own = self._span_line(s.var)
        self.lines_total += 1
        if own is not None:
            self.line = own
            self.lines_own += 1
        self._stmts.append(s)
        try:
            fn = getattr(self, "s_" + t, None)
            if fn is None:
                return self.not_emulated(f"statement {t}"), False
            return fn(s)
        finally:
            self._stmts.pop()
            self.line = saved

    def stmt_line(self):
        """The line a statement's refusal names: its own or inherited one, else :meth:`nearest_line`."""
        return self.line if self.line is not None else self.nearest_line()

    def s_SeqStmt(self, s):
        parts = []
        for c in s.seq:
            parts.append(self.stmt(c))
        # inside a loop with break/continue: the lanes that left drop out after each statement; in a kernel with an
        # early return, the lanes that returned too
        flow = getattr(self, "_flow", False)
        if getattr(self, "returns", False):
            return _sequence(parts, _drop_left_exited if flow else _drop_exited)
        return _sequence(parts, _drop_left if flow else None)

    def s_Bind(self, s):
        var = s.var
        key = None
        if self.contraction.is_product(s.value):
            key = self.contraction.captured(s)
        if key is not None:  # a product a later add fuses with: keep its operands too
            fa, fb, mul = self._captured_operands(s.value)

            def bind_product(g):
                try:
                    av, bv = fa(g), fb(g)
                except NotEmulatedError as exc:
                    raise at_line(exc, line) from None
                g.env[key] = (av, bv)
                g.env[var] = mul(av, bv)
                _count(g)

            line = self.stmt_line()
            return self._with_blocking(s, bind_product)
        val = self.expr(s.value)
        line = self.stmt_line()

        def bind(g):
            try:
                g.env[var] = val(g)
            except NotEmulatedError as exc:
                raise at_line(exc, line) from None
            _count(g)

        return self._with_blocking(s, bind)

    def s_Evaluate(self, s):
        val = self.expr(s.value)
        line = self.stmt_line()

        def ev(g):
            try:
                val(g)
            except NotEmulatedError as exc:
                raise at_line(exc, line) from None
            _count(g)

        return self._with_blocking(s, ev)

    def s_BufferStore(self, s):
        key = None
        if self.contraction.is_product(s.value):
            key = self.contraction.captured_store(s)
        if key is not None:  # t = a * b, fused by the later reads of t: keep a and b too
            fa, fb, mul = self._captured_operands(s.value)

            def val(g):
                av, bv = fa(g), fb(g)
                g.env[key] = (av, bv)
                return mul(av, bv)
        else:
            val = self.expr(s.value)
        store = self.store(s.buffer, list(s.indices), val, node=s)
        line = self.stmt_line()

        def fn(g):
            try:
                store(g)
            except NotEmulatedError as exc:
                raise at_line(exc, line) from None
            _count(g)

        return self._with_blocking(s, fn)

    def _with_blocking(self, s, fn):
        """A statement whose expressions contain blocking calls (barrier, mbarrier wait): run each
        call's generator first (it may yield), keep its result, then evaluate the statement."""
        nodes = self.program.blocking_in.get(_key(s))
        if not nodes:
            return fn, False
        gens = []
        for call in nodes:
            name = call.op.name
            gens.append((_key(call), self.program.blocking_handlers[name](self, call)))

        line = self.stmt_line()

        def run(g):
            try:
                for key, gen in gens:
                    g.slots[key] = yield from gen(g)
            except NotEmulatedError as exc:
                raise at_line(exc, line) from None
            fn(g)

        return run, True

    def s_AttrStmt(self, s):
        body, is_gen = self.stmt(s.body)
        if s.attr_key == "thread_extent":
            iv = s.node
            tag = str(iv.thread_tag)
            var = iv.var
            self.program.extents[tag] = s.value

            def bind_thread(g):
                g.env[var] = g.cta.index_value(tag, g)

            if is_gen:

                def attr_gen(g):
                    bind_thread(g)
                    yield from body(g)

                return attr_gen, True

            def attr(g):
                bind_thread(g)
                body(g)

            return attr, False
        return body, is_gen

    def s_AllocBuffer(self, s):
        buf = s.buffer
        info = self.buffer_info(buf)
        scope = info["scope"]
        dt = M.np_dtype(info["dtype"])
        shape = info["shape"]
        if scope.startswith("shared") and ZEROED not in self.program.notes:
            self.program.notes.append(ZEROED)
        if scope.startswith("local"):
            if None in shape:
                return self.not_emulated(f"local buffer {info['name']} of symbolic size"), False
            n = int(np.prod(shape)) if shape else 1

            def alloc_local(g):
                g.env[buf] = np.zeros((g.L, n), dtype=dt)

            return alloc_local, False
        if scope == "shared":
            nbytes = int(np.prod(shape)) * dt.itemsize
            off = (self.static_smem + 15) // 16 * 16
            self.static_smem = off + nbytes
            self.program.shared_static.append((info["name"], off, nbytes))
            info["static_extent"] = (off, nbytes)  # an access through this buffer stays within it
            addr = np.uint64(M.SHARED_BASE + off)

            def alloc_shared(g):
                g.env[buf] = addr

            return alloc_shared, False
        if scope == "shared.dyn":
            prog = self.program

            def alloc_dyn(g):
                g.env[buf] = np.uint64(M.SHARED_BASE + g.cta.dyn_offset)

            prog.uses_dyn = True
            return alloc_dyn, False
        return self.not_emulated(f"allocation in scope {scope!r}"), False

    def s_DeclBuffer(self, s):
        buf = s.buffer
        self.buffer_info(buf)
        data = self.expr(s.data)

        def decl(g):
            g.env[buf] = data(g)

        return decl, False

    def s_IfThenElse(self, s):
        cond = self.expr(s.condition)
        then, tg = self.stmt(s.then_case)
        other, og = self.stmt(s.else_case) if s.else_case is not None else (None, False)
        if tg or og:
            then_g = then if tg else _as_gen(then)
            other_g = None if other is None else (other if og else _as_gen(other))

            def if_gen(g):
                c = _truth(cond(g))
                if _uniform(c):
                    if c:
                        yield from then_g(g)
                    elif other_g is not None:
                        yield from other_g(g)
                    return
                outer = g.mask
                base = outer if outer is not None else True
                parts = []
                mt = np.logical_and(base, c)
                if mt.any():
                    parts.append((then_g, None if mt.all() else mt))
                if other_g is not None:
                    me = np.logical_and(base, np.logical_not(c))
                    if me.any():
                        parts.append((other_g, None if me.all() else me))
                if len(parts) == 1:
                    g.mask = parts[0][1]
                    yield from parts[0][0](g)
                else:  # one after the other, meeting at a __syncwarp the lanes of both reach
                    yield from warp_sync.branches(g, parts)
                g.mask = outer
                shuffle_sites.reconverged(g)

            return if_gen, True

        def if_(g):
            c = _truth(cond(g))
            if _uniform(c):
                if c:
                    then(g)
                elif other is not None:
                    other(g)
                return
            outer = g.mask
            mt = c if outer is None else np.logical_and(outer, c)
            if mt.any():
                g.mask = None if mt.all() else mt
                then(g)
            if other is not None:
                me = np.logical_not(c) if outer is None else np.logical_and(outer, np.logical_not(c))
                if me.any():
                    g.mask = None if me.all() else me
                    other(g)
            g.mask = outer
            shuffle_sites.reconverged(g)

        return if_, False

    def _loop_body(self, s):
        """(body, is_gen, has_flow): compile a loop body; with break/continue in it, its statement
        sequences drop the lanes that left the iteration or the loop (``_sequence``)."""
        flow = _has_flow(s.body)
        saved = getattr(self, "_flow", False)
        self._flow = flow
        try:
            body, is_gen = self.stmt(s.body)
        finally:
            self._flow = saved
        return body, is_gen, flow

    def s_For(self, s):
        lo = self.expr(s.min)
        ext = self.expr(s.extent)
        body, is_gen, flow = self._loop_body(s)
        var = s.loop_var
        dt = M.np_dtype(_dtype_of(var))
        if s.step is not None:
            return self.not_emulated("for loop with a step"), False
        prog = self.program
        if flow:
            return _flow_for(lo, ext, body, is_gen, var, dt, self.line)

        if is_gen:

            def for_gen(g):
                a, n = _same_on_active(lo(g), g.mask), _same_on_active(ext(g), g.mask)
                s0 = g.park_serial
                if _uniform(a) and _uniform(n):
                    for i in range(int(a), int(a) + int(n)):
                        g.env[var] = dt.type(i)
                        yield from body(g)
                        yield from diverged.resume(g, s0)  # parked lanes meet the others at the iteration's end
                    return
                # per-lane bounds around a barrier: a barrier reached by some of the lanes is a divergent barrier
                outer = g.mask
                for i, m in _lane_iterations(g, a, n):
                    g.mask = None if m.all() else m
                    g.env[var] = np.full(g.L, i, dtype=dt)
                    yield from body(g)
                    yield from diverged.resume(g, s0)
                g.mask = outer

            return for_gen, True

        def for_(g):
            a, n = lo(g), ext(g)
            if _uniform(a) and _uniform(n):
                a = int(a)
                for i in range(a, a + int(n)):
                    g.env[var] = dt.type(i)
                    body(g)
                prog.count_loop(g, int(n))
                return
            # per-lane bounds: run the union, masking lanes outside their own range
            outer = g.mask
            for i, m in _lane_iterations(g, a, n):
                g.mask = m
                g.env[var] = np.full(g.L, i, dtype=dt)
                body(g)
            g.mask = outer

        return for_, False

    def s_While(self, s):
        tests = polls_in(s.condition)
        breaks = not tests and is_poll(s)  # ``while True: if atomic_cas(...) == 0: break``
        outer = self.polling
        try:
            self.polling = tests
            cond = self.expr(s.condition)
            self.polling = breaks or (outer and not tests)
            body, is_gen, flow = self._loop_body(s)
        finally:
            self.polling = outer
        line = self.line
        # a poll of memory through an atomic, in a launch whose CTAs run resident together
        # (txlab.emulator.resident): each round that goes on yields to the other warps and CTAs
        poll = self.program.grid_waits and (tests or breaks)
        body_gen, is_gen = is_gen, is_gen or poll

        def while_(g):
            outer = g.mask
            live = np.ones(g.L, bool) if outer is None else outer.copy()
            entered = live.copy()
            guard = 0
            rec = _push_loop(g) if flow else None
            s0 = g.park_serial
            while True:
                if rec is not None:
                    live = live & ~rec[0]
                    rec[1][:] = False
                    if not live.any():
                        break
                g.mask = None if live.all() else live
                c = _truth(cond(g))
                live = live & c if not _uniform(c) else (live if c else live & False)
                if not live.any():
                    break
                g.mask = None if live.all() else live
                if body_gen:
                    yield from body(g)
                    yield from diverged.resume(g, s0)
                else:
                    body(g)
                guard += 1
                if poll:
                    g.blocked = ("poll", line)
                    g.left_poll = entered & ~live
                    yield
                    g.blocked = g.left_poll = None
                    if g.diverge:  # nothing progresses: the lanes that left run ahead (txlab.emulator.diverged)
                        g.diverge = False
                        if rec is not None:
                            g.slots["loops"].pop()
                        diverged.park(g, live, entered & ~live, (while_, True))
                        g.cta.progress += 1
                        return
                if not guard & 4095:  # a poll whose atomics keep changing memory is progress, and may never end
                    _hang_check(g, guard, line)
            if rec is not None:
                g.slots["loops"].pop()
            g.mask = outer
            if poll and guard:
                g.cta.progress += 1  # the poll was answered

        return _stepper(while_, is_gen)

    def s_AssertStmt(self, s):
        return (lambda g: None), False

    def s_Break(self, s):
        return _leave(0), False

    def s_Return(self, s):
        """An early ``return`` (of a kernel: TVM emits ``return;``): the active lanes exit. They are inactive for the
        rest of the kernel (every statement sequence drops them, every loop they are in stops for them), a CTA or
        cluster barrier after counts only the threads that have not exited (as ``__syncthreads`` does on a GPU), and
        a warp collective or ``__syncwarp`` whose member mask names them does not wait for them."""
        return _exit_lanes, False

    def s_Continue(self, s):
        return _leave(1), False


def at_line(exc: NotEmulatedError, line) -> NotEmulatedError:
    """``exc``, raised by an op that did not know its line, naming the statement's ``line``."""
    if exc.lineno is None and line is not None:
        head = f"not emulated: {exc.name}"
        text = str(exc)
        exc.lineno = line
        exc.args = (f"{head} at line {line}{text[len(head) :]}" if text.startswith(head) else f"{text} (line {line})",)
    return exc


#: the ops that read-modify-write memory atomically (a ``while`` condition calling one polls memory)
ATOMIC_PREFIXES = ("tirx.cuda.atomic_", "tirx.ptx.red", "tirx.ptx.atom")


def polls_in(cond) -> bool:
    """Whether a loop condition reads memory through an atomic (a wait on another thread or CTA)."""
    from txlab import ir

    return any(
        type(n).__name__ == "Call" and getattr(n.op, "name", "").startswith(ATOMIC_PREFIXES) for n in ir.walk(cond)
    )


def is_poll(loop) -> bool:
    """Whether a ``while`` loop waits on memory through an atomic: in its condition, or in a body it breaks out of
    (``while True: if atomic_cas(lock, 0, 1) == 0: break``)."""
    return polls_in(loop.condition) or (_has_flow(loop.body) and polls_in(loop.body))


# ---- break / continue ---------------------------------------------------------------------------
# A loop whose body contains break/continue keeps a record per group, ``g.slots["loops"][-1] =
# (broken, continued)``: bool lane masks. ``break``/``continue`` add the active lanes; every
# statement sequence of the body drops those lanes after each statement (an ``if`` restores its
# outer mask, the enclosing sequence drops them again) and stops when none is left; the loop runs
# its next iteration with the lanes that did not break. Divergent break/continue (some lanes of a
# warp) is exact this way: those lanes skip the rest, as on the GPU.
def _has_flow(body) -> bool:
    from txlab import ir

    return any(
        type(n).__name__ in ("Break", "Continue", "Return")
        or (type(n).__name__ == "Call" and getattr(n.op, "name", "") in ("tirx.break_loop", "tirx.continue_loop"))
        for n in ir.walk(body)
    )


def _push_loop(g):
    rec = (np.zeros(g.L, bool), np.zeros(g.L, bool))
    g.slots.setdefault("loops", []).append(rec)
    return rec


def _leave(which):
    def leave(g):
        g.slots["loops"][-1][which][g.active()] = True
        return np.int32(0)

    return leave


def _exit_lanes(g):
    """The active lanes return: they leave every loop they are in and the kernel (:meth:`Cta.lanes_exited`)."""
    act = g.active()
    new = act if g.exited is None else act & ~g.exited
    if not new.any():
        return
    g.exited = new.copy() if g.exited is None else g.exited | new
    for rec in g.slots.get("loops", ()):
        rec[0][new] = True
    g.cta.lanes_exited(g, int(np.count_nonzero(new)))


def _drop_exited(g) -> bool:
    """Drop the lanes that returned; False when none is left."""
    if g.exited is None:
        return True
    m = g.active() & ~g.exited
    if not m.any():
        return False
    g.mask = None if m.all() else m
    return True


def _drop_left_exited(g) -> bool:
    return _drop_left(g) and _drop_exited(g)


def _drop_left(g) -> bool:
    """Drop the lanes that left the iteration; False when none is left."""
    broken, cont = g.slots["loops"][-1]
    left = broken | cont
    if not left.any():
        return True
    m = g.active() & ~left
    if not m.any():
        return False
    g.mask = m
    return True


def _sequence(parts, go_on=None):
    """(closure, is_gen) running the statements ``parts`` ((closure, is_gen) each) in order; with
    ``go_on``, stopping after a statement when ``go_on(g)`` is False."""
    if not any(is_gen for _, is_gen in parts):
        fns = [f for f, _ in parts]
        if go_on is None:

            def seq(g):
                for f in fns:
                    f(g)

        else:

            def seq(g):
                for f in fns:
                    f(g)
                    if not go_on(g):
                        return

        return seq, False

    rests: dict = {}

    def rest_after(i):  # the statements after the i-th, for lanes parked in it (txlab.emulator.diverged)
        if i not in rests:
            rests[i] = _sequence(parts[i + 1 :], go_on)
        return rests[i]

    def seq_gen(g):
        for i, (f, is_gen) in enumerate(parts):
            s0 = g.park_serial
            if is_gen:
                yield from f(g)
            else:
                f(g)
            if g.park_serial != s0 and not diverged.ran_ahead(g, s0, rest_after(i)):
                return
            if go_on is not None and not go_on(g):
                return

    return seq_gen, True


def _flow_for(lo, ext, body, is_gen, var, dt, line):
    def run(g):
        a, n = lo(g), ext(g)
        if not (_uniform(a) and _uniform(n)):
            raise NotEmulatedError("for loop with per-thread bounds and break/continue/return", lineno=line)
        outer = g.mask
        base = g.active().copy()
        rec = _push_loop(g)
        try:
            for i in range(int(a), int(a) + int(n)):
                live = base & ~rec[0]
                if not live.any():
                    break
                rec[1][:] = False
                g.mask = None if live.all() else live
                g.env[var] = dt.type(i)
                if is_gen:
                    s0 = g.park_serial
                    yield from body(g)
                    yield from diverged.resume(g, s0)
                else:
                    body(g)
        finally:
            g.slots["loops"].pop()
            g.mask = outer

    return _stepper(run, is_gen)


def _stepper(gen, is_gen):
    """(statement, is_gen) of the generator function ``gen``: itself where the body yields (a
    barrier inside), else a plain function that runs it to the end."""
    if is_gen:
        return gen, True

    def plain(g):
        for _ in gen(g):
            pass

    return plain, False


span_frames = spans.frames  # the one span walker (txlab.ir.spans)
user_file = spans.user_file_of


def _key(node):
    """Identity of an IR node (Python wrappers are recreated on every field access)."""
    return node.__chandle__()


def _count(g):
    c = g.cta
    c.steps += c.B
    c.warp_steps += g.nw
    c.lane_steps += g.L if g.mask is None else int(np.count_nonzero(g.mask))


def _as_gen(fn):
    def gen(g):
        fn(g)
        return
        yield  # never reached: the yield makes this a generator

    return gen


def _has_load(e) -> bool:
    from txlab import ir

    return any(type(n).__name__ == "TensorLoad" for n in ir.walk(e))


def _masked_pair(g, c, t, f):
    outer = g.mask
    base = np.ones(g.L, bool) if outer is None else outer
    mt = base & c
    me = base & ~c
    out = None
    if mt.any():
        g.mask = mt
        tv = t(g)
        out = np.array(np.broadcast_to(tv, (g.L,) + np.shape(tv)[1:]))
    if me.any():
        g.mask = me
        fv = f(g)
        if out is None:
            out = np.array(np.broadcast_to(fv, (g.L,) + np.shape(fv)[1:]))
        else:
            fvb = np.broadcast_to(fv, out.shape)
            out[me] = fvb[me]
    g.mask = outer
    return out
