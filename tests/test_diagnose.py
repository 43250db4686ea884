"""Errors at the user's line from every stage, and launchability warnings at compile time."""

import os

import pytest

import txlab
from txlab.magic import lang_names, run_cell


@pytest.fixture(autouse=True, scope="module")
def _own_cache(tmp_path_factory):
    """This module's compiles stay out of the session cache (other modules test cache misses)."""
    before = os.environ.get("TXLAB_CACHE_DIR")
    os.environ["TXLAB_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache-" + __name__.rsplit(".", 1)[-1]))
    yield
    from txlab import magic

    magic.forget_cells()  # cells run here are not "unchanged cells" for the modules after this one
    if before is None:
        os.environ.pop("TXLAB_CACHE_DIR", None)
    else:
        os.environ["TXLAB_CACHE_DIR"] = before


HEAD = """@T.prim_func
def k(A: T.Buffer((128, 64), "float16"), B: T.Buffer((128,), "float32")):
"""


def _fails(body, arch="sm_90a"):
    src = HEAD + body
    with pytest.raises(txlab.CompileError) as info:
        run_cell(src, dict(lang_names()), arch=arch, use_cache=False)
    err = info.value
    lines = src.splitlines()
    if err.lineno is not None:
        assert err.source_line == lines[err.lineno - 1]  # numbered like the cell
    return err, lines


def test_nvcc_error_in_a_helper_points_at_the_calling_line():
    err, lines = _fails("""    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([32])
    x = T.alloc_local((1,), "float32")
    x[0] = T.float32(1.0)
    B[tx] = T.cuda.fmul2_rn(B[tx], x[0])
""")
    assert err.stage == "nvcc"
    assert "fmul2_rn" in lines[err.lineno - 1]
    assert "sm_100a" in err.hint and "sm_90a" in err.hint and "fmul2_rn" in err.hint
    assert "generated code: CUDA line" in err.detail  # the generated line kept as context


def test_an_arch_hint_names_what_the_error_line_needs_not_another_line():
    """A cp.async tile copy compiled for sm_75: ptxas says cp.async needs sm_80 at the copy's line;
    the hint said "Tx.cuda.cta_sync needs sm_80", a name found on another line that is not the
    cause. It now names the PTX feature of the error's own line."""
    src = """from tvm.tirx.layout import S, TileLayout
lay = TileLayout(S[(32, 32)])
@T.prim_func
def k(A: T.Buffer((32, 32), "float16"), B: T.Buffer((32, 32), "float16")):
    T.device_entry()
    T.cta_id([1])
    T.thread_id([128])
    sa = T.alloc_buffer((32, 32), "float16", scope="shared", layout=lay)
    tile.cta.copy_async(sa[0:32, 0:32], A[0:32, 0:32])
    T.ptx.cp.async_.wait_all()
    T.cuda.cta_sync()
    tile.cta.copy(B[0:32, 0:32], sa[0:32, 0:32])
"""
    with pytest.raises(txlab.CompileError) as info:
        run_cell(src, dict(lang_names()), arch="sm_75", use_cache=False)
    err = info.value
    assert err.stage == "ptxas" and err.lineno == 9 and "copy_async" in err.source_line
    assert "cta_sync" not in err.hint, err.hint
    assert err.hint.startswith("PTX cp.async (what line 9 compiles to) needs sm_80"), err.hint
    assert "arch='sm_80'" in err.hint


def test_missing_device_entry():
    err, lines = _fails("""    bx = T.cta_id([1])
    tx = T.thread_id([32])
    B[tx] = B[tx] * T.float32(2.0)
""")
    assert err.stage == "lower" and "T.device_entry()" in err.message and "device_entry" in err.hint
    assert "not passed in as API arguments" in err.detail  # TVM's own words, kept
    assert "T.cta_id" in lines[err.lineno - 1]


def test_missing_device_entry_in_one_of_two_kernels_with_the_tx_alias():
    """Another kernel of the same cell with its device_entry() used to switch the hint off (TVM's raw "not passed
    in as API arguments" instead), and the line was found only for the alias ``T.``."""
    src = """@Tx.prim_func
def good(A: Tx.Buffer((256,), "float32")):
    Tx.device_entry()
    tx = Tx.thread_id([256])
    A[tx] = Tx.float32(1.0)

@Tx.prim_func
def k(A: Tx.Buffer((256,), "float32")):
    tx = Tx.thread_id([256])
    A[tx] = Tx.float32(1.0)
"""
    with pytest.raises(txlab.CompileError) as info:
        run_cell(src, dict(lang_names()), arch="sm_90a", use_cache=False)
    err = info.value
    assert "Tx.device_entry()" in err.message and "Tx.device_entry()" in err.hint, err  # the cell's spelling
    assert err.lineno == 9, err  # k's thread_id, not good's identical line 4


