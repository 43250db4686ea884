"""txlab.check for real kernels (issue 30, item 2): ``inout=`` for outputs that start from the
values passed in (not poisoned), and failure messages that name the poison when it shows ("never
written", "read before written: it accumulated into the poison 0xA5A5A5A5"). The same on the CPU
emulator (here) and on the GPU (GPU-marked)."""

import numpy as np
import pytest

import txlab
from txlab.errors import InputError
from txlab.run import poison_bits, poison_diagnosis, poison_text


def kernel(src: str, name: str, tag: str):
    from txlab.magic import register_source, tirx_namespace

    src = src.strip("\n") + "\n"
    fn = register_source(src, tag=f"check-{tag}")
    ns = tirx_namespace()
    exec(compile(src, fn, "exec"), ns)  # noqa: S102 - test kernels
    return ns[name]


ACC = """
@T.prim_func
def acc(A_ptr: T.handle, H_ptr: T.handle, n: T.int32):
    A = T.match_buffer(A_ptr, (n,), "DTYPE")
    H = T.match_buffer(H_ptr, (n,), "DTYPE")
    T.device_entry()
    bx = T.cta_id([T.ceildiv(n, 256)])
    tx = T.thread_id([256])
    i = bx * 256 + tx
    if i < BOUND:
        H[i] = BODY
"""


def make(dtype="int32", bound="n", body="H[i] + A[i]", tag=""):
    return kernel(
        ACC.replace("DTYPE", dtype).replace("BOUND", bound).replace("BODY", body),
        "acc",
        f"{dtype}-{tag or bound}-{abs(hash(body))}",
    )


N = 300
DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]


