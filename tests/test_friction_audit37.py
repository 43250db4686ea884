"""First-hour friction of audit 37b (sections 2, 3, 4, 6, 7, 10, 11, 12 and the smaller items of 13), each as the
audit reproduced it: IPython cells run in a real shell, the command line in-process."""

import json
import os
import sys

import numpy as np
import pytest

import txlab
from txlab.errors import InputError

IPython = pytest.importorskip("IPython")

SCALE = """
@Tx.prim_func
def scale(X: Tx.Buffer((256,), "float32")):
    Tx.device_entry()
    tx = Tx.thread_id([256])
    X[tx] = X[tx] * Tx.float32(2.0)
"""

MODULE = """
@I.ir_module
class Mod:
    @Tx.prim_func
    def first(X: Tx.Buffer((256,), "float32")):
        Tx.device_entry()
        tx = Tx.thread_id([256])
        X[tx] = X[tx] + Tx.float32(1.0)

    @Tx.prim_func
    def second(X: Tx.Buffer((256,), "float32")):
        Tx.device_entry()
        tx = Tx.thread_id([256])
        X[tx] = X[tx] * Tx.float32(3.0)
"""


@pytest.fixture(scope="module")
def ip():
    from IPython.testing import globalipapp

    shell = globalipapp.start_ipython() or globalipapp.get_ipython()  # one global shell per session
    shell.run_line_magic("load_ext", "txlab")
    return shell


@pytest.fixture(scope="module")
def mod():
    """Section 10 too: the cell uses ``@I.ir_module`` without importing ``I`` (it gave NameError: name 'I').
    (Run as a cell of its own namespace: the test shell's ``__main__`` has a ``__file__``, where TVMScript would
    look for the class's source; a notebook's has none.)"""
    from txlab.magic import run_cell

    ns: dict = {}
    run_cell(MODULE, ns, arch="sm_90a")
    return ns["Mod"]


# -- 2: a TVMScript error in a plain cell ---------------------------------------------------------------------------
def test_a_tvmscript_error_in_a_plain_cell_is_its_diagnostic_not_the_parsers_traceback(ip, capsys):
    """About 200 lines (ParserError, "During handling of the above exception", DiagnosticError through
    tvm/script/parser/core frames) for a kernel defined in an ordinary cell; now TVM's diagnostic, with txlab's
    hint where it has one."""
    r = ip.run_cell(
        "from tvm.script import tirx as Tx\n"
        "@Tx.prim_func\n"
        'def plainbad(X: Tx.Buffer((256,), "float32")):\n'
        "    Tx.device_entry()\n"
        "    tx = Tx.thread_id([256])\n"
        "    X[tx] = Tx.cuda.warp_summ(X[tx])\n"
    )
    assert type(r.error_in_exec).__name__ == "DiagnosticError"
    out = capsys.readouterr().out
    assert "tvm/script/parser" not in out and "During handling" not in out, out
    assert "DiagnosticError: error:" in out and "warp_summ" in out
    assert "hint: did you mean Tx.cuda.warp_sum?" in out
    assert len(out.strip().splitlines()) < 12, out
    # any other RuntimeError is shown as IPython shows it (with the cell's frame)
    r = ip.run_cell("raise RuntimeError('plain runtime error')")
    out = capsys.readouterr().out
    assert isinstance(r.error_in_exec, RuntimeError) and "plain runtime error" in out and "Cell In" in out, out


