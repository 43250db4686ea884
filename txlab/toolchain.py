"""The real CUDA toolchain: nvcc (CUDA C -> PTX), ptxas (PTX -> cubin, with its resource report);
where nvdisasm / cuobjdump (cubin -> SASS) are found (:mod:`txlab.sass.listing` runs them).
Found on PATH or in NVIDIA's PyPI wheels.

Each step raises :class:`txlab.CompileError` with the stage that failed (``nvcc``, ``ptxas``,
``disasm``) and the tool's own message, mapped to a source line where the tool names one.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from txlab.errors import CompileError

# Flags TVM's own nvcc path uses (tvm.support.nvcc._compile_cuda_nvcc), so the PTX matches what
# TVM would build: same macros, fast math, relaxed constexpr.
NVCC_FLAGS = [
    "-O3",
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
    "-U__CUDA_NO_BFLOAT16_OPERATORS__",
    "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "-U__CUDA_NO_BFLOAT162_OPERATORS__",
    "-U__CUDA_NO_BFLOAT162_CONVERSIONS__",
    "--expt-relaxed-constexpr",
    "--expt-extended-lambda",
    "--use_fast_math",
    # line info (PTX .loc, cubin .debug_line): the line map, and CUDA file:line in ncu and
    # compute-sanitizer; it does not change the instructions (tests/test_sourcemap.py checks)
    "-lineinfo",
]
PTXAS_FLAGS = ["-O3", "-v", "--warn-on-local-memory-usage"]


def wheel_bin_dirs() -> list[Path]:
    """bin/ folders of NVIDIA's PyPI wheels (nvidia-cuda-nvdisasm, nvidia-cuda-cuobjdump, ...)."""
    dirs = []
    for entry in sys.path:
        for sub in ("nvidia/cu13/bin", "nvidia/cuda_nvdisasm/bin", "nvidia/cuda_cuobjdump/bin"):
            p = Path(entry) / sub
            if p.is_dir():
                dirs.append(p)
    return dirs


