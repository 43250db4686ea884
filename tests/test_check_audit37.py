"""Audit 37b, items 1, 8 and 13 (on the CPU emulator, kernels compiled for sm_90a without a GPU):

1. ``txlab.check`` with a reference returning one array compares it with the buffer parameter the kernel stores to
   (read from its IR), not the last one, and never poisons a buffer the kernel only reads; one array where the kernel
   stores to several buffers is an InputError naming them. An output the kernel also reads (an in-place update) is
   poisoned still, and a failure says "read before written" and whether ``inout=`` makes it match, never "never
   written" for elements computed from the poison.
8. numpy arrays in any stride or order (``a[::2]``, Fortran order) are staged as C-ordered copies and written back, by
   a call and by ``check`` alike; a refusal of one (``check_args``, ``txlab.emulate``) names numpy's fix.
13. ``check`` of an all-NaN output warns nothing and says so plainly.
"""

import warnings

import numpy as np
import pytest

import txlab
from txlab.errors import InputError, KernelFault

KERNELS = {
    "outfirst": """
@T.prim_func
def outfirst(Y: T.Buffer((256,), "float32"), X: T.Buffer((256,), "float32")):
    T.device_entry()
    tx = T.thread_id([256])
    Y[tx] = X[tx] * T.float32(2.0)
""",
    "middle": """
@T.prim_func
def middle(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32"), W: T.Buffer((256,), "float32")):
    T.device_entry()
    tx = T.thread_id([256])
    Y[tx] = X[tx] * W[tx]
""",
    "two": """
@T.prim_func
def two(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32"), Z: T.Buffer((256,), "float32")):
    T.device_entry()
    tx = T.thread_id([256])
    Y[tx] = X[tx] * T.float32(2.0)
    Z[tx] = X[tx] + T.float32(1.0)
""",
    "inplace": """
@T.prim_func
def inplace(X: T.Buffer((1024,), "float32")):
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([256])
    X[bx * 256 + tx] = X[bx * 256 + tx] * T.float32(2.0)
""",
    "inplace_int": """
@T.prim_func
def inplace_int(X: T.Buffer((256,), "int32")):
    T.device_entry()
    tx = T.thread_id([256])
    X[tx] = X[tx] * 3
""",
    "inplace_part": """
@T.prim_func
def inplace_part(X: T.Buffer((256,), "float32"), A: T.Buffer((256,), "float32")):
    T.device_entry()
    tx = T.thread_id([256])
    if tx < 200:
        X[tx] = A[tx]
    if tx >= 250:
        X[tx] = X[tx] * T.float32(2.0)
""",
    "hist": """
@T.prim_func
def hist(H: T.Buffer((16,), "int32"), x: T.Buffer((4096,), "int32")):
    T.device_entry()
    bx = T.cta_id([16])
    tx = T.thread_id([256])
    T.cuda.atomic_add(T.address_of(H[x[bx * 256 + tx] % 16]), 1)
""",
    "scale": """
@T.prim_func
def scale(A_ptr: T.handle, B_ptr: T.handle, n: T.int32):
    A = T.match_buffer(A_ptr, (n,), "float32")
    B = T.match_buffer(B_ptr, (n,), "float32")
    T.device_entry()
    bx = T.cta_id([T.ceildiv(n, 256)])
    tx = T.thread_id([256])
    if bx * 256 + tx < n:
        B[bx * 256 + tx] = A[bx * 256 + tx] * T.float32(2.0)
""",
    "scale_oob": """
@T.prim_func
def scale_oob(A_ptr: T.handle, B_ptr: T.handle, n: T.int32):
    A = T.match_buffer(A_ptr, (n,), "float32")
    B = T.match_buffer(B_ptr, (n,), "float32")
    T.device_entry()
    tx = T.thread_id([256])
    if tx < n:
        B[tx + 1] = A[tx] * T.float32(2.0)
""",
    "tr": """
@T.prim_func
def tr(X: T.Buffer((64, 32), "float32"), Y: T.Buffer((32, 64), "float32")):
    T.device_entry()
    bx = T.cta_id([64])
    tx = T.thread_id([32])
    Y[tx, bx] = X[bx, tx]
""",
}


def _prim_func(name: str):
    from txlab.magic import register_source, tirx_namespace

    src = KERNELS[name].strip("\n") + "\n"
    fn = register_source(src, tag=f"audit37-{name}")
    ns = tirx_namespace()
    exec(compile(src, fn, "exec"), ns)  # noqa: S102 - test kernels
    return ns[name]


