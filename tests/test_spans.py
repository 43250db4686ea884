"""Which user line (txlab.ir.spans): one span walker; tile-primitive bodies at the line that called
them (checked against each op compiled alone, on kernels from TVM's own tile-primitive tests); a
module lowered before txlab keeps the user's file; tile-dispatch failures at the user's line."""

import collections
import re
from pathlib import Path

import pytest

import txlab
from txlab import ir

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "tests" / "kernels"


@pytest.fixture(scope="module")
def K():
    import sys

    sys.path.insert(0, str(KERNELS))
    import tile_ops

    return tile_ops


def _compile(kernel):
    return txlab.compile(kernel, arch="sm_90a", progress=lambda s: None)


_MEM = re.compile(r"^(LDG|STG|LDS|STS|LDSM|STSM|LDGSTS|ATOMS|ATOMG|ATOM|RED|UTMA|UBLKCP)")


def _memory(instrs):
    """Global/shared memory opcodes (the instructions a tile op is for; address arithmetic and
    constant loads are shared between ops by CSE, so they are not an op's own)."""
    return collections.Counter(s.opcode for s in instrs if _MEM.match(s.opcode))


def _op_line(m, builder, op):
    """The user line of the tile op guarded by ``if "<op>" in ops`` inside ``builder``."""
    import inspect

    lines, first = inspect.getsourcelines(builder)
    k = next(i for i, l in enumerate(lines) if f'"{op}" in ops' in l)
    line = first + k + 1
    assert "Tx." in m.user_source[line - 1]
    return line


def test_no_other_module_walks_span_frames():
    """Span frames (SequentialSpan stacks, source names) are read in txlab/ir/spans.py only."""
    import ast

    offenders = []
    for path in (ROOT / "txlab").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "txlab/ir/spans.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            hit = (
                (isinstance(node, ast.Attribute) and node.attr in ("source_name", "SequentialSpan"))
                or (isinstance(node, ast.Name) and node.id == "SequentialSpan")
                or (
                    isinstance(node, ast.Call)
                    and getattr(node.func, "id", None) == "getattr"
                    and len(node.args) > 1
                    and isinstance(node.args[1], ast.Constant)
                    and node.args[1].value in ("source_name", "spans")
                )
            )
            if hit:
                offenders.append(f"{rel}:{node.lineno}")
    assert not offenders, offenders
    # and there is one CUDA function-extent scanner
    scanners = [
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "txlab").rglob("*.py")
        if re.search(r"count\(\"\{\"\)\s*-\s*\w+.*count\(\"\}\"\)", p.read_text())
    ]
    assert scanners == ["txlab/ir/cuda_text.py"], scanners


def test_split_reads_the_inline_stack():
    import tvm

    def span(f, line):
        return tvm.ir.Span(tvm.ir.SourceName(f), line, line, 0, 0)

    lib = "/x/site-packages/tvm/backend/cuda/tile_primitive/copy.py"
    seq = tvm.ir.SequentialSpan([span("/u/k.py", 10), span("/u/k.py", 4), span(lib, 175)])
    assert ir.split(seq) == (("/u/k.py", 4), [(lib, 175)])  # a same-file macro: its body's line
    assert ir.user_line(seq, "/u/k.py") == 4
    assert ir.user_line(span(lib, 175)) is None  # TVM's code alone is nobody's line
    assert ir.user_line(seq, "/other.py") is None


def test_two_copies_each_at_their_own_line(K):
    c = _compile(K.gmem_smem_roundtrip())
    m = c.source_map
    load, store = _op_line(m, K.gmem_smem_roundtrip, "load"), _op_line(m, K.gmem_smem_roundtrip, "store")
    assert _memory(m.sass_records_for(load)) == {"LDG.E.128": 4, "STS.128": 4}
    assert _memory(m.sass_records_for(store)) == {"LDS.128": 4, "STG.E.128": 4}
    # the library function is still named (the frames after the user's)
    assert any("vec_auto" in (s.library or "") or s.library for s in m.sass_records_for(load))


# kernel -> {op: (the ops of its alone build, the opcodes that are the op's own)}. An op whose result
# nothing reads compiles to nothing, so an op is built with the ops that consume it when those add
# no instructions of the compared kind (the gemm's loads are compared as LDGs, its MMAs as HMMAs).
_MEMOPS = _MEM.pattern
TRUTH = {
    "gmem_smem_roundtrip": {"load": (("load",), _MEMOPS), "store": (("store",), _MEMOPS)},
    "binary_add": {op: ((op,), _MEMOPS) for op in ("load_a", "load_b", "add", "store")},
    "warp_gemm_pair": {
        "load_a": (("load_a", "gemm"), r"^LDG"),
        "load_b": (("load_b", "gemm"), r"^LDG"),
        "gemm": (("load_a", "load_b", "gemm"), r"^HMMA"),
        "gemm_acc": (("load_a", "load_b", "gemm_acc"), r"^HMMA"),
    },
}


@pytest.mark.parametrize("name", sorted(TRUTH))
def test_each_tile_op_matches_itself_compiled_alone(K, name):
    """Ground truth: the SASS the map gives a tile op's line in the full kernel is the SASS that op
    compiles to on its own (kernels from TVM's tile-primitive tests)."""
    builder = getattr(K, name)
    m = _compile(builder()).source_map
    for op, (alone_ops, kinds) in TRUTH[name].items():
        rx = re.compile(kinds)
        alone = _compile(builder(ops=alone_ops)).source_map
        want = collections.Counter(s.opcode for s in alone.instructions if rx.match(s.opcode))
        assert want, f"{op} alone has no {kinds} instructions"
        got = collections.Counter(s.opcode for s in m.sass_records_for(_op_line(m, builder, op)) if rx.match(s.opcode))
        assert got == want, (op, dict(got), dict(want))
    assert not m.coverage()["work_lines_without_sass"] or name == "binary_add"  # its 2nd cta_sync merges