def toolkit_homes() -> list[str]:
    """CUDA toolkit roots to look in after PATH."""
    return [h for h in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda") if h]


@lru_cache(maxsize=None)
def find_tool(name: str) -> str | None:
    """Absolute path of a CUDA tool: NVIDIA's PyPI wheels first (pinned versions, txlab's default
    dependencies), then PATH, then $CUDA_HOME/bin and /usr/local/cuda/bin."""
    for d in wheel_bin_dirs():
        cand = d / name
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    found = shutil.which(name)
    if found:
        return found
    for home in toolkit_homes():
        cand = Path(home) / "bin" / name
        if cand.is_file():
            return str(cand)
    return None


# What to do when nvcc/ptxas are missing or do not run. txlab depends on NVIDIA's wheels
# (pyproject.toml), so a plain `pip install txlab` has both; this names the wheels in case they
# were removed, and the toolkit route.
_WHEELS = (
    "nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-runtime==13.0.96 "
    "nvidia-cuda-crt==13.0.88 nvidia-cuda-cccl==13.0.85"
)
TOOL_FIX = {
    "nvcc": f"pip install {_WHEELS} (txlab's default dependencies: nvcc with its cicc, headers "
    "and CCCL), or install the CUDA toolkit 13 and put its bin/ on PATH (or set CUDA_HOME)",
    "ptxas": f"pip install {_WHEELS} (ptxas ships in nvidia-cuda-nvcc), or install the CUDA "
    "toolkit 13 and put its bin/ on PATH (or set CUDA_HOME)",
    "nvdisasm": "pip install nvidia-cuda-nvdisasm",
    "cuobjdump": "pip install nvidia-cuda-cuobjdump",
}


@lru_cache(maxsize=None)
def tool_status(name: str) -> tuple[str | None, str | None, str]:
    """(path, version, problem) of a tool after running ``<tool> --version``: version is set
    only when it ran and said which release it is; problem says why not ("" when it did)."""
    path = find_tool(name)
    if not path:
        return None, None, f"{name} was not found (looked in NVIDIA's wheels, PATH, CUDA_HOME, /usr/local/cuda)"
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return path, None, f"{path} could not be run ({type(exc).__name__}: {exc})"
    out = proc.stdout
    if proc.returncode != 0:
        said = (proc.stderr or proc.stdout).strip().splitlines()
        return path, None, (f"{path} --version failed (exit {proc.returncode})" + (f": {said[-1]}" if said else ""))
    m = re.search(r"V(\d+\.\d+\.\d+)", out)
    version = m.group(1) if m else out.strip().splitlines()[-1] if out.strip() else None
    if version is None:
        return path, None, f"{path} --version printed nothing"
    return path, version, ""


def tool_version(name: str) -> str | None:
    """The release of ``<tool> --version`` (e.g. '13.0.88'), or None when absent or not runnable."""
    return tool_status(name)[1]


def versions() -> dict:
    """Versions of every tool that shapes compiled output (part of the compile-cache key)."""
    return {name: tool_version(name) for name in ("nvcc", "ptxas", "nvdisasm", "cuobjdump")}


def _need(name: str, stage: str) -> str:
    """The tool's path, once it has been seen to run; else CompileError saying how to get it."""
    path, version, problem = tool_status(name)
    if version is None:
        raise CompileError(stage, problem if path else f"{name} was not found", hint=TOOL_FIX[name])
    return path


def gencode(arch: str) -> list[str]:
    """`-gencode arch=compute_90a,code=sm_90a` for 'sm_90a' (the form that keeps arch-specific
    features such as wgmma and setmaxnreg)."""
    num = arch.removeprefix("sm_")
    return ["-gencode", f"arch=compute_{num},code=sm_{num}"]


_NVCC_ERR = re.compile(
    r"^(?P<file>[^\s(]+)\((?P<line>\d+)\): (?P<kind>error|warning)\s*(?:#\w+(?:-\w+)?)?:?\s*(?P<msg>.*)$", re.M
)
_PTXAS_ERR = re.compile(r"ptxas (?:\S+, )?line (?P<line>\d+); (?P<kind>error|warning)\s*:\s*(?P<msg>.*)")


# nvcc's own parts missing (a partial install): cicc, cudafe++, the runtime headers
_MISSING_PART = re.compile(
    r"(cicc|cudafe\+\+|fatbinary|nvvm|cuda_runtime\.h|crt/host_config\.h)"
    r".*(not found|No such file)",
    re.I,
)


def _first_error(out: str, pattern: re.Pattern) -> tuple[int | None, str]:
    """(line, message) of the first error a tool printed; warnings are skipped."""
    m = next((m for m in pattern.finditer(out) if m.group("kind") == "error"), None)
    if m:
        return int(m.group("line")), m.group("msg").strip()
    for line in out.splitlines():
        if re.search(r"\berror\b", line, re.I):
            msg = re.sub(r"^.*?\berror\b\s*[:#]?\s*", "", line, flags=re.I).strip()
            return None, msg or line.strip()
    return None, (out.strip().splitlines() or ["the tool failed without a message"])[-1]


def _run(cmd: list[str], stage: str, cwd: str) -> subprocess.CompletedProcess:
    tool = Path(cmd[0]).name
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=600)
    except subprocess.TimeoutExpired as exc:
        raise CompileError(stage, f"{tool} ran for more than 600 s and was stopped") from exc
    except OSError as exc:  # not executable, wrong format, vanished since it was found
        raise CompileError(
            stage, f"{cmd[0]} could not be run ({exc.strerror or exc})", hint=TOOL_FIX.get(tool)
        ) from None
    if proc.returncode in (126, 127) and not _NVCC_ERR.search(proc.stdout + proc.stderr):
        # the shell's "not found" / "cannot execute": a wrapper whose target is gone, or a
        # driver whose own helper (cicc, cudafe++) is missing
        said = (proc.stderr or proc.stdout).strip().splitlines()
        raise CompileError(
            stage,
            f"{tool} is broken: {said[-1] if said else f'exit {proc.returncode}'}",
            detail=(proc.stdout + proc.stderr).strip(),
            hint=TOOL_FIX.get(tool),
        )
    return proc


def _arch_hint(msg: str, arch: str) -> str | None:
    """Explain "not supported on .target 'sm_90a'" style errors: which arch the instruction needs."""
    m = re.search(r"[Ii]nstruction '([^']+)' not supported on \.target '(\w+)'", msg) or re.search(
        r"'([^']+)' requires .*?target (sm_\w+)", msg
    )
    if not m:
        if "not supported on .target" in msg or "requires .target" in msg:
            return f"an instruction here is not available on {arch}; compile for the arch it needs (--arch)"
        return None
    instr = m.group(1)
    needs = _instruction_arch(instr)
    if needs:
        return f"{instr} needs {needs} (this kernel was compiled for {arch}); use --arch {needs.split()[0]}"
    return f"{instr} is not available on {arch}; compile for an arch that has it (--arch)"


