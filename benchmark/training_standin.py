"""A stand-in of :func:`ecngym.benchmark.training.train_run` until the learners' protocol lands (deleted then)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ecngym.configs import CONFIG_DIR

SB3 = ("ppo", "dqn")


def train_run(scenario: str, agent: str, seed: int, out_dir: Path, *, budget_steps: int | None = None,
              progress: bool = True, scenario_dir: str | None = None) -> Path:
    """Train ``agent`` on ``scenario``'s env with ``ecngym train``'s machinery; the checkpoint's path."""
    import gymnasium as gym

    import ecngym.envs  # noqa: F401
    from ecngym.agents import train, train_agent
    from ecngym.agents.common import agent_config
    from ecngym.benchmark.suite import load_scenario

    sc = load_scenario(scenario, scenario_dir)
    steps = budget_steps or 1000
    if agent in SB3:  # (a budget below PPO's 2048-step rollout: one rollout of the budget)
        hyper = {"n_steps": min(2048, steps), "batch_size": min(64, steps)} if agent == "ppo" else \
            {"learning_starts": min(100, steps // 2)}
        return train(lambda: gym.make(sc.id, **sc.env), agent, steps, seed, Path(out_dir), progress_bar=progress,
                     hyperparams=hyper)
    probe = gym.make(sc.id, **sc.env)
    base_env = probe.unwrapped.config.as_dict()
    probe.close()
    train_agent(base_env, agent_config(agent), Path(out_dir), timesteps=steps, seed=seed, progress_bar=progress)
    return Path(out_dir)


def checkpoint_controller_config(agent: str, checkpoint: Path, seed: int) -> dict[str, Any]:
    """The controller config that plays a checkpoint of ``agent``."""
    from omegaconf import OmegaConf

    if agent in SB3:
        cfg = OmegaConf.to_container(OmegaConf.load(CONFIG_DIR / "controller" / "sb3.yaml"))
        return {**cfg, "algorithm": agent, "path": str(checkpoint)}
    cfg = OmegaConf.to_container(OmegaConf.load(CONFIG_DIR / "controller" / f"{agent}.yaml"))
    return {**cfg, "path": str(checkpoint)}
