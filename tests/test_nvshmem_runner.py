"""scripts/nvshmem_2gpu.py: the parts that need no GPU (kernel signature, expected values, checks,
cubin choice, arguments); the 2-GPU run itself is GPU-marked."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import lzma
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "nvshmem_2gpu.py"
_spec = importlib.util.spec_from_file_location("nvshmem_2gpu", SCRIPT)
runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runner)


def test_kernel_signature_follows_tvm_parameter_order():
    import txlab.api as api

    name, params = runner.kernel_signature(api.cuda_source("nvshmem_exchange"))
    assert name == "nvshmem_exchange_kernel"
    # TVM sorts the buffers (not the prim_func order Src, Dst, Back, Sig, Out): the launch must follow this
    assert params == [
        ("float*", "Back_ptr"),
        ("float*", "Dst_ptr"),
        ("int64_t*", "Out_ptr"),
        ("uint64_t*", "Sig_ptr"),
        ("float*", "Src_ptr"),
    ]
    assert [runner.buffer_name(n) for _, n in params] == ["Back", "Dst", "Out", "Sig", "Src"]


def test_kernel_signature_rejects_ambiguous_source():
    with pytest.raises(ValueError, match="one __global__"):
        runner.kernel_signature("int x;")


@pytest.mark.parametrize("npes", [2, 3, 4])
def test_expected_values_are_the_ring_exchange(npes):
    srcs = [runner.make_inputs(pe, npes)["Src"] for pe in range(npes)]
    assert len({s.tobytes() for s in srcs}) == npes  # every PE's data is distinguishable
    for pe in range(npes):
        want = runner.expected(pe, npes)
        assert np.array_equal(want["Dst"], srcs[(pe - 1) % npes])
        assert np.array_equal(want["Back"], srcs[pe])
        assert want["Out"].tolist() == [pe, npes, 272]
        assert want["Sig"].tolist() == [256, 8, 1, 7]
        got = {k: v.copy() for k, v in want.items()}
        assert runner.check(pe, npes, got) == {}


def test_check_names_the_failing_scope_and_values():
    want = runner.expected(1, 2)
    got = {k: v.copy() for k, v in want.items()}
    got["Dst"][1, 130] = 0.0  # a warp-scope element
    got["Back"] = np.zeros_like(got["Back"])  # the get phase did nothing
    got["Out"][2] = 271
    probs = runner.check(1, 2, got)
    assert set(probs) == {"Dst[1] (warp)", "Back[0] (thread)", "Back[1] (warp)", "Back[2] (block)", "Out"}
    assert "first col 130" in probs["Dst[1] (warp)"] and "1/1024" in probs["Dst[1] (warp)"]
    assert "271" in probs["Out"] and "272" in probs["Out"]
    # an untouched Dst (puts never arrived) equals the zero init, not the neighbour's data
    got = {k: v.copy() for k, v in runner.make_inputs(0, 2).items()}
    assert "Dst[2] (block)" in runner.check(0, 2, got)


def _write_cubin(d: Path, version: str, data: bytes = b"\x7fELFcubin") -> Path:
    stem = f"k-nvshmem{version}"
    (d / f"{stem}.cubin.xz").write_bytes(lzma.compress(data))
    (d / f"{stem}.json").write_text(
        json.dumps(
            {
                "nvshmem_version": version,
                "cubin": f"{stem}.cubin.xz",
                "sha256": hashlib.sha256(data).hexdigest(),
                "kernel": "k",
                "params": [{"type": "float*", "name": "A_ptr"}],
                "grid": [1, 1, 1],
                "block": [32, 1, 1],
            }
        )
    )
    return d / f"{stem}.cubin.xz"


def test_pick_and_read_cubin(tmp_path, capsys):
    _write_cubin(tmp_path, "3.4.5")
    p38 = _write_cubin(tmp_path, "3.8.0", b"other")
    assert runner.pick_cubin(tmp_path, "3.8.0") == p38
    assert runner.pick_cubin(tmp_path, "3.7.2").name == "k-nvshmem3.4.5.cubin.xz"  # newest older 3.x
    assert "using the one built against 3.4.5" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError, match="no cubin for NVSHMEM 3.3.20"):
        runner.pick_cubin(tmp_path, "3.3.20")
    data, meta = runner.read_cubin(p38)
    assert data == b"other" and meta["kernel"] == "k"
    (tmp_path / "k-nvshmem3.8.0.cubin.xz").write_bytes(lzma.compress(b"tampered"))
    with pytest.raises(ValueError, match="sha256"):
        runner.read_cubin(p38)


def test_record_layout_is_what_coverage_reads():
    rec = runner.record(
        {0: {"problems": {}}, 1: {"problems": {"Out": "got [1, 2, 0]"}}},
        {"arch": "sm_90a", "nvshmem_version": "3.4.5"},
        "NVIDIA H200",
    )
    ex = rec["examples"]["nvshmem_exchange"]
    assert rec["n_gpus"] == 2 and ex["ok"] is False and ex["problems"] == {"pe1": {"Out": "got [1, 2, 0]"}}
    assert "Tx.nvshmem.wait_until" in ex["uses"]
    assert runner.record({0: {"problems": {}}, 1: {"problems": {}}}, {}, None)["examples"]["nvshmem_exchange"]["ok"]


def test_built_cubins_if_present_match_their_meta():
    d = ROOT / ".nvshmem" / "cubins"
    if not d.is_dir():
        pytest.skip(".nvshmem/cubins not built here (python scripts/nvshmem_2gpu.py --build .nvshmem/cubins)")
    for meta_path in d.glob("*.json"):
        data, meta = runner.read_cubin(d / json.loads(meta_path.read_text())["cubin"])
        assert data[:4] == b"\x7fELF" and meta["block"] == [256, 1, 1] and meta["grid"] == [1, 1, 1]


def _run_script(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=120)


def test_arguments():
    p = _run_script("--npes", "1")
    assert p.returncode == 2 and "--npes must be at least 2" in p.stderr
    assert "--cubin-dir" in _run_script("--help").stdout


def test_without_gpu_modules_it_says_what_is_missing():
    try:
        import nvshmem.core  # noqa: F401

        pytest.skip("nvshmem4py is installed here")
    except ImportError:
        pass
    p = _run_script("--cubin", "/nonexistent.cubin")
    assert p.returncode == 2
    assert "nvshmem.core" in p.stderr and "source .nvshmem/setup.sh" in p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.gpu
def test_two_gpu_exchange(tmp_path):
    from cuda.bindings import driver

    driver.cuInit(0)
    if driver.cuDeviceGetCount()[1] < 2:
        pytest.skip("needs 2 GPUs in one host (the NVSHMEM ring)")
    import importlib.util

    if importlib.util.find_spec("nvshmem") is None:
        pytest.skip("nvshmem4py is not installed here (on the GPU host: source .nvshmem/setup.sh)")
    out = tmp_path / "rec.json"
    p = _run_script("--json", str(out))
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads(out.read_text())["examples"]["nvshmem_exchange"]["ok"] is True
