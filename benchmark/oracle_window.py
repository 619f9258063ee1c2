"""``oracle_window``: the best schedule of settings per control window, found in hindsight with state carried.

The phase oracle (:mod:`ecngym.benchmark.oracle`) scores each setting on a whole-trace static run
and then switches: the queues and DCQCN rates carried across a boundary are not what it measured,
so it can lose to one constant. This oracle searches on branches of the running simulation
(:mod:`ecngym.envs.branch`): from a snapshot at the start of control window ``w`` holding the
state that its schedule so far produced, each candidate setting is played for the window, and
the state that results is held for the next level. A schedule prefix is scored by a *rollout*:
the prefix, then its last setting held to the episode's end, i.e. a complete schedule whose real
score is measured, not estimated. A beam of the ``beam_width`` best prefixes goes on to the next
window (greedy: width 1). Every rollout is a real, complete schedule, and the rollouts of the first
window are the constant schedules of every candidate, so the best rollout found is never worse
than the best constant on that trace, by construction. The result is a hindsight reference (it
sees the trace's future through its branches), never a ranked controller.

Candidates per window: every template of a ``Discrete`` action; for a ``MultiDiscrete`` action (one
template per layer or per port) the product is too large (7^3 = 343 for three layers), so the
candidates are the uniform settings (one template on every component) plus every single-component
change of the prefix's last setting; the constants kept are the uniform ones plus any given as
``constants`` (e.g. ``static_tuned``'s). Hindsight search with state is what makes an oracle an
upper bound (simulation cloning: Hybinette & Fujimoto, ACM TOMACS 2001).
"""

from __future__ import annotations

import itertools
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ecngym.envs.branch import BranchHub, Snapshot, run_branches
from ecngym.error import ConfigError
from ecngym.units import parse_time_ns

Action = tuple[int, ...]


def _step_action(env: Any, action: Action) -> Any:
    """``action`` in the form ``env.step`` takes (an int for Discrete, an array for MultiDiscrete)."""
    return int(action[0]) if env.action_space.shape == () else np.asarray(action, dtype=np.int64)


def play_window(env: Any, action: Action, steps: int, score: str) -> tuple[dict[str, Any], bool]:
    """Branch function: play ``action`` for up to ``steps`` steps; hold there, or report the score at the end.

    Returns:
        ``({"done": False}, True)`` to hold at the window's end, or ``({"done": True, "score": ...,
        "summary": {...}}, False)`` where the episode ended inside the window.
    """
    a = _step_action(env, action)
    for _ in range(steps):
        _, _, _, truncated, info = env.step(a)
        if truncated:
            return _final(info, score), False
    return {"done": False, "cpu_s": time.process_time()}, True


def rollout(env: Any, action: Action, score: str) -> tuple[dict[str, Any], bool]:
    """Branch function: hold ``action`` to the episode's end; report the score."""
    a = _step_action(env, action)
    while True:
        _, _, _, truncated, info = env.step(a)
        if truncated:
            return _final(info, score), False


def bucket_mean_slowdown(summary: Mapping[str, Any]) -> float:
    """The mean of the size buckets' mean slowdowns (each bucket weighs the same, whatever its flow count).

    A mean over all flows lets the phase with the most (small) flows pick the tuned setting; the seed
    papers report small-flow and large-flow slowdowns separately, so this score weighs them alike.
    """
    from ecngym.sim_backend.metrics import SIZE_BUCKETS

    values = [float(summary.get(f"slowdown_avg_{b}", float("nan"))) for b in SIZE_BUCKETS]
    finite = [v for v in values if math.isfinite(v)]
    return float(np.mean(finite)) if finite else float("nan")


#: Scores the oracle and the headroom map can optimise beyond the episode summary's own keys.
DERIVED_SCORES = {"slowdown_avg_bucketmean": bucket_mean_slowdown}


def score_of(summary: Mapping[str, Any], score: str) -> float:
    """The episode's ``score``: a summary key, or one of :data:`DERIVED_SCORES`."""
    return float(DERIVED_SCORES[score](summary)) if score in DERIVED_SCORES else float(summary[score])


def check_score(score: str, field: str = "score") -> str:
    """``score`` if it is an episode-summary metric or a derived score.

    Raises:
        ConfigError: Naming ``field``, with the allowed names.
    """
    from ecngym.envs.summary import summary_metric_names

    known = [*summary_metric_names(), *DERIVED_SCORES]
    if score not in known:
        raise ConfigError(field, f"got {score!r}; expected an episode metric: {', '.join(known)}")
    return score


def _final(info: dict[str, Any], score: str) -> dict[str, Any]:
    summary = info["summary"]
    # a forked process starts with zero CPU time: process_time() is this branch's own
    return {"done": True, "score": score_of(summary, score), "cpu_s": time.process_time(),
            "summary": {k: float(v) for k, v in summary.items()
                        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)}}


