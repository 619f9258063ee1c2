"""One measured episode and its row in the results store.

:func:`measure_episode` plays an episode (:func:`ecngym.envs.rollout.run_episode`) and keeps what
the store and the leaderboard page need besides the env's summary: the per-step queue of the
controlled ports and the reward, and the controller's inference cost (wall time of ``act``).
:func:`episode_row` builds the row with its provenance.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ecngym import __version__
from ecngym.results.store import ResultStore, canonical_hash, git_commit, row_id


@dataclass
class Episode:
    """What one episode measured."""

    seed: int
    summary: dict[str, Any]
    flows: pd.DataFrame
    series: pd.DataFrame
    episode_return: float
    act_wall_s: list[float] = field(default_factory=list)
    wall_s: float = 0.0
    #: The return under every reward (``return_acc`` ...: :class:`~ecngym.envs.returns.RewardReturns`)
    reward_returns: dict[str, float] = field(default_factory=dict)

    def metrics(self) -> dict[str, float]:
        """The numeric metrics a row stores: the env's summary, the return, the inference cost."""
        out = {k: float(v) for k, v in self.summary.items() if isinstance(v, (int, float, np.number))
               and not isinstance(v, bool)}
        acts = np.asarray(self.act_wall_s) * 1e6
        out["return"] = float(self.episode_return)
        out["inference_us_mean"] = float(acts.mean()) if acts.size else float("nan")
        out["inference_us_p99"] = float(np.percentile(acts, 99)) if acts.size else float("nan")
        out["acts"] = float(acts.size)
        out.update(self.reward_returns)
        return out


def episode_metric_names() -> list[str]:
    """The metrics every episode row stores, whatever its controller (sorted).

    The env's summary (:func:`~ecngym.envs.summary.summary_metric_names`), the inference
    accounting (:func:`~ecngym.envs.rollout.accounting_metric_names`) and what
    :meth:`Episode.metrics` adds (``return``, ``inference_us_mean`` ...), read off an empty
    episode's metrics so the list cannot drift from a row's. A controller may add counts of its
    own (``InferenceCounter.extra``; its class lists them in ``extra_metrics``).
    """
    from ecngym.envs.returns import return_metric_names
    from ecngym.envs.rollout import accounting_metric_names
    from ecngym.envs.summary import summary_metric_names

    summary = dict.fromkeys([*summary_metric_names(), *accounting_metric_names()], 0.0)
    empty = Episode(seed=0, summary=summary, flows=pd.DataFrame(), series=pd.DataFrame(), episode_return=0.0,
                    reward_returns=dict.fromkeys(return_metric_names(), 0.0))
    return sorted(empty.metrics())


def measure_episode(env: Any, controller: Any, seed: int) -> Episode:
    """Play one episode of ``env`` with ``controller`` from ``seed`` and keep its measurements.

    Besides the env's own reward, the episode's return under every reward is recorded
    (:class:`~ecngym.envs.returns.RewardReturns`), for the benchmark's reward-score correlation.
    """
    from ecngym.envs.returns import RewardReturns
    from ecngym.envs.rollout import run_episode

    times: list[float] = []
    steps: list[dict[str, Any]] = []
    returns = RewardReturns(env)
    end_ns = [0]

    def on_step(step: int, reward: float, info: dict[str, Any]) -> None:
        returns.step(info)
        end_ns[0] = int(info["time_ns"])
        queue = np.asarray(info["telemetry"]["mean_queue_bytes"])[np.asarray(info["ports"])]
        steps.extend({"step": step, "time_ns": int(info["time_ns"]), "port": int(p), "queue_bytes": float(q),
                      "reward": float(reward)} for p, q in zip(info["ports"], queue, strict=True))

    start = time.perf_counter()
    summary, flows, ret = run_episode(env, controller, seed=seed, on_step=on_step, act_times=times)
    wall = time.perf_counter() - start
    return Episode(seed=seed, summary=dict(summary), flows=flows, series=pd.DataFrame(steps),
                   episode_return=float(ret), act_wall_s=times, wall_s=wall,
                   reward_returns=returns.finish(flows, end_ns[0]))


