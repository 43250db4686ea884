"""txlab.profile: reading real H200 Nsight Compute reports (tests/data/h200), the line roll-up
through the profiled cubin's line table, Profile files, diffs, the ncu command and the runner's
fault plumbing; on a GPU with ncu, profiling the notebook kernels end to end."""

import gzip
import json
import os
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

import txlab
from txlab import ncu
from txlab.display import html_of
from txlab.profiling import Profile, ProfileDiff, with_lineinfo

DATA = Path(__file__).parent / "data" / "h200"


def _report(tmp_path, name):
    out = tmp_path / f"{name}.ncu-rep"
    out.write_bytes(gzip.decompress((DATA / f"{name}.ncu-rep.gz").read_bytes()))
    return out


@pytest.fixture(scope="module")
def sample_kernels():
    from txlab.magic import run_cell

    src = (DATA / "sample_kernels.py").read_text()
    return run_cell(src, {}, arch="sm_90a")


@pytest.fixture(scope="module")
def gemm():
    from txlab.examples import hopper_gemm as hg

    with hg.built_as_before("enc:", "tpf:", "v16:"):  # as profiled: the default config, before rounds 23 and 29
        return with_lineinfo(hg.build(4096, 4096, 4096, hg.GemmConfig()))


def test_read_report_metrics_and_pcs(tmp_path):
    raw = ncu.read_report(_report(tmp_path, "transpose_naive"))
    assert raw["kernel"] == "transpose_naive_kernel"
    m = raw["metrics"]
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"][0] == 63488
    assert m["gpu__time_duration.sum"] == [3392, "ns"] or m["gpu__time_duration.sum"][0] == 3392
    assert m["device__attribute_display_name"][0] == "NVIDIA H200"
    assert raw["pcs"] and all(isinstance(o, int) and o % 16 == 0 for o in raw["pcs"])
    total = sum(v.get("smsp__pcsamp_sample_count", 0) for v in raw["pcs"].values())
    assert total == 86
    with pytest.raises(txlab.errors.ProfilerError, match="no launch"):
        ncu.read_report(_report(tmp_path, "transpose_naive"), "other_kernel")


def test_bank_conflicts_naive_vs_padded(tmp_path, sample_kernels):
    naive = Profile.from_report(_report(tmp_path, "transpose_naive"), with_lineinfo(sample_kernels["transpose_naive"]))
    padded = Profile.from_report(
        _report(tmp_path, "transpose_padded"), with_lineinfo(sample_kernels["transpose_padded"])
    )
    hn, hp = naive.headline, padded.headline
    assert hn["smem_ld_wavefronts_per_request"] == 32.0 and hp["smem_ld_wavefronts_per_request"] == 1.0
    assert hn["smem_ld_bank_conflicts"] >= 8 * max(hp["smem_ld_bank_conflicts"], 1)
    # the column-wise shared read is one user line, the hottest; its shared wavefronts carry the conflicts
    assert naive.line_kind == "tvmscript"  # through Compiled.source_map
    read_line = next(r for r in naive.lines if "= tile[tx, ty]" in r["text"])
    assert read_line["shared_wavefronts"] == 65536 and read_line["line"] == naive.lines[0]["line"]
    cuda_read = next(r for r in naive.cuda_lines if "= tile_ptr[" in r["text"])
    assert cuda_read["shared_wavefronts"] == 65536
    assert naive.attributed_share == 1.0
    assert "32.0 wavefronts per request" in naive.summary()
    d = txlab.compare(naive, padded)
    assert isinstance(d, ProfileDiff)
    row = next(r for r in d.rows if r["metric"] == "smem_ld_wavefronts_per_request")
    assert row["ratio"] == pytest.approx(1 / 32)
    assert "<table>" in html_of(d)