def test_sizes_past_int32_are_named_at_their_line():
    """TVM fails deep in lowering ("Divide by zero", an IterVar dtype mismatch) with no line when a
    buffer or a launch extent is past int32; the error names it where the user wrote it."""
    huge = """@T.prim_func
def k(A: T.Buffer((1 << 20, 1 << 20), "float32"), B: T.Buffer((64,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    B[tx] = A[bx, tx]
"""
    for src, line, words, fix in (
        (huge, 2, "buffer A has 1,099,511,627,776 elements", "Tx.int64(1048576)"),
        (
            huge.replace("1 << 20, 1 << 20", "64, 64").replace("T.cta_id([1])", "T.cta_id([1 << 40])"),
            4,
            "a launch extent of 1,099,511,627,776",
            "persistent",
        ),
    ):
        with pytest.raises(txlab.CompileError) as info:
            run_cell(src, dict(lang_names()), arch="sm_90a", use_cache=False)
        err = info.value
        assert err.stage == "lower" and err.lineno == line and words in err.message, err
        assert fix in err.hint and err.source_line == src.splitlines()[line - 1]
        assert err.detail  # TVM's own words, kept


def test_missing_pool_commit():
    err, lines = _fails("""    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    pool = T.SMEMPool()
    As = pool.alloc((128, 64), "float16")
    As[tx, 0] = A[tx, 0]
""")
    assert "commit" in err.message.lower() + err.hint and "pool.commit()" in err.hint
    assert "SMEMPool(" in lines[err.lineno - 1]


def test_too_much_shared_memory_in_kib_with_the_allocation():
    err, lines = _fails("""    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    big = T.alloc_shared((65536,), "float32")
    big[tx] = B[tx]
    B[tx] = big[tx * 3]
""")
    assert err.stage == "ptxas"
    assert "256 KiB" in err.message and "227 KiB" in err.message and "big (256 KiB" in err.message
    assert "alloc_shared" in lines[err.lineno - 1]
    assert "0x40000" in err.detail


def test_launchability_warnings():
    src = (
        HEAD
        + """    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([2048])
    B[tx % 128] = T.float32(1.0)
"""
    )
    (c,) = run_cell(src, {}, arch="sm_90a", use_cache=False).values()
    assert any("2048 threads per CTA" in w and "1024" in w for w in c.warnings)
    from txlab.display import compiled_html

    assert "2048 threads per CTA" in compiled_html(c, show=["resources"])
    txlab.compile(c.ir_module, arch="sm_90a", name="k")
    again = txlab.compile(c.ir_module, arch="sm_90a", name="k")  # from the cache: kept
    assert again.cache_hit and again.warnings == c.warnings
    pool = (
        HEAD
        + """    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    pool = T.SMEMPool()
    As = pool.alloc((5, 256, 96), "float16")
    pool.commit()
    As[0, tx, 0] = A[tx, 0]
"""
    )
    (p,) = run_cell(pool, dict(lang_names()), arch="sm_90a", use_cache=False).values()
    assert any("240 KiB of shared memory" in w and "227 KiB" in w for w in p.warnings), p.warnings
    assert not run_cell(
        pool.replace("(5, 256, 96)", "(2, 256, 96)"), dict(lang_names()), arch="sm_90a", use_cache=False
    )["k"].warnings


def test_register_file_warning():
    from types import SimpleNamespace

    from txlab.diagnose import launchability

    fake = SimpleNamespace(
        arch="sm_90a",
        kernels=["k_kernel"],
        launch={"k_kernel": {"threads_per_block": 1024, "block": (1024, 1, 1)}},
        resources={"k_kernel": {"registers": 72, "static_smem_bytes": 0, "dynamic_smem_bytes": 0}},
    )
    (w,) = launchability(fake)
    assert "72 registers x 1024 threads" in w and "65,536" in w and "maxrregcount=64" in w
    fake.resources["k_kernel"]["registers"] = 64
    assert launchability(fake) == []


@pytest.mark.gpu
def test_warned_kernels_really_fail_to_launch_and_unwarned_ones_run():
    """What Compiled.warnings predicts is what the GPU does (the isolated worker keeps the fault)."""
    import numpy as np

    src = (
        HEAD.replace('(128,), "float32"', '(2048,), "float32"')
        + """    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([2048])
    B[tx] = T.float32(1.0)
"""
    )
    (wide,) = run_cell(src, {}, use_cache=False).values()
    assert wide.warnings
    a, b = np.zeros((128, 64), np.float16), np.zeros(2048, np.float32)
    with pytest.raises(txlab.KernelFault) as info:
        wide(a, b)
    assert info.value.kind in ("launch_config", "cuda_error")
    ok = src.replace("2048])", "1024])").replace("(2048,)", "(1024,)")
    (fine,) = run_cell(ok, {}, use_cache=False).values()
    assert not fine.warnings
    b = np.zeros(1024, np.float32)
    fine(a, b)
    assert (b == 1.0).all()