# -- 3: the kernels of an @I.ir_module cell --------------------------------------------------------------------------
def test_each_kernel_of_a_module_cell_is_its_own_build_and_compare_diffs_them(mod):
    """Each member held the whole module: compare(Mod.first, Mod.second) said "identical SASS", instructions() and
    resources mixed the two kernels."""
    first, second = mod.first, mod.second
    assert first.kernels == ["first_kernel"] and second.kernels == ["second_kernel"]
    assert list(first.resources) == ["first_kernel"] and list(second.launch) == ["second_kernel"]
    assert [i.split()[0] for i in first.instructions("FADD|FMUL")] == ["FADD.FTZ"]
    assert [i.split()[0] for i in second.instructions("FADD|FMUL")] == ["FMUL.FTZ"]
    d = txlab.compare(first, second)
    assert "identical" not in repr(d) and "different" in repr(d), repr(d)
    x = np.ones(256, np.float32)
    first(x)
    second(x)
    assert (x == 6).all()
    # the set still stands for the whole module: which kernel is asked, as before
    with pytest.raises(InputError, match=r"Mod holds 2 kernels \(first, second\)"):
        txlab.compile(mod)


def test_compare_refuses_two_entries_of_one_build(mod):
    a = txlab.compile(mod.ir_module, arch="sm_90a", name="first")
    b = txlab.compile(mod.ir_module, arch="sm_90a", name="second")
    assert a.cubin == b.cubin and len(a.kernels) == 2
    with pytest.raises(InputError, match="two entries of one build"):
        txlab.compare(a, b)
    assert "identical" in repr(txlab.compare(a, a))  # the same build against itself is still that


def test_a_private_helper_is_built_with_the_kernel_that_calls_it_and_is_not_a_member():
    from txlab.ir import entry_kernels
    from txlab.magic import run_cell

    ns: dict = {}
    run_cell(
        """
@I.ir_module
class Helped:
    @Tx.prim_func(private=True)
    def triple(x: Tx.float32) -> Tx.float32:
        return x * Tx.float32(3.0)

    @Tx.prim_func
    def plain(X: Tx.Buffer((256,), "float32")):
        Tx.device_entry()
        tx = Tx.thread_id([256])
        X[tx] = X[tx] + Tx.float32(1.0)

    @Tx.prim_func
    def calls(X: Tx.Buffer((256,), "float32")):
        Tx.device_entry()
        tx = Tx.thread_id([256])
        X[tx] = Helped.triple(X[tx])
""",
        ns,
        arch="sm_90a",
    )
    helped = ns["Helped"]
    assert sorted(helped) == ["calls", "plain"] and entry_kernels(helped.ir_module) == ["calls", "plain"]
    assert helped.calls.kernels == ["calls_kernel"] and helped.calls.instructions("FMUL")
    assert helped.plain.kernels == ["plain_kernel"] and not helped.plain.instructions("FMUL")


