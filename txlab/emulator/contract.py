"""Which multiply-adds of a kernel the build fuses into one ``fma.rn`` (FFMA), as nvcc does.

nvcc contracts by default (``--fmad=true``, with or without fast math), so ``x * 1.7 + y`` is one
rounding on the GPU and two in plain numpy. Two compilers decide, one after the other, and the
rules below are theirs (nvcc 13 and its ptxas), read off the PTX and the SASS of the shapes TVM's
CUDA codegen prints and checked against a SASS interpreter on 1,660 random straight-line kernel
builds (shared products, sums and differences, locals and repeated loads, constants, fast-math
divisions; with and without fast math). ``tests/test_emulator_contraction.py`` and
``tests/test_emulator_math.py`` compile shapes and count the FFMA and FMUL of their SASS, so a
change in either compiler is caught:

* Values. A product written twice (``a * b`` and ``b * a`` too), or read through a TVMScript local
  stored once (``t = a * b``; ``a = A[i]``: one SSA value after mem2reg) or a variable, is one value
  once GVN has run; its *uses* are the instructions that read it. A local never read is dead code.
  Before GVN, an expression over a load written out (``A[i]``) is an instruction per occurrence:
  LLVM's EarlyCSE merges equal expressions of the same SSA values, not loads.
* NVVM (the ``fma.rn`` of the PTX) fuses only into an fadd, never an fsub, and visits the fadds
  last to first (its DAG combiner's worklist): it takes the first operand (in Reassociate's order,
  below) that is a multiply with at most four uses, all of them fadds not yet fused. So a product
  that is also subtracted, stored, multiplied, or already another FMA's addend is left to ptxas;
  ``a * b + c * d; c * d + e`` fuses ``c * d`` into both (the second line first), while
  ``c * d + e; a * b + c * d`` fuses ``a * b`` on the second line and leaves the first unfused
  (``c * d`` became an addend). A fast-math division is one ``div.approx`` in the PTX, not a multiply.
* Reassociate orders an add's operands by *rank*, the lower first and a constant last (a tie keeps
  the written order): loads, stores and fast-math divisions are numbered in block order, any other
  expression ranks one above its highest operand, a constant 0. Which loads: a load written again
  (``A[i]`` after ``A[i]``) is the earlier one if InstCombine finds it among the six instructions
  before it in the block (loads, stores to other buffers, each new arithmetic instruction, the sign
  extension of a new index and the address of a new access count; a store to the same buffer stops
  the scan), else a new load, even within one statement. In ``O[0] = x0 * c - x1 * s;
  O[1] = x0 * s + x1 * c`` the second line's loads are new: they rank after the first's.
* Negative constants. Reassociate makes ``x + y * -C`` (the multiply an instruction used once) the
  fsub ``x - y * C``, the other operand first, and ``x - y * -C`` an fadd, its operands ordered by
  rank in turn (InstCombine: ``x - C`` too); a negative constant deeper in a chain of multiplies is
  left alone. When it visits an fsub ``x - y * C`` (or ``x - (y * C) * z``), the DAG combiner
  makes it ``x + y * -C`` again where the multiplies have one use and ``C`` is free to negate (no
  other use in the block, or ``-C`` already used there); NVVM may then fuse it. So
  ``A[i] * -3 + B[i] * b`` fuses ``B[i] * b``, the fadd's first operand by then, and where ``3`` is
  used elsewhere it stays an fsub for ptxas.
* ptxas fuses the rest: the PTX's ``mul``/``add``/``sub`` carry no rounding modifier. It makes two
  passes over the adds and subs, first to last, the first for products used once, the second for the
  others. It fuses a product into an add or sub only while every use of the product is an add or
  sub not fused with another product (so the FMUL could go), and not one using it twice (``p + p``,
  ``p - p``); when both operands qualify, the one with fewer uses in the PTX (a tie: an add's first
  operand, a sub's minuend). The other becomes the FFMA's addend, and from then on is fused
  nowhere: uses already fused stay fused and the FMUL stays too. ``m - c`` is ``FFMA(a, b, -c)``,
  ``c - m`` ``FFMA(-a, b, c)``. So ``a * b + c * d; a * b - c * d; a * b + c`` fuses ``c * d``
  twice and computes ``a * b`` once (``c + a * b`` rounds twice); ``a * b - e; a * b - c * d;
  a * b - d`` fuses only ``c * d`` (used once: first pass); with ``c * d - e`` added, ``c * d`` has
  two uses, ``a * b - e`` is fused before ``a * b`` loses to ``c * d``, and ``a * b - d`` is not.
* Basic blocks: an ``if`` branch and the body of a loop whose trip count is not a constant
  (constant loops are unrolled) are blocks of their own. A product bound to a variable is fused
  into its one use inside an ``if`` (LLVM sinks it there) but not into a use inside a loop it is
  not in (it stays outside, as FMUL, and the loop adds it with FADD); with several uses, all must
  be in its own block.
* With fast math a float32 ``a / b`` is ``div.approx.ftz`` = ``MUFU.RCP`` and a multiply, and ptxas
  fuses that multiply like any other: ``a / b + c`` is ``FFMA(a, rcp(b), c)`` under its rules.
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

Not modelled: a constant loop is analysed once, not unrolled (its products' uses are not multiplied
by the trip count); NVPTX's exception for a product 500 IR instructions away from its add; the
order of ptxas's passes across basic blocks, and InstCombine's load scan across them. DESIGN.md
says why the emulator models the rule on the IR rather than reading the PTX.
"""

