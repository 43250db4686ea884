"""txlab.compile / Compiled / CompileError / cache: real toolchain, no GPU needed."""

import multiprocessing as mp
import os
from pathlib import Path

import pytest

import txlab
import txlab.arch as arch_mod
from txlab.magic import run_cell

KERNELS = (Path(__file__).parent / "kernels" / "basics.py").read_text()


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """The basic kernels compiled cold, into a cache of this module's own: other test modules
    compile the same kernels, and a test here checks that the second compile is the cache hit."""
    from txlab.magic import forget_cells

    mp = pytest.MonkeyPatch()
    mp.setenv("TXLAB_CACHE_DIR", str(tmp_path_factory.mktemp("compile-cache")))
    forget_cells()  # %%tirx's in-memory cells too
    yield run_cell(KERNELS, {}, arch="sm_90a")
    mp.undo()


def test_artifacts_come_from_the_toolchain(compiled):
    c = compiled["row_sum_smem"]
    assert isinstance(c, txlab.Compiled)
    assert c.arch == "sm_90a"
    assert "def row_sum_smem" in c.script
    assert "__global__" in c.cuda_source and "row_sum_smem_kernel" in c.cuda_source
    assert ".target sm_90a" in c.ptx
    assert c.cubin[:4] == b"\x7fELF"
    assert "row_sum_smem_kernel" in c.sass and "BAR.SYNC" in c.sass
    r = c.resources["row_sum_smem_kernel"]
    assert set(r) >= {
        "registers",
        "static_smem_bytes",
        "dynamic_smem_bytes",
        "spill_store_bytes",
        "spill_load_bytes",
        "stack_bytes",
    }
    assert r["registers"] > 0
    assert r["static_smem_bytes"] == 256 * 4
    assert c.launch["row_sum_smem_kernel"]["grid"] == (4096, 1, 1)
    assert c.launch["row_sum_smem_kernel"]["block"] == (256, 1, 1)
    assert c.launch["row_sum_smem_kernel"]["cluster"] is None
    assert set(c.timings) == {"lower", "codegen", "linemap", "nvcc", "ptxas", "disasm"}  # disasm: lazy, above


def test_cuda_source_alone_is_what_compile_holds(compiled):
    from txlab.compiler import cuda_source

    c = compiled["row_sum_smem"]
    assert cuda_source(c.ir_module, "sm_90a") == c.cuda_source
    from txlab.errors import ArchError

    with pytest.raises(ArchError, match="'sm_9000' is not a CUDA arch"):
        cuda_source(c.ir_module, "sm_9000")


def test_symbolic_grid_and_params(compiled):
    c = compiled["scale"]
    grid = c.launch["scale_kernel"]["grid"]
    assert isinstance(grid[0], str) and "n" in grid[0]
    assert [p["name"] for p in c.params] == ["A", "B", "n"]
    assert c.params[0] == {"function": "scale", "name": "A", "kind": "buffer", "shape": ["n"], "dtype": "float32"}
    assert c.params[2]["kind"] == "scalar" and c.params[2]["dtype"] == "int32"


def test_warp_sum_uses_shuffles_not_shared_memory(compiled):
    c = compiled["warp_sums"]
    assert len(c.instructions(r"^SHFL\.BFLY")) == 5
    assert c.resources["warp_sums_kernel"]["static_smem_bytes"] == 0


def test_cluster_and_dynamic_shared_memory_in_launch():
    src = """
@T.prim_func
def clustered(A: T.Buffer((1024,), "float32")):
    T.device_entry()
    for clusterCtaIdx in T.thread_binding(2, thread="clusterCtaIdx.x"):
        bx = T.cta_id([4])
        tx = T.thread_id([128])
        sm = T.alloc_buffer((4096,), "float32", scope="shared.dyn", align=128)
        sm[tx] = A[tx]
        T.cuda.cta_sync()
        A[tx] = sm[127 - tx]
"""
    c = run_cell(src, {}, arch="sm_90a")["clustered"]
    launch = c.launch["clustered_kernel"]
    assert launch["cluster"] == (2, 1, 1)
    assert launch["dynamic_smem_bytes"] == 4096 * 4
    assert c.resources["clustered_kernel"]["dynamic_smem_bytes"] == 4096 * 4


