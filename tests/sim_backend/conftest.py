"""Fixtures for fabric tests: small flow tables and fabrics that are always closed."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ecngym.sim_backend import Fabric


def _flows(rows: list[tuple[int, int, int, int]]) -> pd.DataFrame:
    """(src, dst, size_bytes, start_ns) rows -> a flow DataFrame."""
    return pd.DataFrame(rows, columns=["src", "dst", "size_bytes", "start_ns"])


def _port_towards(fab: Fabric, node: int) -> int:
    """Id of the switch port whose link leads to ``node`` (e.g. a receiver host)."""
    ids = np.flatnonzero(fab.ports.is_switch & (fab.ports.peer_node == node))
    assert len(ids) == 1
    return int(ids[0])


def _host_port(fab: Fabric, host: int) -> int:
    """Id of a host's NIC port."""
    ids = np.flatnonzero(~fab.ports.is_switch & (fab.ports.node == host))
    assert len(ids) == 1
    return int(ids[0])


@pytest.fixture
def h() -> SimpleNamespace:
    """Small helpers shared by the fabric tests."""
    return SimpleNamespace(flows=_flows, port_towards=_port_towards, host_port=_host_port)


@pytest.fixture
def make_fabric():
    """Factory: build fabrics that are closed at teardown (ns-3 allows one per process)."""
    opened: list[Fabric] = []

    def factory(*args: Any, **kwargs: Any) -> Fabric:
        for old in opened:
            old.close()
        fab = Fabric(*args, **kwargs)
        opened.append(fab)
        return fab

    yield factory
    for fab in opened:
        fab.close()
