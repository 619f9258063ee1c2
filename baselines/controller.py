"""The interface every controller (baseline or learning agent) implements."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Controller(Protocol):
    """A controller decides the ECN action of an :class:`~ecngym.envs.EcnTuningEnv` each step.

    It may act on the observation (what a learning agent sees) or on the raw per-port telemetry
    in ``info["telemetry"]`` (what a classic tuner such as PRED reads). ``interval_steps`` lets a
    controller act at its own interval: the runner calls :meth:`act` every ``interval_steps`` env
    steps and repeats the last action in between.
    """

    name: str
    interval_steps: int

    def reset(self, env: Any) -> None:
        """Prepare for a new episode of ``env`` (read its action space, ports, templates)."""

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """Return an action from ``env.action_space``."""
