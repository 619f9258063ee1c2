"""PRED's QLA on FCS (Li et al., ToN 2025; specs/pred.md §6.2, §6.6, §2 Obs. 2).

Two claims on small DCTCP scenarios of one 10 Gbps switch with 20 µs links (base RTT ≈ 83 µs,
close to the paper's 80 µs), PRED as ``configs/controller/pred.yaml`` (T_QLA = 5 RTT, T_FCS =
1.25 RTT, β = 0.4, Δλ = 0.025 per MB):

* **λ follows the workload** (§6.6 Fig. 26, §2 Obs. 2): 18 senders → 1 receiver, Poisson flows at
  ``WL_LOAD`` of the receiver link; WL1 = 3-6 KB flows, WL2 = 30-600 KB (workloads/cdf). The paper:
  under WL1 λ falls quickly, at the switch to WL2 it rises quickly, and falls again under WL1. Our
  bar: λ_QLA of the bottleneck port ends each phase lower (WL1) / higher (WL2) than it began.
* **Queue, 16-to-1 long flows** (§6.2 Fig. 19): static-threshold schemes ≈ 25 packets, PRED ≈ 15,
  Only-FCS ≈ 23. Our bar (issue 9): PRED / static RED within ±30 % of 15 / 25 = 0.6 at throughput
  within 5 %, and Only-FCS between them. "Static RED" is RED with the slope PRED starts from at
  N = 16 divided by N (λ = 0.1 per MB over minK = 10 KB, maxK = 500 KB): the paper does not give
  its static RED's parameters [OURS].
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ecngym.reproduce.core import Claim

PAPER_ID = "pred"
TITLE = "PRED (Li et al., ToN 2025): QLA tracks the workload (Fig. 26); 16-to-1 queue vs static RED (Fig. 19)"

LINK = {"link_rate": "10Gbps", "link_delay": "20us"}
WL_LOAD = 0.8
STATIC_RED = ["10KB", "500KB", 0.1 * 0.49]  # lambda = 0.1 per MB over [10 KB, 500 KB] [OURS]


def workload_trace(phases: list[str], phase_ms: float, senders: int = 18, load: float = WL_LOAD,
                   seed: int = 1) -> pd.DataFrame:
    """Poisson flows from hosts 0..senders-1 to host ``senders``, one flow-size workload per phase."""
    from ecngym.workloads.distributions import get_distribution

    rng = np.random.default_rng(seed)
    rows = []
    for i, name in enumerate(phases):
        dist = get_distribution(name)
        rate = load * 10e9 / (8 * dist.mean_bytes)  # flows per second into the receiver
        t = i * phase_ms * 1e6
        end = (i + 1) * phase_ms * 1e6
        while True:
            t += rng.exponential(1e9 / rate)
            if t >= end:
                break
            rows.append((int(rng.integers(0, senders)), senders, int(dist.sample(rng, 1)[0]), int(t)))
    return pd.DataFrame(rows, columns=["src", "dst", "size_bytes", "start_ns"])


def pred_env(flows: pd.DataFrame | None, senders: int, steps: int, workdir: Path, **extra: Any) -> Any:
    """A DCTCP incast env of ``senders`` → 1 at 10 Gbps replaying ``flows`` (or long flows if None)."""
    from ecngym.envs import EcnTuningEnv
    from ecngym.workloads import Trace

    kwargs: dict[str, Any] = {"topology": {"kind": "incast_star", "hosts": senders + 1, **LINK},
                              "fabric": {"preset": "dctcp"}, "episode_steps": steps, **extra}
    if flows is None:
        kwargs["workload"] = {"workload": "none", "incast": {"degree": 0},
                              "long_lived": {"flows": senders, "receiver": senders}}
    else:
        path = workdir / f"trace_{Trace.from_flows(flows).hash[:12]}.parquet"
        Trace.from_flows(flows).save(path)
        kwargs["trace"] = str(path)
    return EcnTuningEnv(**kwargs)


def run_on(controller: Any, flows: pd.DataFrame | None, senders: int, steps: int, seed: int = 1) -> dict[str, Any]:
    """One episode; the bottleneck port's queue and goodput per step, the controller log."""
    with tempfile.TemporaryDirectory() as tmp:
        env = pred_env(flows, senders, steps, Path(tmp))
        extra = controller.env_overrides(env) if hasattr(controller, "env_overrides") else {}
        if extra:  # e.g. a static setting that is not a template, Only-QLA's continuous RED
            env.close()
            env = pred_env(flows, senders, steps, Path(tmp), **extra)
        steps_log: list[dict[str, float]] = []
        try:
            obs, info = env.reset(seed=seed)
            controller.reset(env)
            bottleneck = int(env.unwrapped.ports[_receiver_port(env, senders)])
            interval_ns = int(env.unwrapped.scenario.interval_ns)
            every = max(1, int(controller.interval_steps))
            action = None
            for step in range(steps):
                if step % every == 0 or action is None:
                    action = controller.act(obs, info)
                obs, _, _, truncated, info = env.step(action)
                if hasattr(controller, "observe"):
                    controller.observe(obs, info)
                tel = info["telemetry"]
                span = tel["interval_end_ns"] - tel["interval_start_ns"]
                steps_log.append({"time_ns": int(info["time_ns"]),
                                  "queue_bytes": float(tel["mean_queue_bytes"][bottleneck]),
                                  "goodput_gbps": float(tel["tx_data_bytes"][bottleneck]) * 8 / span})
        finally:
            env.close()
    return {"steps": pd.DataFrame(steps_log), "log": pd.DataFrame(getattr(controller, "log", [])),
            "bottleneck": bottleneck, "interval_ns": interval_ns}


