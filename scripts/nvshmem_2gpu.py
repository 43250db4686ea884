"""Run txlab's NVSHMEM API example (``nvshmem_exchange``) on 2+ GPUs and check every result.

Two modes:

  # here (no GPU; TVM, nvcc and NVSHMEM device libraries needed): build the cubin(s) + meta JSON
  python scripts/nvshmem_2gpu.py --build OUTDIR [--nvshmem-home DIR ...]

  # on the GPU host: one process per GPU, NVSHMEM bootstrapped with a unique id (rank 0 makes it)
  python3 scripts/nvshmem_2gpu.py [--cubin-dir .nvshmem/cubins | --cubin FILE] [--json OUT.json]

The GPU run needs ``nvshmem4py`` (``nvshmem.core``), ``cuda.core``, ``cuda.bindings`` and the NVSHMEM
host library of the ``nvidia-nvshmem-cu13`` wheel. The cubin's device library must be the same NVSHMEM
version as the host library, so ``--build`` makes one cubin per NVSHMEM version and the run picks the
one matching the installed host library. Exit status 0 only if every check on every PE matched.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import lzma
import os
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # txlab from this checkout

EXAMPLE_ID = "nvshmem_exchange"
ROWS, COLS = 3, 1024
# Sig[k] after phase 2: 256 thread puts "add 1", 8 warp puts "add 1", 1 block put "set 1", signal_op "set 7"
SIG_EXPECTED = (256, 8, 1, 7)
# env that keeps NVSHMEM off NVLink multicast and on intra-node P2P; never removed
SAFE_ENV = {
    "NVSHMEM_DISABLE_NVLS": "1",
    "NCCL_NVLS_ENABLE": "0",
    "NVSHMEM_REMOTE_TRANSPORT": "none",
    "NVSHMEM_BOOTSTRAP": "UID",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
}
DTYPES = {
    "float": np.float32,
    "float32_t": np.float32,
    "int64_t": np.int64,
    "uint64_t": np.uint64,
    "int": np.int32,
    "int32_t": np.int32,
    "uint32_t": np.uint32,
    "double": np.float64,
}


class GPUUnavailable(RuntimeError):
    """The multi-GPU run's requirements (GPUs, nvshmem4py, cuda.core) are missing here."""


# ---- pure parts (tested without a GPU) ----------------------------------------------------------
def kernel_signature(cuda_src: str) -> tuple[str, list[tuple[str, str]]]:
    """(kernel name, [(C type, parameter name), ...]) of the one ``extern "C" __global__`` kernel in
    TVM's CUDA: TVM orders the parameters by its own rules (not the prim_func's order), so the launch
    must follow this list."""
    rx = re.compile(r'extern "C" __global__ void (?:__launch_bounds__\(\d+(?:,\s*\d+)*\) )?(\w+)\(([^)]*)\)\s*\{')
    found = rx.findall(cuda_src)
    names = {n for n, _ in found}
    if len(names) != 1:
        raise ValueError(f"expected one __global__ kernel definition, found {sorted(names) or 'none'}")
    name, plist = found[0]
    params = []
    for p in plist.split(","):
        p = p.strip().replace("__restrict__", "").strip()
        m = re.fullmatch(r"(.+?)\s*(\*?)\s*(\w+)", p)
        if not m:
            raise ValueError(f"cannot parse kernel parameter {p!r}")
        params.append(((m.group(1).strip() + m.group(2)).replace(" *", "*"), m.group(3)))
    return name, params


def buffer_name(param: str) -> str:
    """TVM names a buffer's pointer parameter ``<Buffer>_ptr``."""
    return param[:-4] if param.endswith("_ptr") else param


def make_inputs(pe: int, npes: int) -> dict[str, np.ndarray]:
    """Host contents before the launch: Src carries values unique to (pe, row, col); all else zero."""
    r = np.arange(ROWS, dtype=np.float32)[:, None]
    c = np.arange(COLS, dtype=np.float32)[None, :]
    src = (1000.0 * (pe + 1) + 100.0 * r + c * 0.5 + 0.25).astype(np.float32)  # exact in fp32
    return {
        "Src": src,
        "Dst": np.zeros((ROWS, COLS), np.float32),
        "Back": np.zeros((ROWS, COLS), np.float32),
        "Sig": np.zeros(4, np.uint64),
        "Out": np.zeros(3, np.int64),
    }


