"""A TVMScript error at the top of a plain script: TVM 0.27's excepthook printed only "note: run with
TVM_BACKTRACE=1 ..." and dropped the error (the line, the typo); with txlab imported, before or after tvm,
the error is printed first."""

import os
import subprocess
import sys
import textwrap

import pytest

KERNEL = textwrap.dedent(
    """
    @T.prim_func
    def red(X: T.Buffer((256,), "float32"), out: T.Buffer((1,), "float32")):
        T.device_entry()
        tx = T.thread_id([256])
        out[0] = T.cuda.cta_summ(X[tx])
    """
)


def _run(tmp_path, head, **env):
    path = tmp_path / "typo.py"
    path.write_text(head + KERNEL)
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTEST_CURRENT_TEST", "TVM_BACKTRACE")}
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env={**environ, **env}, timeout=120)
    return r.returncode, r.stdout + r.stderr


@pytest.mark.parametrize(
    "head",
    ["import txlab\nfrom tvm.script import tirx as T\n", "from tvm.script import tirx as T\nimport txlab\n"],
    ids=["txlab-first", "tvm-first"],
)
def test_a_parse_error_at_the_top_of_a_script_is_printed(tmp_path, head):
    rc, out = _run(tmp_path, head)
    assert rc == 1 and "'CUDANamespace' object has no attribute 'cta_summ'" in out, out
    assert "typo.py:8" in out and out.count("cta_summ") >= 2  # the file, the line and the source shown


def test_without_txlab_tvm_swallows_it_and_with_a_backtrace_it_is_not_printed_twice(tmp_path):
    rc, out = _run(tmp_path, "from tvm.script import tirx as T\n")
    assert rc == 1 and "cta_summ" not in out and "TVM_BACKTRACE" in out  # what txlab mends
    rc, out = _run(tmp_path, "import txlab\nfrom tvm.script import tirx as T\n", TVM_BACKTRACE="1")
    assert rc == 1 and "Traceback" in out and "cta_summ" in out  # TVM's own hook prints the traceback
    assert not any(line.startswith("DiagnosticError: ") for line in out.splitlines()), out  # and txlab not again
