"""Shared set-up of the Mininet backend tests (root and Debian's mininet needed)."""
import os

import pytest


def _mininet_available() -> bool:
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        return False
    return True


def pytest_collection_modifyitems(config, items):
    if os.geteuid() == 0 and _mininet_available():
        return
    skip = pytest.mark.skip(reason="the mininet backend needs root and Debian's mininet")
    for item in items:
        if "mininet" in item.keywords:
            item.add_marker(skip)
