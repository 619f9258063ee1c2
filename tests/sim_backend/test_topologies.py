"""Topologies build, route every pair, and spread flows over equal-cost paths."""

import numpy as np
import pandas as pd
import pytest

from ecngym.sim_backend import topology
from ecngym.sim_backend.data import hpcc_reference_path


def _all_to_all(hosts, size=20_000):
    rows = [(s, d, size, 0) for s in range(hosts) for d in range(hosts) if s != d]
    return pd.DataFrame(rows, columns=["src", "dst", "size_bytes", "start_ns"])


@pytest.mark.parametrize(
    "topo,hosts,switches",
    [(topology.fat_tree(4), 16, 20), (topology.leaf_spine(3, 2, 3), 9, 5),
     (topology.dumbbell(3, 2), 5, 2), (topology.incast_star(6), 6, 1)],
)
def test_all_to_all_completes(make_fabric, topo, hosts, switches):
    assert topo.num_hosts == hosts and topo.num_switches == switches
    fab = make_fabric(topo, _all_to_all(hosts), "hpcc")
    assert fab.run("50ms")
    rec = fab.flow_records()
    assert (rec["delivered_bytes"] == rec["size_bytes"]).all()


def test_ecmp_spreads_over_spines(make_fabric):
    topo = topology.leaf_spine(leaves=2, spines=4, hosts_per_leaf=8)
    flows = pd.DataFrame({"src": np.arange(8), "dst": np.arange(8) + 8, "size_bytes": 500_000, "start_ns": 0})
    fab = make_fabric(topo, flows, "hpcc")
    assert fab.run("10ms")
    tel = fab.read_telemetry()
    spine_ports = fab.ports.switch_ports("spine")
    used_spines = {int(fab.ports.node[p]) for p in spine_ports if tel["tx_data_bytes"][p] > 0}
    assert len(used_spines) >= 2


def test_hpcc_topology_files():
    star = topology.from_hpcc_file(hpcc_reference_path("topo_16h_1sw_100g.txt"))
    assert (star.num_hosts, star.num_switches, len(star.link_a)) == (16, 1, 16)
    assert (star.delay_ns == 1000).all() and (star.rate_bps == 100e9).all()
    ls = topology.from_hpcc_file(hpcc_reference_path("topo_16h_4leaf_4spine_100g.txt"))
    assert (ls.num_hosts, ls.num_switches, len(ls.link_a)) == (16, 8, 32)
    assert sorted(set(ls.switch_layers)) == ["spine", "tor"]


def test_distinct_flows_counts_flows_through_a_port(make_fabric):
    flows = pd.DataFrame({"src": [0, 1, 2], "dst": [3, 3, 3], "size_bytes": 10**7, "start_ns": 0})
    fab = make_fabric(topology.incast_star(hosts=5), flows, "hpcc")
    fab.advance("30us")
    tel = fab.read_telemetry()
    to_receiver = int(np.flatnonzero(fab.ports.is_switch & (fab.ports.peer_node == 3))[0])
    assert tel["distinct_flows"][to_receiver] == 3
    assert tel["utilization"][to_receiver] == pytest.approx(1.0, abs=0.1)