@dataclass
class WindowSearchResult:
    """What :func:`search_windows` found on one trace.

    Attributes:
        schedule: One action per window (a tuple of template indices per action component).
        score: The schedule's score (a real run's, on a branch from the episode's start).
        summary: That run's episode summary (numeric entries).
        constants: Score of every constant schedule evaluated (action -> score).
        rollouts: How many complete schedules were played.
        env_steps: Env steps simulated by the search, all branches together.
        cpu_s: CPU seconds of the search: the driver's and every branch's own (a fork starts at zero).
        wall_s: Wall seconds of the search.
        levels: Per window: the beam's best rollout score after that window.
    """

    schedule: list[Action]
    score: float
    summary: dict[str, float]
    constants: dict[Action, float]
    rollouts: int
    env_steps: int
    cpu_s: float
    wall_s: float
    levels: list[float] = field(default_factory=list)


def uniform_actions(space: Any) -> list[Action]:
    """One action per template, the same template on every component of the action."""
    if space.shape == ():
        return [(i,) for i in range(int(space.n))]
    nvec = np.asarray(space.nvec).reshape(-1)
    if len(set(nvec.tolist())) != 1:
        raise ConfigError("env.action", f"the oracle needs the same templates on every action component, got {nvec}")
    return [tuple([i] * len(nvec)) for i in range(int(nvec[0]))]


def neighbour_actions(space: Any, last: Action | None) -> list[Action]:
    """The window's candidates after a prefix ending in ``last`` (module doc)."""
    out = uniform_actions(space)
    if space.shape == () or last is None:
        return out
    nvec = np.asarray(space.nvec).reshape(-1)
    seen = set(out)
    for comp, n in enumerate(nvec):
        for v in range(int(n)):
            cand = tuple(v if i == comp else x for i, x in enumerate(last))
            if cand not in seen:
                seen.add(cand)
                out.append(cand)
    return out


def search_windows(env: Any, seed: int, window_steps: int, beam_width: int, score: str,
                   lower_is_better: bool = True, constants: Sequence[Action] = (),
                   processes: int | None = None) -> WindowSearchResult:
    """Beam search over per-window settings on one trace, on branches of ``env`` (module doc).

    Args:
        env: A fresh :class:`~ecngym.envs.ecn_env.EcnTuningEnv` of the scenario (not reset yet).
        seed: The episode seed (the trace).
        window_steps: Env steps per control window (>= 1).
        beam_width: Prefixes kept per window (1 = greedy).
        score: The episode-summary key to optimise.
        lower_is_better: Its direction.
        constants: More constant schedules to evaluate (a MultiDiscrete action's per-component ones).
        processes: Branches simulated at once (default: the CPU count).

    Returns:
        The best schedule found and the search's accounting.

    Raises:
        ConfigError: Naming ``oracle.window_steps`` / ``oracle.beam_width`` when not >= 1.
    """
    if window_steps < 1:
        raise ConfigError("oracle.window_steps", f"got {window_steps}; a window is at least one env step")
    if beam_width < 1:
        raise ConfigError("oracle.beam_width", f"got {beam_width}; the beam keeps at least one prefix")
    check_score(score, "oracle.score")
    processes = max(1, processes or os.cpu_count() or 1)
    sign = 1.0 if lower_is_better else -1.0
    steps_total = int(env.unwrapped.config.episode_steps)
    windows = math.ceil(steps_total / window_steps)
    space = env.action_space
    t0, cpu0 = time.perf_counter(), time.process_time()
    branch_cpu_s = 0.0
    env.reset(seed=seed)
    best: tuple[float, list[Action], dict[str, float]] | None = None
    constant_scores: dict[Action, float] = {}
    rollouts = 0
    env_steps = 0
    levels: list[float] = []

    def consider(sched: list[Action], res: dict[str, Any]) -> None:
        nonlocal best
        if best is None or sign * res["score"] < sign * best[0]:
            best = (res["score"], sched, res["summary"])

    with BranchHub() as hub:
        root = hub.snapshot(env)
        beam: list[tuple[list[Action], Snapshot]] = [([], root)]
        for w in range(windows):
            steps_left = steps_total - w * window_steps
            this_window = min(window_steps, steps_left)
            jobs: list[tuple[list[Action], Snapshot, Action]] = []
            for prefix, holder in beam:
                cands = neighbour_actions(space, prefix[-1] if prefix else None)
                if w == 0:
                    cands += [tuple(int(x) for x in c) for c in constants if tuple(c) not in set(cands)]
                jobs += [(prefix, holder, a) for a in cands]
            # play each candidate's window on its own branch (held there unless the episode ends)
            window_out = run_branches(hub, [(holder, play_window, (a, this_window, score)) for _, holder, a in jobs],
                                      processes)
            env_steps += this_window * len(jobs)
            scored: list[tuple[float, list[Action], Any]] = []
            held: list[tuple[list[Action], Snapshot]] = []
            for (prefix, _, a), out in zip(jobs, window_out, strict=True):
                sched = [*prefix, a]
                branch_cpu_s += float((out.info if isinstance(out, Snapshot) else out)["cpu_s"])
                if isinstance(out, Snapshot):
                    held.append((sched, out))
                else:
                    rollouts += 1
                    consider(sched, out)
                    scored.append((out["score"], sched, None))
                    if w == 0:
                        constant_scores[a] = out["score"]
            if held:
                roll_out = run_branches(hub, [(snap, rollout, (sched[-1], score)) for sched, snap in held], processes)
                env_steps += (steps_left - this_window) * len(held)
                for (sched, snap), out in zip(held, roll_out, strict=True):
                    rollouts += 1
                    branch_cpu_s += float(out["cpu_s"])
                    full = sched + [sched[-1]] * (windows - len(sched))
                    consider(full, out)
                    scored.append((out["score"], sched, snap))
                    if w == 0:
                        constant_scores[sched[-1]] = out["score"]
            for _, holder in beam:
                holder.close()
            scored.sort(key=lambda r: sign * r[0])
            levels.append(float(scored[0][0]))
            keep = [(sched, snap) for _, sched, snap in scored if snap is not None][:beam_width]
            for _, _, snap in scored:
                if snap is not None and all(snap is not k[1] for k in keep):
                    snap.close()
            beam = keep
            if not beam:
                break
        for _, snap in beam:
            snap.close()
    assert best is not None
    return WindowSearchResult(schedule=best[1], score=float(best[0]), summary=best[2],
                              constants=constant_scores, rollouts=rollouts, env_steps=env_steps,
                              cpu_s=time.process_time() - cpu0 + branch_cpu_s, wall_s=time.perf_counter() - t0,
                              levels=levels)


