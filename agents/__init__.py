"""Learning controllers: ACC and LAECN / HAECN, generic SB3 policies, RLlib multi-agent training.

``train_agent`` is what ``ecngym train agent=...`` runs; ``learned_controller`` what
``ecngym eval controller=acc|laecn|haecn`` plays; both find the agent by name
(:mod:`ecngym.agents.registry`). Thread pools of training processes: :mod:`ecngym.agents.threads`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ecngym.agents.sb3 import ALGORITHMS, SB3Controller, algorithm_class, train
from ecngym.error import ConfigError

__all__ = ["ALGORITHMS", "SB3Controller", "algorithm_class", "learned_controller", "train", "train_agent"]


def train_agent(base_env: dict[str, Any], agent: dict[str, Any], out_dir: Path, *, framework: str = "sb3",
                timesteps: int, seed: int, progress_bar: bool = True, checkpoint_every: int = 0,
                resume: str | None = None, threads: Any = None, device: str = "cpu",
                ray_address: str | None = None, episode_seeds: list[int] | None = None) -> Path:
    """Train the learning agent ``agent["name"]`` with its trainer for ``framework``.

    The agent is found by name (:mod:`ecngym.agents.registry`); its trainers (ACC's
    :func:`ecngym.agents.acc.train_acc`, LAECN's :func:`ecngym.agents.laecn.train_laecn` ...) check
    and write the run. ``episode_seeds`` (the reset seeds of the training episodes, in turn) is
    passed on to trainers that take it (ACC's and LAECN's SB3-framework trainers).

    Raises:
        ConfigError: On an unknown agent, framework or device, a framework the agent lacks, or a bad
            count (``total_timesteps``, ``seed``, ``checkpoint_every``) or thread setting, whatever
            the framework.
    """
    from ecngym.agents.registry import agent_kind

    name = agent.get("name")
    if isinstance(resume, str) and not resume.strip():  # a blank path names no checkpoint
        raise ConfigError("resume", f"got {resume!r}; give a checkpoint's path, or leave resume out for a new run")
    kind = agent_kind(name)
    if not isinstance(framework, str) or framework not in kind.trainers:
        raise ConfigError("framework", f"got {framework!r}; {name} trains with framework in {list(kind.trainers)}")
    if device != "cpu":
        import torch

        if not re.fullmatch(r"cuda(:\d+)?", device):
            raise ConfigError("device", f"got {device!r}, allowed: 'cpu', 'cuda' or 'cuda:<index>'")
        if not torch.cuda.is_available():
            raise ConfigError("device", f"got {device!r} but torch sees no CUDA device; use device=cpu")
        index = int(device.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            raise ConfigError("device", f"got {device!r}; torch sees {torch.cuda.device_count()} CUDA device(s)")
    ray = {"ray_address": ray_address} if framework == "rllib" else {}  # only RLlib runs on Ray
    if episode_seeds is not None:  # (a benchmark scenario's train seeds; the SB3-framework trainers take them)
        ray["episode_seeds"] = episode_seeds
    return kind.trainers[framework](base_env, agent, out_dir, timesteps=timesteps, seed=seed,
                                    progress_bar=progress_bar, checkpoint_every=checkpoint_every, resume=resume,
                                    device=device, threads=threads, **ray)


def learned_controller(kind: str, path: str, deterministic: bool = True) -> Any:
    """The controller of a trained agent's run directory (the agent found by name).

    Args:
        kind: The agent's name (``"acc"``, ``"laecn"``, ``"haecn"`` or a registered one).
        path: The run directory (or a file in it).
        deterministic: Greedy actions.

    Returns:
        The agent's controller (an :class:`~ecngym.agents.acc.AccController`,
        :class:`~ecngym.agents.laecn.LaecnController` ...).

    Raises:
        ConfigError: On an unknown ``kind``, or a path that holds no run of that kind.
    """
    from ecngym.agents.registry import agent_kind

    return agent_kind(kind, "kind").controller(path, deterministic)