def _ints(dtype="int32"):
    return np.arange(N, dtype=dtype) + 900, np.full(N, 74, dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_an_accumulating_output_fails_naming_the_poison_then_passes_with_inout(device):
    k = make()
    a, h = _ints()
    r = txlab.check(k, (a, h, N), reference=lambda a, h, n: h + a, device=device)
    assert not r.ok
    o = r.outputs["H"]
    assert o["read_before_written"] == N and o["never_written"] == 0
    s = r.summary()
    # got 0xA5A5A5A5 + 900 (what the kernel added) where 74 + 900 = 974 was expected
    assert "got 0xA5A5A5A5 + 900" in s and "read before written" in s, s
    assert "accumulated into the poison 0xA5A5A5A5" in s and "inout=('H',)" in s, s
    for inout in (("H",), "H", [1], (-2,)):
        r = txlab.check(k, (a, h, N), reference=lambda a, h, n: h + a, inout=inout, device=device)
        assert r.ok, (inout, r)
    np.testing.assert_array_equal(h, 74)  # check runs on copies: the caller's arrays are unchanged


@pytest.mark.parametrize("device", DEVICES)
def test_a_histogram_into_zeros_reads_as_poison_plus_the_answer(device):
    k = make(dtype="int32", body="H[i] + A[i]", tag="hist")
    a = np.full(N, 974, np.int32)
    r = txlab.check(k, (a, np.zeros(N, np.int32), N), reference=lambda a, h, n: h + a, device=device)
    s = r.summary()
    assert "got 0xA5A5A5A5 + 974 = -1515869837" in s and "read before written" in s, s


@pytest.mark.parametrize("device", DEVICES)
def test_unwritten_elements_are_named_never_written(device):
    k = make(bound="n - 8", body="A[i]")
    a, h = _ints()
    r = txlab.check(k, (a, h, N), reference=lambda a, h, n: a, device=device)
    o = r.outputs["H"]
    assert not r.ok and o["never_written"] == 8 and o["read_before_written"] == 0
    assert "got the poison 0xA5A5A5A5: this element was never written" in r.summary()
    assert o["first_mismatch"] == [N - 8]


@pytest.mark.parametrize("device", DEVICES)
def test_float_outputs_poison_with_a_nan_of_their_own(device):
    never = make(dtype="float32", bound="n - 8", body="A[i]")
    a = np.arange(N, dtype=np.float32)
    r = txlab.check(never, (a, np.zeros_like(a), N), reference=lambda a, h, n: a, device=device)
    assert r.outputs["H"]["never_written"] == 8
    assert "got the poison NaN 0x7FE5A5A5: this element was never written" in r.summary()
    accumulating = make(dtype="float32", body="H[i] + A[i]")
    a = a + 1  # (an element that adds 0 reads as never written: started from zeros it stays 0)
    r = txlab.check(accumulating, (a, np.ones_like(a), N), reference=lambda a, h, n: h + a, device=device)
    o = r.outputs["H"]
    assert not r.ok and o["read_before_written"] == N and o["never_written"] == 0 == o["poison_nan"], r
    s = r.summary()
    assert "H was read before written (it accumulated into the poison NaN 0x7FE5A5A5" in s, s
    assert "started from zeros it ends as 1" in s and "inout=('H',)" in s, s
    assert txlab.check(
        accumulating, (a, np.ones_like(a), N), reference=lambda a, h, n: h + a, inout=("H",), device=device
    ).ok


def test_inout_names_must_be_buffers():
    k = make()
    a, h = _ints()
    with pytest.raises(InputError, match=r"'n' is not a buffer parameter of acc \(its buffers: A, H\)"):
        txlab.check(k, (a, h, N), lambda a, h, n: h + a, inout=("n",), device="cpu")
    with pytest.raises(InputError, match="out of range"):
        txlab.check(k, (a, h, N), lambda a, h, n: h + a, inout=(7,), device="cpu")
    with pytest.raises(InputError, match="names or argument indices"):
        txlab.check(k, (a, h, N), lambda a, h, n: h + a, inout=(1.5,), device="cpu")


def test_poison_values_and_diagnosis():
    assert poison_bits("int32") == 0xA5A5A5A5 and poison_text("int32") == "0xA5A5A5A5"
    assert poison_bits("uint8") == 0xA5 and poison_text("int64") == "0xA5A5A5A5A5A5A5A5"
    assert poison_text("float32") == "NaN 0x7FE5A5A5" and poison_bits("float16") == 0x7EA5
    got = np.array([0xA5A5A5A5 - (1 << 32), 0xA5A5A5A5 - (1 << 32) + 5, 7], np.int32)
    d = poison_diagnosis(got, np.array([3, 5, 7], np.int32))
    assert d["never_written"] == 1 and d["read_before_written"] == 1
    # uint8 wraps: 0xA5 + 0x70 = 0x15
    d = poison_diagnosis(np.array([0x15], np.uint8), np.array([0x70], np.uint8))
    assert d["read_before_written"] == 1


def test_a_wrong_argument_is_named_before_the_reference_runs():
    """On the emulator too, a list (or None) where a buffer goes is an InputError naming the
    parameter, not whatever the user's reference raises when it gets a list."""
    k = make()
    a, h = _ints()
    seen = []

    def ref(a, h, n):
        seen.append(type(a))
        return h + a

    for bad in (a.tolist(), None):
        with pytest.raises(InputError, match=r"argument #0 \(A\)"):
            txlab.check(k, (bad, h, N), reference=ref, inout=("H",), device="cpu")
    assert seen == []


def test_a_reference_of_the_wrong_shape_is_an_input_error():
    k = make()
    a, h = _ints()
    with pytest.raises(InputError, match=r"reference shape \(150,\) differs"):
        txlab.check(k, (a, h, N), reference=lambda a, h, n: (h + a)[:150], inout=("H",), device="cpu")
    with pytest.raises(InputError, match="reference returned 2 value"):
        txlab.check(k, (a, h, N), reference=lambda a, h, n: (a, h), device="cpu")


def test_a_reference_that_returns_nothing_is_named():
    """A reference that writes its answer into an argument and forgets ``return`` used to read as "reference shape
    () differs from the output's"."""
    k = make()
    a, h = _ints()

    def ref(a, h, n):
        h += a  # noqa: F841 - the mistake under test

    with pytest.raises(InputError, match="the reference returned None.*missing return"):
        txlab.check(k, (a, h, N), reference=ref, inout=("H",), device="cpu")


def test_integer_outputs_must_be_equal_unless_a_tolerance_is_given():
    """An off-by-one int32 kernel around 1e6 passed the float tolerance (1 <= 1e-5 * 1e6); integers are compared
    exactly by default, and by the tolerance the caller gives."""
    k = make(body="A[i] + 1", tag="plus-one")
    a, h = np.arange(N, dtype=np.int32) + 1_000_000, np.zeros(N, np.int32)
    r = txlab.check(k, (a, h, N), reference=lambda a, h, n: a, device="cpu")
    assert not r.ok and r.outputs["H"]["mismatches"] == N and "unequal (integers: exact)" in r.summary()
    assert txlab.check(k, (a, h, N), reference=lambda a, h, n: a + 1, device="cpu").ok
    assert txlab.check(k, (a, h, N), reference=lambda a, h, n: a, atol=1, device="cpu").ok


def test_nan_and_inf_where_the_reference_has_them_match_but_the_poison_never_does():
    k = make(dtype="float32", body="T.log(A[i])", tag="log")
    a = np.array([1.0, 0.0, -1.0] * 100, np.float32)  # the last: log(-1) = NaN
    ref = lambda a, h, n: np.log(a)  # noqa: E731 - 0, nan, -inf
    with np.errstate(divide="ignore", invalid="ignore"):
        assert txlab.check(k, (a, np.zeros(N, np.float32), N), reference=ref, device="cpu").ok
        # a kernel that skips the last element leaves the poison where the reference has NaN: not a match
        short = make(dtype="float32", bound="n - 1", body="T.log(A[i])", tag="log-short")
        r = txlab.check(short, (a, np.zeros(N, np.float32), N), reference=ref, device="cpu")
    assert not r.ok and r.outputs["H"]["first_mismatch"] == [N - 1], r.summary()


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"rtol": -1}, "rtol must be finite and >= 0"),
        ({"atol": float("nan")}, "atol must be finite and >= 0"),
        ({"rtol": "1e-3"}, "rtol must be a number"),
    ],
)
def test_bad_tolerances_are_named(kwargs, words):
    k = make(dtype="float32", body="A[i]", tag="copy")
    a = np.ones(N, np.float32)
    with pytest.raises(InputError, match=words):
        txlab.check(k, (a, np.zeros_like(a), N), reference=lambda a, h, n: a, device="cpu", **kwargs)


