"""The %%tirx cell magic, in a real IPython shell."""

import pytest

IPython = pytest.importorskip("IPython")

SCALE = """
@T.prim_func
def scale(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([256])
    B[tx] = A[tx] * T.float32(factor)

def helper():
    return "defined in the cell"
"""


@pytest.fixture(scope="module")
def ip():
    from IPython.testing import globalipapp

    shell = globalipapp.start_ipython() or globalipapp.get_ipython()  # one global shell per session
    shell.run_line_magic("load_ext", "txlab")
    return shell


def test_cell_binds_compiled_kernels_and_other_names(ip):
    import txlab

    ip.user_ns["factor"] = 3.0  # notebook names are visible in the cell
    ip.run_cell_magic("tirx", "--arch sm_90a --quiet", SCALE)
    assert isinstance(ip.user_ns["scale"], txlab.Compiled)
    assert ip.user_ns["scale"].arch == "sm_90a"
    assert ip.user_ns["helper"]() == "defined in the cell"
    assert "3.0" in ip.user_ns["scale"].cuda_source or "0x1.8p+1f" in ip.user_ns["scale"].cuda_source


def test_second_run_is_served_from_the_cache(ip):
    ip.user_ns["factor"] = 3.0
    ip.run_cell_magic("tirx", "--arch sm_90a --quiet", SCALE)
    assert ip.user_ns["scale"].cache_hit


def test_lang_names_are_in_scope_without_imports(ip):
    from txlab.magic import tirx_namespace

    ns = tirx_namespace()
    for name in (
        "T",
        "Tx",
        "tile",
        "Pipeline",
        "PipelineState",
        "TMABar",
        "MBarrier",
        "ClusterPersistentScheduler2D",
        "SMEMPool",
        "WarpgroupRole",
    ):
        assert name in ns, name


def test_errors_are_short_and_the_shell_survives(ip, capsys):
    result = ip.run_cell("%%tirx --arch sm_90a\n" + SCALE.replace("T.float32(factor)", "undefined_thing"))
    assert type(result.error_in_exec).__name__ == "CompileError"
    out = capsys.readouterr().out
    assert "Traceback" not in out and "undefined_thing" in out
    assert ip.run_cell("y = 40 + 2").success and ip.user_ns["y"] == 42


def test_bad_options_are_reported(ip, capsys):
    r = ip.run_cell("%%tirx --show bogus\n" + SCALE)
    assert r.error_in_exec is not None and "bogus" in str(r.error_in_exec)
    r = ip.run_cell("%%tirx --frobnicate\n" + SCALE)
    assert r.error_in_exec is not None and "frobnicate" in str(r.error_in_exec)
    r = ip.run_cell("%%tirx --arch sm_9x\n" + SCALE)
    assert type(r.error_in_exec).__name__ == "ArchError"


def test_cell_without_kernels_says_so(ip, capsys):
    ip.run_cell_magic("tirx", "", "z = 1\n")
    assert "no @T.prim_func" in capsys.readouterr().out


def test_changing_a_value_the_cell_reads_recompiles(ip):
    ip.user_ns["factor"] = 3.0
    ip.run_cell_magic("tirx", "--arch sm_90a --quiet", SCALE)
    first = ip.user_ns["scale"]
    ip.user_ns["factor"] = 7.0
    ip.run_cell_magic("tirx", "--arch sm_90a --quiet", SCALE)
    second = ip.user_ns["scale"]
    assert second.key != first.key and second.cuda_source != first.cuda_source
    ip.user_ns["factor"] = 3.0
    ip.run_cell_magic("tirx", "--arch sm_90a --quiet", SCALE)
    assert ip.user_ns["scale"].key == first.key and ip.user_ns["scale"].cache_hit


def test_emulate_binds_its_result_like_sanitize_and_profile(ip, capsys):
    import numpy as np

    ip.user_ns["factor"] = 2.0
    ip.user_ns["a_in"] = np.arange(256, dtype="float32")
    ip.user_ns["b_out"] = np.zeros(256, dtype="float32")
    ip.run_cell_magic("tirx", '--arch sm_90a --quiet --emulate "a_in, b_out"', SCALE)
    run = ip.user_ns["_tirx_emulation"]
    assert run is ip.user_ns["scale_emulated"]
    assert "scale" in capsys.readouterr().out  # the summary is still printed
    np.testing.assert_array_equal(ip.user_ns["b_out"], 2 * np.arange(256, dtype="float32"))
    assert run.ok, run.summary()


def test_emulate_with_an_unknown_name_says_which(ip):
    from txlab.magic import MagicArgumentError

    with pytest.raises(MagicArgumentError, match="--emulate .*NameError"):
        ip.run_cell_magic("tirx", '--arch sm_90a --quiet --emulate "no_such_array"', SCALE)


def test_a_bad_magic_line_shows_its_usage_once():
    from txlab.magic import MagicArgumentError, parse_magic_line

    for line in ("--bogus", "--show 'sass"):
        with pytest.raises(MagicArgumentError) as info:
            parse_magic_line(line)
        text = str(info.value)
        assert "Usage: %%tirx [--arch ARCH]" in text and "usage:" not in text, text


CFG_CELL = """
@T.prim_func
def fill(B: T.Buffer((32,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    B[tx] = T.float32(Cfg.v) + T.float32(value())
"""


