"""NVIDIA IKET annotations from TIRx, the LowerIket pass, and the Python profiling entry points.

A kernel annotated with ``Tx.cuda.iket.*`` (or the ``IketProfiler`` meta class) builds two ways:

* regular build: ``transforms.LowerIket`` (part of the tirx pipeline, right after SplitHostDevice)
  strips every annotation and token; the kernel is unchanged.
* IKET-enabled build (``mod.with_attr("tirx.iket.enabled", True)``, what ``IketProfiler.compile``
  does): LowerIket turns each annotation into ``Tx.cuda.iket.official_event`` calls plus event
  metadata (``__iket_*`` globals) and globaltimer/pmevent placeholders that NVIDIA's ``run-iket``
  patches and decodes.

Events are recorded only under ``run-iket`` (``nvidia-cutlass-dsl>=4.6.0``'s IKET profile, which
txlab does not install: ``txlab.timeline.iket_requirements()`` lists what is missing). On an H200
with that runtime, ``scripts/iket_h200.py`` runs this example under run-iket, checks its output and
decodes the trace with ``txlab.timeline.load_iket``; its record (txlab/data/api_verified_iket.json)
is what ``txlab.api.coverage`` reports for these names.
"""
from __future__ import annotations

from txlab.api_examples.example import Example

NO_RUNTIME = ("IKET events are recorded only under NVIDIA run-iket (nvidia-cutlass-dsl>=4.6.0 IKET "
              "profile), not by an in-process launch; scripts/iket_h200.py runs it there")

REGIONS = '''
from tvm.backend.cuda.iket import IketProfiler


@T.prim_func
def iket_regions(X: T.Buffer((256,), "float32"), Out: T.Buffer((256,), "float32")):
    T.device_entry()
    prof = IketProfiler()                      # meta class: the same annotations, as methods
    cta = T.cta_id([2])
    tx = T.thread_id([128])
    i = cta * 128 + tx
    T.cuda.iket.range_push("kernel")           # stack-style range ...
    token = T.cuda.iket.sentinel_token("idle")  # a no-op token so the loop can always end one
    for k in T.serial(4, unroll=False):
        T.cuda.iket.range_end(token)
        token = T.cuda.iket.range_start("step")  # token-style range, one per iteration
        Out[i] = Out[i] + X[i] * T.float32(k)
    T.cuda.iket.range_end(token)
    T.cuda.iket.mark("done", tx)               # point event with a 32-bit payload
    prof.range_push("epilogue")
    prof.mark("store")
    prof.range_pop()
    T.cuda.iket.range_pop()                    # ... closed here


def profile_this_script(main):
    """How a script records the trace (needs run-iket; see txlab.api_examples.iket)."""
    from tvm.backend.cuda import iket

    try:
        result = iket.run(main, output_dir="iket-out", clobber=True)  # replays this script
    except iket.IketProfileError as err:                              # runtime missing or failed
        print(err)
        return None
    assert isinstance(result, iket.IketProfileResult)
    return result.trace_json  # also .perfetto, .html, .trace(), .launches()
'''

_FRONT_PASSES = ("LowerTIRx", "StmtSimplify", "LowerTIRxOpaque", "FlattenBuffer", "BF16ComputeLegalize",
                 "UnrollLoop", "StmtSimplify", "FP8ComputeLegalize", "VerifyMemory", "AnnotateEntryFunc",
                 "SplitHostDevice")


def lower_iket(prim_func, enabled: bool, arch: str = "sm_90a"):
    """The module right after an explicit ``transforms.LowerIket()``: the tirx pipeline's passes up to
    SplitHostDevice, then LowerIket (where the pipeline runs it)."""
    import tvm
    from tvm.backend.cuda import transforms

    mod = tvm.IRModule({prim_func.attrs["global_symbol"] if prim_func.attrs and "global_symbol" in
                        prim_func.attrs else "main": prim_func})
    if enabled:
        mod = mod.with_attr("tirx.iket.enabled", True)
    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    mod = tvm.tirx.transform.BindTarget(target.with_host("llvm" if tvm.runtime.enabled("llvm") else "c"))(mod)
    passes = [getattr(tvm.tirx.transform, n)() for n in _FRONT_PASSES]
    passes.insert(1, tvm.s_tir.transform.UnifyThreadBinding())
    with target:
        mod = tvm.ir.transform.Sequential(passes)(mod)
        return transforms.LowerIket()(mod)


