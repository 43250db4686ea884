import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _gpu_reason():
    from txlab.device import probe

    info = probe()
    return None if info.available else info.reason


def pytest_collection_modifyitems(config, items):
    reason = None
    checked = False
    for item in items:
        if "gpu" in item.keywords:
            if not checked:
                reason = _gpu_reason()
                checked = True
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"needs a CUDA GPU: {reason}"))


@pytest.fixture
def isolated():
    """GPU runs in this test go through the isolated worker (txlab.config.isolation = "process")."""
    import txlab

    before = txlab.config.isolation
    txlab.config.isolation = "process"
    yield
    txlab.config.isolation = before


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory):
    """Tests use their own compile cache unless TXLAB_CACHE_DIR is set by the caller."""
    if "TXLAB_CACHE_DIR" not in os.environ:
        os.environ["TXLAB_CACHE_DIR"] = str(tmp_path_factory.mktemp("txlab-cache"))
    yield
