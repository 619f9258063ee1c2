"""The HPCC model's other congestion controls: DCQCN + window, rate-based DCTCP, TIMELY, HPCC.

Each replays the reference's own config (``config_<A|C>_<cc>.txt``, shipped with the package)
through :func:`load_hpcc_experiment` and compares with the reference's FCT output.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from ecngym.sim_backend import FabricConfig, topology
from ecngym.sim_backend.data import hpcc_reference_path
from ecngym.sim_backend.hpcc_config import load_hpcc_experiment
from ecngym.sim_backend.hpcc_reference import START_OFFSET_NS, scenario
from ecngym.sim_backend.metrics import SIZE_BUCKETS, slowdown_table

#: reference run name -> (our cc, window) as from_hpcc_config reads its config
CCS = {"dcqcn_vwin": ("dcqcn", True), "dctcp": ("dctcp_rate", True), "timely": ("timely", False),
       "hp": ("hpcc", True)}


def _experiment(sc: str, cc: str):
    return load_hpcc_experiment(hpcc_reference_path(f"config_{sc}_{cc}.txt"))


def _reference(sc: str, cc: str) -> pd.DataFrame:
    return dataclasses.replace(scenario(sc), fct_file=f"{sc}_{cc}_fct.txt").reference_fct()


def _replay(make_fabric, exp, seed=1, until=None):
    fab = make_fabric(exp.topology, exp.flows, exp.config.updated({"seed": seed}))
    if until is None:
        assert fab.run(exp.stop_ns)
    else:
        fab.run_until(until)
    return fab.flow_records()


@pytest.mark.parametrize("cc", list(CCS))
def test_each_reference_config_selects_its_congestion_control(cc):
    exp = _experiment("A", cc)
    assert (exp.config.cc, exp.config.window.enabled) == CCS[cc]


#: replay horizon (after the 2 s warm-up) within which every finished flow matches the reference
#: to the nanosecond. TIMELY and HPCC react from a flow's first RTT on, and in A the window keeps
#: every queue below the DCQCN / DCTCP marking thresholds, so these horizons lie well beyond the
#: first feedback: 279 (dcqcn_vwin, dctcp), 352 (timely) and 166 (hp) of the 605 flows.
EXACT_UNTIL = {"dcqcn_vwin": 4_700_000, "dctcp": 4_700_000, "timely": 6_000_000, "hp": 3_000_000}
EXACT_FLOWS = {"dcqcn_vwin": 279, "dctcp": 279, "timely": 352, "hp": 166}


@pytest.mark.parametrize("cc", list(CCS))
def test_scenario_a_flows_before_feedback_acts_match_the_reference_to_the_ns(make_fabric, cc):
    until = START_OFFSET_NS + EXACT_UNTIL[cc]
    ours = _replay(make_fabric, _experiment("A", cc), until=until)
    ref = _reference("A", cc)
    ref["start_ns"] += START_OFFSET_NS
    key = ["src", "dst", "size_bytes", "start_ns"]
    merged = ref.merge(ours[[*key, "fct_ns"]], on=key, suffixes=("_ref", ""))
    done = merged[merged["start_ns"] + merged["fct_ns_ref"] < until]
    assert len(done) == EXACT_FLOWS[cc]
    np.testing.assert_array_equal(done["fct_ns"], done["fct_ns_ref"])


def _median_tables(make_fabric, sc, cc, seeds):
    exp = _experiment(sc, cc)
    tables = []
    for seed in seeds:
        rec = _replay(make_fabric, exp, seed)
        assert rec["finished"].all()
        tables.append(slowdown_table(rec))
    return {b: {s: float(np.median([t.loc[b, s] for t in tables])) for s in ("median", "p99")}
            for b in SIZE_BUCKETS}


def _assert_within_bounds(ours, ref, label):
    for b in SIZE_BUCKETS:
        assert ours[b]["median"] == pytest.approx(ref.loc[b, "median"], rel=0.15), (label, b, "median")
        assert ours[b]["p99"] == pytest.approx(ref.loc[b, "p99"], rel=0.30), (label, b, "p99")


@pytest.mark.parametrize("cc", list(CCS))
def test_scenario_a_completes_and_matches_the_reference_slowdowns(make_fabric, cc):
    _assert_within_bounds(_median_tables(make_fabric, "A", cc, [1]), slowdown_table(_reference("A", cc)), cc)


@pytest.mark.slow
@pytest.mark.parametrize("sc", ["A", "C"])
@pytest.mark.parametrize("cc", list(CCS))
def test_five_seed_slowdowns_within_15_and_30_percent_of_the_reference(make_fabric, sc, cc):
    _assert_within_bounds(_median_tables(make_fabric, sc, cc, range(1, 6)),
                          slowdown_table(_reference(sc, cc)), f"{sc} {cc}")


# ---------------------------------------------------------------------------- behaviour

def _hpcc_like(cc: str, **overrides) -> FabricConfig:
    """The reference's settings for one CC (its scenario-A config) with overrides."""
    return _experiment("A", cc).config.updated(overrides)


def _sample(fab, until_ns, step_ns, port):
    """(time, queue bytes at `port`, tx bytes of `port` in the step, flow records) every step."""
    out = []
    fab.read_telemetry()
    t = fab.now_ns
    while t < until_ns:
        t += step_ns
        fab.run_until(t)
        tel = fab.read_telemetry()
        out.append((t, int(tel["queue_bytes"][port]), int(tel["tx_bytes"][port]), fab.flow_records()))
    return out