def _receiver_port(env: Any, receiver: int) -> int:
    """Row (in ``env.ports``) of the switch port facing host ``receiver``."""
    sc = env.unwrapped.scenario
    topo = sc.topology
    peers = np.empty(2 * len(topo.link_a), dtype=np.int64)
    peers[0::2], peers[1::2] = topo.link_b, topo.link_a
    return int(np.flatnonzero(peers[sc.ports] == receiver)[0])


def lambda_trajectory(result: dict[str, Any], phase_steps: int, phases: int) -> list[tuple[float, float]]:
    """(λ_QLA at the start, at the end) of each phase, at the bottleneck port."""
    log = result["log"]
    log = log[log["port"] == result["bottleneck"]]
    interval = result["interval_ns"]
    out = []
    for i in range(phases):
        lo, hi = i * phase_steps * interval, (i + 1) * phase_steps * interval
        phase = log[(log["time_ns"] > lo) & (log["time_ns"] <= hi)]
        out.append((float(phase["lambda_qla_per_mb"].iloc[0]), float(phase["lambda_qla_per_mb"].iloc[-1]))
                   if len(phase) else (float("nan"), float("nan")))
    return out


def workload_claims(phase_ms: float) -> list[Claim]:
    """λ under WL1 → WL2 → WL1."""
    from ecngym.baselines.registry import build_controller

    phases = ["pred_workload1", "pred_workload2", "pred_workload1"]
    flows = workload_trace(phases, phase_ms)
    pred = build_controller({"_target_": "ecngym.baselines.pred.PredController"})
    with tempfile.TemporaryDirectory() as tmp:
        probe = pred_env(None, 18, 1, Path(tmp))  # builds no fabric: for the step length only
        interval_ns = int(probe.unwrapped.scenario.interval_ns)
        probe.close()
    phase_steps = int(round(phase_ms * 1e6 / interval_ns))
    result = run_on(pred, flows, 18, phase_steps * len(phases))
    traj = lambda_trajectory(result, phase_steps, len(phases))
    setting = f"DCTCP 18-to-1, 10 Gbps, load {WL_LOAD}, {phase_ms:g} ms per phase"
    metric = "lambda_QLA (per MB) at the bottleneck port, phase start -> end"
    (a0, a1), (b0, b1), (c0, c1) = traj
    why_wl1 = ("not reproduced: in our DCTCP fabric a 3-6 KB flow ends inside its first window, so marking "
               "hardly changes the goodput R (set by the arrivals) while Φ(q̄) still rewards the higher-λ "
               "trial's slightly shorter queue")
    why_wl2 = ("not reproduced: within one 5-RTT slot the queue still answers the previous slot's trial "
               "(DCTCP's α needs ~16 RTTs to follow a marking change), so the A/B verdicts are unreliable; "
               "see the sens_* claims (T_QLA = 20 RTT)")
    return [
        Claim("wl1_down", "under WL1 (3-6 KB) lambda falls", setting, metric, "falls", f"{a0:.3f} -> {a1:.3f}",
              bool(a1 < a0), bool(a1 < a0), "" if a1 < a0 else why_wl1),
        Claim("wl2_up", "at the switch to WL2 (30-600 KB) lambda rises", setting, metric, "rises",
              f"{b0:.3f} -> {b1:.3f}", bool(b1 > b0), bool(b1 > b0), "" if b1 > b0 else why_wl2),
        Claim("wl1_back_down", "back under WL1 lambda falls again", setting, metric, "falls",
              f"{c0:.3f} -> {c1:.3f}", bool(c1 < c0), bool(c1 < c0), "" if c1 < c0 else why_wl1),
    ]


