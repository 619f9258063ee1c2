"""What training and scoring a suite's learners costs: ``ecngym bench train --suite full``.

Measured on a **scaled run**, in CPU seconds of the measuring process (user + system, its threads
and children: what a worker of ``ecngym run suite=... train=true`` spends, whatever else loads the
machine), with wall seconds beside them (load-sensitive):

* **Training**, per learner (acc, laecn, haecn, ppo, dqn) and scenario with a training protocol:
  :func:`ecngym.benchmark.training.train_run` of ``steps`` and of ``2 x steps`` env steps, each in a
  fresh process. The difference gives the CPU per env step (``slope``), the rest the fixed cost of a
  run (building the env and the learner, and the imports of a fresh process, which a pool worker
  pays once: an upper bound). The warm-up of the replay learners is cut to ``steps // 4`` transitions (and PPO's
  rollout to ``steps``) in the scaled run, so the slope is the steady state: every env step pays its
  gradient step. A run at the protocol's budget costs ``fixed + slope x budget_steps``, an upper bound
  (the real run takes no gradient step during its warm-up).
* **Scoring**, per scenario of the suite: the first test seed's reset and up to ``steps`` env steps
  with the static action in a fresh process; a scored episode costs the reset plus
  ``episode_steps`` times their mean CPU (a controller's own decisions, small next to the fabric,
  are not in it; a scenario whose traffic grows later in the episode costs more than this).

The suite's total: every (scenario x learner x training seed) run, plus every scored episode: the
test seeds the suite scores x (the untrained controllers, the 3 references and every learner's runs),
and as many on the held-out family where a scenario declares one. A scenario without a training
protocol (no learner trains there yet) is costed with the largest budget of the suite and, per step,
the learner's mean overhead over the measured scenarios added to that scenario's own env step:
marked *estimated*.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from ecngym.benchmark.scoring import OPTIONAL_REFERENCES, REFERENCES
from ecngym.benchmark.suite import SCENARIO_DIR, load_suite
from ecngym.error import ConfigError

#: Reference controllers every scenario scores besides the competitors (an optional one, played only where a
#: scenario's references file holds it, is left out: the estimate counts what every scenario plays).
N_REFERENCES = len([r for r in REFERENCES if r not in OPTIONAL_REFERENCES])


def _cpu_seconds() -> float:
    from ecngym.benchmark.training_runs import _cpu_seconds as cpu

    return cpu()


def steady_cost(short_cpu_s: float, short_steps: int, long_cpu_s: float, long_steps: int,
                short_steady_cpu_s: float | None = None, long_steady_cpu_s: float | None = None,
                ) -> tuple[float, float, bool]:
    """CPU seconds per env step and fixed CPU seconds per run, from two runs of different lengths.

    The per-step figure is the difference of the runs' steady CPU (default: their whole CPU) over the
    difference of their steps; the fixed cost is what the shorter run spent beyond that many steps.
    Where the longer run cost no more (noise swamps the extra steps), the longer run's mean per step
    stands in, its fixed cost included, and the fixed cost is 0.

    Returns:
        (CPU s per env step, fixed CPU s per run, whether the difference gave them).
    """
    short_steady = short_cpu_s if short_steady_cpu_s is None else short_steady_cpu_s
    long_steady = long_cpu_s if long_steady_cpu_s is None else long_steady_cpu_s
    per_step = (long_steady - short_steady) / (long_steps - short_steps)
    if per_step <= 0:
        return long_cpu_s / long_steps, 0.0, False
    return per_step, short_cpu_s - per_step * short_steps, True


def _fitted(agent: str, hyper: dict[str, Any], steps: int) -> dict[str, Any]:
    """A learner's hyperparameters with its replay warm-up (and an on-policy rollout) fitting a ``steps``-step run.

    Read from the learner's own defaults: an agent's config (``learning_starts`` at its top or in its
    ``hyperparams``), an SB3 algorithm's keyword defaults (``learning_starts``, ``n_steps`` / ``batch_size``).
    """
    import inspect

    from ecngym.agents.config import agent_config
    from ecngym.agents.registry import is_agent
    from ecngym.agents.sb3 import algorithm_class

    warm_up = max(1, steps // 4)
    hyper = dict(hyper)
    if is_agent(agent):
        own = agent_config(agent, hyper)
        if "learning_starts" in own:
            hyper["learning_starts"] = min(own["learning_starts"], warm_up)
        elif "learning_starts" in (own.get("hyperparams") or {}):
            hyper["hyperparams"] = {**hyper.get("hyperparams", {}),
                                    "learning_starts": min(own["hyperparams"]["learning_starts"], warm_up)}
        return hyper
    defaults = {k: p.default for k, p in inspect.signature(algorithm_class(agent).__init__).parameters.items()}
    if "learning_starts" in defaults:
        hyper["learning_starts"] = min(int(hyper.get("learning_starts", defaults["learning_starts"])), warm_up)
    if "n_steps" in defaults:
        hyper["n_steps"] = min(int(hyper.get("n_steps", defaults["n_steps"])), steps)
        hyper["batch_size"] = min(int(hyper.get("batch_size", defaults["batch_size"])), hyper["n_steps"])
    return hyper


def scaled_scenario_dir(scenarios: dict[str, Any], steps: int, folder: Path) -> Path:
    """Copies of the scenario files whose replay warm-ups (and PPO's rollout) fit a ``steps``-step run."""
    from ecngym.agents.registry import learner_names

    for name in scenarios:
        data = yaml.safe_load((SCENARIO_DIR / f"{name}.yaml").read_text())
        training = data.get("training")
        if training:
            for agent in learner_names():
                entry = training["agents"].setdefault(agent, {"source": "its own defaults"})
                entry["hyperparams"] = _fitted(agent, dict(entry.get("hyperparams") or {}), steps)
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(data))
    return folder