def _instruction_arch(instr: str) -> str | None:
    table = [
        ("tcgen05", "sm_100a or sm_103a (Blackwell)"),
        ("wgmma", "sm_90a (Hopper, arch-specific)"),
        ("setmaxnreg", "sm_90a or sm_100a (arch-specific)"),
        ("cp.async.bulk", "sm_90 or later"),
        ("mbarrier.try_wait", "sm_90 or later"),
        ("elect", "sm_90 or later"),
        ("stmatrix", "sm_90 or later"),
        ("multimem", "sm_90 or later"),
        ("cvt.rn.satfinite.e4m3", "sm_89 or later"),
        ("redux", "sm_80 or later"),
        ("cp.async", "sm_80 or later"),
    ]
    for prefix, arch in table:
        if instr.startswith(prefix):
            return arch
    return None


@dataclass
class PTXResult:
    ptx: str
    seconds: float


def cuda_to_ptx(
    source: str, arch: str, extra_flags: list[str] | None = None, *, base_flags: list[str] | None = None
) -> str:
    """CUDA C to PTX with nvcc (``base_flags`` replaces NVCC_FLAGS). Errors are mapped to the line
    of the CUDA source."""
    nvcc = _need("nvcc", "nvcc")
    with tempfile.TemporaryDirectory(prefix="txlab-nvcc-") as tmp:
        cu = Path(tmp, "kernel.cu")
        cu.write_text(source)
        cmd = [
            nvcc,
            "--ptx",
            *gencode(arch),
            *(NVCC_FLAGS if base_flags is None else base_flags),
            *(extra_flags or []),
            "-o",
            "kernel.ptx",
            "kernel.cu",
        ]
        proc = _run(cmd, "nvcc", tmp)
        if proc.returncode != 0:
            out = (proc.stdout + proc.stderr).strip()
            hint = _arch_hint(out, arch) or (TOOL_FIX["nvcc"] if _MISSING_PART.search(out) else None)
            raise _failed("nvcc", out, _NVCC_ERR, source, "<generated CUDA>", hint)
        ptx = Path(tmp, "kernel.ptx").read_text()
        # -lineinfo names the source by its absolute path, here a fresh temporary folder: name it
        # "kernel.cu" so the same source gives the same PTX and cubin (the cache relies on it)
        ptx = re.sub(r'(\.file\s+\d+\s+")' + re.escape(tmp.rstrip("/")) + r"/", r"\1", ptx)
        # and the per-run module id nvcc puts in internal names (_INTERNAL_<8 hex>_), which the
        # line info's function-name strings carry: one fixed id, renamed consistently
        return _fixed_module_id(re.sub(r"_INTERNAL_[0-9a-f]{8}_", "_INTERNAL_00000000_", ptx))


_SEP = r"(?:,\s*|\s*\n\s*\.b8\s+)"
_HEXDIGIT = r"(?:4[89]|5[0-7]|9[7-9]|10[0-2])"
_INTERNAL_BYTES = re.compile(
    _SEP.join(str(b) for b in b"_INTERNAL_") + "(" + _SEP + "(?:" + (_HEXDIGIT + _SEP) * 7 + _HEXDIGIT + "))"
)


def _fixed_module_id(ptx: str) -> str:
    """The same renaming inside .debug_str, which PTX writes as ``.b8`` byte lists."""

    def zero(m):
        return m.group(0)[: m.start(1) - m.start(0)] + re.sub(r"(?<![\w.])\d+", "48", m.group(1))

    return _INTERNAL_BYTES.sub(zero, ptx)


def _failed(stage: str, out: str, errors: re.Pattern, source: str, filename: str, hint: str | None) -> CompileError:
    """The :class:`CompileError` of a failed nvcc or ptxas run: its first error, at its line of
    ``source`` (the generated CUDA or PTX), the whole output as the detail."""
    lines = source.splitlines()
    lineno, msg = _first_error(out, errors)
    return CompileError(
        stage,
        msg,
        lineno=lineno,
        filename=filename,
        source_line=lines[lineno - 1] if lineno and lineno <= len(lines) else None,
        detail=out,
        hint=hint,
    )


def cap_registers(ptx: str, maxrregcount: int | None) -> str:
    """``ptx`` with ``.maxnreg maxrregcount`` among the performance directives of every ``.entry`` that has none.
    ptxas applies ``-maxrregcount`` only to kernels without launch bounds, and TVM gives every kernel
    ``__launch_bounds__`` (``.maxntid``): the flag alone changed nothing. ``.maxnreg`` is the per-kernel cap ptxas
    takes beside ``.maxntid``/``.minnctapersm``. Unchanged when ``maxrregcount`` is None."""
    if not maxrregcount:
        return ptx
    out, entry = [], False
    for line in ptx.split("\n"):
        bare = line.strip()
        if ".entry " in line:
            entry = True
        elif entry and bare.startswith(".maxnreg"):
            entry = False  # the kernel caps itself (__maxnreg__)
        elif entry and bare == "{":
            out.append(f".maxnreg {int(maxrregcount)}")
            entry = False
        out.append(line)
    return "\n".join(out)