def scenario_identity(env_id: str, env_config: dict[str, Any]) -> str:
    """Hash of the scenario an episode was measured on: env id and resolved config without its action space.

    The action encoding (which templates a discrete space lists, or a continuous box) is how a
    controller speaks to the env, not the scenario, so controllers with different action spaces are
    ranked on the same scenario.
    """
    return canonical_hash([env_id, {k: v for k, v in env_config.items() if k != "action"}])


#: EnvConfig keys that say how a controller sees and drives the fabric, not what traffic and fabric the
#: episode simulates: the action encoding, the observation, the reward, LAECN's short monitoring interval
#: (the episode spans ``interval x episode_steps`` whatever it is; :class:`~ecngym.envs.EnvConfig`).
CONTROLLER_ENV_KEYS = ("action", "observation", "reward", "interval_short", "long_flow_bytes")


def traffic_identity(env_id: str, env_config: dict[str, Any]) -> str:
    """Hash of what an episode simulates: :func:`scenario_identity` without :data:`CONTROLLER_ENV_KEYS`.

    A learner that observes its own features, learns from its own reward or shortens its monitoring
    interval (LAECN) runs the same fabric, traffic and episode as the scenario's other controllers,
    so the suite board scores it beside them (``ecngym.benchmark.board.select_rows``).
    """
    return canonical_hash([env_id, {k: v for k, v in env_config.items() if k not in CONTROLLER_ENV_KEYS}])


def controller_identity(name: str, params: dict[str, Any]) -> str:
    """Hash of a controller's name and parameters; a trained model's file joins by its content hash."""
    params = dict(params)
    path = params.get("path")
    if isinstance(path, str) and Path(path).is_file():
        params["model_sha256"] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        params.pop("path")
    return canonical_hash([name, params])


#: The reward column of a stored training curve, by trainer: SB3's Monitor (each episode's return),
#: ACC's and LAECN's own curves (the mean step reward over a stretch of training), RLlib's (the mean
#: episode return of an iteration). Every stored curve also has ``timesteps`` (env steps so far).
CURVE_REWARD_COLUMNS = ("episode_return", "mean_reward", "episode_return_mean")


def curve_reward_column(curve: pd.DataFrame) -> str:
    """The reward column of a training curve (:data:`CURVE_REWARD_COLUMNS`).

    Raises:
        KeyError: If it has none of them.
    """
    for column in CURVE_REWARD_COLUMNS:
        if column in curve.columns:
            return column
    raise KeyError(f"a training curve has one of {CURVE_REWARD_COLUMNS}; got {list(curve.columns)}")


def episode_row(store: ResultStore, command: str, controller_name: str, controller_params: dict[str, Any],
                env_id: str, scenario: str, env_config: dict[str, Any], trace_hash: str, seed: int,
                metrics: dict[str, float], *, episode_return: float | None = None, wall_s: float | None = None,
                flows: pd.DataFrame | None = None, series: pd.DataFrame | None = None,
                curve: pd.DataFrame | None = None, artifacts_path: str | None = None) -> dict[str, Any]:
    """Write a row's Parquet files and return the row, ready for :meth:`ResultStore.commit`."""
    chash = controller_identity(controller_name, controller_params)
    shash = scenario_identity(env_id, env_config)
    rid = row_id(command, chash, shash, seed)
    row = {"row_id": rid, "command": command, "controller": controller_name,
           "controller_params": _json(controller_params), "controller_hash": chash, "env_id": env_id,
           "scenario": scenario, "scenario_hash": shash, "scenario_config": _json(env_config),
           "trace_hash": trace_hash, "seed": int(seed), "ecngym_version": __version__,
           "git_commit": git_commit(), "episode_return": episode_return, "wall_s": wall_s,
           "artifacts_path": artifacts_path, "metrics": metrics}
    for kind, column, frame in (("flows", "flows_path", flows), ("series", "series_path", series),
                                ("curves", "curve_path", curve)):
        if frame is not None:
            row[column] = store.write_frame(kind, rid, frame)
    return row


def _json(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True, default=str)
