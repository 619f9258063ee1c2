"""Rewards, chosen by name (``env.reward.name``). Per-port values are averaged over the controlled ports.

``acc``  (ACC / LAECN, LAECN §III-C; docs: algorithms/laecn.md §3.4 eq. 2 without LAECN's trigger penalty α)
    r = ω · U + (1 − ω) · Q_step(q̄)

    U = min(utilisation, 1): bytes sent (data and control, headers included) x 8 / (line rate x Δt).
    q̄ = the port's time-averaged data-queue bytes over the interval. Q_step = ACC's step mapping
    (1 for q̄ ≤ 0.25 BDP, 0.8 ≤ 0.5 BDP, 0.6 ≤ 1 BDP, 0.4 ≤ 2 BDP, 0.2 ≤ 4 BDP, else 0; the
    "lower queue is better" polarity of LAECN §III-B; docs: algorithms/laecn.md §3.2; breakpoints in
    ``env.observation``). ω = 0.5.
``pred`` (PRED's utility, PRED §IV-B; docs: algorithms/pred.md §3.3)
    r = β · R / C + (1 − β) · Φ(q̄)

    R / C = min(data bytes sent x 8 / (line rate x Δt), 1) (goodput: payload and data headers,
    no ACK / CNP / PFC frames). Φ(q) = 1 for q ≤ q_left, then linear down to 0 at q_max
    (PRED's [OURS] shape, docs: algorithms/pred.md §3.3; q_left = 15 KB, q_max = PRED's maxK = 500 KB). β = 0.4.
``fct``  (episode level)
    0 at every step but the last; at the last, −(mean FCT slowdown of the episode's flows).
    A flow still running at the end counts with its slowdown so far, max(1, (t_end − start) /
    ideal FCT), a lower bound: an agent cannot gain by starving flows until the episode ends.
``score_dense`` (flow level, every step; :mod:`ecngym.envs.score_reward`)
    −(V_t − V_{t−1}), V_t the mean slowdown so far of the started flows of the score's size range
    (finished ones at their slowdown, running ones at their slowdown so far; at the last step the
    finished ones only, as the score): each flow's contribution paid as it completes, plus a
    potential-based term for the delay running flows accrue. The undiscounted return is exactly
    −score (``env.reward.score``, default ``slowdown_avg_all``).

The step rewards have one definition: the C++ ``PortFeatureKernel``
(``envs/kernel/port-feature-kernel.h``). :class:`RewardFunction` checks the reward config and
compiles it into the kernel's reward (:meth:`RewardFunction.kernel_reward`), which the env's
:class:`~ecngym.envs.step_kernel.StepKernel` runs every step and
:class:`~ecngym.envs.returns.RewardReturns` runs under
every reward name; :func:`pred_phi` is the kernel's Φ. The tests hold a NumPy transcription as their
oracle (``tests/envs/reference_step.py``). The ``fct`` reward's terminal term, a reduction of the
flow records, is written once, here (:meth:`RewardFunction.episode_end`); ``score_dense``'s per-step
term reads the fabric's flows (:class:`~ecngym.envs.score_reward.ScoreDenseReward`), its per-port
part in the kernel is 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ecngym.envs.config import REWARDS, RewardConfig, number
from ecngym.envs.score_reward import DEFAULT_SCORE, ScoreDenseReward, mean_finished_slowdown
from ecngym.error import ConfigError, check_range
from ecngym.units import parse_bytes

__all__ = ["REWARDS", "RewardFunction", "pred_phi", "slowdown_so_far"]


class RewardFunction:
    """The per-step reward: its config checked, and compiled for the C++ kernel.

    Args:
        cfg: Reward configuration.
        goodput_per_byte: Per controlled port, R / C contributed by one data byte sent in an
            interval (8 / (line rate x Δt)): the ``pred`` reward's goodput scale.

    Raises:
        ConfigError: On an unknown name or out-of-range weight.
    """

    def __init__(self, cfg: RewardConfig, goodput_per_byte: np.ndarray) -> None:
        if cfg.name not in REWARDS:
            raise ConfigError("env.reward.name", f"got {cfg.name!r}, allowed: {list(REWARDS)}")
        self.cfg = cfg
        self.name = cfg.name
        self.omega = float(check_range("env.reward.omega", number("env.reward.omega", cfg.omega), 0.0, 1.0))
        self.beta = float(check_range("env.reward.beta", number("env.reward.beta", cfg.beta), 0.0, 1.0))
        self.q_left = parse_bytes(cfg.q_left, "env.reward.q_left")
        self.q_max = parse_bytes(cfg.q_max, "env.reward.q_max")
        if self.q_max <= self.q_left:
            raise ConfigError("env.reward.q_max", f"must exceed q_left ({self.q_left} B), got {self.q_max} B")
        self.goodput_per_byte = goodput_per_byte
        #: score_dense's score (the mean slowdown its return is minus of); None for the other rewards
        self.score = (cfg.score or DEFAULT_SCORE) if cfg.name == "score_dense" else None

    def flow_reward(self) -> ScoreDenseReward | None:
        """A new per-step flow term (``score_dense``; None for the other rewards), to start with each episode."""
        return ScoreDenseReward(self.score) if self.name == "score_dense" else None

    def kernel_reward(self, layout: dict[str, tuple[int, str]]) -> dict[str, Any]:
        """The reward as the arguments of the C++ ``PortFeatureKernel.set_reward``.

        (``acc``'s step mapping is the kernel's, from the observation's breakpoints and levels.)

        Args:
            layout: :func:`ecngym.sim_backend.fabric.telemetry_layout`.
        """
        from ecngym.sim_backend._fabric import RewardOp

        op = {"fct": RewardOp.ZERO, "score_dense": RewardOp.ZERO, "acc": RewardOp.ACC, "pred": RewardOp.PRED}[self.name]
        weight = self.omega if self.name == "acc" else self.beta
        row_u, kind_u = layout["utilization"]
        row_q, kind_q = layout["mean_queue_bytes"]
        row_tx, kind_tx = layout["tx_data_bytes"]
        return {"op": op, "row_u": row_u, "kind_u": kind_u, "row_q": row_q, "kind_q": kind_q, "row_tx": row_tx,
                "kind_tx": kind_tx, "weight": weight, "one_minus_weight": 1 - weight, "q_max": float(self.q_max),
                "q_span": float(self.q_max - self.q_left),
                "goodput_per_byte": [float(g) for g in self.goodput_per_byte]}

    def episode_end(self, records: pd.DataFrame, end_ns: int) -> float:
        """The ``fct`` reward's terminal value (0 for the other rewards).

        Args:
            records: The episode's flow records.
            end_ns: Simulated time at the end of the episode.

        Returns:
            −mean slowdown over every flow that started, unfinished ones at their slowdown so far.
        """
        if self.name != "fct":
            return 0.0
        return -float(np.mean(slowdown_so_far(records, end_ns))) if len(records) else 0.0

    def flow_return(self, records: pd.DataFrame, end_ns: int) -> float:
        """The sum over an episode of the reward's flow-level terms, from its flow records.

        ``fct``: its terminal term (:meth:`episode_end`); ``score_dense``: −score (its per-step
        terms telescope to it; 0 where no flow of the score's range finished); 0 for the others.

        Args:
            records: The episode's flow records.
            end_ns: Simulated time at the end of the episode.
        """
        if self.name == "score_dense":
            score = mean_finished_slowdown(records, self.score)
            return -score if np.isfinite(score) else 0.0
        return self.episode_end(records, end_ns)


def pred_phi(queue_bytes: np.ndarray, q_left_bytes: float, q_max_bytes: float) -> np.ndarray:
    """PRED's Φ (PRED §IV-B; docs: algorithms/pred.md §3.3 [OURS] shape): 1 up to q_left, linear down to 0 at q_max.

    The ``pred`` reward's Φ, from the C++ kernel (``PortFeatureKernel::PredPhi``), for a controller
    that scores PRED's utility itself (:mod:`ecngym.baselines.pred`).
    """
    from ecngym.sim_backend._fabric import pred_phi as kernel_phi

    return kernel_phi(np.ascontiguousarray(queue_bytes, dtype=np.float64).reshape(-1), q_left_bytes,
                      q_max_bytes).reshape(np.shape(queue_bytes))


def slowdown_so_far(records: pd.DataFrame, end_ns: int) -> np.ndarray:
    """Each started flow's slowdown; unfinished flows at max(1, (end − start) / ideal FCT)."""
    started = records[records["start_ns"] <= end_ns]
    finished = started["finished"].to_numpy(bool)
    elapsed = end_ns - started["start_ns"].to_numpy(np.float64)
    running = np.maximum(1.0, elapsed / started["ideal_fct_ns"].to_numpy(np.float64))
    return np.where(finished, started["slowdown"].to_numpy(np.float64), running)
