"""ECN and PFC settings changed while the fabric runs take effect from that moment."""

import numpy as np
import pytest

from ecngym.sim_backend import FabricConfig, topology


def _no_backoff_incast(make_fabric, h, senders, size=10**8, **overrides):
    # DCQCN floored at line rate: senders never slow down, so only the switch settings matter.
    cfg = FabricConfig.preset("hpcc", dcqcn={"min_rate": "100Gbps"}, **overrides)
    flows = h.flows([(s, senders, size, 0) for s in range(senders)])
    return make_fabric(topology.incast_star(hosts=senders + 1), flows, cfg)


@pytest.mark.parametrize("mark_at", ["enqueue", "dequeue"])
def test_set_red_changes_marking_from_that_moment(make_fabric, h, mark_at):
    fab = _no_backoff_incast(make_fabric, h, 2, aqm={"all": {"kmin_bytes": "20KB", "kmax_bytes": "200KB", "pmax": 0.5,
                                                             "mark_at_dequeue": mark_at == "dequeue"}})
    b = h.port_towards(fab, 2)
    fab.advance("40us")
    tel = fab.read_telemetry()
    assert tel["ecn_marked_packets"][b] > 0
    assert tel["queue_bytes"][b] > 200_000  # the queue is above Kmax: every packet is being marked
    others_before = fab.get_red()
    fab.set_red([b], kmin="100MB", kmax="100MB", pmax=0.0)
    red = fab.get_red()
    assert red["kmin_bytes"][b] == red["kmax_bytes"][b] == 100_000_000 and red["pmax"][b] == 0.0
    others = np.arange(len(fab.ports)) != b
    for key in ("kmin_bytes", "kmax_bytes", "pmax"):
        np.testing.assert_array_equal(red[key][others], others_before[key][others], err_msg=key)
    fab.advance("1us")  # the very next microsecond already sees the new curve
    tel = fab.read_telemetry()
    assert tel["tx_data_packets"][b] > 0 and tel["ecn_marked_packets"][b] == 0
    fab.advance("40us")
    assert fab.read_telemetry()["ecn_marked_packets"][b] == 0
    fab.set_red([b], kmin=0, kmax=0, pmax=1.0)  # and back on: every packet marked
    fab.advance("10us")
    tel = fab.read_telemetry()
    counted = tel["enqueued_data_packets" if mark_at == "enqueue" else "tx_data_packets"][b]
    assert tel["ecn_marked_packets"][b] == counted > 0


def test_set_red_accepts_one_setting_per_port(make_fabric, h):
    fab = _no_backoff_incast(make_fabric, h, 2, size=10**6)
    ports = fab.ports.switch_ports()
    kmin = np.arange(len(ports), dtype=np.uint64) * 1000
    fab.set_red(ports, kmin=kmin, kmax=kmin + 5000, pmax=np.linspace(0, 1, len(ports)))
    red = fab.get_red()
    np.testing.assert_array_equal(red["kmin_bytes"][ports], kmin)
    np.testing.assert_array_equal(red["kmax_bytes"][ports], kmin + 5000)
    np.testing.assert_allclose(red["pmax"][ports], np.linspace(0, 1, len(ports)))
    assert (red["kmax_bytes"][~fab.ports.is_switch] == 0).all()  # host ports have no curve


def _first_pause_ns(fab, step_ns=1_000, limit_ns=400_000):
    while fab.now_ns < limit_ns:
        fab.advance(step_ns)
        if fab.read_telemetry()["pfc_pause_sent"].sum() > 0:
            return fab.now_ns
    return None


def test_smaller_pfc_alpha_pauses_earlier(make_fabric, h):
    times = {}
    for alpha in (1.0, 0.125, 1 / 64):
        fab = _no_backoff_incast(make_fabric, h, 4, buffer={"buffer": "8MB", "pfc_alpha": alpha})
        times[alpha] = _first_pause_ns(fab)
        assert times[alpha] is not None
    assert times[1 / 64] < times[0.125] < times[1.0]


@pytest.mark.parametrize("alpha", [64, 1.0, 1 / 8, 1 / 1024])
def test_pfc_is_lossless_for_any_alpha(make_fabric, h, alpha):
    fab = _no_backoff_incast(make_fabric, h, 4, size=2_000_000, buffer={"buffer": "1MB", "pfc_alpha": alpha})
    assert fab.run("50ms")
    assert fab.counters()["drops"] == 0
    assert fab.read_telemetry()["pfc_pause_sent"].sum() > 0


def test_set_pfc_mid_run_triggers_pauses(make_fabric, h):
    fab = _no_backoff_incast(make_fabric, h, 4, buffer={"buffer": "8MB", "pfc_alpha": 1.0})
    fab.advance("20us")
    assert fab.read_telemetry()["pfc_pause_sent"].sum() == 0
    fab.set_pfc([0], alpha=1 / 256, headroom="37.5KB")
    fab.advance("5us")
    assert fab.read_telemetry()["pfc_pause_sent"].sum() > 0


def test_set_pfc_mid_run_with_a_larger_alpha_stops_pausing(make_fabric, h):
    fab = _no_backoff_incast(make_fabric, h, 4, buffer={"buffer": "8MB", "pfc_alpha": 1 / 64})
    fab.advance("40us")
    assert fab.read_telemetry()["pfc_pause_sent"].sum() > 0
    fab.set_pfc([0], alpha=8.0, headroom="37.5KB")  # threshold far above what the incast can fill
    fab.advance("20us")  # resumes go out as the paused ingresses drain below the new threshold
    fab.read_telemetry()
    fab.advance("60us")
    tel = fab.read_telemetry()
    assert tel["pfc_pause_sent"].sum() == 0
    assert tel["paused_ns"].sum() == 0
    assert tel["utilization"][h.port_towards(fab, 4)] >= 0.99
