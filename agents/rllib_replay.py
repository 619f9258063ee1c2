"""RLlib's multi-agent episode replay buffer, seeded: a training run samples the same batches again.

RLlib's ``EpisodeReplayBuffer`` draws its samples from ``np.random.default_rng(seed=None)`` and takes
no seed (Ray 2.x), so two ACC trainings on RLlib with the same ``seed`` replayed different
batches, learnt different Q-values from the first update on, and ended on different policies.
This module imports Ray; :mod:`ecngym.agents.rllib` names the class by its path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ray.rllib.utils.replay_buffers.multi_agent_episode_buffer import MultiAgentEpisodeReplayBuffer


class SeededMultiAgentEpisodeReplayBuffer(MultiAgentEpisodeReplayBuffer):
    """``MultiAgentEpisodeReplayBuffer`` whose random generator starts from ``seed``.

    Args:
        capacity: Transitions the buffer holds (RLlib's).
        seed: Seed of the generator that picks the replayed transitions.
        **kwargs: RLlib's other arguments.
    """

    def __init__(self, capacity: int = 10000, *, seed: int = 0, **kwargs: Any) -> None:
        super().__init__(capacity, **kwargs)
        self.rng = np.random.default_rng(seed)

    def get_state(self) -> dict[str, Any]:
        """RLlib's buffer state plus the generator's, so that a resume draws on where the run was."""
        return super().get_state() | {"ecngym_rng": self.rng.bit_generator.state}

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`get_state`'s (a state without the generator's keeps the current generator)."""
        super().set_state(state)
        if "ecngym_rng" in state:
            self.rng.bit_generator.state = state["ecngym_rng"]
