"""Reading TVM IR: one home for walking it (:mod:`txlab.ir.walk`); a kernel's call signature
(:mod:`txlab.ir.signature`).

Re-exports only; each submodule holds one job.
"""
from txlab.ir.signature import Signature, entry_params
from txlab.ir.walk import as_module, calls, children, expr_value, functions, prod, user_frame, walk

__all__ = ["Signature", "entry_params", "as_module", "calls", "children", "expr_value", "functions", "prod", "user_frame", "walk"]
