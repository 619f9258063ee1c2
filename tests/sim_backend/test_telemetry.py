"""Per-port telemetry means what it says: utilisation, queues, pauses, marks and flow counts."""

import numpy as np
import pandas as pd
import pytest

from ecngym.sim_backend import FabricConfig, topology

KEYS = {"interval_start_ns", "interval_end_ns", "tx_bytes", "tx_data_bytes", "tx_data_packets",
        "tx_control_packets", "enqueued_data_packets", "mean_queue_bytes", "max_queue_bytes", "queue_bytes",
        "ecn_marked_packets", "pfc_pause_sent", "pfc_pause_received", "paused_ns", "drops", "distinct_flows",
        "utilization"}


def test_saturated_port_utilization_is_one(make_fabric, h):
    fab = make_fabric(topology.incast_star(hosts=3), h.flows([(0, 2, 10**8, 0)]), "hpcc")
    fab.advance("50us")
    fab.read_telemetry()
    for _ in range(5):
        fab.advance("100us")
        tel = fab.read_telemetry()
        for port in (h.host_port(fab, 0), h.port_towards(fab, 2)):
            assert 0.9 <= tel["utilization"][port] <= 1.01
        assert tel["utilization"][h.host_port(fab, 1)] == 0.0  # an idle host
        # the ACK direction: 60 B per 1052 B data packet
        assert tel["utilization"][h.host_port(fab, 2)] == pytest.approx(60 / 1052, rel=0.05)


def test_a_single_line_rate_flow_builds_no_queue(make_fabric, h):
    # Equal link rates: each packet leaves the switch as it arrives (up to ns rounding of the
    # serialisation time), so the time-averaged queue is a small fraction of one packet.
    fab = make_fabric(topology.incast_star(hosts=3), h.flows([(0, 2, 10**8, 0)]), "hpcc")
    fab.advance("50us")
    fab.read_telemetry()
    fab.advance("100us")
    tel = fab.read_telemetry()
    b = h.port_towards(fab, 2)
    assert tel["mean_queue_bytes"][b] < 100
    assert tel["max_queue_bytes"][b] <= 1052


def test_telemetry_intervals_are_consistent(make_fabric, h):
    rng = np.random.default_rng(2)
    n = 120
    src = rng.integers(0, 16, n)
    flows = pd.DataFrame({"src": src, "dst": (src + rng.integers(1, 16, n)) % 16,
                          "size_bytes": rng.integers(1_000, 1_000_000, n),
                          "start_ns": np.sort(rng.integers(0, 500_000, n))})
    # exact line rate: the hpcc preset truncates serialisation times to whole ns as ns-3.36 does,
    # so there a 60 B ACK takes 4 ns (20% above line rate) and utilization may exceed 1
    cfg = FabricConfig.preset("hpcc", buffer={"buffer": "2MB"}, tx_time_rounding="carry",
                              aqm={"all": {"kmin_bytes": "20KB", "kmax_bytes": "200KB"}})
    fab = make_fabric(topology.leaf_spine(leaves=4, spines=2, hosts_per_leaf=4), flows, cfg)
    prev_end, prev_queue = 0, np.zeros(len(fab.ports))
    seen = {"marks": 0, "pauses": 0, "queue": 0}
    for _ in range(40):
        fab.advance("25us")
        tel = fab.read_telemetry()
        assert set(tel) == KEYS
        span = tel["interval_end_ns"] - tel["interval_start_ns"]
        assert tel["interval_start_ns"] == prev_end and span == 25_000
        for key in KEYS - {"interval_start_ns", "interval_end_ns"}:
            assert len(tel[key]) == len(fab.ports) and np.all(np.isfinite(tel[key])) and np.all(tel[key] >= 0), key
        assert np.all(tel["utilization"] <= 1.01)
        assert np.all(tel["tx_data_bytes"] <= tel["tx_bytes"])
        # queues: the time average lies below the peak; the peak covers the start and end levels
        assert np.all(tel["mean_queue_bytes"] <= tel["max_queue_bytes"] + 1e-6)
        assert np.all(tel["queue_bytes"] <= tel["max_queue_bytes"])
        assert np.all(prev_queue <= tel["max_queue_bytes"])
        assert np.all(tel["ecn_marked_packets"] <= tel["enqueued_data_packets"] + tel["tx_data_packets"])
        assert np.all(tel["paused_ns"] <= span)
        # a port that received a PAUSE this interval was paused for some of it
        assert np.all(tel["paused_ns"][tel["pfc_pause_received"] > 0] > 0)
        assert tel["tx_data_bytes"][~fab.ports.is_switch].sum() == 0 or tel["distinct_flows"].sum() > 0
        prev_end, prev_queue = tel["interval_end_ns"], tel["queue_bytes"]
        seen["marks"] += tel["ecn_marked_packets"].sum()
        seen["pauses"] += tel["pfc_pause_received"].sum()
        seen["queue"] = max(seen["queue"], tel["max_queue_bytes"].max())
    assert seen["marks"] > 0 and seen["pauses"] > 0 and seen["queue"] > 200_000, seen  # the checks saw action


def test_reading_twice_gives_an_empty_interval(make_fabric, h):
    fab = make_fabric(topology.incast_star(hosts=3), h.flows([(0, 2, 10**7, 0), (1, 2, 10**7, 0)]), "hpcc")
    fab.advance("30us")
    first = fab.read_telemetry()
    again = fab.read_telemetry()
    assert again["interval_start_ns"] == again["interval_end_ns"] == first["interval_end_ns"]
    for key in ("tx_bytes", "ecn_marked_packets", "utilization", "mean_queue_bytes", "distinct_flows"):
        assert np.all(again[key] == 0), key
    np.testing.assert_array_equal(again["queue_bytes"], first["queue_bytes"])  # state, not a counter
    b = h.port_towards(fab, 2)
    assert again["queue_bytes"][b] > 0 and again["max_queue_bytes"][b] == again["queue_bytes"][b]