def queue_claims(steps: int) -> list[Claim]:
    """16-to-1 long flows: PRED vs static RED vs Only-FCS."""
    from ecngym.baselines import StaticEcnController
    from ecngym.baselines.registry import build_controller

    runs = {
        "RED": StaticEcnController(STATIC_RED, name="static_red"),
        "PRED": build_controller({"_target_": "ecngym.baselines.pred.PredController"}),
        "Only-FCS": build_controller({"_target_": "ecngym.baselines.pred.PredController", "mode": "only_fcs"}),
    }
    res = {}
    for name, controller in runs.items():
        r = run_on(controller, None, 16, steps)
        steady = r["steps"].iloc[len(r["steps"]) // 4:]  # skip the first quarter (start-up)
        res[name] = (float(steady["queue_bytes"].mean()), float(steady["goodput_gbps"].mean()))
    pkt = 1000 + 48  # payload + headers of one data packet (bytes) for "packets"
    q = {k: v[0] / pkt for k, v in res.items()}
    g = {k: v[1] for k, v in res.items()}
    ratio = q["PRED"] / q["RED"]
    same_rate = abs(g["PRED"] / g["RED"] - 1) <= 0.05
    setting = f"DCTCP 16-to-1 long flows, 10 Gbps, {steps} steps of 5 RTT"
    return [
        Claim("queue_pred_vs_red", "PRED keeps the 16-to-1 queue below static RED's (15 vs 25 packets)", setting,
              "mean bottleneck queue PRED / RED", 0.6, ratio, bool(ratio < 1),
              bool(0.42 <= ratio <= 0.78 and same_rate),
              f"queue (packets) RED {q['RED']:.1f}, PRED {q['PRED']:.1f}, Only-FCS {q['Only-FCS']:.1f}; goodput "
              f"Gbps RED {g['RED']:.2f}, PRED {g['PRED']:.2f}, Only-FCS {g['Only-FCS']:.2f}. Absolute queues are "
              "far above the paper's 15 / 25 packets: its static RED's parameters, packet size and buffer are not "
              "given, ours is the gentle λ = 0.1/MB PRED starts from"),
        Claim("only_fcs_between", "Only-FCS settles between PRED and static RED (~23 packets)", setting,
              "Only-FCS queue (packets)", 23, q["Only-FCS"], bool(q["PRED"] <= q["Only-FCS"] <= q["RED"]),
              bool(q["PRED"] <= q["Only-FCS"] <= q["RED"]),
              "" if q["PRED"] <= q["Only-FCS"] else "not reproduced: Only-FCS (λ_QLA fixed at 0.1/MB, times N) holds "
              "a shorter queue than PRED, whose QLA walks λ down to λ_min and into minK mode here: within a "
              "5-RTT slot the queue still answers the previous slot's trial (see the sens_* claims)"),
    ]


def tqla_sensitivity(phase_ms: float, steps: int, t_qla: str = "20rtt") -> list[Claim]:
    """Our sensitivity run, not a paper claim: the same scenarios with a longer QLA slot.

    DCTCP's α (g = 1/16) needs ~16 RTTs to follow a marking change, so within a 5-RTT slot the
    queue still answers the previous slot's trial; a longer slot lets each slot measure its own.
    """
    from ecngym.baselines import StaticEcnController
    from ecngym.baselines.registry import build_controller

    target = {"_target_": "ecngym.baselines.pred.PredController", "t_qla": t_qla}
    queues = {}
    for name, controller in (("RED", StaticEcnController(STATIC_RED, name="static_red")),
                             ("PRED", build_controller(target)),
                             ("Only-FCS", build_controller({**target, "mode": "only_fcs"}))):
        r = run_on(controller, None, 16, steps)
        queues[name] = float(r["steps"]["queue_bytes"].iloc[len(r["steps"]) // 4:].mean()) / (1000 + 48)
    phases = ["pred_workload1", "pred_workload2", "pred_workload1"]
    with tempfile.TemporaryDirectory() as tmp:
        probe = pred_env(None, 18, 1, Path(tmp))
        phase_steps = int(round(phase_ms * 1e6 / probe.unwrapped.scenario.interval_ns))
        probe.close()
    r = run_on(build_controller(target), workload_trace(phases, phase_ms), 18, phase_steps * 3)
    (a0, a1), (b0, b1), (c0, c1) = lambda_trajectory(r, phase_steps, 3)
    between = queues["PRED"] <= queues["Only-FCS"] <= queues["RED"]
    follows = [a1 < a0, b1 > b0, c1 < c0]
    note = "ours, not the paper's setting (T_QLA = 5 RTT): " + (tqla_sensitivity.__doc__ or "").split("\n\n")[1]
    return [
        Claim(f"sens_queue_{t_qla}", f"[sensitivity] 16-to-1 with T_QLA = {t_qla}: RED > Only-FCS > PRED",
              "DCTCP 16-to-1 long flows, 10 Gbps", "queue (packets) RED / Only-FCS / PRED", "25 / 23 / 15",
              f"{queues['RED']:.0f} / {queues['Only-FCS']:.0f} / {queues['PRED']:.0f}", bool(between), bool(between),
              " ".join(note.split())),
        Claim(f"sens_workload_{t_qla}", f"[sensitivity] λ_QLA with T_QLA = {t_qla} under WL1 -> WL2 -> WL1",
              f"DCTCP 18-to-1, load {WL_LOAD}, {phase_ms:g} ms per phase", "λ_QLA per phase, start -> end",
              "falls / rises / falls", f"{a0:.3f}->{a1:.3f} / {b0:.3f}->{b1:.3f} / {c0:.3f}->{c1:.3f}",
              bool(all(follows)), bool(all(follows)),
              "" if all(follows) else "phases that go the paper's way: " + ", ".join(
                  name for name, ok in zip(("WL1", "WL2", "WL1 again"), follows, strict=True) if ok)),
    ]


def run(quick: bool = False) -> list[Claim]:
    """The workload-tracking and the 16-to-1 queue claims, then our T_QLA sensitivity run."""
    phase_ms, steps = (40.0, 150) if quick else (120.0, 600)
    return [*workload_claims(phase_ms), *queue_claims(steps), *tqla_sensitivity(phase_ms, steps)]
