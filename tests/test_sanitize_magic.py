"""%%tirx --sanitize "args": compute-sanitizer from a cell."""

import numpy as np
import pytest

IPython = pytest.importorskip("IPython")

CELL = """
@T.prim_func
def twice(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([256])
    B[tx] = A[tx] * T.float32(2.0)
"""


@pytest.fixture(scope="module")
def ip():
    from IPython.testing.globalipapp import get_ipython, start_ipython

    shell = start_ipython() or get_ipython()  # one global test shell per session
    shell.run_line_magic("load_ext", "txlab")
    return shell


def test_sanitize_option_runs_each_kernel_with_the_arguments(ip, monkeypatch):
    from txlab import sanitizer

    calls = []

    def fake(c, *args, tools=sanitizer.TOOLS, **kw):
        calls.append((c.name, [a.shape for a in args], tools))
        return sanitizer.SanitizerReport(
            kernel=c.name, tools=list(tools), findings=[], runs={t: {"status": "ok"} for t in tools}
        )

    monkeypatch.setattr(sanitizer, "sanitize", fake)
    ip.user_ns.update(A=np.ones(256, "float32"), B=np.zeros(256, "float32"))
    r = ip.run_cell('%%tirx --arch sm_90a --show none --sanitize "A, B" --tools memcheck,racecheck\n' + CELL)
    assert r.success, r.error_in_exec
    assert calls == [("twice", [(256,), (256,)], ("memcheck", "racecheck"))]
    assert ip.user_ns["twice_sanitized"].ok


def test_sanitize_option_errors_are_short(ip):
    r = ip.run_cell('%%tirx --arch sm_90a --show none --sanitize "nope, B"\n' + CELL)
    assert r.error_in_exec is not None and "nope" in str(r.error_in_exec)
    r = ip.run_cell('%%tirx --arch sm_90a --show none --sanitize "A, B" --tools valgrind\n' + CELL)
    assert r.error_in_exec is not None and "valgrind" in str(r.error_in_exec)


def test_sanitize_without_gpu_says_so(ip):
    from txlab.device import has_gpu

    if has_gpu():
        pytest.skip("a GPU is here")
    ip.user_ns.update(A=np.ones(256, "float32"), B=np.zeros(256, "float32"))
    r = ip.run_cell('%%tirx --arch sm_90a --show none --sanitize "A, B"\n' + CELL)
    assert type(r.error_in_exec).__name__ == "NoGPUError"
