"""Argument checks before NoGPUError, read-only outputs, %%tirx parsing, arch table, CLI exit
codes (issue 20, item 11 outside the timeline)."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import txlab
from txlab import compiler, device
from txlab.errors import ArchError, InputError, NoGPUError, TxlabError
from txlab.magic import parse_magic_line, run_cell

ROOT = Path(__file__).resolve().parents[1]
KERNELS = (Path(__file__).parent / "kernels" / "basics.py").read_text()
SCALE = KERNELS.split("\n\n@T.prim_func")[0]


@pytest.fixture(scope="module")
def scale():
    return run_cell(SCALE, {}, arch="sm_90a")["scale"]


@pytest.fixture
def no_gpu(monkeypatch):
    """No GPU, and txlab.config.device = "gpu" (insisting on one: under the default "auto" calls
    and checks run on the emulator instead, tests/test_no_gpu.py)."""
    monkeypatch.setattr(device, "probe", lambda: device.GPUInfo(False, "test: no GPU here"))
    monkeypatch.setattr(txlab.config, "device", "gpu")


# ---- arguments are checked before the GPU is asked for ---------------------------------------
@pytest.mark.parametrize(
    "args, needle",
    [
        ((np.zeros(8, np.float64), np.zeros(8, np.float32), 8), "dtype float64"),
        ((np.zeros(8, np.float32), np.zeros(8, np.float32)), "takes 3 argument"),
        ((np.zeros((2, 4), np.float32), np.zeros(8, np.float32), 8), "2-d"),
        ((np.zeros(8, np.float32), np.zeros(9, np.float32), 8), "axis 0"),
    ],
)
@pytest.mark.parametrize("entry", ["call", "bench", "check"])
def test_wrong_arguments_are_reported_before_no_gpu(scale, no_gpu, args, needle, entry):
    with pytest.raises(InputError) as info:
        if entry == "call":
            scale(*args)
        elif entry == "bench":
            txlab.bench(scale, *args)
        else:
            txlab.check(scale, list(args), lambda *a: a[0] * 2)
    msg = str(info.value)
    assert needle in msg and "needs a CUDA GPU" in msg and "test: no GPU here" in msg, msg


def test_good_arguments_without_gpu_still_say_no_gpu(scale, no_gpu):
    with pytest.raises(NoGPUError):
        scale(np.zeros(8, np.float32), np.zeros(8, np.float32), 8)


def test_read_only_output_array_is_refused(scale, no_gpu):
    out = np.zeros(8, np.float32)
    out.setflags(write=False)
    with pytest.raises(InputError, match="read-only") as info:
        scale(np.zeros(8, np.float32), out, 8)
    assert info.value.param == "B_ptr" or "B" in info.value.param


# ---- %%tirx line ------------------------------------------------------------------------------
def test_unbalanced_quote_is_a_clear_error():
    with pytest.raises(TxlabError, match="cannot read the options.*No closing quotation"):
        parse_magic_line("--show 'resources,sass")


def test_repeated_arch_is_an_error():
    with pytest.raises(TxlabError, match="--arch is given twice"):
        parse_magic_line("--arch sm_90a --arch sm_100a")


def test_abbreviations_are_refused():
    with pytest.raises(TxlabError, match="unknown option --arc; did you mean --arch"):
        parse_magic_line("--arc sm_90a")
    assert parse_magic_line("--arch sm_90a --no-cache").arch == "sm_90a"


def test_python_error_in_the_cell_is_that_error():
    src = "x = 1\ny = {}['missing']\n"
    with pytest.raises(KeyError):
        run_cell(src, {}, arch="sm_90a")
    with pytest.raises(ZeroDivisionError):
        run_cell("def helper():\n    return 1 / 0\nhelper()\n", {}, arch="sm_90a")


def test_tvmscript_errors_are_still_parse_errors():
    src = SCALE.replace("A[i] * T.float32(2.0)", "A[i] * undefined_name")
    with pytest.raises(txlab.CompileError) as info:
        run_cell(src, {}, arch="sm_90a")
    assert info.value.stage == "parse"


# ---- arch table -------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ["sm_50", "sm_99", "sm_90f", "sm_80a", "sm_70", "sm_61", "sm_130"])
def test_archs_nvcc_cannot_target_are_arch_errors(arch):
    with pytest.raises(ArchError) as info:
        compiler.resolve_arch(arch)
    assert "sm_90a" in str(info.value) and "sm_100a" in str(info.value)  # the supported list


def test_arch_error_comes_before_nvcc(scale, monkeypatch):
    from txlab import toolchain

    def no(*a, **k):
        raise AssertionError("nvcc was reached")

    monkeypatch.setattr(toolchain, "cuda_to_ptx", no)
    with pytest.raises(ArchError):
        txlab.compile(scale.ir_module, arch="sm_90f", name="scale")


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_89", "sm_90a", "sm_100a", "sm_100f", "sm_120", "90"])
def test_supported_archs_pass(arch):
    assert compiler.resolve_arch(arch).startswith("sm_")


# ---- CLI exit codes -----------------------------------------------------------------------------
def _cli(*argv):
    return subprocess.run(
        [sys.executable, "-m", "txlab.cli", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )


def test_cli_empty_file_fails(tmp_path):
    f = tmp_path / "empty.py"
    f.write_text("")
    out = _cli("compile", str(f))
    assert out.returncode != 0 and "empty" in out.stderr


def test_cli_unknown_emit_fails(tmp_path):
    f = tmp_path / "k.py"
    f.write_text("from tvm.script import tirx as T\n" + SCALE)
    out = _cli("compile", str(f), "--emit", "resources,bogus")
    assert out.returncode != 0 and "bogus" in out.stderr


def test_cli_file_without_kernels_and_python_errors_fail(tmp_path):
    f = tmp_path / "none.py"
    f.write_text("x = 1\n")
    out = _cli("compile", str(f))
    assert out.returncode != 0 and "no @T.prim_func" in out.stderr
    g = tmp_path / "boom.py"
    g.write_text("x = 1\nraise RuntimeError('boom')\n")
    out = _cli("compile", str(g))
    assert out.returncode == 1 and "RuntimeError at line 2" in out.stderr and "Traceback" not in out.stderr
    out = _cli("compile", str(tmp_path / "missing.py"))
    assert out.returncode == 1 and "does not exist" in out.stderr and "Traceback" not in out.stderr


def test_cli_compile_errors_name_the_file(tmp_path):
    """A syntax error and a TVMScript error in a file given to ``txlab compile`` say which file, as Python would
    (they said "at line 3" only: the text runs as a cell under a pseudo file name)."""
    f = tmp_path / "bad.py"
    f.write_text("from tvm.script import tirx as T\n" + SCALE.replace('"float32"', '"flaot32"', 1))
    out = _cli("compile", str(f))
    assert out.returncode == 1 and f" of {f}:" in out.stderr and "tirx-cell" not in out.stderr, out.stderr
    g = tmp_path / "syntax.py"
    g.write_text("x = (\n")
    out = _cli("compile", str(g))
    assert out.returncode == 1 and f"at line 1 of {g}: Python syntax error" in out.stderr, out.stderr


def test_cli_emit_of_one_text_prints_that_text_alone(tmp_path):
    """``txlab compile k.py --emit ptx > k.ptx`` writes a PTX file: notices, progress and the kernel's name go to
    stderr."""
    f = tmp_path / "k.py"
    f.write_text("from tvm.script import tirx as T\n" + SCALE)
    out = _cli("compile", str(f), "--emit", "ptx", "--arch", "sm_90a")
    assert out.returncode == 0, out.stderr
    assert out.stdout.lstrip().startswith("//") and re.search(r"\.target\s+sm_90a", out.stdout), out.stdout[:300]
    assert "txlab:" not in out.stdout and "<Compiled" not in out.stdout and "<Compiled" in out.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("isolation", ["inline", "process"])
def test_on_a_gpu_checks_come_first_and_good_runs_work(scale, isolation, monkeypatch):
    monkeypatch.setattr(txlab.config, "isolation", isolation)
    c = txlab.compile(scale.ir_module, name="scale")  # the local GPU's arch
    a = np.arange(8, dtype=np.float32)
    b = np.zeros(8, np.float32)
    c(a, b, 8)
    assert np.array_equal(b, 2 * a)
    ro = np.zeros(8, np.float32)
    ro.setflags(write=False)
    with pytest.raises(InputError, match="read-only"):
        c(a, ro, 8)
    with pytest.raises(InputError) as info:
        c(a.astype(np.float64), b, 8)
    assert "needs a CUDA GPU" not in str(info.value)
    assert txlab.check(c, [a, np.zeros(8, np.float32), 8], lambda x, y, n: 2 * x).ok


# ---- the line map's queries and the static analyses check their arguments -----------------------
@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda m: m.sass_for(None), "sass_for takes a user line number (an int"),  # was the end-of-kernel NOPs
        (lambda m: m.sass_for("19"), "sass_for takes a user line number (an int"),  # was [] silently
        (lambda m: m.cuda_for(19.5), "cuda_for takes a user line number (an int"),
        (lambda m: m.sass_for(1000), "sass_for(1000): "),  # past the source: was [] (as a line with no code)
        (lambda m: m.ptx_for(0), "ptx_for(0): "),
        (lambda m: m.line_of_sass("zz"), "'zz' is not a SASS offset"),  # was int()'s bare ValueError
        (lambda m: m.line_of_sass(1.5), "offset 1.5 is not a SASS byte offset"),
        (lambda m: m.line_of_sass(-16), "offset -16 is negative"),  # was None, as for an offset with no line
        (lambda m: m.line_of_sass(0x10, kernel="nope"), "no kernel 'nope' in this module; its kernels: "),
        (lambda m: m.line_of_sass(0x100000), "offset 0x100000 is past the last instruction"),  # was None
        (lambda m: m.line_of_sass(0x18), "offset 0x18 is not at an instruction"),  # was None
    ],
)
def test_source_map_queries_say_what_they_take(scale, call, needle):
    with pytest.raises(InputError) as info:
        call(scale.source_map)
    assert needle in str(info.value), info.value
    if "'nope'" in needle:
        assert str(info.value).endswith(", ".join(scale.source_map.kernels))
    assert scale.source_map.sass_for(np.int64(scale.source_map.lines()[0]))  # numpy ints are line numbers too


def _grid_of_4():
    from tvm.script import tirx as T

    @T.prim_func
    def four(A: T.Buffer((1024,), "float32")):
        T.device_entry()
        bx = T.cta_id([4])
        tx = T.thread_id([256])
        s = T.alloc_shared((256,), "float32")
        s[tx] = A[bx * 256 + tx]
        T.cuda.cta_sync()
        A[bx * 256 + tx] = s[255 - tx]

    return four


@pytest.mark.parametrize("analysis", ["coalescing", "bank_conflicts"])
@pytest.mark.parametrize(
    "cta, needle",
    [
        ((9999, 0, 0), "cta=(9999, 0, 0) is outside the grid (4, 1, 1) of four_kernel"),
        ((-1, 0, 0), "cta=(-1, 0, 0) has a negative index"),
        ("0", "cta='0' is not a CTA index"),
        ((1.0, 0, 0), "is not a CTA index"),
    ],
)
def test_static_analyses_refuse_a_cta_the_launch_does_not_have(analysis, cta, needle):
    fn = txlab.pools.coalescing if analysis == "coalescing" else txlab.banks.bank_conflicts
    with pytest.raises(InputError) as info:
        fn(_grid_of_4(), arch="sm_90a", cta=cta)
    assert needle in str(info.value) and info.value.param == "cta", info.value
    assert fn(_grid_of_4(), arch="sm_90a", cta=(3, 0, 0))  # the last CTA is one


@pytest.mark.parametrize("analysis", ["coalescing", "bank_conflicts"])
def test_static_analyses_refuse_an_arch_that_is_not_one(analysis):
    fn = txlab.pools.coalescing if analysis == "coalescing" else txlab.banks.bank_conflicts
    with pytest.raises(ArchError, match="'sm_13' is not a CUDA arch"):
        fn(_grid_of_4(), arch="sm_13")


@pytest.mark.parametrize("dyn", [-5, 1.5, True, "0"])
def test_occupancy_refuses_a_bad_dynamic_smem_size(scale, dyn):
    """occupancy_of(..., dynamic_smem_bytes=-5) returned a result; calculate() already refused negatives."""
    with pytest.raises(InputError, match="dynamic_smem_bytes"):
        txlab.occupancy_of(scale, dynamic_smem_bytes=dyn)


@pytest.mark.parametrize("name", [42, None, ["Tx.cuda.atomic_add"]])
def test_api_help_of_a_non_name_is_a_typed_error(name):
    """txlab.api.help(42) failed with AttributeError ('int' object has no attribute 'strip')."""
    with pytest.raises(TxlabError, match="takes an API name as a string"):
        txlab.api.help(name)


def test_api_verify_without_a_gpu_is_one_line(monkeypatch, capsys):
    """python -m txlab.api verify printed NoGPUError's traceback where python -m txlab prints a line."""
    from txlab.api import cli

    def no(**kw):
        raise NoGPUError("verifying the API examples needs a CUDA GPU")

    monkeypatch.setattr(cli, "verify_all", no)
    assert cli.main(["verify"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("python -m txlab.api verify: verifying") and "Traceback" not in err


AXPY = """
@T.prim_func
def axpy(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32"), alpha: T.float32, h: T.float16):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([8])
    Y[tx] = X[tx] * alpha + T.Cast("float32", h)
"""


@pytest.mark.parametrize(
    "alpha, h, needle",
    [
        (1e40, 1.0, r"= 1e\+40 does not fit in float32"),
        (1.0, 70000.0, "= 70000 does not fit in float16"),
        (True, 1.0, "is a bool; alpha is float32"),
    ],
)
def test_a_float_scalar_that_would_arrive_as_inf_or_a_bool_is_named(alpha, h, needle, no_gpu):
    """1e40 for a float32 arrived as inf with a numpy RuntimeWarning; True said 'must be a Python int for float32'."""
    k = run_cell(AXPY, {}, arch="sm_90a")["axpy"]
    x = np.ones(8, np.float32)
    with pytest.raises(InputError, match=needle):
        k(x, np.zeros_like(x), alpha, h)


def test_a_kernel_called_with_keyword_arguments_names_its_parameters(scale):
    """scale(A_ptr=a, ...) said 'launch() got an unexpected keyword argument', naming an internal function."""
    a = np.ones(8, np.float32)
    with pytest.raises(InputError, match=r"takes its arguments by position, in parameter order: scale\(A, B, n\)"):
        scale(A_ptr=a, B_ptr=np.zeros_like(a), n=8)