def measure_training(scenario: str, agent: str, seed: int, steps: int, scenario_dir: str) -> dict[str, float]:
    """CPU and wall seconds of one ``train_run`` of ``steps`` env steps (run it in a fresh process)."""
    from ecngym.benchmark.training import train_run

    with tempfile.TemporaryDirectory() as out:
        cpu, wall = _cpu_seconds(), time.perf_counter()
        train_run(scenario, agent, seed, Path(out), budget_steps=steps, progress=False, scenario_dir=scenario_dir)
        return {"cpu_s": _cpu_seconds() - cpu, "wall_s": time.perf_counter() - wall}


def measure_env(scenario: str, steps: int) -> dict[str, float]:
    """CPU seconds of a scenario's reset and env steps with the static action (run it in a fresh process).

    Plays the first test seed's episode, at most ``steps`` env steps of it; an episode is costed as
    the reset plus ``episode_steps`` times the mean CPU of those steps.
    """
    import gymnasium as gym

    import ecngym.envs  # noqa: F401
    from ecngym.agents.threads import limit_threads
    from ecngym.benchmark.suite import load_scenario

    limit_threads(1)
    sc = load_scenario(scenario)
    env = gym.make(sc.id, **sc.env)
    action = env.unwrapped.static_action()
    cpu = _cpu_seconds()
    env.reset(seed=sc.protocol.test_seeds[0])
    reset_cpu = _cpu_seconds() - cpu
    episode_steps = int(env.unwrapped.config.episode_steps)
    done, over = 0, False
    cpu = _cpu_seconds()
    while not over and done < steps:
        _, _, term, trunc, _ = env.step(action)
        done += 1
        over = term or trunc
    step_cpu = (_cpu_seconds() - cpu) / done
    env.close()
    return {"reset_cpu_s": reset_cpu, "step_cpu_s": step_cpu, "steps_measured": done,
            "episode_steps": episode_steps, "episode_cpu_s": reset_cpu + episode_steps * step_cpu}


def _measure_safely(function: Any, *args: Any) -> dict[str, Any]:
    """``function(*args)``, or ``{"error": ...}`` if it raised (one failed measurement must not end the others)."""
    try:
        return function(*args)
    except Exception as exc:  # reported beside the figures
        return {"error": f"{type(exc).__name__}: {exc}"}


def _pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    """Spawned processes, a fresh one per measurement (thread pools and imports their own)."""
    context = multiprocessing.get_context("spawn")
    return concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context, max_tasks_per_child=1)


def untrained_controllers() -> int:
    """How many controllers ``ecngym run`` scores besides the references and learners (``controllers: all``)."""
    from omegaconf import OmegaConf

    from ecngym.commands.factories import benchmark_controllers

    return len(benchmark_controllers(OmegaConf.create({"controllers": "all"})))


