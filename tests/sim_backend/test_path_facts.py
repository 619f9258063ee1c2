"""Path facts (sim_backend/model/path-facts.h): one path sum, three roundings, each where it is used."""

import dataclasses

import numpy as np
import pytest

from ecngym.sim_backend import _fabric, topology

R = _fabric.RttRounding


def _max(topo, rounding, mtu=1000):
    return _fabric.max_base_rtt_ns(topo.num_hosts, topo.link_a, topo.link_b, topo.delay_ns, topo.rate_bps, mtu,
                                   rounding)


@pytest.mark.parametrize(("rate", "expected"), [
    # 1.25 ns per hop: 2.5 ns for two, a tie; once rounded half to even, once half away from zero,
    # per hop truncated to 1 ns
    (6.4e12, {R.RUNNING_HALF_EVEN: 4002, R.ROUNDED_ONCE: 4003, R.PER_HOP_TRUNCATED: 4002}),
    # 2666.67 ns per hop: rounded once 5333, truncated per hop 2 x 2666
    (3e9, {R.RUNNING_HALF_EVEN: 9333, R.ROUNDED_ONCE: 9333, R.PER_HOP_TRUNCATED: 9332}),
    # whole ns per hop: every rounding agrees
    (100e9, {R.RUNNING_HALF_EVEN: 4160, R.ROUNDED_ONCE: 4160, R.PER_HOP_TRUNCATED: 4160}),
])
def test_the_roundings_differ_only_where_a_hop_is_not_whole_ns(rate, expected):
    star = topology.incast_star(3, link_rate=rate, link_delay=1000)
    assert {r: _max(star, r) for r in expected} == expected


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_topology_walks_the_path_the_fabric_routes(make_fabric, h, seed):
    # every link its own rate and delay: a pair's paths of equal hops differ in RTT, and the
    # fabric reports (ROUNDED_ONCE) the one it routes
    fat = topology.fat_tree(4)
    rng = np.random.default_rng(seed)
    odd = dataclasses.replace(fat, rate_bps=np.round(fat.rate_bps * rng.uniform(0.3, 1.0, len(fat.rate_bps))),
                              delay_ns=fat.delay_ns * rng.integers(1, 7, len(fat.delay_ns)))
    pairs = [(s, d) for s in range(odd.num_hosts) for d in range(odd.num_hosts) if s != d]
    fab = make_fabric(odd, h.flows([(s, d, 1_000, 1_000) for s, d in pairs]), "dcqcn_paper")
    rtt = fab.flow_records()["base_rtt_ns"].to_numpy()
    assert rtt.max() == _max(odd, R.ROUNDED_ONCE)
    # ... pair by pair too: without the other hosts' links (hosts do not forward, so no path
    # changes) the largest is the pair's, in its worse direction
    for s, d in pairs[:: len(pairs) // 7]:
        both = max(rtt[pairs.index((s, d))], rtt[pairs.index((d, s))])
        others = [x for x in range(odd.num_hosts) if x not in (s, d)]
        keep = ~np.isin(odd.link_a, others) & ~np.isin(odd.link_b, others)
        assert both == _fabric.max_base_rtt_ns(odd.num_hosts, odd.link_a[keep], odd.link_b[keep],
                                               odd.delay_ns[keep], odd.rate_bps[keep], 1000, R.ROUNDED_ONCE)


def test_bad_links_are_refused():
    star = topology.incast_star(3)
    with pytest.raises(ValueError, match="differ in length"):
        _fabric.max_base_rtt_ns(3, star.link_a, star.link_b[:-1], star.delay_ns, star.rate_bps, 1000,
                                R.ROUNDED_ONCE)
    with pytest.raises(ValueError, match=r"links\[0\].*rate >= 1"):
        _fabric.max_base_rtt_ns(3, star.link_a, star.link_b, star.delay_ns, star.rate_bps * 0, 1000,
                                R.ROUNDED_ONCE)
