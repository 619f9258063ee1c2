"""Run a controller on an environment for one episode."""

from __future__ import annotations

from typing import Any

import pandas as pd


def run_episode(env: Any, controller: Any, seed: int | None = None) -> tuple[dict[str, Any], pd.DataFrame, float]:
    """Play one episode; the controller acts every ``controller.interval_steps`` steps.

    A controller with an ``observe(observation, info)`` method sees every step's outcome (also
    those between its decisions), e.g. to average telemetry over its own period. Its per-step
    records, if it keeps any, are in ``controller.log`` afterwards (see
    :class:`~ecngym.baselines.controller.Controller`).

    Returns:
        (summary, flow records, undiscounted return).
    """
    obs, info = env.reset(seed=seed)
    controller.reset(env)
    every = max(1, int(getattr(controller, "interval_steps", 1)))
    observe = getattr(controller, "observe", None)
    total, step, action = 0.0, 0, None
    while True:
        if step % every == 0 or action is None:
            action = controller.act(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        if observe is not None:
            observe(obs, info)
        total += reward
        step += 1
        if terminated or truncated:
            return info["summary"], info["flow_records"], total
