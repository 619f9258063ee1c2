"""Our event scheduler (TimingWheelScheduler) runs events in exactly ns-3's order: same results."""

import numpy as np
import pandas as pd
import pytest

from ecngym.error import ConfigError
from ecngym.sim_backend import FabricConfig, _fabric, topology
from ecngym.sim_backend.config import SCHEDULERS
from ecngym.workloads import generate_trace

WHEEL = SCHEDULERS["timing_wheel"]


@pytest.mark.parametrize("horizon_bits", [6, 9, 14])
@pytest.mark.parametrize("seed", [1, 2])
def test_wheel_answers_every_call_as_the_stock_scheduler(horizon_bits, seed):
    # Random Insert / RemoveNext / PeekNext / Remove sequences with same-time bursts, events at the
    # horizon +- 2 ns, beyond it and far away; a 64 ns horizon sends most events through the heap.
    removed = _fabric.check_scheduler_against_stock(WHEEL, horizon_bits, 60_000, seed)
    assert removed > 20_000


@pytest.mark.parametrize("lookahead_min_events", [0, 64])
def test_wheel_orders_by_uid_whatever_order_the_uids_arrive_in(lookahead_min_events):
    # The simulator hands out increasing uids, and the wheel appends those without a comparison;
    # a scheduler must still order any others by (timestamp, uid), as ns-3's do.
    removed = _fabric.check_scheduler_against_stock(WHEEL, 9, 60_000, 3, lookahead_min_events, scrambled_uids=True)
    assert removed > 20_000


@pytest.mark.parametrize("lookahead_min_events", [2, 64])
@pytest.mark.parametrize("horizon_bits", [6, 14])
def test_wheel_looking_ahead_answers_as_the_stock_scheduler_and_reports_the_event_after_next(
        lookahead_min_events, horizon_bits):
    # Removals through RemoveNextAhead (as our simulator core makes them on a large fabric): the
    # same order, and the event it reports ahead is the second of the pending ones.
    removed = _fabric.check_scheduler_against_stock(WHEEL, horizon_bits, 60_000, 5, lookahead_min_events)
    assert removed > 20_000


def test_check_passes_a_stock_scheduler_and_refuses_an_unknown_name():
    assert _fabric.check_scheduler_against_stock(SCHEDULERS["map"], 0, 20_000, 3) > 5_000
    with pytest.raises(ValueError, match="not an ns-3 event scheduler"):
        _fabric.check_scheduler_against_stock("ns3::NoSuchScheduler", 0, 10, 1)


def _flows(n=60, hosts=16, seed=4):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, hosts, n)
    dst = (src + rng.integers(1, hosts, n)) % hosts
    return pd.DataFrame({"src": src, "dst": dst, "size_bytes": rng.integers(1_000, 1_500_000, n),
                         "start_ns": np.sort(rng.integers(0, 150_000, n))})


def _trajectory(make_fabric, scheduler):
    cfg = FabricConfig.preset("hpcc", scheduler=scheduler, ecmp_hash="salted")
    fab = make_fabric(topology.leaf_spine(leaves=4, spines=4, hosts_per_leaf=4), _flows(), cfg, seed=7)
    tels = []
    for _ in range(12):
        fab.advance("15us")
        tels.append(fab.read_telemetry())
    assert fab.run("100ms")
    tels.append(fab.read_telemetry())
    return fab.flow_records(), tels, fab.counters()


@pytest.mark.parametrize("stock", ["priority_queue", "map", "calendar"])
def test_fabric_results_are_bit_identical_on_every_scheduler(make_fabric, stock):
    rec_w, tel_w, cnt_w = _trajectory(make_fabric, "timing_wheel")
    rec_s, tel_s, cnt_s = _trajectory(make_fabric, stock)
    pd.testing.assert_frame_equal(rec_w, rec_s)
    for a, b in zip(tel_w, tel_s, strict=True):
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    events_w, events_s = cnt_w.pop("events"), cnt_s.pop("events")
    assert cnt_w == cnt_s  # same packet-hops, drops, flows
    # ns-3's core runs every port's end of serialisation; ours skips those with nothing to send
    assert events_w < events_s


