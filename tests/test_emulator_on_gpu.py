"""What this round's emulator changes claim about the GPU, checked on one (GPU-marked: skipped without a GPU):
the rotation's FMA choice gives the GPU's bits, ``warpgroup_sync`` meets any 128 threads, device ``printf``
prints the lines the emulator prints, and a cooperative launch's ``grid_sync`` gives the emulator's results."""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import txlab
from txlab.emulator import emulate

pytestmark = pytest.mark.gpu


def test_the_rotation_is_bitwise_the_gpus():
    from test_emulator_contraction import ROPE
    from test_emulator import kernel

    k = txlab.compile(kernel(ROPE, "rope"))
    rng = np.random.default_rng(5)
    x = rng.standard_normal((256, 2)).astype(np.float32)
    ang = rng.uniform(0, 6.28, 256)
    cs = np.stack([np.cos(ang), np.sin(ang)], 1).astype(np.float32)
    on_gpu, on_cpu = np.zeros((256, 2), np.float32), np.zeros((256, 2), np.float32)
    k(x, cs, on_gpu)
    assert emulate(k, x, cs, on_cpu).ok
    assert np.array_equal(on_gpu.view(np.uint32), on_cpu.view(np.uint32))


def test_warpgroup_sync_meets_any_128_threads_on_the_gpu():
    from test_emulator import kernel
    from test_emulator_warp_sync import WARPS_1_TO_4

    c = txlab.compile(kernel(WARPS_1_TO_4, "k"))
    on_gpu, on_cpu = np.zeros(160, np.float32), np.zeros(160, np.float32)
    c(on_gpu)
    assert emulate(c, on_cpu).ok
    assert np.array_equal(on_gpu, on_cpu)


PRINTF = textwrap.dedent(
    """
    import numpy as np, sys, txlab
    from tvm.script import tirx as T

    @T.prim_func
    def show(X: T.Buffer((8,), "float32")):
        T.device_entry()
        bx = T.cta_id([2])
        tx = T.thread_id([4])
        if tx % 2 == 0:
            T.cuda.printf("cta %d tx=%d x=%5.2f u=%u %%\\n", bx, tx, X[bx * 4 + tx], tx - 2)

    c = txlab.compile(show)
    x = np.arange(8, dtype=np.float32)
    if sys.argv[1] == "gpu":
        c(x)
    else:
        txlab.emulate(c, x)
    """
)


def test_device_printf_prints_the_emulators_lines(tmp_path):
    """The GPU's device printf reaches the process's stdout at synchronisation (a C stream, so in a subprocess);
    its lines are the emulator's, in CUDA's own order (compared as sets of lines)."""
    script = tmp_path / "show.py"
    script.write_text(PRINTF)
    root = Path(__file__).resolve().parents[1]
    out = {}
    for where in ("gpu", "cpu"):
        r = subprocess.run([sys.executable, str(script), where], capture_output=True, text=True, timeout=300, cwd=root)
        assert r.returncode == 0, r.stderr
        out[where] = sorted(ln for ln in r.stdout.splitlines() if ln.startswith("cta "))
    assert len(out["cpu"]) == 4 and out["gpu"] == out["cpu"], out


@pytest.mark.parametrize("ctas", [4, 300])
def test_grid_sync_of_a_cooperative_launch_matches_the_gpu(ctas):
    from test_emulator_grid_sync import expected, two_phase

    c = txlab.compile(two_phase(ctas)[0])
    n = ctas * 128
    outs = []
    for go in (c, lambda *a: emulate(c, *a)):
        x, y, z = np.arange(n, dtype=np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32)
        go(x, y, z)
        outs.append(z)
    assert np.array_equal(outs[0], expected(ctas)[2]) and np.array_equal(outs[0], outs[1])


def test_ptx_float_math_matches_the_gpu_to_the_stated_precision():
    """``.rn`` rows bitwise; ``.approx`` rows within the MUFU bounds (tanh.approx about 2^-11 relative)."""
    from test_emulator_ptx_floatmath import MATH
    from test_emulator import kernel

    c = txlab.compile(kernel(MATH, "math"))
    a = np.concatenate([np.linspace(0.05, 6.0, 62), [1e-40, 3.0]]).astype(np.float32)
    runs = []
    for go in (c, lambda *x: emulate(c, *x)):
        o, d = np.zeros((7, 64), np.float32), np.zeros((2, 64), np.float64)
        go(a, o, d)
        runs.append((o, d))
    (og, dg), (oc, dc) = runs
    assert np.array_equal(og[2:4].view(np.uint32), oc[2:4].view(np.uint32)) and np.array_equal(dg, dc)
    for row, rtol in ((0, 2.5e-7), (1, 2.5e-7), (4, 2**-10), (5, 2.5e-7), (6, 1e-6)):
        assert np.allclose(og[row], oc[row], rtol=rtol, atol=1e-6), (row, np.abs(og[row] - oc[row]).max())


def test_bulk_copies_match_the_gpu():
    from test_emulator import kernel
    from test_emulator_bulk_copy import DSMEM, ROUND_TRIP

    for src, name, make in (
        (
            ROUND_TRIP.replace("SIZE", "512"),
            "round_trip",
            lambda: (np.arange(128, dtype=np.float32), np.zeros(128, np.float32)),
        ),
        (DSMEM, "dsmem", lambda: ((np.arange(256) % 97).astype(np.float16), np.zeros(256, np.float16))),
    ):
        c = txlab.compile(kernel(src, name))
        on_gpu, on_cpu = make(), make()
        c(*on_gpu)
        assert emulate(c, *on_cpu).ok
        assert np.array_equal(on_gpu[1], on_cpu[1]), name


@pytest.mark.parametrize("args, dtype", [(a, d) for a, d, _ in __import__("test_emulator_tensormaps").REFUSED[:10]])
def test_the_gpu_refuses_the_tensor_maps_the_emulator_refuses(args, dtype):
    from test_emulator_tensormaps import unicast

    c = txlab.compile(unicast(args, dtype))
    a = np.arange(256).reshape(16, 16).astype(dtype)
    with pytest.raises(Exception):  # noqa: B017 - TVM's host check or the driver's CUDA_ERROR_INVALID_VALUE
        c(a, np.zeros_like(a))