def test_other_arch_is_really_compiled_for_it():
    src = KERNELS.split("\n\n@T.prim_func")[0]
    c = run_cell(src, {}, arch="sm_100a")["scale"]
    assert ".target sm_100a" in c.ptx
    assert "sm_100a" in c.sass


def test_cache_hit_returns_identical_artifacts(compiled):
    first = compiled["scale"]
    again = txlab.compile(first.ir_module, arch="sm_90a", name="scale")
    assert again.cache_hit and not first.cache_hit
    assert again.cubin == first.cubin and again.sass == first.sass and again.resources == first.resources
    assert again.compile_seconds < 0.5


def test_cache_key_changes_with_the_kernel_and_the_arch(compiled):
    c = compiled["scale"]
    other = run_cell(KERNELS.split("\n\n@T.prim_func")[0].replace("2.0", "3.0"), {}, arch="sm_90a")["scale"]
    assert other.key != c.key and not other.cache_hit
    assert txlab.compile(c.ir_module, arch="sm_80", name="scale").key != c.key


def _compile_in_child(args):
    cache_dir, src = args
    os.environ["TXLAB_CACHE_DIR"] = cache_dir
    from txlab.magic import run_cell as rc

    c = rc(src, {}, arch="sm_90a")["scale"]
    return c.cubin, c.cache_hit


def test_concurrent_writers_publish_one_entry(tmp_path):
    src = KERNELS.split("\n\n@T.prim_func")[0].replace("2.0", "5.0")
    ctx = mp.get_context("spawn")
    with ctx.Pool(3) as pool:
        results = pool.map(_compile_in_child, [(str(tmp_path), src)] * 3)
    cubins = {r[0] for r in results}
    assert len(cubins) == 1
    entries = [p for p in tmp_path.glob("compile-v*/*/*") if p.is_dir()]
    assert len(entries) == 1, entries  # no leftover temporary folders either
    assert (entries[0] / "meta.json").is_file()


def test_parse_errors_name_the_users_line():
    src = KERNELS.split("\n\n@T.prim_func")[0].replace("A[i] * T.float32(2.0)", "A[i] * scale_factor")
    with pytest.raises(txlab.CompileError) as info:
        run_cell(src, {}, arch="sm_90a")
    err = info.value
    assert err.stage == "parse"
    assert "scale_factor" in err.message
    expected = next(i for i, l in enumerate(src.splitlines(), 1) if "scale_factor" in l)
    assert err.lineno == expected and "scale_factor" in err.source_line


def test_a_python_error_in_a_kernel_keeps_its_type():
    """TVMScript's parser turns a Python error in the kernel (1 / 0, a misspelt attribute) into a diagnostic whose
    text is the error's alone: the message said 'division by zero'; it names the error's type too."""
    src = KERNELS.split("\n\n@T.prim_func")[0].replace("A[i] * T.float32(2.0)", "A[i] * (1 / 0)")
    with pytest.raises(txlab.CompileError) as info:
        run_cell(src, {}, arch="sm_90a")
    err = info.value
    assert err.stage == "parse" and err.message == "ZeroDivisionError: division by zero", err.message
    assert "(1 / 0)" in err.source_line


@pytest.mark.parametrize(
    "typo,want", [("T.cuda.cta_summ(A[i], 8, A.data)", "T.cuda.cta_sum"), ("A[T.cta_idd([1])]", "T.cta_id")]
)
def test_a_misspelt_api_name_gets_the_closest_names(typo, want):
    """A misspelt TIRx name is an AttributeError on a namespace object (``'CUDANamespace' object``, ``module
    'tvm.tirx.script'``); the hint names the closest names, spelt as the user's line spells the object."""
    src = KERNELS.split("\n\n@T.prim_func")[0].replace("A[i] * T.float32(2.0)", typo)
    with pytest.raises(txlab.CompileError) as info:
        run_cell(src, {}, arch="sm_90a")
    err = info.value
    assert err.stage == "parse" and err.message.startswith("AttributeError: ") and typo in err.source_line
    assert err.hint == f"did you mean {want}?", err.hint
    assert f"hint: did you mean {want}?" in str(err)  # a terminal, a log, nbconvert show str(err)