def test_an_arch_hint_keeps_the_instruction_nvcc_names():
    """The Hopper GEMM compiled for sm_90 (not sm_90a): nvcc names setmaxnreg, and the hint said
    "Tx.cuda.tcgen05.encode_matrix_descriptor needs sm_100a" -- a Blackwell name matched by its last
    part on the kernel's wgmma descriptor call. It now says what setmaxnreg needs."""
    from txlab.examples import hopper_gemm as hg
    from txlab.examples.gemm_config import parse_config

    with pytest.raises(txlab.CompileError) as info:
        txlab.compile(hg.gemm_kernel(256, 256, 256, parse_config("128x128x64_s4_c2")), arch="sm_90")
    err = info.value
    assert err.stage == "nvcc" and "setmaxnreg" in err.message
    assert "tcgen05" not in err.hint and "sm_100a needs" not in err.hint, err.hint
    assert err.hint.startswith("setmaxnreg.dec needs sm_90a") and "--arch sm_90a" in err.hint, err.hint


TWO_KERNELS = """from tvm.script import tirx as T


@T.prim_func
def needs_sm100(A: T.Buffer((32,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    A[tx] = T.cuda.fmul2_rn(A[tx], A[tx])


@T.prim_func
def float_index(A: T.Buffer((256,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([256])
    A[A[tx]] = T.float32(1)
"""


def _kernel_file(tmp_path, name: str, text: str):
    """``text`` written to ``tmp_path/name.py`` and imported: kernels whose spans name a real file."""
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_an_arch_hint_comes_from_the_failing_kernel_not_another_in_its_file(tmp_path):
    """A float used as an index is an nvcc error at its own line; the hint said "Tx.cuda.fmul2_rn
    needs sm_100a", a name of another kernel in the same file (the whole file was scanned). Names are
    now looked for in the failing kernel's own lines, and away from the error's line only when the
    error's text names them: here there is no arch hint, and the other kernel keeps its own."""
    mod = _kernel_file(tmp_path, "two_kernels", TWO_KERNELS)
    with pytest.raises(txlab.CompileError) as info:
        txlab.compile(mod.float_index, arch="sm_90a")
    err = info.value
    assert err.stage == "nvcc" and err.lineno == 17 and "A[A[tx]]" in err.source_line
    assert not err.hint or "fmul2_rn" not in err.hint, err.hint
    with pytest.raises(txlab.CompileError) as info:
        txlab.compile(mod.needs_sm100, arch="sm_90a")
    assert info.value.lineno == 9 and info.value.hint.startswith("Tx.cuda.fmul2_rn needs sm_100a"), info.value.hint


BF16_PARAM = """from tvm.script import tirx as T


@T.prim_func
def scale(X: T.Buffer((128,), "bfloat16"), Y: T.Buffer((128,), "bfloat16"), a: T.bfloat16):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([128])
    Y[tx] = X[tx] * a
"""


def test_a_bfloat16_scalar_parameter_is_named_with_the_fix(tmp_path):
    """TVM 0.27 cannot lower a kernel taking a bfloat16 scalar: its check ("kDLFloat (4 vs. 2)") came with no line
    and no hint. The error names the parameter at its line and says how to pass the value instead; TVM's text
    stays in the detail."""
    mod = _kernel_file(tmp_path, "bf16_param", BF16_PARAM)
    with pytest.raises(txlab.CompileError) as info:
        txlab.compile(mod.scale, arch="sm_90a")
    err = info.value
    assert err.stage == "lower" and "bfloat16 scalar parameter 'a'" in err.message
    assert err.lineno == 5 and "a: T.bfloat16" in err.source_line
    assert "T.float32" in err.hint and "kDLFloat" in err.detail


@pytest.mark.parametrize(
    ("body", "hint"),
    [
        ("    bx = Tx.cta_id(1)\n    tx = Tx.thread_id([256])\n    B[tx] = A[tx, 0]", "write Tx.cta_id([1])"),
        ("    bx = Tx.cta_id([1])\n    tx = Tx.thread_id([16])\n    B[tx] = A[tx]", "index every dimension"),
    ],
)
def test_first_hour_mistakes_get_their_fix(body, hint):
    """An extent given as an int and a 2-d buffer read with one index: TVM names an FFI signature; the hint names
    the fix."""
    src = (
        "@Tx.prim_func\n"
        'def k(A: Tx.Buffer((16, 16), "float32"), B: Tx.Buffer((256,), "float32")):\n'
        "    Tx.device_entry()\n" + body + "\n"
    )
    with pytest.raises(txlab.CompileError) as e:
        run_cell(src, dict(lang_names()), arch="sm_90a", use_cache=False)
    assert e.value.stage == "parse" and hint in str(e.value), (e.value.message, e.value.hint)