def expected(pe: int, npes: int) -> dict[str, np.ndarray]:
    """What each buffer holds on ``pe`` after the kernel (see the example's comments)."""
    left = (pe + npes - 1) % npes
    own = make_inputs(pe, npes)["Src"]
    return {
        "Src": own,
        "Dst": make_inputs(left, npes)["Src"],  # phase 2 rewrites the same values
        "Back": own.copy(),  # Dst at my left neighbour held my Src
        "Sig": np.array(SIG_EXPECTED, np.uint64),
        "Out": np.array([pe, npes, sum(SIG_EXPECTED)], np.int64),
    }


def check(pe: int, npes: int, got: dict[str, np.ndarray]) -> dict[str, str]:
    """{check name: what differed}; empty when everything matched. Rows are checked one by one so a
    failure names the scope (row 0 thread, row 1 warp, row 2 block)."""
    want = expected(pe, npes)
    scope = ("thread", "warp", "block")
    problems = {}
    for name in ("Dst", "Back", "Src"):
        for r in range(ROWS):
            g, w = np.asarray(got[name])[r], want[name][r]
            bad = np.flatnonzero(g != w)
            if bad.size:
                i = int(bad[0])
                problems[f"{name}[{r}] ({scope[r]})"] = (
                    f"{bad.size}/{COLS} differ; first col {i}: got {g[i]!r}, want {w[i]!r}"
                )
    for name in ("Sig", "Out"):
        g, w = np.asarray(got[name]), want[name]
        if g.shape != w.shape or not np.array_equal(g.astype(np.int64), w.astype(np.int64)):
            problems[name] = f"got {g.tolist()}, want {w.tolist()}"
    return problems


def pick_cubin(cubin_dir: Path, host_version: str) -> Path:
    """The cubin built against the same NVSHMEM version as the host library."""
    metas = sorted(cubin_dir.glob("*.json"))
    have = {}
    for m in metas:
        meta = json.loads(m.read_text())
        have[meta["nvshmem_version"]] = m.with_name(meta["cubin"])
    if host_version in have:
        return have[host_version]
    key = lambda v: tuple(int(x) for x in v.split("."))  # noqa: E731
    older = [v for v in have if key(v)[0] == key(host_version)[0] and key(v) < key(host_version)]
    if older:  # NVSHMEM 3.x host libraries accept device code of an older 3.x device library
        best = max(older, key=key)
        print(f"note: no cubin for NVSHMEM {host_version}; using the one built against {best}", file=sys.stderr)
        return have[best]
    raise FileNotFoundError(
        f"no cubin for NVSHMEM {host_version} in {cubin_dir} (have {sorted(have) or 'none'}): "
        f"rebuild with --build against nvidia-nvshmem-cu13=={host_version}, or pass --cubin"
    )


def read_cubin(path: Path) -> tuple[bytes, dict]:
    """Cubin bytes (``.xz`` unpacked) and its meta JSON (``<stem>.json``), sha256 checked."""
    data = path.read_bytes()
    if path.suffix == ".xz":
        data = lzma.decompress(data)
    base = path.name[:-3] if path.suffix == ".xz" else path.name
    meta_path = path.with_name(base.rsplit(".", 1)[0] + ".json")
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    if meta.get("sha256") and hashlib.sha256(data).hexdigest() != meta["sha256"]:
        raise ValueError(f"{path}: sha256 does not match {meta_path}")
    return data, meta


