"""Bytes are conserved, PFC is lossless and per priority, and a lossy fabric drops but recovers."""

import numpy as np
import pandas as pd
import pytest

from ecngym.sim_backend import FabricConfig, topology

HOSTS_PER_LEAF = 4


def _random_leaf_spine_flows(n=60, hosts=16, seed=7):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        src, dst = rng.choice(hosts, size=2, replace=False)
        rows.append((int(src), int(dst), int(rng.integers(1, 400_000)), int(i * 3_000)))
    return pd.DataFrame(rows, columns=["src", "dst", "size_bytes", "start_ns"])


def _payload_sent(sums, ports):
    """Payload bytes that left ``ports``: data wire bytes less one header per data packet."""
    return int(sums["tx_data_bytes"][ports].sum()) - 52 * int(sums["tx_data_packets"][ports].sum())


@pytest.mark.parametrize(
    "config",
    [FabricConfig.preset("hpcc"), FabricConfig.preset("hpcc", nic_pacing_wake="exact"),
     FabricConfig.preset("dcqcn_paper"), FabricConfig.preset("dctcp")],
    ids=["hpcc", "hpcc_exact_wake", "dcqcn_paper", "dctcp"],
)
def test_every_flow_completes_and_bytes_are_conserved(make_fabric, h, config):
    flows = _random_leaf_spine_flows()
    fab = make_fabric(topology.leaf_spine(leaves=4, spines=2, hosts_per_leaf=HOSTS_PER_LEAF), flows, config)
    sums, _ = h.run_summing_telemetry(fab)
    rec = fab.flow_records()
    assert rec["finished"].all()
    assert (rec["fct_ns"] > 0).all()
    assert (rec["delivered_bytes"] == rec["size_bytes"]).all()
    assert (rec["retransmitted_bytes"] == 0).all()
    c = fab.counters()
    assert c["drops"] == 0 and sums["drops"].sum() == 0 and c["retransmitted_bytes"] == 0
    assert c["packets_in_flight"] == 0  # nothing left queued anywhere

    host = ~fab.ports.is_switch
    switch = fab.ports.is_switch
    wire = h.wire_bytes(rec["size_bytes"])
    # each host put exactly its flows' bytes (payload + one header per packet) on the wire, once
    sent_by_host = pd.Series(wire).groupby(rec["src"]).sum()
    for src, expected in sent_by_host.items():
        assert sums["tx_data_bytes"][h.host_port(fab, src)] == expected, f"host {src}"
    assert sums["tx_data_packets"][host].sum() == np.ceil(rec["size_bytes"] / 1000).sum()
    assert _payload_sent(sums, host) == rec["size_bytes"].sum()
    # every data packet crossed 1 switch (same leaf) or 3 (leaf-spine-leaf), and left each one
    switch_hops = np.where(rec["src"] // HOSTS_PER_LEAF == rec["dst"] // HOSTS_PER_LEAF, 1, 3)
    assert sums["tx_data_bytes"][switch].sum() == (wire * switch_hops).sum()
    np.testing.assert_array_equal(sums["enqueued_data_packets"][switch], sums["tx_data_packets"][switch])
    assert c["data_packet_hops"] == sums["tx_data_packets"].sum()
    # receivers acknowledge every data packet (one ACK per packet in every preset)
    assert sums["tx_control_packets"][host].sum() >= sums["tx_data_packets"][host].sum()


def test_pfc_incast_is_lossless_and_pauses_the_senders(make_fabric, h):
    # 16:1 incast at 100 Gbps into a 4 MB shared buffer: the queue outruns ECN, PFC must hold it.
    senders, receiver = range(16), 16
    cfg = FabricConfig.preset("hpcc", buffer={"buffer": "4MB"})
    flows = h.flows([(s, receiver, 1_000_000, 0) for s in senders])
    fab = make_fabric(topology.incast_star(hosts=17), flows, cfg)
    sums, _ = h.run_summing_telemetry(fab)
    rec = fab.flow_records()
    assert rec["finished"].all()
    assert (rec["delivered_bytes"] == rec["size_bytes"]).all()
    assert fab.counters()["drops"] == 0 and sums["drops"].sum() == 0
    assert (rec["retransmitted_bytes"] == 0).all()
    assert sums["pfc_pause_sent"].sum() > 0, "the incast should have triggered PFC pauses"
    # pauses go upstream only: from the switch ports facing senders, never towards the receiver
    assert sums["pfc_pause_sent"][h.port_towards(fab, receiver)] == 0
    assert sums["pfc_pause_sent"][~fab.ports.is_switch].sum() == 0
    for s in senders:
        sent = sums["pfc_pause_sent"][h.port_towards(fab, s)]
        received = sums["pfc_pause_received"][h.host_port(fab, s)]
        assert sent == received, f"sender {s}: {sent} PAUSE frames sent, {received} received"
        assert (sums["paused_ns"][h.host_port(fab, s)] > 0) == (received > 0), f"sender {s}"
    assert (sums["pfc_pause_received"][[h.host_port(fab, s) for s in senders]] > 0).sum() >= 8


def test_pfc_keeps_a_multi_hop_incast_lossless(make_fabric, h):
    # 12 senders on leaves 1-3 -> host 0 on leaf 0 through 2 spines, 1 MB buffers: pauses must
    # travel hop by hop (leaf 0 pauses the spines, the spines pause the other leaves).
    topo = topology.leaf_spine(leaves=4, spines=2, hosts_per_leaf=HOSTS_PER_LEAF)
    flows = h.flows([(s, 0, 2_000_000, 0) for s in range(4, 16)])
    fab = make_fabric(topo, flows, FabricConfig.preset("hpcc", buffer={"buffer": "1MB"}))
    sums, _ = h.run_summing_telemetry(fab)
    rec = fab.flow_records()
    assert rec["finished"].all() and (rec["delivered_bytes"] == rec["size_bytes"]).all()
    assert fab.counters()["drops"] == 0
    switch = fab.ports.is_switch
    leaf0 = topo.num_hosts
    spines = [topo.num_hosts + 4, topo.num_hosts + 5]
    towards_spines = [h.port_towards(fab, s, at=leaf0) for s in spines]
    assert sums["pfc_pause_sent"][towards_spines].sum() > 0, "leaf 0 should pause the spines"
    spine_ports = fab.ports.switch_ports("spine")
    assert sums["pfc_pause_received"][spine_ports].sum() > 0
    assert sums["paused_ns"][spine_ports].sum() > 0
    # every PAUSE frame crossed its link: sent on one end == received on the other
    peer_port = {(int(fab.ports.node[p]), int(fab.ports.peer_node[p])): p for p in range(len(fab.ports))}
    for p in np.flatnonzero(switch):
        back = peer_port[(int(fab.ports.peer_node[p]), int(fab.ports.node[p]))]
        assert sums["pfc_pause_sent"][p] == sums["pfc_pause_received"][back]


@pytest.mark.parametrize("preset", ["hpcc", "dctcp"])
def test_lossy_fabric_drops_and_recovers_by_go_back_n(make_fabric, h, preset):
    cfg = FabricConfig.preset(preset, buffer={"buffer": "300KB", "pfc_enabled": False},
                              retransmit_timeout="100us")
    receiver = 8
    flows = h.flows([(s, receiver, 500_000, 0) for s in range(8)])
    fab = make_fabric(topology.incast_star(hosts=9), flows, cfg)
    assert fab.run("200ms")
    fab.advance("100us")  # let the last control packets land
    sums = fab.read_telemetry()  # one interval: the whole run
    c = fab.counters()
    rec = fab.flow_records()
    assert rec["finished"].all()
    assert (rec["delivered_bytes"] == rec["size_bytes"]).all()
    assert c["drops"] > 0
    assert sums["drops"].sum() == c["drops"]
    assert sums["drops"][h.port_towards(fab, receiver)] == c["drops"]  # all lost at the incast port
    assert sums["pfc_pause_sent"].sum() == 0 and sums["paused_ns"].sum() == 0
    assert c["retransmitted_bytes"] == rec["retransmitted_bytes"].sum() > 0
    assert c["retransmitted_bytes"] >= 1000 * c["drops"]  # every lost (full-size) packet was sent again
    # payload the senders put on the wire = each byte once + every retransmitted byte
    assert _payload_sent(sums, ~fab.ports.is_switch) == rec["size_bytes"].sum() + c["retransmitted_bytes"]
    # the go-back-N receiver acknowledges each in-order packet (one ACK per packet in these presets)
    # and silently discards what arrives after a gap, so far more data arrives than it acknowledges
    arrived = sums["tx_data_packets"][h.port_towards(fab, receiver)]
    acked = sums["tx_control_packets"][h.host_port(fab, receiver)]
    assert acked >= 8 * 500
    assert arrived > 2 * acked


def test_go_back_n_repairs_losses_on_nacks_not_timeouts(make_fabric, h):
    # DCTCP keeps most losses away from a flow's tail, so a receiver's NACK (sent on the first
    # out-of-order packet) repairs them within an RTT; with timeouts only, each loss would cost
    # a full 1 ms retransmission timeout (~150 ms in all for this incast).
    cfg = FabricConfig.preset("dctcp", buffer={"buffer": "300KB", "pfc_enabled": False}, retransmit_timeout="1ms")
    fab = make_fabric(topology.incast_star(hosts=9), h.flows([(s, 8, 500_000, 0) for s in range(8)]), cfg)
    assert fab.run("10ms"), "losses were not repaired by NACKs"
    assert fab.counters()["drops"] > 1_000
    assert (fab.flow_records()["delivered_bytes"] == 500_000).all()


@pytest.mark.parametrize("quanta", [100, 1000])
def test_pause_frames_last_their_quanta_and_are_refreshed(make_fabric, h, quanta):
    # Line-rate senders into a 1 MB buffer stay congested; the switch re-sends XOFF every half
    # pause time (quanta x 512 bit times / 2 at 100 Gbps), so each frame covers that much pause.
    cfg = FabricConfig.preset("hpcc", dcqcn={"min_rate": "100Gbps"},
                              buffer={"buffer": "1MB", "pause_quanta": quanta})
    fab = make_fabric(topology.incast_star(hosts=5), h.flows([(s, 4, 10**8, 0) for s in range(4)]), cfg)
    fab.advance("100us")
    fab.read_telemetry()
    fab.advance("400us")
    tel = fab.read_telemetry()
    senders = [h.host_port(fab, s) for s in range(4)]
    refresh_ns = quanta * 512 / 100e9 * 1e9 / 2
    per_frame = tel["paused_ns"][senders] / tel["pfc_pause_received"][senders]
    assert np.all((0.75 * refresh_ns <= per_frame) & (per_frame <= 1.0 * refresh_ns)), per_frame
    assert fab.counters()["drops"] == 0


@pytest.mark.parametrize("victim_priority,min_share,max_share", [(5, 0.6, 1.0), (3, 0.0, 0.5)])
def test_pfc_pauses_only_the_congested_priority(make_fabric, h, victim_priority, min_share, max_share):
    # Hosts 0-3 send to host 4 on priority 3 without backing off (DCQCN floored at line rate), so
    # PFC pauses them; host 0 also sends to the idle host 5. On another priority that flow keeps
    # most of host 0's line rate; on the paused priority it is blocked with the incast flows.
    cfg = FabricConfig.preset("hpcc", dcqcn={"min_rate": "100Gbps"}, buffer={"buffer": "2MB"})
    flows = pd.DataFrame({"src": [0, 1, 2, 3, 0], "dst": [4, 4, 4, 4, 5], "size_bytes": 10**8, "start_ns": 0,
                          "priority": [3, 3, 3, 3, victim_priority]})
    fab = make_fabric(topology.incast_star(hosts=6), flows, cfg)
    fab.advance("200us")
    fab.read_telemetry()
    fab.advance("500us")
    tel = fab.read_telemetry()
    assert tel["pfc_pause_received"][h.host_port(fab, 0)] > 0
    assert tel["utilization"][h.port_towards(fab, 4)] >= 0.99
    assert min_share <= tel["utilization"][h.port_towards(fab, 5)] <= max_share
