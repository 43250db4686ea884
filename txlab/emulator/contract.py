"""Which multiply-adds of a kernel the build fuses into one ``fma.rn`` (FFMA), as nvcc does.

nvcc contracts by default (``--fmad=true``, with or without fast math), so ``x * 1.7 + y`` is one
rounding on the GPU and two in plain numpy. The rules below are nvcc 13's, read off its PTX for
the expression shapes TVM's CUDA codegen prints (``tests/test_emulator_math.py`` compiles each
shape and checks the PTX agrees with this model, so a change in nvcc is caught):

* ``m + c`` and ``c + m`` where ``m = a * b`` -> ``fma(a, b, c)``. When both operands are
  products, the one of lower *rank* is fused (the first on a tie): LLVM's Reassociate pass puts
  the lower-ranked operand of a commutative op first (a load ranks by its order in the block, an
  expression one above its highest operand, a constant 0) and the fusion takes the first. A load
  written again after a store to memory ranks as a new load there (EarlyCSE, which runs before
  Reassociate, reuses a load only up to the next store; GVN merges them later): in
  ``O[0] = x0 * c - x1 * s; O[1] = x0 * s + x1 * c`` the second line's loads rank after the first's.
  A TVMScript local stored once (``a = A[i]``) is one SSA value after mem2reg: its reads rank as the
  value stored, so ``ar * bi + ai * br`` with ``ar, ai = A[i, 0], A[i, 1]`` fuses ``ai * br``.
* ``m - c`` -> ``fma(a, b, -c)`` (nvcc). ``c - m`` is left as ``mul.f32`` + ``sub.f32`` in the
  PTX, but those carry no rounding modifier and ptxas fuses them: ``FFMA(-a, b, c)`` in the SASS
  (seen on the H200: 25 % of ``a - b * a`` differed before this rule). The test therefore counts
  FFMA in the SASS, the instructions that run, not ``fma.rn`` in the PTX.
* A product with more than one use is fused into each of its uses when every use is an add or a
  sub in the same basic block (nvcc fuses up to four adds; ptxas fuses the rest, since the FMUL
  then dies: ``t + c`` and ``t - a`` are two FFMAs, ``a * b + a * b`` is ``fma(a, b, a * b)``). A
  product with any other use (a store, a multiply, a max...) is not fused anywhere: it is
  computed once, rounded, and reused; nor is one with five or more uses where one of those adds
  has a single-use product to fuse instead (nvcc takes that one and the FMUL stays). Uses are
  counted after common-subexpression elimination, i.e. structurally equal products (``a * b`` and
  ``b * a`` too) are one value.
* Basic blocks: an ``if`` branch and the body of a loop whose trip count is not a constant
  (constant loops are unrolled) are blocks of their own. A product bound to a variable is fused
  into its one use inside an ``if`` (LLVM sinks it there) but not into a use inside a loop it is
  not in (it stays outside, as FMUL, and the loop adds it with FADD); with several uses, all must
  be in its own block.
* With fast math a float32 ``a / b`` is ``div.approx.ftz`` = ``MUFU.RCP`` and a multiply, and ptxas
  fuses that multiply like any other: ``a / b + c`` is ``FFMA(a, rcp(b), c)`` under the same rules.
* A product bound to a variable (``t = a * b``: a TVMScript local, which TVM makes a one-cell
  local buffer; ``T.let``; TVM's CSE variables) stored once and read once, by an add, is fused
  there (after SROA/mem2reg it is one SSA value with one use).
* float32 and float64 through nvcc as above. Scalar float16 and bfloat16 arithmetic goes through
  ``cuda_fp16.h``/``cuda_bf16.h`` operators, inline ``mul.f16``/``add.f16`` (``.bf16``) PTX with no
  rounding modifier, which nvcc leaves alone (no CSE: each product written is its own ``mul``) and
  ptxas fuses into ``HFMA2`` (``HFMA2.BF16_V2``), with or without fast math. Read off the SASS
  (``tests/test_emulator_contraction.py`` checks each shape): a product written as an operand of an
  add or sub is fused into it (``m + c``, ``c + m``, ``m - c``, ``c - m``), even where an equal
  product is also computed for another use; when both operands are products the first is fused,
  and when they are the same product neither is (ptxas computes it once). A product bound to a
  variable is left unfused here (ptxas fuses one whose uses are all adds/subs in its own block, not
  in an ``if`` or a loop): those round twice in the emulator where the GPU may round once
  (docs/emulator-ops.md says so). A vectorized loop's float16xN / bfloat16xN add or sub follows the
  scalar rules lane by lane (ptxas pairs the lanes into HFMA2).

DESIGN.md says why the emulator models the rule on the IR rather than reading the PTX.
"""

