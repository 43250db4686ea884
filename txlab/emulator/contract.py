"""Which multiply-adds of a kernel the build fuses into one ``fma.rn`` (FFMA), as nvcc does.

nvcc contracts by default (``--fmad=true``, with or without fast math), so ``x * 1.7 + y`` is one
rounding on the GPU and two in plain numpy. The rules below are nvcc 13's, read off its PTX for
the expression shapes TVM's CUDA codegen prints (``tests/test_emulator_math.py`` compiles each
shape and checks the PTX agrees with this model, so a change in nvcc is caught):

* ``m + c`` and ``c + m`` where ``m = a * b`` -> ``fma(a, b, c)``; when both operands are
  products, the first one is fused.
* ``m - c`` -> ``fma(a, b, -c)``; ``c - m`` is *not* fused (it would need a negated operand).
* A product with more than one use is not fused anywhere (it is computed once, rounded, and
  reused); uses are counted after common-subexpression elimination, i.e. structurally equal
  products (``a * b`` and ``b * a`` too) are one value.
* A product bound to a variable (``t = a * b``; TVMScript's ``T.let``, TVM's CSE variables) used
  once, by an add, is fused there.
* float32 and float64 only (``fma.rn.f32``/``.f64``); half and bfloat16 arithmetic goes through
  ``cuda_fp16.h``/``cuda_bf16.h`` operators that nvcc does not contract.

DESIGN.md says why the emulator models the rule on the IR rather than reading the PTX.
"""
from __future__ import annotations

_FUSED_TYPES = ("float32", "float64")


def _dtype(e) -> str:
    ty = getattr(e, "ty", None)
    return str(getattr(ty, "dtype", "")) if ty is not None else ""


def _fusable_type(e) -> bool:
    d = _dtype(e)
    return d.startswith(_FUSED_TYPES) and not d.startswith("float8")


def _handle(node):
    return node.__chandle__()


class Contraction:
    """The contraction decisions for one device function (``func``: its lowered PrimFunc)."""

    def __init__(self, func):
        self.mul_uses: dict = {}       # product key -> occurrences
        self.var_uses: dict = {}       # var handle -> uses
        self.bound: dict = {}          # var handle -> the product it is bound to
        self.captured_vars: set = set()
        if func is not None:
            self._count(func.body)

    # ---- analysis ------------------------------------------------------------------------------
    def _key(self, mul):
        import tvm_ffi

        h = sorted((tvm_ffi.structural_hash(mul.a), tvm_ffi.structural_hash(mul.b)))
        return (_dtype(mul), h[0], h[1])

    def _count(self, body):
        """Uses of each product and variable: every occurrence in the IR tree (the CUDA source
        spells each occurrence out; LLVM's CSE makes the structurally equal ones one value)."""
        import tvm.tirx as tx
        import tvm_ffi

        def on_mul(m):
            if _fusable_type(m):
                k = self._key(m)
                self.mul_uses[k] = self.mul_uses.get(k, 0) + 1

        def on_bind(b):
            if type(b.value).__name__ == "Mul" and _fusable_type(b.value):
                self.bound[_handle(b.var)] = b.value

        def on_var(v, kind):
            if kind == tvm_ffi.DefRegionKind.NONE:
                h = _handle(v)
                self.var_uses[h] = self.var_uses.get(h, 0) + 1

        tvm_ffi.structural_walk(body, [(tx.Mul, on_mul), (tx.Bind, on_bind)],
                                with_def_region_kind=[(tx.Var, on_var)], order="pre")
        for h, mul in self.bound.items():
            if self.var_uses.get(h, 0) == 1 and self.mul_uses.get(self._key(mul), 0) == 1:
                self.captured_vars.add(h)

    # ---- queries -------------------------------------------------------------------------------
    def _operands(self, x, dtype):
        t = type(x).__name__
        if t == "Mul" and _dtype(x) == dtype and self.mul_uses.get(self._key(x), 0) == 1:
            return x.a, x.b
        if t == "Var":
            h = _handle(x)
            mul = self.bound.get(h)
            if mul is not None and h in self.captured_vars and _dtype(mul) == dtype:
                return (("fma-operands", h), 0), (("fma-operands", h), 1)
        return None

    def plan(self, e):
        """For an ``Add``/``Sub`` node: ``(a, b, c, negate_c)`` when nvcc makes it
        ``fma(a, b, ±c)`` (``a``/``b`` are IR nodes, or ``(env key, index)`` of a bound
        product's operands); None when it is an add of rounded values."""
        if not _fusable_type(e):
            return None
        dtype = _dtype(e)
        sub = type(e).__name__ == "Sub"
        for i, x in enumerate((e.a,) if sub else (e.a, e.b)):
            ops = self._operands(x, dtype)
            if ops is not None:
                return ops[0], ops[1], (e.b if i == 0 else e.a), sub
        return None

    def captured(self, bind):
        """The environment key under which a ``Bind`` of a product keeps its operands (an add fuses
        them later), else None."""
        h = _handle(bind.var)
        if h in self.captured_vars:
            return ("fma-operands", h)
        return None
