"""``ecngym train``: train a learning agent (``agent=...``) or an SB3 algorithm on an env, record the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import hydra
import pandas as pd
from omegaconf import DictConfig, OmegaConf
from rich.console import Console

from ecngym import __version__
from ecngym.commands.checks import check_outputs, user_errors
from ecngym.commands.factories import logger_config, make_env, results_store, scenario_name
from ecngym.configs import CONFIG_DIR
from ecngym.error import ConfigError
from ecngym.files import write_text_atomically
from ecngym.results.store import MAX_SEED
from ecngym.validation import Flag, check, check_whole, config_values, plain


@hydra.main(version_base="1.3", config_path="../configs", config_name="train")
@user_errors
def train_main(cfg: DictConfig) -> None:
    """``ecngym train``: train an SB3 algorithm (DQN / PPO) on an env and save the model."""
    from functools import partial

    from ecngym.agents import train
    from ecngym.agents.sb3 import check_hyperparams

    out = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)
    check_whole("seed", cfg.seed, 0, MAX_SEED)  # the run's row in the results store holds it
    check_outputs(cfg)  # before training, not when the finished run is recorded
    check_training_fields(cfg)
    check("progress_bar", cfg.progress_bar, Flag)  # ('maybe' and 1 were taken as true)
    if cfg.get("agent"):
        return _train_agent(cfg, out)
    if not OmegaConf.is_dict(cfg.hyperparams):
        raise ConfigError("hyperparams", f"got {plain(cfg.hyperparams)!r}, expected a mapping of the SB3 algorithm's "
                                         "keyword arguments (e.g. +hyperparams.n_steps=128)")
    hyper = check_hyperparams(cfg.algorithm, config_values(cfg.hyperparams))  # (recorded as SB3 gets them)
    probe = make_env(cfg)  # fails fast on a bad env config; records the resolved scenario (opens no fabric)
    env_config = probe.unwrapped.config.as_dict()
    probe.close()
    path = train(partial(make_env, cfg), cfg.algorithm, cfg.total_timesteps, cfg.seed, out,
                 n_envs=cfg.n_envs, hyperparams=hyper, progress_bar=bool(cfg.progress_bar),
                 checkpoint_every=cfg.get("checkpoint_every", 0), threads=cfg.get("threads"))
    params = {"algorithm": str(cfg.algorithm), "total_timesteps": int(cfg.total_timesteps), "n_envs": int(cfg.n_envs),
              "hyperparams": hyper}
    _finish_training(cfg, out, f"sb3_{cfg.algorithm}", params, path, env_config, training_curve(out / "monitor"),
                     f"evaluate: ecngym eval env={cfg.env.name} controller=sb3 controller.algorithm={cfg.algorithm} "
                     f"controller.path={path}")


#: Fields of ``ecngym train`` that one of its two modes does not read: the generic SB3 algorithm's
#: (without ``agent=``) and a learning agent's (with it; ``ray.address`` with ``framework=rllib`` only)
_GENERIC_TRAINING_FIELDS = ("algorithm", "n_envs", "hyperparams")
_AGENT_TRAINING_FIELDS = ("framework", "resume", "device", "ray.address")


def check_training_fields(cfg: DictConfig) -> None:
    """Refuse a field of ``ecngym train`` that the chosen mode would not read (it was ignored).

    ``resume=`` or ``device=cuda`` without ``agent=`` trained a fresh model on the CPU; ``hyperparams``,
    ``algorithm`` or ``n_envs`` with ``agent=`` trained the agent's own algorithm with its own
    ``agent.hyperparams``; ``ray.address`` without ``framework=rllib`` started no Ray. A field
    counts as given when it differs from ``configs/train.yaml``'s default.

    Raises:
        ConfigError: Naming the field, its value and the mode that reads it.
    """
    defaults = OmegaConf.load(CONFIG_DIR / "train.yaml")

    def given(fields: tuple[str, ...]) -> tuple[str, Any] | None:  # the first that is not the default
        values = ((f, plain(OmegaConf.select(cfg, f))) for f in fields)
        return next(((f, v) for f, v in values if v != plain(OmegaConf.select(defaults, f))), None)

    if cfg.get("agent"):
        unread = given(_GENERIC_TRAINING_FIELDS)
        if unread is not None:
            hint = "; set the agent's as agent.hyperparams.<key>" if unread[0] == "hyperparams" else ""
            raise ConfigError(unread[0], f"got {unread[1]!r}, but it applies to the generic SB3 training (without "
                                         f"agent=...); agent={cfg.agent.get('name')} trains its own algorithm{hint}")
        unread = given(("ray.address",)) if str(cfg.get("framework", "sb3")) != "rllib" else None
        if unread is not None:
            raise ConfigError("ray.address", f"got {unread[1]!r}, but only framework=rllib uses Ray")
        return
    unread = given(_AGENT_TRAINING_FIELDS)
    if unread is not None:
        raise ConfigError(unread[0], f"got {unread[1]!r}, but it applies to a learning agent's training "
                                     "(agent=acc|laecn|haecn); the generic SB3 training (algorithm=...) runs on the "
                                     "CPU, has no resume and no RLlib")


def _group_choice(group: str, default: Any) -> str:
    """The option of config group ``group`` the command line chose (``agent=laecn``: ``"laecn"``).

    ``default`` where Hydra is not running (a direct call) or chose none.
    """
    from hydra.core.hydra_config import HydraConfig

    choice = HydraConfig.get().runtime.choices.get(group) if HydraConfig.initialized() else None
    return str(choice if choice is not None else default)


def _train_agent(cfg: DictConfig, out: Path) -> None:
    """``ecngym train agent=acc|laecn|haecn [framework=sb3|rllib]``: train a learning agent, save the run."""
    from ecngym.agents import train_agent
    from ecngym.agents.common import agent_config

    raw = config_values(cfg.agent)
    agent = agent_config(_group_choice("agent", raw.get("name")), raw)  # validated: errors name agent.<field>
    probe = make_env(cfg)  # fails fast on a bad env config (opens no fabric)
    base_env = probe.unwrapped.config.as_dict()
    probe.close()
    framework = str(cfg.get("framework", "sb3"))
    path = train_agent(base_env, agent, out, framework=framework,
                       timesteps=cfg.total_timesteps, seed=cfg.seed, progress_bar=bool(cfg.progress_bar),
                       checkpoint_every=cfg.get("checkpoint_every", 0), resume=cfg.get("resume"),
                       threads=cfg.get("threads"), device=str(cfg.get("device", "cpu")),
                       ray_address=cfg.get("ray", {}).get("address"))
    curve = pd.read_csv(out / "curve.csv")
    curve.insert(0, "timesteps", curve["env_steps"])
    _finish_training(cfg, out, agent["name"], {**agent, "framework": framework,
                                                "total_timesteps": int(cfg.total_timesteps)}, path, base_env, curve,
                     f"learning curve: {out / 'curve.csv'}\nevaluate on held-out traces: ecngym eval "
                     f"env={cfg.env.name} controller={agent['name']} controller.path={out} seed=1000")


def training_curve(monitor_dir: Path) -> pd.DataFrame:
    """The learning curve of SB3's Monitor files: one row per finished episode, in finishing order.

    Returns:
        Columns ``timesteps`` (env steps so far, over all workers), ``episode_return``,
        ``episode_length`` and ``wall_s``.
    """
    frames = [pd.read_csv(f, skiprows=1) for f in sorted(monitor_dir.glob("*.monitor.csv"))]
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=["timesteps", "episode_return", "episode_length", "wall_s"])
    curve = pd.concat(frames).sort_values("t", kind="stable")
    return pd.DataFrame({"timesteps": curve["l"].cumsum().to_numpy(), "episode_return": curve["r"].to_numpy(),
                         "episode_length": curve["l"].to_numpy(), "wall_s": curve["t"].to_numpy()})


def _finish_training(cfg: DictConfig, out: Path, name: str, params: dict[str, Any], model: Path,
                     env_config: dict[str, Any], curve: pd.DataFrame, next_steps: str) -> None:
    """Record any finished training run, SB3 or agent, the same way.

    Writes ``train.json``, commits the results-store row with the learning curve and its summary
    (``timesteps`` asked for, ``curve_points``, ``reward_last10_mean`` over the trainer's reward
    column), logs the curve, and prints where the model is and what to run next.
    """
    from ecngym.results import curve_reward_column, episode_row, make_logger

    write_text_atomically(out / "train.json", json.dumps(
        {"version": __version__, "model": str(model), "seed": int(cfg.seed),
         "config": OmegaConf.to_container(cfg, resolve=True), "env_config": env_config}, indent=2, default=str))
    last10 = curve[curve_reward_column(curve)].tail(10)  # (a curve without points has its columns: NaN)
    metrics = {"timesteps": float(cfg.total_timesteps), "curve_points": float(len(curve)),
               "reward_last10_mean": float(last10.mean())}
    store = results_store(cfg)
    row = episode_row(store, "train", name, params, cfg.env.id, scenario_name(cfg), env_config,
                      "training: one trace per episode seed", int(cfg.seed), metrics, curve=curve,
                      artifacts_path=str(model))
    store.commit(row)
    store.ingest()
    with make_logger(logger_config(cfg),
                     run_name=f"train-{name}-seed{cfg.seed}", run_dir=out,
                     config=OmegaConf.to_container(cfg, resolve=True)) as logger:
        logger.log_curve(curve)
        logger.log_metrics(metrics, step=int(cfg.total_timesteps), prefix="train_summary")
    Console().print(f"model: {model}\nresults: {store.root} (row {row['row_id'][:10]})\n{next_steps}")
