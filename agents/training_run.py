"""What every trainer shares: the run's prologue and the checks of its warm-up and of a resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ecngym.agents.config import GRANULARITY, agent_env_config
from ecngym.error import ConfigError
from ecngym.files import check_directory_path
from ecngym.validation import check, check_whole


def check_warm_up(field: str, learning_starts: int, high: int, collects: str) -> None:
    """Refuse a warm-up that a training run never gets past: it would take no gradient step.

    Such a run would finish and save its untrained initial weights as a trained agent. The bound
    depends on the run (its length, its number of agents), so it is checked when training starts.

    Args:
        field: The warm-up's config field (``agent.hyperparams.learning_starts``).
        learning_starts: Its value.
        high: The largest warm-up after which this run still takes a gradient step.
        collects: What the run collects, for the message (``"160 transitions (total_timesteps 10 x
            16 agents)"``).

    Raises:
        ConfigError: Naming ``field``, if ``learning_starts > high``.
    """
    if learning_starts > high:
        raise ConfigError(field, f"got {learning_starts}, allowed range is [0, {high}] for this run, which collects "
                                 f"{collects}: a longer warm-up takes no gradient step and would save the untrained "
                                 "weights; lower it or raise total_timesteps")


def check_resumed_hyperparams(given: dict[str, Any], saved: dict[str, Any]) -> None:
    """Refuse hyperparameters other than the resumed checkpoint's: a resumed ACC continues with its own.

    (SB3's load keeps the saved ones; RLlib would train on with the run's, its optimizer's first
    step still at the checkpoint's learning rate.) One rule for both frameworks.

    Args:
        given: The run's ``agent.hyperparams`` that the framework reads (as it holds them).
        saved: The checkpoint's value of each of them.

    Raises:
        ConfigError: Naming ``agent.hyperparams.<key>``, with both values.
    """
    for key, value in given.items():
        if key in saved and value != saved[key]:
            raise ConfigError(f"agent.hyperparams.{key}", f"got {value!r}, but the resumed checkpoint trained with "
                                                          f"{saved[key]!r}: a resume continues with the checkpoint's "
                                                          "hyperparameters; give its value or start a new run")


def check_resume_total(timesteps: int, done_env_steps: int) -> None:
    """Refuse a resume whose ``total_timesteps`` the checkpoint has already reached.

    ``total_timesteps`` counts the whole run, the resumed checkpoint's env steps included (so an
    interrupted run resumes with its own command and ends where it would have; SB3's ACC, RLlib's
    ACC and LAECN alike). A total at or below what the checkpoint trained would train nothing.

    Args:
        timesteps: The run's ``total_timesteps`` (env steps).
        done_env_steps: Env steps the resumed checkpoint has trained.

    Raises:
        ConfigError: Naming ``total_timesteps``, if it is not above ``done_env_steps``.
    """
    if timesteps <= done_env_steps:
        raise ConfigError("total_timesteps", f"got {timesteps}, but the resumed checkpoint has trained "
                                             f"{done_env_steps} env steps already: total_timesteps counts the whole "
                                             f"run, the checkpoint's steps included; give more than {done_env_steps}")


def resumed_seed(seed: int, episodes_played: int) -> int:
    """The seed a run's traces start from: ``seed`` offset by the episodes its checkpoint has played.

    Each trainer draws its sequence of training traces from one seed, so a run resumed with its
    first run's seed (the usual case: the same command plus ``resume=``) replayed that run's traces
    from the first one; offset by the episodes already played, it goes on with other traces (and
    the same resume, run twice, plays the same ones). A fresh run (0 episodes) starts at ``seed``.

    Args:
        seed: The run's ``seed``.
        episodes_played: Episodes the resumed checkpoint has played (0 for a fresh run).
    """
    return seed + episodes_played


def start_training(base_env: dict[str, Any], agent: dict[str, Any], out_dir: Path, *, timesteps: int, seed: int,
                   checkpoint_every: int, threads: Any) -> tuple[int, int, int, str, Path, Any]:
    """The prologue every trainer shares: thread limits, checked counts, the run folder, the env config.

    Args:
        base_env: The scenario (``EnvConfig`` fields).
        agent: The agent config (its ``granularity`` and ``env`` overrides are read).
        out_dir: Run directory (a path; created).
        timesteps: Env steps to train for (>= 1).
        seed: Seed of the learner and of the training traces (>= 0).
        checkpoint_every: Checkpoint period in env steps (>= 0; 0 = never).
        threads: Threads per torch / BLAS pool (:func:`ecngym.agents.threads.limit_threads`).

    Returns:
        ``(timesteps, seed, checkpoint_every, granularity, out_dir, env_config)``, checked.

    Raises:
        ConfigError: On a bad count, granularity or thread setting, or an ``out_dir`` that is not a
            path or names a file.
    """
    from ecngym.agents.threads import limit_threads

    limit_threads(threads)
    timesteps = check_whole("total_timesteps", timesteps, 1)
    seed = check_whole("seed", seed, 0)
    checkpoint_every = check_whole("checkpoint_every", checkpoint_every, 0)
    granularity = check("agent.granularity", agent["granularity"], GRANULARITY)
    out_dir = check_directory_path("out_dir", out_dir, "a run directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    env_cfg = agent_env_config({**base_env, "seed": seed}, agent["env"])
    return timesteps, seed, checkpoint_every, granularity, out_dir, env_cfg
