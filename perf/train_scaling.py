"""``ecngym bench train --learners ...``: each learner's sampling scaling, CPU cost per 100k env steps, suite CPU-hours.

For each learner (:func:`~ecngym.agents.registry.learner_names`) on one scenario of the suite
(``--scenario``, default the suite's first scenario with a training protocol), in a fresh process
per measurement:

* ``steps_per_s`` with 1 and 2 sampling processes: env steps per wall second of training (sampling,
  acting, updates) with the scenario's env in that many processes. SB3's algorithms step a
  ``SubprocVecEnv`` of ``n_envs`` envs (one process each, the learner in the measuring process);
  the learning agents (ACC / LAECN / HAECN) train one parallel env of all ports in their own
  process: their trainers take no env count, so their 2-process figure is None, with that reason;
* ``ratio``: steps/s with 2 processes / with 1 (the issue's goal: >= 1.8 where the machine has
  two free cores);
* ``cpu_s_per_step`` and ``fixed_cpu_s``: 1-process runs of ``steps`` and ``2 x steps`` env steps,
  one after the other, each in a fresh process (the measuring process and its env processes: user +
  system); the difference of their CPU over ``steps`` is the steady CPU per env step, the rest of
  the shorter run its fixed cost (building the env processes and the learner: a spawned env process
  imports the whole stack, seconds of CPU that a short run would otherwise spread over its steps, and
  that vary from run to run, so the env processes' CPU counts from the first step on in the difference);
  ``cpu_min_per_100k`` is the steady cost of 100,000 env steps in CPU minutes;
* the suite's CPU-hours at each tier: per (scenario, learner), the fixed cost plus the tier's budget
  on that scenario (:func:`~ecngym.benchmark.tiers.resolve_tier`; ``converged``'s is its cap) x the
  steady CPU per env step, x the suite's training seeds, summed. The per-step cost is the
  measured scenario's: scenarios whose steps cost more or less scale it (say which was measured).

The hyperparameters are the ``100k`` tier's for the learner, with replay warm-ups and rollouts
fitted to the short run (:func:`ecngym.benchmark.train_cost._fitted`) so that updates are timed
too. ``--quick`` is a smoke run (few steps), not a measurement.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

#: Why a learning agent has no 2-process figure.
ONE_PROCESS = "its trainer steps one parallel env of all ports in one process (no env count)"


def _cpu_s() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _live_cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of running processes so far (0 for one that is gone)."""
    import psutil

    total = 0.0
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def measure_sampling(scenario: str, scenario_dir: str | None, learner: str, n_envs: int, steps: int) -> dict[str, Any]:
    """Train ``learner`` for about ``steps`` env steps with ``n_envs`` sampling processes; wall, CPU and steps.

    Run it in a fresh process (its CPU time is the process's and its reaped env processes').

    Raises:
        ConfigError: Naming ``n_envs`` for a learning agent with more than one, or the scenario's field.
    """
    from functools import partial

    from ecngym.agents.registry import is_agent
    from ecngym.agents.threads import limit_threads
    from ecngym.benchmark.suite import load_scenario, scenario_env
    from ecngym.benchmark.tiers import resolve_tier
    from ecngym.benchmark.train_cost import _fitted
    from ecngym.error import ConfigError

    limit_threads(1)
    sc = load_scenario(scenario, scenario_dir)
    hyper = _fitted(learner, resolve_tier(sc, learner, "100k").hyperparams, steps)
    cpu0, wall0 = _cpu_s(), time.perf_counter()
    steady: dict[str, float] = {}  # the CPU from the first step on, where a run's start-up is outside the process
    if is_agent(learner):
        if n_envs != 1:
            raise ConfigError("n_envs", f"got {n_envs} for {learner}: {ONE_PROCESS}")
        from ecngym.agents import train_agent
        from ecngym.agents.config import agent_config
        from ecngym.benchmark.training import agent_overrides

        base_env = scenario_env(sc)
        cfg = agent_config(learner, agent_overrides(learner, base_env, hyper))
        with tempfile.TemporaryDirectory() as out:
            cpu0, wall0 = _cpu_s(), time.perf_counter()
            train_agent(base_env, cfg, Path(out), timesteps=steps, seed=0, progress_bar=False, threads=1,
                        episode_seeds=list(sc.protocol.train_seeds))
            done = steps
    else:
        from stable_baselines3.common.vec_env import SubprocVecEnv

        from ecngym.agents.sb3 import check_hyperparams, new_model, unchecked_distributions
        from ecngym.benchmark.training import _sb3_env_overrides, _tier_env

        env_kwargs = {**sc.env, **_sb3_env_overrides(sc, learner)}
        make = partial(_tier_env, sc.id, env_kwargs, list(sc.protocol.train_seeds))
        venv = SubprocVecEnv([partial(make, rank, 0) for rank in range(n_envs)], start_method="spawn")
        model = new_model(learner, venv, 0, check_hyperparams(learner, hyper))
        pids = [p.pid for p in venv.processes]
        # the env processes' start (each imports the whole stack: seconds of CPU that vary from run to
        # run) is fixed cost: the steady figure counts their CPU from the first step on
        env_cpu0, own_cpu0 = _live_cpu_s(pids), _cpu_s()
        with unchecked_distributions():
            model.learn(total_timesteps=steps)
        done = int(model.num_timesteps)
        steady["learn_cpu_s"] = _cpu_s() - own_cpu0 + _live_cpu_s(pids) - env_cpu0
        venv.close()  # (joins the env processes: their CPU time counts from here)
    return {"learner": learner, "n_envs": n_envs, "env_steps": done, "wall_s": time.perf_counter() - wall0,
            "cpu_s": _cpu_s() - cpu0, **steady}


