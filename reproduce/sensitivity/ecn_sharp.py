"""ECN# (Zhang et al., TCC 2022) sensitivity: incast buffer x query count, and load for RTT variation.

The paper leaves open the buffer of its incast simulation (§6.4: its RED-Tail holds ~182 packets
and drops nothing, so the buffer is larger than the §5.3 script's 250 packets) and runs its
RTT-variation claims at one load. The sweeps call the reproduction's own builders
(:mod:`ecngym.reproduce.ecn_sharp`) with everything else as there:

* ``incast_queue`` / ``incast_drops``: buffer {250, 500, 1000, 2000} packets x query count {25,
  50, 100, 200}, seeds 1-3 (the mean): standing queue ECN# / RED-Tail before the queries (paper 8
  / 182) and drops in the 10 ms from them, ECN# against CoDel (paper 0 vs 125; holds at ECN# <=
  0.5 x CoDel's drops, CoDel dropping).
* ``rtt_variation``: load 50-90 % of the receiver link, seeds 1-3: ECN#'s standing queue below
  RED-Tail's and its short-flow p99 FCT below RED-Tail's (paper -37.2 %).
"""

from __future__ import annotations

from typing import Any

from ecngym.reproduce import ecn_sharp as paper
from ecngym.reproduce.sensitivity.core import Sweep, mean, ratio, run_points, where_holds

TITLE = "ECN# (Zhang et al., TCC 2022): incast buffer x queries; load for the RTT-variation claims"

#: the reproduction's policy parameters (ecngym.reproduce.ecn_sharp.run)
INCAST_POLICIES = {
    "tail": ("red", {"kmin_bytes": 275_000, "kmax_bytes": 275_000, "pmax": 1.0}),
    "sharp": ("ecn_sharp", {"ins_target_ns": 220_000, "pst_interval_ns": 220_000, "pst_target_ns": 10_000}),
    "codel": ("codel", {"target_ns": 10_000, "interval_ns": 240_000}),
}
RTT_POLICIES = {
    "tail": ("red", {"kmin_bytes": 250_000, "kmax_bytes": 250_000, "pmax": 1.0}),
    "sharp": ("ecn_sharp", {"ins_target_ns": 200_000, "pst_interval_ns": 200_000, "pst_target_ns": 85_000}),
}
BUFFERS_PKTS = (250, 500, 1000, 2000)
QUERIES = (25, 50, 100, 200)
LOADS = (0.5, 0.6, 0.7, 0.8, 0.9)
SEEDS = (1, 2, 3)


def incast_point(scheme: str, buffer_pkts: int, queries: int, seed: int, at_ns: int) -> dict[str, float]:
    """One incast run (the reproduction's ``run_incast``) of ``scheme`` at one grid point."""
    policy, params = INCAST_POLICIES[scheme]
    flows = paper.incast_flows(queries=queries, at_ns=at_ns, seed=seed)
    return paper.run_incast(policy, flows, at_ns, buffer_pkts=buffer_pkts, **params)


def rtt_point(scheme: str, load: float, seed: int, duration_ns: int) -> dict[str, float]:
    """One RTT-variation run (the reproduction's ``run_rtt_variation``) of ``scheme`` at ``load``."""
    policy, params = RTT_POLICIES[scheme]
    return paper.run_rtt_variation(policy, paper.rtt_variation_trace(duration_ns, load=load, seed=seed), **params)


def run(quick: bool = False, jobs: int = 1) -> list[Sweep]:
    """Both sweeps; ``quick``: 2 x 1 incast points and 2 loads, one seed, short runs."""
    buffers, queries, loads, seeds = ((250, 2000), (50,), (0.5, 0.9), (1,)) if quick else \
        (BUFFERS_PKTS, QUERIES, LOADS, SEEDS)
    at_ns = 300_000_000 if quick else 4_000_000_000
    duration_ns = 200_000_000 if quick else 1_500_000_000
    inc_pts = [{"scheme": s, "buffer_pkts": b, "queries": q, "seed": seed, "at_ns": at_ns}
               for b in buffers for q in queries for seed in seeds for s in INCAST_POLICIES]
    rtt_pts = [{"scheme": s, "load": ld, "seed": seed, "duration_ns": duration_ns}
               for ld in loads for seed in seeds for s in RTT_POLICIES]
    inc = run_points(incast_point, inc_pts, jobs)
    rtt = run_points(rtt_point, rtt_pts, jobs)
    return [*_incast_sweeps(inc_pts, inc, buffers, queries, at_ns, len(seeds)),
            _rtt_sweep(rtt_pts, rtt, loads, duration_ns, len(seeds))]


