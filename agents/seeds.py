"""Training on a fixed set of traces: every episode's reset seed taken in turn from a list.

A benchmark scenario's learners train on its ``protocol.train_seeds`` only (the traces its
``static_tuned`` reference was tuned on), never on the test seeds it is scored on. The env draws an
episode's trace from its reset seed, so the seed list fixes the traces.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import gymnasium as gym

from ecngym.error import ConfigError
from ecngym.validation import check_whole


def seed_cycle(seeds: list[int], start: int = 0) -> Iterator[int]:
    """The seeds in turn, forever, starting at index ``start`` (mod their count).

    Raises:
        ConfigError: Naming ``episode_seeds``, if the list is empty or holds a seed that is not a
            whole number >= 0.
    """
    if not seeds:
        raise ConfigError("episode_seeds", "got an empty list; give at least one trace seed")
    checked = [check_whole("episode_seeds", s, 0) for s in seeds]
    offset = start % len(checked)
    return itertools.cycle(checked[offset:] + checked[:offset])


def cycle_episode_seeds(env: Any, seeds: list[int], start: int = 0) -> Any:
    """Make ``env.reset`` take its seed from ``seeds`` in turn (whatever seed its caller passes).

    Works on the parallel env (``reset(seed, options)``) that ACC's and LAECN's trainers drive.

    Args:
        env: The env (its ``reset`` is replaced on this instance only).
        seeds: The reset seeds, in turn.
        start: Index of the first one (a resumed run continues where it stopped).

    Returns:
        ``env``.
    """
    cycle = seed_cycle(seeds, start)
    original = env.reset

    def reset(seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        return original(seed=next(cycle), options=options)

    env.reset = reset
    return env


class CycledSeeds(gym.Wrapper):
    """A single-agent env whose episodes reset with the given seeds in turn (SB3's PPO / DQN).

    Args:
        env: The env.
        seeds: The reset seeds, in turn.
        start: Index of the first one.
    """

    def __init__(self, env: gym.Env, seeds: list[int], start: int = 0) -> None:
        super().__init__(env)
        self._cycle = seed_cycle(seeds, start)
        #: ``episode_seed`` and ``trace_hash`` of every episode started
        self.episodes: list[dict[str, Any]] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Reset with the next seed of the list (``seed`` is not read)."""
        obs, info = self.env.reset(seed=next(self._cycle), options=options)
        self.episodes.append({"episode_seed": info.get("episode_seed"), "trace_hash": info.get("trace_hash")})
        return obs, info