@pytest.fixture(scope="module")
def k():
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = txlab.compile(_prim_func(name), arch="sm_90a")
        return cache[name]

    return get


@pytest.fixture(autouse=True)
def _on_the_emulator(monkeypatch):
    monkeypatch.setattr(txlab.config, "device", "cpu")


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).random(shape, dtype=np.float32) + np.float32(0.5)


# ---------------------------------------------------------------------------------------------
# 1. which buffer one returned array is for, and what is poisoned
def test_buffer_uses_reads_stores_loads_and_other_uses_from_the_ir(k):
    from txlab.examples import hopper_gemm
    from txlab.run import buffer_uses

    assert buffer_uses(k("outfirst")) == {"Y": {"store"}, "X": {"load"}}
    assert buffer_uses(_prim_func("outfirst")) == {"Y": {"store"}, "X": {"load"}}  # a @T.prim_func as well
    assert buffer_uses(k("inplace")) == {"X": {"load", "store"}}
    assert buffer_uses(k("scale")) == {"A": {"load"}, "B": {"store"}}  # match_buffer views are the parameters
    # an atomic's target is written through its address: neither a load nor a plain store
    assert buffer_uses(k("hist")) == {"H": {"other"}, "x": {"load"}}
    # TMA copies (tile primitives: source and destination) and stores through a view of C (decl_buffer over C.data)
    assert buffer_uses(hopper_gemm.gemm_kernel(256, 256, 128)) == {"A": {"load"}, "B": {"load"}, "C": {"store"}}


def test_one_array_is_compared_with_the_buffer_the_kernel_stores_to_not_the_last(k):
    x, y = _rand(256), np.zeros(256, np.float32)
    r = txlab.check(k("outfirst"), (y, x), reference=lambda Y, X: X * 2)
    assert r.ok and list(r.outputs) == ["Y"], r
    np.testing.assert_array_equal(y, 0)  # check runs on copies
    w = _rand(256, seed=1)
    r = txlab.check(k("middle"), (x, y, w), reference=lambda X, Y, W: X * W)
    assert r.ok and list(r.outputs) == ["Y"], r
    # the prim_func itself (emulated without a Compiled), and outputs= as before
    assert txlab.check(_prim_func("outfirst"), (y, x), reference=lambda Y, X: X * 2).ok
    assert txlab.check(k("outfirst"), (y, x), reference=lambda Y, X: X * 2, outputs=["Y"]).ok


def test_one_array_for_a_kernel_that_stores_to_several_buffers_is_an_input_error_naming_them(k):
    x, y, z = _rand(256), np.zeros(256, np.float32), np.zeros(256, np.float32)
    with pytest.raises(InputError) as e:
        txlab.check(k("two"), (x, y, z), reference=lambda X, Y, Z: X * 2)
    text = str(e.value)
    assert "stores to 2 buffers (Y, Z)" in text and "outputs=['Y']" in text, text
    assert txlab.check(k("two"), (x, y, z), reference=lambda X, Y, Z: X * 2, outputs=["Y"]).ok
    r = txlab.check(k("two"), (x, y, z), reference=lambda X, Y, Z: (X * 2, X + 1), outputs=["Y", "Z"])
    assert r.ok, r
    assert txlab.check(k("two"), (x, y, z), reference=lambda X, Y, Z: {"Z": X + 1}).ok
    with pytest.raises(InputError, match=r"returned 2 values: pass outputs=\[...\].*two writes: Y, Z"):
        txlab.check(k("two"), (x, y, z), reference=lambda X, Y, Z: (X * 2, X + 1))


def test_an_atomic_histogram_is_the_output_and_its_input_is_not_poisoned(k):
    x = np.random.default_rng(0).integers(0, 1 << 20, 4096).astype(np.int32)
    H0 = (np.arange(16) * 100).astype(np.int32)
    ref = lambda H, x: H + np.bincount(x % 16, minlength=16)  # noqa: E731
    r = txlab.check(k("hist"), (H0, x), reference=ref)
    assert not r.ok and list(r.outputs) == ["H"], r
    s = r.summary()
    assert "read before written" in s and "with inout=('H',) every element of H matches" in s, s
    assert txlab.check(k("hist"), (H0, x), reference=ref, inout=("H",)).ok


