"""The Linux-like options of the DCTCP host model (``fabric.dctcp``).

Slow start, handshake, RTO estimate, window floor, delayed ACKs, growth only while cwnd-limited,
per-flow vs persistent connections.

Each test runs the real fabric on a small incast star and reads what the option changes: the
sender's window over time, the FCT, the packets the switch forwards, the RTO, the ACK count.
"""

from __future__ import annotations

import numpy as np
import pytest

from ecngym.error import ConfigError
from ecngym.sim_backend import FabricConfig, topology
from ecngym.sim_backend.config import DctcpParams
from ecngym.sim_backend.knobs import tcp_host_knobs

MSS = 1000
NO_MARKS = {"kmin_bytes": "100MB", "kmax_bytes": "100MB", "pmax": 1.0}


def _star(hosts: int = 2):
    # 10 Gbps, 10 us links: a base RTT of ~42 us, long beside a window's serialisation at first
    return topology.incast_star(hosts=hosts, link_rate="10Gbps", link_delay="10us")


def _cfg(red: dict | None = None, **dctcp):
    return FabricConfig.preset("dctcp", aqm={"all": red or NO_MARKS}, dctcp=dctcp)


def _windows(make_fabric, h, flows, cfg, times_ns, hosts: int = 2):
    """Window of every flow at each time: (len(times), flows) array, plus the base RTT."""
    fab = make_fabric(_star(hosts), h.flows(flows), cfg)
    out = []
    for t in times_ns:
        fab.run_until(int(t))
        out.append(fab.flow_records()["window_bytes"].to_numpy())
    return np.array(out), int(fab.flow_records()["base_rtt_ns"].iloc[0])


def _base_rtt(make_fabric, h) -> int:
    fab = make_fabric(_star(), h.flows([(0, 1, MSS, 0)]), _cfg())
    return int(fab.flow_records()["base_rtt_ns"].iloc[0])


# ----------------------------------------------------------------------------------- slow start
def test_slow_start_doubles_the_window_per_rtt_until_ssthresh(make_fabric, h):
    rtt = _base_rtt(make_fabric, h)
    times = [int((k + 0.5) * rtt) for k in range(9)]
    w, _ = _windows(make_fabric, h, [(0, 1, 10_000_000, 0)],
                    _cfg(slow_start=True, initial_cwnd_packets=2, ssthresh_bytes=64 * MSS), times)
    w = w[:, 0] / MSS
    assert w[0] == 2  # nothing acknowledged yet: the initial window
    # below ssthresh (64 packets): x2 per round trip: 4, 8, 16, 32 (then the window's own
    # serialisation, ~27 us at 32 packets, spreads the next round over the sample time)
    ratios = w[1:5] / w[:4]
    assert np.all((ratios > 1.8) & (ratios < 2.2)), w
    # from ssthresh on: congestion avoidance, about one MSS per round trip
    assert 64 <= w[6] < 66 and np.all(np.diff(w[6:]) <= 1.5), w

    lean, _ = _windows(make_fabric, h, [(0, 1, 10_000_000, 0)], _cfg(), times)
    assert lean[0, 0] > 40 * MSS  # the NIC-style model starts at the path's BDP


def test_an_ecn_echo_ends_slow_start(make_fabric, h):
    rtt = _base_rtt(make_fabric, h)
    times = [int((k + 0.5) * rtt) for k in range(14)]
    k = {"kmin_bytes": "20KB", "kmax_bytes": "20KB", "pmax": 1.0}
    # two senders to one receiver: their slow starts fill the 20 KB marking threshold
    w, _ = _windows(make_fabric, h, [(0, 2, 20_000_000, 0), (1, 2, 20_000_000, 0)],
                    _cfg(red=k, slow_start=True, initial_cwnd_packets=2), times, hosts=3)
    w = w[:, 0] / MSS
    first_cut = int(np.argmax(np.diff(w) < 0)) + 1
    # slow start until then (the two senders' queue stretches their round trips: > 1.5x, not 2x)
    assert first_cut > 3 and np.all(w[1:first_cut] / w[:first_cut - 1] > 1.5), w
    # after it: no more doubling, at most about one MSS per round trip between cuts
    assert np.all(np.diff(w[first_cut:]) <= 1.5), w


