"""The ``random`` reference: a template drawn uniformly at random every interval.

The floor a learner must clear: a policy that scores no better has learned nothing about the
traffic. Each decision draws, for every action unit (all controlled ports, a layer or a port, as the
scenario's action scope says), one of the scenario's discrete templates uniformly and independently.
The draws come from a generator seeded by (``seed``, the episode's seed), so an episode is
reproduced exactly from its reset seed, and two episodes (or two ``seed`` values) draw apart.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ecngym.envs.view import EnvView
from ecngym.error import ConfigError
from ecngym.validation import Whole, check


class RandomTemplateController:
    """Uniform over the env's discrete action templates, independently per unit, every interval.

    Args:
        seed: Mixed with each episode's seed into the draws' generator ([0, 2^32 − 1]).
        interval_steps: Draw every this many env steps (1: every interval).
        name: Name in results.

    Raises:
        ConfigError: Naming ``controller.seed`` / ``controller.interval_steps`` for a bad value.
    """

    def __init__(self, seed: int = 0, interval_steps: int = 1, name: str = "random") -> None:
        self.seed = int(check("controller.seed", seed, Whole(0, 2**32 - 1)))
        self.interval_steps = int(check("controller.interval_steps", interval_steps, Whole(1)))
        self.name = name
        self._rng: np.random.Generator | None = None
        self._templates = 0
        self._shape: tuple[int, ...] = ()

    def reset(self, env: Any) -> None:
        """Seed the draws from the episode's seed and read the number of templates and units.

        Raises:
            ConfigError: Naming ``env.action.type`` if the env's action space is continuous.
        """
        view = EnvView(env)
        if view.action_type != "discrete":
            raise ConfigError("env.action.type", f"the random reference draws the discrete templates; got "
                                                 f"{view.action_type!r}")
        self._templates = len(view.action_templates)
        space = view.action_space
        self._shape = tuple(space.shape) if space.shape else ()
        self._rng = np.random.default_rng([self.seed, view.episode_seed])

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """One template index per unit (an int for a single unit), uniform over the templates."""
        if self._rng is None:
            raise RuntimeError("call reset(env) before act()")
        if not self._shape:
            return int(self._rng.integers(self._templates))
        return self._rng.integers(self._templates, size=self._shape).astype(np.int64)
