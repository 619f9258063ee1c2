"""PRED (Li et al., ToN 2025) sensitivity: λ unit x connections x T_QLA in real RTTs.

Three things the paper leaves open or that our reading had to fix (docs: algorithms/pred.md §1.2):
λ's unit (per packet: Eq. 1 then gives the paper's queues; per MB: the §II-A worked example),
whether its simulated flows reuse persistent connections or open one each (§5.1 "the same
approach"), and what its "RTT" is (Fig. 25 states 0.08 ms; our 10 µs star's base RTT is shorter).
The sweeps call the reproduction's builders (:mod:`ecngym.reproduce.pred`) with T_QLA = 5, 10, 20
base RTTs of the topology and T_FCS = 1.25 base RTTs (one env step = one T_QLA slot):

* ``queue``: 16-to-1 WebSearch Poisson at 90 % (seeds 1-3, mean): PRED's steady queue against ECN
  K = 70 packets (the paper's comparator) and Only-FCS (paper: 15, 25, 23 packets). Holds: PRED's
  queue below ECN's at goodput within 5 %; near the paper: PRED within ±30 % of 15 packets and
  Only-FCS within ±30 % of 23.
* ``workload``: 18-to-1, WL1 -> WL2 -> WL1 (Fig. 26): λ_QLA falls, rises, falls.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ecngym.reproduce import pred as paper
from ecngym.reproduce.sensitivity.core import Sweep, mean, ratio, run_points, where_holds

TITLE = "PRED (Li et al., ToN 2025): λ unit x connections x T_QLA (real RTTs); 16-to-1 queue, λ tracking"

UNITS = ("packet", "mb")
CONNECTIONS = ("persistent", "per_flow")
T_QLA_RTTS = (5, 10, 20)
SEEDS = (1, 2, 3)
PAPER_QUEUE_PKTS = {"PRED": 15, "Only-FCS": 23, "ECN": 25}


def base_rtt_ns(senders: int) -> int:
    """The base RTT of the reproduction's ``senders`` -> 1 star (10 Gbps, 10 µs links)."""
    from ecngym.envs.view import EnvView

    with tempfile.TemporaryDirectory() as tmp:
        env = paper.pred_env(None, senders, 1, Path(tmp))
        try:
            env.reset(seed=1)
            return int(EnvView(env).base_rtt_ns)
        finally:
            env.close()


def _controller(scheme: str, unit: str, t_qla_ns: int, rtt_ns: int) -> Any:
    from ecngym.baselines import StaticEcnController

    if scheme == "ECN":
        return StaticEcnController(paper.STATIC_ECN, name="static_ecn_k70")
    mode = "pred" if scheme == "PRED" else "only_fcs"
    return paper.pred_controller(mode, t_qla=f"{t_qla_ns}ns", rtt=f"{rtt_ns}ns", lambda_unit=unit)