def build(ex) -> dict:
    """What the iket example checks here: LowerIket strips (regular) or lowers (enabled) every
    annotation, both builds reach a cubin, and ``iket.profile`` answers with an IketProfileResult or,
    without the runtime, an IketProfileError naming what is missing."""
    import sys
    import tempfile

    import tvm
    from tvm.backend.cuda import iket

    from txlab.compiler import compile as compile_kernel

    pf = ex.prim_func()
    plain = lower_iket(pf, enabled=False).script()
    on = lower_iket(pf, enabled=True).script()
    if "cuda.iket" in plain:
        raise AssertionError("regular LowerIket left an IKET annotation in the module")
    if "T.cuda.iket.official_event" not in on:
        raise AssertionError("IKET-enabled LowerIket emitted no official_event")
    compile_kernel(pf, arch=ex.arch, progress=lambda *_: None)
    enabled = compile_kernel(tvm.IRModule({ex.id: pf}).with_attr("tirx.iket.enabled", True), arch=ex.arch,
                            progress=lambda *_: None)
    if "tvm_builtin_iket_official_event" not in enabled.cuda_source or "__iket_meta_info" not in enabled.cuda_source:
        raise AssertionError("the IKET-enabled CUDA lacks the official events / metadata")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            res = iket.profile([sys.executable, "-c", "pass"], output_dir=f"{tmp}/out", timeout=60)
            runtime = f"run-iket present: {type(res).__name__}"
        except iket.IketProfileError as err:
            runtime = f"IketProfileError: {str(err).splitlines()[0]}"
    return {"official_events": on.count("T.cuda.iket.official_event"), "runtime": runtime}


def enabled_source(ex) -> str:
    """CUDA of the IKET-enabled build (what the APIView shows for these names)."""
    import tvm

    from txlab.compiler import compile as compile_kernel

    return compile_kernel(tvm.IRModule({ex.id: ex.prim_func()}).with_attr("tirx.iket.enabled", True),
                         arch=ex.arch, progress=lambda *_: None).cuda_source


EXAMPLES = [
    Example(
        id="iket_regions", source=REGIONS, arch="sm_90a", compile=build, needs=("iket",), not_on_h200=NO_RUNTIME,
        uses=("Tx.cuda.iket.mark", "Tx.cuda.iket.range_start", "Tx.cuda.iket.range_end",
              "Tx.cuda.iket.range_push", "Tx.cuda.iket.range_pop", "Tx.cuda.iket.sentinel_token",
              "Tx.cuda.iket.official_event", "tvm.backend.cuda.iket.IketProfiler",
              "tvm.backend.cuda.transforms.LowerIket", "tvm.backend.cuda.iket.run",
              "tvm.backend.cuda.iket.profile", "tvm.backend.cuda.iket.IketProfileResult",
              "tvm.backend.cuda.iket.IketProfileError"),
        emits={"Tx.cuda.iket.official_event": r"tvm_builtin_iket_official_event\(",
               "Tx.cuda.iket.mark": r"__iket_evt_decl_(done|store)_",
               "Tx.cuda.iket.range_start": r"__iket_(evt|range)_decl_step_",
               "Tx.cuda.iket.range_end": r"__iket_(evt|range)_decl_step_",
               "Tx.cuda.iket.range_push": r"__iket_(evt|range)_decl_(kernel|epilogue)_",
               "Tx.cuda.iket.range_pop": r"__iket_(evt|range)_decl_(kernel|epilogue)_",
               "Tx.cuda.iket.sentinel_token": r"token_ptr\[0\] = \(uint\)0",
               "tvm.backend.cuda.iket.IketProfiler": r"__iket_evt_decl_store_",
               "tvm.backend.cuda.transforms.LowerIket": r"__iket_meta_info"},
        note=("official_event is what LowerIket emits for each annotation (checked in the lowered IR); "
              "run/profile/IketProfileResult/IketProfileError are the Python side (profile_this_script, "
              "and build() calls iket.profile, which raises IketProfileError without run-iket)"),
    ),
]
