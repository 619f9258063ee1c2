"""Learning curves on the score: a training policy scored greedily on the scenario's validation seeds.

Every ``eval_every_steps`` of a tier (:mod:`ecngym.benchmark.tiers`) the trainer calls a
:class:`Validator`: it writes the acting networks as a checkpoint snapshot (safetensors and a card,
the format :class:`~ecngym.benchmark.checkpoints.CheckpointController` plays) and plays it on each
validation seed in one child process (a process holds one fabric, and training's is open), then
normalizes each seed's score against ``static_default`` (0) and ``static_tuned`` (1) played on
the same seed there once (the board's rule, paired per seed: ``(S_default(seed) − S) / gap``). The
rows go to ``validation.csv`` in the run folder (``env_steps``, ``score_mean``, ``normalized_mean``
and per seed). A tier's stopping rule reads the normalized means (:func:`should_stop`).
:func:`aggregate_curves` gives a curve's mean and 95 % CI over training seeds (the notebook
``notebooks/learner_curves.ipynb``, the docs and the model cards use it).
"""

from __future__ import annotations

import json
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

VALIDATION_FILE = "validation.csv"
SNAPSHOT = "validation_snapshot"


def live_acting_nets(agent: str, model: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The acting networks of a live learner, as the checkpoint writer takes them from a saved one.

    The learner's :class:`~ecngym.agents.acting_nets.ActingNets` (``live``) says which: SB3's DQN and
    ACC's DoubleDQN act with their Q-network, PPO with its policy head, LAECN / HAECN with their
    policy generator and decision module.
    """
    from ecngym.agents.acting_nets import learner_acting

    return learner_acting(agent).live(model)


def write_snapshot(folder: Path, card: dict[str, Any], tensors: dict[str, np.ndarray],
                   nets: dict[str, Any]) -> Path:
    """A checkpoint folder holding ``tensors`` with ``card`` (its ``nets`` and sizes filled in)."""
    import hashlib

    from safetensors.numpy import save_file

    from ecngym.benchmark.checkpoints import CARD_FILE, WEIGHTS_FILE

    folder.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(folder / WEIGHTS_FILE))
    data = (folder / WEIGHTS_FILE).read_bytes()
    # a snapshot is a card like a shipped one (the player checks every card alike); what only a
    # finished run knows (its command, budget, cost, scores) says so
    unshipped = {"command": "(a validation snapshot of a training run in progress: not shipped)",
                 "budget_steps": 1, "budget_source": "(snapshot)", "train_trace_seeds": [], "episodes_trained": 0,
                 "hyperparams": {}, "hyperparams_source": "(snapshot)", "versions": {}, "training_cost": {},
                 "created": "", "curve": "", "scores": {}}
    full = {**unshipped, **card, "nets": nets, "n_actions": int(next(iter(nets.values()))["layers"][-1][1]),
            "weights_sha256": hashlib.sha256(data).hexdigest(), "weights_bytes": len(data)}
    (folder / CARD_FILE).write_text(json.dumps(full, default=str))
    return folder


def sb3_snapshot_card(scenario: Any, agent: str, seed: int, env_overrides: dict[str, Any],
                      obs_dim: int) -> dict[str, Any]:
    """The card fields a snapshot of an SB3 learner needs to be played (no traces: it is never shipped)."""
    from ecngym.benchmark.checkpoints import FORMAT, FORMAT_VERSION, observation_layout
    from ecngym.benchmark.suite import scenario_env

    return {"format": FORMAT, "format_version": FORMAT_VERSION, "agent": agent, "scenario": scenario.name,
            "scenario_version": scenario.version, "env_id": scenario.id, "seed": int(seed), "trace_hashes": {},
            "granularity": None, "static_action": None, "agent_config": None, "env_overrides": env_overrides,
            "observation": observation_layout(scenario_env(scenario), obs_dim)}


def agent_snapshot_card(scenario: Any, agent: dict[str, Any], seed: int, base_env: dict[str, Any]) -> dict[str, Any]:
    """The card fields a snapshot of a learning agent (ACC, LAECN, HAECN) needs to be played.

    Its observation layout, static template and action count come from a probe of the parallel env
    it trains on (built and closed here, before training opens its own).

    Args:
        scenario: The :class:`~ecngym.benchmark.suite.Scenario`.
        agent: The agent's config as it trains.
        seed: The training seed.
        base_env: The scenario's resolved env config.
    """
    from ecngym.agents.config import agent_env_config
    from ecngym.benchmark.checkpoints import FORMAT, FORMAT_VERSION, observation_layout
    from ecngym.envs.multi_agent import EcnTuningParallelEnv
    from ecngym.envs.view import EnvView

    env_cfg = agent_env_config(base_env, agent["env"])
    probe = EcnTuningParallelEnv(env_cfg, agent_granularity=agent["granularity"])
    try:
        obs_dim = int(probe.observation_space(probe.possible_agents[0]).shape[0])
        static_action = int(EnvView(probe).static_action_index)
    finally:
        probe.close()
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "agent": agent["name"], "scenario": scenario.name,
            "scenario_version": scenario.version, "env_id": scenario.id, "seed": int(seed), "trace_hashes": {},
            "granularity": agent["granularity"], "static_action": static_action, "agent_config": agent,
            "env_overrides": {**agent["env"], "action": {"scope": "port"}},
            "observation": observation_layout(env_cfg.as_dict(), obs_dim)}


def _play(job: dict[str, Any]) -> list[float]:
    """One controller's score on each seed (in the child process)."""
    import gymnasium as gym

    import ecngym.envs  # noqa: F401
    from ecngym.baselines.registry import build_controller
    from ecngym.benchmark.suite import load_scenario
    from ecngym.envs.for_controller import make_for_controller
    from ecngym.results.record import measure_episode

    sc = load_scenario(job["scenario"], job["scenario_dir"])
    controller = build_controller(job["controller"])
    env = make_for_controller(lambda extra: gym.make(sc.id, **{**sc.env, **extra}), controller)
    try:
        return [float(measure_episode(env, controller, seed).summary[sc.protocol.score]) for seed in job["seeds"]]
    finally:
        env.close()


def should_stop(normalized_means: list[float], steps: int, rule: Any) -> bool:
    """A tier's stopping rule (:class:`~ecngym.benchmark.tiers.StopRule`) on the validation curve so far."""
    from ecngym.agents.plateau import plateaued

    if rule is None or steps < rule.min_steps or not np.all(np.isfinite(normalized_means)):
        return False
    return plateaued(normalized_means, rule.window, rule.patience, rule.margin)


class Validator:
    """Scores a training policy on the validation seeds (module docstring); the hook of a resumable run.

    Args:
        scenario: The :class:`~ecngym.benchmark.suite.Scenario`.
        scenario_dir: Its folder (None: the package's).
        agent: The learner's name.
        seed: The training seed.
        seeds: The validation seeds.
        run_dir: The training run's folder (``validation.csv`` and the snapshot go there).
        card: The snapshot card (:func:`sb3_snapshot_card`, :func:`agent_snapshot_card`).
        rule: The tier's stopping rule, or None.
        reference_dir: Where the scenario's references file is (None: the package's); without one the
            rows hold raw scores and NaN normalized ones.
        resume_steps: Env steps of the resumed state (rows after it are dropped: they are redone), or None.
    """

    def __init__(self, scenario: Any, scenario_dir: Any, agent: str, seed: int, seeds: list[int], run_dir: Path,
                 card: dict[str, Any], rule: Any = None, reference_dir: Any = None,
                 resume_steps: int | None = None) -> None:
        self.scenario, self.agent, self.seeds, self.card, self.rule = scenario, agent, list(seeds), card, rule
        self.scenario_dir = None if scenario_dir is None else str(scenario_dir)
        self.path = Path(run_dir) / VALIDATION_FILE
        self.snapshot = Path(run_dir) / SNAPSHOT
        self.rows: list[dict[str, Any]] = []
        if resume_steps is not None and self.path.is_file():
            old = pd.read_csv(self.path)
            self.rows = old[old["env_steps"] <= resume_steps].to_dict("records")
        self.pool = ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn"))
        self.refs = self._references(reference_dir)

    def _job(self, controller: dict[str, Any]) -> dict[str, Any]:
        return {"scenario": self.scenario.name, "scenario_dir": self.scenario_dir, "controller": controller,
                "seeds": self.seeds}

    def _references(self, reference_dir: Any) -> dict[str, list[float]] | None:
        from ecngym.benchmark.references import reference_controllers
        from ecngym.error import ConfigError

        try:
            cfgs = reference_controllers(self.scenario.name, reference_dir)
        except ConfigError:  # no references file: raw scores only
            return None
        return {name: self.pool.submit(_play, self._job(cfgs[name])).result()
                for name in ("static_default", "static_tuned")}

    def normalized(self, scores: list[float]) -> list[float]:
        """Each seed's score normalized (NaN without references)."""
        if self.refs is None:
            return [float("nan")] * len(scores)
        sign = 1.0 if self.scenario.protocol.lower_is_better else -1.0
        default, tuned = np.asarray(self.refs["static_default"]), np.asarray(self.refs["static_tuned"])
        gap = float(sign * (default - tuned).mean())
        return [float(sign * (d - s) / gap) if gap else float("nan") for d, s in zip(default, scores, strict=True)]

    def __call__(self, model: Any, env_steps: int) -> bool:
        """Score ``model`` now; append the row; whether the tier's rule stops the run."""
        tensors, nets = live_acting_nets(self.agent, model)
        write_snapshot(self.snapshot, self.card, tensors, nets)
        controller = {"_target_": "ecngym.benchmark.checkpoints.CheckpointController", "path": str(self.snapshot),
                      "name": f"{self.agent}_validation"}
        scores = self.pool.submit(_play, self._job(controller)).result()
        norm = self.normalized(scores)
        row: dict[str, Any] = {"env_steps": int(env_steps), "score_mean": float(np.mean(scores)),
                               "normalized_mean": float(np.mean(norm))}
        for seed, s, n in zip(self.seeds, scores, norm, strict=True):
            row[f"score_{seed}"], row[f"normalized_{seed}"] = s, n
        self.rows.append(row)
        pd.DataFrame(self.rows).to_csv(self.path, index=False)
        return should_stop([r["normalized_mean"] for r in self.rows], env_steps, self.rule)

    def close(self) -> None:
        """End the child process."""
        self.pool.shutdown()


def aggregate_curves(curves: list[pd.DataFrame], column: str = "normalized_mean") -> pd.DataFrame:
    """Mean and 95 % CI (Student's t over runs) of one column of several runs' curves, per env step.

    Args:
        curves: One ``validation.csv`` frame per training seed.
        column: The column to aggregate.

    Returns:
        ``env_steps``, ``mean``, ``ci_low``, ``ci_high``, ``runs`` (runs with a point there).
    """
    from scipy import stats

    if not curves:
        return pd.DataFrame(columns=["env_steps", "mean", "ci_low", "ci_high", "runs"])
    frame = pd.concat([c[["env_steps", column]] for c in curves])
    rows = []
    for steps, group in frame.groupby("env_steps"):
        x = group[column].to_numpy(float)
        mean = float(x.mean())
        half = float(stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else np.nan
        rows.append({"env_steps": int(steps), "mean": mean, "ci_low": mean - half, "ci_high": mean + half,
                     "runs": len(x)})
    return pd.DataFrame(rows)