def record(results: dict, meta: dict, device: str | None) -> dict:
    """The JSON record txlab folds into txlab/data/api_verified_multi_gpu.json."""
    from txlab.api_examples.nvshmem import EXAMPLES

    uses = next(e.uses for e in EXAMPLES if e.id == EXAMPLE_ID)
    ok = bool(results) and all(not r["problems"] for r in results.values())
    return {
        "device": device,
        "n_gpus": len(results),
        "arch": meta.get("arch"),
        "nvshmem": meta.get("nvshmem_version"),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "examples": {
            EXAMPLE_ID: {
                "id": EXAMPLE_ID,
                "ok": ok,
                "n_pes": len(results),
                "problems": {f"pe{pe}": r["problems"] for pe, r in results.items() if r["problems"]},
                "uses": list(uses),
            }
        },
    }


# ---- build (here) -------------------------------------------------------------------------------
def build(outdir: Path, homes: list[str]) -> list[Path]:
    """One xz'd cubin + meta JSON per NVSHMEM device library (``homes``; default: the installed wheel)."""
    import txlab.compat  # noqa: F401  (the TVM workarounds a compile applies)
    from txlab import api, build, ir

    ex = api.examples()[EXAMPLE_ID]
    src = api.cuda_source(EXAMPLE_ID)
    kname, params = kernel_signature(src)
    mod, entry_name = ir.as_module(ex.prim_func())
    launch = build.lower(mod, ex.arch, entry_name).launch
    info = launch[kname]
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for home in [str(Path(h).resolve()) for h in homes] or [str(api.nvshmem_home())]:
        version = _nvshmem_version_of_home(Path(home))
        old = os.environ.get("NVSHMEM_HOME")
        os.environ["NVSHMEM_HOME"] = home
        try:
            cubin = api.build_nvshmem(EXAMPLE_ID)
        finally:
            os.environ.pop("NVSHMEM_HOME") if old is None else os.environ.__setitem__("NVSHMEM_HOME", old)
        stem = f"{EXAMPLE_ID}-{ex.arch}-nvshmem{version}"
        (outdir / f"{stem}.cubin.xz").write_bytes(lzma.compress(cubin, preset=9))
        meta = {
            "example": EXAMPLE_ID,
            "arch": ex.arch,
            "nvshmem_version": version,
            "cubin": f"{stem}.cubin.xz",
            "sha256": hashlib.sha256(cubin).hexdigest(),
            "kernel": kname,
            "params": [{"type": t, "name": n} for t, n in params],
            "grid": list(info["grid"]),
            "block": list(info["block"]),
            "dynamic_smem_bytes": int(info["dynamic_smem_bytes"] or 0),
        }
        (outdir / f"{stem}.json").write_text(json.dumps(meta, indent=1) + "\n")
        written.append(outdir / f"{stem}.cubin.xz")
        print(
            f"built {stem}.cubin ({len(cubin)} B, sha256 {meta['sha256'][:12]}) kernel {kname}"
            f"({', '.join(n for _, n in params)}) grid {meta['grid']} block {meta['block']}"
        )
    return written


