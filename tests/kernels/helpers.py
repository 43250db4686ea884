# @T.inline helpers written in a module of their own, as a user keeps them apart from the kernels that
# call them: the line map puts their bodies on the kernel's call lines (tests/test_sourcemap.py).
from tvm.script import tirx as T


@T.inline
def bump(h, i):
    T.cuda.atomic_add(T.address_of(h[i]), 1)
