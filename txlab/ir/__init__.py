"""Reading TVM IR: walking it (:mod:`txlab.ir.walk`), which user line a statement or a generated
CUDA line is (:mod:`txlab.ir.spans`), and the generated CUDA's function extents
(:mod:`txlab.ir.cuda_text`), a kernel's call signature (:mod:`txlab.ir.signature`).

Re-exports only; each submodule holds one job.
"""

from txlab.ir.cuda_text import CudaFunction, call_sites, cuda_functions, kernel_lines
from txlab.ir.signature import Signature, entry_params
from txlab.ir.spans import (
    cuda_user_lines,
    first_user_line,
    frames,
    is_library,
    loop_header,
    split,
    tirx_alias,
    user_file_of,
    user_frame,
    user_line,
    user_line_of_cuda,
    user_lines_of,
    with_call_site,
)
from txlab.ir.walk import (
    AmbiguousEntry,
    as_module,
    calls,
    children,
    entry_kernels,
    entry_module,
    expr_value,
    functions,
    kernel_names,
    prod,
    walk,
)

__all__ = [
    "AmbiguousEntry",
    "CudaFunction",
    "Signature",
    "as_module",
    "entry_params",
    "call_sites",
    "calls",
    "children",
    "cuda_functions",
    "cuda_user_lines",
    "entry_kernels",
    "entry_module",
    "expr_value",
    "first_user_line",
    "frames",
    "functions",
    "kernel_names",
    "is_library",
    "kernel_lines",
    "loop_header",
    "prod",
    "split",
    "tirx_alias",
    "user_file_of",
    "user_frame",
    "user_line",
    "user_line_of_cuda",
    "user_lines_of",
    "walk",
    "with_call_site",
]