# ------------------------------------------------------------------------------------ handshake
def test_the_handshake_adds_one_rtt_and_its_packets_cross_the_switch(make_fabric, h):
    n = 3  # three senders, one small flow each, to host 3
    flows = [(s, n, 5 * MSS, s * 1_000_000) for s in range(n)]
    fct, counts = {}, {}
    for on in (False, True):
        fab = make_fabric(_star(n + 1), h.flows(flows), _cfg(handshake=on))
        sums, _ = h.run_summing_telemetry(fab)
        rec = fab.flow_records()
        fct[on] = rec["fct_ns"].to_numpy()
        rtt = rec["base_rtt_ns"].to_numpy()
        to_receiver = h.port_towards(fab, n)
        to_senders = [h.port_towards(fab, s) for s in range(n)]
        counts[on] = (int(sums["tx_data_packets"][to_receiver]), int(sums["tx_control_packets"][to_receiver]),
                      int(sum(sums["tx_control_packets"][p] for p in to_senders)))
    # one more round trip (SYN and SYN-ACK are smaller than a data packet: a little less)
    extra = fct[True] - fct[False]
    assert np.all(np.abs(extra - rtt) < 0.1 * rtt), (extra, rtt)
    # the switch forwards one SYN per flow towards the receiver (a data-queue packet), the
    # sender's ACK (a control packet), and one SYN-ACK per flow back to its sender
    data, ctrl_fwd, ctrl_back = counts[False]
    assert (data, ctrl_fwd) == (5 * n, 0)
    assert counts[True] == (data + n, n, ctrl_back + n)


def test_a_lost_syn_is_sent_again_after_the_initial_rto(make_fabric, h):
    # two 10 Gbps senders keep a data packet queued in a one-packet (1100 B) buffer, so a third
    # sender's SYN finds no room and is dropped; the SYN goes again after the RTO before the first
    # sample (initial_rto_ns), when the port is free: the small flow's FCT moves with that RTO
    flows = h.flows([(0, 3, 100_000, 0), (1, 3, 100_000, 0), (2, 3, 5 * MSS, 20_000)])
    buffer = {"buffer": "1100B", "reserve": "0B", "headroom": "0B", "resume_offset": "0B", "pfc_enabled": False,
              "pfc_alpha": 64}
    fct = {}
    for rto in (300_000, 500_000):
        cfg = FabricConfig.preset("dctcp", aqm={"all": NO_MARKS}, buffer=buffer,
                                  dctcp={"handshake": True, "rto_estimate": True, "min_rto_ns": "10us",
                                         "initial_rto_ns": rto})
        fab = make_fabric(topology.incast_star(hosts=4, link_rate="10Gbps", link_delay="1us"), flows, cfg)
        assert fab.run("1s")
        fct[rto] = int(fab.flow_records()["fct_ns"].iloc[2])
    assert 300_000 < fct[300_000] < 330_000, fct
    assert fct[500_000] - fct[300_000] == 200_000


# ---------------------------------------------------------------------------------- RTO estimate
def test_the_rto_estimate_converges_to_the_path_rtt_and_respects_min_rto(make_fabric, h):
    flows = [(0, 1, 4_000_000, 0)]
    rto = {}
    for min_rto in ("1ns", "5ms"):
        fab = make_fabric(_star(), h.flows(flows), _cfg(rto_estimate=True, min_rto_ns=min_rto, initial_rto_ns="1s"))
        fab.run_until(100)
        assert fab.flow_records()["rto_ns"].iloc[0] == 1_000_000_000  # before any sample
        fab.run_until(2_000_000)
        rec = fab.flow_records()
        rto[min_rto], rtt = int(rec["rto_ns"].iloc[0]), int(rec["base_rtt_ns"].iloc[0])
    # a lone flow's samples are all about one base RTT: RTTVAR decays and RTO -> SRTT ~ the RTT
    assert rtt <= rto["1ns"] < 1.25 * rtt, (rto, rtt)
    assert rto["5ms"] == 5_000_000
    fab = make_fabric(_star(), h.flows(flows), _cfg())
    fab.run_until(2_000_000)
    assert fab.flow_records()["rto_ns"].iloc[0] == 1_000_000  # off: the fixed retransmit_timeout