def window_steps_of(env: Any, window: Any) -> int:
    """Env steps per control window of length ``window`` ("1ms" or ns): the nearest whole number, >= 1.

    Raises:
        ConfigError: Naming ``oracle.window`` if it is not a positive duration.
    """
    ns = parse_time_ns(window, "oracle.window")
    if ns <= 0:
        raise ConfigError("oracle.window", f"got {window!r}; expected a positive duration such as '1ms'")
    from ecngym.envs.view import EnvView

    interval = int(EnvView(env).interval_ns)
    return max(1, round(ns / interval))


class WindowScheduleController:
    """Play a per-window schedule of actions, one per trace (the ``oracle_window`` reference's controller).

    Args:
        window_steps: Env steps per window.
        per_trace: Trace hash -> one action per window (a template index, or a list per component).
        name: Name in tables.

    Raises:
        ConfigError: Naming ``controller.window_steps`` / ``controller.per_trace`` on a bad value.
    """

    def __init__(self, window_steps: int, per_trace: Mapping[str, Sequence[Any]], name: str = "oracle_window") -> None:
        if not isinstance(window_steps, int) or window_steps < 1:
            raise ConfigError("controller.window_steps", f"got {window_steps!r}; expected a whole number >= 1")
        if not per_trace:
            raise ConfigError("controller.per_trace", "expected trace hash -> schedule, got nothing")
        self.window_steps = window_steps
        self.per_trace = {str(h): [tuple(int(x) for x in np.atleast_1d(a)) for a in sched]
                          for h, sched in per_trace.items()}
        self.name = name
        self.interval_steps = 1
        self.log: list[dict[str, Any]] = []
        self._schedule: list[Action] | None = None
        self._step = 0
        self._discrete = True

    def reset(self, env: Any) -> None:
        """Start an episode (the schedule is picked at the first decision, by the trace's hash)."""
        self._schedule = None
        self._step = 0
        self._discrete = env.action_space.shape == ()
        self.log = []

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """The action of the window the coming step belongs to.

        Raises:
            ConfigError: Naming ``controller.per_trace`` on a trace it holds no schedule for.
        """
        if self._schedule is None:
            trace = str(info.get("trace_hash"))
            if trace not in self.per_trace:
                raise ConfigError("controller.per_trace", f"no schedule for trace {trace}: the window oracle is "
                                                          "searched per test trace (ecngym benchmark references)")
            self._schedule = self.per_trace[trace]
        w = min(self._step // self.window_steps, len(self._schedule) - 1)
        self._step += 1
        a = self._schedule[w]
        if not self.log or self.log[-1]["window"] != w:
            self.log.append({"step": self._step - 1, "window": w, "action": list(a)})
        return int(a[0]) if self._discrete else np.asarray(a, dtype=np.int64)


def all_constants(space: Any, limit: int = 400) -> list[Action]:
    """Every constant action of a small action space (the full product), or [] past ``limit``."""
    if space.shape == ():
        return [(i,) for i in range(int(space.n))]
    nvec = np.asarray(space.nvec).reshape(-1)
    if int(np.prod(nvec)) > limit:
        return []
    return [tuple(int(x) for x in c) for c in itertools.product(*[range(int(n)) for n in nvec])]