def test_an_in_place_kernel_fails_saying_read_before_written_and_inout_never_never_written(k):
    x = np.arange(1024, dtype=np.float32)
    r = txlab.check(k("inplace"), (x,), reference=lambda X: X * 2)
    assert not r.ok
    o, s = r.outputs["X"], r.summary()
    assert o["read_before_written"] == 1024 and o["never_written"] == 0, s
    assert "never written" not in s, s
    assert "X is also read by the kernel" in s or "X was read before written" in s, s
    assert "inout=('X',)" in s and "with inout=('X',) every element of X matches" in s, s
    assert txlab.check(k("inplace"), (x,), reference=lambda X: X * 2, inout=("X",)).ok
    np.testing.assert_array_equal(x, np.arange(1024))  # untouched by the checks


def test_an_in_place_integer_kernel_names_the_read_before_the_write(k):
    x = np.arange(256, dtype=np.int32) - 100
    r = txlab.check(k("inplace_int"), (x,), reference=lambda X: X * 3)
    s = r.summary()
    assert not r.ok and r.outputs["X"]["read_before_written"] == 256 and "never written" not in s, s
    assert "read before written" in s and "with inout=('X',) every element of X matches" in s, s
    assert txlab.check(k("inplace_int"), (x,), reference=lambda X: X * 3, inout=[0]).ok


def test_a_wrong_in_place_kernel_is_wrong_either_way_and_unwritten_elements_are_told_apart(k):
    x = np.arange(1024, dtype=np.float32) + 1
    r = txlab.check(k("inplace"), (x,), reference=lambda X: X * 3)
    s = r.summary()
    assert not r.ok and r.outputs["X"]["wrong_from_input"] == 1024, s
    assert "every element of X matches" not in s and "wrong either way" in s and "never written" not in s, s
    # X[:200] is written from A, X[200:250] never, X[250:] in place: read before written
    x, a = np.arange(256, dtype=np.float32) + 1, _rand(256)
    ref = lambda X, A: np.where(np.arange(256) < 200, A, X * 2)  # noqa: E731
    r = txlab.check(k("inplace_part"), (x, a), reference=ref)
    o, s = r.outputs["X"], r.summary()
    assert list(r.outputs) == ["X"] and o["read_before_written"] == 6 and o["never_written"] == 50, s
    assert o["first_mismatch"] == [200] and "50 never written" in s and "6 read before written" in s, s
    assert "this element was never written (it keeps the value passed in)" in s, s
    r = txlab.check(k("inplace_part"), (x, a), reference=ref, inout=("X",))
    assert not r.ok and r.outputs["X"]["mismatches"] == 50, r


# ---------------------------------------------------------------------------------------------
# 8. numpy arrays in any stride or order
def test_strided_and_fortran_order_numpy_arrays_are_staged_by_calls_and_checks(k):
    a, b = np.arange(512, dtype=np.float32), np.zeros(512, np.float32)
    k("scale")(a[::2], b[::2], 256)
    np.testing.assert_array_equal(b[::2], 2 * a[::2])
    np.testing.assert_array_equal(b[1::2], 0)  # the view's gaps are untouched
    b[:] = 0
    r = txlab.check(k("scale"), (a[::2], b[::2], 256), reference=lambda A, B, n: 2 * A)
    assert r.ok, r
    np.testing.assert_array_equal(b, 0)
    x = _rand(64, 32)
    xf, yf = np.asfortranarray(x), np.zeros((32, 64), np.float32, order="F")
    k("tr")(xf, yf)
    np.testing.assert_array_equal(yf, x.T)
    assert yf.flags.f_contiguous  # written back into the caller's array
    assert txlab.check(k("tr"), (xf, np.zeros_like(yf)), reference=lambda X, Y: X.T).ok
    ro = np.asfortranarray(x)
    ro.flags.writeable = False  # an input the kernel only reads may be read-only in any order
    y = np.zeros((32, 64), np.float32)
    k("tr")(ro, y[:, :])
    np.testing.assert_array_equal(y, x.T)
    # what reaches the emulator is a C-ordered copy: the same on txlab.config.device = "cpu" as the GPU path stages
    from txlab.run import launch

    launch(k("scale"), a[::-2], b[::-2], 256, device="cpu")
    np.testing.assert_array_equal(b[::-2], 2 * a[::-2])