@pytest.mark.parametrize(
    ("where", "dtype", "want"),
    [
        ("annotation", "flaot32", "did you mean 'float32'"),
        ("match_buffer", "flaot32", "did you mean 'float32'"),
        ("match_buffer", "half", "TIRx spells it 'float16'"),  # close to 'handle': difflib alone said that
        ("annotation", "fp32", "TIRx spells it 'float32'"),  # no close spelling at all
        ("match_buffer", "double", "TIRx spells it 'float64'"),
        ("annotation", "fp16", "TIRx spells it 'float16'"),
    ],
)
def test_a_misspelt_dtype_suggests_the_dtype(where, dtype, want):
    if where == "annotation":
        sig, first = f'A: Tx.Buffer((256,), "{dtype}"), B: Tx.Buffer((256,), "float32")', ""
    else:
        sig = 'A_ptr: Tx.handle, B: Tx.Buffer((256,), "float32")'
        first = f'    A = Tx.match_buffer(A_ptr, (256,), "{dtype}")\n'
    src = (
        f"@Tx.prim_func\ndef k({sig}):\n{first}    Tx.device_entry()\n    Tx.cta_id([1])\n"
        "    tx = Tx.thread_id([256])\n    B[tx] = A[tx]\n"
    )
    with pytest.raises(txlab.CompileError) as e:
        run_cell(src, dict(lang_names()), arch="sm_90a", use_cache=False)
    assert want in str(e.value), (e.value.message, e.value.hint)


def test_static_shared_memory_past_48_kib_says_to_make_it_dynamic_where_ptxas_refuses_it():
    """100 KiB of T.alloc_shared: ptxas refuses it for sm_90 (its 48 KiB static limit: the error says to use
    dynamic shared memory) and takes it for sm_90a, where it launches (an H100 ran it, the result right,
    2026-12-07): no warning there."""
    src = (
        "@Tx.prim_func\n"
        'def big(X: Tx.Buffer((256,), "float32"), S: Tx.Buffer((256,), "float32")):\n'
        "    Tx.device_entry()\n    Tx.cta_id([1])\n    tx = Tx.thread_id([256])\n"
        '    sm = Tx.alloc_shared((25600,), "float32")\n'
        "    sm[tx] = X[tx]\n    Tx.cuda.cta_sync()\n    S[tx] = sm[255 - tx]\n"
    )
    with pytest.raises(txlab.CompileError) as e:
        run_cell(src, dict(lang_names()), arch="sm_90", use_cache=False)
    assert "static shared memory" in e.value.message and "SMEMPool" in (e.value.hint or ""), e.value
    (k,) = run_cell(src, dict(lang_names()), arch="sm_90a", use_cache=False).values()
    assert not any("static shared memory" in w for w in k.warnings), k.warnings


@pytest.mark.parametrize(
    ("body", "want"),
    [
        ("    B_ptr[tx] = A[tx]", 'declare B = Tx.match_buffer(B_ptr, (n,), "float32")'),  # a store through a handle
        ("    A[tx] = B_ptr[tx]", "B_ptr is a Tx.handle (a pointer), not a buffer"),  # a load through one
        ("    B[tx] = A[tx]", "B is not declared: B_ptr is its handle"),  # the match_buffer line left out
        ("    A[tx, 0] = A[tx]", "A has 1 dimension(s) and is indexed with 2"),
    ],
)
def test_a_buffer_used_without_its_declaration_gets_the_declaration_to_write(body, want):
    """TVM's own messages name an FFI signature ("Expected `ir.Var` but got `ir.Var`") or a C++ check; the hint
    names the handle and the match_buffer line that declares its buffer."""
    src = (
        "@Tx.prim_func\ndef k(A_ptr: Tx.handle, B_ptr: Tx.handle):\n"
        '    A = Tx.match_buffer(A_ptr, (256,), "float32")\n'
        "    Tx.device_entry()\n    Tx.cta_id([1])\n    tx = Tx.thread_id([256])\n" + body + "\n"
    )
    with pytest.raises(txlab.CompileError) as e:
        run_cell(src, dict(lang_names()), arch="sm_90a", use_cache=False)
    assert e.value.stage == "parse" and want in str(e.value), (e.value.message, e.value.hint)
    assert e.value.lineno == 7
