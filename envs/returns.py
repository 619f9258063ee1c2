"""The episode return under every reward, for the benchmark's reward-score correlation.

An episode runs under one reward; :class:`RewardReturns` computes every reward of
:data:`~ecngym.envs.reward.REWARDS` from the same telemetry, with the one definition of each (the C++
step kernel's, :mod:`ecngym.envs.step_kernel`, plus the reward's episode-level term).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ecngym.envs.reward import REWARDS, RewardFunction
from ecngym.envs.step_kernel import reward_kernel

#: The episode metric holding the return under reward ``name``.
RETURN_METRIC = "return_{}"


def return_metric_names() -> list[str]:
    """The metrics :class:`RewardReturns` adds to an episode row (one per reward)."""
    return [RETURN_METRIC.format(name) for name in REWARDS]


class RewardReturns:
    """The episode return under every reward of :data:`REWARDS`, accumulated while an episode is played.

    An episode runs under one reward, but which reward agrees with a benchmark score is a question
    about all of them: this computes each from the same telemetry with the env's own reward (the
    env's parameters, only the name changed; the C++ kernel's definition, on the interval's
    telemetry block), averaged over the controlled ports as the env averages them.

    Args:
        env: The env the episode runs on (its scenario's reward config, step mapping and goodput
            scale are used).
    """

    def __init__(self, env: Any) -> None:
        sc = env.unwrapped.scenario
        self._scenario = sc
        self._interval_ns = float(sc.interval_ns)
        self._ports = np.ascontiguousarray(sc.ports, dtype=np.int64)
        self._kernels = {}
        self._functions = {}
        for name in REWARDS:
            fn = RewardFunction(sc.reward.cfg.model_copy(update={"name": name}), sc.reward.goodput_per_byte)
            self._functions[name] = fn
            self._kernels[name] = reward_kernel(sc.features, fn)
        self._per_port = np.empty(len(self._ports))
        self.totals = dict.fromkeys(REWARDS, 0.0)

    def step(self, info: dict[str, Any]) -> None:
        """Add one step's reward under every reward (``info``: the env step's, just played).

        Raises:
            RuntimeError: If ``info`` is not the step the env played last (the rewards read its
                telemetry block).
        """
        tel = self._scenario.telemetry
        if tel is None or int(info["time_ns"]) != tel.end_ns:
            raise RuntimeError("RewardReturns.step takes the info of the step the env just played")
        fraction = info["interval_ns"] / self._interval_ns
        per_port = self._per_port
        for name, kernel in self._kernels.items():
            kernel.reward(tel.block, self._ports, fraction, per_port)
            self.totals[name] += float(per_port.sum()) / len(per_port)

    def finish(self, records: pd.DataFrame, end_ns: int) -> dict[str, float]:
        """The returns (``return_<reward>``), with each reward's episode-level term added.

        Args:
            records: The episode's flow records.
            end_ns: Simulated time at the end of the episode.

        (``score_dense``'s flow terms, which read the fabric each step, are summed from the records:
        they telescope to −score.)
        """
        return {RETURN_METRIC.format(name): self.totals[name] + fn.flow_return(records, end_ns)
                for name, fn in self._functions.items()}