def test_gemm_roll_up(tmp_path, gemm):
    p = Profile.from_report(_report(tmp_path, "gemm"), gemm)
    assert p.kernel == "hopper_gemm_kernel" and p.total_samples == 18769
    # the report's SASS is our cubin's, instruction for instruction (compilation is deterministic)
    raw = ncu.read_report(_report(tmp_path, "gemm"))
    from txlab.profiling import sass_by_offset

    ours = sass_by_offset(gemm.sass, p.kernel)
    assert all(ours[o].split()[0] == s.split()[0] for o, s in raw["sass"].items())
    assert p.attributed_share >= 0.95
    hot = p.lines[0]
    assert "wgmma" in hot["text"]
    assert p.line_of("HGMMA") is not None and "UTMALDG" in " ".join(
        i["sass"] for i in p.instructions_at(p.line_of("UTMALDG")["line"])
    )
    assert p.bound() == "compute" and p.headline["tensor_pipe_pct"] > 50
    heat = p.heat()
    assert heat[hot["line"]]["samples"] == hot["samples"] and heat[hot["line"]]["stalls"]
    assert sum(v["samples"] for v in heat.values()) == p.total_samples
    assert p.stalls and all(isinstance(v, float) for v in p.stalls.values())


def test_save_load_and_format_errors(tmp_path, gemm):
    p = Profile.from_report(_report(tmp_path, "gemm"), gemm)
    path = p.save(tmp_path / "g.profile.json")
    q = Profile.load(path)
    assert q.lines == p.lines and q.headline == p.headline and q.summary() == p.summary()
    bad = json.loads(path.read_text())
    for mutate, msg in [
        (lambda d: d.update(schema="x"), "not a txlab profile"),
        (lambda d: d.update(version=99), "version 99"),
        (lambda d: d.pop("metrics"), "missing metrics"),
        (lambda d: d["instructions"].append({"offset": "x"}), "integer offset"),
    ]:
        d = json.loads(path.read_text())
        mutate(d)
        f = tmp_path / "bad.json"
        f.write_text(json.dumps(d))
        with pytest.raises(txlab.errors.FormatError, match=msg):
            Profile.load(f)
    (tmp_path / "nojson.json").write_text("{")
    with pytest.raises(txlab.errors.FormatError):
        Profile.load(tmp_path / "nojson.json")
    import matplotlib

    matplotlib.use("Agg")
    assert p.plot() is not None and "<table>" in html_of(p)


def test_saved_profiles_load():
    names = txlab.profiling.saved()
    for n in names:
        p = txlab.profile.saved(n)
        assert p.instructions and p.metrics and p.summary()
    with pytest.raises(FileNotFoundError, match="saved profiles"):
        txlab.profiling.saved("no-such-profile")


def test_lineinfo_rebuild_keeps_sass(sample_kernels):
    import dataclasses
    import re

    from txlab import toolchain

    c = sample_kernels["transpose_padded"]
    assert ncu.has_line_info(c.cubin) and with_lineinfo(c) is c  # kernels are built with -lineinfo
    # a cubin without a line table (PTX without .loc/.file) is rebuilt with one, same SASS
    bare_ptx = "\n".join(l for l in c.ptx.splitlines() if not re.match(r"\s*\.(loc|file)\b", l))
    bare, _ = toolchain.ptx_to_cubin(bare_ptx, c.arch)
    assert not ncu.has_line_info(bare)
    b = dataclasses.replace(c, cubin=bytes(bare), key="bare")
    t = with_lineinfo(b)
    assert t.key not in ("bare", c.key) and ncu.has_line_info(t.cubin)
    from txlab import sass

    def strip(s):
        return [l.split("*/", 1)[1].strip() for l in s.splitlines() if "/*0" in l and "*/" in l]

    assert strip(sass.of_cubin(t.cubin).text) == strip(sass.of_cubin(bare).text)
    table = sass.cuda_line_table(t.cubin)["transpose_padded_kernel"]
    lines = c.cuda_source.splitlines()
    assert table and all(0 < ln <= len(lines) for ln in table.values())