from __future__ import annotations

_FUSED_TYPES = ("float32", "float64")
_HALF_TYPES = ("float16", "bfloat16")  # and the lanes of their vectors: fused by ptxas (HFMA2), see the docstring
_NVCC_MAX_USES = 4  # NVPTX fuses a multiply into an add only while it has at most four uses, all adds
_LOAD_SCAN = 6  # InstCombine looks this many instructions back for an equal load (available-load-scan-limit)
_COMMUTATIVE = frozenset(("Add", "Mul", "Min", "Max", "EQ", "NE", "And", "Or", "BitwiseAnd", "BitwiseOr", "BitwiseXor"))
_KIDS = ("a", "b", "value", "condition", "true_value", "false_value", "base", "stride")


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


def _data(buf):
    """The identity of the memory a load or store names (its buffer variable)."""
    return _handle(buf)


def _local(buf) -> bool:
    ty = getattr(buf, "ty", None)
    return str(getattr(ty, "storage_scope", "") or "").startswith("local")


def _kids(e):
    """The operand expressions of ``e``, in the order the CUDA source evaluates them."""
    out = [getattr(e, f) for f in _KIDS if hasattr(e, f)]
    out += list(getattr(e, "args", None) or ())
    out += list(getattr(e, "indices", None) or ())
    return [k for k in out if hasattr(k, "__chandle__")]


class _Product:
    """A product value (after CSE: ``a * b`` written twice, or read through a local, is one)."""

    __slots__ = ("dtype", "div", "const", "kids", "path", "uses", "other", "paths", "ok")

    def __init__(self, dtype, div, path):
        self.dtype, self.div, self.path = dtype, div, path
        self.const = None  # (value, the value number of the product by -value) where one operand is a constant
        self.kids: list = []  # its operands' values
        self.uses: list = []  # (_Op, slot): operand of an add/sub
        self.other = 0  # any other use: a store, a multiply, a call, an if's condition, another block's phi...
        self.paths: list = []  # the basic block of each use
        self.ok = False

    def live(self):
        """Its uses as an operand of an add/sub not fused with it."""
        return [(op, s) for op, s in self.uses if op.fused != s]


class _Op:
    """One float add or sub instruction (after CSE)."""

    __slots__ = ("sub", "vals", "keys", "order", "fused", "fadd", "path")

    def __init__(self, sub, vals, order):
        self.sub, self.vals, self.order = sub, list(vals), order
        self.keys = [v.key for v in vals]  # as written (a product Reassociate rewrites changes its value)
        self.fadd = not sub  # an fadd when the DAG combiner sees it (Reassociate may swap fadd and fsub)
        self.fused = None  # the slot (0 or 1) whose product it fuses


