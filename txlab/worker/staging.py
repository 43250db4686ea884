"""Arguments staged in shared memory: a pool of segments reused across calls, host copies of numpy,
torch and DLPack values, and the write-back after a successful run."""

from __future__ import annotations

import numpy as np

#: bytes of shared memory kept for reuse between calls
POOL_LIMIT_BYTES = 4 << 30
#: segments at least this large are page-locked in the worker (faster DMA)
PIN_MIN_BYTES = 1 << 20


class _Pool:
    """Shared-memory segments reused across calls (sizes rounded up to powers of two)."""

    def __init__(self):
        self.free: dict[int, list] = {}
        self.all: dict[str, object] = {}
        self.dropped: list[str] = []

    def take(self, nbytes: int):
        from multiprocessing import shared_memory

        size = 1 << max(12, (max(nbytes, 1) - 1).bit_length())
        bucket = self.free.get(size)
        if bucket:
            return bucket.pop()
        self._trim(size)
        seg = shared_memory.SharedMemory(create=True, size=size)
        self.all[seg.name] = seg
        return seg

    def give(self, seg):
        self.free.setdefault(seg.size, []).append(seg)

    def _trim(self, incoming: int):
        total = sum(s.size for s in self.all.values()) + incoming
        for size in sorted(self.free, reverse=True):
            while total > POOL_LIMIT_BYTES and self.free[size]:
                seg = self.free[size].pop()
                total -= seg.size
                self._unlink(seg)

    def _unlink(self, seg):
        self.all.pop(seg.name, None)
        self.dropped.append(seg.name)
        try:
            seg.close()
            seg.unlink()
        except (FileNotFoundError, BufferError):
            pass

    def close_all(self):
        for seg in list(self.all.values()):
            self._unlink(seg)
        self.free.clear()


_pool = _Pool()


def _view(seg, shape, dtype):
    n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    return np.ndarray(shape, dtype=dtype, buffer=seg.buf[:n]) if n else np.empty(shape, dtype)


def host_copy(value):
    """(numpy array with the value's contents, write-back function or None)."""
    if isinstance(value, np.ndarray):
        return value, (lambda src, dst=value: np.copyto(dst, src) if dst.flags.writeable else None)
    mod = type(value).__module__
    if mod.startswith("torch"):
        import torch

        if value.is_cuda:
            torch.cuda.current_stream(value.device).synchronize()
        host = (
            value.detach().cpu().numpy()
            if value.dtype != torch.bfloat16
            else value.detach().view(torch.int16).cpu().numpy()
        )

        def back(src, dst=value):
            t = torch.from_numpy(np.ascontiguousarray(src))
            if dst.dtype == torch.bfloat16:
                t = t.view(torch.int16).view(torch.bfloat16) if t.dtype != torch.bfloat16 else t
            dst.copy_(t.view(dst.dtype) if t.dtype != dst.dtype else t)
            if dst.is_cuda:
                torch.cuda.current_stream(dst.device).synchronize()

        return host, back
    import tvm

    t = value if mod.startswith("tvm") else tvm.runtime.from_dlpack(value)
    return t.numpy(), (lambda src, dst=t: dst.copyfrom(src))


def pack_args(compiled, args, w=None):
    """``(spec, staged)``: the request's argument list (scalars inline, arrays as shared-memory segment
    names, shapes, dtypes and sizes) and the staged ``(segment, view, write-back, host copy)`` list,
    which :func:`release_args` gives back to the pool. ``w`` (the worker) is not used."""
    spec, staged = [], []
    for p, v in zip(compiled.entry_params, args):
        if p["kind"] == "scalar":
            spec.append(("scalar", v.item() if isinstance(v, np.generic) else v))
            continue
        host, back = host_copy(v)
        nbytes = host.nbytes
        seg = _pool.take(nbytes)
        view = np.ndarray((nbytes,), np.uint8, buffer=seg.buf[:nbytes]) if nbytes else None
        if nbytes:
            np.copyto(view, np.ascontiguousarray(host).reshape(-1).view(np.uint8))
        staged.append((seg, view, back, host))
        spec.append(("shm", seg.name, tuple(int(s) for s in host.shape), p["dtype"], nbytes))
    return spec, staged


def release_args(staged):
    """Give the segments of a :func:`pack_args` back to the pool."""
    for seg, *_ in reversed(staged):  # LIFO: the next call gets the same segment per argument
        _pool.give(seg)
