"""A PettingZoo ParallelEnv with one agent per switch (or per controlled port)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from ecngym.envs.action import box_values, template_indices
from ecngym.envs.config import EnvConfig, check_episode_seed, merge, reset_options_error
from ecngym.envs.registration import scenario_config
from ecngym.envs.scenario import EcnScenario
from ecngym.error import ConfigError, InvalidAction


class EcnTuningParallelEnv(ParallelEnv):
    """Distributed ECN tuning: every switch (or port) is an agent with local observations.

    ## Description
    The fabric, trace, interval and telemetry of :class:`~ecngym.envs.EcnTuningEnv`, with one
    agent per switch (ACC's and LAECN's per-switch agents, LAECN §III-A; docs: algorithms/laecn.md §3.1) or per
    controlled egress port. All agents share one observation and action space, so one policy can serve them
    all (parameter sharing): :class:`~ecngym.envs.adapters.SharedPolicyVecEnv` for SB3,
    :func:`~ecngym.envs.adapters.rllib_env_creator` and :mod:`ecngym.agents.rllib` for RLlib.

    ## Agents
    ``switch_<i>`` (``agent_granularity="switch"``, i = switch index, the controlled ports'
    switches) or ``port_<id>`` (``"port"``, fabric-wide port id).

    ## Action Space
    Per agent: one template index (``Discrete(T)``, the templates of ``action.templates`` plus the
    static setting) or one ``Box(-1, 1, (3,), float32)`` row (Kmin, Kmax − Kmin, Pmax; same
    mapping and bounds as the single-agent env), applied to every port of the agent. An action
    outside the space, or a missing agent, raises :class:`ecngym.error.InvalidAction`.

    ## Observation Space
    Port agents: the port's own k x F features (``Box(0, high, (k x F,), float32)``, the rows of
    the single-agent table). Switch agents: for each of the last k intervals and each feature,
    the mean and then the maximum over the switch's controlled ports (``(k x 2F,)``): the
    same size whatever the switch's port count.

    ## Rewards
    ``acc`` / ``pred``: the mean per-port reward over the agent's ports. ``fct``: the episode-level
    term, shared by every agent at the last step. ``score_dense``: its per-step flow-level term,
    shared by every agent.

    ## Episode End
    Truncation for every agent at once after ``episode_steps`` intervals (no termination); the
    last step's infos hold the episode ``summary``.

    ## Arguments
    | argument | default | meaning |
    |---|---|---|
    | config | ``EnvConfig()`` | an ``EnvConfig``, a mapping or a scenario name (``"RoceLeafSpine-v0"``) |
    | agent_granularity | ``"switch"`` | ``"switch"`` or ``"port"`` |
    | overrides | | ``EnvConfig`` fields merged into ``config`` (``action.scope`` is forced to ``"port"``) |

    ## Version History
    * v0: initial release.
    """

    metadata = {"render_modes": [], "name": "ecngym_ecn_tuning_v0", "is_parallelizable": True}

    def __init__(self, config: EnvConfig | dict[str, Any] | str | None = None, agent_granularity: str = "switch",
                 **overrides: Any) -> None:
        if agent_granularity not in ("switch", "port"):
            raise ConfigError("env.agent_granularity", f"got {agent_granularity!r}, allowed: 'switch', 'port'")
        if isinstance(config, str):
            config = scenario_config(config)
        base = config if isinstance(config, EnvConfig) else EnvConfig.from_dict(config)
        # one action unit per port, so each agent can set its own ports
        cfg = merge(merge(base, overrides, "env"), {"action": {"scope": "port"}}, "env")
        self.config = cfg
        self.granularity = agent_granularity
        self.scenario = EcnScenario(cfg)
        sc = self.scenario
        self._agent_ports = agent_port_rows(sc, agent_granularity)
        self.possible_agents = list(self._agent_ports)
        f = sc.features
        per_port_high = f.high[0]
        high = per_port_high if agent_granularity == "port" else np.concatenate(
            [per_port_high.reshape(f.history, -1)] * 2, axis=1).reshape(-1)
        self._obs_space = spaces.Box(np.zeros_like(high), high, dtype=np.float32)
        mapper = sc.actions
        self._act_space = (spaces.Discrete(len(mapper.templates)) if mapper.cfg.type == "discrete"
                           else spaces.Box(-1.0, 1.0, shape=mapper.space.shape[1:], dtype=np.float32))
        self.agents: list[str] = []
        self.render_mode = None
        self._np_random = np.random.default_rng(cfg.seed)

    def observation_space(self, agent: str) -> spaces.Space:
        """Every agent has the same observation space.

        Raises:
            KeyError: For a name that is none of :attr:`possible_agents` (as a per-agent mapping would).
        """
        self._check_agent(agent)
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        """Every agent has the same action space.

        Raises:
            KeyError: For a name that is none of :attr:`possible_agents`.
        """
        self._check_agent(agent)
        return self._act_space

    def _check_agent(self, agent: Any) -> None:
        if not isinstance(agent, str) or agent not in self._agent_ports:  # (any name got a space)
            raise KeyError(f"no agent {agent!r}; agents: {', '.join(self.possible_agents[:8])}"
                           f"{', ...' if len(self.possible_agents) > 8 else ''}")

    def _agent_obs(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        k = self.scenario.features.history
        return {agent: agent_observation(obs[rows], self.granularity, k) for agent, rows in self._agent_ports.items()}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode; returns (observations, infos) per agent.

        ``options``: this env defines none. PettingZoo's API test passes ``{"options": 1}`` to check
        that ``reset`` takes the argument, so a non-empty mapping is not refused as in the
        single-agent env, but warned about (a ``UserWarning`` naming ``options``: it is not read).

        Raises:
            ConfigError: If ``seed`` is not a whole number in [0, 2^64 - 1], or ``options`` is
                neither ``None`` nor a mapping (the running episode is kept, as in the single-agent env).
        """
        seed = check_episode_seed(seed)
        error = reset_options_error(options)
        if error is not None:
            if not isinstance(options, Mapping):
                raise error
            warnings.warn(f"{error.field}: {error.message}; not read", UserWarning, stacklevel=2)
        if seed is not None:
            self._np_random = np.random.default_rng(seed)
        episode_seed = int(self._np_random.integers(0, 2**31 - 1))
        obs = self.scenario.start_episode(episode_seed)
        self.agents = list(self.possible_agents)
        info = {"episode_seed": episode_seed, "trace_hash": self.scenario.trace.hash}
        return self._agent_obs(obs), {a: dict(info) for a in self.agents}

    def step(self, actions: dict[str, Any]):
        """Apply every agent's action for one interval.

        Raises:
            InvalidAction: If ``actions`` is not a mapping with exactly one action per agent, or an
                action is not in :meth:`action_space` (nothing is applied).
            RuntimeError: Before :meth:`reset`, after the episode's end or after :meth:`close`.
        """
        if self.scenario.fabric is None:
            raise RuntimeError("call reset() before step()")
        if not self.agents:
            raise RuntimeError("the episode is over; call reset()")
        if not isinstance(actions, Mapping):
            raise InvalidAction(f"expected a mapping of agent -> action for {_few(self.agents)}, got {actions!r}")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise InvalidAction(f"missing actions for agents {_few(missing)}")
        extra = [a for a in actions if a not in self._agent_ports]
        if extra:
            raise InvalidAction(f"actions for unknown agents {_few(extra)}; the agents are {_few(self.agents)}")
        sc = self.scenario
        n_ports = len(sc.ports)
        discrete = sc.actions.cfg.type == "discrete"
        if discrete:
            per_port = np.zeros(n_ports, dtype=np.int64)
        else:
            per_port = np.zeros((n_ports, sc.actions.space.shape[1]), dtype=np.float32)
        for agent, rows in self._agent_ports.items():
            try:  # the single-agent env's checks, for one unit
                a = (template_indices(actions[agent], self._act_space.n, self._act_space)[0] if discrete
                     else box_values(actions[agent], self._act_space.shape))
            except InvalidAction as exc:
                raise InvalidAction(f"{agent}: {exc}") from None
            per_port[rows] = a
        sc.apply(per_port.reshape(sc.actions.space.shape))  # one port: Discrete's scalar, not shape (1,)
        obs, tel, per_port_reward = sc.advance()
        done = sc.done
        flow = sc.flow_term  # score_dense's flow-level term, shared by every agent (0 for the other rewards)
        rewards = {a: float(per_port_reward[rows].sum()) / len(rows) + flow for a, rows in self._agent_ports.items()}
        step_info: dict[str, Any] = {"interval_ns": int(tel["interval_end_ns"] - tel["interval_start_ns"])}
        if sc.interval_short_ns is not None:
            step_info["long_flow"] = sc.long_flow  # decides the next step's length (env.interval_short)
        if done:
            records, summary = sc.finish()
            end = sc.end_reward(records)
            rewards = {a: r + end for a, r in rewards.items()}
            step_info["summary"] = summary
        infos: dict[str, dict[str, Any]] = {a: dict(step_info) for a in self.agents}
        observations = self._agent_obs(obs)
        terminations = {a: False for a in self.agents}
        truncations = {a: done for a in self.agents}
        if done:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def close(self) -> None:
        """Destroy the fabric (safe to call twice); :meth:`step` then needs a :meth:`reset`."""
        self.scenario.close()
        self.agents = []


