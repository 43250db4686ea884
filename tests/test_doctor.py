import subprocess
import sys

from txlab.doctor import format_report, report


def test_report_names_versions_tools_and_gpu():
    r = report()
    assert r["versions"]["apache-tvm"] == "0.27.0.post1"
    assert r["tools"]["nvcc"]["path"] and r["tools"]["nvdisasm"]["path"]
    assert "available" in r["gpu"] or "name" in r["gpu"]
    text = format_report(r)
    for word in ("apache-tvm", "nvcc", "nvdisasm", "GPU", "IKET"):
        assert word in text


def test_cli_runs():
    out = subprocess.run([sys.executable, "-m", "txlab.cli", "doctor"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "txlab doctor" in out.stdout


def test_python_dash_m_txlab_is_the_command_and_names_the_emulator():
    """``python -m txlab doctor`` works like the ``txlab`` script (a venv not on PATH), and the
    feature list says kernels run on the CPU emulator, which works with no GPU."""
    out = subprocess.run([sys.executable, "-m", "txlab", "doctor"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "txlab doctor" in out.stdout, out.stderr
    assert "[x] run/check on the CPU emulator (txlab.emulate)" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "txlab", "doctr"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "invalid choice: 'doctr'" in bad.stderr
