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
* ``cpu_min_per_100k``: CPU minutes per 100,000 env steps of the 1-process run (the measuring
  process and its env processes: user + system);
* the suite's CPU-hours at each tier: per (scenario, learner), the tier's budget on that scenario
  (:func:`~ecngym.benchmark.tiers.resolve_tier`; ``converged``'s is its cap) x the suite's
  training seeds x the learner's CPU seconds per env step, summed. The per-step cost is the
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
        with unchecked_distributions():
            model.learn(total_timesteps=steps)
        done = int(model.num_timesteps)
        venv.close()  # (joins the env processes: their CPU time counts from here)
    return {"learner": learner, "n_envs": n_envs, "env_steps": done, "wall_s": time.perf_counter() - wall0,
            "cpu_s": _cpu_s() - cpu0}


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
            say(f"{learner}: {steps} env steps with {n} sampling process(es) on {scenario} ...")
            got = _fresh(measure_sampling, scenario, None if scenario_dir is None else str(scenario_dir), learner, n,
                         steps)
            if "error" in got:
                failed.append(f"{learner} x{n}: {got['error']}")
                row[f"steps_per_s_{n}"] = None
                continue
            row[f"steps_per_s_{n}"] = got["env_steps"] / got["wall_s"]
            if n == 1:
                row["cpu_s_per_step"] = got["cpu_s"] / got["env_steps"]
                row["cpu_min_per_100k"] = row["cpu_s_per_step"] * 100_000 / 60
        one, two = row.get("steps_per_s_1"), row.get("steps_per_s_2")
        row["ratio"] = two / one if one and two else None
        rows.append(row)
    per_step = {r["learner"]: r.get("cpu_s_per_step") for r in rows}
    tiers: dict[str, Any] = {}
    for tier in tier_names():
        by_learner = {}
        for learner, cost in per_step.items():
            if cost is None:
                continue
            budget = sum(resolve_tier(suite.scenarios[n], learner, tier).budget_steps for n in trained)
            by_learner[learner] = budget * suite.spec.training_seeds * cost / 3600
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
    for col in ("learner", "steps/s, 1 process", "steps/s, 2 processes", "2 / 1", "CPU-min per 100k steps"):
        table.add_column(col, justify="right")
    for r in result["learners"]:
        table.add_row(r["learner"], fmt(r.get("steps_per_s_1"), ".1f"), fmt(r.get("steps_per_s_2"), ".1f"),
                      fmt(r.get("ratio"), ".2f"), fmt(r.get("cpu_min_per_100k"), ".1f"))
    console.print(table)
    notes = sorted({r["why_no_2"] for r in result["learners"] if r.get("why_no_2")})
    for note in notes:
        console.print(f"no 2-process figure for the learning agents: {note}", highlight=False)
    tiers = Table(title=f"suite {result['suite']}: training CPU-hours per tier ({result['scenarios_trained']} "
                        f"scenarios x {result['training_seeds']} training seeds x the learners above; each step costed "
                        f"as on {result['scenario']})")
    for col in ("tier", "runs", "CPU-hours", "per learner"):
        tiers.add_column(col, justify="right")
    for name, t in result["tiers"].items():
        tiers.add_row(name, str(t["runs"]), f"{t['cpu_h']:.1f}",
                      ", ".join(f"{k} {v:.1f}" for k, v in t["per_learner_cpu_h"].items()))
    console.print(tiers)
