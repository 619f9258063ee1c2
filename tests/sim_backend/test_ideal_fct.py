"""A flow alone on an idle fabric finishes in size/rate + base RTT: the slowdown baseline is right."""

import numpy as np
import pandas as pd
import pytest

from ecngym.sim_backend import SIZE_BUCKETS, slowdown_table, topology

TOPOLOGIES = {
    "star": topology.incast_star(hosts=2),
    "leaf_spine": topology.leaf_spine(leaves=2, spines=2, hosts_per_leaf=2),
    "star_25g": topology.incast_star(hosts=2, link_rate="25Gbps", link_delay="5us"),
    "fat_tree": topology.fat_tree(4),
}
HOPS = {"star": 2, "leaf_spine": 4, "star_25g": 2, "fat_tree": 6}  # links from host 0 to the last host


def _expected_ideal(topo, size, base_rtt_ns):
    size_on_wire = size + 52 * -(-size // 1000)
    return base_rtt_ns + size_on_wire * 8e9 / topo.rate_bps.min()


@pytest.mark.parametrize("name", list(TOPOLOGIES))
@pytest.mark.parametrize("size", [1_000, 10_000, 100_000, 1_000_000, 10_000_000])
def test_single_flow_matches_ideal_fct(make_fabric, h, name, size):
    topo = TOPOLOGIES[name]
    dst = topo.num_hosts - 1
    fab = make_fabric(topo, h.flows([(0, dst, size, 1_000)]), "hpcc")
    assert fab.run("1s")
    rec = fab.flow_records().iloc[0]
    # base RTT (HPCC's definition): 2 x propagation + one MTU payload serialised per hop
    rate = topo.rate_bps.min()
    assert rec["base_rtt_ns"] == 2 * HOPS[name] * topo.delay_ns.max() + round(HOPS[name] * 8000e9 / rate)
    assert rec["ideal_fct_ns"] == pytest.approx(_expected_ideal(topo, size, rec["base_rtt_ns"]), rel=1e-9)
    assert rec["fct_ns"] == pytest.approx(rec["ideal_fct_ns"], rel=0.05)
    assert rec["finish_ns"] == rec["start_ns"] + rec["fct_ns"]
    assert rec["slowdown"] >= 1.0


@pytest.mark.parametrize("preset", ["dcqcn_paper", "dctcp"])
def test_single_flow_ideal_fct_does_not_depend_on_the_congestion_control(make_fabric, h, preset):
    sizes = [10_000, 1_000_000, 10_000_000]
    flows = h.flows([(0, 1, s, i * 2_000_000) for i, s in enumerate(sizes)])  # one at a time
    fab = make_fabric(topology.leaf_spine(leaves=2, spines=2, hosts_per_leaf=1), flows, preset)
    assert fab.run("1s")
    rec = fab.flow_records()
    np.testing.assert_allclose(rec["fct_ns"], rec["ideal_fct_ns"], rtol=0.05)


def test_slowdown_table_buckets_finished_flows():
    records = pd.DataFrame({
        "size_bytes": [1_000, 50_000, 200_000, 5_000_000, 7_000_000],
        "slowdown": [1.0, 3.0, 2.0, 4.0, np.nan],
        "finished": [True, True, True, True, False],
    })
    table = slowdown_table(records)
    assert list(table.index) == [*SIZE_BUCKETS, "all"]
    assert table.loc["<100KB", "flows"] == 2 and table.loc["<100KB", "median"] == 2.0
    assert table.loc["100KB-1MB", "flows"] == 1 and table.loc[">1MB", "flows"] == 1
    assert table.loc["all", "flows"] == 4 and table.loc["all", "mean"] == 2.5
