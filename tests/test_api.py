"""The API catalogue: introspected from the installed TVM, every example compiles for its arch,
GPU-runnable examples check real results on an H200."""

from __future__ import annotations

import pytest

import txlab.api as api

REQUIRED = [  # names the issue lists explicitly; the catalogue must find them by introspection
    "Tx.cuda.elect_sync",
    "Tx.cuda.__shfl_xor_sync",
    "Tx.cuda.__activemask",
    "Tx.cuda.wgmma.encode_matrix_descriptor",
    "Tx.cuda.wgmma.noop_barrier",
    "Tx.cuda.tcgen05.encode_instr_descriptor_block_scaled",
    "Tx.cuda.iket.official_event",
    "Tx.cuda.mma_fill_legacy",
    "Tx.nvshmem.putmem_nbi.warp",
    "Tx.nvshmem.putmem_signal_nbi.block",
    "Tx.nvshmem.putmem_nbi",
    "tvm.backend.cuda.lang.Pipeline",
    "tvm.backend.cuda.lang.TMEMPool",
    "tvm.backend.cuda.iket.profile",
    "tvm.backend.cuda.iket.IketProfileError",
    "tvm.backend.cuda.transforms.LowerIket",
]


@pytest.fixture(scope="module")
def rows():
    return api.coverage()


def test_catalogue_is_introspected_and_complete():
    names = {e.name for e in api.catalogue()}
    missing = [n for n in REQUIRED if n not in names]
    assert not missing, missing
    assert len(names) >= 120
    e = api.entry("Tx.cuda.warp_reduce")
    assert e.signature.startswith("(value, op") and "shuffle" in e.doc.lower()
    assert api.entry("Tx.cuda.wgmma.encode_matrix_descriptor").arch == "sm_90a"
    assert api.entry("Tx.nvshmem.quiet").arch == "multi-GPU"
    with pytest.raises(KeyError, match="not in the TIRx CUDA API"):
        api.entry("Tx.cuda.no_such_helper")


def test_examples_use_only_names_the_installed_tvm_has():
    assert api.catalogue_drift() == []


def _nvshmem_only_names() -> set[str]:
    """Names every one of whose examples needs NVSHMEM (headers + libnvshmem_device)."""
    exs = api.examples()
    return {e.name for e in api.catalogue() if e.examples and all("nvshmem" in exs[i].needs for i in e.examples)}


def test_every_example_compiles_for_its_arch(rows):
    built = api.compile_examples()
    failed = {k: why for k, (ok, why) in built.items() if not ok}
    if api.nvshmem_home() is None:  # the only allowed failures: NVSHMEM not installed, said plainly
        nv = {k for k, ex in api.examples().items() if "nvshmem" in ex.needs}
        assert set(failed) == nv, failed
        assert all("pip install nvidia-nvshmem-cu13" in why for why in failed.values()), failed
    else:
        assert not failed, failed
    for r in rows:
        assert r["has_example"], r["name"]


def test_coverage_rows_have_the_documented_shape(rows):
    keys = {"name", "category", "arch", "has_example", "compiles", "verified_gpu"}
    for r in rows:
        assert keys <= set(r)
        if r["arch"] in ("sm_100a", "multi-GPU") and r["has_example"]:
            assert r["verified_gpu"] is None and r["not_on_h200"]
    md = api.coverage_markdown(rows)
    assert md.count("\n| `") == len(rows)


def test_every_listed_name_has_a_compiling_example(rows):
    """Every name compiles to a cubin for its arch, except -- only where NVSHMEM is not installed --
    exactly the names that only NVSHMEM kernels use (their rows say why)."""
    lacking = {r["name"] for r in rows if not (r["has_example"] and r["compiles"])}
    expected = _nvshmem_only_names() if api.nvshmem_home() is None else set()
    assert lacking == expected, sorted(lacking ^ expected)
    for r in rows:
        if r["name"] in expected:
            assert "NVSHMEM" in r["compile_error"], r
    assert {
        "Tx.nvshmem.putmem_nbi.warp",
        "tvm.backend.cuda.lang.RankAwareGroupMajorTileScheduler",
    } <= _nvshmem_only_names()