# -- 4: TXLAB_CACHE_DIR with a ~ -------------------------------------------------------------------------------------
def test_a_tilde_in_the_cache_dir_is_the_home_directory(tmp_path, monkeypatch):
    """``TXLAB_CACHE_DIR="~/txcache"`` wrote entries under ./~/txcache and read them from $HOME: every compile was
    cold, silently."""
    from txlab import cache

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TXLAB_CACHE_DIR", "~/txcache")
    monkeypatch.chdir(tmp_path)
    assert cache.cache_root() == tmp_path / "home" / "txcache"
    key = cache.make_key(test="audit37-tilde")
    assert cache.store(key, {"meta.json": "{}"}) is not None
    assert cache.load(key) is not None  # written and read at the same place
    assert not (tmp_path / "~").exists()
    monkeypatch.delenv("TXLAB_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "~/xdg")
    assert cache.cache_root() == tmp_path / "home" / "xdg" / "txlab"


def test_a_relative_cache_dir_does_not_move_when_the_notebook_changes_directory(tmp_path, monkeypatch):
    from txlab import cache

    (tmp_path / "elsewhere").mkdir()
    monkeypatch.setenv("TXLAB_CACHE_DIR", "relcache-audit37")
    monkeypatch.chdir(tmp_path)
    root = cache.cache_root()
    assert root == tmp_path / "relcache-audit37"
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert cache.cache_root() == root


# -- 6: errors that came out as long internal tracebacks -------------------------------------------------------------
def test_an_ambiguous_module_is_an_input_error(mod):
    """AmbiguousEntry was a bare ValueError: check/occupancy_of/emulate of a module printed ~60 lines of txlab."""
    from txlab.ir.walk import AmbiguousEntry

    assert issubclass(AmbiguousEntry, InputError) and issubclass(AmbiguousEntry, ValueError)
    with pytest.raises(InputError, match="pass one of them, e.g. Mod.first"):
        txlab.occupancy_of(mod)
    with pytest.raises(InputError, match="Mod holds 2 kernels"):
        txlab.emulate(mod, np.ones(256, np.float32))


def test_a_python_error_in_a_tirx_cell_shows_the_cells_frames_not_txlabs(ip, capsys):
    r = ip.run_cell("%%tirx --quiet\nimport math\nraise ValueError('boom in the cell')\n")
    assert isinstance(r.error_in_exec, ValueError)
    out = capsys.readouterr().out
    assert "boom in the cell" in out and "<tirx-cell-" in out
    assert "txlab/magic.py" not in out and "exec(code, glb)" not in out, out


@pytest.mark.parametrize("text", ["{}", "[1, 2]", '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": 5}'])
def test_export_and_tour_of_json_that_is_no_notebook_is_one_line(tmp_path, capsys, text):
    """``{}`` gave jsonschema's ValidationError traceback (a list: AttributeError, bad cells: TypeError)."""
    from txlab import export, tour

    bad = tmp_path / "bad.ipynb"
    bad.write_text(text)
    with pytest.raises(export.ExportError, match="not a Jupyter notebook"):
        export.export_html(bad, tmp_path / "out.html")
    assert export.main([str(bad), str(tmp_path / "out.html")]) == 1
    assert tour.main([str(bad), str(tmp_path / "out.html")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 2, err
    assert err.startswith("txlab export: ") and "txlab tour: " in err


# -- 7: txlab compile FILE.py and its sibling modules ----------------------------------------------------------------
def test_txlab_compile_imports_a_module_beside_the_file(tmp_path, monkeypatch, capsys):
    """``from helper_mod import FACTOR`` failed (sys.path[0] was the venv's bin) and ``__name__`` was builtins."""
    from txlab import cli

    src = tmp_path / "kernels"
    src.mkdir()
    (src / "helper_mod_audit37.py").write_text("FACTOR = 2.0\n")
    (src / "imp_audit37.py").write_text(
        "import sys\n"
        "from helper_mod_audit37 import FACTOR\n"
        "from tvm.script import tirx as Tx\n"
        "print('module name', __name__, file=sys.stderr)\n"
        "if __name__ == '__main__':\n"
        "    raise SystemExit('the main block ran')\n"
        + SCALE.replace("Tx.float32(2.0)", "Tx.float32(FACTOR)")
        + MODULE.replace("@I.ir_module", "from tvm.script import ir as I\n@I.ir_module")
    )
    monkeypatch.chdir(tmp_path)  # not the file's own directory
    assert cli.main(["compile", str(src / "imp_audit37.py"), "--arch", "sm_90a"]) == 0
    out, err = capsys.readouterr()
    assert "module name imp_audit37" in err and "<Compiled scale" in out and "Mod.first" not in err
    assert "first_kernel" in out and "second_kernel" in out
    assert str(src) not in sys.path and "imp_audit37" not in sys.modules


# -- 11: a non-ASCII kernel name -------------------------------------------------------------------------------------
def test_a_non_ascii_kernel_name_is_named_at_its_def_line(ip):
    """nvcc said "Universal character is not allowed in device entity name" at line 67 of the generated CUDA."""
    from txlab.magic import run_cell

    src = SCALE.replace("def scale(", "def skalierung_ä(")
    with pytest.raises(txlab.CompileError) as info:
        run_cell(src, {}, arch="sm_90a")
    err = info.value
    assert err.stage == "parse" and err.lineno == 3 and err.source_line.startswith("def skalierung_ä(")
    assert "CUDA kernel names must be ASCII: rename 'skalierung_ä'" in err.message
    assert "def skalierung_a(" in err.hint
    # parameter and local names may stay non-ASCII
    (c,) = run_cell(SCALE.replace("X", "Ä"), {}, arch="sm_90a").values()
    assert c.kernels == ["scale_kernel"]


# -- 12: Occupancy.what_if with a number -----------------------------------------------------------------------------
def test_what_if_takes_a_number_or_a_list_and_checks_the_range(mod):
    o = txlab.occupancy_of(mod.first)
    one = o.what_if(registers=128)  # was TypeError: 'int' object is not iterable
    assert isinstance(one, type(o)) and one.registers == 128 and one.threads == o.threads
    both = o.what_if(registers=128, threads=1024)
    assert both.registers == 128 and both.threads == 1024
    sweep = o.what_if(registers=[64, 128], threads=512)
    assert [r["value"] for r in sweep["registers"]] == [64, 128] and [r["value"] for r in sweep["threads"]] == [512]
    assert len(sweep["smem_bytes"]) > 1
    assert set(o.what_if()) == {"registers", "smem_bytes", "threads"}
    for bad in (dict(registers=-5), dict(registers=300), dict(threads=0), dict(smem_bytes=-1), dict(registers=2.5)):
        with pytest.raises(InputError, match="what_if"):
            o.what_if(**bad)
    with pytest.raises(InputError, match="empty list"):
        o.what_if(threads=[])


# -- 13: smaller friction --------------------------------------------------------------------------------------------
def test_a_compile_error_is_shown_once_and_the_error_output_is_one_line(ip, monkeypatch, capsys):
    """The HTML box and the error output both carried the message, line and hint."""
    seen = []
    monkeypatch.setattr(ip, "_showtraceback", lambda etype, evalue, stb: seen.append(stb))
    r = ip.run_cell("%%tirx --arch sm_90a --quiet\n" + SCALE.replace("Tx.float32(2.0)", "Tx.float32(two)"))
    assert type(r.error_in_exec).__name__ == "CompileError"
    (stb,) = seen
    assert len(stb) == 1 and "\n" not in stb[0] and stb[0].endswith("(details above)"), stb
    assert "Undefined variable: two" in capsys.readouterr().out  # the shown message (plain text here)


def test_a_failed_recompile_says_the_old_kernel_is_still_bound(ip, capsys):
    ip.run_cell_magic("tirx", "--arch sm_90a --quiet", SCALE)
    before = ip.user_ns["scale"]
    r = ip.run_cell("%%tirx --arch sm_90a --quiet\n" + SCALE.replace("Tx.float32(2.0)", "Tx.float32(3.0"))
    assert type(r.error_in_exec).__name__ == "CompileError" and ip.user_ns["scale"] is before
    assert "scale still holds the version compiled at " in str(r.error_in_exec)
    assert "scale still holds the version compiled at " in capsys.readouterr().out
    r = ip.run_cell("%%tirx --arch sm_90a --quiet\n" + SCALE.replace("(256,)", "(undefined_n,)"))
    assert "scale still holds the version" in str(r.error_in_exec)


@pytest.mark.parametrize(
    "head, message, raw",
    [
        ('X: Tx.Buffer((256,), "floot32")', "unknown dtype 'floot32': did you mean 'float32'?", "ffi.String"),
        ('X: Tx.Buffer((256,), "float32"), n: int', "n: int: annotate a scalar parameter", "Mismatched type"),
    ],
)
def test_a_hint_that_is_the_real_message_heads_the_error(head, message, raw):
    """``[parse] ... InternalError: ValueError: Unexpected type for TIR Arg: ffi.String`` headed the error, the
    right words only in its hint; TVM's text is kept in ``detail``."""
    from txlab.magic import run_cell

    with pytest.raises(txlab.CompileError) as info:
        run_cell(SCALE.replace('X: Tx.Buffer((256,), "float32")', head), {}, arch="sm_90a")
    err = info.value
    assert err.message.startswith(message) and raw in err.detail and raw not in str(err), str(err)


def test_a_flag_value_that_starts_with_a_dash_says_to_use_equals(ip, capsys):
    from txlab.magic import MagicArgumentError, parse_magic_line

    with pytest.raises(MagicArgumentError, match="--nvcc-flag=-O3"):
        parse_magic_line("--arch sm_90a --nvcc-flag -O3")
    assert parse_magic_line("--nvcc-flag=-O3").nvcc_flags == ["-O3"]
    assert parse_magic_line("--maxrregcount 64").maxrregcount == 64
    ip.run_line_magic("tirx", "--help")  # %%tirx --help in an empty cell: IPython's "the cell body is empty"
    assert "--nvcc-flag" in capsys.readouterr().out


def test_settings_are_checked_when_set():
    cfg = txlab.config
    arch, timeout = cfg.default_arch, cfg.timeout_s
    try:
        with pytest.raises(txlab.errors.SettingError, match="default_arch must be a CUDA arch"):
            cfg.default_arch = "hopper"
        with pytest.raises(txlab.errors.SettingError, match="did you mean 'sm_90a'"):
            cfg.default_arch = "sm90a"
        cfg.default_arch = "SM_100A"
        assert cfg.default_arch == "sm_100a"
        for bad in ("abc", -1, 0, float("nan"), True):
            with pytest.raises(txlab.errors.SettingError, match="timeout_s"):
                cfg.timeout_s = bad
        cfg.timeout_s = 30
        assert cfg.timeout_s == 30.0
    finally:
        cfg.default_arch, cfg.timeout_s = arch, timeout


@pytest.mark.parametrize("arch", ["sm90a", "compute_90a", "SM90A"])
def test_an_arch_spelt_without_the_underscore_gets_did_you_mean(arch):
    from txlab.arch import resolve_arch

    with pytest.raises(txlab.ArchError, match="did you mean 'sm_90a'"):
        resolve_arch(arch)


def test_stale_texts_readme_and_the_profiling_error():
    from pathlib import Path

    readme = Path(__file__).resolve().parents[1].joinpath("README.md").read_text()
    assert "says it was skipped" not in readme and "run on the CPU emulator (said once)" in readme
    if txlab.device.has_gpu():
        pytest.skip("a GPU is present: no NoGPUError to read")
    from txlab.magic import run_cell

    (scale,) = run_cell(SCALE, {}, arch="sm_90a").values()
    with pytest.raises(txlab.NoGPUError) as info:
        txlab.profile(scale, np.zeros(256, np.float32))
    assert "txlab.occupancy_of(kernel)" in str(info.value) and "occupancy.occupancy" not in str(info.value)


def test_doctor_shows_the_cache_and_compute_sanitizer(monkeypatch, tmp_path):
    from txlab import cache
    from txlab.doctor import format_report, report

    monkeypatch.setenv("TXLAB_CACHE_DIR", str(tmp_path / "c"))
    assert cache.store(cache.make_key(test="audit37-doctor"), {"meta.json": "{}", "a.bin": b"x" * 2048}) is not None
    r = report()
    assert r["cache"]["path"] == str(tmp_path / "c") and r["cache"]["bytes"] >= 2048 and r["cache"]["entries"] == 1
    assert "path" in r["compute_sanitizer"]
    text = format_report(r)
    assert f"cache         {tmp_path / 'c'}" in text and "compiled kernel(s)" in text
    assert "sanitizer     " in text and "compute-sanitizer (txlab.sanitize)" in text
    json.dumps(r, default=str)
    assert os.environ["TXLAB_CACHE_DIR"] == str(tmp_path / "c")


def test_compare_names_a_keyword_it_does_not_take(mod):
    a = txlab.compile(mod.ir_module, arch="sm_90a", name="first")
    with pytest.raises(InputError, match=r"txlab.compare of two txlab.Compiled takes no kernel=.*Mod.first") as e:
        txlab.compare(a, a, kernel="first")
    assert "compile_diff" not in str(e.value)