# ---------------------------------------------------------------------------------- window floor
@pytest.mark.parametrize("floor_packets", [1, 2])
@pytest.mark.parametrize("linux", [False, True])
def test_the_window_floor_is_honoured(make_fabric, h, floor_packets, linux):
    # 16 senders on 1 us links (a BDP of ~7 packets), marking from the first queued byte: the
    # fair share is below one packet, so the windows fall to the floor and stay there
    senders = 16
    flows = h.flows([(s, senders, 500_000, 0) for s in range(senders)])
    k = {"kmin_bytes": "1B", "kmax_bytes": "1B", "pmax": 1.0}
    opts = {"slow_start": True, "initial_cwnd_packets": 10} if linux else {}
    fab = make_fabric(topology.incast_star(hosts=senders + 1, link_rate="10Gbps", link_delay="1us"), flows,
                      _cfg(red=k, min_window=f"{floor_packets * MSS}B", **opts))
    w = []
    for t in range(20_000, 1_000_000, 20_000):
        fab.run_until(t)
        rec = fab.flow_records()
        w.extend(rec.loc[~rec["finished"], "window_bytes"])
    assert min(w) == floor_packets * MSS


# ---------------------------------------------------------------------------------- delayed ACKs
def test_delayed_acks_halve_the_ack_count(make_fabric, h):
    packets = 100
    flows = [(0, 1, packets * MSS, 0)]
    acks = {}
    for on in (False, True):
        fab = make_fabric(_star(), h.flows(flows), _cfg(delayed_ack=on))
        sums, _ = h.run_summing_telemetry(fab)
        acks[on] = int(sums["tx_control_packets"][h.port_towards(fab, 0)])
    assert acks[False] == packets
    assert acks[True] == packets // 2


def test_a_lone_packet_waits_for_the_delayed_ack_timer(make_fabric, h):
    # initial window 1: the first packet is alone in flight and its ACK waits for the timer
    flows = [(0, 1, 3 * MSS, 0)]
    fct = {}
    for timeout in ("100us", "300us"):
        fab = make_fabric(_star(), h.flows(flows), _cfg(slow_start=True, initial_cwnd_packets=1,
                                                        delayed_ack=True, delayed_ack_timeout_ns=timeout))
        assert fab.run("1s")
        fct[timeout] = int(fab.flow_records()["fct_ns"].iloc[0])
    assert fct["300us"] - fct["100us"] == pytest.approx(200_000, abs=2_000)


def test_a_change_of_ce_state_is_acknowledged_at_once(make_fabric, h):
    # RFC 8257 §3.2: with marks switching on and off, the receiver sends more ACKs than one per
    # two packets (each change of CE state flushes an ACK)
    senders = 4
    flows = [(s, senders, 200 * MSS, 0) for s in range(senders)]
    k = {"kmin_bytes": "10KB", "kmax_bytes": "10KB", "pmax": 1.0}
    fab = make_fabric(_star(senders + 1), h.flows(flows), _cfg(red=k, delayed_ack=True))
    sums, _ = h.run_summing_telemetry(fab)
    acks = sum(int(sums["tx_control_packets"][h.port_towards(fab, s)]) for s in range(senders))
    marked = int(sums["ecn_marked_packets"][h.port_towards(fab, senders)])
    assert 0 < marked < senders * 200
    assert senders * 100 < acks < senders * 200


