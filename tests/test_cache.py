"""The compile cache verifies itself and never costs a compile (issue 20, items 1 and 2)."""

import dataclasses
import errno
import json
import os
import warnings
from pathlib import Path

import pytest

import txlab
from txlab import cache
from txlab.display import compiled_html  # what a notebook shows for a Compiled (IPython formatter)
from txlab.magic import run_cell

KERNELS = (Path(__file__).parent / "kernels" / "basics.py").read_text()
SCALE = KERNELS.split("\n\n@T.prim_func")[0]


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A kernel compiled once into an empty cache of its own: (Compiled, its entry folder)."""
    monkeypatch.setenv("TXLAB_CACHE_DIR", str(tmp_path / "cache"))
    c = run_cell(SCALE, {}, arch="sm_90a", use_cache=False)["scale"]
    entry = cache.entry_path(c.key)
    assert (entry / "kernel.cubin").is_file()
    return c, entry


def _again(c, **kw):
    return txlab.compile(c.ir_module, arch="sm_90a", name="scale", **kw)


def test_a_good_entry_is_a_hit(fresh):
    c, _ = fresh
    again = _again(c)
    assert again.cache_hit and again.cubin == c.cubin and again.sass == c.sass


def test_truncated_cubin_is_a_miss_that_repairs_the_entry(fresh):
    c, entry = fresh
    cubin = entry / "kernel.cubin"
    cubin.write_bytes(cubin.read_bytes()[: len(c.cubin) // 2])
    again = _again(c)
    assert not again.cache_hit, "half a cubin was served as a cache hit"
    assert again.cubin == c.cubin
    assert cubin.read_bytes() == c.cubin  # the entry was replaced
    third = _again(c)
    assert third.cache_hit and third.cubin == c.cubin


@pytest.mark.parametrize(
    "damage", ["empty meta", "missing meta", "missing cu", "garbage ptx", "missing manifest", "meta not json"]
)
def test_damaged_entries_rebuild(fresh, damage):
    c, entry = fresh
    if damage == "empty meta":
        (entry / "meta.json").write_text("")
    elif damage == "missing meta":
        (entry / "meta.json").unlink()
    elif damage == "missing cu":
        (entry / "kernel.cu").unlink()
    elif damage == "garbage ptx":
        (entry / "kernel.ptx").write_bytes(b"\xff\xfe not ptx")
    elif damage == "missing manifest":
        (entry / cache.MANIFEST).unlink(missing_ok=True)
    else:
        (entry / "meta.json").write_text("{not json")
    again = _again(c)
    assert not again.cache_hit and again.cubin == c.cubin and again.ptx == c.ptx
    assert _again(c).cache_hit


def test_use_cache_false_replaces_a_bad_entry(fresh):
    c, entry = fresh
    (entry / "meta.json").write_text("")
    rebuilt = _again(c, use_cache=False)
    assert not rebuilt.cache_hit
    assert json.loads((entry / "meta.json").read_text())["name"] == "scale"
    assert _again(c).cache_hit


def _rewrite_manifest(entry: Path):
    """What an attacker who edits files can also do: make the manifest agree with them."""
    import hashlib

    mpath = entry / cache.MANIFEST
    if not mpath.exists():
        return
    m = json.loads(mpath.read_text())
    for name in m["files"]:
        data = (entry / name).read_bytes()
        m["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    mpath.write_text(json.dumps(m))


PAYLOAD = '<img src=x onerror="window.__pwned=1">'


def test_tampered_meta_cannot_inject_html(fresh):
    c, entry = fresh
    meta = json.loads((entry / "meta.json").read_text())
    kernel = next(iter(meta["resources"]))
    meta["resources"][kernel]["registers"] = PAYLOAD
    meta["resources"][kernel]["stack_bytes"] = PAYLOAD
    (entry / "meta.json").write_text(json.dumps(meta))
    _rewrite_manifest(entry)
    again = _again(c)
    assert "<img" not in compiled_html(again)


def test_every_value_reaching_html_is_escaped(fresh):
    c, _ = fresh
    k = c.kernels[0]
    evil = dataclasses.replace(
        c,
        name=PAYLOAD,
        arch=PAYLOAD,
        resources={
            k: {
                **c.resources[k],
                "registers": PAYLOAD,
                "stack_bytes": PAYLOAD,
                "spill_store_bytes": PAYLOAD,
                "static_smem_bytes": PAYLOAD,
                "dynamic_smem_bytes": PAYLOAD,
            }
        },
        launch={k: {**c.launch[k], "grid": (PAYLOAD,), "block": (PAYLOAD,), "cluster": (PAYLOAD,)}},
        timings={PAYLOAD: 0.1, "nvcc": PAYLOAD},
    )
    html = compiled_html(evil)
    assert "<img" not in html and "&lt;img" in html


# ---- item 2: a cache directory that cannot be used -------------------------------------------
def _cache_warnings(record):
    return [w for w in record if "cache" in str(w.message).lower()]


def test_cache_dir_under_a_file_compiles_uncached_with_one_warning(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("TXLAB_CACHE_DIR", str(blocker / "cache"))
    cache.forget_warnings()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        a = run_cell(SCALE.replace("2.0", "7.0"), {}, arch="sm_90a")["scale"]
        b = txlab.compile(a.ir_module, arch="sm_90a", name="scale")
    assert a.cubin[:4] == b"\x7fELF" and b.cubin == a.cubin and not b.cache_hit
    assert len(_cache_warnings(record)) == 1, [str(w.message) for w in record]
    assert str(blocker) in str(_cache_warnings(record)[0].message)


def test_full_disk_keeps_the_compiled_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("TXLAB_CACHE_DIR", str(tmp_path / "cache"))
    cache.forget_warnings()

    def enospc(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", enospc)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        c = run_cell(SCALE.replace("2.0", "9.0"), {}, arch="sm_90a")["scale"]
    assert c.cubin[:4] == b"\x7fELF"
    assert len(_cache_warnings(record)) == 1
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.name.startswith(".")], (
        "the half-written temporary entry was left behind"
    )


def test_read_only_cache_dir(tmp_path, monkeypatch):
    """Root ignores chmod, so a read-only file system is simulated where the write happens."""
    monkeypatch.setenv("TXLAB_CACHE_DIR", str(tmp_path / "cache"))
    cache.forget_warnings()
    import tempfile

    real_mkdtemp = tempfile.mkdtemp

    root = str(tmp_path / "cache")

    def erofs(*a, **k):
        if str(k.get("dir", "")).startswith(root):
            raise OSError(errno.EROFS, "Read-only file system")
        return real_mkdtemp(*a, **k)

    monkeypatch.setattr(tempfile, "mkdtemp", erofs)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        c = run_cell(SCALE.replace("2.0", "11.0"), {}, arch="sm_90a")["scale"]
    assert c.cubin[:4] == b"\x7fELF" and len(_cache_warnings(record)) == 1
    monkeypatch.setattr(tempfile, "mkdtemp", real_mkdtemp)


def test_scheduler_trace_with_an_unusable_cache_dir(tmp_path, monkeypatch):
    from txlab import schedulers

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("TXLAB_CACHE_DIR", str(blocker / "cache"))
    schedulers.clear_cache()
    cache.forget_warnings()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        t = schedulers.trace("GroupMajor3D", 5, m_tiles=3, n_tiles=7, k_tiles=1, group_rows=2)
    assert len(t.cta) == 21
    assert len(_cache_warnings(record)) == 1


def test_verified_file_rebuilds_a_damaged_library(tmp_path, monkeypatch):
    """The worker's exported kernel library (lib/<key>.so) is served only while its digest holds."""
    monkeypatch.setenv("TXLAB_CACHE_DIR", str(tmp_path / "cache"))
    builds = []

    def build(p):
        builds.append(p)
        Path(p).write_bytes(b"\x7fELF library " * 100)

    first = cache.verified_file("lib/k.so", build)
    assert first.read_bytes().startswith(b"\x7fELF") and len(builds) == 1
    assert cache.verified_file("lib/k.so", build) == first and len(builds) == 1
    first.write_bytes(first.read_bytes()[:10])  # truncated
    again = cache.verified_file("lib/k.so", build)
    assert len(builds) == 2 and again.read_bytes() == b"\x7fELF library " * 100
    (tmp_path / "blocker").write_text("")
    monkeypatch.setenv("TXLAB_CACHE_DIR", str(tmp_path / "blocker" / "cache"))
    cache.forget_warnings()
    with pytest.warns(cache.CacheWarning):
        assert cache.verified_file("lib/k.so", build) is None


