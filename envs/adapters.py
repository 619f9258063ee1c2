"""Adapters: train one shared policy over all agents with SB3, or the multi-agent env with RLlib."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from ecngym.envs.multi_agent import EcnTuningParallelEnv
from ecngym.error import ConfigError, InvalidAction


class SharedPolicyVecEnv(VecEnv):
    """Present the agents of one :class:`EcnTuningParallelEnv` as an SB3 ``VecEnv``.

    Each agent is one "sub-environment": SB3 sees ``num_envs = number of agents`` and trains a
    single policy on all their transitions (parameter sharing). When the episode ends every agent
    is done at once and the parallel env is reset automatically, as VecEnvs do; the last
    observation goes into ``infos[i]["terminal_observation"]``.

    Args:
        env: The multi-agent environment (its fabric lives in this process).
    """

    def __init__(self, env: EcnTuningParallelEnv) -> None:
        self.par_env = env
        self.agent_ids = list(env.possible_agents)
        agent0 = self.agent_ids[0]
        super().__init__(len(self.agent_ids), env.observation_space(agent0), env.action_space(agent0))
        self._actions: np.ndarray | None = None
        self._seed: int | None = None
        #: ``episode_seed`` and ``trace_hash`` of every episode started (the traces trained on)
        self.episodes: list[dict[str, Any]] = []

    def _stack(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        return np.stack([obs[a] for a in self.agent_ids])

    def reset(self) -> np.ndarray:
        """Reset the parallel env; one observation row per agent."""
        obs, infos = self.par_env.reset(seed=self._seed)
        self._seed = None
        first = infos[self.agent_ids[0]]
        self.episodes.append({"episode_seed": first["episode_seed"], "trace_hash": first["trace_hash"]})
        return self._stack(obs)

    def step_async(self, actions: np.ndarray) -> None:
        """Remember the agents' actions (one row each)."""
        self._actions = actions

    def step_wait(self):
        """Step every agent; auto-reset at the end of the episode.

        Raises:
            InvalidAction: If the actions are not one row per agent (the rows themselves are checked
                by the parallel env, naming the agent).
        """
        try:
            rows = len(self._actions)
        except TypeError:  # None, a scalar: not one row per agent
            rows = None
        if rows != self.num_envs:
            raise InvalidAction(f"expected {self.num_envs} actions, one per agent ({self.num_envs} agents of "
                                f"{self.action_space} each), got {self._actions!r}")
        actions = {a: self._actions[i] for i, a in enumerate(self.agent_ids)}
        obs, rewards, terms, truncs, infos = self.par_env.step(actions)
        stacked = self._stack(obs)
        dones = np.array([terms[a] or truncs[a] for a in self.agent_ids])
        infos_list = [dict(infos.get(a, {})) for a in self.agent_ids]
        if dones.all():
            for i, a in enumerate(self.agent_ids):
                infos_list[i]["terminal_observation"] = stacked[i]
                infos_list[i]["TimeLimit.truncated"] = bool(truncs[a] and not terms[a])
            stacked = self.reset()
        return stacked, np.array([rewards[a] for a in self.agent_ids], dtype=np.float32), dones, infos_list

    def close(self) -> None:
        """Close the parallel env."""
        self.par_env.close()

    def seed(self, seed: int | None = None) -> list[int | None]:
        """Seed the next reset."""
        self._seed = seed
        return [seed] * self.num_envs

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """Attribute of the parallel env, once per agent."""
        return [getattr(self.par_env, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set an attribute of the parallel env."""
        setattr(self.par_env, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        """Call a method of the parallel env, once."""
        result = getattr(self.par_env, method_name)(*args, **kwargs)
        return [result] * len(self._indices(indices))

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """No agent is wrapped."""
        return [False] * len(self._indices(indices))

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        return [indices] if isinstance(indices, int) else list(indices)


def rllib_env_creator(env_config: dict[str, Any]) -> Any:
    """RLlib env factory: the multi-agent env wrapped as an RLlib ``MultiAgentEnv``.

    Register with ``ray.tune.registry.register_env("ecngym_ma", rllib_env_creator)``; pass as
    ``env_config`` :class:`~ecngym.envs.EnvConfig` fields, plus optionally ``scenario`` (what the
    fields override: a registered scenario, e.g. ``"RoceLeafSpine-v0"``, or a whole resolved config,
    :meth:`EnvConfig.as_dict` of an env's config, as ``ecngym train agent=acc framework=rllib``
    passes it) and ``agent_granularity``.
    """
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv

    return ParallelPettingZooEnv(parallel_env_of(env_config))


def parallel_env_of(env_config: dict[str, Any]) -> EcnTuningParallelEnv:
    """The parallel env of an RLlib ``env_config`` (:func:`rllib_env_creator`'s keys), unwrapped.

    Imports nothing of Ray, and builds no fabric until its first ``reset``.

    Raises:
        ConfigError: Naming ``env_config`` if it is no mapping (``dict()`` of it was a TypeError).
    """
    if not isinstance(env_config, Mapping):
        raise ConfigError("env_config", f"expected a mapping of env fields (and scenario, agent_granularity), "
                                        f"got {env_config!r}")
    cfg = dict(env_config)
    granularity = cfg.pop("agent_granularity", "switch")
    scenario = cfg.pop("scenario", None)
    return EcnTuningParallelEnv(scenario, agent_granularity=granularity, **cfg)
