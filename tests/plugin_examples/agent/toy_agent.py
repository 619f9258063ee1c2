"""A toy learning agent: the one module a new agent adds (beside its YAML, ``toy.yaml``).

It learns nothing: its trainer writes the run as every trainer does (``agent.json`` with the traces
it trained on, ``curve.csv``) and its controller plays the configured action template on every
port. A real agent has the same parts (:mod:`ecngym.agents.laecn`: a config model, a trainer per
framework and a controller, tied by an :class:`~ecngym.agents.registry.AgentKind`). Its acting
network (``acting=``: one linear layer whose bias picks the template) is what a shipped checkpoint
holds, so it also joins the benchmark suites as a learner: ``ecngym run suite=... train=true`` plans
and trains it on every scenario with a training protocol (with its own defaults: no scenario or
tier file lists it) and its checkpoints reach the board. The agent's YAML names ``KIND``; nothing
else in ecngym lists agents or learners. ``tests/test_plugin_examples.py`` trains and plays it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ecngym.agents.acting_nets import ActingNets
from ecngym.agents.controller import LearnedController
from ecngym.agents.registry import AgentKind
from ecngym.agents.saved_run import save_agent_meta
from ecngym.agents.training_run import start_training
from ecngym.validation import ConfigModel, OneOf, Whole


class ToyConfig(ConfigModel):
    """The agent's YAML, every field typed (unknown keys and bad values are refused as ``agent.<field>``)."""

    name: OneOf("toy")
    granularity: OneOf("port", "switch")
    env: dict[str, Any]
    template: Whole(0, 64)


def train_toy(base_env: dict[str, Any], agent: dict[str, Any], out_dir: Path, *, timesteps: int, seed: int,
              progress_bar: bool, checkpoint_every: int, resume: str | None, device: str, threads: Any,
              episode_seeds: list[int] | None = None) -> Path:
    """Play the configured template for ``timesteps`` steps and write the run as a trainer does.

    Args:
        base_env: The scenario's EnvConfig fields.
        agent: The validated agent config.
        out_dir: The run folder.
        timesteps: Env steps.
        seed: The seed of the run (and of its one training trace).
        progress_bar: Unused (nothing long runs).
        checkpoint_every: Checked by the shared prologue; nothing is checkpointed.
        resume: Unused (a toy run is never resumed).
        device: Unused (no network).
        threads: Torch / BLAS threads of the process.
        episode_seeds: The reset seeds of its episodes, in turn (a benchmark scenario's train
            seeds); None: ``seed`` for every episode.

    Returns:
        The run's ``agent.json``.
    """
    import gymnasium as gym

    import ecngym.envs  # noqa: F401  (registers the ids)

    timesteps, seed, _, _, out_dir, env_cfg = start_training(base_env, agent, out_dir, timesteps=timesteps, seed=seed,
                                                            checkpoint_every=checkpoint_every, threads=threads)
    env = gym.make("ecngym/RoceIncast-v0", **env_cfg.as_dict())
    seeds = list(episode_seeds or [seed])
    episodes, rewards, done = [], [], True
    for _ in range(timesteps):
        if done:
            obs, info = env.reset(seed=seeds[len(episodes) % len(seeds)])
            episodes.append({"seed": seeds[len(episodes) % len(seeds)], "trace_hash": info["trace_hash"]})
            n_ports = len(info["ports"])
        obs, reward, terminated, truncated, info = env.step(np.full(n_ports, agent["template"]))
        rewards.append(float(reward))
        done = terminated or truncated
    env.close()
    (out_dir / "curve.csv").write_text(f"episode,env_steps,episode_return\n0,{timesteps},{sum(rewards)}\n")
    save_agent_meta(out_dir, {"agent": agent["name"], "framework": "numpy", "granularity": agent["granularity"],
                              "env": agent["env"], "env_config": env_cfg.as_dict(), "seed": seed,
                              "n_actions": int(env.action_space.nvec[0]), "template": agent["template"],
                              "obs_dim": int(np.asarray(obs).size) // n_ports, "episodes": episodes})
    return out_dir / "agent.json"


class ToyController(LearnedController):
    """Plays the run's template on every port agent."""

    name = "toy"

    def decide(self, obs: np.ndarray, info: dict[str, Any]) -> np.ndarray:
        """The run's template, one per agent."""
        self.inference.decisions += len(obs)
        return np.full(len(obs), self.meta["template"])


def template_net(run: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The run's acting network as a checkpoint holds it: ``q``, one linear layer whose arg-max is the template.

    Args:
        run: The run's ``agent.json`` (what the trainer returned).

    Returns:
        The named arrays and their description (:class:`~ecngym.agents.acting_nets.ActingNets`).
    """
    meta = json.loads(Path(run).read_text())
    bias = np.zeros(meta["n_actions"], dtype=np.float32)
    bias[meta["template"]] = 1.0
    weight = np.zeros((meta["n_actions"], meta["obs_dim"]), dtype=np.float32)
    return ({"q.0.weight": weight, "q.0.bias": bias},
            {"q": {"activation": "none", "layers": [[meta["obs_dim"], meta["n_actions"]]]}})


def _live_net(model: Any) -> Any:
    raise NotImplementedError("the toy trains no network and has no tier trainer: nothing to snapshot")


#: What the YAML's ``_kind_`` names.
KIND = AgentKind(config=ToyConfig, trainers={"sb3": train_toy}, controller=ToyController,
                 acting=ActingNets(nets=("q",), saved=template_net, live=_live_net))
