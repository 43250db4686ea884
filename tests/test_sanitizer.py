"""txlab.sanitize: compute-sanitizer's reports parsed into typed findings at the user's line."""

import inspect
import json

import numpy as np
import pytest

import txlab
from txlab import sanitizer
from txlab.display import html_of
from txlab.examples import bugs

P = "========= "

MEMCHECK = f"""{P}COMPUTE-SANITIZER
{P}Invalid __global__ write of size 4 bytes
{P}    at oob_write_kernel+0x1d0 in kernel.cu:{{line}}
{P}    by thread (232,0,0) in block (3,0,0)
{P}    Address 0x7f3c7ec00fa0 is out of bounds
{P}    and is 1 bytes after the nearest allocation at 0x7f3c7ec00000 of size 4,000 bytes
{P}    Saved host backtrace up to driver entry point at kernel launch time
{P}        Host Frame: [0x2f1e4] in libcuda.so.1
{P}
{P}ERROR SUMMARY: 1 error
"""

RACECHECK = f"""{P}COMPUTE-SANITIZER
{P}Error: Potential RAW hazard detected at __shared__ 0x3fc in block (0,0,0) :
{P}    Write Thread (255,0,0) at shared_race_kernel+0x90 in kernel.cu:{{w}}
{P}    Read Thread (0,0,0) at shared_race_kernel+0x120 in kernel.cu:{{r}}
{P}    Current Value : 0
{P}
{P}Error: Potential RAW hazard detected at __shared__ 0x3fd in block (0,0,0) :
{P}    Write Thread (255,0,0) at shared_race_kernel+0x90 in kernel.cu:{{w}}
{P}    Read Thread (0,0,0) at shared_race_kernel+0x120 in kernel.cu:{{r}}
{P}
{P}Error: Race reported between Write access at shared_race_kernel+0x90 in kernel.cu:{{w}}
{P}    and Read access at shared_race_kernel+0x120 in kernel.cu:{{r}} [2048 hazards]
{P}
{P}RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""

SYNCCHECK = f"""{P}COMPUTE-SANITIZER
{P}Barrier error detected. Divergent thread(s) in warp
{P}    at divergent_barrier_kernel+0x110 in kernel.cu:{{helper}}
{P}    by thread (0,0,0) in block (0,0,0)
{P}        Device Frame: divergent_barrier_kernel+0x110 in kernel.cu:{{line}}
{P}
{P}Barrier error detected. Divergent thread(s) in warp
{P}    at divergent_barrier_kernel+0x110 in kernel.cu:{{helper}}
{P}    by thread (32,0,0) in block (0,0,0)
{P}
{P}ERROR SUMMARY: 2 errors
"""

INITCHECK = f"""{P}COMPUTE-SANITIZER
{P}Uninitialized __global__ memory read of size 4 bytes
{P}    at uninit_read_kernel+0x1a0 in kernel.cu:{{line}}
{P}    by thread (255,0,0) in block (0,0,0)
{P}    Address 0x7f3c7ec003fc
{P}
{P}ERROR SUMMARY: 1 error
"""

CLEAN = f"{P}COMPUTE-SANITIZER\n{P}ERROR SUMMARY: 0 errors\n"


def _compiled(name, fixed=False):
    return txlab.compile(bugs.kernel(name, fixed), arch="sm_90a", progress=lambda s: None)


def _marked(text):
    """The line of txlab/examples/bugs.py containing ``text``."""
    src, first = inspect.getsourcelines(bugs)
    (line,) = [max(first, 1) + i for i, l in enumerate(src) if text in l]
    return line


def _cuda_line(c, user_line, pick=0):
    lines = sorted(k for k, v in sanitizer.cuda_line_map(c).items() if v == user_line)
    assert lines, f"no CUDA line maps to user line {user_line}"
    return lines[pick]


def test_memcheck_text_parsed():
    fs, facts = sanitizer.parse_text(MEMCHECK.format(line=75), "memcheck")
    assert facts["errors"] == 1
    (f,) = fs
    assert f.kind == "out_of_bounds_write" and f.space == "global" and f.size == 4
    assert f.thread == (232, 0, 0) and f.block == (3, 0, 0)
    assert f.address == 0x7F3C7EC00FA0 and f.sass_offset == 0x1D0 and f.cuda_line == 75
    text = sanitizer.explain(f)
    assert "1 bytes after" in text and "4000-byte" in text


def test_racecheck_analysis_and_hazards_merge():
    fs, _ = sanitizer.parse_text(RACECHECK.format(w=74, r=75), "racecheck")
    (f,) = fs
    assert f.kind == "shared_race" and f.hazard == "RAW" and f.count == 2048
    assert (f.cuda_line, f.other["cuda_line"]) == (74, 75)
    assert f.thread == (255, 0, 0) and f.block == (0, 0, 0) and f.address == 0x3FC
    assert f.other["thread"] == [0, 0, 0]


def test_hazards_without_analysis_become_one_finding():
    text = "\n".join(
        l for l in RACECHECK.format(w=1, r=2).splitlines() if "Race reported" not in l and "and Read access" not in l
    )
    fs, _ = sanitizer.parse_text(text, "racecheck")
    (f,) = fs
    assert f.hazard == "RAW" and f.count == 2 and f.other["sass_offset"] == 0x120


@pytest.mark.parametrize(
    "name,tool,log",
    [
        ("oob_write", "memcheck", MEMCHECK),
        ("shared_race", "racecheck", RACECHECK),
        ("divergent_barrier", "synccheck", SYNCCHECK),
        ("uninit_read", "initcheck", INITCHECK),
    ],
)
def test_findings_land_on_the_bug_line(name, tool, log):
    c = _compiled(name)
    line = bugs.bug_line(name)
    cl = _cuda_line(c, line)
    if name == "shared_race":
        write_line = _marked("# the write")
        text = log.format(w=_cuda_line(c, write_line), r=cl)
    elif name == "divergent_barrier":
        helper = next(i for i, l in enumerate(c.cuda_source.splitlines(), 1) if "__syncthreads();" in l)
        text = log.format(helper=helper, line=cl)
    else:
        text = log.format(line=cl)
    rep = sanitizer.from_logs(c, {tool: text})
    assert not rep.ok
    want_kind = bugs.EXPECTED[name][1]
    hits = [f for f in rep.findings if f.kind == want_kind]
    assert hits, rep.summary()
    lines = {hits[0].lineno, (hits[0].other or {}).get("lineno")}
    assert line in lines, rep.summary()
    assert rep.lines[line].strip() and "BUG(" in rep.lines[line]
    assert hits[0].explanation and hits[0].explanation.endswith(".")


def test_divergent_barrier_without_device_frame_maps_through_the_helper():
    c = _compiled("divergent_barrier")
    helper = next(i for i, l in enumerate(c.cuda_source.splitlines(), 1) if "__syncthreads();" in l)
    text = "\n".join(l for l in SYNCCHECK.format(helper=helper, line=0).splitlines() if "Device Frame" not in l)
    rep = sanitizer.from_logs(c, {"synccheck": text})
    (f,) = rep.findings
    assert f.count == 2 and f.space == "warp"
    assert f.lineno == bugs.bug_line("divergent_barrier")


def test_clean_report_says_so(tmp_path):
    c = _compiled("oob_write", fixed=True)
    rep = sanitizer.from_logs(c, {t: CLEAN for t in sanitizer.TOOLS})
    assert rep.ok and rep.findings == []
    assert "clean" in rep.summary() and "clean" in html_of(rep)


def test_save_load_verifies(tmp_path):
    c = _compiled("oob_write")
    rep = sanitizer.from_logs(c, {"memcheck": MEMCHECK.format(line=_cuda_line(c, bugs.bug_line("oob_write")))})
    p = rep.save(tmp_path / "r.json")
    back = sanitizer.load(p)
    assert back.to_dict() == rep.to_dict()
    assert back.findings[0].thread == (232, 0, 0)
    doc = json.loads(p.read_text())
    doc["report"]["findings"][0]["lineno"] = 1
    p.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="checksum"):
        sanitizer.load(p)
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(ValueError):
        sanitizer.load(tmp_path / "x.json")
    body = rep.to_dict()
    body["findings"][0]["lineno"] = "12"
    with pytest.raises(ValueError, match="lineno"):
        sanitizer.SanitizerReport.from_dict(body)


def test_html_escapes_everything():
    c = _compiled("oob_write")
    text = MEMCHECK.format(line=75).replace("oob_write_kernel", "<script>alert(1)</script>")
    rep = sanitizer.from_logs(c, {"memcheck": text})
    rep.findings[0].message = "<img src=x onerror=alert(1)>"
    out = html_of(rep)
    assert "<script>" not in out and "<img" not in out


def test_xml_record_read_when_text_has_nothing():
    xml = """<?xml version="1.0" encoding="utf-8"?><ComputeSanitizerOutput><record><kind>Memcheck</kind>
    <what><text>Invalid __global__ write of size 4 bytes</text></what><threadId><x>3</x><y>0</y><z>0</z>
    </threadId><blockId><x>1</x><y>0</y><z>0</z></blockId><pc>0x1d0</pc><address>0x7f00</address></record>
    <record><kind>Api</kind><what><text>Program hit cudaErrorInvalidValue</text></what></record>
    </ComputeSanitizerOutput>"""
    (f,) = sanitizer.parse_xml(xml, "memcheck")
    assert f.kind.startswith("out_of_bounds_write") or f.kind == "out_of_bounds_write"
    assert f.thread == (3, 0, 0) and f.block == (1, 0, 0) and f.sass_offset == 0x1D0 and f.address == 0x7F00


def test_arguments_checked_before_the_gpu():
    c = _compiled("oob_write")
    with pytest.raises(txlab.InputError):
        txlab.sanitize(c, np.zeros(3, "float32"))
    with pytest.raises(ValueError, match="tools"):
        txlab.sanitize(c, *bugs.inputs("oob_write"), tools=("helgrind",))
    with pytest.raises(ValueError, match="no buffer parameter named C"):
        txlab.sanitize(c, *bugs.inputs("oob_write"), uninitialized=("C",))


def test_no_gpu_says_so():
    from txlab.device import has_gpu

    if has_gpu():
        pytest.skip("a GPU is here")
    c = _compiled("oob_write")
    with pytest.raises(txlab.NoGPUError):
        txlab.sanitize(c, *bugs.inputs("oob_write"))


def test_finds_the_sanitizer(monkeypatch, tmp_path):
    fake = tmp_path / "compute-sanitizer"
    fake.write_text("#!/bin/sh\necho 'Version 2026.4.0.0'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("TXLAB_COMPUTE_SANITIZER", str(fake))
    assert sanitizer.find_sanitizer() == str(fake)
    assert sanitizer.sanitizer_version(str(fake)) == "2026.4.0.0"


def test_bundle_round_trip(tmp_path):
    c = _compiled("oob_write", fixed=True)
    reps = {"a": sanitizer.from_logs(c, {"memcheck": CLEAN}), "b": sanitizer.from_logs(c, {"racecheck": CLEAN})}
    p = sanitizer.save_bundle(reps, tmp_path / "b.json", host="test")
    back = sanitizer.load_bundle(p)
    assert {k: v.to_dict() for k, v in back.items()} == {k: v.to_dict() for k, v in reps.items()}
    doc = json.loads(p.read_text())
    doc["reports"]["a"]["report"]["kernel"] = "other"
    p.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="checksum"):
        sanitizer.load_bundle(p)


def test_recorded_reports_ship():
    """The reports recorded on the H200 (txlab/data) load without a GPU and name each bug's line."""
    try:
        reports = sanitizer.recorded()
    except FileNotFoundError:
        pytest.skip("no recorded sanitizer reports yet (scripts/sanitize_h200.py records them)")
    for name in bugs.SANITIZER_BUGS:
        rep = reports[name]
        tool, kind = bugs.EXPECTED[name]
        hits = [f for f in rep.findings if f.tool == tool and f.kind == kind]
        assert hits and any(bugs.bug_line(name) in (f.lineno, (f.other or {}).get("lineno")) for f in hits)
        fixed = reports[f"{name}_fixed"]
        assert fixed.ok, fixed.summary()