def test_args_that_are_not_a_tuple_and_a_reference_of_no_numbers_are_named():
    k = make(dtype="float32", body="A[i]", tag="copy")
    a = np.ones(N, np.float32)
    with pytest.raises(InputError, match="args must be a tuple or list"):
        txlab.check(k, a, reference=lambda a, h, n: a, device="cpu")
    with pytest.raises(InputError, match="not numbers"):
        txlab.check(k, (a, np.zeros_like(a), N), reference=lambda a, h, n: "hi", device="cpu")


def test_a_reference_that_cannot_take_the_arguments_is_named_before_it_runs():
    """``reference`` is called with one argument per kernel parameter: one that takes fewer (``lambda a: 2 * a``) is
    an InputError naming the call it gets, not Python's TypeError from inside check."""
    k = make()
    a, h = _ints()
    with pytest.raises(InputError, match=r"reference is called as reference\(A, H, n\)"):
        txlab.check(k, (a, h, N), reference=lambda a: h + a, inout=("H",), device="cpu")
    with pytest.raises(InputError, match="reference must be a function"):
        txlab.check(k, (a, h, N), reference=h + a, inout=("H",), device="cpu")
    r = txlab.check(k, (a, h, N), reference=lambda *args: args[1] + args[0], inout=("H",), device="cpu")
    assert r.ok, r