def test_an_unchanged_cell_reading_a_changed_class_attribute_or_global_is_rebuilt(ip):
    """The cell memo keyed the notebook's classes and functions by identity, so ``Cfg.v = 6.0`` (or a global a
    notebook function reads) and a rerun of the unchanged cell gave the old kernel."""
    ip.run_cell("class Cfg:\n    v = 1.0\nC = 10.0\ndef value():\n    return C\n")
    ip.run_cell_magic("tirx", "--arch sm_90a --quiet", CFG_CELL)
    first = ip.user_ns["fill"].cuda_source
    assert "11" in first or "0x1.6p+3f" in first, first
    ip.run_cell("Cfg.v = 6.0\nC = 20.0")
    ip.run_cell_magic("tirx", "--arch sm_90a --quiet", CFG_CELL)
    again = ip.user_ns["fill"].cuda_source
    assert again != first and ("26" in again or "0x1.ap+4f" in again), again


MODULE_CELL = """
from tvm.script import ir as I


@I.ir_module
class Mod:
    @T.prim_func
    def first(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([256])
        B[tx] = A[tx] + T.float32(1.0)

    @T.prim_func
    def second(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([256])
        B[tx] = A[tx] + T.float32(2.0)
"""


def test_a_module_of_two_kernels_binds_each_and_runs_only_the_one_called():
    """``Mod(a, b)`` took both kernels' parameters (A, B, A, B), and ``Mod(a, b, a, c)`` ran both kernels into the
    last buffers; each kernel is its own Compiled now, and calling the module says to pick one."""
    import numpy as np

    import txlab
    from txlab.errors import InputError

    from txlab.magic import run_cell

    ns: dict = {}  # (the test shell's __main__ has a __file__, where TVMScript would look for the class's source)
    run_cell(MODULE_CELL, ns, arch="sm_90a")
    mod = ns["Mod"]
    assert sorted(mod) == ["first", "second"] and mod.first.name == "first" and mod["second"].name == "second"
    a = np.ones(256, np.float32)
    b, c = np.zeros_like(a), np.zeros_like(a)
    txlab.emulate(mod.first, a, b)
    txlab.emulate(mod.second, a, c)
    assert (b == 2).all() and (c == 3).all()
    with pytest.raises(InputError, match=r"Mod is a module of 2 kernels \(first, second\): call one"):
        mod(a, b)
    with pytest.raises(InputError, match="Mod holds 2 kernels"):
        txlab.compile(mod)


@pytest.mark.parametrize(
    "line, words",
    [
        ("--shwo sass", "unknown option --shwo; did you mean --show?"),
        ("--arc sm_90a", "did you mean --arch?"),
        ("--emulate ''", "--emulate needs the kernel's arguments"),
        ("--sanitize ' '", "--sanitize needs the kernel's arguments"),
        ("--tools memcheck", "give --sanitize 'A, B' with it"),
    ],
)
def test_magic_options_that_would_be_ignored_or_misspelt_are_named(line, words):
    """A misspelt option got argparse's bare 'unrecognized arguments'; an empty --emulate ran nothing and --tools
    without --sanitize was dropped, both silently."""
    from txlab.magic import MagicArgumentError, parse_magic_line

    with pytest.raises(MagicArgumentError) as info:
        parse_magic_line(line)
    assert words in str(info.value)


def test_magic_help_prints_the_options(ip, capsys):
    ip.run_cell_magic("tirx", "--help", SCALE)
    out = capsys.readouterr().out
    assert "--emulate ARGS" in out and "--sanitize ARGS" in out


def test_a_quiet_cell_still_says_what_keeps_its_kernel_from_launching(ip, capsys):
    """--quiet (or --show none) bound a kernel of 2048 threads per CTA without a word; the warning came at call time."""
    cell = SCALE.replace("T.thread_id([256])", "T.thread_id([2048])").replace("(256,)", "(2048,)")
    ip.user_ns["factor"] = 2.0
    ip.run_cell_magic("tirx", "--arch sm_90a --quiet", cell)
    err = capsys.readouterr().err
    assert "%%tirx warning:" in err and "2048 threads per CTA" in err
    assert "warning(s): " in repr(ip.user_ns["scale"])


def test_the_readme_use_section_runs_as_written(ip):
    """README's "Use" cells, in order, in a shell where only ``%load_ext txlab`` ran (it binds ``txlab``): the
    ``%%tirx`` cell, then the Python cell (kernel call and check on the emulator without a GPU; bench needs one)."""
    import re
    from pathlib import Path

    import txlab

    text = Path(__file__).resolve().parents[1].joinpath("README.md").read_text()
    use = text.split("## Use", 1)[1]
    blocks = re.findall(r"```python\n(.*?)```", use, re.S)[:3]
    assert blocks[0].strip() == "%load_ext txlab" and blocks[1].startswith("%%tirx")
    ip.user_ns.pop("txlab", None)
    ip.run_line_magic("load_ext", "txlab")  # already loaded: IPython says so and does not run it again
    txlab.load_ipython_extension(ip)
    assert ip.user_ns["txlab"] is txlab
    head, body = blocks[1].split("\n", 1)
    ip.run_cell_magic("tirx", head.removeprefix("%%tirx").replace("--show resources,cuda,ptx,sass", "--quiet"), body)
    from txlab.device import has_gpu

    gpu = has_gpu()
    lines = [ln for ln in blocks[2].splitlines() if gpu or not ln.startswith("txlab.bench")]
    res = ip.run_cell("\n".join(lines))
    assert res.success, res.error_in_exec
    assert ip.user_ns["b"][:5].tolist() == (2 * ip.user_ns["a"][:5]).tolist()