@pytest.mark.gpu
@pytest.mark.parametrize("name", bugs.SANITIZER_BUGS)
def test_sanitize_on_gpu(name):
    tool, kind = bugs.EXPECTED[name]
    rep = txlab.sanitize(_compiled(name), *bugs.inputs(name), tools=(tool,), **bugs.sanitize_options(name))
    hits = [f for f in rep.findings if f.kind == kind]
    assert hits, rep.summary()
    assert any(bugs.bug_line(name) in (f.lineno, (f.other or {}).get("lineno")) for f in hits), rep.summary()
    fixed = txlab.sanitize(_compiled(name, fixed=True), *bugs.inputs(name), **bugs.sanitize_options(name))
    assert fixed.ok, fixed.summary()


FAKE = """#!/bin/sh
# stands in for compute-sanitizer: records its options, writes a clean log, runs the program
log=""; save=""
if [ "$1" = "--help" ]; then
  printf '  --report-api-errors arg\n  --padding arg\n  --racecheck-report arg\n  --show-backtrace arg\n'; exit 0
fi
echo "$@" >> "$TXLAB_FAKE_ARGS"
while [ $# -gt 0 ]; do
  case "$1" in
    --log-file) log="$2"; shift 2;;
    --save) save="$2"; shift 2;;
    --tool|--print-limit|--report-api-errors|--padding|--racecheck-report|--initcheck-address-space|--show-backtrace) shift 2;;
    --xml) shift;;
    *) break;;
  esac
done
printf '========= COMPUTE-SANITIZER\\n========= ERROR SUMMARY: 0 errors\\n' > "$log"
exec "$@"
"""


