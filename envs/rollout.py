"""Run a controller on an environment for one episode, with its inference accounting."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pandas as pd


def run_episode(env: Any, controller: Any, seed: int | None = None,
                on_step: Callable[[int, float, dict[str, Any]], None] | None = None,
                ) -> tuple[dict[str, Any], pd.DataFrame, float]:
    """Play one episode; the controller acts every ``controller.interval_steps`` steps.

    ``interval_steps`` is read again after every decision, so a controller may change its own
    period as it goes. A controller with an ``observe(observation, info)`` method sees every
    step's outcome (also those between its decisions), e.g. to average telemetry over its own
    period. Its per-step records, if it keeps any, are in ``controller.log`` afterwards (see
    :class:`~ecngym.baselines.controller.Controller`).

    The summary gains the controller's **inference accounting** (laecn.md §3.8 [OURS], the
    paper's "CPU overhead" proxy), for every controller, learned or not:

    * ``decisions``: agent decisions (a learned controller counts one per agent per interval;
      others one per ``act`` call);
    * ``forward_passes`` / ``flops``: network evaluations (per agent) and their dense-layer FLOPs
      (0 for controllers without a network); learned controllers may add their own counts
      (LAECN: ``policy_forward_passes``);
    * ``act_wall_s``: wall time spent in ``act`` and ``observe`` (inference, feature grouping, the
      controller's own logic);
    * the same per simulated second: ``decisions_per_sim_s``, ``forward_passes_per_sim_s``,
      ``flops_per_sim_s``, ``act_wall_s_per_sim_s``.

    Args:
        env: The env.
        controller: A :class:`ecngym.baselines.Controller`.
        seed: The episode seed (``env.reset(seed=...)``).
        on_step: Called after every step with (step index, reward, info), e.g. to record telemetry.

    Returns:
        (summary, flow records, undiscounted return).
    """
    obs, info = env.reset(seed=seed)
    controller.reset(env)
    observe = getattr(controller, "observe", None)
    total, step, action, next_decision = 0.0, 0, None, 0
    calls, act_wall = 0, 0.0
    while True:
        if step >= next_decision or action is None:
            start = time.perf_counter()
            action = controller.act(obs, info)
            act_wall += time.perf_counter() - start
            calls += 1
            next_decision = step + max(1, int(getattr(controller, "interval_steps", 1)))
        obs, reward, terminated, truncated, info = env.step(action)
        if observe is not None:  # the controller's own per-step work counts as its cost too
            start = time.perf_counter()
            observe(obs, info)
            act_wall += time.perf_counter() - start
        total += reward
        if on_step is not None:
            on_step(step, reward, info)
        step += 1
        if terminated or truncated:
            summary = dict(info["summary"])
            counts = {"decisions": calls, "forward_passes": 0, "flops": 0}
            counter = getattr(controller, "inference", None)
            if counter is not None:
                counts.update(counter.as_dict())
            sim_s = max(float(info["time_ns"]) * 1e-9, 1e-12)
            summary.update(counts, act_wall_s=act_wall)
            for key in ("decisions", "forward_passes", "flops", "act_wall_s"):
                summary[f"{key}_per_sim_s"] = (act_wall if key == "act_wall_s" else counts[key]) / sim_s
            return summary, info["flow_records"], total
