"""Rewards, chosen by name. Per-port values are averaged over the controlled ports.

``acc``  (ACC / LAECN, specs/laecn.md eq. 2 without the trigger penalty)
    r = ω · U + (1 − ω) · Q_step(q̄), U = utilisation (at most 1), Q_step = ACC's step mapping
    (1 for a queue under 0.25 BDP, falling to 0 beyond 4 BDP; the polarity choice of laecn.md §3.2).
``pred`` (PRED's utility, specs/pred.md §3.3)
    r = β · U + (1 − β) · Φ(q̄), Φ(q) = 1 for q ≤ q_left, then linear down to 0 at q_max.
``fct``  (episode level)
    0 at every step but the last; at the last, −mean FCT slowdown of the flows that finished.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ecngym.envs.config import RewardConfig
from ecngym.error import ConfigError, check_range
from ecngym.units import parse_bytes

REWARDS = ("acc", "pred", "fct")


class RewardFunction:
    """Computes the per-step reward.

    Args:
        cfg: Reward configuration.
        step_queue_map: The ACC step mapping of queue bytes (from the observation builder).

    Raises:
        ConfigError: On an unknown name or out-of-range weight.
    """

    def __init__(self, cfg: RewardConfig, step_queue_map: Callable[[np.ndarray], np.ndarray]) -> None:
        if cfg.name not in REWARDS:
            raise ConfigError("env.reward.name", f"got {cfg.name!r}, allowed: {list(REWARDS)}")
        self.cfg = cfg
        self.omega = float(check_range("env.reward.omega", float(cfg.omega), 0.0, 1.0))
        self.beta = float(check_range("env.reward.beta", float(cfg.beta), 0.0, 1.0))
        self.q_left = parse_bytes(cfg.q_left, "env.reward.q_left")
        self.q_max = parse_bytes(cfg.q_max, "env.reward.q_max")
        if self.q_max <= self.q_left:
            raise ConfigError("env.reward.q_max", f"must exceed q_left ({self.q_left} B)")
        self.step_queue_map = step_queue_map

    def phi(self, queue_bytes: np.ndarray) -> np.ndarray:
        """PRED's Φ: 1 up to q_left, linear to 0 at q_max."""
        return np.clip((self.q_max - queue_bytes) / (self.q_max - self.q_left), 0.0, 1.0)

    def per_port(self, utilization: np.ndarray, queue_bytes: np.ndarray) -> np.ndarray:
        """Per-port step reward for the acc / pred rewards (zeros for fct)."""
        u = np.minimum(utilization, 1.0)
        if self.cfg.name == "acc":
            return self.omega * u + (1 - self.omega) * self.step_queue_map(queue_bytes)
        if self.cfg.name == "pred":
            return self.beta * u + (1 - self.beta) * self.phi(queue_bytes)
        return np.zeros_like(u)

    def episode_end(self, records: pd.DataFrame) -> float:
        """The fct reward's terminal value: −mean slowdown of finished flows (0 if none)."""
        if self.cfg.name != "fct":
            return 0.0
        done = records.loc[records["finished"], "slowdown"]
        return -float(done.mean()) if len(done) else 0.0