def test_results_are_bit_identical_when_pfc_pauses_switch_ports(make_fabric):
    # A two-hop incast on 1 MB buffers: the leaf pauses the spines' ports, whose queues then hold
    # packets that may not leave; each end of serialisation there must be run as ns-3 runs it.
    topo = topology.leaf_spine(leaves=4, spines=2, hosts_per_leaf=4)
    flows = pd.DataFrame({"src": range(4, 16), "dst": 0, "size_bytes": 2_000_000, "start_ns": 0})
    runs = []
    for scheduler in ("timing_wheel", "priority_queue"):
        fab = make_fabric(topo, flows, FabricConfig.preset("hpcc", scheduler=scheduler, buffer={"buffer": "1MB"}))
        tels = []
        while fab.counters()["flows_completed"] < len(flows) and fab.now_ns < 50_000_000:
            fab.advance("20us")
            tels.append(fab.read_telemetry())
        runs.append((fab.flow_records(), tels, fab.counters()))
    (rec_w, tel_w, cnt_w), (rec_s, tel_s, cnt_s) = runs
    pd.testing.assert_frame_equal(rec_w, rec_s)
    assert rec_w["finished"].all()
    for a, b in zip(tel_w, tel_s, strict=True):
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    spine_ports = fab.ports.switch_ports("spine")
    assert sum(int(t["pfc_pause_received"][spine_ports].sum()) for t in tel_w) > 0
    assert cnt_w.pop("events") < cnt_s.pop("events") and cnt_w == cnt_s


def test_results_are_bit_identical_on_a_fabric_large_enough_for_the_wheel_to_look_ahead(make_fabric):
    topo = topology.fat_tree(16)
    trace = generate_trace("websearch", load=0.6, hosts=topo.num_hosts, duration="0.1ms", seed=1, progress=False)
    runs = []
    for scheduler in ("timing_wheel", "priority_queue"):
        fab = make_fabric(topo, trace, FabricConfig.preset("hpcc", scheduler=scheduler, seed=1))
        fab.run_until(60_000)
        runs.append((fab.flow_records(), fab.read_telemetry(), fab.counters(), fab.sim.event_list()))
    (rec_w, tel_w, cnt_w, events), (rec_s, tel_s, cnt_s, _) = runs
    assert events["wheel_events"] >= _fabric.TIMING_WHEEL_LOOKAHEAD_MIN_EVENTS  # the look-ahead ran
    pd.testing.assert_frame_equal(rec_w, rec_s)
    for key in tel_w:
        np.testing.assert_array_equal(tel_w[key], tel_s[key], err_msg=key)
    assert cnt_w.pop("events") < cnt_s.pop("events")
    assert cnt_w == cnt_s and cnt_w["data_packet_hops"] > 100_000


def test_default_is_ours_and_bare_loop_runs_on_the_chosen_scheduler():
    assert FabricConfig().scheduler == "timing_wheel"
    assert FabricConfig().to_cpp().scheduler_type_id == WHEEL
    assert _fabric.bare_event_loop_rate(20_000, WHEEL) > 0
    assert _fabric.bare_event_loop_rate(20_000, SCHEDULERS["heap"]) > 0


def test_the_wheel_runs_on_our_simulator_core_and_stock_schedulers_on_ns3s(make_fabric):
    # The bit-identity test above therefore compares ours (scheduler and event loop) with stock ns-3.
    topo = topology.leaf_spine(leaves=2, spines=2, hosts_per_leaf=2)
    for scheduler, impl in [("timing_wheel", "ns3::ecngym::FabricSimulatorImpl"),
                            ("priority_queue", "ns3::DefaultSimulatorImpl"),
                            ("timing_wheel", "ns3::ecngym::FabricSimulatorImpl")]:
        fab = make_fabric(topo, _flows(n=4, hosts=4), FabricConfig.preset("hpcc", scheduler=scheduler), seed=1)
        assert fab.sim.simulator_impl == impl
        assert fab.run("10ms")
        fab.close()


def test_event_list_counts_what_the_wheel_holds(make_fabric):
    topo = topology.leaf_spine(leaves=4, spines=4, hosts_per_leaf=4)
    fab = make_fabric(topo, _flows(), FabricConfig.preset("hpcc"), seed=7)
    fab.advance("20us")
    ev = fab.sim.event_list()
    # pending = wheel + far heap; later flow starts and the retransmission / DCQCN timers are far
    assert ev["pending_events"] == ev["wheel_events"] + ev["far_events"]
    assert ev["wheel_events"] > 0 and ev["far_events"] > 0
    assert 0 <= ev["far_cancelled_events"] <= ev["far_events"]
    assert fab.run("100ms")
    ev = fab.sim.event_list()
    assert ev["far_events"] == ev["far_cancelled_events"]  # only cancelled timers are left ...
    stock = make_fabric(topo, _flows(), FabricConfig.preset("hpcc", scheduler="map"), seed=7)
    assert stock.sim.event_list() == {}  # ... and stock ns-3 has no such counts


@pytest.mark.parametrize("value", ["wheel", "ns3::MapScheduler", 3, None])
def test_unknown_scheduler_names_the_field(value):
    with pytest.raises(ConfigError, match=r"fabric\.scheduler.*timing_wheel"):
        FabricConfig.preset("hpcc", scheduler=value).to_cpp()
