"""Tensor maps on the emulator: one ``cuTensorMapEncodeTiled`` refuses stops the run before the launch, as the host
call stops a GPU run (before, the emulator loaded with it, or crashed on a zero box), and a map larger than its buffer
is an ``out_of_bounds`` finding (was an IndexError). The refusals are the CUDA driver API's documented requirements,
as TVM's ``test_tensormap_encode_tiled_runtime_validation`` expects them."""

import numpy as np
import pytest

from txlab.emulator import emulate
from txlab.errors import KernelFault

from test_emulator import kernel

# a TMA load of a 16 x 16 box into shared memory and a TMA store of it to B, both through maps encoded with ARGS
UNICAST = """
@T.prim_func
def unicast(A_ptr: T.handle, B_ptr: T.handle):
    A = T.match_buffer(A_ptr, (16, 16), "DT", align=16)
    B = T.match_buffer(B_ptr, (16, 16), "DT", align=16)
    A_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, "DT", 2, A.data, ARGS)
    B_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", B_map, "DT", 2, B.data, ARGS)
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    bar = T.shared_scalar("uint64")
    tile = T.alloc_buffer((16, 16), "DT", scope="shared", align=128)
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
        T.ptx.fence.proxy.async_.shared__cta()
        T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"](
            tile.data, T.address_of(A_map), 0, 0, T.address_of(bar))
        T.ptx.mbarrier.arrive.expect_tx.shared.b64(T.address_of(bar), T.uint32(BYTES))
    T.cuda.mbarrier_wait(T.address_of(bar), 0)
    T.cuda.cta_sync()
    T.ptx.fence.proxy.async_.shared__cta()
    if tx == 0:
        T.ptx["cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"](
            T.address_of(B_map), 0, 0, tile.access_ptr("r", offset=0))
        T.ptx.cp.async_.bulk.commit_group()
        T.ptx.cp.async_.bulk.wait_group(0)
"""


def unicast(args: list, dtype: str = "float16", nbytes: int = 512):
    src = UNICAST.replace("DT", dtype).replace("ARGS", ", ".join(map(str, args))).replace("BYTES", str(nbytes))
    return kernel(src, "unicast")


def run(args, dtype="float16", nbytes=512):
    a = np.arange(256).reshape(16, 16).astype(dtype)
    b = np.zeros_like(a)
    return emulate(unicast(args, dtype, nbytes), a, b), b


def test_a_valid_map_copies_the_box():
    res, b = run([16, 16, 32, 16, 16, 1, 1, 0, 0, 0, 0])
    assert res.ok, res.findings
    assert np.array_equal(b, np.arange(256).reshape(16, 16).astype("float16"))


# (dims, strides, box, element strides, interleave, swizzle, l2, oob fill[, forced type]) -> what the refusal names
REFUSED = [
    ([0, 16, 32, 16, 16, 1, 1, 0, 0, 0, 0], "float16", "globalDim[0] = 0"),
    ([(1 << 32) + 1, 16, 32, 16, 16, 1, 1, 0, 0, 0, 0], "float16", "globalDim[0] = 4294967297"),
    ([16, 16, 1 << 40, 16, 16, 1, 1, 0, 0, 0, 0], "float16", "globalStrides[0] = 1099511627776"),
    ([16, 16, 24, 16, 16, 1, 1, 0, 0, 0, 0], "float16", "globalStrides[0] = 24 bytes: a positive multiple of 16"),
    ([16, 16, 32, 0, 16, 1, 1, 0, 0, 0, 0], "float16", "boxDim[0] = 0"),
    ([16, 16, 32, 16, 0, 1, 1, 0, 0, 0, 0], "float16", "boxDim[1] = 0"),  # crashed in tile_copy before
    ([16, 16, 32, 7, 16, 1, 1, 0, 0, 0, 0], "float16", "14 bytes: the box's inner dimension must be a multiple of 16"),
    ([16, 16, 32, 16, 16, 0, 1, 0, 0, 0, 0], "float16", "elementStrides[0] = 0: 1 to 8"),
    ([16, 16, 32, 16, 16, 9, 1, 0, 0, 0, 0], "float16", "elementStrides[0] = 9: 1 to 8"),
    ([16, 16, 32, 16, 16, 2, 1, 0, 0, 0, 0], "float16", "elementStrides[0] = 2: must be 1"),
    ([16, 16, 32, 16, 16, 1, 1, 2, 0, 0, 0], "float16", "interleave 2 on a rank-2 map"),
    ([16, 16, 64, 4, 16, 1, 1, 0, 0, 0, 1], "int32", "NaN) needs a floating-point type, not int32"),
    ([16, 16, 64, 4, 16, 1, 1, 0, 0, 0, 0, 7], "float32", "forced descriptor type 7: only 11 (TFLOAT32)"),
    ([16, 16, 32, 8, 16, 1, 1, 0, 0, 0, 0, 11], "float16", "needs a float32 tensor, not float16"),
    ([16, 16, 32, 32, 16, 1, 1, 0, 1, 0, 0], "float16", "64 bytes is wider than the 32-byte swizzle span"),
]


@pytest.mark.parametrize("args, dtype, needle", REFUSED)
def test_a_map_the_driver_refuses_stops_the_run_before_the_launch(args, dtype, needle):
    with pytest.raises(KernelFault) as exc:
        run(args, dtype)
    err = exc.value
    assert err.kind == "cuda_error" and err.cuda_error == "CUDA_ERROR_INVALID_VALUE"
    assert needle in str(err), str(err)
    assert "cuTensorMapEncodeTiled refuses tensor map A_map (line 6)" in str(err)


def test_a_map_larger_than_its_buffer_is_out_of_bounds_not_a_crash():
    # a 32 x 32 map (64-byte rows) over a 16 x 16 buffer: the box's rows 8..15 lie past the 512 bytes
    res, b = run([32, 32, 64, 16, 16, 1, 1, 0, 0, 0, 0])
    oob = [f for f in res.findings if f.kind == "out_of_bounds"]
    assert len(oob) == 2, res.findings  # the load, and the store through B's map
    assert "128 of its elements are inside the tensor map's dims [32, 32]" in oob[0].message
    assert "past the 512 bytes of the buffer" in oob[0].message
