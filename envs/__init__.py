"""Gymnasium / PettingZoo environments over the ns-3 fabric.

Importing this package registers ``ecngym/RoceIncast-v0``, ``ecngym/RoceLeafSpine-v0``,
``ecngym/DctcpLeafSpine-v0``, ``ecngym/DctcpRttVariation-v0`` and ``ecngym/DctcpLargeIncast-v0`` with
Gymnasium.
"""

import gymnasium as gym

from ecngym.envs.config import ActionConfig, EnvConfig, ObservationConfig, RewardConfig
from ecngym.envs.ecn_env import EcnTuningEnv
from ecngym.envs.registration import SCENARIOS, register_envs

register_envs()


def make(env_id: str, **kwargs: object) -> gym.Env:
    """``gymnasium.make`` that also works in fresh worker processes (spawn / forkserver).

    Pickling ``functools.partial(ecngym.envs.make, "ecngym/RoceIncast-v0")`` for SB3's
    ``SubprocVecEnv`` imports this module in the worker, which registers the ids first.
    """
    return gym.make(env_id, **kwargs)

__all__ = ["SCENARIOS", "ActionConfig", "EcnTuningEnv", "EnvConfig", "ObservationConfig",
           "RewardConfig", "make", "register_envs"]
