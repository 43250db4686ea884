"""The shared-memory transposes of txlab.examples.transpose: compile, and the generated CUDA reads
the shared-memory words smem_read_index says (evaluated from the CUDA source itself)."""

import re

import numpy as np
import pytest

from txlab.examples import transpose as tr


def _cuda_reads(cuda: str):
    """The index expressions of the shared-memory loads `... = tile_ptr[<expr>];` in the CUDA."""
    return re.findall(r"= tile_ptr\[(.*)\];", cuda)


def _eval(expr: str, tid: int) -> int:
    py = expr.replace("((int)threadIdx.x)", str(tid)).replace("(int)", "")
    return int(eval(py, {"__builtins__": {}}))  # noqa: S307 - integer arithmetic only


@pytest.mark.parametrize("variant", tr.VARIANTS)
def test_transpose_compiles_and_reads_the_documented_words(variant):
    import txlab

    c = txlab.compile(tr.transpose_kernel(256, variant), arch="sm_90a")
    assert c.kernels == [tr.kernel_name(variant)]
    assert c.launch[tr.kernel_name(variant)]["block"] == (tr.THREADS, 1, 1)
    assert len(c.instructions(r"^LDS")) == tr.TILE // tr.ROWS
    reads = _cuda_reads(c.cuda_source)
    assert len(reads) == tr.TILE // tr.ROWS
    for j, expr in enumerate(reads):
        for tid in range(tr.THREADS):
            lane, warp = tid % 32, tid // 32
            assert _eval(expr, tid) == tr.smem_read_index(variant, lane, warp + j * tr.ROWS)


def test_expected_ways():
    assert tr.expected_read_ways("naive") == 32
    assert tr.expected_read_ways("padded") == 1
    assert tr.expected_read_ways("swizzled") == 1


def test_bad_arguments():
    with pytest.raises(ValueError, match="multiple of 32"):
        tr.transpose_kernel(100)
    with pytest.raises(ValueError, match="choose one of"):
        tr.transpose_kernel(64, "diagonal")


@pytest.mark.gpu
@pytest.mark.parametrize("variant", tr.VARIANTS)
def test_transpose_on_gpu(variant):
    import txlab

    c = txlab.compile(tr.transpose_kernel(512, variant))
    a = np.random.default_rng(0).standard_normal((512, 512)).astype("float32")
    b = np.zeros_like(a)
    txlab.check(c, (a, b), reference=lambda a, b: a.T.copy()).assert_ok()
