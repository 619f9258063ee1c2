"""ByteTuning (Tan et al., IEEE TCC) against the DCQCN-based static setting (specs/bytetuning.md §5.2).

Setting: RoCEv2 (DCQCN + PFC, the HPCC fabric preset) with long-lived flows: a 2-to-1 and a
16-to-1 incast on one 100 Gbps switch, and an 8-to-1 incast across the 4 x 4 leaf-spine. ByteTuning
(``configs/controller/bytetuning.yaml``: SA over Kmin, Kmax, Pmax, PFC headroom and α per layer,
Eq. 14 with β = 0.5) tunes online from the DCQCN-based setting (5 KB / 200 KB / 1 % at 40 GbE,
scaled to 100 Gbps), then its x_best and the DCQCN setting each run a fresh episode on the same
trace and seed, and we compare the time-averaged queue (summed over switch ports) and the switch
throughput. The paper (§6.2, 2-to-1 on a 25/100/200 GbE testbed, 1 s telemetry): −39.56 % queue
and +5.81 % throughput vs the DCQCN-based setting (−74…−79 % vs vendor / experience settings). Our
bar (issue 9): queue lower at throughput within 5 % of the default. The greedy variant (the public
tuner's pattern search) runs beside SA on the 2-to-1.

Absolute Gbps and cells are testbed-specific (§5 [ours]); the telemetry period here is ~1 ms of
simulated time (50 steps of 5 RTTs), not the paper's 1 s.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ecngym.reproduce.core import Claim

PAPER_ID = "bytetuning"
TITLE = "ByteTuning (Tan et al., IEEE TCC): SA watermark tuning vs the DCQCN-based setting (§6.2)"

PAPER_QUEUE_CHANGE_PCT = -39.56   # §6.2, vs DCQCN-based, 2-to-1
PAPER_THROUGHPUT_CHANGE_PCT = 5.81


def scenario(kind: str, steps: int) -> tuple[str | None, dict[str, Any]]:
    """(gym id or None for EcnTuningEnv, keyword overrides) of a long-flow incast scenario."""
    none = {"workload": "none", "incast": {"degree": 0}}
    if kind == "leaf_spine":
        return "ecngym/RoceLeafSpine-v0", {"episode_steps": steps,
                                           "workload": {**none, "long_lived": {"flows": 8, "receiver": 0}}}
    n = int(kind.split("-")[0])
    return None, {"topology": {"kind": "incast_star", "hosts": n + 1}, "episode_steps": steps,
                  "workload": {**none, "long_lived": {"flows": n, "receiver": n}}}


def run_controller(controller: Any, kind: str, steps: int, seed: int = 1) -> tuple[dict[str, Any], pd.DataFrame]:
    """One episode of ``controller`` on the scenario; (summary, controller log)."""
    import gymnasium as gym

    import ecngym.envs  # noqa: F401
    from ecngym.envs import EcnTuningEnv
    from ecngym.envs.rollout import run_episode

    env_id, kwargs = scenario(kind, steps)
    kwargs.update(controller.env_overrides(None))
    env = gym.make(env_id, **kwargs) if env_id else EcnTuningEnv(**kwargs)
    try:
        summary, _, _ = run_episode(env, controller, seed=seed)
    finally:
        env.close()
    return summary, pd.DataFrame(controller.log)


def tune_and_compare(kind: str, variant: str, steps: int, window_steps: int) -> dict[str, float]:
    """Tune on ``kind``, then replay the DCQCN start and x_best; queue / throughput changes in %."""
    from ecngym.baselines.bytetuning import ByteTuningController
    from ecngym.baselines.registry import build_controller

    cfg = {"_target_": "ecngym.baselines.bytetuning.ByteTuningController", "variant": variant,
           "window_steps": window_steps, "settle_steps": max(1, window_steps // 10)}
    if variant == "sa":  # the shipped config's compressed schedule
        cfg.update(iterations=2, cooling=0.65, temperature_scale=1e-3)
    else:
        cfg.update(step=0.2, max_rounds=100)
    tuner = build_controller(cfg)
    _, log = run_controller(tuner, kind, steps)
    out: dict[str, Any] = {"measurements": len(log)}
    for name, start in (("dcqcn", "dcqcn"), ("tuned", tuner.best_vector)):
        hold = ByteTuningController(variant="hold", start=start, window_steps=window_steps, settle_steps=0)
        _, hold_log = run_controller(hold, kind, steps)
        steady = hold_log.iloc[len(hold_log) // 5:]  # skip the start-up fifth
        out[f"{name}_queue_cells"] = float(steady["queue_cells"].mean())
        out[f"{name}_throughput_gbps"] = float(steady["throughput_gbps"].mean())
    # Eq. 14 of the two settings under one normaliser (the better T, the lower Q of the pair)
    t = np.array([out["dcqcn_throughput_gbps"], out["tuned_throughput_gbps"]])
    q = np.array([out["dcqcn_queue_cells"], out["tuned_queue_cells"]])
    f = 0.5 * t / t.max() + 0.5 * (q.min() + 1) / (q + 1)
    out.update(f_dcqcn=float(f[0]), f_tuned=float(f[1]),
               queue_change_pct=100 * (q[1] / q[0] - 1), throughput_change_pct=100 * (t[1] / t[0] - 1))
    return out


def run(quick: bool = False) -> list[Claim]:
    """Tune SA on 2-to-1, 16-to-1 and the leaf-spine, greedy on 2-to-1; compare with DCQCN's setting."""
    steps, window = (1200, 20) if quick else (5000, 50)
    kinds = ("2-to-1",) if quick else ("2-to-1", "16-to-1", "leaf_spine")
    claims = []
    for kind in kinds:
        w = window if kind != "leaf_spine" else window // 2
        r = tune_and_compare(kind, "sa", steps if kind != "leaf_spine" else steps // 2, w)
        held = bool(r["throughput_change_pct"] >= -5)
        claims.append(Claim(
            f"sa_{kind}", "ByteTuning's final setting lowers the queue vs DCQCN-based at ~equal throughput",
            f"RoCEv2 {kind} long flows, 100 Gbps, {r['measurements']} measurements",
            "queue change %, throughput change %",
            f"{PAPER_QUEUE_CHANGE_PCT} / +{PAPER_THROUGHPUT_CHANGE_PCT}",
            f"{r['queue_change_pct']:.1f} / {r['throughput_change_pct']:+.2f}",
            bool(r["queue_change_pct"] < 0), bool(r["queue_change_pct"] < 0 and held),
            f"queue {r['dcqcn_queue_cells']:.0f} -> {r['tuned_queue_cells']:.0f} cells, throughput "
            f"{r['dcqcn_throughput_gbps']:.1f} -> {r['tuned_throughput_gbps']:.1f} Gbps; Eq. 14 (common normaliser) "
            f"{r['f_dcqcn']:.3f} -> {r['f_tuned']:.3f}"
            + ("" if r["queue_change_pct"] < 0 else "; not reproduced: single ~1 ms windows of DCQCN's "
               "oscillating queue are noisy, and the search's best-scoring vector does not hold up when replayed")))
        claims.append(Claim(
            f"objective_{kind}", "the objective (Eq. 14) improves over the DCQCN default", f"RoCEv2 {kind}",
            "Eq. 14 of the replayed settings, dcqcn -> tuned (max 1)", "improves",
            f"{r['f_dcqcn']:.3f} -> {r['f_tuned']:.3f}",
            bool(r["f_tuned"] > r["f_dcqcn"]), bool(r["f_tuned"] > r["f_dcqcn"])))
    g = tune_and_compare("2-to-1", "greedy", steps, window)
    claims.append(Claim(
        "greedy_2-to-1", "the public tuner's greedy search (compared)",
        f"RoCEv2 2-to-1, {g['measurements']} measurements",
        "queue change %, throughput change %", "(no paper figure)",
        f"{g['queue_change_pct']:.1f} / {g['throughput_change_pct']:+.2f}", bool(g["queue_change_pct"] < 0),
        bool(g["queue_change_pct"] < 0 and g["throughput_change_pct"] >= -5),
        "greedy probes every coordinate both ways per round (2 x knobs measurements per round): fewer moves per "
        "episode than SA"))
    return claims