def test_sealed_json_documents_open_only_unchanged():
    """One checksum for every sealed JSON file txlab writes (sanitizer reports, tune results and
    measurements, the GEMM table): canonical JSON, compact or not, and a typed verdict on open."""
    from txlab.cache import json_digest, seal, sealed_body

    body = {"b": [1, 2.5, "x"], "a": {"z": None}}
    doc = seal(body, "report", compact=True, key="k")
    assert doc["key"] == "k" and sealed_body(json.loads(json.dumps(doc)), "report", compact=True) == (body, None)
    assert json_digest(body) != json_digest(body, compact=True)  # two spellings, both stable
    assert json_digest({"a": {"z": None}, "b": [1, 2.5, "x"]}) == json_digest(body)  # key order is not content
    doc["report"]["b"][0] = 2
    assert sealed_body(doc, "report", compact=True) == (None, "mismatch")
    assert sealed_body({"report": body}, "report") == (None, "missing")
    assert sealed_body([body], "report") == (None, "missing")


def test_text_sealed_documents_check_the_body_as_written(tmp_path):
    """A large sealed file (the GEMM's measurements) is checked on the bytes of its body as they stand in the file, so
    reading it needs no second dump: the same body rewritten with other spacing, one value edited, another format or
    a missing checksum are each refused with the reason; fields that do not sort before the body are refused on write."""
    from txlab.cache import read_sealed_text, seal_text

    body = {"rows": [[1, 2.5, "x"], [3, 4.0, "y"]], "cols": ["a", "b", "c"]}
    path = tmp_path / "m.json"
    path.write_text(seal_text(body, "payload", lines="rows", format="f/1", device="d"))
    assert path.read_text().count("\n") == 2  # a row a line
    doc = read_sealed_text(path, "payload", "f/1")
    assert (doc["payload"], doc["device"], doc["format"], len(doc["sha256"])) == (body, "d", "f/1", 64)
    with pytest.raises(ValueError, match="format 'f/1', expected 'f/2'"):
        read_sealed_text(path, "payload", "f/2")
    path.write_text(json.dumps(json.loads(path.read_text()), indent=1))  # same content, other bytes
    with pytest.raises(ValueError, match="sha256"):
        read_sealed_text(path, "payload", "f/1")
    path.write_text(seal_text(body, "payload", format="f/1").replace("4.0", "5.0"))
    with pytest.raises(ValueError, match="sha256"):
        read_sealed_text(path, "payload", "f/1")
    path.write_text('{"format":"f/1","payload":{}}')
    with pytest.raises(ValueError, match="sha256"):
        read_sealed_text(path, "payload", "f/1")
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not a readable"):
        read_sealed_text(path, "payload", "f/1")
    with pytest.raises(ValueError, match="must sort before"):
        seal_text(body, "payload", zone="z")
    with pytest.raises(ValueError, match="before 'sha256'"):
        seal_text(body, "zz")
    # line ends turned into CRLF (a Windows checkout) read the same; a JSON array is named as such
    path.write_bytes(seal_text(body, "payload", lines="rows", format="f/1").replace("\n", "\r\n").encode())
    assert read_sealed_text(path, "payload", "f/1")["payload"] == body
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="not an object"):
        read_sealed_text(path, "payload", "f/1")
    # a string holding the separator the rows are split at stays one string
    odd = {"rows": [["],[", 1], ["x", 2]]}
    path.write_text(seal_text(odd, "payload", lines="rows", format="f/1"))
    assert read_sealed_text(path, "payload", "f/1")["payload"] == odd


def test_a_hit_recomputes_its_warnings(fresh):
    """Warnings are this txlab's checks of the entry, not what an older txlab stored with it (round 32's static
    shared memory warning stayed on cached kernels after the check was dropped)."""
    c, entry = fresh
    meta = json.loads((entry / "meta.json").read_text())
    meta["warnings"] = ["scale_kernel: an older txlab's warning"]
    (entry / "meta.json").write_text(json.dumps(meta))
    _rewrite_manifest(entry)
    again = _again(c)
    assert again.cache_hit and again.warnings == c.warnings
