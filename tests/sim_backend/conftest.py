"""Fixtures for fabric tests: small flow tables and fabrics that are always closed."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ecngym.sim_backend import Fabric

#: Wire overhead of one data packet and payload per packet in every preset (RoCEv2 headers, 1000 B MTU).
HEADER_BYTES = 52
MTU_PAYLOAD = 1000


def _flows(rows: list[tuple[int, int, int, int]]) -> pd.DataFrame:
    """(src, dst, size_bytes, start_ns) rows -> a flow DataFrame."""
    return pd.DataFrame(rows, columns=["src", "dst", "size_bytes", "start_ns"])


def _port_towards(fab: Fabric, node: int, at: int | None = None) -> int:
    """Id of the switch port whose link leads to ``node`` (on switch node ``at`` if given)."""
    mask = fab.ports.is_switch & (fab.ports.peer_node == node)
    if at is not None:
        mask &= fab.ports.node == at
    ids = np.flatnonzero(mask)
    assert len(ids) == 1
    return int(ids[0])


def _host_port(fab: Fabric, host: int) -> int:
    """Id of a host's NIC port."""
    ids = np.flatnonzero(~fab.ports.is_switch & (fab.ports.node == host))
    assert len(ids) == 1
    return int(ids[0])


def _wire_bytes(size_bytes: Any) -> np.ndarray:
    """Bytes a flow of this size puts on the wire once (payload + one header per packet)."""
    size = np.asarray(size_bytes, dtype=np.int64)
    return size + HEADER_BYTES * -(-size // MTU_PAYLOAD)


_SUMMED = ("tx_bytes", "tx_data_bytes", "tx_data_packets", "tx_control_packets", "enqueued_data_packets",
           "ecn_marked_packets", "pfc_pause_sent", "pfc_pause_received", "paused_ns", "drops")


def _run_summing_telemetry(fab: Fabric, step: Any = "20us", limit_ns: int = 100_000_000,
                           drain_steps: int = 10) -> tuple[dict[str, np.ndarray], list[dict[str, Any]]]:
    """Run until every flow finished (then ``drain_steps`` more steps), reading telemetry each step.

    Returns:
        The per-port sums of the counter fields over the whole run, and every interval's telemetry.
    """
    intervals: list[dict[str, Any]] = []
    drained = 0
    while drained < drain_steps:
        fab.advance(step)
        intervals.append(fab.read_telemetry())
        if fab.counters()["flows_completed"] == len(fab.flows):
            drained += 1
        assert fab.now_ns <= limit_ns, "flows did not finish in time"
    sums = {k: np.sum([t[k] for t in intervals], axis=0) for k in _SUMMED}
    return sums, intervals


@pytest.fixture
def h() -> SimpleNamespace:
    """Small helpers shared by the fabric tests."""
    return SimpleNamespace(flows=_flows, port_towards=_port_towards, host_port=_host_port,
                           wire_bytes=_wire_bytes, run_summing_telemetry=_run_summing_telemetry)


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
