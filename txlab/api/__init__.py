"""The TIRx CUDA authoring API, catalogued from the installed TVM.

    txlab.api.catalogue()            # every entry: name, category, signature, doc, arch, examples
    txlab.api.coverage()             # one dict per entry: has_example, compiles, verified_gpu
    txlab.api.verify("Tx.cuda.ballot_sync")   # run its example on this GPU, check the result
    txlab.api.help("__shfl_xor_sync")         # signature, arch, example lines, CUDA/PTX/SASS (no GPU)
    python -m txlab.api verify --write        # all GPU-runnable examples -> txlab/data/api_verified.json

The list of names comes from introspecting ``T.cuda``, ``T.nvshmem``, ``tvm.backend.cuda.lang`` and
``tvm.backend.cuda.iket`` of the installed TVM, so a new TVM shows added names (no example, arch
``unknown``) and removed ones (``catalogue_drift()``).

Modules, one job each: ``entries`` (the catalogue), ``sources`` (generated CUDA, where a name shows
up in it, notebook cells), ``nvshmem`` (rdc builds linked with libnvshmem_device), ``coverage_rows``
(coverage and the records in txlab/data), ``verification`` (GPU runs), ``markdown`` (the coverage
table), ``reference`` (``help``: one name, how to call it and what it lowers to). Every name is importable from ``txlab.api``; ``python -m txlab.api --help`` is the CLI.
"""

from __future__ import annotations

from txlab.api.cli import main
from txlab.api.coverage_rows import (
    VERIFIED_IKET_JSON,
    VERIFIED_JSON,
    VERIFIED_MULTI_GPU_JSON,
    compile_examples,
    coverage,
)
from txlab.api.entries import Entry, catalogue, catalogue_drift, entry, examples, signature_of
from txlab.api.markdown import coverage_markdown, verified_cell
from txlab.api.nvshmem import NVSHMEMNotFound, build_nvshmem, nvshmem_home
from txlab.api.reference import ApiHelp, UnknownAPIName, UsageLine, help
from txlab.api.sources import cuda_source, emitted_lines, example_cell, generated_cuda
from txlab.api.verification import verify, verify_all, verify_example

__all__ = [
    "Entry",
    "catalogue",
    "catalogue_drift",
    "entry",
    "examples",
    "cuda_source",
    "generated_cuda",
    "emitted_lines",
    "example_cell",
    "NVSHMEMNotFound",
    "nvshmem_home",
    "build_nvshmem",
    "compile_examples",
    "coverage",
    "verify",
    "verify_example",
    "verify_all",
    "coverage_markdown",
    "verified_cell",
    "VERIFIED_JSON",
    "VERIFIED_MULTI_GPU_JSON",
    "VERIFIED_IKET_JSON",
    "main",
    "help",
    "ApiHelp",
    "UsageLine",
    "UnknownAPIName",
    "signature_of",
]
