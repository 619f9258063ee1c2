"""The scenario's base RTT (``max_base_rtt_ns``): one BFS per host, shared by the hosts behind one link."""

import dataclasses

import numpy as np
import pytest

from ecngym.envs.scenario import max_base_rtt_ns
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
    # host 0 has links to both switches (its own BFS); hosts 1 and 2 one each
    return Topology("multi_homed", 3, ["tor", "tor"], np.array([0, 0, 1, 2, 3]), np.array([3, 4, 3, 4, 4]),
                    np.array([100e9, 25e9, 100e9, 40e9, 100e9]), np.array([1000, 3000, 1000, 2000, 500]))


def _one_long_host_link() -> Topology:
    # a star whose host 0 hangs on a long link: a host's own round trip through its switch would win
    star = topology.incast_star(4)
    delay = star.delay_ns.copy()
    delay[star.link_a == 0] *= 10
    delay[star.link_b == 0] *= 10
    return dataclasses.replace(star, name="star_one_long_link", delay_ns=delay)


@pytest.mark.parametrize("topo", [
    topology.fat_tree(4), topology.fat_tree(8), topology.leaf_spine(), topology.incast_star(8),
    _odd(topology.fat_tree(4), 0), _odd(topology.leaf_spine(), 1), _multi_homed(), _one_long_host_link(),
], ids=lambda t: t.name)
def test_base_rtt_is_the_worst_host_pair_found_host_by_host(topo):
    assert max_base_rtt_ns(topo) == _per_host_bfs(topo)
    assert max_base_rtt_ns(topo, 4000) == _per_host_bfs(topo, 4000)


def test_an_env_built_again_on_the_same_fabric_reuses_its_base_rtt(monkeypatch):
    # every build redid the BFS (~6 s of a fat-tree k = 32 build): ecngym eval builds twice for a
    # controller with env_overrides, ecngym run once or twice per controller
    from ecngym.envs import EcnTuningEnv
    from ecngym.envs import scenario as scenario_module

    searched = []
    bfs = scenario_module._max_base_rtt_bfs
    monkeypatch.setattr(scenario_module, "_max_base_rtt_bfs", lambda topo, mtu: searched.append(mtu) or bfs(topo, mtu))
    monkeypatch.setattr(scenario_module, "_BASE_RTT_MEMO", {})
    fat = {"kind": "fat_tree", "k": 4}
    first = EcnTuningEnv(topology=fat, episode_steps=2)
    again = EcnTuningEnv(topology=fat, episode_steps=2, action={"type": "continuous"})
    assert len(searched) == 1 and again.scenario.base_rtt_ns == first.scenario.base_rtt_ns
    # another delay, another MTU: searched again, each its own value
    slower = EcnTuningEnv(topology={**fat, "link_delay": "2us"}, episode_steps=2)
    jumbo = EcnTuningEnv(topology=fat, fabric={"mtu_payload": "4000B"}, episode_steps=2)
    assert len(searched) == 3
    assert slower.scenario.base_rtt_ns == _per_host_bfs(slower.scenario.topology) != first.scenario.base_rtt_ns
    assert jumbo.scenario.base_rtt_ns == _per_host_bfs(jumbo.scenario.topology, 4000) != first.scenario.base_rtt_ns
    for env in (first, again, slower, jumbo):
        env.close()
