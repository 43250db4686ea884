"""Why is it slow: Nsight Compute measurements of one kernel launch, tied to the lines you wrote.

    prof = txlab.profile(compiled, a, b, n)      # runs the kernel once under ncu, isolated
    prof.summary()                               # what bounds it, the hot lines, their stalls
    prof.lines[:5]                               # one row per line: samples, share, stalls, ...
    prof.metrics["gpu__time_duration.sum"]       # [value, unit], every metric ncu collected
    prof.save("k.profile.json"); txlab.Profile.load("k.profile.json")
    txlab.profiling.saved("transpose_naive")     # profiles recorded on an H200, shipped with txlab

Names: ``txlab.profile`` is the function, this module is ``txlab.profiling`` (a module and a
function cannot share a name on the package); ``txlab.profile.saved`` is also there, as an
attribute of the function.

How: :mod:`txlab.ncu` runs ``ncu`` on ``python -m txlab.ncu_runner`` (the isolated worker's
request loop), so a fault or hang while profiling is a :class:`txlab.KernelFault` and the
notebook's process never runs the kernel. The kernel is profiled from a cubin built with
``-lineinfo`` (the same SASS; only a line table is added), whose table maps each sampled
instruction to a line of ``Compiled.cuda_source``. When the kernel has a TVMScript line map
(``Compiled.source_map.line_of_sass``), rows are the TVMScript lines (``line_kind ==
"tvmscript"``), else the CUDA lines (``"cuda"``).
"""

from __future__ import annotations

from txlab.profiling.compare import COMPARE, ProfileDiff, diff  # noqa: F401
from txlab.profiling.measurements import HEADLINE, LINE_COUNTERS, SCHEMA, VERSION, Profile, sass_by_offset  # noqa: F401
from txlab.profiling.running import profile, run_ncu, with_lineinfo  # noqa: F401
from txlab.profiling.shipped import saved, saved_names  # noqa: F401