def _fresh(fn: Any, *args: Any) -> dict[str, Any]:
    """``fn(*args)`` in a new spawned process (its own thread pools and CPU count); an error as ``{"error"}``."""
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context, max_tasks_per_child=1) as pool:
        try:
            return pool.submit(fn, *args).result()
        except Exception as exc:  # reported beside the other figures
            return {"error": f"{type(exc).__name__}: {exc}"}


def learner_scaling(suite_name: str, learners: list[str], steps: int, scenario: str | None = None,
                    scenario_dir: str | None = None, progress: Any = None) -> dict[str, Any]:
    """The learners' sampling scaling and CPU cost on one scenario, and the suite's CPU-hours per tier.

    Args:
        suite_name: A suite name or file (:func:`~ecngym.benchmark.suite.load_suite`).
        learners: The learners to measure.
        steps: Env steps per measurement.
        scenario: The measured scenario (default: the suite's first with a training protocol).
        scenario_dir: The folder of scenario files (default: the package's).
        progress: ``progress(text)`` is told what is measured.

    Returns:
        ``scenario``, ``learners`` (one dict per learner), ``tiers`` (tier -> suite CPU-hours, and per
        learner), ``failed``.

    Raises:
        ConfigError: Naming ``--scenario`` / ``--learners`` for a value the suite does not have.
    """
    from ecngym.agents.registry import is_agent, learner_names
    from ecngym.benchmark.suite import load_suite
    from ecngym.benchmark.tiers import resolve_tier, tier_names
    from ecngym.benchmark.train_cost import steady_cost
    from ecngym.error import ConfigError

    say = progress or (lambda text: None)
    suite = load_suite(suite_name, scenario_dir)
    trained = [n for n, sc in suite.scenarios.items() if sc.training is not None]
    if not trained:
        raise ConfigError("--suite", f"suite {suite.name} has no scenario with a training protocol")
    scenario = scenario or trained[0]
    if scenario not in trained:
        raise ConfigError("--scenario", f"got {scenario!r}; the suite's scenarios with training: {trained}")
    unknown = [a for a in learners if a not in learner_names()]
    if unknown:
        raise ConfigError("--learners", f"unknown {unknown}; the learners: {learner_names()}")
    rows, failed = [], []
    for learner in learners:
        row: dict[str, Any] = {"learner": learner}
        for n in (1, 2):
            if n == 2 and is_agent(learner):
                row["steps_per_s_2"], row["why_no_2"] = None, ONE_PROCESS
                continue
            folder = None if scenario_dir is None else str(scenario_dir)
            say(f"{learner}: {steps} env steps with {n} sampling process(es) on {scenario} ...")
            got = _fresh(measure_sampling, scenario, folder, learner, n, steps)
            if n == 1 and "error" not in got:
                say(f"{learner}: {2 * steps} env steps with 1 sampling process on {scenario} (steady CPU per step) ...")
                longer = _fresh(measure_sampling, scenario, folder, learner, n, 2 * steps)
                got = longer if "error" in longer else {**got, "longer": longer}
            if "error" in got:
                failed.append(f"{learner} x{n}: {got['error']}")
                row[f"steps_per_s_{n}"] = None
                continue
            row[f"steps_per_s_{n}"] = got["env_steps"] / got["wall_s"]
            if n == 1:
                longer = got["longer"]
                row["cpu_s_per_step"], row["fixed_cpu_s"], measured = steady_cost(
                    got["cpu_s"], got["env_steps"], longer["cpu_s"], longer["env_steps"],
                    got.get("learn_cpu_s"), longer.get("learn_cpu_s"))
                if not measured:
                    row["why_no_slope"] = (f"{longer['env_steps']} env steps cost no more CPU than "
                                           f"{got['env_steps']}: the longer run's mean per step, fixed cost in it")
                row["cpu_min_per_100k"] = row["cpu_s_per_step"] * 100_000 / 60
        one, two = row.get("steps_per_s_1"), row.get("steps_per_s_2")
        row["ratio"] = two / one if one and two else None
        rows.append(row)
    costed = [r for r in rows if r.get("cpu_s_per_step") is not None]
    tiers: dict[str, Any] = {}
    for tier in tier_names():
        by_learner = {}
        for r in costed:
            learner = r["learner"]
            run_cpu_s = [r["fixed_cpu_s"] + resolve_tier(suite.scenarios[n], learner, tier).budget_steps
                         * r["cpu_s_per_step"] for n in trained]
            by_learner[learner] = suite.spec.training_seeds * sum(run_cpu_s) / 3600
        tiers[tier] = {"cpu_h": sum(by_learner.values()), "per_learner_cpu_h": by_learner,
                       "runs": len(trained) * len(by_learner) * suite.spec.training_seeds}
    return {"suite": suite.name, "scenario": scenario, "steps": steps, "training_seeds": suite.spec.training_seeds,
            "scenarios_trained": len(trained), "learners": rows, "tiers": tiers, "failed": failed}