def test_runner_path_up_to_the_gpu(monkeypatch, tmp_path):
    """Everything but the launch: the job, the exported library, the sanitizer's command line and
    the runner process loading the kernel with TVM's runtime (it stops where CUDA is needed)."""
    import txlab.device as device

    fake = tmp_path / "compute-sanitizer"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    monkeypatch.setenv("TXLAB_COMPUTE_SANITIZER", str(fake))
    monkeypatch.setenv("TXLAB_FAKE_ARGS", str(tmp_path / "args.txt"))
    monkeypatch.setattr(
        device, "require_gpu", lambda what="", **kw: device.GPUInfo(available=True, name="fake", arch="sm_90a")
    )
    c = _compiled("oob_write")
    keep = tmp_path / "job"
    rep = txlab.sanitize(c, *bugs.inputs("oob_write"), tools=("memcheck",), keep=str(keep), uninitialized="B")
    args = (tmp_path / "args.txt").read_text()
    assert "--tool memcheck" in args and "--report-api-errors no" in args and "-m txlab.sanitize_runner" in args
    assert "--show-backtrace device" in args and "--xml --save" in args
    job = json.loads((keep / "job.json").read_text())
    assert [a["kind"] for a in job["args"]] == ["array", "array"] and job["args"][0]["nbytes"] == 4000
    assert [a["upload"] for a in job["args"]] == [True, False]
    result = json.loads((keep / "result.json").read_text())
    # no GPU here: the runner got as far as CUDA and reported why it stopped
    if result["status"] != "ok":
        assert rep.runs["memcheck"]["status"] in ("failed", "fault")
        assert result.get("error")
    # the cubin the sanitizer ran carries line info
    if "library" not in job:
        pytest.skip("no C++ compiler: the runner rebuilds from the script")


