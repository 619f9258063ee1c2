"""The hpcc preset behaves as the HPCC RDMA model does: its reference runs, to the nanosecond.

Before DCQCN reacts to the first ECN mark (after that, ECN's random draws differ from the
reference's), the replay of the reference flows must reproduce every FCT exactly; that pins the
wire sizes, ns-3.36's whole-ns serialisation times, the NIC's queue-pair scheduling, ACKs queued
behind data at switches and, in the leaf-spine, the HPCC ECMP hash.
"""

import numpy as np
import pytest

from ecngym.sim_backend import FabricConfig
from ecngym.sim_backend.hpcc_reference import scenario


def _replay_until(make_fabric, name, until):
    sc = scenario(name)
    fab = make_fabric(sc.topology(), sc.flows(), "hpcc")
    fab.run_until(until)
    ours = fab.flow_records()
    ref = sc.reference_fct()
    key = ["src", "dst", "size_bytes", "start_ns"]
    merged = ref.merge(ours[[*key, "fct_ns"]], on=key, suffixes=("_ref", ""))
    return merged[merged["start_ns"] + merged["fct_ns_ref"] < until]


def test_scenario_a_flows_before_the_first_dcqcn_cut_match_the_reference_exactly(make_fabric):
    done = _replay_until(make_fabric, "A", 620_000)
    assert len(done) >= 20
    np.testing.assert_array_equal(done["fct_ns"], done["fct_ns_ref"])


def test_scenario_c_flows_before_the_first_dcqcn_cut_match_the_reference_exactly(make_fabric):
    done = _replay_until(make_fabric, "C", 378_000)
    assert len(done) >= 13
    np.testing.assert_array_equal(done["fct_ns"], done["fct_ns_ref"])


def test_acks_wait_behind_data_at_switches_in_the_flow_queue_mode(make_fabric, h):
    # hosts 0 and 2 fill the switch queue towards host 1; host 1's one-packet flow to host 0 is
    # acknowledged through that queue
    flows = h.flows([(0, 1, 5_000_000, 0), (2, 1, 5_000_000, 0), (1, 0, 1000, 40_000)])
    fct = {}
    for mode in ("control", "flow"):
        fab = make_fabric(h_topology(), flows, FabricConfig.preset("hpcc", switch_ack_queue=mode))
        fab.run("10ms")
        fct[mode] = fab.flow_records()["fct_ns"][2]
    assert fct["control"] < 5_000  # 2 x 2 us propagation plus serialisation
    assert fct["flow"] > fct["control"] + 30_000  # ~40 us of 100 Gbps excess queued ahead of the ACK


def h_topology():
    from ecngym.sim_backend import topology

    return topology.incast_star(hosts=3)


def _murmur3_12(words, seed):
    """MurmurHash3 x86_32 of three little-endian 32-bit words (an independent reimplementation)."""
    h = seed
    for k in words:
        k = (k * 0xCC9E2D51) & 0xFFFFFFFF
        k = ((k << 15) | (k >> 17)) & 0xFFFFFFFF
        k = (k * 0x1B873593) & 0xFFFFFFFF
        h ^= k
        h = ((h << 13) | (h >> 19)) & 0xFFFFFFFF
        h = (h * 5 + 0xE6546B64) & 0xFFFFFFFF
    h ^= 12
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


