"""A flow alone on an idle fabric finishes in size/rate + base RTT: the slowdown baseline is right."""

import pytest

from ecngym.sim_backend import topology


@pytest.mark.parametrize(
    "topo",
    [topology.incast_star(hosts=2), topology.leaf_spine(leaves=2, spines=2, hosts_per_leaf=2),
     topology.incast_star(hosts=2, link_rate="25Gbps", link_delay="5us")],
    ids=["star", "leaf_spine", "star_25g"],
)
@pytest.mark.parametrize("size", [1_000, 10_000, 100_000, 1_000_000, 10_000_000])
def test_single_flow_matches_ideal_fct(make_fabric, h, topo, size):
    dst = topo.num_hosts - 1
    fab = make_fabric(topo, h.flows([(0, dst, size, 1_000)]), "hpcc")
    assert fab.run("1s")
    rec = fab.flow_records().iloc[0]
    size_on_wire = size + 52 * -(-size // 1000)
    expected = rec["base_rtt_ns"] + size_on_wire * 8e9 / topo.rate_bps.min()
    assert rec["ideal_fct_ns"] == pytest.approx(expected, rel=1e-9)
    assert rec["fct_ns"] == pytest.approx(rec["ideal_fct_ns"], rel=0.05)
    assert rec["slowdown"] >= 1.0
