"""Binder: binder/requirements.txt + binder/postBuild give a CPU-only environment in which every
notebook runs (pytest --nbval-lax), with nvcc/ptxas from NVIDIA's PyPI wheels instead of a CUDA
toolkit.

The end-to-end check builds a fresh virtual environment (pip's cache is reused) and runs the
notebooks there with no CUDA toolkit on PATH. It takes several minutes, so it is opt-in:

    TXLAB_TEST_BINDER=1 .venv/bin/python -m pytest -q tests/test_binder.py
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[; ]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _requirements() -> list[str]:
    return [
        ln.strip()
        for ln in (BINDER / "requirements.txt").read_text().splitlines()
        if ln.strip() and not ln.lstrip().startswith("#")
    ]


def test_requirements_cover_the_package():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    have = {_name(r) for r in _requirements()}
    missing = [d for d in deps if _name(d) not in have]
    assert not missing, f"binder/requirements.txt lacks dependencies of pyproject.toml: {missing}"
    for tool in (
        "nvidia-cuda-nvcc",
        "nvidia-nvvm",
        "nvidia-cuda-runtime",
        "nvidia-cuda-crt",
        "nvidia-cuda-cccl",
        "nbval",
    ):
        assert tool in have, f"binder/requirements.txt needs {tool}"


def test_postbuild_installs_txlab():
    text = (BINDER / "postBuild").read_text()
    assert text.startswith("#!"), "postBuild needs a shebang"
    assert os.access(BINDER / "postBuild", os.X_OK), "postBuild must be executable"
    assert re.search(r"pip install .*-e \.", text), "postBuild must install this checkout"


def _no_cuda_path() -> str:
    """PATH without any directory that holds nvcc or ptxas (what a Binder image looks like)."""
    keep = [
        d
        for d in os.environ.get("PATH", "").split(os.pathsep)
        if d and not (Path(d, "nvcc").exists() or Path(d, "ptxas").exists())
    ]
    return os.pathsep.join(keep)


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("TXLAB_TEST_BINDER") != "1",
    reason="builds a fresh venv from binder/ and runs every notebook (minutes): set TXLAB_TEST_BINDER=1",
)
def test_binder_environment_runs_every_notebook(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH", "PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{_no_cuda_path()}", TXLAB_CACHE_DIR=str(tmp_path / "cache"))
    assert shutil.which("nvcc", path=env["PATH"]) is None
    pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + ["-r", str(BINDER / "requirements.txt")], check=True, env=env, timeout=900)
    # postBuild as Binder runs it: in the repository, with the environment's python first on PATH
    subprocess.run(["bash", str(BINDER / "postBuild")], cwd=ROOT, check=True, env=env, timeout=600)
    probe = subprocess.run(
        [str(py), "-c", "import txlab.toolchain as t; print(t.find_tool('nvcc')); print(t.find_tool('ptxas'))"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    nvcc, ptxas = probe.stdout.split()
    assert str(venv) in nvcc and str(venv) in ptxas, probe.stdout
    nbs = shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    r = subprocess.run(
        [str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax", str(nbs)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