@pytest.mark.parametrize("dport", [100, 200])  # 200: the HPCC traffic generator's incast flows
def test_hpcc_ecmp_hash_picks_the_reference_models_spine(make_fabric, h, dport):
    # reference topology C: hosts 0-15, leaves 16-19 (four hosts each), spines 20-23
    sc = scenario("C")
    pairs = [(0, 5), (0, 5), (1, 9), (6, 12), (15, 3), (15, 3), (15, 3), (11, 2)]
    flows = h.flows([(s, d, 20_000, i * 100_000) for i, (s, d) in enumerate(pairs)]).assign(dport=dport)
    fab = make_fabric(sc.topology(), flows, FabricConfig.preset("hpcc", seed=7))
    ip = lambda node: 0x0B000001 + (node // 256) * 0x10000 + (node % 256) * 0x100  # noqa: E731
    seen: dict[tuple[int, int], int] = {}
    for i, (s, d) in enumerate(pairs):
        sport = 10000 + seen.get((s, d), 0)
        seen[(s, d)] = sport - 10000 + 1
        leaf = 16 + s // 4
        spine = 20 + _murmur3_12([ip(s), ip(d), sport | (dport << 16)], leaf) % 4
        fab.run_until((i + 1) * 100_000)
        tel = fab.read_telemetry()
        up = np.flatnonzero((fab.ports.node == leaf) & (fab.ports.peer_node >= 20) & (tel["tx_data_bytes"] > 0))
        assert fab.ports.peer_node[up].tolist() == [spine], (i, s, d)


def test_hpcc_ecmp_hash_does_not_depend_on_the_seed(make_fabric, h):
    sc = scenario("C")
    flows = h.flows([(s, (s + 5) % 16, 30_000, s * 1_000) for s in range(16)])
    tx = []
    for seed in (1, 2):
        fab = make_fabric(sc.topology(), flows, FabricConfig.preset("hpcc", seed=seed))
        fab.run("10ms")
        tx.append(fab.read_telemetry()["tx_data_bytes"])
    np.testing.assert_array_equal(tx[0], tx[1])


def _interleaved_files(tmp_path):
    """Two leaves of two hosts and four spines, numbered as a file may number them.

    Each leaf before its hosts (leaf 0: hosts 1, 2; leaf 3: hosts 4, 5), spines 6-9, the switch
    line out of order.
    """
    links = [(1, 0), (2, 0), (4, 3), (5, 3)] + [(leaf, s) for leaf in (0, 3) for s in (6, 7, 8, 9)]
    (tmp_path / "topo.txt").write_text("10 6 12\n9 3 0 7 6 8\n"
                                       + "".join(f"{a} {b} 100Gbps 1us 0\n" for a, b in links))
    pairs = [(1, 4, 100), (1, 4, 100), (2, 5, 200), (4, 1, 100), (5, 2, 200), (2, 4, 200), (5, 1, 100)]
    (tmp_path / "flows.txt").write_text(f"{len(pairs)}\n" + "".join(
        f"{s} {d} 3 {port} 20000 2.{i * 100_000:09d}\n" for i, (s, d, port) in enumerate(pairs)))
    return pairs


def test_a_file_numbering_switches_between_hosts_keeps_its_node_ids_in_hash_and_fct_file(make_fabric, tmp_path):
    from ecngym.sim_backend.hpcc_config import read_hpcc_fct, write_hpcc_fct
    from ecngym.sim_backend.hpcc_flow_file import read_hpcc_flow_file
    from ecngym.sim_backend.topology import from_hpcc_file

    pairs = _interleaved_files(tmp_path)
    topo = from_hpcc_file(tmp_path / "topo.txt")
    ids = topo.node_ids()
    assert ids.tolist() == [1, 2, 4, 5, 9, 3, 0, 7, 6, 8]  # ours: hosts first, then the switch line
    flows = read_hpcc_flow_file(tmp_path / "flows.txt", topo)
    assert flows[["src", "dst"]].values.tolist() == [[0, 2], [0, 2], [1, 3], [2, 0], [3, 1], [1, 2], [3, 0]]
    fab = make_fabric(topo, flows, FabricConfig.preset("hpcc", seed=3))
    ip = lambda node: 0x0B000001 + (node // 256) * 0x10000 + (node % 256) * 0x100  # noqa: E731
    seen: dict[tuple[int, int], int] = {}
    for i, (s, d, dport) in enumerate(pairs):
        sport = 10000 + seen.get((s, d), 0)
        seen[(s, d)] = sport - 10000 + 1
        leaf = 0 if s in (1, 2) else 3
        # the reference: its node ids in the hash, the switch's id as the seed, spines in id order
        spine = 6 + _murmur3_12([ip(s), ip(d), sport | (dport << 16)], leaf) % 4
        fab.run_until(2_000_000_000 + (i + 1) * 100_000)
        tel = fab.read_telemetry()
        up = np.flatnonzero((ids[fab.ports.node] == leaf) & (ids[fab.ports.peer_node] >= 6)
                            & (tel["tx_data_bytes"] > 0))
        assert ids[fab.ports.peer_node[up]].tolist() == [spine], (i, s, d)
    fct = read_hpcc_fct(write_hpcc_fct(fab.flow_records(), fab.flows, tmp_path / "fct.txt", topo))
    assert sorted(zip(fct["src"], fct["dst"], fct["dport"], strict=True)) == sorted(pairs)


def test_a_flow_file_naming_a_switch_is_refused(tmp_path):
    from ecngym.error import ConfigError
    from ecngym.sim_backend.hpcc_flow_file import read_hpcc_flow_file
    from ecngym.sim_backend.topology import from_hpcc_file

    _interleaved_files(tmp_path)
    (tmp_path / "bad.txt").write_text("2\n1 4 3 100 1000 2.0\n3 1 3 100 1000 2.0\n")
    with pytest.raises(ConfigError, match=r"src.*row 1: node 3 is not a host.*hosts: 1-2, 4-5"):
        read_hpcc_flow_file(tmp_path / "bad.txt", from_hpcc_file(tmp_path / "topo.txt"))
