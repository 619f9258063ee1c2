"""Bytes are conserved, PFC is lossless, and a lossy fabric drops but recovers."""

import numpy as np
import pytest

from ecngym.sim_backend import FabricConfig, topology


@pytest.mark.parametrize("wake", ["hpcc", "exact"])
def test_every_flow_completes_and_delivers_its_bytes(make_fabric, h, wake):
    rng = np.random.default_rng(7)
    rows = []
    for i in range(60):
        src, dst = rng.choice(16, size=2, replace=False)
        rows.append((int(src), int(dst), int(rng.integers(1, 400_000)), int(i * 3_000)))
    cfg = FabricConfig.preset("hpcc", nic_pacing_wake=wake)
    fab = make_fabric(topology.leaf_spine(leaves=4, spines=2, hosts_per_leaf=4), h.flows(rows), cfg)
    assert fab.run("50ms")
    rec = fab.flow_records()
    assert rec["finished"].all()
    assert (rec["delivered_bytes"] == rec["size_bytes"]).all()
    assert (rec["fct_ns"] > 0).all()
    c = fab.counters()
    assert c["drops"] == 0 and c["retransmitted_bytes"] == 0
    assert c["packets_in_flight"] == 0  # nothing left queued anywhere
    # every data packet a host sent crossed the fabric: payload + 52 B header per packet
    packets = np.ceil(rec["size_bytes"] / 1000).sum()
    assert c["data_packet_hops"] >= 2 * packets


def test_pfc_incast_is_lossless_and_pauses(make_fabric, h):
    # 16:1 incast at 100 Gbps into a 4 MB shared buffer: the queue outruns ECN, PFC must hold it.
    cfg = FabricConfig.preset("hpcc", buffer={"buffer": "4MB"})
    flows = h.flows([(s, 16, 1_000_000, 0) for s in range(16)])
    fab = make_fabric(topology.incast_star(hosts=17), flows, cfg)
    paused = sent = 0
    while fab.now_ns < 20_000_000 and fab.counters()["flows_completed"] < 16:
        fab.advance("50us")
        tel = fab.read_telemetry()
        sent += int(tel["pfc_pause_sent"].sum())
        paused += int(tel["paused_ns"][~fab.ports.is_switch].sum())
    rec = fab.flow_records()
    assert rec["finished"].all()
    assert fab.counters()["drops"] == 0
    assert (rec["delivered_bytes"] == rec["size_bytes"]).all()
    assert sent > 0, "the incast should have triggered PFC pauses"
    assert paused > 0, "paused senders should report paused time"


def test_lossy_fabric_drops_and_recovers_by_go_back_n(make_fabric, h):
    cfg = FabricConfig.preset("hpcc", buffer={"buffer": "300KB", "pfc_enabled": False},
                              retransmit_timeout="100us")
    flows = h.flows([(s, 8, 500_000, 0) for s in range(8)])
    fab = make_fabric(topology.incast_star(hosts=9), flows, cfg)
    assert fab.run("200ms")
    c = fab.counters()
    rec = fab.flow_records()
    assert c["drops"] > 0
    assert c["retransmitted_bytes"] > 0
    assert (rec["delivered_bytes"] == rec["size_bytes"]).all()