# ---- real compute-sanitizer 2025.3.1 output from the H200 (tests/data/h200, the lead's sample run)
H200 = __import__("pathlib").Path(__file__).parent / "data" / "h200"


def _sample(name):
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("h200_sample_kernels", H200 / "sample_kernels.py")
    mod = sys.modules.get("h200_sample_kernels")
    if mod is None:
        mod = importlib.util.module_from_spec(spec)
        sys.modules["h200_sample_kernels"] = mod
        spec.loader.exec_module(mod)
    return txlab.compile(getattr(mod, name), arch="sm_90a", progress=lambda s: None)


def _line_of(text):
    lines = (H200 / "sample_kernels.py").read_text().splitlines()
    return next(i for i, l in enumerate(lines, 1) if text in l)


def test_h200_memcheck_out_of_bounds_write_at_its_line():
    rep = sanitizer.from_logs(_sample("oob_write"), {"memcheck": (H200 / "cs_memcheck_oob_write.txt").read_text()})
    (f,) = rep.findings
    assert f.kind == "out_of_bounds_write" and f.space == "global" and f.size == 4
    assert f.thread == (255, 0, 0) and f.block == (3, 0, 0) and f.sass_offset == 0x170 and f.cuda_line == 77
    assert f.address == 0x7F10D8802000
    assert f.lineno == _line_of("B[bx * 256 + tx + 1] = T.float32(1.0)")
    assert "97 bytes after" in f.explanation
    assert any("Target application returned an error" in n for n in rep.runs["memcheck"]["notes"])