def test_distinct_flows_counts_flows_through_a_port(make_fabric, h):
    flows = pd.DataFrame({"src": [0, 1, 2, 0], "dst": [3, 3, 3, 4], "size_bytes": 10**7, "start_ns": 0})
    fab = make_fabric(topology.incast_star(hosts=5), flows, "hpcc")
    fab.advance("10us")
    fab.read_telemetry()
    fab.advance("20us")
    tel = fab.read_telemetry()
    assert tel["distinct_flows"][h.port_towards(fab, 3)] == 3
    assert tel["distinct_flows"][h.port_towards(fab, 4)] == 1
    assert tel["distinct_flows"][h.host_port(fab, 0)] == 2  # host 0's NIC sends two flows
    assert tel["distinct_flows"][h.host_port(fab, 3)] == 0  # ACKs are not flows
    assert tel["utilization"][h.port_towards(fab, 3)] == pytest.approx(1.0, abs=0.01)


def test_distinct_flows_split_over_ecmp_uplinks(make_fabric, h):
    topo = topology.leaf_spine(leaves=2, spines=4, hosts_per_leaf=8)
    rows = [(s, 8 + (s + k) % 8, 10**7, 0) for s in range(8) for k in range(3)]  # 24 flows leaf 0 -> leaf 1
    fab = make_fabric(topo, h.flows(rows), "hpcc")
    fab.advance("40us")
    fab.read_telemetry()
    fab.advance("20us")  # a later interval counts again from zero
    tel = fab.read_telemetry()
    leaf0, spines = topo.num_hosts, range(topo.num_hosts + 2, topo.num_hosts + 6)
    uplinks = [h.port_towards(fab, s, at=leaf0) for s in spines]
    assert tel["distinct_flows"][uplinks].sum() == 24  # each flow takes exactly one uplink
    downlinks = [h.port_towards(fab, d, at=topo.num_hosts + 1) for d in range(8, 16)]
    assert tel["distinct_flows"][downlinks].sum() == 24
    assert all(tel["distinct_flows"][h.host_port(fab, s)] == 3 for s in range(8))


def test_paused_time_matches_the_pause_state(make_fabric, h):
    # Line-rate senders into a small buffer: the hosts spend much of the time paused.
    cfg = FabricConfig.preset("hpcc", dcqcn={"min_rate": "100Gbps"}, buffer={"buffer": "1MB"})
    fab = make_fabric(topology.incast_star(hosts=5), h.flows([(s, 4, 10**8, 0) for s in range(4)]), cfg)
    fab.advance("100us")
    fab.read_telemetry()
    fab.advance("400us")
    tel = fab.read_telemetry()
    senders = [h.host_port(fab, s) for s in range(4)]
    assert (tel["pfc_pause_received"][senders] > 0).all()
    # four senders share one 100G port: each may send ~1/4 of the time, so it is paused ~3/4
    span = tel["interval_end_ns"] - tel["interval_start_ns"]
    paused = tel["paused_ns"][senders].sum() / (4 * span)
    sending = tel["utilization"][senders].mean()
    assert paused == pytest.approx(0.75, abs=0.15)
    assert sending == pytest.approx(0.25, abs=0.05)
    assert tel["paused_ns"][h.port_towards(fab, 4)] == 0  # the receiver never pauses the switch


def test_utilization_is_the_documented_formula_of_raw_telemetry(make_fabric, h):
    # computed in C++ (one home); here from the raw counters, bit for bit
    fab = make_fabric(topology.incast_star(hosts=4), h.flows([(0, 3, 10**6, 0), (1, 3, 300_000, 1000)]), "hpcc")
    for dt in ("7us", "30us", "1us"):
        fab.advance(dt)
        tel = fab.read_telemetry()
        span = tel["interval_end_ns"] - tel["interval_start_ns"]
        expected = tel["tx_bytes"] * 8e9 / (fab.ports.rate_bps * span)
        assert tel["utilization"].dtype == np.float64
        assert tel["utilization"].tobytes() == expected.tobytes()
        assert expected.max() > 0


def test_block_rows_of_some_ports_match_the_mapping(make_fabric, h):
    # the envs' gather (Telemetry.rows) reads the same values as the mapping, per-policy ones included
    fab = make_fabric(topology.incast_star(hosts=4), h.flows([(0, 3, 10**6, 0), (1, 3, 10**6, 0)]), "dctcp")
    ports = np.array([h.port_towards(fab, 3), h.host_port(fab, 0)], dtype=np.uint32)
    fab.set_aqm(ports[:1], "ecn_sharp")
    fab.advance("40us")
    block = fab.read_telemetry_block()
    tel = block.as_dict()
    assert set(tel) == KEYS | {k for k in tel if k.startswith("ecn_sharp.")} and list(tel)[-1] == "utilization"
    keys = ("mean_queue_bytes", "paused_ns", "tx_data_packets", "utilization", "ecn_sharp.sojourn_mean_ns")
    rows = block.rows(keys, ports)
    for k in keys:
        assert rows[k].dtype == tel[k].dtype
        assert rows[k].tobytes() == tel[k][ports].tobytes(), k
