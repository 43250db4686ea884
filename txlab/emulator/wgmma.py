"""wgmma (Hopper warpgroup MMA): not modelled yet -- every wgmma call raises NotEmulatedError,
so a kernel using it is reported as not emulated rather than answered wrongly."""
from __future__ import annotations
