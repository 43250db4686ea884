"""Apache TVM's own TIRx test kernels (tests/upstream/, commit 5d4dc8721307) on the CPU emulator:
at least 95% give the right answer (their numpy reference, or -- for the upstream kernels with a
real bug -- the finding that names it), and every miss is a NotEmulatedError naming the function
and the user's line."""

import time

import pytest
from upstream import corpus


@pytest.fixture(scope="module")
def results():
    t0 = time.perf_counter()
    res = corpus.run_all(workers=2)
    return res, time.perf_counter() - t0


def test_corpus_is_large_and_every_case_names_its_upstream_test():
    cs = corpus.cases()
    assert len(cs) >= 60
    assert len({c.id for c in cs}) == len(cs)
    for c in cs:
        assert c.upstream.startswith("tests/python/tirx/") and "::test_" in c.upstream, c.id
        assert c.arch in ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a")
    # the upstream bugs are in the corpus as findings, not as passes
    assert any(c.expect.startswith("finding:") for c in cs)


def test_generated_cuda_has_the_instruction_each_reference_models():
    """A case's ``source_has`` (the packed PTX and rounding mode its reference rounds like, or the
    regex its upstream test greps for) is in the CUDA TVM generates for it."""
    import re

    from txlab.compiler import cuda_source

    cs = [c for c in corpus.cases() if c.source_has]
    assert len(cs) >= 3
    for c in cs:
        src = cuda_source(c.build(), c.arch)
        assert re.search(c.source_has, src), f"{c.id}: /{c.source_has}/ not in its generated CUDA"


@pytest.mark.slow  # the whole corpus: about a minute on two cores (two worker processes)
def test_corpus_passes_on_the_emulator(results):
    res, seconds = results
    bad = [r for r in res if not corpus.ok(r)]
    rate = 1 - len(bad) / len(res)
    summary = "\n".join(f"{r['id']}: {r['status']}: {r['detail'][:300]}" for r in bad)
    assert rate >= 0.95, f"{len(res) - len(bad)}/{len(res)} right:\n{summary}"
    for r in bad:  # a miss is a refusal by name, never a wrong answer or a crash
        assert r["status"] == "not_emulated", f"{r['id']}: {r['status']}: {r['detail']}"
        assert r["function"] and r["function"] not in (
            "tirx.call_pure_extern",
            "tirx.call_extern",
            "tirx.cuda.func_call",
        ), r
        assert r["line"] is not None, r
    # the upstream bugs are reported as their findings
    for r in res:
        if r["expect"].startswith("finding:"):
            assert r["status"] == "finding", r
    print(
        f"upstream corpus: {len(res) - len(bad)}/{len(res)} right in {seconds:.1f} s; misses: "
        + ", ".join(sorted({r["function"] for r in bad}))
    )