class _Val:
    """One occurrence of a value: its CSE key, Reassociate's rank, and, for a product, where a fused
    add takes its operands from (the multiply node, or the local / variable it was stored into)."""

    __slots__ = ("key", "rank", "const", "prod", "src", "op", "ekey")

    def __init__(self, key, rank, const=False, prod=None, src=None, op=None, ekey=None):
        self.key, self.rank, self.const, self.prod, self.src, self.op = key, rank, const, prod, src, op
        self.ekey = key if ekey is None else ekey  # the instruction it is when EarlyCSE is done (loads not merged)

    def via(self, src):
        return _Val(self.key, self.rank, self.const, self.prod, src, self.op, self.ekey)


class Contraction:
    """The contraction decisions for one device function (``func``: its lowered PrimFunc)."""

    def __init__(self, func, fast_math: bool = True):
        self.fast_math = fast_math
        self._plans: dict = {}  # handle of an Add/Sub node -> plan (see :meth:`plan`)
        self._store_keys: dict = {}  # handle of a store of a product into a local -> env key of its operands
        self._bind_keys: dict = {}  # handle of a variable bound to a product -> env key of its operands
        self._stores: dict = {}  # local cell -> [block of each store]
        self._live: set = set()  # locals and variables read (their definitions are not dead code)
        self._vn: dict = {}  # value numbering: structure -> int
        self._seen: dict = {}  # value number -> [(block, _Val)]: computed there (CSE / GVN)
        self._eseen: dict = {}  # EarlyCSE's value number -> [block]: an instruction there before GVN
        self._euses: dict = {}  # EarlyCSE's value number -> instructions using it then
        self._div_rank: dict = {}  # EarlyCSE's value number of a fast-math division -> its rank
        self._cell_val: dict = {}
        self._var_val: dict = {}
        self._buf_gen: dict = {}  # stores to each buffer so far (GVN merges loads across other buffers' stores)
        self._pos = 0  # Reassociate's numbering of the loads and stores
        self._stream: list = []  # the instructions of the current block so far (InstCombine scans back over them)
        self._stream_path = None
        self._loads = 0  # loads seen: each its own instruction for EarlyCSE
        self._ops: list = []
        self._occ: dict = {}  # handle of an Add/Sub node -> (node, _Op, operand _Vals)
        self._products: list = []
        self._by_key: dict = {}  # value number -> _Product
        self._consts: dict = {}  # (block, dtype, float constant) -> instructions using it
        self._path = ()
        if func is not None:
            self._prepass(func.body)
            self._stmts(func.body, (), self._on_store, self._on_bind, self._on_expr)
            self._decide()

    def is_product(self, e) -> bool:
        """``e`` is a multiply the build can fuse: a float32/float64 Mul, or with fast math a
        float32 Div (``a * rcp(b)``)."""
        t = type(e).__name__
        if t == "Mul":
            return _fusable_type(e)
        return t == "Div" and self.fast_math and _dtype(e) == "float32"

    # ---- walking the body --------------------------------------------------------------------
    def _stmts(self, node, path, on_store, on_bind, on_expr):
        """Call the handlers on each statement and top-level expression, in program order, with the
        basic-block path (module docstring) it is in."""
        import tvm
        import tvm.tirx as tx
        import tvm_ffi
        from tvm_ffi.structural import WalkResult

        skip = WalkResult.SKIP

        def on_if(s):
            on_expr(s.condition, path)
            self._stmts(s.then_case, path + (("if", _handle(s), 0),), on_store, on_bind, on_expr)
            if s.else_case is not None:
                self._stmts(s.else_case, path + (("if", _handle(s), 1),), on_store, on_bind, on_expr)
            return skip

        def on_for(s):
            on_expr(s.min, path)
            on_expr(s.extent, path)
            const = hasattr(s.extent, "value") and hasattr(s.min, "value")  # unrolled
            self._stmts(s.body, path if const else path + (("loop", _handle(s)),), on_store, on_bind, on_expr)
            return skip

        def on_while(s):
            inner = path + (("loop", _handle(s)),)
            on_expr(s.condition, inner)
            self._stmts(s.body, inner, on_store, on_bind, on_expr)
            return skip

        def store(s):
            on_store(s, path)
            return skip

        def bind(s):
            on_bind(s, path)
            return skip

        def expr(e):
            on_expr(e, path)
            return skip

        tvm_ffi.structural_walk(
            node,
            [
                (tx.IfThenElse, on_if),
                (tx.For, on_for),
                (tx.While, on_while),
                (tx.BufferStore, store),
                (tx.Bind, bind),
                (tvm.ir.expr.Expr, expr),
            ],
            order="pre",
        )

    def _prepass(self, body):
        """The blocks each local cell is stored in, and which locals and variables are live (a
        load stored into a local never read is dead code: LLVM deletes it before it ranks loads)."""
        import tvm
        import tvm.tirx as tx
        import tvm_ffi

        deps: dict = {}
        roots: set = set()

        def reads(e):
            out = set()

            def on_load(ld):
                c = _cell(ld.source, ld.indices)
                if c is not None:
                    out.add(c)

            def on_var(v, kind):
                if kind == tvm_ffi.DefRegionKind.NONE:
                    out.add(("var", _handle(v)))

            tvm_ffi.structural_walk(e, [(tvm.ir.TensorLoad, on_load)], with_def_region_kind=[(tx.Var, on_var)])
            return out

        def on_store(st, path):
            c = _cell(st.buffer, st.indices)
            if c is None:
                roots.update(reads(st.value))
                for i in st.indices:
                    roots.update(reads(i))
                return
            self._stores.setdefault(c, []).append(path)
            deps.setdefault(c, set()).update(reads(st.value))

        def on_bind(b, path):
            deps.setdefault(("var", _handle(b.var)), set()).update(reads(b.value))

        self._stmts(body, (), on_store, on_bind, lambda e, path: roots.update(reads(e)))
        stack = list(roots)
        while stack:
            s = stack.pop()
            if s not in self._live:
                self._live.add(s)
                stack.extend(deps.get(s, ()))

    def _number(self, structure) -> int:
        n = self._vn.get(structure)
        if n is None:
            n = self._vn[structure] = len(self._vn)
        return n

    def _available(self, key):
        for path, val in self._seen.get(key, ()):
            if self._path[: len(path)] == path:
                return val
        return None

    def _use(self, val, slot=None):
        """``val`` is used: as operand ``slot`` = (_Op, index) of an add/sub, or otherwise."""
        p = val.prod
        if p is None:
            return
        if slot is None:
            p.other += 1
        else:
            p.uses.append(slot)
        p.paths.append(self._path)

    def _emit(self, inst):
        if self._stream_path != self._path:
            self._stream, self._stream_path = [], self._path
        self._stream.append(inst)

    def _address(self, buf, idx):
        """The address computation of an access: a sext of each new index, a getelementptr."""
        for v in idx:
            k = self._number(("sext", v.key))
            if self._available(k) is None:
                self._seen.setdefault(k, []).append((self._path, v))
                self._emit(("i",))
        k = self._number(("gep", _data(buf), tuple(v.key for v in idx)))
        if self._available(k) is None:
            self._seen.setdefault(k, []).append((self._path, idx[0] if idx else None))
            self._emit(("i",))

    def _load_rank(self, h, buf) -> int:
        """Reassociate's rank of a load: that of an equal load InstCombine finds among the few
        instructions before it in its block (a store to another buffer does not stop it), else its
        own, numbered in block order."""
        if self._stream_path == self._path:
            for inst in reversed(self._stream[-_LOAD_SCAN:]):
                if inst[0] == "st" and inst[1] == buf:
                    break
                if inst[0] == "ld" and inst[1] == h:
                    return inst[2]
        self._pos += 1
        self._emit(("ld", h, self._pos))
        return self._pos

    def _on_store(self, st, path):
        self._path = path
        c = _cell(st.buffer, st.indices)
        if c is not None:
            if c not in self._live:  # dead code: gone before EarlyCSE or InstCombine see it
                return
            v = self._visit(st.value)
            if len(self._stores.get(c, ())) == 1:  # one SSA value per store after mem2reg
                self._cell_val[c] = v.via(("store", st)) if v.prod is not None and self.is_product(st.value) else v
                return
            self._cell_val.pop(c, None)  # a phi: read as an opaque value
            self._use(v)
            d = _data(st.buffer)
            self._buf_gen[d] = self._buf_gen.get(d, 0) + 1
            return
        v = self._visit(st.value)
        idx = [self._visit(i) for i in st.indices]
        for i in idx:
            self._use(i)
        self._use(v)
        self._euses[v.ekey] = self._euses.get(v.ekey, 0) + 1
        d = _data(st.buffer)
        self._address(st.buffer, idx)
        self._emit(("st", d))
        self._buf_gen[d] = self._buf_gen.get(d, 0) + 1
        self._pos += 1

    def _on_bind(self, b, path):
        self._path = path
        h = _handle(b.var)
        if ("var", h) not in self._live:
            return
        v = self._visit(b.value)
        self._var_val[h] = v.via(("bind", b)) if v.prod is not None and self.is_product(b.value) else v

    def _on_expr(self, e, path):
        self._path = path
        v = self._visit(e)
        self._use(v)
        self._euses[v.ekey] = self._euses.get(v.ekey, 0) + 1

    def _visit(self, e):
        """Value-number ``e`` (post-order, as the CUDA source evaluates it), record its uses."""
        import tvm_ffi

        t = type(e).__name__
        if t in ("IntImm", "FloatImm", "StringImm"):
            return _Val(self._number(("const", t, _dtype(e), e.value)), 0, const=True)
        if t == "Var":
            v = self._var_val.get(_handle(e))
            return v if v is not None else _Val(self._number(("var", _handle(e))), 1)
        if t == "TensorLoad":
            c = _cell(e.source, e.indices)
            if c is not None and len(self._stores.get(c, ())) == 1:
                v = self._cell_val.get(c)
                if v is not None:
                    return v
            idx = [self._visit(i) for i in e.indices]
            for i in idx:
                self._use(i)
            self._address(e.source, idx)
            h = tvm_ffi.structural_hash(e)
            d = _data(e.source)
            key = self._number(("load", h, self._buf_gen.get(d, 0)))
            self._loads += 1
            return _Val(key, self._load_rank(h, d), ekey=self._number(("load", self._loads)))
        if t == "Let":
            self._var_val[_handle(e.var)] = self._visit(e.value)
            return self._visit(e.body)
        vals = [self._visit(k) for k in _kids(e)]
        keys = [v.key for v in vals]
        if t in _COMMUTATIVE:
            keys.sort()
        op_name = getattr(getattr(e, "op", None), "name", None)
        key = self._number((t, _dtype(e), op_name, tuple(keys)))
        rank = max((v.rank for v in vals), default=0) + 1
        ekeys = [v.ekey for v in vals]
        if t in _COMMUTATIVE:
            ekeys.sort()
        ekey = self._number(("e", t, _dtype(e), op_name, tuple(ekeys)))
        if not any(self._path[: len(p)] == p for p in self._eseen.get(ekey, ())):
            self._eseen.setdefault(ekey, []).append(self._path)
            self._emit(("i",))  # an instruction of its own until GVN
            if t == "Div" and self.is_product(e):  # div.approx: a call Reassociate ranks in block order
                self._pos += 1
                self._div_rank[ekey] = self._pos
            for v in vals:
                self._euses[v.ekey] = self._euses.get(v.ekey, 0) + 1
        rank = self._div_rank.get(ekey, rank)
        old = self._available(key)
        if old is not None:  # the same value (CSE, GVN)
            val = _Val(key, rank, old.const, old.prod, ("node", e) if old.prod is not None else None, old.op, ekey)
            if old.op is not None:
                self._occ[_handle(e)] = (e, old.op, vals)
            return val
        for x in _kids(e):  # the DAG's constant nodes and their uses, per block (x - C is x + -C)
            if type(x).__name__ == "FloatImm":
                k = (self._path, _dtype(x), -float(x.value) if t == "Sub" and x.same_as(e.b) else float(x.value))
                self._consts[k] = self._consts.get(k, 0) + 1
        op = None
        if t in ("Add", "Sub") and _fusable_type(e) and len(vals) == 2:
            order = (0, 1)
            a, b = vals
            if t == "Add" and not (a.key == b.key and a.rank == b.rank) and not b.const:
                if a.const or b.rank < a.rank:
                    order = (1, 0)  # Reassociate: the lower rank first, a constant last
            op = _Op(t == "Sub", vals, order)
            op.path = self._path
            self._ops.append(op)
            self._occ[_handle(e)] = (e, op, vals)
            for s, v in enumerate(vals):
                self._use(v, (op, s) if v.prod is not None and v.prod.dtype == _dtype(e) else None)
        else:
            for v in vals:
                self._use(v)
        prod = None
        if self.is_product(e):
            prod = _Product(_dtype(e), t == "Div", self._path)
            prod.kids = vals
            consts = [j for j, x in enumerate((e.a, e.b)) if type(x).__name__ == "FloatImm"]
            if len(consts) == 1 and t == "Mul":
                j = consts[0]
                c = float((e.a, e.b)[j].value)
                neg = self._number(("const", "FloatImm", _dtype(e), -c))
                flipped = [neg if i == j else k for i, k in enumerate([v.key for v in vals])]
                if t in _COMMUTATIVE:
                    flipped.sort()
                prod.const = (c, self._number((t, _dtype(e), op_name, tuple(flipped))))
            self._products.append(prod)
            self._by_key.setdefault(key, prod)
        val = _Val(key, rank, prod=prod, src=("node", e) if prod is not None else None, op=op, ekey=ekey)
        self._seen.setdefault(key, []).append((self._path, val))
        return val

    # ---- the decisions -------------------------------------------------------------------------
    def _decide(self):
        for p in self._products:
            p.ok = _placed(p.path, p.paths)

        def one_use(v):  # at Reassociate, before GVN merges equal products of loads
            return self._euses.get(v.ekey) == 1

        def negs(v):  # Reassociate's negative constant of a one-use multiply (not seen deeper in the SASS)
            p = v.prod
            return int(p is not None and one_use(v) and p.const is not None and p.const[0] < 0)

        def negate(op, s):  # the constant of the product in slot s changes sign: it is another value
            v = op.vals[s]
            p = v.prod
            c, key = p.const
            q = self._by_key.get(key)
            if q is None:
                q = self._by_key[key] = _Product(p.dtype, p.div, p.path)
                q.kids, q.ok, q.const = p.kids, p.ok, (-c, v.key)
                self._products.append(q)
            p.uses.remove((op, s))
            q.uses.append((op, s))
            q.ok = q.ok and p.ok
            op.vals[s] = _Val(key, v.rank, prod=q, src=v.src)
            for x, d in ((c, -1), (-c, 1)):
                k = (op.path, p.dtype, x)
                self._consts[k] = self._consts.get(k, 0) + d

        for op in self._ops:  # Reassociate
            if op.sub:  # (and InstCombine's x - C -> x + -C) x - y * -C -> x + y * C
                v = op.vals[1]
                n = 0 if v.const else negs(v)
                op.fadd = v.const or n == 1
                if n:  # the new fadd is canonicalized in turn: the lower rank first
                    negate(op, 1)
                    if op.vals[0].const or v.rank < op.vals[0].rank:
                        op.order = (1, 0)
                continue
            x, y = op.order  # x + y * -C -> x - y * C (y, then x, tried), y * C used once
            s = y if negs(op.vals[y]) else x if negs(op.vals[x]) else None
            if s is not None:
                op.fadd, op.order = False, (1 - s, s)
                negate(op, s)

        def nvvm_fusable(p):
            if p is None or p.div or not p.ok or p.other:
                return False
            live = p.live()
            return len(live) <= _NVCC_MAX_USES and all(o.fused is None and o.fadd for o, _ in live)

        def chain(v):  # a one-use multiply with a multiply by a constant among its one-use operands
            p = v.prod
            if p is None or len(p.uses) + p.other != 1:
                return False
            return any(
                k.prod is not None and len(k.prod.uses) + k.prod.other == 1 and (k.prod.const or chain(k))
                for k in p.kids
            )

        def free_negation(op):  # the DAG combiner: x - y * C -> x + y * -C, y * C used once, C free to negate
            s = op.order[1]
            p = op.vals[s].prod
            if p is None or len(p.uses) + p.other != 1:
                return False
            if p.const is None:
                return chain(op.vals[s])  # (y * C) * z -> (y * -C) * z: the product written (Reassociate's undone)
            c = p.const[0]
            if self._consts.get((op.path, p.dtype, c), 0) > 1 and not self._consts.get((op.path, p.dtype, -c)):
                return False
            negate(op, s)
            return True

        for op in reversed(self._ops):  # NVVM: the DAG combiner visits the adds last to first
            if not op.fadd:
                op.fadd = free_negation(op)
            if not op.fadd:
                continue
            for s in op.order:
                if nvvm_fusable(op.vals[s].prod):
                    op.fused = s
                    break
        uses = {id(p): len(p.live()) + p.other for p in self._products}  # in the PTX

        def ptxas_fusable(p):  # every use an add/sub it can still fuse into (so the FMUL can go)
            if p is None or not p.ok or p.other:
                return False
            return all(o.fused is None and o.vals[1 - s].prod is not p for o, s in p.live())

        for single in (True, False):  # ptxas: a product used once first, then the others; each pass first to last
            for op in self._ops:
                if op.fused is not None:
                    continue
                best = None
                for s in op.order:
                    p = op.vals[s].prod
                    if not ptxas_fusable(p) or (single and uses[id(p)] != 1):
                        continue
                    if best is None or uses[id(p)] < uses[id(op.vals[best].prod)]:
                        best = s
                op.fused = best
        for h, (e, op, vals) in self._occ.items():
            if op.fused is None:
                continue
            want = op.keys[op.fused]
            side = op.fused if op.sub or vals[op.fused].key == want else 1 - op.fused
            kind, x = vals[side].src
            if kind == "node":
                mul = (x.a, Reciprocal(x.b)) if type(x).__name__ == "Div" else (x.a, x.b)
            else:
                h2 = _handle(x) if kind == "store" else _handle(x.var)
                key = ("fma-operands", h2)
                (self._store_keys if kind == "store" else self._bind_keys)[h2] = key
                mul = ((key, 0), (key, 1))
            other = e.b if side == 0 else e.a
            negate = None if not op.sub else ("addend" if side == 0 else "product")
            self._plans[h] = (mul[0], mul[1], other, negate)

    # ---- queries -------------------------------------------------------------------------------
    def plan(self, e):
        """For an ``Add``/``Sub`` node: ``(a, b, c, negate)`` when the build makes it one FFMA
        (``negate``: None, ``"addend"`` for ``a*b - c``, ``"product"`` for ``c - a*b``; ``a``/``b``
        are IR nodes, or ``(env key, index)`` of a bound product's operands); None when it is an
        add of rounded values."""
        if _dtype(e).split("x")[0] in _HALF_TYPES:  # scalar, and each lane of a float16x8 (HFMA2 pairs)
            return _plan_half(e)
        if not _fusable_type(e):
            return None
        return self._plans.get(_handle(e))

    def captured_store(self, store):
        """The environment key under which a store of a product into a local cell keeps its
        operands (a read of that cell fuses them), else None."""
        return self._store_keys.get(_handle(store))

    def captured(self, bind):
        """The environment key under which a ``Bind`` of a product keeps its operands (an add fuses
        them later), else None."""
        return self._bind_keys.get(_handle(bind.var))


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