def _few(names: list[str]) -> str:
    """The first three names of a list, for a message (``['a', 'b', 'c']...``)."""
    return f"{names[:3]}{'...' if len(names) > 3 else ''}"


def agent_port_rows(scenario: EcnScenario, granularity: str) -> dict[str, np.ndarray]:
    """Agent name -> rows of its ports in the controlled-port table (``switch_<i>`` or ``port_<id>``).

    Shared by the parallel env and by learned controllers acting on the single-agent env, so a
    policy trained on one sees the same per-agent observations on the other.
    """
    if granularity == "switch":
        owners = scenario.port_nodes - scenario.topology.num_hosts
        return {f"switch_{s}": np.flatnonzero(owners == s) for s in sorted(set(owners.tolist()))}
    return {f"port_{p}": np.array([i]) for i, p in enumerate(scenario.ports)}


def agent_observation(block: np.ndarray, granularity: str, history: int) -> np.ndarray:
    """One agent's observation from its ports' rows ``(ports, k x F)`` of the observation table.

    Port agents: the row itself. Switch agents: per interval and feature, the mean then the
    maximum over the switch's ports (``(k x 2F,)``).
    """
    if granularity == "port":
        return block[0].astype(np.float32)
    per = block.reshape(len(block), history, -1)
    return np.concatenate([per.mean(axis=0), per.max(axis=0)], axis=1).reshape(-1).astype(np.float32)
