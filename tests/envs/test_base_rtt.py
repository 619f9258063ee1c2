"""The scenario's base RTT (``Topology.max_base_rtt_ns``): the worst host pair, found host by host."""

import dataclasses

import numpy as np
import pytest

from ecngym.sim_backend import Topology, topology


def _per_host_bfs(topo: Topology, mtu: int = 1000) -> int:
    """The definition, host by host: the first path found at the fewest hops; hosts do not forward."""
    adj: dict[int, list] = {}
    for a, b, d, r in zip(topo.link_a, topo.link_b, topo.delay_ns, topo.rate_bps, strict=True):
        adj.setdefault(int(a), []).append((int(b), int(d), float(r)))
        adj.setdefault(int(b), []).append((int(a), int(d), float(r)))
    worst = 0.0
    for src in range(topo.num_hosts):
        best, frontier = {src: 0.0}, [src]
        while frontier:
            nxt = []
            for u in frontier:
                if u == src or u >= topo.num_hosts:
                    for v, d, r in adj.get(u, []):
                        if v not in best:
                            best[v] = best[u] + 2 * d + mtu * 8e9 / r
                            nxt.append(v)
            frontier = nxt
        worst = max(worst, max(t for v, t in best.items() if v < topo.num_hosts))
    return int(round(worst))


def _odd(topo: Topology, seed: int) -> Topology:
    # every link its own rate and delay: no two hosts share a link cost
    rng = np.random.default_rng(seed)
    return dataclasses.replace(topo, rate_bps=topo.rate_bps * rng.uniform(0.3, 1.0, len(topo.rate_bps)),
                               delay_ns=topo.delay_ns * rng.integers(1, 7, len(topo.delay_ns)))


def _multi_homed() -> Topology:
    # host 0 has links to both switches (its own search); hosts 1 and 2 one each
    return Topology("multi_homed", 3, ["tor", "tor"], np.array([0, 0, 1, 2, 3]), np.array([3, 4, 3, 4, 4]),
                    np.array([100e9, 25e9, 100e9, 40e9, 100e9]), np.array([1000, 3000, 1000, 2000, 500]))


def _one_long_host_link() -> Topology:
    # a star whose host 0 hangs on a long link: a host's own round trip through its switch would win
    star = topology.incast_star(4)
    delay = star.delay_ns.copy()
    delay[star.link_a == 0] *= 10
    delay[star.link_b == 0] *= 10
    return dataclasses.replace(star, name="star_one_long_link", delay_ns=delay)


def _tie_star() -> Topology:
    # 6.4 Tbit/s: 1.25 ns of serialisation per hop, a host pair's 2.5 ns a tie that rounds to even
    return topology.incast_star(3, link_rate=6.4e12, link_delay=1000)


@pytest.mark.parametrize("topo", [
    topology.fat_tree(4), topology.fat_tree(8), topology.leaf_spine(), topology.incast_star(8),
    _odd(topology.fat_tree(4), 0), _odd(topology.leaf_spine(), 1), _multi_homed(), _one_long_host_link(),
    _tie_star(),
], ids=lambda t: t.name)
def test_base_rtt_is_the_worst_host_pair_found_host_by_host(topo):
    assert topo.max_base_rtt_ns() == _per_host_bfs(topo)
    assert topo.max_base_rtt_ns(4000) == _per_host_bfs(topo, 4000)
    assert topo.max_base_rtt_ns(1457) == _per_host_bfs(topo, 1457)


def test_a_topology_without_a_host_pair_has_no_base_rtt():
    alone = Topology("alone", 1, ["tor"], np.array([0]), np.array([1]), np.array([100e9]), np.array([1000]))
    assert alone.max_base_rtt_ns() == 0


def test_an_env_reads_its_base_rtt_from_its_topology_and_mtu():
    from ecngym.envs import EcnTuningEnv

    fat = {"kind": "fat_tree", "k": 4}
    envs = [EcnTuningEnv(topology=fat, episode_steps=2),
            EcnTuningEnv(topology={**fat, "link_delay": "2us"}, episode_steps=2),
            EcnTuningEnv(topology=fat, fabric={"mtu_payload": "4000B"}, episode_steps=2)]
    first, slower, jumbo = (env.scenario for env in envs)
    assert first.base_rtt_ns == _per_host_bfs(first.topology) == 12480
    assert slower.base_rtt_ns == _per_host_bfs(slower.topology) != first.base_rtt_ns
    assert jumbo.base_rtt_ns == _per_host_bfs(jumbo.topology, 4000) != first.base_rtt_ns
    # the env's interval in RTTs and its step mapping's BDP follow it
    assert EcnTuningEnv(topology=fat, interval="5rtt", episode_steps=2).scenario.interval_ns == 5 * 12480
    for env in envs:
        env.close()
