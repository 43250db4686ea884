"""Reading TVM IR: one home for walking it (:mod:`txlab.ir.walk`).

Re-exports only; each submodule holds one job.
"""
from txlab.ir.walk import as_module, calls, children, expr_value, functions, prod, user_frame, walk

__all__ = ["as_module", "calls", "children", "expr_value", "functions", "prod", "user_frame", "walk"]