@pytest.mark.gpu
@pytest.mark.parametrize("isolation", ["inline", "process"])
def test_strided_and_fortran_order_arrays_on_the_gpu_as_on_the_emulator(isolation, monkeypatch):
    monkeypatch.setattr(txlab.config, "device", "gpu")
    monkeypatch.setattr(txlab.config, "isolation", isolation)
    scale, tr = txlab.compile(_prim_func("scale")), txlab.compile(_prim_func("tr"))  # the local GPU's arch
    a, b = np.arange(512, dtype=np.float32), np.zeros(512, np.float32)
    scale(a[::2], b[::2], 256)
    np.testing.assert_array_equal(b[::2], 2 * a[::2])
    np.testing.assert_array_equal(b[1::2], 0)
    x = _rand(64, 32)
    yf = np.zeros((32, 64), np.float32, order="F")
    tr(np.asfortranarray(x), yf)
    np.testing.assert_array_equal(yf, x.T)
    assert txlab.check(tr, (np.asfortranarray(x), yf), reference=lambda X, Y: X.T).ok
    assert txlab.check(_prim_func("outfirst"), (b[:256].copy(), a[::2]), reference=lambda Y, X: X * 2).ok


def test_a_faulting_call_leaves_strided_arrays_unchanged(k):
    a, b = np.arange(512, dtype=np.float32), np.full(512, 7, np.float32)
    with pytest.raises(KernelFault):
        k("scale_oob")(a[::2], b[::2], 256)
    np.testing.assert_array_equal(b, 7)


def test_a_refused_numpy_array_names_numpys_fix(k):
    from txlab.run import check_args

    a = np.zeros(512, np.float32)
    with pytest.raises(InputError) as e:
        check_args(k("scale"), (a[::2], a[:256].copy(), 256))
    text = str(e.value)
    assert "not contiguous" in text and "np.ascontiguousarray(a)" in text and "strided numpy view" in text, text
    assert ".contiguous()" not in text.replace("np.ascontiguousarray", ""), text
    with pytest.raises(InputError, match="Fortran order") as e:
        check_args(k("tr"), (np.asfortranarray(_rand(64, 32)), np.zeros((32, 64), np.float32)))


def test_emulate_stages_strided_and_fortran_arrays_and_writes_them_back(k):
    """txlab.emulate binds arrays in place; one that is not C-contiguous runs as a C copy written back afterwards (it
    was refused, while a call and check staged it)."""
    a = np.arange(512, dtype=np.float32)
    out = np.zeros(512, np.float32)
    res = txlab.emulate(k("scale"), a[::2], out[1::2], 256)
    assert res.ok, res.findings
    np.testing.assert_array_equal(out[1::2], 2 * a[::2])
    assert not out[::2].any()  # the elements between the view's are untouched
    x = np.asfortranarray(_rand(64, 32))
    y = np.asfortranarray(np.zeros((32, 64), np.float32))
    assert txlab.emulate(k("tr"), x, y).ok
    np.testing.assert_array_equal(y, x.T)


# ---------------------------------------------------------------------------------------------
# 13. an all-NaN output: no stray RuntimeWarning, a plain summary
def test_an_all_nan_output_warns_nothing_and_says_every_element_is_nan(k):
    x, y = np.full(256, np.nan, np.float32), np.zeros(256, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = txlab.check(k("outfirst"), (y, x), reference=lambda Y, X: np.zeros(256, np.float32))
    s = r.summary()
    assert not r.ok and "every element NaN where the reference has a number" in s, s
    assert "max abs inf" not in s and "rel Frobenius nan" not in s, s
    o = r.outputs["Y"]
    assert o["nan"] == 256 and o["rel_frobenius"] == float("inf"), o
    x[:128] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = txlab.check(k("outfirst"), (y, x), reference=lambda Y, X: np.full(256, 2.5, np.float32))
    s = r.summary()
    assert "max abs 0.5 where both are numbers, 128 NaN where the reference has a number" in s, s


def test_compare_of_nans_against_zeros_warns_nothing():
    from txlab.run import compare

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = compare(np.full(4, np.nan, np.float32), np.zeros(4, np.float32), 1e-5, 1e-6)
        both = compare(
            np.array([np.nan, np.inf], np.float32), np.array([np.nan, np.inf], np.float32), 0, 0, equal_nan=True
        )
    assert not r["ok"] and r["nan"] == 4 and r["rel_frobenius"] == float("inf") and r["max_abs_err"] == float("inf")
    assert both["ok"] and both["max_abs_err"] == 0 and both["rel_frobenius"] == 0