def test_methods_named_by_the_issue_are_catalogued_with_examples(rows):
    by = {r["name"]: r for r in rows}
    for m in (
        "MBarrier.remote_view",
        "SMEMPool.alloc_tcgen05_mma_AB",
        "SMEMPool.commit",
        "SmemDescriptor.make_lo_uniform",
        "TMEMPool.alloc",
        "TMEMPool.alloc_sf",
        "TMEMPool.alloc_tcgen05_mma_A",
        "TMEMPool.alloc_tcgen05_mma_C",
        "TMEMPool.alloc_tcgen05_mma_D",
    ):
        r = by[f"tvm.backend.cuda.lang.{m}"]
        assert r["has_example"] and r["compiles"], r
    assert by["tvm.backend.cuda.lang.TMEMPool.alloc"]["arch"] == "sm_100a"


def test_runtime_less_rows_say_why(rows):
    for r in rows:
        if r["verified_gpu"] is None:
            assert r["not_on_h200"], r
    by = {r["name"]: r for r in rows}
    # IKET names cannot run in-process; the run-iket record from the H200 verifies them
    iket = by["tvm.backend.cuda.iket.profile"]
    assert iket["verified_gpu"] is True and "run-iket" in iket["verified_by"] and "not_on_h200" not in iket
    assert "cooperative" in by["Tx.cuda.grid_sync"]["not_on_h200"]
    assert by["tvm.backend.cuda.lang.Pipeline"]["verified_gpu"] is not None  # H200-checkable


def test_emitted_cuda_lines_match_each_examples_regexes():
    """The per-name regexes (APIView highlights) really find lines in the generated CUDA."""
    import re

    for ex_id in ("timer_ring", "mma_fragment_store", "tma_tile", "iket_regions"):
        ex = api.examples()[ex_id]
        src = api.cuda_source(ex_id)
        for name, rx in ex.emits.items():
            assert any(re.search(rx, line) for line in src.splitlines()), (ex_id, name, rx)


def test_lower_iket_strips_or_lowers_annotations():
    from txlab.api_examples.iket import lower_iket

    pf = api.examples()["iket_regions"].prim_func()
    assert "cuda.iket" not in lower_iket(pf, enabled=False).script()
    assert lower_iket(pf, enabled=True).script().count("T.cuda.iket.official_event") >= 6


def test_verify_refuses_without_gpu_and_names_the_fix():
    from txlab.device import has_gpu

    if has_gpu():
        pytest.skip("has a GPU")
    from txlab.errors import NoGPUError

    with pytest.raises(NoGPUError):
        api.verify("Tx.cuda.ballot_sync")


@pytest.mark.gpu
def test_verify_all_on_gpu():
    rec = api.verify_all(write=False)
    bad = {k: r for k, r in rec["examples"].items() if not r["ok"]}
    assert rec["examples"] and not bad, bad


def test_coverage_reads_multi_gpu_record(tmp_path, monkeypatch):
    """A multi-GPU run recorded by scripts/nvshmem_2gpu.py --json marks the NVSHMEM names it used."""
    import json

    path = tmp_path / "multi.json"
    from txlab.api import coverage_rows  # the module that reads the records

    monkeypatch.setattr(coverage_rows, "VERIFIED_MULTI_GPU_JSON", path)
    rows = {r["name"]: r for r in api.coverage(compile=False)}
    assert "verified_multi_gpu" not in rows["Tx.nvshmem.my_pe"]  # no record: no claim
    path.write_text(json.dumps({"n_gpus": 2, "examples": {"nvshmem_exchange": {"ok": True}}}))
    rows = {r["name"]: r for r in api.coverage(compile=False)}
    assert rows["Tx.nvshmem.putmem_signal_nbi.block"]["verified_multi_gpu"] is True
    assert rows["Tx.nvshmem.my_pe"]["verified_gpu"] is None  # still not an H200-alone check
    assert "verified_multi_gpu" not in rows["Tx.cuda.elect_sync"]
    path.write_text(json.dumps({"n_gpus": 2, "examples": {"nvshmem_exchange": {"ok": False}}}))
    rows = {r["name"]: r for r in api.coverage(compile=False)}
    assert rows["Tx.nvshmem.fence"]["verified_multi_gpu"] is False
