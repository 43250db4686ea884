"""Emulated memory: one flat address space of regions (each kernel argument, each CTA's shared
memory), byte-addressed, accessed through typed views with a bounds check per lane.

Addresses are what the kernel computes: a global pointer is ``region.base + byte offset``; a
generic shared pointer is ``SHARED_BASE + offset`` and ``cvta_generic_to_shared`` gives the
32-bit ``offset``. Out-of-bounds lanes are reported (by the caller) and then skipped: a load reads
0, a store writes nothing -- unlike the GPU, the emulator's memory is never corrupted.
"""

from __future__ import annotations

import bisect

import numpy as np

GLOBAL_BASE = 1 << 40  # first argument's address; each next one 1 << 36 further
GLOBAL_STRIDE = 1 << 36
SHARED_BASE = 1 << 56  # generic address of shared offset 0
#: distributed shared memory (clusters): the shared memory of the CTA of cluster rank r is also
#: mapped at shared::cluster address ``(r + 1) << DSMEM_SHIFT`` (generic ``SHARED_BASE`` + that);
#: ``mapa`` maps a CTA's own shared address there. Own shared offsets stay below ``1 << DSMEM_SHIFT``.
DSMEM_SHIFT = 24
DSMEM_MASK = (1 << DSMEM_SHIFT) - 1


def dsmem_window(rank: int) -> int:
    """shared::cluster address of offset 0 of cluster rank ``rank``'s shared memory."""
    return (int(rank) + 1) << DSMEM_SHIFT


def split_cluster_address(addr: int) -> tuple:
    """(cluster rank or None for the executing CTA's own window, offset) of a shared address: a 32-bit shared::cta or
    shared::cluster one, or a generic pointer (``SHARED_BASE`` + that)."""
    a = int(addr)
    if a >= SHARED_BASE:
        a -= SHARED_BASE
    if a >> DSMEM_SHIFT:
        return (a >> DSMEM_SHIFT) - 1, a & DSMEM_MASK
    return None, a


def np_dtype(dtype) -> np.dtype:
    """numpy dtype for a TVM dtype string (bfloat16 and float8 through ml_dtypes)."""
    s = str(dtype)
    if s == "bool":
        return np.dtype(bool)
    if s in ("handle",) or s.startswith("handle"):
        return np.dtype(np.uint64)
    base = s.split("x")[0] if "x" in s and not s.startswith("float8") else s
    if s.startswith("float8"):
        base = s
    try:
        return np.dtype(base)
    except TypeError:
        import ml_dtypes

        names = {
            "bfloat16": ml_dtypes.bfloat16,
            "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
            "float8_e5m2": ml_dtypes.float8_e5m2,
            "float8_e4m3": ml_dtypes.float8_e4m3fn,
            "float8_e8m0fnu": getattr(ml_dtypes, "float8_e8m0fnu", None),
            "float4_e2m1fn": getattr(ml_dtypes, "float4_e2m1fn", None),
        }
        if names.get(base) is None:
            raise
        return np.dtype(names[base])


def lanes_of(dtype) -> int:
    s = str(dtype)
    if "x" in s and not s.startswith("float8"):
        tail = s.rsplit("x", 1)[1]
        if tail.isdigit():
            return int(tail)
    if s.startswith("float8") and s.count("x") == 1 and s.rsplit("x", 1)[1].isdigit():
        return int(s.rsplit("x", 1)[1])
    return 1


class Region:
    """A contiguous byte range: a kernel argument (``kind='global'``) or one CTA's shared memory."""

    __slots__ = ("name", "base", "data", "kind", "_views", "cta_stride", "limit", "readonly", "owner")

    def __init__(
        self, name: str, base: int, data: np.ndarray, kind: str, *, cta_stride: int = 0, limit: int | None = None
    ):
        self.name = name
        self.base = int(base)
        self.data = data  # uint8, a view of the user's array for globals (read-only if the user's array is)
        self.kind = kind
        # a kernel argument passed as a read-only numpy array: reading it is fine, a write raises (check_write)
        self.readonly = not data.flags.writeable
        self._views: dict = {}
        # the shared memory of a batch of CTAs: ``data`` holds one ``cta_stride``-byte slice per CTA,
        # addresses (and bounds) are those of one CTA (``limit`` bytes); the lane's CTA picks the slice
        self.cta_stride = int(cta_stride)
        self.limit = limit
        self.owner = None  # a cluster window (kind 'dsmem'): the CTA whose shared memory it maps

    def check_write(self, line=None) -> None:
        """Raise :class:`txlab.errors.InputError` when the kernel writes a kernel argument that was passed as a
        read-only numpy array (checked at the first write: read-only arrays the kernel only reads are fine)."""
        if not self.readonly:
            return
        from txlab.errors import InputError

        at = f" at line {line}" if line is not None else ""
        raise InputError(
            f"argument {self.name} is a read-only numpy array (flags.writeable is False) and the kernel writes "
            f"it{at}: txlab.emulate writes results into the arrays in place, so pass a writeable array for "
            f"{self.name} (np.array(a) makes a writeable copy of a). Read-only arrays are fine for arguments "
            "the kernel only reads",
            param=self.name,
        )

    @property
    def nbytes(self) -> int:
        return int(self.data.size) if self.limit is None else int(self.limit)

    def view(self, dt: np.dtype) -> np.ndarray:
        v = self._views.get(dt)
        if v is None:
            n = self.data.size - self.data.size % dt.itemsize
            v = self._views[dt] = self.data[:n].view(dt)
        return v


class AddressSpace:
    def __init__(self):
        self.regions: list[Region] = []
        self._bases: list[int] = []

    def add(self, region: Region) -> Region:
        i = bisect.bisect(self._bases, region.base)
        self._bases.insert(i, region.base)
        self.regions.insert(i, region)
        return region

    def remove(self, region: Region) -> None:
        i = self.regions.index(region)
        del self.regions[i]
        del self._bases[i]

    def fork(self) -> "AddressSpace":
        """Another address space over the same regions (a cluster's CTAs: globals shared, each its
        own shared memory at SHARED_BASE)."""
        other = AddressSpace()
        other.regions = list(self.regions)
        other._bases = list(self._bases)
        return other

    def find(self, addr: int) -> Region | None:
        i = bisect.bisect(self._bases, int(addr)) - 1
        if i < 0:
            return None
        r = self.regions[i]
        return r if int(addr) < r.base + max(r.nbytes, 1) + (1 << 30) else None

    def find_many(self, addrs: np.ndarray) -> np.ndarray:
        """Region index per address (-1: none)."""
        idx = np.searchsorted(np.asarray(self._bases, dtype=np.uint64), addrs.astype(np.uint64), side="right") - 1
        return idx
