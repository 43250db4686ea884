"""Example kernels for the TIRx CUDA authoring API, one module per category.

Each :class:`Example` is TVMScript text defining one ``@T.prim_func`` (the same text the APIView
inserts into a notebook cell), the API names it really uses, the arch it needs, and -- where an H200
can run it -- an input builder and a numpy function giving the expected outputs, so
``txlab.api.verify`` checks a real result, not just a launch.
"""
from txlab.api_examples.example import Example
from txlab.api_examples.registry import CATEGORY_MODULES, all_examples

__all__ = ["Example", "all_examples", "CATEGORY_MODULES"]
