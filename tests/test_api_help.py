"""txlab.api.help(name) and %tirx_help: a name's signature (from the real TVM object), the arch it
needs, the catalogue example's lines that call it and the PTX/SASS those lower to -- no GPU."""

import inspect

import pytest

import txlab.api as api


def test_shfl_xor_sync_signature_call_and_lowering():
    h = api.help("__shfl_xor_sync")
    assert h.name == "Tx.cuda.__shfl_xor_sync"
    assert h.call == "Tx.cuda.__shfl_xor_sync(mask, var, lane_mask, width)"
    from tvm.script import tirx as Tx

    assert h.signature == str(inspect.signature(Tx.cuda.__shfl_xor_sync))  # the real object's
    assert h.arch == "sm_80" and h.example_id == "warp_vote"
    assert [u.source for u in h.usage] == ['Out[7, tx] = T.Cast("uint32", T.cuda.__shfl_xor_sync(full, X[tx], 1, 32))']
    assert any(p.startswith("shfl.sync.bfly.b32") for p in h.ptx), h.ptx
    assert any(s.startswith("SHFL.BFLY") for s in h.sass), h.sass
    assert any("__shfl_xor_sync(" in t for _n, t in h.cuda_lines)
    text = str(h)
    assert "Tx.cuda.__shfl_xor_sync(mask, var, lane_mask, width)" in text and "SHFL.BFLY" in text


def test_atomic_add_is_learnable_with_its_address_argument():
    h = api.help("T.cuda.atomic_add")  # the T. spelling is the same module
    assert h.name == "Tx.cuda.atomic_add" and h.signature == "(res_addr, value)"
    assert any("atomic_add(T.address_of(" in u.source for u in h.usage), h.usage
    assert any(p.startswith("atom.global.add") for p in h.ptx), h.ptx
    assert any("RED.E.ADD" in s or "ATOMG" in s for s in h.sass), h.sass
    assert "tile_schedulers" in h.other_examples
    d = h.to_dict()
    assert d["call"] == "Tx.cuda.atomic_add(res_addr, value)" and d["usage"][0]["ptx"]


def test_lang_class_signature_comes_from_under_tvms_meta_class_wrapper():
    import tvm.backend.cuda.lang as lang

    assert str(inspect.signature(lang.MBarrier)) == "(*args, **kwargs)"  # what TVM's wrapper shows
    h = api.help("MBarrier", compile=False)
    assert h.name == "tvm.backend.cuda.lang.MBarrier"
    assert h.signature == "(pool, depth, phase_offset=0, leader=None)"
    assert "meta_class" in h.signature_how
    e = api.entry("tvm.backend.cuda.lang.SMEMPool")
    assert "0x" not in e.signature and e.plain_signature == "(ptr=<unset>)"
    assert api.entry("Tx.nvshmem.putmem_nbi").signature == "(dst, src, nelems, pe)"


def test_no_catalogued_name_is_left_with_a_hidden_signature():
    hidden = [e.name for e in api.catalogue() if e.signature in ("(...)", "(*args, **kwargs)")]
    assert not hidden, hidden


def test_names_outside_the_catalogue_resolve_on_the_real_module():
    h = api.help("Tx.address_of", compile=False)
    assert h.signature.startswith("(obj") and h.example_id is not None
    assert any("T.address_of(" in u.source for u in h.usage)
    p = api.help("Tx.ptx.mbarrier.init.shared.b64", compile=False)
    assert p.kind == "PTX instruction" and "addr" in p.signature and "count" in p.signature
    assert p.example_id == "mbarrier_handoff" and p.usage


def test_tile_primitives_resolve_however_a_kernel_spells_them():
    """The tile primitives (``tile.copy_async``, ``tile.cta.copy``; ``Tx.cta.copy`` where a file
    imports the tile module as Tx) were "not a name of the TIRx API; did you mean cta_sync?"."""
    for name in ("copy_async", "tile.copy_async", "tile.cta.copy", "Tx.cta.copy", "tile.warp.gemm"):
        h = api.help(name, compile=False)
        assert h.name.startswith("tile.") and h.category == "tile primitives (tvm.script.tirx.tile)", name
        assert "dst" in h.signature or "A" in h.signature, (name, h.signature)
        assert "scope" in h.signature, name
    with pytest.raises(api.UnknownAPIName, match="tile.<primitive>"):
        api.help("tile.cta.copy_asink")


def test_unknown_and_ambiguous_names_are_typed_errors_naming_the_fix():
    from txlab.errors import TxlabError

    with pytest.raises(api.UnknownAPIName) as err:
        api.help("Tx.cuda.shfl_xor_sync")
    assert isinstance(err.value, TxlabError) and "__shfl_xor_sync" in str(err.value)
    with pytest.raises(api.UnknownAPIName) as err:
        api.help("wait_until")
    assert "Tx.cuda.wait_until" in str(err.value) and "Tx.nvshmem.wait_until" in str(err.value)


def test_html_is_registered_with_the_display_formatters():
    from txlab.display import html_of

    import html
    import re

    out = html_of(api.help("ballot_sync"))
    text = html.unescape(re.sub(r"<[^>]+>", "", out))  # Pygments splits tokens into spans
    assert "Tx.cuda.ballot_sync(mask, pred)" in text and "vote.sync.ballot" in text
    assert "<details>" in out and "sm_80" in text


def test_tirx_help_line_magic():
    IPython = pytest.importorskip("IPython")  # noqa: N806, F841
    from IPython.testing import globalipapp

    shell = globalipapp.start_ipython() or globalipapp.get_ipython()
    shell.run_line_magic("load_ext", "txlab")
    h = shell.run_line_magic("tirx_help", "atomic_cas --no-compile")
    assert isinstance(h, api.ApiHelp) and h.call == "Tx.cuda.atomic_cas(ptr, old_val, new_val)"
    from txlab.magic import MagicArgumentError

    with pytest.raises(MagicArgumentError):
        shell.run_line_magic("tirx_help", "")