def test_hpcc_keeps_a_16_to_1_incast_queue_near_zero_at_high_utilisation(make_fabric, h):
    topo = topology.incast_star(hosts=17)
    flows = h.flows([(s, 16, 20_000_000, 0) for s in range(16)])
    fab = make_fabric(topo, flows, _hpcc_like("hp"))
    port = h.port_towards(fab, 16)
    samples = _sample(fab, 1_000_000, 10_000, port)
    steady = samples[20:]  # after 200 us
    queue = np.array([q for _, q, _, _ in steady])
    # busy fraction of the link: 1094 B packets take 87 whole ns (ns-3.36's truncation), not 87.52
    busy = np.array([tx for _, _, tx, _ in steady]) / 1094 * 87 / 10_000
    assert max(q for _, q, _, _ in samples) > 200_000  # the line-rate start builds a queue ...
    assert np.median(queue) <= 2_200 and queue.max() < 10_000  # ... that HPCC drains to ~2 packets
    # eta = 0.95 bounds u = tx / B + min(q, q') / (B T): what the queue takes of u is missing from
    # tx (the next test), so the link runs a little below 95 % (README: busy 94.0 %)
    assert 0.92 <= np.mean(busy) <= 0.96


@pytest.mark.parametrize("senders", [2, 16])
def test_hpcc_incast_rests_at_its_fixed_point_and_the_queue_term_is_the_utilisation_it_misses(senders):
    from ecngym.perf.fabric import hpcc_incast

    r = hpcc_incast(senders=senders)
    # the senders' own U (read from the controllers) sits where R = R_c eta / U + R_AI rests for
    # N equal flows: U = eta + N R_AI / B (0.9508 for 2, 0.9564 for 16): the update loop is exact
    assert r["u_estimate"] == pytest.approx(r["u_fixed_point"], abs=0.002)
    if senders == 2:
        # no standing queue: the wire carries all of U, at or above eta (pacing and the window lose
        # nothing), so a shortfall at 16 senders is the queue term alone
        assert r["queue_median_bytes"] == 0 and r["queue_term"] < 0.002
        assert r["utilisation"] >= 0.95
    else:
        # 16 paced senders keep ~2 packets queued; min(q, q') / W takes ~1.2 % of U off the wire
        assert 0.005 < r["queue_term"] < 0.02
        assert r["utilisation"] == pytest.approx(r["u_estimate"] - r["queue_term"])


def test_timely_rate_falls_as_the_rtt_rises(make_fabric, h):
    topo = topology.incast_star(hosts=9)
    incast = h.flows([(s, 8, 20_000_000, 0) for s in range(8)])
    spread = h.flows([(s, (s + 4) % 8, 20_000_000, 0) for s in range(8)])
    cfg = _hpcc_like("timely")
    fab = make_fabric(topo, incast, cfg)
    samples = _sample(fab, 600_000, 20_000, h.port_towards(fab, 8))
    delay_us = np.array([q * 8 / 100e9 * 1e6 for _, q, _, _ in samples])  # queueing delay at the bottleneck
    rates = np.array([r["rate_bps"].max() for *_, r in samples])
    # TIMELY updates once per window of data: the first update saw an RTT below T_low (increase,
    # rates stay at line rate) while the queue of 8 line-rate senders grew; the next one, an RTT far
    # above T_high: every rate falls to the floor
    assert (rates[:5] == 100e9).all() and delay_us[4] > 500
    assert rates[-1] == 1e9 and (np.diff(rates) <= 0).all()
    fab = make_fabric(topo, spread, cfg)  # the same flows without a shared bottleneck: the RTT
    fab.run_until(600_000)  # stays at its base, below T_low, and every rate at line rate
    assert (fab.flow_records()["rate_bps"] == 100e9).all()


def test_dcqcn_window_bounds_inflight_bytes_to_the_window(make_fabric, h):
    topo = topology.incast_star(hosts=9)
    flows = h.flows([(s, 8, 5_000_000, 0) for s in range(8)])
    cfg = _hpcc_like("dcqcn_vwin")
    fab = make_fabric(topo, flows, cfg)
    samples = _sample(fab, 300_000, 1_000, h.port_towards(fab, 8))
    bdp = 52_000  # base RTT 4160 ns x 100 Gbps, the largest over host pairs (GLOBAL_T 1)
    inflight = np.array([r["inflight_bytes"].to_numpy() for *_, r in samples])
    window = np.array([r["window_bytes"].to_numpy() for *_, r in samples])
    rate = np.array([r["rate_bps"].to_numpy() for *_, r in samples])
    np.testing.assert_array_equal(window, (bdp * rate.astype(np.uint64) // np.uint64(100e9)).clip(1))
    assert (inflight <= window + 1000).all()  # a packet goes out only while inflight < window
    assert inflight.max() >= bdp - 1000
    assert samples[-1][3]["cc_utilisation"].isna().all()  # only HPCC keeps a utilisation estimate
    # without the window, 8 line-rate senders put far more than one BDP each in flight
    fab = make_fabric(topo, flows, cfg.updated({"window": {"enabled": False}}))
    samples = _sample(fab, 100_000, 1_000, h.port_towards(fab, 8))
    assert max(r["inflight_bytes"].max() for *_, r in samples) > 4 * bdp