# ------------------------------------------------------------------------ cwnd-limited growth
@pytest.mark.parametrize("slow_start", [True, False])
def test_a_window_the_pacing_limits_does_not_grow(make_fabric, h, slow_start):
    # one flow, no marks: its NIC paces it at the path's rate, so once the window exceeds the BDP
    # the window no longer limits it. Without the rule slow start grows it by every ACK (to MBs);
    # Linux's tcp_is_cwnd_limited stops it below twice the most bytes in flight.
    rtt = _base_rtt(make_fabric, h)
    bdp = 10e9 / 8 * rtt / 1e9
    times = [3_000_000, 6_000_000]
    free, _ = _windows(make_fabric, h, [(0, 1, 20_000_000, 0)], _cfg(slow_start=slow_start), times)
    held, _ = _windows(make_fabric, h, [(0, 1, 20_000_000, 0)],
                       _cfg(slow_start=slow_start, cwnd_limited_growth=True), times)
    if slow_start:
        assert free[0, 0] > 20 * bdp, (free, bdp)
    else:
        assert free[1, 0] > free[0, 0] > 1.1 * bdp, (free, bdp)  # congestion avoidance creeps on
    assert held[0, 0] == held[1, 0] < 3 * bdp, (held, bdp)


def test_cwnd_limited_growth_still_grows_a_window_that_limits(make_fabric, h):
    rtt = _base_rtt(make_fabric, h)
    times = [int((k + 0.5) * rtt) for k in range(5)]
    cfg = _cfg(slow_start=True, initial_cwnd_packets=2, cwnd_limited_growth=True)
    w, _ = _windows(make_fabric, h, [(0, 1, 10_000_000, 0)], cfg, times)
    w = w[:, 0] / MSS
    # below the BDP the window limits the sender: slow start doubles it per round trip as before
    assert list(w[:4]) == [2, 4, 8, 16], w


# ------------------------------------------------------------------------ per-flow vs persistent
def test_per_flow_connections_restart_alpha_and_slow_start(make_fabric, h):
    # a long marked flow 0 -> 2, then a second flow on the same pair at 3 ms
    flows = [(0, 2, 1_000_000, 0), (1, 2, 1_000_000, 0), (0, 2, 400_000, 3_000_000)]
    k = {"kmin_bytes": "20KB", "kmax_bytes": "20KB", "pmax": 1.0}
    out = {}
    for persistent in (False, True):
        fab = make_fabric(_star(3), h.flows(flows),
                          _cfg(red=k, slow_start=True, persistent_connections=persistent))
        fab.run_until(2_999_000)
        before = fab.flow_records()
        assert before.loc[0, "finished"]
        fab.run_until(3_000_500)  # the new flow has started, none of its ACKs is back yet
        out[persistent] = fab.flow_records().loc[2]
    assert out[False]["cc_alpha"] == 1.0 and out[False]["window_bytes"] == 10 * MSS
    assert out[True]["cc_alpha"] < 0.5  # alpha carried over from the marked flow
    assert out[True]["window_bytes"] != 10 * MSS


# --------------------------------------------------------------------------- lean model and errors
def test_options_that_are_off_change_nothing(make_fabric, h):
    rng = np.random.default_rng(5)
    n = 60
    flows = [(int(rng.integers(0, 3)), 3, int(rng.integers(1_000, 100_000)), int(t))
             for t in np.sort(rng.integers(0, 2_000_000, n))]
    k = {"kmin_bytes": "20KB", "kmax_bytes": "20KB", "pmax": 1.0}
    recs = []
    for cfg in (_cfg(red=k), _cfg(red=k, min_rto_ns="1us", initial_rto_ns="2us", initial_cwnd_packets=1,
                                  ssthresh_bytes="5KB", delayed_ack_timeout_ns="1us")):
        fab = make_fabric(_star(4), h.flows(flows), cfg)
        assert fab.run("1s")
        recs.append(fab.flow_records()[["finish_ns", "window_bytes", "retransmitted_bytes"]].to_numpy())
    np.testing.assert_array_equal(recs[0], recs[1])