def register_cap_warnings(resources: dict, maxrregcount: int | None) -> list[str]:
    """A warning for each kernel whose registers ptxas left above ``maxrregcount``: a cap below what the code needs
    at its widest point (ptxas's floor) is not met, and nothing else says so."""
    if not maxrregcount:
        return []
    return [
        f"{name}: maxrregcount={int(maxrregcount)} not met: ptxas used {int(r['registers'])} registers (the fewest "
        "this code can run in; a cap below that changes nothing)"
        for name, r in sorted(resources.items())
        if int(r.get("registers") or 0) > int(maxrregcount)
    ]


def ptx_to_cubin(ptx: str, arch: str, extra_flags: list[str] | None = None) -> tuple[bytes, str]:
    """PTX to cubin with ptxas; returns (cubin, the -v report)."""
    ptxas = _need("ptxas", "ptxas")
    with tempfile.TemporaryDirectory(prefix="txlab-ptxas-") as tmp:
        Path(tmp, "kernel.ptx").write_text(ptx)
        cmd = [ptxas, f"-arch={arch}", *PTXAS_FLAGS, *(extra_flags or []), "-o", "kernel.cubin", "kernel.ptx"]
        proc = _run(cmd, "ptxas", tmp)
        report = (proc.stdout + proc.stderr).strip()
        if proc.returncode != 0:
            raise _failed("ptxas", report, _PTXAS_ERR, ptx, "<generated PTX>", _arch_hint(report, arch))
        return Path(tmp, "kernel.cubin").read_bytes(), report


_RES_FUNC = re.compile(r"Compiling entry function '(?P<name>[^']+)' for '(?P<arch>\w+)'")
_RES_STACK = re.compile(
    r"(?P<stack>\d+) bytes stack frame, (?P<sst>\d+) bytes spill stores, (?P<sld>\d+) bytes spill loads"
)
_RES_USED = re.compile(r"Used (?P<regs>\d+) registers(?P<rest>.*)")


#: what ``ptxas -v`` reports per kernel (bytes, or registers per thread); 0 until it says otherwise
RESOURCE_FIELDS = (
    "registers",
    "static_smem_bytes",
    "spill_store_bytes",
    "spill_load_bytes",
    "stack_bytes",
    "const_bytes",
)


def parse_ptxas_report(report: str) -> dict:
    """Per-kernel resources from ``ptxas -v``: registers, static shared memory, spills, stack."""
    out: dict[str, dict] = {}
    current = None
    for line in report.splitlines():
        m = _RES_FUNC.search(line)
        if m:
            current = out.setdefault(m.group("name"), dict.fromkeys(RESOURCE_FIELDS, 0))
            continue
        if current is None:
            continue
        m = _RES_STACK.search(line)
        if m:
            current["stack_bytes"] = int(m.group("stack"))
            current["spill_store_bytes"] = int(m.group("sst"))
            current["spill_load_bytes"] = int(m.group("sld"))
            continue
        m = _RES_USED.search(line)
        if m:
            current["registers"] = int(m.group("regs"))
            rest = m.group("rest")
            sm = re.search(r"(\d+) bytes smem", rest)
            if sm:
                current["static_smem_bytes"] = int(sm.group(1))
            cm = re.findall(r"(\d+) bytes cmem\[\d+\]", rest)
            current["const_bytes"] = sum(int(x) for x in cm)
    return out


def smoke_test(arch: str = "sm_90a") -> tuple[bool, str]:
    """Compile a one-line kernel CUDA C -> PTX -> cubin with the tools txlab would use: whether
    that worked, and what happened (the versions, or the error and its fix)."""
    src = 'extern "C" __global__ void txlab_doctor(float* a) { a[threadIdx.x] += 1.0f; }\n'
    try:
        cubin, _ = ptx_to_cubin(cuda_to_ptx(src, arch), arch)
    except CompileError as exc:
        return False, f"[{exc.stage}] {exc.message}" + (f" (fix: {exc.hint})" if exc.hint else "")
    if cubin[:4] != b"\x7fELF":
        return False, "ptxas wrote something that is not a cubin"
    return True, f"compiled a test kernel for {arch} (nvcc {tool_version('nvcc')}, ptxas {tool_version('ptxas')})"
