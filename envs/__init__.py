"""Gymnasium / PettingZoo environments over the ns-3 fabric.

Importing this package registers ``ecngym/RoceIncast-v0``, ``ecngym/RoceLeafSpine-v0``,
``ecngym/DctcpLeafSpine-v0``, ``ecngym/DctcpRttVariation-v0`` and ``ecngym/DctcpLargeIncast-v0`` with
Gymnasium. The env classes and configs are imported on first use (PEP 562): registering needs only
Gymnasium, and the fabric, pandas and the trace generator load when an env is made.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ecngym.envs.registration import SCENARIOS, register_envs

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    import gymnasium as gym

    from ecngym.envs.config import ActionConfig, EnvConfig, ObservationConfig, RewardConfig
    from ecngym.envs.ecn_env import EcnTuningEnv

register_envs()

#: public name -> the submodule that defines it
_LAZY = {
    "ActionConfig": "config",
    "EnvConfig": "config",
    "ObservationConfig": "config",
    "RewardConfig": "config",
    "EcnTuningEnv": "ecn_env",
    "make_for_controller": "for_controller",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def make(env_id: str, **kwargs: object) -> gym.Env:
    """``gymnasium.make`` that also works in fresh worker processes (spawn / forkserver).

    Pickling ``functools.partial(ecngym.envs.make, "ecngym/RoceIncast-v0")`` for SB3's
    ``SubprocVecEnv`` imports this module in the worker, which registers the ids first.
    """
    import gymnasium as gym

    return gym.make(env_id, **kwargs)


__all__ = ["SCENARIOS", "ActionConfig", "EcnTuningEnv", "EnvConfig", "ObservationConfig",
           "RewardConfig", "make", "make_for_controller", "register_envs"]
