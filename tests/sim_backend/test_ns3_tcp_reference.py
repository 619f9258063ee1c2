"""The ns-3 TCP reference (``ecngym.sim_backend.ns3_tcp``) and ``ecngym bench tcp``: small real runs."""

import json

import numpy as np
import pandas as pd
import pytest

from ecngym import cli
from ecngym.error import ConfigError
from ecngym.sim_backend import ns3_tcp, topology


def _incast(n: int, size: int) -> pd.DataFrame:
    return pd.DataFrame({"src": np.arange(1, n + 1), "dst": 0, "size_bytes": size, "start_ns": 0})


def _payload_line_rate(settings: ns3_tcp.Ns3TcpSettings, rate_bps: float) -> float:
    return rate_bps * settings.segment_size / (settings.segment_size + settings.header_bytes())


def test_two_sender_incast_finishes_and_marking_holds_the_queue_near_k():
    # long flows, so the time average is the steady state: DCTCP keeps the queue around K (Alizadeh
    # et al. §3.1); a lower K must give a proportionally lower standing queue
    topo = topology.incast_star(hosts=3)
    flows = _incast(2, 4_000_000)
    standing = {}
    for k in (30_000, 65_000):
        res = ns3_tcp.run_reference(topo, flows, {"k": k, "buffer": "2MB"})
        assert res.records["finished"].all()
        b = res.bottleneck()
        assert b["node"] == 3 and b["peer"] == 0  # the switch's port towards the receiver
        assert b["marked_packets"] > 0 and b["dropped_packets"] == 0
        assert 0.5 * k <= b["mean_queue_bytes"] <= 1.5 * k, (k, b["mean_queue_bytes"])
        assert b["peak_queue_bytes"] < 2_000_000
        assert res.goodput_bps() >= 0.9 * _payload_line_rate(res.settings, 100e9)
        standing[k] = b["mean_queue_bytes"]
        assert (res.records["rto_count"] == 0).all()
    assert standing[30_000] < 0.75 * standing[65_000]


def test_long_flow_on_a_dumbbell_reaches_the_payload_line_rate():
    topo = topology.dumbbell(left_hosts=1, right_hosts=1)
    flows = pd.DataFrame({"src": [0], "dst": [1], "size_bytes": [20_000_000], "start_ns": [0]})
    res = ns3_tcp.run_reference(topo, flows)
    rec = res.records.iloc[0]
    assert rec["finished"] and rec["rto_count"] == 0
    assert res.goodput_bps() >= 0.95 * _payload_line_rate(res.settings, 100e9)
    assert res.goodput_bps() <= _payload_line_rate(res.settings, 100e9)
    # every switch port on the way sent the flow's bytes with their headers, the reverse ones ACKs only
    forward = res.ports.set_index(["node", "peer"])["tx_bytes"]
    assert forward[(2, 3)] == forward[(3, 1)] > 20_000_000 * (1 + res.settings.header_bytes() / 1000) * 0.999
    assert forward[(3, 2)] < 0.1 * forward[(2, 3)]
    assert res.packet_hops > 3 * 20_000 and res.events > res.packet_hops


def test_a_small_flow_takes_the_handshake_and_the_transfer():
    topo = topology.incast_star(hosts=2)
    flows = pd.DataFrame({"src": [1], "dst": [0], "size_bytes": [10_000], "start_ns": [1000]})
    res = ns3_tcp.run_reference(topo, flows)
    rec = res.records.iloc[0]
    propagation_rtt = 2 * int(topo.delay_ns.sum())
    # SYN / SYN-ACK: at least one propagation round trip before any data leaves
    assert rec["handshake_ns"] >= propagation_rtt
    # then the data (one initial window of 10 segments) and its ACK: a round trip and the transfer
    transfer_ns = 10_000 * 8e9 / 100e9
    assert rec["fct_ns"] >= 2 * propagation_rtt + transfer_ns
    assert rec["fct_ns"] >= rec["handshake_ns"] + propagation_rtt + transfer_ns
    assert rec["fct_ns"] < 2 * (rec["handshake_ns"] + rec["ideal_fct_ns"])  # no timer stalled it
    assert rec["slowdown"] > 1.5


