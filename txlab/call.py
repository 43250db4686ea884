"""One launch of a kernel, where ``txlab.config.device`` says: the GPU (inline, or in the isolated
worker) or the CPU emulator (:func:`txlab.emulate`) when there is no GPU. ``Compiled.__call__`` and
:func:`txlab.run.launch` come here; :mod:`txlab.run` adds checking and timing on top.

Its own module so that the compiler (``Compiled.__call__``) and ``run`` (which compiles a
``@T.prim_func`` it is given) both reach it without importing each other.
"""
from __future__ import annotations


def launch(kernel, *args, sync: bool = True, timeout_s: float | None = None, device: str | None = None):
    """Run ``kernel`` once. On the GPU ``kernel`` is a :class:`txlab.Compiled`; numpy arrays are
    copied in and written back in place; torch and DLPack tensors are passed zero-copy (inline) or
    staged through host memory (isolated). Returns None (kernels write their outputs).

    ``device`` (default ``txlab.config.device``): ``"auto"`` runs on the CPU emulator when there is
    no GPU (numpy arrays are written in place as after a GPU run; a finding of the emulator, e.g.
    an out-of-bounds access or a shared-memory race, is a :class:`txlab.KernelFault`
    ``kind="emulated"`` naming it at the user's line); ``"gpu"`` insists on a GPU; ``"cpu"`` always
    emulates (``kernel`` may then also be a ``@T.prim_func`` or an IRModule).

    With ``txlab.config.isolation == "process"`` a GPU run happens in the worker (txlab.worker): a
    fault or a hang raises :class:`txlab.KernelFault` and leaves this process and its arrays intact.
    ``timeout_s`` (isolated runs only) overrides ``txlab.config.timeout_s`` for this call."""
    from txlab.device import choose

    if choose(device) == "cpu":
        return _emulated(kernel, args)
    from txlab.launch import check_launch, checked_then_gpu, raise_inline_fault, to_device
    from txlab.launch import sync as wait_for_kernel
    from txlab.settings import config

    compiled = kernel
    info = checked_then_gpu(compiled, args, f"running {compiled.name}", writes_back=True)
    check_launch(compiled, info, args)
    if config.isolation == "process":
        from txlab import worker

        return worker.run(compiled, args, timeout_s=timeout_s)
    exe = compiled.executable
    dev_args, copies = to_device(args)
    try:
        exe(*dev_args)
    except Exception as exc:  # TVM's launch error (CUDALaunch Error: CUDA_ERROR_...)
        raise_inline_fault(compiled, args, str(exc))
    if sync or copies:
        wait_for_kernel(compiled, args)
    for host, tensor in copies:
        if host.flags.writeable:
            host[...] = tensor.numpy()
    return None


def _emulated(kernel, args):
    from txlab.emulator import emulate
    from txlab.errors import KernelFault

    result = emulate(kernel, *args)
    bad = [f for f in result.findings if f.kind != "note"]
    if bad:
        more = f" (and {len(bad) - 1} more: txlab.emulate(kernel, *args) lists them)" if len(bad) > 1 else ""
        raise KernelFault("emulated", f"{result.kernel} on the CPU emulator: {bad[0]}{more}",
                          kernel=result.kernel,
                          hint="the emulator stops short of what a GPU would do silently or fault on; "
                               "fix the access it names")
    return None


__all__ = ["launch"]
