"""The base of the trained-agent controllers (:class:`LearnedController`).

It turns the single-agent env's observation table into the per-agent observations the policy
trained on (the same helper as the parallel env), counts its inference
(:class:`~ecngym.agents.inference.InferenceCounter`) and checks that eval traces are held out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ecngym.agents.inference import InferenceCounter
from ecngym.agents.saved_run import AGENT_FILE, OBSERVATION_KEYS, check_agent_meta, load_agent_meta
from ecngym.error import ConfigError
from ecngym.validation import Flag, check


class HeldOutCheck:
    """Refuses an episode played on a trace the learner trained on, checking each new trace once.

    Args:
        trained_traces: Hashes of the traces the learner trained on.
        what: What trained on them, for the message (``agent``, ``checkpoint``).
        hint: What to do instead, for the message.
    """

    def __init__(self, trained_traces: set[str], what: str, hint: str) -> None:
        self.trained_traces = trained_traces
        self.what = what
        self.hint = hint
        self._checked: str | None = None

    def __call__(self, info: dict[str, Any]) -> None:
        """Check the step's ``trace_hash``.

        Raises:
            ConfigError: Naming ``seed``, if the episode's trace was a training trace.
        """
        trace = info.get("trace_hash")
        if trace is None or trace == self._checked:
            return
        self._checked = trace
        if trace in self.trained_traces:
            raise ConfigError("seed", f"the episode's trace {trace[:12]} was a training trace of this {self.what}; "
                                      f"{self.hint}")


class LearnedController:
    """Base of the trained-agent controllers: per-agent observations, held-out traces, accounting.

    Subclasses load their networks and implement :meth:`decide`.

    Args:
        path: The saved run (directory, or a file in it).
        deterministic: Greedy actions (exploration off); a real boolean.

    Raises:
        ConfigError: Naming ``controller.deterministic`` if it is not a boolean, ``controller.path``
            if it holds no trained agent.
    """

    name = "learned"

    def __init__(self, path: str | Path, deterministic: bool = True) -> None:
        from ecngym.agents.threads import limit_threads

        limit_threads()  # inference of small nets: one thread per pool (or $ECNGYM_THREADS)
        self.deterministic = check("controller.deterministic", deterministic, Flag)
        self.run_dir, self.meta = load_agent_meta(path)
        self.granularity = self.meta["granularity"]
        self.trained_traces = {e["trace_hash"] for e in self.meta.get("episodes", [])}
        self.interval_steps = 1  # the agent's Δt is the env's step (its env overrides set it)
        self.inference = InferenceCounter()
        self._rows: list[np.ndarray] = []
        self._history = 1
        self._held_out = HeldOutCheck(self.trained_traces, "agent",
                                      "evaluate on held-out seeds (pick another seed)")

    def require_meta(self, *keys: str) -> None:
        """Refuse a run whose ``agent.json`` lacks one of the keys this kind of controller reads.

        Raises:
            ConfigError: Naming ``controller.path``, the file and the missing keys.
        """
        check_agent_meta(self.run_dir / AGENT_FILE, self.meta, keys)

    def env_overrides(self, env: Any = None) -> dict[str, Any]:
        """EnvConfig overrides the agent needs (its state, reward, Δt; one action per port), whatever ``env``."""
        env = json.loads(json.dumps(self.meta["env"]))
        env["action"] = {**env.get("action", {}), "scope": "port"}
        return env

    def reset(self, env: Any) -> None:
        """Check the env matches the training one (observation, actions); group its ports into agents.

        Raises:
            ConfigError: On an observation or action layout other than the training env's.
        """
        from ecngym.envs.view import EnvView

        u = env.unwrapped
        trained = self.meta["env_config"]
        for key in OBSERVATION_KEYS:
            if getattr(u.config.observation, key) != trained["observation"][key]:
                raise ConfigError("controller.path", f"the agent trained with observation.{key}="
                                                     f"{trained['observation'][key]!r}, this env has "
                                                     f"{getattr(u.config.observation, key)!r}")
        if u.config.action.scope != "port" or u.config.action.type != "discrete":
            raise ConfigError("controller.path", "the agent sets each port: the env needs action.scope=port, "
                                                 "type=discrete (ecngym eval applies it)")
        view = EnvView(env)
        n_templates = len(view.action_templates)
        if n_templates != self.meta["n_actions"]:
            raise ConfigError("controller.path", f"the agent chooses among {self.meta['n_actions']} ECN templates, "
                                                 f"this env has {n_templates}")
        self._rows = list(view.agent_rows(self.granularity).values())
        self._history = view.observation_history
        self._n_ports = len(view.ports)
        self._action_shape = view.action_space.shape
        self.inference.reset()

    def agent_observations(self, observation: np.ndarray) -> np.ndarray:
        """(agents, obs) array from the env's flattened observation table."""
        from ecngym.envs.multi_agent import agent_observation

        table = np.asarray(observation).reshape(self._n_ports, -1)
        return np.stack([agent_observation(table[rows], self.granularity, self._history) for rows in self._rows])

    def check_held_out(self, info: dict[str, Any]) -> None:
        """Refuse a trace the agent trained on (eval must use held-out traces).

        Raises:
            ConfigError: Naming ``seed``, if the episode's trace was a training trace.
        """
        self._held_out(info)

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> np.ndarray:
        """Per-port template indices from the per-agent decisions."""
        self.check_held_out(info)
        agent_actions = self.decide(self.agent_observations(observation), info)
        per_port = np.empty(self._n_ports, dtype=np.int64)
        for rows, a in zip(self._rows, agent_actions, strict=True):
            per_port[rows] = a
        return per_port.reshape(self._action_shape)  # one controlled port: Discrete's scalar, not shape (1,)

    def decide(self, obs: np.ndarray, info: dict[str, Any]) -> np.ndarray:
        """One template index per agent (subclasses)."""
        raise NotImplementedError