def test_python_syntax_error():
    with pytest.raises(txlab.CompileError) as info:
        run_cell("@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    A[0] = (\n", {}, arch="sm_90a")
    assert info.value.stage == "parse" and info.value.lineno is not None


def test_lowering_failure_is_a_lower_error_at_the_users_line():
    src = """
@T.prim_func
def k(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float16")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([32])
    tile.cta.copy(B[0:64], A[0:64])
"""
    with pytest.raises(txlab.CompileError) as info:
        run_cell(src, {}, arch="sm_90a")
    err = info.value
    assert err.stage == "lower"
    assert "dispatch failed" in err.message and "copy" in err.message
    assert err.lineno == 7 and "tile.cta.copy" in err.source_line
    assert len(str(err).splitlines()) <= 4  # short, no traceback


def test_arch_specific_instruction_says_which_arch_it_needs():
    src = """
@T.prim_func
def tmem(A: T.Buffer((4,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    tm = T.shared_scalar("uint32")
    T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](T.address_of(tm), T.uint32(32))
"""
    with pytest.raises(txlab.CompileError) as info:
        run_cell(src, {}, arch="sm_90a")
    err = info.value
    assert err.stage in ("nvcc", "ptxas")
    assert "tcgen05" in err.message and "sm_100a" in err.hint
    assert err.lineno == 8 and "tcgen05.alloc" in err.source_line
    assert run_cell(src, {}, arch="sm_100a")["tmem"].cubin[:4] == b"\x7fELF"


def test_bad_arch_and_bad_input():
    with pytest.raises(txlab.ArchError, match="sm_90a"):
        txlab.compiler.resolve_arch("banana")
    with pytest.raises(TypeError, match="prim_func"):
        txlab.compile(lambda: None, arch="sm_90a")


def test_default_arch_without_gpu_is_said_once(capsys, monkeypatch):
    from txlab import compiler, device

    if device.has_gpu():
        pytest.skip("a GPU is present: the default arch is the GPU's")
    arch_mod.forget_default_arch_notice()
    assert compiler.resolve_arch(None) == "sm_90a"
    assert compiler.resolve_arch(None) == "sm_90a"
    said = capsys.readouterr()
    # an info line (stdout), not an error (stderr is a pink box in JupyterLab)
    assert said.out.count("compiled for sm_90a") == 1 and "no GPU here" not in said.err


def test_display_is_tabbed_and_highlighted(compiled):
    from txlab.display import html_of

    html = html_of(compiled["warp_sums"])
    for tab in ("Resources", "TVMScript", "CUDA C", "PTX", "SASS"):
        assert f">{tab}</label>" in html
    assert 'class="txlab-code hl"' in html and "SHFL" in html
    assert "<script" not in html  # readable in exported HTML without JavaScript
    from txlab.display import compiled_html

    only = compiled_html(compiled["warp_sums"], show=["sass"])
    assert ">SASS</label>" in only and ">PTX</label>" not in only
    with pytest.raises(ValueError, match="unknown --show"):
        compiled_html(compiled["warp_sums"], show=["bogus"])


def test_to_dict_and_plot(compiled):
    import matplotlib

    matplotlib.use("Agg")
    d = compiled["scale"].to_dict()
    assert d["arch"] == "sm_90a" and d["kernels"] == ["scale_kernel"]
    fig = compiled["scale"].plot()
    assert len(fig.axes) >= 2


REG_HEAVY = """@T.prim_func
def regheavy(X: T.Buffer((128 * 128, 64), "float32"), out: T.Buffer((128 * 128,), "float32")):
    T.device_entry()
    bx = T.cta_id([128])
    tx = T.thread_id([128])
    acc = T.alloc_local((64,), "float32")
    for j in T.unroll(64):
        acc[j] = X[bx * 128 + tx, j]
    for it in T.serial(8):
        for j in T.unroll(64):
            acc[j] = acc[j] * acc[(j + 1) % 64] + acc[(j + 7) % 64]
    s = T.alloc_local((1,), "float32")
    s[0] = T.float32(0)
    for j in T.unroll(64):
        s[0] = s[0] + acc[j]
    out[bx * 128 + tx] = s[0]
"""