def test_python_defaults_are_the_attribute_defaults():
    spec = tcp_host_knobs()
    assert set(spec) == {"slow_start", "initial_cwnd_packets", "ssthresh_bytes", "handshake", "rto_estimate",
                         "min_rto_ns", "initial_rto_ns", "max_rto_ns", "delayed_ack", "delayed_ack_timeout_ns",
                         "cwnd_limited_growth"}
    defaults = DctcpParams()
    for name, s in spec.items():
        assert getattr(defaults, name) == s.default, name


@pytest.mark.parametrize(("dctcp", "field"), [
    ({"initial_cwnd_packets": 0}, "fabric.dctcp.initial_cwnd_packets"),
    ({"initial_cwnd_packets": 1001}, "fabric.dctcp.initial_cwnd_packets"),
    ({"initial_cwnd_packets": 2.5}, "fabric.dctcp.initial_cwnd_packets"),
    ({"ssthresh_bytes": "-1KB"}, "fabric.dctcp.ssthresh_bytes"),
    ({"handshake": "yes"}, "fabric.dctcp.handshake"),
    ({"min_rto_ns": 0}, "fabric.dctcp.min_rto_ns"),
    ({"min_rto_ns": "2s"}, "fabric.dctcp.min_rto_ns"),  # above the initial RTO (1 s)
    ({"max_rto_ns": "500ms"}, "fabric.dctcp.initial_rto_ns"),  # initial RTO above it
    ({"delayed_ack_timeout_ns": "soon"}, "fabric.dctcp.delayed_ack_timeout_ns"),
    ({"slow_start": True, "initial_window": "10KB"}, "fabric.dctcp.initial_window"),
])
def test_bad_values_are_refused_naming_the_field(dctcp, field):
    with pytest.raises(ConfigError) as e:
        FabricConfig.preset("dctcp", dctcp=dctcp).to_cpp()
    assert e.value.field == field


def test_options_need_the_dctcp_host_and_per_packet_acks():
    with pytest.raises(ConfigError) as e:
        FabricConfig.preset("hpcc", dctcp={"slow_start": True}).to_cpp()
    assert e.value.field == "fabric.dctcp.slow_start"
    with pytest.raises(ConfigError) as e:
        FabricConfig.preset("hpcc", dctcp={"cwnd_limited_growth": True}).to_cpp()
    assert e.value.field == "fabric.dctcp.cwnd_limited_growth"
    with pytest.raises(ConfigError) as e:
        FabricConfig.preset("dctcp", ack_interval_packets=2, dctcp={"delayed_ack": True}).to_cpp()
    assert e.value.field == "fabric.dctcp.delayed_ack"


def test_the_dctcp_linux_fabric_config_is_the_linux_host_of_the_one_home():
    import yaml

    from ecngym.configs import CONFIG_DIR
    from ecngym.sim_backend.tcp_hosts import LINUX_HOST_DCTCP

    doc = yaml.safe_load((CONFIG_DIR / "fabric" / "dctcp_linux.yaml").read_text())
    assert doc == {"preset": "dctcp", "dctcp": dict(LINUX_HOST_DCTCP)}
    cfg = FabricConfig.from_dict(doc)
    assert cfg.dctcp.slow_start and cfg.dctcp.cwnd_limited_growth and cfg.dctcp.min_window == 2000


def test_linux_host_dctcp_overrides_and_leaves_out_a_key_given_none():
    from ecngym.sim_backend.tcp_hosts import LINUX_HOST_DCTCP, linux_host_dctcp

    opts = linux_host_dctcp(delayed_ack=None, min_rto_ns="5ms")
    assert "delayed_ack" not in opts and opts["min_rto_ns"] == "5ms"
    assert {k: v for k, v in opts.items() if k != "min_rto_ns"} == {
        k: v for k, v in LINUX_HOST_DCTCP.items() if k != "delayed_ack"}
    cfg = FabricConfig.preset("dctcp", dctcp=opts)
    assert not cfg.dctcp.delayed_ack and cfg.dctcp.cwnd_limited_growth
