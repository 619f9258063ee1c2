"""``mpc_forecast``: a causal look-ahead tuner that branches the fabric and plays each setting on a forecast.

Model-predictive control on the simulator itself: at each decision (every ``decision_steps`` env
steps) the controller takes a step-boundary snapshot of the running fabric
(:mod:`ecngym.envs.branch`), and on one branch per candidate setting it

1. replaces the trace's pending flows, which a real controller cannot know, by a **forecast**
   resampled from the flows it has seen start in the last ``lookback_steps``
   (:mod:`ecngym.baselines.forecast`; ``Fabric.replace_pending_flows``);
2. plays the candidate for ``horizon_steps``;
3. scores the horizon (below).

It then applies the best candidate until the next decision. Every candidate of one decision sees
the same forecast (common random numbers), so their scores differ by the setting only. The
candidates are the scenario's templates (a ``Discrete`` action), or for a ``MultiDiscrete`` one
the uniform settings plus every single-component change of the current one (the window oracle's
neighbourhood, :func:`ecngym.benchmark.oracle_window.neighbour_actions`).

**The horizon's score** [OURS] is the scenario's score restricted to what a horizon can measure:
the flows in scope are those in flight at the decision and the forecast ones; a flow finished
within the horizon counts its slowdown, a flow still running counts a projected slowdown, its
FCT so far plus ``outstanding_weight`` x its outstanding bytes at its bottleneck rate (the
serialisation part of its ideal FCT, pro rata), over its ideal FCT. ``score`` picks the
statistic of :func:`ecngym.envs.summary.episode_summary` over these (default the mean over all
flows, ``slowdown_avg_all``, the v1 scenarios' score). With weight 1 an unfinished flow is
counted as if it finished at line rate right after the horizon: an optimistic bound, so a setting
that leaves more bytes outstanding is still penalised for them.

The tuner is causal: it reads the fabric's flow table only through
:meth:`ecngym.envs.view.EnvView.flows_started` (flows started before now), and every branch's
future is the forecast's. It is the strongest non-learning adaptive competitor built on this
simulator, in the spirit of tuning "static" parameters with a counterfactual simulator
(Polyphony, 2026); cloning a running simulation at decision points is Hybinette & Fujimoto's
simulation cloning (ACM TOMACS 2001).

Cost: ``candidates x forecast_samples`` branches per decision, each ``horizon_steps`` env steps.
Each decision's CPU seconds (the driver's and every branch's own), wall seconds and branches are
in :attr:`MpcForecastController.log`; their totals join the episode summary (``mpc_*``, see
:attr:`MpcForecastController.extra_metrics`). Branching forks the process: it refuses
(:class:`~ecngym.envs.branch.BranchError`) where other threads run, and works in the benchmark
runner's worker processes.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from ecngym.agents.inference import InferenceCounter
from ecngym.baselines import params
from ecngym.baselines.forecast import forecast_flows
from ecngym.envs.branch import BranchHub, run_branches
from ecngym.envs.view import EnvView
from ecngym.error import ConfigError

Action = tuple[int, ...]

#: Summary keys the controller adds (its :class:`~ecngym.agents.inference.InferenceCounter`'s extra counts)
MPC_METRICS = ("mpc_branches", "mpc_branch_env_steps", "mpc_cpu_s", "mpc_wall_s")


def horizon_score(cols: dict[str, np.ndarray], decision_ns: int, score: str, outstanding_weight: float) -> float:
    """The horizon's score of a branch's flow records (module doc); NaN where no flow is in scope.

    Args:
        cols: ``Fabric.flow_columns()`` at the horizon's end.
        decision_ns: The decision's time (flows finished before it are out of scope).
        score: A ``slowdown_*`` statistic of :func:`~ecngym.envs.summary.episode_summary`.
        outstanding_weight: Weight of an unfinished flow's outstanding bytes (>= 0).
    """
    from ecngym.envs.summary import episode_summary

    finished = np.asarray(cols["finished"], dtype=bool)
    finish = np.asarray(cols["finish_ns"])
    scope = ~(finished & (finish < decision_ns))
    if not scope.any():
        return float("nan")
    end_ns = float(cols["end_ns"]) if "end_ns" in cols else float(np.nanmax(finish))
    size = np.asarray(cols["size_bytes"], dtype=np.float64)[scope]
    ideal = np.asarray(cols["ideal_fct_ns"], dtype=np.float64)[scope]
    base = np.asarray(cols["base_rtt_ns"], dtype=np.float64)[scope]
    start = np.asarray(cols["start_ns"], dtype=np.float64)[scope]
    outstanding = size - np.asarray(cols["delivered_bytes"], dtype=np.float64)[scope]
    done = finished[scope]
    # an unfinished flow: its time so far, plus its outstanding bytes at its bottleneck rate (the
    # serialisation part of its ideal FCT, pro rata), weighted
    rest_ns = outstanding_weight * outstanding / size * (ideal - base)
    fct = np.where(done, finish[scope] - start, end_ns - start + rest_ns)
    frame = pd.DataFrame({"finished": np.ones(len(size), bool), "size_bytes": size,
                          "slowdown": np.maximum(1.0, fct / ideal)})
    return float(episode_summary(frame, np.zeros((0, 0)), np.zeros(0), 0.0, 0, 0, 0, 0)[score])


def play_forecast(env: Any, forecast: pd.DataFrame, action: Any, steps: int, score: str,
                  outstanding_weight: float) -> tuple[dict[str, Any], bool]:
    """Branch function: replace the pending flows by ``forecast``, play ``action`` for ``steps``, score the horizon."""
    view = EnvView(env)
    decision_ns = view.time_ns
    view.replace_pending_flows(forecast)
    played = 0
    for _ in range(steps):
        _, _, _, truncated, _ = env.step(action)
        played += 1
        if truncated:
            break
    cols = view.flow_columns()
    cols["end_ns"] = view.time_ns
    # a forked process starts with zero CPU time: process_time() is this branch's own
    return {"score": horizon_score(cols, decision_ns, score, outstanding_weight), "steps": played,
            "cpu_s": time.process_time()}, False


class MpcForecastController:
    """Look-ahead tuning on branches of the fabric under a forecast of the traffic (module doc).

    Args:
        decision_steps: Env steps between decisions (>= 1; 48 steps of 20.8 us are 1 ms).
        horizon_steps: Env steps each candidate is played for (>= 1).
        lookback_steps: Env steps of the look-back window the forecast is resampled from (>= 1).
        score: The horizon's statistic: a ``slowdown_*`` key of the episode summary (the
            scenario's score where it is one; default ``slowdown_avg_all``).
        outstanding_weight: Weight of an unfinished flow's outstanding bytes in its projected
            slowdown (>= 0; 1: as if it finished at its bottleneck rate after the horizon).
        forecast_samples: Forecasts per decision; a candidate's score is the mean over them (>= 1).
        processes: Branches simulated at once (>= 1; the benchmark runner already runs one
            worker per core).
        initial: The template index (or a list, one per component) played until the first
            decision that has seen flows; ``None``: the env's static setting.
        seed: Seed of the forecasts (decision ``d`` draws from ``(seed, d)``).
        name: Name in tables.

    Raises:
        ConfigError: On a bad parameter, naming ``controller.<field>``.
    """

    #: Counts this controller adds to the episode summary
    extra_metrics = MPC_METRICS
    #: It forks the process at every decision (``ecngym eval`` then starts no spinner thread)
    forks = True

    def __init__(self, decision_steps: int = 48, horizon_steps: int = 96, lookback_steps: int = 48,
                 score: str = "slowdown_avg_all", outstanding_weight: float = 1.0, forecast_samples: int = 2,
                 processes: int = 1, initial: int | list[int] | None = None, seed: int = 0,
                 name: str = "mpc_forecast") -> None:
        from ecngym.envs.summary import summary_metric_names

        self.decision_steps = params.whole("decision_steps", decision_steps, 1)
        self.horizon_steps = params.whole("horizon_steps", horizon_steps, 1)
        self.lookback_steps = params.whole("lookback_steps", lookback_steps, 1)
        allowed = [k for k in summary_metric_names() if k.startswith("slowdown_")]
        self.score = params.choice("score", score, allowed)
        self.outstanding_weight = params.real("outstanding_weight", outstanding_weight, 0)
        self.forecast_samples = params.whole("forecast_samples", forecast_samples, 1)
        self.processes = params.whole("processes", processes, 1)
        if initial is not None and not (isinstance(initial, int) and not isinstance(initial, bool)) and not (
                isinstance(initial, list) and initial and all(isinstance(i, int) for i in initial)):
            raise ConfigError("controller.initial", f"got {initial!r}; a template index, a list of them or null")
        self.initial = initial
        self.seed = params.whole("seed", seed, 0)
        self.name = name
        self.interval_steps = self.decision_steps
        self.log: list[dict[str, Any]] = []
        self.inference = InferenceCounter()
        self._env: Any = None
        self._view: EnvView | None = None
        self._current: Action = ()
        self._decision = 0

    def reset(self, env: Any) -> None:
        """Start an episode: read the action space and the setting played until the first informed decision.

        Raises:
            ConfigError: Naming ``controller.initial`` for an index outside the action space, or
                ``env.action`` for a continuous action space (the candidates are templates).
        """
        base = env.unwrapped
        space = base.action_space
        if env.action_space != space:
            raise ConfigError("env.action", "mpc_forecast plays the env's own action space; a wrapper changes it "
                                            f"({env.action_space} over {space})")
        if not hasattr(space, "n") and not hasattr(space, "nvec"):
            raise ConfigError("env.action", f"mpc_forecast plays the scenario's templates; got {space} "
                                            "(use action.type=discrete)")
        self._env = base
        self._view = EnvView(base)
        if self.initial is None:
            first = np.full(np.shape(space.sample()) or 1, self._view.static_action_index)
        else:
            first = np.atleast_1d(np.asarray(self.initial, dtype=np.int64))
        self._current = tuple(int(x) for x in first)
        if not space.contains(self._action(self._current)):
            raise ConfigError("controller.initial", f"got {self.initial!r}, not an action of {space}")
        self.log = []
        self.inference.reset()
        self._decision = 0

    def _action(self, a: Action) -> Any:
        space = self._env.action_space
        return int(a[0]) if space.shape == () else np.asarray(a, dtype=np.int64)

    def candidates(self) -> list[Action]:
        """The settings played at a decision (module doc)."""
        from ecngym.benchmark.oracle_window import neighbour_actions

        return neighbour_actions(self._env.action_space, self._current)

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """Decide: branch, play every candidate on the forecast, apply the best (module doc).

        Raises:
            BranchError: Where forking is unsafe (threads running, Ray, a torch thread pool).
        """
        wall0, cpu0 = time.perf_counter(), time.process_time()
        env, view = self._env, self._view
        now = view.time_ns
        window = min(self.lookback_steps * view.interval_ns, now)
        seen = view.flows_started(now - window)
        rng_seed = (self.seed, self._decision)
        self._decision += 1
        self.inference.decisions += 1
        forecasts = [forecast_flows(seen, now, window, self.horizon_steps * view.interval_ns,
                                    np.random.default_rng([*rng_seed, k])) for k in range(self.forecast_samples)]
        record: dict[str, Any] = {"decision": self._decision - 1, "time_ns": now, "seen_flows": len(seen),
                                  "forecast_flows": int(np.mean([len(f) for f in forecasts]))}
        branches = steps = 0
        branch_cpu = 0.0
        if len(seen):
            cands = self.candidates()
            scores = np.zeros(len(cands))
            with BranchHub() as hub:
                snap = hub.snapshot(env)
                work = [(snap, play_forecast, (f, self._action(a), self.horizon_steps, self.score,
                                               self.outstanding_weight)) for a in cands for f in forecasts]
                results = run_branches(hub, work, self.processes)
                snap.close()
            for i, res in enumerate(results):
                scores[i // self.forecast_samples] += res["score"] / self.forecast_samples
                branch_cpu += float(res["cpu_s"])
                steps += int(res["steps"])
            branches = len(results)
            self._current = _best(cands, scores, self._current)
            record.update({f"score_{'_'.join(map(str, a))}": float(s) for a, s in zip(cands, scores, strict=True)})
        record["action"] = "_".join(map(str, self._current))
        cpu = time.process_time() - cpu0 + branch_cpu
        wall = time.perf_counter() - wall0
        record.update(branches=branches, branch_env_steps=steps, cpu_s=cpu, wall_s=wall)
        self.log.append(record)
        extra = self.inference.extra
        extra["mpc_branches"] = extra.get("mpc_branches", 0) + branches
        extra["mpc_branch_env_steps"] = extra.get("mpc_branch_env_steps", 0) + steps
        extra["mpc_cpu_s"] = extra.get("mpc_cpu_s", 0.0) + cpu
        extra["mpc_wall_s"] = extra.get("mpc_wall_s", 0.0) + wall
        return self._action(self._current)


def _best(cands: list[Action], scores: np.ndarray, current: Action) -> Action:
    """The lowest score; on a tie (or where nothing was measurable) the current setting, else the first."""
    finite = np.isfinite(scores)
    if not finite.any():
        return current
    best = float(np.min(scores[finite]))
    tied = [a for a, s in zip(cands, scores, strict=True) if np.isfinite(s) and s == best]
    return current if current in tied else tied[0]
