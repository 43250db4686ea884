"""NVSHMEM examples: TVM's CUDA compiled with ``nvcc -rdc=true`` and linked against
``libnvshmem_device`` (what TVM's own nvcc path does)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from txlab.api.entries import examples
from txlab.api.sources import cuda_source


class NVSHMEMNotFound(RuntimeError):
    """The NVSHMEM headers / device library are not installed here."""


def nvshmem_home() -> Path | None:
    """Root holding NVSHMEM's include/nvshmem.h and lib/libnvshmem_device.a: ``NVSHMEM_HOME``, else
    the ``nvidia-nvshmem-cu13`` wheel (``nvidia/nvshmem`` in site-packages), else None."""
    roots = []
    if os.environ.get("NVSHMEM_HOME"):
        roots.append(Path(os.environ["NVSHMEM_HOME"]))
    try:
        import importlib.util

        spec = importlib.util.find_spec("nvidia.nvshmem")
        if spec is not None and spec.submodule_search_locations:
            roots.extend(Path(p) for p in spec.submodule_search_locations)
    except (ImportError, ValueError):
        pass
    for root in roots:
        if (root / "include" / "nvshmem.h").is_file() and (root / "lib" / "libnvshmem_device.a").is_file():
            return root
    return None


def build_nvshmem(example_id: str, arch: str | None = None) -> bytes:
    """Cubin of an NVSHMEM example: TVM's CUDA compiled with ``nvcc -rdc=true`` and linked with
    ``nvlink -lnvshmem_device`` (what TVM's own nvcc path does). Cached in txlab's compile cache."""
    import subprocess
    import tempfile

    from txlab import cache, toolchain

    ex = examples()[example_id]
    arch = arch or ex.arch
    home = nvshmem_home()
    if home is None:
        raise NVSHMEMNotFound(
            "NVSHMEM headers and libnvshmem_device.a not found: pip install nvidia-nvshmem-cu13 or set NVSHMEM_HOME"
        )
    src = cuda_source(example_id, arch)
    key = cache.make_key(
        kind="nvshmem-cubin",
        source=src,
        arch=arch,
        tools=toolchain.versions(),
        nvshmem=sorted(p.name for p in (home / "lib").glob("libnvshmem_device*")),
        home=str(home),
    )
    hit = cache.load(key)
    if hit is not None:
        return hit["kernel.cubin"]
    nvcc, nvlink = toolchain.find_tool("nvcc"), toolchain.find_tool("nvlink")
    if nvcc is None or nvlink is None:
        raise RuntimeError(
            "nvcc and nvlink must be installed (CUDA toolkit or NVIDIA's wheels) to build NVSHMEM kernels"
        )
    with tempfile.TemporaryDirectory(prefix="txlab-nvshmem-") as tmp:
        Path(tmp, "kernel.cu").write_text(src)
        steps = [
            [
                nvcc,
                "-c",
                "-rdc=true",
                *toolchain.gencode(arch),
                *toolchain.NVCC_FLAGS,
                "-w",
                "-I",
                str(home / "include"),
                "-o",
                "kernel.o",
                "kernel.cu",
            ],
            [
                nvlink,
                f"-arch={arch}",
                "-L",
                str(home / "lib"),
                "-l",
                "nvshmem_device",
                "-l",
                "cudadevrt",
                "-o",
                "kernel.cubin",
                "kernel.o",
            ],
        ]
        for cmd in steps:
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
            if proc.returncode != 0:
                out = (proc.stdout + proc.stderr).strip().splitlines()
                raise RuntimeError(f"{Path(cmd[0]).name} failed: {' / '.join(out[:3])}")
        cubin = Path(tmp, "kernel.cubin").read_bytes()
    cache.store(key, {"kernel.cubin": cubin, "meta.json": json.dumps({"example": example_id, "arch": arch})})
    return cubin
