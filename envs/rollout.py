"""Run a controller on an environment for one episode, with its inference accounting."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pandas as pd

from ecngym.envs.view import actuation_wall_s
from ecngym.validation import Whole, check

#: The inference accounting :func:`run_episode` adds to every summary, each also per simulated second.
ACCOUNTING_KEYS = ("decisions", "forward_passes", "flops", "act_wall_s", "actuation_wall_s")


def accounting_metric_names() -> list[str]:
    """The summary keys of the inference accounting: :data:`ACCOUNTING_KEYS` and their ``_per_sim_s``.

    A controller's :class:`~ecngym.agents.inference.InferenceCounter` may add counts of its own
    (``extra``), not listed here.
    """
    return [*ACCOUNTING_KEYS, *(f"{key}_per_sim_s" for key in ACCOUNTING_KEYS)]


def run_episode(env: Any, controller: Any, seed: int | None = None,
                on_step: Callable[[int, float, dict[str, Any]], None] | None = None,
                act_times: list[float] | None = None,
                ) -> tuple[dict[str, Any], pd.DataFrame, float]:
    """Play one episode; the controller acts every ``controller.interval_steps`` steps.

    ``interval_steps`` is read again after every decision, so a controller may change its own
    period as it goes. A controller with an ``observe(observation, info)`` method sees every
    step's outcome (also those between its decisions), e.g. to average telemetry over its own
    period. Its per-step records, if it keeps any, are in ``controller.log`` afterwards (see
    :class:`~ecngym.baselines.controller.Controller`).

    The summary gains the controller's **inference accounting** (docs: algorithms/laecn.md §3.8 [OURS], the
    paper's "CPU overhead" proxy), for every controller, learned or not:

    * ``decisions``: agent decisions (a learned controller counts one per agent per interval;
      others one per ``act`` call);
    * ``forward_passes`` / ``flops``: network evaluations (per agent) and their dense-layer FLOPs
      (0 for controllers without a network); learned controllers may add their own counts
      (LAECN: ``policy_forward_passes``);
    * ``act_wall_s``: wall time spent in ``act`` and ``observe`` (inference, feature grouping, the
      controller's own logic), without the time the fabric takes to apply knobs the controller
      sets through :class:`~ecngym.envs.view.EnvView` (``set_aqm``, ``set_pfc``): that is
      ``actuation_wall_s``, kept apart because the ECN action's own application runs inside
      ``env.step`` and is no controller's cost either;
    * the same per simulated second: ``decisions_per_sim_s``, ``forward_passes_per_sim_s``,
      ``flops_per_sim_s``, ``act_wall_s_per_sim_s``, ``actuation_wall_s_per_sim_s``.

    Args:
        env: The env.
        controller: A :class:`ecngym.baselines.Controller`.
        seed: The episode seed (``env.reset(seed=...)``).
        on_step: Called after every step with (step index, reward, info), e.g. to record telemetry.
        act_times: If given, each ``act`` call's own wall seconds (as counted in ``act_wall_s``)
            are appended to it.

    Returns:
        (summary, flow records, undiscounted return).

    Raises:
        ConfigError: Naming ``controller.interval_steps`` if, at a decision, it is not a whole
            number ≥ 1 (0 or 2.5 were taken as 1 and 2).
    """
    obs, info = env.reset(seed=seed)
    controller.reset(env)
    observe = getattr(controller, "observe", None)
    total, step, action, next_decision = 0.0, 0, None, 0
    calls, act_wall = 0, 0.0
    actuation_start = actuation_wall_s(env)

    def own_seconds(start: float, actuation_before: float) -> float:
        """Wall seconds since ``start`` less what the fabric spent applying EnvView knobs."""
        return time.perf_counter() - start - (actuation_wall_s(env) - actuation_before)

    while True:
        if step >= next_decision or action is None:
            before, start = actuation_wall_s(env), time.perf_counter()
            action = controller.act(obs, info)
            spent = own_seconds(start, before)
            act_wall += spent
            if act_times is not None:
                act_times.append(spent)
            calls += 1
            period = check("controller.interval_steps", getattr(controller, "interval_steps", 1), Whole(1))
            next_decision = step + int(period)
        obs, reward, terminated, truncated, info = env.step(action)
        if observe is not None:  # the controller's own per-step work counts as its cost too
            before, start = actuation_wall_s(env), time.perf_counter()
            observe(obs, info)
            act_wall += own_seconds(start, before)
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
            counts.update(act_wall_s=act_wall, actuation_wall_s=actuation_wall_s(env) - actuation_start)
            summary.update(counts)
            for key in ACCOUNTING_KEYS:
                summary[f"{key}_per_sim_s"] = counts[key] / sim_s
            return summary, info["flow_records"], total