def _nvshmem_version_of_home(home: Path) -> str:
    h = home / "include" / "non_abi" / "nvshmem_version.h"
    text = h.read_text() if h.is_file() else ""
    parts = [re.search(rf"#define NVSHMEM_VENDOR_{k}_VERSION\s+(\d+)", text) for k in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        raise ValueError(f"cannot read the NVSHMEM version from {h}")
    return ".".join(p.group(1) for p in parts)


# ---- GPU run ------------------------------------------------------------------------------------
def _require_gpu_modules():
    missing = []
    for mod in ("cuda.bindings.driver", "cuda.core", "nvshmem.core"):
        try:
            __import__(mod)
        except Exception as exc:  # noqa: BLE001 - reported as a list
            missing.append(f"{mod} ({type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''})")
    if missing:
        raise GPUUnavailable(
            "the multi-GPU NVSHMEM run needs "
            + ", ".join(missing)
            + ": on the GPU host `source .nvshmem/setup.sh` first (installs nvshmem4py)"
        )


def host_nvshmem_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nvidia-nvshmem-cu13")
    except PackageNotFoundError:
        raise GPUUnavailable("the NVSHMEM host library (pip package nvidia-nvshmem-cu13) is not installed") from None


def _drv(call, what):
    err, *rest = call if isinstance(call, tuple) else (call,)
    from cuda.bindings import driver

    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{what} failed: {err}")
    return rest[0] if len(rest) == 1 else rest


def _worker(rank: int, npes: int, cubin: bytes, meta: dict, uid_queue, result_queue):
    for k, v in SAFE_ENV.items():
        os.environ[k] = v
    try:
        result_queue.put((rank, _run_pe(rank, npes, cubin, meta, uid_queue)))
    except BaseException as exc:  # noqa: BLE001 - reported by the parent
        result_queue.put((rank, {"error": f"{type(exc).__name__}: {exc}"}))


def _run_pe(rank, npes, cubin, meta, uid_queue) -> dict:
    import ctypes

    import nvshmem.bindings as nb
    import nvshmem.core as nvshmem
    from cuda.bindings import driver
    from cuda.core import Device  # cuda.core >= 0.5 exports Device at the top level

    dev = Device(rank)
    dev.set_current()
    if rank == 0:
        uid = nvshmem.get_unique_id()
        blob = ctypes.string_at(uid.ptr, 128)
        for _ in range(npes - 1):
            uid_queue.put(blob)
    else:
        uid = nvshmem.get_unique_id(empty=True)
        blob = uid_queue.get(timeout=120)
        ctypes.memmove(uid.ptr, blob, 128)
    nvshmem.init(device=dev, uid=uid, rank=rank, nranks=npes, initializer_method="uid")
    me, n = nb.my_pe(), nb.n_pes()
    module = _drv(driver.cuModuleLoadData(cubin), "cuModuleLoadData")
    status = nb.cumodule_init(int(module))
    if status not in (None, 0):
        raise RuntimeError(f"nvshmemx_cumodule_init returned {status}")
    func = _drv(driver.cuModuleGetFunction(module, meta["kernel"].encode()), "cuModuleGetFunction")
    host = make_inputs(me, n)
    ptrs = {}
    for name, arr in host.items():
        ptrs[name] = nb.malloc(arr.nbytes)  # symmetric: same call on every PE
        if not ptrs[name]:
            raise RuntimeError(f"nvshmem_malloc({arr.nbytes}) for {name} returned NULL")
        _drv(driver.cuMemcpyHtoD(ptrs[name], arr.ctypes.data, arr.nbytes), f"copy {name} to device")
    _drv(driver.cuCtxSynchronize(), "cuCtxSynchronize")
    nb.barrier_all()  # every PE's buffers are initialised before anybody puts into them
    order = [buffer_name(p["name"]) for p in meta["params"]]
    vals = [ctypes.c_void_p(ptrs[b]) for b in order]
    argv = (ctypes.c_void_p * len(vals))(*[ctypes.addressof(v) for v in vals])
    (gx, gy, gz), (bx, by, bz) = meta["grid"], meta["block"]
    _drv(
        driver.cuLaunchKernel(
            func, gx, gy, gz, bx, by, bz, meta.get("dynamic_smem_bytes", 0), 0, ctypes.addressof(argv), 0
        ),
        "cuLaunchKernel",
    )
    _drv(driver.cuCtxSynchronize(), "kernel (cuCtxSynchronize)")
    got = {}
    for name, arr in host.items():
        out = np.empty_like(arr)
        _drv(driver.cuMemcpyDtoH(out.ctypes.data, ptrs[name], arr.nbytes), f"copy {name} to host")
        got[name] = out
    nb.barrier_all()
    problems = check(me, n, got)
    for p in ptrs.values():
        nb.free(p)
    status = nb.cumodule_finalize(int(module))
    nvshmem.finalize()
    return {
        "pe": me,
        "n_pes": n,
        "device": dev.name,
        "problems": problems,
        "summary": {
            "Dst[:,0]": got["Dst"][:, 0].tolist(),
            "Back[:,0]": got["Back"][:, 0].tolist(),
            "Sig": got["Sig"].tolist(),
            "Out": got["Out"].tolist(),
        },
    }


def run(npes: int, cubin: bytes, meta: dict, timeout: float = 300.0) -> dict[int, dict]:
    import multiprocessing as mp

    _require_gpu_modules()
    for k, v in SAFE_ENV.items():
        os.environ[k] = v  # inherited by the spawned PEs
    ctx = mp.get_context("spawn")
    uid_q, res_q = ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(r, npes, cubin, meta, uid_q, res_q)) for r in range(npes)]
    for p in procs:
        p.start()
    results = {}
    import queue

    try:
        while len(results) < npes:
            rank, res = res_q.get(timeout=timeout)
            results[rank] = res
    except queue.Empty:
        for r in range(npes):
            results.setdefault(r, {"error": f"no result within {timeout:.0f} s (hang in init, kernel or wait_until?)"})
    for p in procs:
        p.join(timeout=30)
        if p.is_alive():
            p.kill()  # only our own PE processes
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", metavar="OUTDIR", type=Path, help="build cubin(s) + meta here (no GPU needed)")
    ap.add_argument("--nvshmem-home", action="append", default=[], help="NVSHMEM root to build against (repeat)")
    ap.add_argument("--cubin", type=Path, help="cubin (.cubin or .cubin.xz, meta JSON beside it) to run")
    ap.add_argument(
        "--cubin-dir",
        type=Path,
        default=Path(__file__).resolve().parent.parent / ".nvshmem" / "cubins",
        help="pick the cubin matching the host NVSHMEM version from here (default .nvshmem/cubins)",
    )
    ap.add_argument("--npes", type=int, default=2, help="number of PEs = GPUs (default 2)")
    ap.add_argument("--json", type=Path, help="write the verification record here")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the PEs")
    args = ap.parse_args(argv)
    if args.npes < 2:
        ap.error("--npes must be at least 2 (a ring of one PE checks nothing)")
    if args.build:
        build(args.build, args.nvshmem_home)
        return 0
    try:
        _require_gpu_modules()
        path = args.cubin or pick_cubin(args.cubin_dir, host_nvshmem_version())
        cubin, meta = read_cubin(path)
        if not meta.get("params"):
            raise ValueError(f"{path}: no meta JSON with the kernel's parameter order beside it")
        print(
            f"cubin {path.name} (NVSHMEM {meta.get('nvshmem_version')}, host library {host_nvshmem_version()}), "
            f"kernel {meta['kernel']}({', '.join(p['name'] for p in meta['params'])}) "
            f"grid {meta['grid']} block {meta['block']}, {args.npes} PEs"
        )
        results = run(args.npes, cubin, meta, args.timeout)
    except (GPUUnavailable, FileNotFoundError, ValueError) as exc:
        print(f"nvshmem_2gpu: {exc}", file=sys.stderr)
        return 2
    failed = False
    devname = None
    print(f"{'pe':>2} {'device':<14} {'Dst[:,0]':<28} {'Back[:,0]':<28} {'Sig':<16} {'Out':<14} result")
    for pe in sorted(results):
        r = results[pe]
        if "error" in r:
            failed = True
            print(f"{pe:>2} ERROR {r['error']}")
            r["problems"] = {"error": r["error"]}
            continue
        devname = r["device"]
        s = r["summary"]
        print(
            f"{pe:>2} {r['device'][:14]:<14} {str(s['Dst[:,0]']):<28} {str(s['Back[:,0]']):<28} "
            f"{str(s['Sig']):<16} {str(s['Out']):<14} {'PASS' if not r['problems'] else 'FAIL'}"
        )
        for k, v in r["problems"].items():
            failed = True
            print(f"   FAIL {k}: {v}")
    rec = record({pe: {"problems": r["problems"]} for pe, r in results.items()}, meta, devname)
    if args.json:
        args.json.write_text(json.dumps(rec, indent=1) + "\n")
        print(f"wrote {args.json}")
    print(("FAIL" if failed else "PASS") + f" {EXAMPLE_ID} on {len(results)} PEs")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