def test_maxrregcount_caps_a_kernel_with_launch_bounds():
    """TVM gives every kernel __launch_bounds__ (PTX .maxntid), and ptxas then ignores -maxrregcount: the option
    changed nothing (72 registers either way). txlab writes .maxnreg into each entry, and the cap holds."""
    plain = run_cell(REG_HEAVY, {}, arch="sm_90a")["regheavy"]
    capped = txlab.compile(plain.ir_module, arch="sm_90a", name="regheavy", maxrregcount=32)
    free, cap = plain.resources["regheavy_kernel"]["registers"], capped.resources["regheavy_kernel"]["registers"]
    assert free > 32 >= cap, (free, cap)
    assert ".maxnreg 32" in capped.ptx and ".maxnreg" not in plain.ptx and ".maxntid 128" in capped.ptx


LAUNCH = """
@Tx.prim_func
def tr(X: Tx.Buffer((32, 32), "float32"), Y: Tx.Buffer((32, 32), "float32")):
    Tx.device_entry()
    bx = Tx.cta_id([1])
    BINDINGS
    Y[ty, tx] = X[ty, tx]
"""


@pytest.mark.parametrize(
    "bindings, line, words, hint",
    [
        (
            "tx = Tx.thread_id([32])\n    ty = Tx.thread_id([16])",
            "ty = Tx.thread_id([16])",
            "bound twice with different extents",
            "tx, ty = Tx.thread_id([32, 16])",
        ),
        (
            "tx = Tx.thread_id([0])\n    ty = tx",
            "tx = Tx.thread_id([0])",
            "a launch extent of 0",
            "at least 1",
        ),
    ],
)
def test_a_launch_index_the_program_check_refuses_is_named_at_its_line(bindings, line, words, hint):
    """TVMScript says "Program is not well-formed ... consider setting check_well_formed ... @R.function" at the
    decorator; the failed check underneath names the problem, at the binding's line, with the fix."""
    src = LAUNCH.replace("BINDINGS", bindings)
    with pytest.raises(txlab.CompileError) as info:
        run_cell(src, {}, arch="sm_90a")
    err = info.value
    assert err.source_line.strip() == line and words in err.message and hint in err.hint, str(err)
    assert "check_well_formed" not in str(err)


def test_two_one_dimensional_thread_ids_are_the_same_index_and_say_so():
    """``tx = Tx.thread_id([32]); ty = Tx.thread_id([32])`` compiles (both are threadIdx.x, ``int ty =
    ((int)threadIdx.x)``): a warning names it and the 2-D spelling; one 2-D call has none."""
    (c,) = run_cell(
        LAUNCH.replace("BINDINGS", "tx = Tx.thread_id([32])\n    ty = Tx.thread_id([32])"), {}, arch="sm_90a"
    ).values()
    (w,) = c.warnings
    assert "tx and ty are the same threadIdx.x" in w and "tx, ty = Tx.thread_id([32, 8])" in w
    (c,) = run_cell(LAUNCH.replace("BINDINGS", "tx, ty = Tx.thread_id([32, 32])"), {}, arch="sm_90a").values()
    assert c.warnings == []


def test_a_kernel_looked_up_by_its_function_name_and_a_bad_regex_are_named():
    """``c.resources["scale"]`` was a bare KeyError('scale') (the device kernel is ``scale_kernel``);
    ``c.instructions("[")`` a raw re.error."""
    (c,) = run_cell(KERNELS.split("\n\n@T.prim_func")[0], {}, arch="sm_90a").values()
    kernel = c.kernels[0]
    fn = kernel.removesuffix("_kernel")
    with pytest.raises(KeyError, match=rf"did you mean '{kernel}'"):
        c.resources[fn]
    with pytest.raises(KeyError, match=rf"the kernels of {c.name} are '{kernel}'"):
        c.launch["nope"]
    assert c.resources[kernel]["registers"] > 0
    with pytest.raises(txlab.errors.InputError, match="not a regular expression"):
        c.instructions("[")


