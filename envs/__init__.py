"""Gymnasium / PettingZoo environments over the ns-3 fabric.

Importing this package registers ``ecngym/RoceIncast-v0``, ``ecngym/RoceLeafSpine-v0`` and
``ecngym/DctcpLeafSpine-v0`` with Gymnasium.
"""

from ecngym.envs.config import ActionConfig, EnvConfig, ObservationConfig, RewardConfig
from ecngym.envs.ecn_env import EcnTuningEnv
from ecngym.envs.registration import SCENARIOS, register_envs

register_envs()

__all__ = ["SCENARIOS", "ActionConfig", "EcnTuningEnv", "EnvConfig", "ObservationConfig",
           "RewardConfig", "register_envs"]