def test_async_copies_and_merged_loads_each_at_their_own_line(K):
    """Two ``copy_async`` tile copies: ptxas's line info gives both LDGSTS to the first, and a
    shared tile re-read in an unrolled loop (its loads merged into one LDS) took the other copy's
    LDS too. Each op's line has what the op compiles to alone (the op that reads its tile kept)."""
    import async_copies as AC

    m = _compile(AC.two_async_copies()).source_map
    pairs = {"async_a": "out_a", "async_b": "out_b", "out_a": "async_a", "out_b": "async_b"}
    for op, partner in pairs.items():
        alone = _compile(AC.two_async_copies(ops=(op, partner))).source_map
        line = _op_line(m, AC.two_async_copies, op)
        want = _memory(alone.sass_records_for(_op_line(alone, AC.two_async_copies, op)))
        got = _memory(m.sass_records_for(line))
        want.pop("LDS", None), got.pop("LDS", None)  # ptxas's dummy @!PT LDS RZ go with the first cp.async
        assert got == want, (op, dict(got), dict(want))


def test_the_headline_names_statement_lines_without_sass(K):
    m = _compile(K.binary_add()).source_map
    done, total = m.statement_coverage()
    cov = m.coverage()
    assert total == len(cov["work_lines"]) and done == total - len(cov["work_lines_without_sass"])
    text = m.headline()
    assert f"{done}/{total} statement lines with SASS" in text and "% with a user line" in text
    for line in cov["work_lines_without_sass"]:
        assert str(line) in text.split("no SASS for line")[-1]
    assert text in repr(m)


def _upstream_dispatch():
    from tvm.tirx.operator.tile_primitive import dispatcher

    return dispatcher, getattr(dispatcher.run_dispatch, "__txlab_wrapped__", dispatcher.run_dispatch)


def test_call_site_spans_change_no_code(K, monkeypatch):
    from txlab import build

    mod, entry = ir.as_module(K.binary_add())
    ours = build.codegen_source(build.lower(mod, "sm_90a", entry), entry)
    dispatcher, upstream = _upstream_dispatch()
    monkeypatch.setattr(dispatcher, "run_dispatch", upstream)
    theirs = build.codegen_source(build.lower(mod, "sm_90a", entry), entry)
    assert ours == theirs


def test_a_module_lowered_before_txlab_keeps_the_users_file(K, monkeypatch):
    import tvm

    mod, _ = ir.as_module(K.gmem_smem_roundtrip())
    dispatcher, upstream = _upstream_dispatch()
    with monkeypatch.context() as mp:
        mp.setattr(dispatcher, "run_dispatch", upstream)  # TVM's own lowering, no call sites
        target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
        with target:
            lowered = tvm.tirx.transform.LowerTIRx()(tvm.tirx.transform.BindTarget(target)(mod))
    assert ir.user_file_of(lowered) == str(KERNELS / "tile_ops.py")
    m = _compile(lowered).source_map
    assert m.user_file == str(KERNELS / "tile_ops.py")


def test_tile_dispatch_failure_is_at_the_users_line(K):
    with pytest.raises(txlab.CompileError) as info:
        _compile(K.reduce_sum())  # TVM's own reduction test kernel; 0.27's shared variant raises
    err = info.value
    line = _op_line_in_file(K.reduce_sum, "sum")
    assert err.stage == "lower" and err.filename == str(KERNELS / "tile_ops.py") and err.lineno == line
    assert "Tx.cta.sum" in err.source_line
    assert err.message.startswith(
        "Tx.cta.sum (tirx.tile.sum) dispatch failed: variant shared raised: "
        "Invalid use of undefined variable tid_in_scope"
    )
    assert "defect of apache-tvm 0.27" in err.hint and "Tx.cuda.cta_sum" in err.hint  # not the user's mistake
    outcomes = {v["variant"]: v["outcome"] for v in err.variants}
    assert outcomes == {"packed_add_sum": "declined", "local": "declined", "shared": "raised"}
    for v in err.variants:
        assert v["reason"] and v["variant"] in err.message
    assert "site-packages/tvm" not in str(err)


def _op_line_in_file(builder, op):
    import inspect

    lines, first = inspect.getsourcelines(builder)
    return first + next(i for i, l in enumerate(lines) if f'"{op}" in ops' in l) + 1


def test_a_dispatch_with_no_applicable_variant_names_each_reason(K):
    import tvm  # noqa: F401
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TileLayout

    @T.prim_func
    def red(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (32, 32), "float32")
        B = T.match_buffer(B_ptr, (32,), "float32")
        T.device_entry()
        _bx = T.cta_id([1])
        _tid = T.thread_id([32])
        A_smem = T.alloc_buffer((32, 32), "float32", scope="shared", layout=TileLayout(S[(32, 32)]))
        B_smem = T.alloc_buffer((32,), "float32", scope="shared", layout=TileLayout(S[(32,)]))
        Tx.cta.copy(A_smem[:, :], A[:, :])
        Tx.cluster.sum(B_smem[:], A_smem[:, :], axes=(-1,))
        Tx.cta.copy(B[:], B_smem[:])

    with pytest.raises(txlab.CompileError) as info:
        _compile(red)
    err = info.value
    assert err.lineno is not None and "Tx.cluster.sum" in err.source_line and err.filename == __file__
    assert err.message.startswith("Tx.cluster.sum (tirx.tile.sum) dispatch failed: no variant applies")
    assert {v["outcome"] for v in err.variants} == {"declined"}
    assert "unsupported exec_scope cluster for shared reduction" in err.message
