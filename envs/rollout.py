"""Run a controller on an environment for one episode."""

from __future__ import annotations

from typing import Any

import pandas as pd


def run_episode(env: Any, controller: Any, seed: int | None = None) -> tuple[dict[str, Any], pd.DataFrame, float]:
    """Play one episode; the controller acts every ``controller.interval_steps`` steps.

    Returns:
        (summary, flow records, undiscounted return).
    """
    obs, info = env.reset(seed=seed)
    controller.reset(env)
    every = max(1, int(getattr(controller, "interval_steps", 1)))
    total, step, action = 0.0, 0, None
    while True:
        if step % every == 0 or action is None:
            action = controller.act(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        step += 1
        if terminated or truncated:
            return info["summary"], info["flow_records"], total