def suite_cost(suite_name: str, steps: int, progress: Any = None, workers: int = 2) -> dict[str, Any]:
    """Measure the scaled runs and cost the whole suite (module docstring: what and how).

    Args:
        suite_name: The suite (``core``, ``full``).
        steps: Env steps of the shorter scaled training run (the longer has twice as many) and at
            most of the env-only measurement.
        progress: ``progress(text)`` is told what is being measured (None: nothing).
        workers: Measurements at once, each in its own fresh process (CPU seconds are per process).

    Returns:
        ``training`` (one dict per measured scenario x learner), ``scoring`` (one per scenario),
        ``totals`` (CPU-hours of the suite's training and scoring), and the settings.

    Raises:
        ConfigError: Naming ``--steps`` if it is below 8, or the suite's field.
    """
    if steps < 8:
        raise ConfigError("--steps", f"got {steps}; give at least 8 env steps")
    suite = load_suite(suite_name)
    say = progress or (lambda text: None)
    n_untrained = untrained_controllers()
    training, scoring, failed = [], [], []
    with tempfile.TemporaryDirectory() as folder, _pool(workers) as pool:
        scaled = str(scaled_scenario_dir(suite.scenarios, steps, Path(folder)))
        envs = {name: pool.submit(_measure_safely, measure_env, name, steps) for name in suite.scenarios}
        runs = {(name, agent, n): pool.submit(_measure_safely, measure_training, name, agent, sc.training.seeds[0],
                                              n, scaled)
                for name, sc in suite.scenarios.items() if sc.training is not None
                for agent in sc.training.learners() for n in (steps, 2 * steps)}
        pending = set(envs.values()) | set(runs.values())
        while pending:
            _, pending = concurrent.futures.wait(pending, timeout=5)
            say(f"scaled runs: {len(envs) + len(runs) - len(pending)} of {len(envs) + len(runs)} measured")
        for name, future in envs.items():
            result = future.result()
            if "error" in result:
                failed.append(f"{name} env: {result['error']}")
                continue
            scoring.append({"scenario": name, **result})
        for name, sc in suite.scenarios.items():
            if sc.training is None:
                continue
            for agent in sc.training.learners():
                short, long = runs[(name, agent, steps)].result(), runs[(name, agent, 2 * steps)].result()
                if "error" in short or "error" in long:
                    failed.append(f"{name}/{agent}: {short.get('error') or long.get('error')}")
                    continue
                slope, fixed, measured = steady_cost(short["cpu_s"], steps, long["cpu_s"], 2 * steps)
                if not measured:
                    failed.append(f"{name}/{agent}: {2 * steps} env steps cost no more CPU than {steps}; costed at "
                                  "the longer run's mean per step (fixed cost in it): measure more --steps")
                training.append({"scenario": name, "agent": agent, "budget_steps": sc.training.budget_steps,
                                 "cpu_s_short": short["cpu_s"], "cpu_s_long": long["cpu_s"],
                                 "wall_s_long": long["wall_s"], "cpu_ms_per_step": 1e3 * slope,
                                 "fixed_cpu_s": fixed, "steps_per_cpu_s": 1 / slope,
                                 "steps_per_wall_s": 2 * steps / long["wall_s"],
                                 "run_cpu_s": fixed + slope * sc.training.budget_steps})
    return {"suite": suite_name, "steps": steps, "workers": workers, "untrained_controllers": n_untrained,
            "training": training, "scoring": scoring, "failed": failed,
            "totals": _totals(suite, training, scoring, n_untrained)}