def test_h200_racecheck_race_between_the_write_and_the_read():
    c = _sample("shared_race")
    rep = sanitizer.from_logs(c, {"racecheck": (H200 / "cs_racecheck_shared_race.txt").read_text()})
    (f,) = rep.findings
    assert f.hazard == "RAW" and f.count == 1024 and (f.cuda_line, f.other["cuda_line"]) == (73, 74)
    assert f.lineno == _line_of("sm[tx] = X[tx]") and f.other["lineno"] == _line_of("out[tx] = sm[(tx + 33)")
    rep = sanitizer.from_logs(c, {"racecheck": (H200 / "cs_racecheck_hazard.txt").read_text()})
    (f,) = rep.findings
    assert f.hazard == "RAW" and f.thread == (193, 0, 0) and f.other["thread"] == [160, 0, 0]
    assert f.address == 0x704 and f.count > 1


def test_h200_synccheck_divergent_barrier_through_the_inlined_helper():
    c = _sample("divergent_sync")
    rep = sanitizer.from_logs(c, {"synccheck": (H200 / "cs_synccheck_divergent_sync.txt").read_text()})
    fs = [f for f in rep.findings if f.kind == "divergent_barrier"]
    assert len(fs) == 1 and fs[0].count >= 2 and fs[0].space == "warp"
    assert fs[0].cuda_line == 69 and fs[0].function == "tvm_builtin_cuda_cta_sync()"
    assert rep.runs["synccheck"]["errors"] == 128  # not the "108 errors were not printed" line
    lines = (H200 / "sample_kernels.py").read_text().splitlines()
    start = next(i for i, l in enumerate(lines, 1) if "def divergent_sync" in l)
    want = next(i for i, l in enumerate(lines, 1) if i > start and "T.cuda.cta_sync()" in l)
    assert fs[0].lineno == want


def test_h200_clean_runs_are_clean():
    rep = sanitizer.from_logs(
        _sample("transpose_padded"), {"memcheck": (H200 / "cs_memcheck_transpose_padded.txt").read_text()}
    )
    assert rep.ok and rep.runs["memcheck"]["errors"] == 0
    rep = sanitizer.from_logs(
        _sample("uninit_read"), {"initcheck": (H200 / "cs_initcheck_uninit_read.txt").read_text()}
    )
    assert rep.ok  # 2025.3's initcheck checks global memory only: the shared read is not seen