def test_reference_runs_are_deterministic():
    topo = topology.incast_star(hosts=5)
    flows = _incast(4, 300_000)
    a = ns3_tcp.run_reference(topo, flows, {"buffer": "100KB"})
    b = ns3_tcp.run_reference(topo, flows, {"buffer": "100KB"})
    pd.testing.assert_frame_equal(a.records, b.records)
    pd.testing.assert_frame_equal(a.ports, b.ports)
    assert a.events == b.events


@pytest.mark.parametrize(("topo", "flows", "settings", "field"), [
    ({"kind": "ring", "hosts": 4}, _incast(2, 1000), None, "topology.kind"),
    (topology.incast_star(hosts=3), _incast(0, 1000), None, "flows"),
    (topology.incast_star(hosts=3), _incast(2, 1000), {"k": -1}, "ns3_tcp.k"),
    (topology.incast_star(hosts=3), _incast(2, 1000), {"k": 0}, "ns3_tcp.k"),
    (topology.incast_star(hosts=3), _incast(2, 1000), {"buffer": "0B"}, "ns3_tcp.buffer"),
    (topology.incast_star(hosts=3), _incast(2, 1000), {"min_rto": "fast"}, "ns3_tcp.min_rto"),
    (topology.incast_star(hosts=3), _incast(2, 1000), {"window_floor_segments": -1},
     "ns3_tcp.window_floor_segments"),
    (topology.incast_star(hosts=3), _incast(2, 1000), {"segment": 1000}, "ns3_tcp"),
    (topology.incast_star(hosts=3), _incast(3, 1000), None, "flows.src"),
    (topology.incast_star(hosts=3), _incast(2, 0), None, "flows.size_bytes"),
])
def test_bad_inputs_are_refused_naming_the_field(topo, flows, settings, field):
    with pytest.raises(ConfigError) as info:
        ns3_tcp.run_reference(topo, flows, settings)
    assert info.value.field.startswith(field), info.value


def test_the_window_floor_reference_keeps_windows_at_a_segment_or_more():
    # 32 senders: TcpDctcp's cuts take some windows below one segment; with Linux's floor (the
    # TcpDctcpWithFloor subclass, ssthresh >= 2 segments) PRR may dip to one segment, not below
    topo = topology.incast_star(hosts=33)
    flows = _incast(32, 500_000)
    plain = ns3_tcp.run_reference(topo, flows, {"buffer": "2MB"})
    floor = ns3_tcp.run_reference(topo, flows, {"buffer": "2MB", "window_floor_segments": 2})
    assert plain.records["min_cwnd_bytes"].min() < 1000
    assert floor.records["min_cwnd_bytes"].min() >= 1000
    assert floor.records["finished"].all()


def test_bench_tcp_prints_the_comparison_as_json(capsys, tmp_path):
    page = tmp_path / "tcp.md"
    assert cli.main(["bench", "tcp", "--senders", "2", "--buffers", "250KB", "--dumbbell-load", "0.5",
                     "--dumbbell-duration", "200us", "--variants", "lean", "--markdown", str(page)]) == 0
    out = capsys.readouterr().out
    assert "Standing queue" in out and "ns-3 TcpDctcp" in out
    result = json.loads(out.strip().splitlines()[-1])
    assert [c["case"] for c in result["cases"]] == ["incast N=2 buf 250KB", "dumbbell 50% buf 250KB"]
    for case in result["cases"]:
        ns3, ours = case["ns3"], case["ours"]["lean"]
        assert ns3["flows"] == ours["flows"] == ns3["finished"] == ours["finished"]
        assert ns3["standing_queue_kb"] > 0 and ours["standing_queue_kb"] > 0
        d, ok = case["diff"]["lean"]["goodput_gbps"]
        assert d == pytest.approx(ours["goodput_gbps"] / ns3["goodput_gbps"] - 1, rel=1e-2)
        assert ok == (abs(d) <= 0.15)
    assert sum(1 for c in result["cases"] for _ in c["diff"]["lean"]) == result["within"]["lean"][1]
    assert result["ns3_settings"]["k"] == 65_000
    assert result["reference_of"] == {"lean": "ns3"}
    assert list(result["references"]) == ["ns3", "ns3_floor", "ns3_floor_nosack"]  # every one, by default
    for case in result["cases"]:
        assert set(case["refs"]) == set(result["references"]) and case["refs"]["ns3"] == case["ns3"]
    assert result["within_by_reference"]["lean"]["ns3"] == result["within"]["lean"]
    text = page.read_text()
    assert text.startswith("# Our DCTCP hosts vs ns-3's TcpDctcp") and "ecngym bench tcp --senders 2" in text