def _totals(suite: Any, training: list[dict[str, Any]], scoring: list[dict[str, Any]],
            n_untrained: int) -> dict[str, Any]:
    """CPU-hours of the suite's training runs and scored episodes (module docstring: the model)."""
    env = {s["scenario"]: s for s in scoring}
    budgets = [sc.training.budget_steps for sc in suite.scenarios.values() if sc.training is not None]
    assumed_budget = max(budgets) if budgets else None
    overhead: dict[str, list[float]] = {}
    fixed: dict[str, list[float]] = {}
    for t in training:  # the learner's CPU per step beyond its scenario's env step, and its fixed cost
        overhead.setdefault(t["agent"], []).append(t["cpu_ms_per_step"] / 1e3 - env[t["scenario"]]["step_cpu_s"])
        fixed.setdefault(t["agent"], []).append(t["fixed_cpu_s"])
    from ecngym.agents.registry import learner_names

    learners = learner_names()
    measured = {(t["scenario"], t["agent"]): t["run_cpu_s"] for t in training}
    train_s = estimated_s = score_s = 0.0
    episodes = 0
    per_scenario = []
    for name, sc in suite.scenarios.items():
        if name not in env:  # its measurement failed (listed with the figures)
            continue
        seeds = suite.spec.training_seeds
        runs = 0.0
        for agent in learners:
            if (name, agent) in measured:
                runs += seeds * measured[(name, agent)]
            elif assumed_budget is not None and agent in overhead:
                cost = (sum(fixed[agent]) / len(fixed[agent])
                        + assumed_budget * (env[name]["step_cpu_s"] + sum(overhead[agent]) / len(overhead[agent])))
                runs += seeds * cost
                estimated_s += seeds * cost
        train_s += runs
        competitors = n_untrained + N_REFERENCES + len(learners) * seeds
        held_out = sc.held_out is not None
        n = suite.spec.test_seeds * competitors * (2 if held_out else 1)
        per_episode = env[name]["episode_cpu_s"]
        episodes += n
        score_s += n * per_episode
        per_scenario.append({"scenario": name, "training_cpu_h": runs / 3600, "episodes": n,
                             "episode_cpu_s": per_episode, "scoring_cpu_h": n * per_episode / 3600,
                             "training_estimated": (name not in {t["scenario"] for t in training}),
                             "held_out": held_out})
    return {"training_cpu_h": train_s / 3600, "training_estimated_cpu_h": estimated_s / 3600,
            "scoring_cpu_h": score_s / 3600, "episodes": episodes, "total_cpu_h": (train_s + score_s) / 3600,
            "training_runs": len(suite.scenarios) * len(learners) * suite.spec.training_seeds,
            "assumed_budget_steps": assumed_budget, "per_scenario": per_scenario}


def print_cost(cost: dict[str, Any], console: Any) -> None:
    """The training table, the per-scenario totals and the suite's CPU-hours."""
    from rich.table import Table

    table = Table(title=f"training throughput per learner (scaled runs of {cost['steps']} and {2 * cost['steps']} "
                        "env steps; CPU of the training process)")
    for col in ("scenario", "learner", "CPU ms/step", "steps/CPU-s", "steps/wall-s", "fixed CPU s",
                "budget steps", "CPU min/run"):
        table.add_column(col, justify="left" if col in ("scenario", "learner") else "right")
    for t in cost["training"]:
        table.add_row(t["scenario"], t["agent"], f"{t['cpu_ms_per_step']:.2f}", f"{t['steps_per_cpu_s']:.0f}",
                      f"{t['steps_per_wall_s']:.0f}", f"{t['fixed_cpu_s']:.1f}", str(t["budget_steps"]),
                      f"{t['run_cpu_s'] / 60:.1f}")
    console.print(table)
    totals = cost["totals"]
    table = Table(title=f"suite {cost['suite']}: CPU-hours per scenario ({totals['training_runs']} training runs, "
                        f"{totals['episodes']} scored episodes)")
    for col in ("scenario", "env CPU ms/step", "episode CPU s", "episodes", "scoring CPU-h", "training CPU-h"):
        table.add_column(col, justify="left" if col == "scenario" else "right")
    env = {s["scenario"]: s for s in cost["scoring"]}
    for s in totals["per_scenario"]:
        table.add_row(s["scenario"] + (" (held-out family too)" if s["held_out"] else ""),
                      f"{1e3 * env[s['scenario']]['step_cpu_s']:.2f}", f"{s['episode_cpu_s']:.1f}",
                      str(s["episodes"]), f"{s['scoring_cpu_h']:.2f}",
                      f"{s['training_cpu_h']:.2f}" + (" (estimated)" if s["training_estimated"] else ""))
    console.print(table)
    estimated = (f", of which {totals['training_estimated_cpu_h']:.1f} estimated for scenarios without a training "
                 f"protocol at {totals['assumed_budget_steps']} steps" if totals["training_estimated_cpu_h"] else "")
    for line in cost["failed"]:
        console.print(f"[red]not measured:[/red] {line}", highlight=False, markup=True)
    console.print(f"suite {cost['suite']}: {totals['total_cpu_h']:.1f} CPU-hours in all: training "
                  f"{totals['training_cpu_h']:.1f}{estimated}; scoring {totals['scoring_cpu_h']:.1f} "
                  f"({cost['untrained_controllers']} untrained controllers + {N_REFERENCES} references + the "
                  "learners' runs on every scored test seed)", highlight=False)