def test_command_and_output_classification():
    cmd = ncu.command("/x/ncu", kernel="k.1", report="/tmp/r", argv=["py", "-m", "m"], metrics=["a", "b"])
    assert cmd[:2] == ["/x/ncu", "--target-processes"] and "regex:^k\\.1$" in cmd
    assert cmd[cmd.index("--clock-control") + 1] == "none" and cmd[-3:] == ["py", "-m", "m"]
    assert cmd[cmd.index("--metrics") + 1] == "a,b" and cmd.count("--section") == len(ncu.DEFAULT_SECTIONS)
    assert ncu.classify_output("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission")[0] == "permission"
    assert ncu.classify_output("==WARNING== No kernels were profiled.")[0] == "no_kernel"
    assert ncu.classify_output("all good") is None


def test_runner_reports_a_failed_start(tmp_path):
    """The runner is the worker's loop: without a usable GPU it writes init_failed, typed."""
    import pickle
    import subprocess

    from txlab import ncu_runner

    job = tmp_path / "job.pkl"
    msgs = tmp_path / "m.pkl"
    job.write_bytes(
        pickle.dumps(
            {"request": {"op": "launch", "key": "k", "args": []}, "messages": str(msgs), "tvm_mode": "runtime"}
        )
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent), "CUDA_VISIBLE_DEVICES": ""}
    subprocess.run([sys.executable, "-m", "txlab.ncu_runner", str(job)], env=env, timeout=120, check=True)
    got = ncu_runner.read_messages(msgs)
    assert got and got[0][0] in ("init_failed", "ready")