@pytest.mark.parametrize("annotation", ["int", "Tx.int", "float"])
def test_a_scalar_annotated_with_a_python_type_is_told_the_dtype_spelling(annotation):
    """``n: int`` gave TVM's 'Mismatched type on argument #1 when calling script.ir_builder.tirx.Arg'."""
    src = LAUNCH.replace("BINDINGS", "tx, ty = Tx.thread_id([32, 32])").replace(
        'Y: Tx.Buffer((32, 32), "float32"))', f'Y: Tx.Buffer((32, 32), "float32"), m: Tx.int32, n: {annotation})'
    )
    with pytest.raises(txlab.CompileError) as info:
        run_cell(src, {}, arch="sm_90a")
    assert f"n: {annotation}: annotate a scalar parameter with a TIRx dtype, e.g. n: Tx.int32" in str(info.value)


TILE_FALLBACK = """
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, TileLayout


@T.prim_func
def fallback(A_ptr: T.handle, C_ptr: T.handle):
    A = T.match_buffer(A_ptr, (16, 64), "float32", layout=TileLayout(S[(16, 64)]))
    C = T.match_buffer(C_ptr, (16,), "float32", layout=TileLayout(S[(16,)]))
    T.device_entry()
    _bx = T.cta_id([1])
    _tid = T.thread_id([64])
    As = T.alloc_buffer((16, 64), "float32", scope="shared", layout=TileLayout(S[(16, 64)]))
    Cs = T.alloc_buffer((16,), "float32", scope="shared", layout=TileLayout(S[(16,)]))
    Tx.cta.copy(As[:, :], A[:, :])
    Tx.cta.fill(Cs[:], T.float32(1.0))
    T.cuda.cta_sync()
    Tx.cta.copy(C[:], Cs[:])  # shared -> global: one thread copies
"""


def test_a_tile_primitives_slow_fallback_is_a_warning_at_its_line_also_on_a_cache_hit(tmp_path, monkeypatch):
    """TVM warns (a Python UserWarning, raw on stderr, with TVM's file and line) when a tile copy falls back to one
    thread; the build keeps it as a warning at the user's line, and a cache hit says it too."""
    import importlib.util

    monkeypatch.setenv("TXLAB_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "fallback_kernel.py"
    path.write_text(TILE_FALLBACK)
    spec = importlib.util.spec_from_file_location("fallback_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    line = TILE_FALLBACK.splitlines().index("    Tx.cta.copy(C[:], Cs[:])  # shared -> global: one thread copies") + 1
    first = txlab.compile(mod.fallback, arch="sm_90a")
    again = txlab.compile(mod.fallback, arch="sm_90a")
    assert not first.cache_hit and again.cache_hit
    for c in (first, again):
        (w,) = [w for w in c.warnings if "fallback" in w]
        assert w.startswith(f"line {line}: Tx.cta.copy: copy/fallback (scalar single-thread)"), c.warnings


def test_a_register_cap_ptxas_cannot_meet_is_a_warning():
    """``maxrregcount`` below what the code needs: ptxas uses more and said nothing; now a warning names both."""
    c = txlab.compile(_softmax_like(), arch="sm_90a", maxrregcount=16)
    regs = c.resources[c.name + "_kernel"]["registers"]
    assert regs > 16
    assert any(f"maxrregcount=16 not met: ptxas used {regs} registers" in w for w in c.warnings), c.warnings
    assert not any("maxrregcount" in w for w in txlab.compile(_softmax_like(), arch="sm_90a").warnings)


def _softmax_like():
    from tvm.script import tirx as Tx

    @Tx.prim_func
    def softish(X: Tx.Buffer((64, 256), "float32"), Y: Tx.Buffer((64, 256), "float32")):
        Tx.device_entry()
        row = Tx.cta_id([64])
        tx = Tx.thread_id([256])
        scratch = Tx.alloc_shared((8,), "float32")
        x = X[row, tx]
        m = Tx.cuda.cta_max(x, 8, scratch.data)
        Tx.cuda.cta_sync()
        e = Tx.exp(x - m)
        Y[row, tx] = e / Tx.cuda.cta_sum(e, 8, scratch.data)

    return softish