def queue_point(scheme: str, unit: str, connections: str, t_qla_ns: int, rtt_ns: int, seed: int,
                duration_ms: float) -> dict[str, float]:
    """Steady (last three quarters) queue (packets) and goodput (Gbps) of one 16-to-1 WebSearch run."""
    interval_ns = t_qla_ns if scheme == "PRED" else 400_000
    steps = int(round(duration_ms * 1e6 / interval_ns))
    flows = paper.workload_trace([paper.QUEUE_WORKLOAD], duration_ms, senders=16, load=paper.QUEUE_LOAD, seed=seed)
    out = paper.run_on(_controller(scheme, unit, t_qla_ns, rtt_ns), flows, 16, steps, seed=seed,
                       persistent=connections == "persistent", env_extra={"interval": f"{interval_ns}ns"})
    steady = out["steps"].iloc[steps // 4:]
    return {"queue_pkts": float(steady["queue_bytes"].mean()) / paper.PKT_BYTES,
            "goodput_gbps": float(steady["goodput_gbps"].mean())}


def workload_point(unit: str, connections: str, t_qla_ns: int, rtt_ns: int, phase_ms: float) -> list[list[float]]:
    """λ_QLA (per MB) at the start and end of WL1, WL2, WL1 (18-to-1, the reproduction's trace)."""
    phases = ["pred_workload1", "pred_workload2", "pred_workload1"]
    phase_steps = int(round(phase_ms * 1e6 / t_qla_ns))
    result = paper.run_on(_controller("PRED", unit, t_qla_ns, rtt_ns), paper.workload_trace(phases, phase_ms), 18,
                          phase_steps * len(phases), persistent=connections == "persistent",
                          env_extra={"interval": f"{t_qla_ns}ns"})
    return [list(p) for p in paper.lambda_trajectory(result, phase_steps, len(phases))]


def run(quick: bool = False, jobs: int = 1) -> list[Sweep]:
    """Both sweeps; ``quick``: T_QLA 5 RTT, persistent connections, both units, one seed, 40 ms."""
    conns, rtts, seeds = (("persistent",), (5,), (1,)) if quick else (CONNECTIONS, T_QLA_RTTS, SEEDS)
    duration_ms, phase_ms = (40.0, 20.0) if quick else (1000.0, 200.0)
    rtt16, rtt18 = base_rtt_ns(16), base_rtt_ns(18)
    common = {"rtt_ns": rtt16, "duration_ms": duration_ms}
    pts = [{"scheme": "ECN", "unit": "-", "connections": c, "t_qla_ns": 5 * rtt16, "seed": s, **common}
           for c in conns for s in seeds]
    pts += [{"scheme": "Only-FCS", "unit": u, "connections": c, "t_qla_ns": 5 * rtt16, "seed": s, **common}
            for u in UNITS for c in conns for s in seeds]
    pts += [{"scheme": "PRED", "unit": u, "connections": c, "t_qla_ns": k * rtt16, "seed": s, **common}
            for u in UNITS for c in conns for k in rtts for s in seeds]
    wl_pts = [{"unit": u, "connections": c, "t_qla_ns": k * rtt18, "rtt_ns": rtt18, "phase_ms": phase_ms}
              for u in UNITS for c in conns for k in rtts]
    res = run_points(queue_point, pts, jobs)
    wl = run_points(workload_point, wl_pts, jobs)
    return [_queue_sweep(pts, res, conns, rtts, rtt16, duration_ms, len(seeds)),
            _workload_sweep(wl_pts, wl, rtt18, phase_ms)]


def _mean_of(pts: list[dict[str, Any]], res: list[dict[str, float]], key: str, **match: Any) -> float:
    return mean([r[key] for p, r in zip(pts, res, strict=True) if all(p[k] == v for k, v in match.items())])


def _queue_sweep(pts: list[dict[str, Any]], res: list[dict[str, float]], conns: tuple[str, ...],
                 rtts: tuple[int, ...], rtt_ns: int, duration_ms: float, seeds: int) -> Sweep:
    sweep = Sweep("queue", "PRED keeps the 16-to-1 queue below static ECN's, Only-FCS between "
                  "(paper: PRED 15, Only-FCS 23, static 25 packets; Fig. 19)",
                  f"DCTCP 16-to-1, 10 Gbps, 10 us links (base RTT {rtt_ns / 1e3:.1f} us), WebSearch Poisson 90 %, "
                  f"{duration_ms:g} ms, mean of {seeds} seed(s); ECN K = 70 packets; a packet is "
                  f"{paper.PKT_BYTES} B", ["lambda unit", "connections", "T_QLA RTTs"],
                  ["PRED pkts", "Only-FCS pkts", "ECN K=70 pkts", "PRED/ECN", "PRED Gbps", "ECN Gbps"],
                  note="holds: PRED's queue below ECN's at goodput within 5 %; near paper: PRED within +-30 % of "
                       "15 packets and Only-FCS within +-30 % of 23 (Only-FCS and ECN have no T_QLA: the same "
                       "figure on each T_QLA row)")
    for unit in UNITS:
        for c in conns:
            ecn_q, ecn_g = (_mean_of(pts, res, k, scheme="ECN", connections=c) for k in ("queue_pkts", "goodput_gbps"))
            fcs_q = _mean_of(pts, res, "queue_pkts", scheme="Only-FCS", unit=unit, connections=c)
            for k in rtts:
                match = {"scheme": "PRED", "unit": unit, "connections": c, "t_qla_ns": k * rtt_ns}
                q, g = (_mean_of(pts, res, key, **match) for key in ("queue_pkts", "goodput_gbps"))
                near = abs(q / 15 - 1) <= 0.3 and abs(fcs_q / 23 - 1) <= 0.3
                sweep.rows.append({"lambda unit": unit, "connections": c, "T_QLA RTTs": k, "PRED pkts": q,
                                   "Only-FCS pkts": fcs_q, "ECN K=70 pkts": ecn_q, "PRED/ECN": ratio(q, ecn_q),
                                   "PRED Gbps": g, "ECN Gbps": ecn_g,
                                   "holds": bool(q < ecn_q and abs(ratio(g, ecn_g) - 1) <= 0.05),
                                   "near_paper": bool(near)})
    by_unit = {u: (sum(r["near_paper"] for r in sweep.rows if r["lambda unit"] == u),
                   sum(r["lambda unit"] == u for r in sweep.rows)) for u in UNITS}
    sweep.summary = (where_holds(sweep, "lambda unit", "connections", "T_QLA RTTs") + "; near the paper's queues: "
                     + ", ".join(f"per {u} at {n} of {m} points" for u, (n, m) in by_unit.items()))
    return sweep


def _workload_sweep(pts: list[dict[str, Any]], res: list[list[list[float]]], rtt_ns: int, phase_ms: float) -> Sweep:
    sweep = Sweep("workload", "λ_QLA falls under WL1, rises under WL2, falls again under WL1 (Fig. 26)",
                  f"DCTCP 18-to-1, 10 Gbps, 10 us links (base RTT {rtt_ns / 1e3:.1f} us), load {paper.WL_LOAD}, "
                  f"{phase_ms:g} ms per phase, one seed", ["lambda unit", "connections", "T_QLA RTTs"],
                  ["WL1 per MB", "WL2 per MB", "WL1 again per MB", "phases the paper's way"],
                  note="λ_QLA in per MB at the start -> end of each phase; holds (and near paper): all three "
                       "phases go the paper's way")
    for p, ((a0, a1), (b0, b1), (c0, c1)) in zip(pts, res, strict=True):
        ways = [a1 < a0, b1 > b0, c1 < c0]
        sweep.rows.append({"lambda unit": p["unit"], "connections": p["connections"],
                           "T_QLA RTTs": round(p["t_qla_ns"] / rtt_ns), "WL1 per MB": f"{a0:.3g}->{a1:.3g}",
                           "WL2 per MB": f"{b0:.3g}->{b1:.3g}", "WL1 again per MB": f"{c0:.3g}->{c1:.3g}",
                           "phases the paper's way": sum(ways), "holds": all(ways), "near_paper": all(ways)})
    sweep.summary = where_holds(sweep, "lambda unit", "connections", "T_QLA RTTs")
    return sweep