def _by(points: list[dict[str, Any]], results: list[dict[str, float]], **match: Any) -> list[dict[str, float]]:
    return [r for p, r in zip(points, results, strict=True) if all(p[k] == v for k, v in match.items())]


def _incast_sweeps(pts: list[dict[str, Any]], res: list[dict[str, float]], buffers: tuple[int, ...],
                   queries: tuple[int, ...], at_ns: int, seeds: int) -> list[Sweep]:
    setting = (f"as the reproduction's incast (DCTCP 16-to-1, data-mining 90 % + queries U(3,60) KB at "
               f"{at_ns / 1e9:g} s, RTT 80-240 us, IW 10, 1400 B packets), mean of {seeds} seed(s)")
    queue = Sweep("incast_queue", "ECN#'s standing queue a small fraction of RED-Tail's (8 vs 182 pkts, §6.4)",
                  setting, ["buffer_pkts", "queries"], ["ECN# pkts", "RED-Tail pkts", "ratio"],
                  note="the standing queue is measured before the queries, so the query count cannot change it "
                       "(only the seeds' background does); near paper: ratio within +-30 % of 8/182")
    drops = Sweep("incast_drops", "ECN# drops nothing where CoDel drops (0 vs 125, §6.4)", setting,
                  ["buffer_pkts", "queries"], ["ECN# drops", "CoDel drops", "RED-Tail drops"],
                  note="holds: CoDel drops and ECN# drops at most 0.5x as many; near paper: ECN# drops none")
    for b in buffers:
        for q in queries:
            m = {scheme: {k: mean([r[k] for r in _by(pts, res, scheme=scheme, buffer_pkts=b, queries=q)])
                          for k in ("standing_queue_pkts", "incast_drops")} for scheme in INCAST_POLICIES}
            qr = ratio(m["sharp"]["standing_queue_pkts"], m["tail"]["standing_queue_pkts"])
            queue.rows.append({"buffer_pkts": b, "queries": q, "ECN# pkts": m["sharp"]["standing_queue_pkts"],
                               "RED-Tail pkts": m["tail"]["standing_queue_pkts"], "ratio": qr,
                               "holds": bool(qr < 1), "near_paper": bool(abs(qr - 8 / 182) <= 0.3 * 8 / 182)})
            ds, dc = m["sharp"]["incast_drops"], m["codel"]["incast_drops"]
            drops.rows.append({"buffer_pkts": b, "queries": q, "ECN# drops": ds, "CoDel drops": dc,
                               "RED-Tail drops": m["tail"]["incast_drops"], "holds": bool(dc > 0 and ds <= 0.5 * dc),
                               "near_paper": bool(ds == 0 and dc > 0)})
    for s in (queue, drops):
        s.summary = where_holds(s, "buffer_pkts", "queries")
    return [queue, drops]


def _rtt_sweep(pts: list[dict[str, Any]], res: list[dict[str, float]], loads: tuple[float, ...],
               duration_ns: int, seeds: int) -> Sweep:
    sweep = Sweep("rtt_variation", "ECN# shortens the standing queue and short-flow p99 FCT vs RED-Tail "
                  "(-37.2 %, §6.1)",
                  f"as the reproduction's RTT variation (DCTCP 7-to-1, WebSearch, RTT 70-210 us long tail), "
                  f"{duration_ns / 1e9:g} s of arrivals, mean of {seeds} seed(s)", ["load"],
                  ["queue ECN#/Tail", "short p99 change", "short avg change", "large avg change"],
                  note="holds: queue ratio < 1 and short-flow p99 change < 0; near paper: p99 change within "
                       "+-30 % of -37.2 %")
    for ld in loads:
        m = {scheme: {k: mean([r[k] for r in _by(pts, res, scheme=scheme, load=ld)])
                      for k in ("mean_queue_kb", "short_p99_us", "short_avg_us", "large_avg_us")}
             for scheme in RTT_POLICIES}
        qr = ratio(m["sharp"]["mean_queue_kb"], m["tail"]["mean_queue_kb"])
        p99 = ratio(m["sharp"]["short_p99_us"], m["tail"]["short_p99_us"]) - 1
        sweep.rows.append({"load": ld, "queue ECN#/Tail": qr, "short p99 change": p99,
                           "short avg change": ratio(m["sharp"]["short_avg_us"], m["tail"]["short_avg_us"]) - 1,
                           "large avg change": ratio(m["sharp"]["large_avg_us"], m["tail"]["large_avg_us"]) - 1,
                           "holds": bool(qr < 1 and p99 < 0), "near_paper": bool(abs(p99 + 0.372) <= 0.3 * 0.372)})
    sweep.summary = where_holds(sweep, "load")
    return sweep

