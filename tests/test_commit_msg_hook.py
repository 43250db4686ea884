"""The commit-msg hook `make setup` installs: subject <= 72 characters, a blank line, a body."""

import shutil
import subprocess
from pathlib import Path

import pytest

HOOK = Path(__file__).resolve().parent.parent / ".githooks" / "commit-msg"


def _run(tmp_path, text):
    if shutil.which("sh") is None:
        pytest.skip("no POSIX sh on this machine")
    msg = tmp_path / "COMMIT_EDITMSG"
    msg.write_text(text)
    return subprocess.run(["sh", str(HOOK), str(msg)], capture_output=True, text=True)


@pytest.mark.parametrize(
    "text",
    [
        "gemm: split-K for small grids\n\nToo few tiles for 132 SMs leave most of them idle.\n",
        "Merge wt/gemm: split-K fix-up, FP8 split-K (issue 27)\n",
        "docs: one line\n\nwhy\n# a comment git strips\n",
    ],
)
def test_good_messages_pass(tmp_path, text):
    r = _run(tmp_path, text)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(
    "text,why",
    [
        ("x" * 73 + "\n\nbody\n", "73 characters"),
        ("gemm: split-K for small grids\n", "body that says why"),
        ("gemm: split-K\nno blank line\n", "blank line"),
        ("\n\nbody\n", "empty subject"),
        ("Merge wt/gemm: split-K fix-up, staged epilogue, FP8 split-K, model (issue 27)\n", "77 characters"),
    ],
)
def test_bad_messages_fail_with_the_reason(tmp_path, text, why):
    r = _run(tmp_path, text)
    assert r.returncode == 1 and why in r.stderr