def test_bench_tcp_compares_each_variant_with_its_reference(capsys):
    assert cli.main(["bench", "tcp", "--senders", "2", "--buffers", "250KB", "--dumbbell-load", "0",
                     "--variants", "lean,linux", "--no-all-references", "--json-only"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["reference_of"] == {"lean": "ns3", "linux": "ns3_floor_nosack"}
    (case,) = result["cases"]
    assert set(case["refs"]) == {"ns3", "ns3_floor_nosack"} and case["refs"]["ns3"] == case["ns3"]
    ours, ref = case["ours"]["linux"], case["refs"]["ns3_floor_nosack"]
    d, _ = case["diff"]["linux"]["standing_queue_kb"]
    assert d == pytest.approx(ours["standing_queue_kb"] / ref["standing_queue_kb"] - 1, rel=1e-2)


def test_bench_tcp_refuses_bad_arguments(capsys):
    for args in (["--senders", "x"], ["--senders", "0"], ["--buffers", "-5KB"], ["--variants", "bsd"],
                 ["--ns3", '{"k": -1}'], ["--dumbbell-load", "1.5"], ["--dumbbell-load", "0.5,x"],
                 ["--variant", "x=[1]"], ["--reference", "lean=bsd"], ["--reference", "bsd=ns3"]):
        assert cli.main(["bench", "tcp", *args]) == 2, args
        assert "error" in capsys.readouterr().err


def test_a_small_leaf_spine_carries_flows_between_leaves():
    # 2 leaves x 2 spines x 2 hosts per leaf: hosts 0, 1 on leaf 0, hosts 2, 3 on leaf 1
    topo = topology.leaf_spine(leaves=2, spines=2, hosts_per_leaf=2)
    flows = pd.DataFrame({"src": [0, 1, 2], "dst": [2, 3, 0], "size_bytes": [200_000, 200_000, 50_000],
                          "start_ns": [0, 0, 5_000]})
    res = ns3_tcp.run_reference(topo, flows, {"host_marking": False, "recovery": "classic"})
    assert res.records["finished"].all()
    # host -> leaf -> spine -> leaf -> host: 4 links of 1 us, an 8 us propagation round trip
    assert (res.records["ideal_fct_ns"] > 8_000).all() and (res.records["handshake_ns"] >= 8_000).all()
    assert (res.records["fct_ns"] >= res.records["handshake_ns"] + 8_000).all()
    assert len(res.ports) == 2 * 2 * 2 + 2 * 2  # switch ends: leaf-spine links both ways, leaf-host links


def test_bench_tcp_bisect_prints_each_option_set_and_a_trace(capsys):
    assert cli.main(["bench", "tcp-bisect", "--loads", "0.6", "--buffers", "250KB", "--duration", "2ms",
                     "--no-ns3", "--sets", "lean,linux,linux - cwnd-limited growth", "--trace", "linux"]) == 0
    out = capsys.readouterr().out
    result = json.loads(out.strip().splitlines()[-1])
    (case,) = result["cases"]
    assert list(case["sets"]) == ["lean", "linux", "linux - cwnd-limited growth"]
    sets = case["sets"]
    # the Linux-like host's window stays within a few BDPs with the rule, not without it
    assert sets["linux"]["largest_final_window_kb"] < sets["linux - cwnd-limited growth"]["largest_final_window_kb"]
    (trace,) = result["traces"]
    assert trace["set"] == "linux" and trace["lines"][0].startswith("slowest small flow")
    assert "option set | small p50" in out


def test_bench_tcp_bisect_refuses_unknown_sets(capsys):
    for args in (["--sets", "bsd"], ["--trace", "bsd"], ["--loads", "1.2"]):
        assert cli.main(["bench", "tcp-bisect", *args]) == 2, args
        assert "error" in capsys.readouterr().err
