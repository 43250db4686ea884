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