def print_scaling(result: dict[str, Any], console: Any) -> None:
    """The learners' table and the suite's CPU-hours per tier."""
    from rich.table import Table

    def fmt(value: Any, spec: str) -> str:
        return "-" if value is None else format(value, spec)

    table = Table(title=f"learners on {result['scenario']} ({result['steps']} env steps per measurement)")
    for col in ("learner", "steps/s 1 proc.", "steps/s 2 proc.", "2 / 1", "CPU ms/step", "fixed CPU s",
                "CPU-min / 100k"):
        table.add_column(col, justify="right")
    for r in result["learners"]:
        per_step = r.get("cpu_s_per_step")
        table.add_row(r["learner"], fmt(r.get("steps_per_s_1"), ".1f"), fmt(r.get("steps_per_s_2"), ".1f"),
                      fmt(r.get("ratio"), ".2f"), fmt(None if per_step is None else 1e3 * per_step, ".2f"),
                      fmt(r.get("fixed_cpu_s"), ".1f"), fmt(r.get("cpu_min_per_100k"), ".1f"))
    console.print(table)
    console.print("CPU ms/step: the steady CPU per env step (the difference of two run lengths); fixed CPU s: what "
                  "a run costs beyond its steps (the env processes' and the learner's set-up)", highlight=False)
    notes = sorted({r["why_no_2"] for r in result["learners"] if r.get("why_no_2")})
    for note in notes:
        console.print(f"no 2-process figure for the learning agents: {note}", highlight=False)
    for r in result["learners"]:
        if r.get("why_no_slope"):
            console.print(f"{r['learner']}: {r['why_no_slope']}", highlight=False)
    tiers = Table(title=f"suite {result['suite']}: training CPU-hours per tier ({result['scenarios_trained']} "
                        f"scenarios x {result['training_seeds']} training seeds x the learners above; each step costed "
                        f"as on {result['scenario']})")
    for col in ("tier", "runs", "CPU-hours", "per learner"):
        tiers.add_column(col, justify="right")
    for name, t in result["tiers"].items():
        tiers.add_row(name, str(t["runs"]), f"{t['cpu_h']:.1f}",
                      ", ".join(f"{k} {v:.1f}" for k, v in t["per_learner_cpu_h"].items()))
    console.print(tiers)
