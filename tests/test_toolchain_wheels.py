"""A machine without a CUDA toolkit compiles through NVIDIA's wheels; without those either, the
error says how to fix it (issue 20, item 12)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from txlab import toolchain
from txlab.errors import CompileError

ROOT = Path(__file__).resolve().parents[1]
KERNELS = (Path(__file__).parent / "kernels" / "basics.py").read_text()
SCALE = KERNELS.split("\n\n@T.prim_func")[0]


def _no_toolkit_env(tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA", "NVCC"))}
    env.update(
        PATH="/usr/bin:/bin",
        CUDA_HOME="/nonexistent",
        CUDA_PATH="/nonexistent",
        TXLAB_CACHE_DIR=str(tmp_path / "cache"),
        PYTHONPATH=str(ROOT),
    )
    return env


def test_compiles_to_cubin_with_the_toolkit_hidden(tmp_path):
    probe = f"""
import json
from txlab import toolchain
from txlab.magic import run_cell
c = run_cell({SCALE!r}, {{}}, arch="sm_90a")["scale"]
print(json.dumps({{"tools": {{n: toolchain.find_tool(n) for n in ("nvcc", "ptxas")}},
                  "elf": c.cubin[:4] == b"\\x7fELF", "ptx": ".target sm_90a" in c.ptx,
                  "sass": "scale_kernel" in c.sass}}))
"""
    out = subprocess.run(
        [sys.executable, "-c", probe], env=_no_toolkit_env(tmp_path), capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    for name, path in r["tools"].items():
        assert "site-packages" in path and "nvidia" in path, (name, path)
    assert r["elf"] and r["ptx"] and r["sass"]


def test_doctor_ticks_ptx_only_after_compiling(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "txlab.cli", "doctor", "--json"],
        env=_no_toolkit_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    r = json.loads(out.stdout)
    assert r["features"]["PTX/cubin (nvcc+ptxas)"] is True
    assert "compiled a test kernel" in r["ptx_cubin"]["detail"]


@pytest.fixture
def no_tools(tmp_path, monkeypatch):
    """Neither the wheels, nor PATH, nor a toolkit root has nvcc/ptxas."""
    monkeypatch.setattr(toolchain, "wheel_bin_dirs", lambda: [])
    monkeypatch.setattr(toolchain, "toolkit_homes", lambda: [str(tmp_path / "no-cuda")])
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    toolchain.find_tool.cache_clear()
    toolchain.tool_status.cache_clear()
    yield tmp_path
    toolchain.find_tool.cache_clear()
    toolchain.tool_status.cache_clear()


def test_missing_nvcc_is_a_compile_error_saying_how_to_fix_it(no_tools):
    with pytest.raises(CompileError) as info:
        toolchain.cuda_to_ptx("__global__ void k() {}", "sm_90a")
    e = info.value
    assert e.stage == "nvcc" and "not found" in e.message
    assert "nvidia-cuda-nvcc" in e.hint and "CUDA_HOME" in e.hint
    with pytest.raises(CompileError) as info:
        toolchain.ptx_to_cubin(".version 8.0\n.target sm_90a\n", "sm_90a")
    assert info.value.stage == "ptxas" and "nvidia-cuda-nvcc" in info.value.hint


def test_whole_compile_without_tools_fails_at_nvcc_with_the_fix(no_tools, monkeypatch):
    monkeypatch.setenv("TXLAB_CACHE_DIR", str(no_tools / "cache"))
    from txlab.magic import run_cell

    with pytest.raises(CompileError) as info:
        run_cell(SCALE.replace("2.0", "13.0"), {}, arch="sm_90a")
    assert info.value.stage == "nvcc" and "pip install" in info.value.hint


def test_broken_nvcc_wrapper_is_a_compile_error(no_tools):
    """The issue's case: /usr/local/bin/nvcc execs a toolkit that is gone."""
    bin_dir = no_tools / "empty-bin"
    bin_dir.mkdir()
    for name in ("nvcc", "ptxas"):
        w = bin_dir / name
        w.write_text(f'#!/bin/sh\nexec {no_tools}/gone/bin/{name} "$@"\n')
        w.chmod(0o755)
    with pytest.raises(CompileError) as info:
        toolchain.cuda_to_ptx("__global__ void k() {}", "sm_90a")
    e = info.value
    assert e.stage == "nvcc" and "nvidia-cuda-nvcc" in e.hint, e
    assert "exit 127" in e.message or "not found" in e.message


def test_doctor_does_not_tick_a_tool_that_does_not_run(no_tools):
    from txlab.doctor import format_report, report

    bin_dir = no_tools / "empty-bin"
    bin_dir.mkdir()
    w = bin_dir / "nvcc"
    w.write_text(f'#!/bin/sh\nexec {no_tools}/gone/nvcc "$@"\n')
    w.chmod(0o755)
    r = report()
    assert r["features"]["PTX/cubin (nvcc+ptxas)"] is False
    assert r["tools"]["nvcc"]["version"] is None and r["tools"]["nvcc"]["problem"]
    text = format_report(r)
    assert "[ ] PTX/cubin (nvcc+ptxas)" in text and "pip install" in text
