"""The HPCC RDMA model's reference runs (scenarios A and C), shipped with the package.

The HPCC group's RDMA model on ns-3 (ns-3.36.1 port, release build, single-threaded, a 2-core x86
machine like ours) replayed one WebSearch trace (605 flows, 50 % target load, 10 ms from t = 2 s)
on two 100 Gbps topologies. We replay the same flows with the ``hpcc`` fabric preset, which mirrors
its settings, and compare FCT slowdown and speed. See ``data/hpcc_reference/PROVENANCE.txt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ecngym.error import ConfigError
from ecngym.sim_backend.data import hpcc_reference_path
from ecngym.sim_backend.hpcc_flow_file import parse_hpcc_flow_arrays, read_hpcc_flow_file
from ecngym.sim_backend.topology import Topology, from_hpcc_file

if TYPE_CHECKING:  # pragma: no cover - annotations only: flow_arrays() needs no pandas
    import pandas as pd


@dataclass(frozen=True)
class ReferenceScenario:
    """One reference scenario: its inputs and the reference simulator's measurements."""

    name: str
    description: str
    topology_file: str
    fct_file: str
    #: from the reference README (median of 4 repeats)
    data_packet_hops: int
    events: float
    simulated_span_s: float
    wall_s: float
    peak_rss_mb: float

    def topology(self) -> Topology:
        """The scenario's topology."""
        return from_hpcc_file(hpcc_reference_path(self.topology_file))

    def flows(self) -> pd.DataFrame:
        """The scenario's flows, start times shifted so that the trace starts at t = 0.

        The reference starts them at t = 2.000 s (after its warm-up); nothing happens before,
        so shifting changes no result and saves replaying 2 s of idle simulated time.
        """
        flows = read_hpcc_flow_file(hpcc_reference_path(FLOW_FILE), self.topology())
        flows["start_ns"] -= START_OFFSET_NS
        return flows

    def flow_arrays(self) -> dict[str, np.ndarray]:
        """:meth:`flows` as int64 arrays by column (a :class:`~ecngym.sim_backend.Fabric` takes them; no pandas)."""
        flows = parse_hpcc_flow_arrays(hpcc_reference_path(FLOW_FILE), self.topology())
        flows["start_ns"] -= START_OFFSET_NS
        return flows

    def reference_fct(self) -> pd.DataFrame:
        """The reference FCT records, with ``slowdown = max(1, fct / standalone_fct)``."""
        from ecngym.sim_backend.hpcc_config import read_hpcc_fct

        df = read_hpcc_fct(hpcc_reference_path(f"outputs/{self.fct_file}"))
        df["start_ns"] -= START_OFFSET_NS
        return df

    @property
    def data_packet_hops_per_s(self) -> float:
        """The reference simulator's speed on this scenario."""
        return self.data_packet_hops / self.wall_s


START_OFFSET_NS = 2_000_000_000
#: The reference runs' flows (shipped; HPCC flow file format)
FLOW_FILE = "flow_ws50_16h_100g_10ms.txt"

SCENARIOS: dict[str, ReferenceScenario] = {
    "A": ReferenceScenario(
        name="A", description="16 hosts on one switch, 100 Gbps, 1 us links",
        topology_file="topo_16h_1sw_100g.txt", fct_file="A_1sw_100g_fct.txt",
        data_packet_hops=1_753_650, events=8.26e6, simulated_span_s=12.56e-3, wall_s=4.66,
        peak_rss_mb=52.0,
    ),
    "C": ReferenceScenario(
        name="C", description="leaf-spine 4 leaves x 4 hosts, 4 spines, 100 Gbps, 1 us links",
        topology_file="topo_16h_4leaf_4spine_100g.txt", fct_file="C_ls_100g_fct.txt",
        data_packet_hops=3_152_812, events=14.1e6, simulated_span_s=13.45e-3, wall_s=7.58,
        peak_rss_mb=283.0,
    ),
}


def scenario(name: str) -> ReferenceScenario:
    """Return reference scenario ``"A"`` or ``"C"``.

    Raises:
        ConfigError: On an unknown name.
    """
    try:
        return SCENARIOS[name.upper()]
    except KeyError:
        raise ConfigError("scenario", f"got {name!r}, allowed: {sorted(SCENARIOS)}") from None