from __future__ import annotations

_FUSED_TYPES = ("float32", "float64")
_HALF_TYPES = ("float16", "bfloat16")  # and the lanes of their vectors: fused by ptxas (HFMA2), see the docstring
_NVCC_MAX_USES = 4  # NVPTX fuses a multiply into at most four adds; ptxas takes the rest


class Reciprocal:
    """An FMA operand that is ``rcp.approx.ftz(node)``: the divisor of a fast-math division."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node


def _dtype(e) -> str:
    ty = getattr(e, "ty", None)
    return str(getattr(ty, "dtype", "")) if ty is not None else ""


def _fusable_type(e) -> bool:
    d = _dtype(e)
    return d.startswith(_FUSED_TYPES) and not d.startswith("float8")


def _handle(node):
    return node.__chandle__()


def _cell(buf, indices):
    """(buffer, index) of an access to a local buffer at a constant index, else None."""
    ty = getattr(buf, "ty", None)
    scope = str(getattr(ty, "storage_scope", "") or "")
    if not scope.startswith("local") or len(indices) != 1 or not hasattr(indices[0], "value"):
        return None
    return (_handle(buf), int(indices[0].value))


class Contraction:
    """The contraction decisions for one device function (``func``: its lowered PrimFunc)."""

    def __init__(self, func, fast_math: bool = True):
        self.fast_math = fast_math
        self.mul_uses: dict = {}  # product key -> occurrences
        self.bound: dict = {}  # var handle -> the product it is bound to
        self.captured_vars: set = set()
        self.cell_stores: dict = {}  # (local buffer, constant index) -> stores / stored product
        self.cell_value: dict = {}
        self.cell_stored: dict = {}  # (local buffer, constant index) -> the value of its (last) store
        self.captured_cells: set = set()
        # (structural key of a load, stores to memory before it) -> its order of first evaluation: a load written
        # again after a store is a new load when Reassociate ranks it (GVN merges the two only later)
        self.load_order: dict = {}
        self.load_rank: dict = {}  # handle of a load node -> that order
        self._ranks: dict = {}
        # basic-block paths (see the module docstring) and uses as an operand of an add/sub
        self.mul_paths: dict = {}  # product key -> {path of each occurrence}
        self.mul_add_uses: dict = {}  # product key -> occurrences that are an add/sub operand
        self.mul_partners: dict = {}  # product key -> the other operands of those adds
        self.var_path: dict = {}  # var handle -> path of its Bind
        self.var_use_paths: dict = {}  # var handle -> [path of each use]
        self.var_add_uses: dict = {}
        self.cell_path: dict = {}
        self.cell_load_paths: dict = {}
        self.cell_add_loads: dict = {}
        self._fusable_memo: dict = {}
        if func is not None:
            self._count(func.body)
            self._blocks(func.body, ())

    # ---- analysis ------------------------------------------------------------------------------
    def _key(self, mul):
        import tvm_ffi

        if type(mul).__name__ == "Div":  # not commutative
            return ("div", tvm_ffi.structural_hash(mul.a), tvm_ffi.structural_hash(mul.b))
        h = sorted((tvm_ffi.structural_hash(mul.a), tvm_ffi.structural_hash(mul.b)))
        return (_dtype(mul), h[0], h[1])

    def is_product(self, e) -> bool:
        """``e`` is a multiply the build can fuse: a float32/float64 Mul, or with fast math a
        float32 Div (``a * rcp(b)``)."""
        t = type(e).__name__
        if t == "Mul":
            return _fusable_type(e)
        return t == "Div" and self.fast_math and _dtype(e) == "float32"

    def _count(self, body):
        """Uses of each product: every occurrence in the IR tree (the CUDA source spells each
        occurrence out; LLVM's CSE makes the structurally equal ones one value). Uses of variables
        and cells are counted with their blocks (:meth:`_blocks`)."""
        import tvm
        import tvm.tirx as tx
        import tvm_ffi

        def on_mul(m):
            if self.is_product(m):
                k = self._key(m)
                self.mul_uses[k] = self.mul_uses.get(k, 0) + 1

        def on_bind(b):
            if self.is_product(b.value):
                self.bound[_handle(b.var)] = b.value

        gen = [0]  # stores to memory so far: EarlyCSE (before Reassociate) reuses a load only within one

        def on_store(st):  # t = a * b (TVMScript makes t a one-cell local buffer)
            cell = _cell(st.buffer, st.indices)
            if cell is not None:
                self.cell_stores[cell] = self.cell_stores.get(cell, 0) + 1
                self.cell_stored[cell] = st.value
                if self.is_product(st.value):
                    self.cell_value[cell] = st.value
            elif not str(st.buffer.scope()).startswith("local"):
                gen[0] += 1

        def on_load(ld):  # post-order: loads in the order the code evaluates them
            k = (tvm_ffi.structural_hash(ld), gen[0])
            if k not in self.load_order:
                self.load_order[k] = len(self.load_order) + 2
            self.load_rank.setdefault(_handle(ld), self.load_order[k])

        tvm_ffi.structural_walk(body, [((tx.Mul, tx.Div), on_mul), (tx.Bind, on_bind)], order="pre")
        tvm_ffi.structural_walk(body, [(tvm.ir.TensorLoad, on_load), (tx.BufferStore, on_store)], order="post")

    def _blocks(self, body, path):
        """Record the basic-block path of every product, bound product and use, and which uses
        are operands of an add/sub (module docstring)."""
        import tvm
        import tvm.tirx as tx
        import tvm_ffi

        from tvm_ffi.structural import WalkResult

        skip = WalkResult.SKIP

        def walk(node, p):
            def on_if(s):
                walk(s.condition, p)
                walk(s.then_case, p + (("if", _handle(s), 0),))
                if s.else_case is not None:
                    walk(s.else_case, p + (("if", _handle(s), 1),))
                return skip

            def on_for(s):
                walk(s.min, p)
                walk(s.extent, p)
                const = hasattr(s.extent, "value") and hasattr(s.min, "value")
                walk(s.body, p if const else p + (("loop", _handle(s)),))
                return skip

            def on_while(s):
                inner = p + (("loop", _handle(s)),)
                walk(s.condition, inner)
                walk(s.body, inner)
                return skip

            def on_mul(m):
                if self.is_product(m):
                    self.mul_paths.setdefault(self._key(m), set()).add(p)

            def on_bind(b):
                self.var_path[_handle(b.var)] = p

            def on_store(st):
                cell = _cell(st.buffer, st.indices)
                if cell is not None:
                    self.cell_path[cell] = p

            def on_load(ld):
                cell = _cell(ld.source, ld.indices)
                if cell is not None:
                    self.cell_load_paths.setdefault(cell, []).append(p)

            def on_var(v, kind):
                if kind == tvm_ffi.DefRegionKind.NONE:
                    self.var_use_paths.setdefault(_handle(v), []).append(p)

            def on_add(e):
                if not _fusable_type(e):
                    return None
                for x, other in ((e.a, e.b), (e.b, e.a)):
                    t = type(x).__name__
                    if self.is_product(x) and _dtype(x) == _dtype(e):
                        k = self._key(x)
                        self.mul_add_uses[k] = self.mul_add_uses.get(k, 0) + 1
                        self.mul_partners.setdefault(k, []).append(other)
                    elif t == "Var":
                        h = _handle(x)
                        self.var_add_uses[h] = self.var_add_uses.get(h, 0) + 1
                    elif t == "TensorLoad" and _cell(x.source, x.indices) is not None:
                        c = _cell(x.source, x.indices)
                        self.cell_add_loads[c] = self.cell_add_loads.get(c, 0) + 1
                return None

            tvm_ffi.structural_walk(
                node,
                [
                    (tx.IfThenElse, on_if),
                    (tx.For, on_for),
                    (tx.While, on_while),
                    ((tx.Mul, tx.Div), on_mul),
                    ((tx.Add, tx.Sub), on_add),
                    (tx.Bind, on_bind),
                    (tx.BufferStore, on_store),
                    (tvm.ir.TensorLoad, on_load),
                ],
                with_def_region_kind=[(tx.Var, on_var)],
                order="pre",
            )

        walk(body, path)
        for cell, mul in self.cell_value.items():
            uses = self.cell_load_paths.get(cell, [])
            if (
                self.cell_stores.get(cell) == 1
                and self.mul_uses.get(self._key(mul), 0) == 1
                and self.cell_add_loads.get(cell, 0) == len(uses) >= 1
                and _placed(self.cell_path.get(cell), uses)
            ):
                self.captured_cells.add(cell)
        for h, mul in self.bound.items():
            uses = self.var_use_paths.get(h, [])
            if (
                self.mul_uses.get(self._key(mul), 0) == 1
                and self.var_add_uses.get(h, 0) == len(uses) >= 1
                and _placed(self.var_path.get(h), uses)
            ):
                self.captured_vars.add(h)

    def _fusable(self, x) -> bool:
        """A product node whose every use is an add/sub in its block (module docstring)."""
        k = self._key(x)
        memo = self._fusable_memo.get(k)
        if memo is not None:
            return memo
        self._fusable_memo[k] = False  # guards the recursion through partners
        uses = self.mul_uses.get(k, 0)
        ok = uses >= 1 and self.mul_add_uses.get(k, 0) == uses and len(self.mul_paths.get(k, ())) <= 1
        if ok and uses > _NVCC_MAX_USES:  # nvcc fuses a single-use partner first; the FMUL stays
            ok = not any(
                self.is_product(o) and self.mul_uses.get(self._key(o), 0) == 1 and self._fusable(o)
                for o in self.mul_partners.get(k, ())
            )
        self._fusable_memo[k] = ok
        return ok

    def rank(self, e) -> int:
        """Reassociate's rank of an expression (see the module docstring)."""
        import tvm_ffi

        h = _handle(e)
        r = self._ranks.get(h)
        if r is not None:
            return r
        t = type(e).__name__
        self._ranks[h] = 1  # provisional: a cell whose stored product reads the cell itself
        cell = _cell(e.source, e.indices) if t == "TensorLoad" else None
        if t in ("IntImm", "FloatImm", "StringImm"):
            r = 0
        elif cell in self.cell_stored and self.cell_stores.get(cell) == 1:
            # a local stored once (``a = A[i]``, ``t = x * y``) is one SSA value after mem2reg: it ranks as what was
            # stored, wherever it is read (not as a load of its own, renumbered after each store to memory)
            r = self.rank(self.cell_stored[cell])
        elif t == "TensorLoad":
            r = self.load_rank.get(h) or self.load_order.get((tvm_ffi.structural_hash(e), 0), 1)
            r <<= 8
        elif t == "Var":
            v = self.bound.get(h)
            r = self.rank(v) if v is not None else 1
        else:
            kids = [getattr(e, f) for f in ("a", "b", "value") if hasattr(e, f)] + list(getattr(e, "args", []) or [])
            r = max([self.rank(k) for k in kids if hasattr(k, "__chandle__")] or [0]) + 1
        self._ranks[h] = r
        return r

    # ---- queries -------------------------------------------------------------------------------
    def _operands(self, x, dtype):
        t = type(x).__name__
        if self.is_product(x) and _dtype(x) == dtype and self._fusable(x):
            return (x.a, Reciprocal(x.b)) if t == "Div" else (x.a, x.b)
        if t == "TensorLoad":
            cell = _cell(x.source, x.indices)
            mul = self.cell_value.get(cell)
            if cell in self.captured_cells and _dtype(mul) == dtype:
                return (("fma-operands",) + cell, 0), (("fma-operands",) + cell, 1)
            return None
        if t == "Var":
            h = _handle(x)
            mul = self.bound.get(h)
            if mul is not None and h in self.captured_vars and _dtype(mul) == dtype:
                return (("fma-operands", h), 0), (("fma-operands", h), 1)
        return None

    def plan(self, e):
        """For an ``Add``/``Sub`` node: ``(a, b, c, negate)`` when the build makes it one FFMA
        (``negate``: None, ``"addend"`` for ``a*b - c``, ``"product"`` for ``c - a*b``; ``a``/``b``
        are IR nodes, or ``(env key, index)`` of a bound product's operands); None when it is an
        add of rounded values."""
        if _dtype(e).split("x")[0] in _HALF_TYPES:  # scalar, and each lane of a float16x8 (HFMA2 pairs)
            return _plan_half(e)
        if not _fusable_type(e):
            return None
        dtype = _dtype(e)
        if type(e).__name__ == "Sub":
            ops = self._operands(e.a, dtype)
            if ops is not None:  # m - c: nvcc's fma(a, b, -c)
                return ops[0], ops[1], e.b, "addend"
            ops = self._operands(e.b, dtype)
            if ops is not None:  # c - m: ptxas's FFMA(-a, b, c)
                return ops[0], ops[1], e.a, "product"
            return None
        order = (e.a, e.b)
        if self.rank(e.b) < self.rank(e.a):
            order = (e.b, e.a)  # Reassociate's canonical order: lower rank first
        for i, x in enumerate(order):
            ops = self._operands(x, dtype)
            if ops is not None:
                return ops[0], ops[1], order[1 - i], None
        return None

    def captured_store(self, store):
        """The environment key under which a store of a product into a one-use local cell keeps its
        operands (the one load of that cell fuses them), else None."""
        cell = _cell(store.buffer, store.indices)
        if cell is not None and cell in self.captured_cells:
            return ("fma-operands",) + cell
        return None

    def captured(self, bind):
        """The environment key under which a ``Bind`` of a product keeps its operands (an add fuses
        them later), else None."""
        h = _handle(bind.var)
        if h in self.captured_vars:
            return ("fma-operands", h)
        return None


def _plan_half(e):
    """:meth:`Contraction.plan` of a scalar float16/bfloat16 add or sub: ptxas fuses a ``mul.f16``
    written as its operand (the first when both are; none when both are the same product)."""
    import tvm_ffi

    dtype = _dtype(e)

    def product(x):
        return type(x).__name__ == "Mul" and _dtype(x) == dtype

    pa, pb = product(e.a), product(e.b)
    if pa and pb and tvm_ffi.structural_equal(e.a, e.b):
        return None
    sub = type(e).__name__ == "Sub"
    if pa:
        return e.a.a, e.a.b, e.b, "addend" if sub else None
    if pb:
        return e.b.a, e.b.b, e.a, "product" if sub else None
    return None


def _placed(def_path, use_paths) -> bool:
    """A bound product fuses into its uses: one use in its block or in an ``if`` nested there
    (LLVM sinks the multiply into it), several all in its own block; never into a loop it is
    not in."""
    if def_path is None or not use_paths:
        return False
    if len(use_paths) > 1:
        return all(u == def_path for u in use_paths)
    u = use_paths[0]
    return u[: len(def_path)] == def_path and not any(step[0] == "loop" for step in u[len(def_path) :])