def test_flags_this_sanitizer_does_not_know_are_left_out(tmp_path):
    fake = tmp_path / "cs"
    fake.write_text("#!/bin/sh\nprintf '  --report-api-errors arg\\n  --padding arg\\n'\n")
    fake.chmod(0o755)
    assert sanitizer.supported_flags(str(fake), "memcheck") == ["--report-api-errors", "no", "--padding", "256"]
    assert sanitizer.supported_flags(str(fake), "initcheck") == []


@pytest.mark.parametrize(
    "name,tool,log",
    [
        ("oob_write", "memcheck", "cs_memcheck_oob_write.txt"),
        ("shared_race", "racecheck", "cs_racecheck_shared_race.txt"),
        ("divergent_sync", "synccheck", "cs_synccheck_divergent_sync.txt"),
    ],
)
def test_h200_offsets_through_the_source_map_agree_with_the_cuda_lines(name, tool, log):
    """The SASS offsets compute-sanitizer printed on the H200, mapped through Compiled.source_map
    (srcmap's line map), land on the same user lines as the CUDA lines it printed."""
    c = _sample(name)
    if getattr(type(c), "source_map", None) is None:
        pytest.skip("no Compiled.source_map in this tree")
    text = (H200 / log).read_text()
    by_cuda = sanitizer.from_logs(c, {tool: text})
    fs, _ = sanitizer.parse_text(text, tool)
    by_sass = sanitizer.finish(
        sanitizer.SanitizerReport(kernel=c.name, tools=[tool], findings=fs, runs={}), c, use_source_map=True
    )
    assert by_sass.line_map == "source_map"
    for a, b in zip(by_cuda.findings, by_sass.findings):
        assert a.lineno == b.lineno is not None
        assert (a.other or {}).get("lineno") == (b.other or {}).get("lineno")


def test_racecheck_hazard_pass_fills_threads_of_each_race(monkeypatch, tmp_path):
    """A race found in analysis mode gets its threads, CTA and address from a second, hazard-mode
    run (here a stand-in sanitizer replays the H200's two outputs)."""
    import txlab.device as device

    fake = tmp_path / "compute-sanitizer"
    fake.write_text(f"""#!/bin/sh
if [ "$1" = "--help" ]; then printf '  --racecheck-report arg\\n  --show-backtrace arg\\n'; exit 0; fi
if [ "$1" = "--version" ]; then echo 'Version 2025.3.1.0'; exit 0; fi
log=""; mode=analysis
while [ $# -gt 0 ]; do
  case "$1" in
    --log-file) log="$2"; shift 2;;
    --racecheck-report) mode="$2"; shift 2;;
    --xml) shift;;
    --*) shift 2;;
    *) break;;
  esac
done
if [ "$mode" = hazard ]; then cp {H200 / "cs_racecheck_hazard.txt"} "$log"; else cp {H200 / "cs_racecheck_shared_race.txt"} "$log"; fi
""")
    fake.chmod(0o755)
    monkeypatch.setenv("TXLAB_COMPUTE_SANITIZER", str(fake))
    monkeypatch.setattr(
        device, "require_gpu", lambda what="", **kw: device.GPUInfo(available=True, name="fake", arch="sm_90a")
    )
    c = _sample("shared_race")
    rep = txlab.sanitize(c, np.zeros(256, "float32"), np.zeros(256, "float32"), tools=("racecheck",))
    (f,) = rep.findings
    assert f.hazard == "RAW" and f.count == 1024
    assert f.thread == (193, 0, 0) and f.block == (0, 0, 0) and f.address == 0x704
    assert f.lineno == _line_of("sm[tx] = X[tx]") and f.other["lineno"] == _line_of("out[tx] = sm[(tx + 33)")
    assert "hazards" in rep.raw["racecheck"]
