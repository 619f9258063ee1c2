"""Learning controllers: ACC and LAECN / HAECN, generic SB3 policies, RLlib multi-agent training.

``train_agent`` is what ``ecngym train agent=...`` runs; ``learned_controller`` what
``ecngym eval controller=acc|laecn|haecn`` plays. Thread pools of training processes:
:mod:`ecngym.agents.threads`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ecngym.agents.sb3 import ALGORITHMS, SB3Controller, algorithm_class, train
from ecngym.error import ConfigError

__all__ = ["ALGORITHMS", "SB3Controller", "algorithm_class", "learned_controller", "train", "train_agent"]

FRAMEWORKS = ("sb3", "rllib")


def train_agent(base_env: dict[str, Any], agent: dict[str, Any], out_dir: Path, *, framework: str = "sb3",
                timesteps: int, seed: int, progress_bar: bool = True, checkpoint_every: int = 0,
                resume: str | None = None, threads: Any = None, device: str = "cpu",
                ray_address: str | None = None) -> Path:
    """Train ACC (SB3 or RLlib), LAECN or HAECN; see :func:`ecngym.agents.acc.train_acc`.

    Raises:
        ConfigError: On an unknown agent, framework or device, a framework the agent lacks, or a bad
            count (``total_timesteps``, ``seed``, ``checkpoint_every``) or thread setting, whatever
            the framework.
    """
    from ecngym.agents.common import save_agent_meta

    name = agent.get("name")
    if isinstance(resume, str) and not resume.strip():  # (was taken as no resume)
        raise ConfigError("resume", f"got {resume!r}; give a checkpoint's path, or leave resume out for a new run")
    if framework not in FRAMEWORKS:
        raise ConfigError("framework", f"got {framework!r}, allowed: {list(FRAMEWORKS)}")
    if device != "cpu":
        import torch

        if not re.fullmatch(r"cuda(:\d+)?", device):
            raise ConfigError("device", f"got {device!r}, allowed: 'cpu', 'cuda' or 'cuda:<index>'")
        if not torch.cuda.is_available():
            raise ConfigError("device", f"got {device!r} but torch sees no CUDA device; use device=cpu")
        index = int(device.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            raise ConfigError("device", f"got {device!r}; torch sees {torch.cuda.device_count()} CUDA device(s)")
    common = dict(timesteps=timesteps, seed=seed, progress_bar=progress_bar, checkpoint_every=checkpoint_every,
                  resume=resume, device=device)
    if name == "acc" and framework == "sb3":
        from ecngym.agents.acc import train_acc

        return train_acc(base_env, agent, out_dir, threads=threads, **common)
    if name == "acc":
        from ecngym.agents.common import start_training
        from ecngym.agents.rllib import acc_env_config, train_acc_rllib

        timesteps, seed, checkpoint_every, _, out_dir, env_cfg = start_training(
            base_env, agent, out_dir, timesteps=timesteps, seed=seed, checkpoint_every=checkpoint_every,
            threads=threads)
        common.update(timesteps=timesteps, seed=seed, checkpoint_every=checkpoint_every)
        path, episodes = train_acc_rllib(acc_env_config(env_cfg, agent["granularity"]), agent, out_dir,
                                         ray_address=ray_address, **common)
        from ecngym.envs.scenario import EcnScenario

        n_actions = len(EcnScenario(env_cfg).actions.templates)  # (builds no fabric)
        save_agent_meta(out_dir, {"agent": "acc", "framework": "rllib", "granularity": agent["granularity"],
                                  "env": agent["env"], "env_config": env_cfg.as_dict(), "seed": seed,
                                  "n_actions": n_actions, "final_eps": agent["hyperparams"]["exploration_final_eps"],
                                  "checkpoint": str(path), "timesteps": timesteps,
                                  "episodes": episodes})  # every env runner's traces: eval refuses them
        return path
    if name in ("laecn", "haecn"):
        if framework != "sb3":
            raise ConfigError("framework", f"{name} trains with its own two-module torch loop; use framework=sb3 "
                                           "(the default), RLlib is for ACC")
        from ecngym.agents.laecn import train_laecn

        return train_laecn(base_env, agent, out_dir, threads=threads, **common)
    raise ConfigError("agent", f"got {name!r}, allowed: 'acc', 'laecn', 'haecn'")


def learned_controller(kind: str, path: str, deterministic: bool = True) -> Any:
    """The controller of a trained ``acc`` / ``laecn`` / ``haecn`` run directory.

    Args:
        kind: ``"acc"``, ``"laecn"`` or ``"haecn"``.
        path: The run directory (or a file in it).
        deterministic: Greedy actions.

    Returns:
        An :class:`~ecngym.agents.acc.AccController` or :class:`~ecngym.agents.laecn.LaecnController`.

    Raises:
        ConfigError: On another ``kind``, or a path that holds no run of that kind.
    """
    from ecngym.agents.common import AGENTS

    if kind not in AGENTS:
        raise ConfigError("kind", f"got {kind!r}, allowed: {list(AGENTS)}")
    if kind == "acc":
        from ecngym.agents.acc import AccController

        return AccController(path, deterministic)
    from ecngym.agents.laecn import LaecnController

    return LaecnController(path, deterministic)