def test_profile_timeout_kills_the_run(tmp_path, monkeypatch, sample_kernels):
    """A hang under 'ncu' is a KernelFault('timeout') and the process group is gone (fake ncu)."""
    from txlab import profiling

    fake = tmp_path / "ncu"
    fake.write_text("#!/bin/sh\nsleep 30\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    out, code, timed_out = profiling.run_ncu([str(fake)], 1.0, tmp_path / "none.pkl")
    assert timed_out


def test_without_gpu_profile_says_so(sample_kernels):
    if txlab.device.has_gpu():
        pytest.skip("a GPU is present")
    a = np.zeros((2048, 2048), "float32")
    with pytest.raises(txlab.NoGPUError):
        txlab.profile(sample_kernels["transpose_naive"], a, a.copy())


@pytest.mark.gpu
def test_profile_transposes_on_gpu(isolated):
    from txlab.examples import transpose as tr

    if ncu.find_ncu() is None:
        pytest.skip("ncu not found")
    n = 2048
    a = np.random.default_rng(0).standard_normal((n, n)).astype("float32")
    profs = {v: txlab.profile(txlab.compile(tr.transpose_kernel(n, v)), a, np.zeros_like(a)) for v in tr.VARIANTS}
    c = {v: p.headline["smem_ld_bank_conflicts"] for v, p in profs.items()}
    assert c["naive"] >= 8 * max(c["padded"], 1) and c["naive"] >= 8 * max(c["swizzled"], 1)
    assert profs["naive"].headline["smem_ld_wavefronts_per_request"] > 16
    for p in profs.values():
        assert p.attributed_share >= 0.95 and p.duration_ns > 0
        h = p.headline
        for key in (
            "theoretical_occupancy_pct",
            "registers_per_thread",
            "shared_mem_per_block_bytes",
            "waves_per_sm",
            "achieved_occupancy_pct",
        ):
            assert h[key] is not None, (p.kernel, key, p.headline_sources[key])


def test_magic_profile_option(sample_kernels):
    from txlab.magic import MagicArgumentError, parse_magic_line, profile_cell

    assert parse_magic_line('--profile "a, b"').profile == "a, b"
    with pytest.raises(MagicArgumentError, match="could not evaluate"):
        profile_cell({"k": sample_kernels["transpose_naive"]}, "a, nope", {"a": 1})
    with pytest.raises(MagicArgumentError, match="no @T.prim_func"):
        profile_cell({}, "a", {})
    if not txlab.device.has_gpu():
        a = np.zeros((2048, 2048), "float32")
        with pytest.raises(txlab.NoGPUError):
            profile_cell({"k": sample_kernels["transpose_naive"]}, "a, b", {"a": a, "b": a.copy()})


def test_lineinfo_rebuild_keeps_the_compile_options():
    """The rebuild uses the kernel's own options: an IEEE-math build stays IEEE (no .FTZ)."""
    import dataclasses
    import re

    from txlab import toolchain
    from txlab.magic import run_cell

    src = (Path(__file__).parent / "kernels" / "basics.py").read_text().split("\n\n@T.prim_func")[0]
    c = run_cell(src, {}, arch="sm_90a", fast_math=False)["scale"]
    assert "FADD.FTZ" not in c.sass and "FADD " in c.sass  # (x * 2 is FADD x, x)
    bare_ptx = "\n".join(l for l in c.ptx.splitlines() if not re.match(r"\s*\.(loc|file)\b", l))
    bare, _ = toolchain.ptx_to_cubin(bare_ptx, c.arch)
    t = with_lineinfo(dataclasses.replace(c, cubin=bytes(bare), key="bare"))
    assert ncu.has_line_info(t.cubin) and "FADD.FTZ" not in t.sass and "FADD " in t.sass


def test_loading_refuses_what_is_not_a_regular_file(tmp_path):
    """A saved profile or sanitizer report named by the user is read capped, regular files only:
    a symlink to /dev/zero or a FIFO is an error, not an endless read or a hang."""
    import os

    from txlab import sanitizer
    from txlab.files import FileReadError

    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for path in (zero, fifo):
        with pytest.raises(FileReadError, match="regular file"):
            Profile.load(path)
        with pytest.raises(FileReadError, match="regular file"):
            sanitizer.load(path)


def test_headline_reads_launch_and_occupancy_metrics(tmp_path, sample_kernels):
    """ncu stores launch statistics and the occupancy section as one-instance metrics; the headline
    must hold them (it read None for every plain kernel before), and say where each came from."""
    raw = ncu.read_report(_report(tmp_path, "transpose_naive"))
    assert raw["metrics"]["launch__registers_per_thread"][0] == 16
    assert raw["metrics"]["sm__maximum_warps_per_active_cycle_pct"][0] == 100.0
    for name in ("transpose_naive", "transpose_padded", "gemm"):
        prof = Profile.from_report(_report(tmp_path, name))
        h, src = prof.headline, prof.headline_sources
        for key in (
            "theoretical_occupancy_pct",
            "registers_per_thread",
            "shared_mem_per_block_bytes",
            "waves_per_sm",
            "achieved_occupancy_pct",
        ):
            assert h[key] is not None, (name, key, src[key])
            assert not src[key].startswith("missing"), (name, key, src[key])
        assert h["occupancy_limits"] and h["occupancy_limiter"]
    naive = Profile.from_report(_report(tmp_path, "transpose_naive"))
    # ncu's launch__shared_mem_per_block: the kernel's 4 KiB tile plus the 1 KiB the driver reserves
    assert naive.headline["shared_mem_per_block_bytes"] == 4096 + 1024
    assert naive.headline["waves_per_sm"] == pytest.approx(0.2424, abs=1e-3)


def test_headline_names_why_a_field_is_missing():
    prof = Profile(
        name="k",
        kernel="k",
        arch="sm_90a",
        device="NVIDIA H200",
        metrics={
            "gpu__time_duration.sum": [1000, "ns"],
            "launch__occupancy_limit_blocks": [32, "block"],
            "launch__occupancy_limit_warps": [2, "block"],
            "device__attribute_max_warps_per_multiprocessor": [64, "warp"],
        },
        instructions=[],
        launch={"threads_per_block": 1024, "ptxas_registers": 40},
        sections=["SpeedOfLight"],
    )
    h, src = prof.headline, prof.headline_sources
    assert h["registers_per_thread"] == 40 and "ptxas" in src["registers_per_thread"]
    assert h["theoretical_occupancy_pct"] == 100.0 and "limits" in src["theoretical_occupancy_pct"]
    assert h["waves_per_sm"] is None
    assert src["waves_per_sm"] == "missing: ncu did not collect the LaunchStats section (profile with it)"
    assert src["l2_hit_rate_pct"].startswith("missing: this report has none of lts__t_sector_hit_rate.pct")
