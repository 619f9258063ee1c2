"""``ecngym bench train --profile``: where a training step's CPU time goes, per learner and scenario.

Each (scenario, learner) of a suite trains for ``--steps`` env steps
(:func:`ecngym.benchmark.training.train_run` with its scenario's protocol, warm-ups scaled as in
``--suite``: at most ``steps // 4`` transitions before the first gradient step, PPO's rollout at
most ``steps`` long) in a fresh process with one torch / BLAS thread. Timers wrap the methods named
in :data:`PHASES` (class attributes, in that process only; nothing else changes) and charge each
thread's CPU time (``time.thread_time``) to the innermost phase running: a phase's figure
excludes the phases it calls (an update's own forward passes are the update's; the simulator's
events inside an env step are the simulator's). The window runs from the first env step to the
end of the last (imports, building the learner and saving it are outside). Per env step:

* ``sim``: simulator events (``Fabric.advance`` / ``run_until`` / ``run``: the C++ event loop);
* ``telemetry``: reading the interval's per-port telemetry (and its ``info`` mapping);
* ``kernel``: the C++ step kernel (features, history, reward, episode statistics);
* ``env_glue``: the rest of an env step in Python: the env's ``step`` (action check and
  setting), Gymnasium / SB3 wrappers and vec envs (their ``Monitor`` included), the parallel
  env's per-agent dicts;
* ``reset``: env resets (a trace generated, a fabric built) and ``episode_end`` (flow records,
  summary, end reward), spread over the steps;
* ``inference``: acting (SB3's ``_sample_action`` / ``predict``, PPO's policy forward in its
  rollouts, LAECN's ``LaecnAgent.step``), exploration included;
* ``updates``: replay / rollout storage and the gradient steps (SB3's ``train`` and buffers'
  ``add``, ACC's ``DoubleDQN.update``, LAECN's ``LaecnAgent.learn``);
* ``logging``: SB3's logger, its callbacks (learning curve, checkpoints), info buffers;
* ``loop``: the learner's own loop outside every phase (its Python glue between them);
* ``threads``: CPU of other threads in the window (an overlapped update's, torch's pools).

The timers cost about 1-2 µs per wrapped call (a handful per env step), charged to the phase
that made the call; ``timer_ms`` estimates their share of each step (calls per step x the cost of
one timed call, measured in the same process). ``env_share`` is
``sim + telemetry + kernel + env_glue + reset`` over the total: what an env-only run of the
same steps would spend, roughly; ``x_env`` is the total over that (the issue's target: <= 2).
"""

from __future__ import annotations

import importlib
import multiprocessing
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

#: Env steps of each profiled run (``--profile-steps``): 3-5 episodes of the core scenarios (420-750 steps each)
PROFILE_STEPS = 2000

#: phase -> methods charged to it: ("module", "Class", "method"); subclasses that override a
#: method (loaded once the modules of :data:`PRELOAD` are) are wrapped too.
PHASES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "sim": (("ecngym.sim_backend.fabric", "Fabric", "advance"), ("ecngym.sim_backend.fabric", "Fabric", "run_until"),
            ("ecngym.sim_backend.fabric", "Fabric", "run")),
    "telemetry": (("ecngym.sim_backend.fabric", "Fabric", "read_telemetry_block"),
                  ("ecngym.sim_backend.fabric", "Fabric", "read_telemetry"),
                  ("ecngym.sim_backend.fabric", "Telemetry", "as_dict"),
                  ("ecngym.sim_backend.fabric", "Telemetry", "rows")),
    "kernel": (("ecngym.envs.step_kernel", "StepKernel", "step"),),
    "env_glue": (("ecngym.envs.ecn_env", "EcnTuningEnv", "step"),
                 ("ecngym.envs.multi_agent", "EcnTuningParallelEnv", "step"),
                 ("stable_baselines3.common.vec_env.base_vec_env", "VecEnv", "step")),
    "reset": (("ecngym.envs.ecn_env", "EcnTuningEnv", "reset"),
              ("ecngym.envs.multi_agent", "EcnTuningParallelEnv", "reset"),
              ("stable_baselines3.common.vec_env.base_vec_env", "VecEnv", "reset"),
              ("ecngym.envs.scenario", "EcnScenario", "finish"), ("ecngym.envs.scenario", "EcnScenario", "end_reward")),
    "inference": (("stable_baselines3.common.off_policy_algorithm", "OffPolicyAlgorithm", "_sample_action"),
                  ("stable_baselines3.common.policies", "BasePolicy", "predict"),
                  ("stable_baselines3.common.policies", "ActorCriticPolicy", "forward"),
                  ("ecngym.agents.laecn", "LaecnAgent", "step")),
    "updates": (("stable_baselines3.common.base_class", "BaseAlgorithm", "train"),
                ("ecngym.agents.ddqn", "DoubleDQN", "update"),
                ("stable_baselines3.common.buffers", "BaseBuffer", "add"),
                ("stable_baselines3.common.buffers", "RolloutBuffer", "compute_returns_and_advantage"),
                ("ecngym.agents.laecn", "LaecnAgent", "learn")),
    "logging": (("stable_baselines3.common.logger", "Logger", "record"),
                ("stable_baselines3.common.logger", "Logger", "dump"),
                ("stable_baselines3.common.callbacks", "BaseCallback", "on_step"),
                ("stable_baselines3.common.base_class", "BaseAlgorithm", "_update_info_buffer"),
                ("stable_baselines3.common.base_class", "BaseAlgorithm", "_dump_logs")),
}
#: What counts one env step (the outermost env of each learner: one call per env step)
STEP_METHODS = (("ecngym.envs.ecn_env", "EcnTuningEnv", "step"),
                ("ecngym.envs.multi_agent", "EcnTuningParallelEnv", "step"))
#: Modules imported before wrapping, so that the subclasses the learners use are found
PRELOAD = ("stable_baselines3", "stable_baselines3.dqn", "stable_baselines3.ppo", "ecngym.agents.ddqn",
           "ecngym.agents.sb3_policies", "ecngym.agents.laecn", "ecngym.agents.acc", "ecngym.envs.adapters")
#: The phases, then the rest of the main thread and the other threads, in table order
GROUPS = (*PHASES, "loop", "threads")
#: Phases that an env-only run has too
ENV_GROUPS = ("sim", "telemetry", "kernel", "env_glue", "reset")


class PhaseClock:
    """Per-thread CPU time charged to the innermost running phase (see the module docstring)."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._threads: list[dict[str, float]] = []
        self._lock = threading.Lock()
        self.steps = 0
        self.calls = 0
        self.window: dict[str, Any] | None = None  # main thread's spent and process CPU at the first step
        self.last: dict[str, Any] | None = None  # the same at the end of the latest step
        self.missing: list[str] = []

    def _state(self) -> Any:
        st = self._local
        if not hasattr(st, "stack"):
            st.stack, st.last, st.spent = [], time.thread_time(), Counter()
            with self._lock:
                self._threads.append(st.spent)
        return st

    def wrap(self, phase: str, fn: Any, counts_step: bool) -> Any:
        """``fn`` with its thread's CPU time charged to ``phase`` (exclusive of the phases it calls)."""
        clock = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            clock.calls += 1
            st = clock._state()
            now = time.thread_time()
            st.spent[st.stack[-1] if st.stack else "loop"] += now - st.last
            st.stack.append(phase)
            st.last = now
            if counts_step and clock.window is None and threading.current_thread() is threading.main_thread():
                clock.window = clock._mark(st)
            try:
                return fn(*args, **kwargs)
            finally:
                now = time.thread_time()
                st.spent[phase] += now - st.last
                st.stack.pop()
                st.last = now
                clock.steps += counts_step
                if clock.window is not None and not st.stack and threading.current_thread() is threading.main_thread():
                    clock.last = clock._mark(st)  # (the window ends at the last phase: PPO's last update follows
                    #  its last rollout's steps, LAECN's last learn its last step)

        timed.__wrapped__ = fn  # type: ignore[attr-defined]
        return timed

    def _mark(self, st: Any) -> dict[str, Any]:
        return {"spent": Counter(st.spent), "process_s": time.process_time(), "steps": self.steps, "calls": self.calls}

    def install(self) -> None:
        """Wrap every method of :data:`PHASES` (and its overrides in loaded subclasses)."""
        for name in PRELOAD:
            importlib.import_module(name)
        for phase, methods in PHASES.items():
            for module, cls_name, method in methods:
                cls = getattr(importlib.import_module(module), cls_name, None)
                owners = _defining(cls, method) if cls is not None else []
                if not owners:
                    self.missing.append(f"{module}.{cls_name}.{method}")
                for owner in owners:
                    setattr(owner, method, self.wrap(phase, owner.__dict__[method],
                                                     (module, cls_name, method) in STEP_METHODS))

    def per_step_ms(self) -> dict[str, Any]:
        """CPU ms per env step of each group over the window, the total, and the steps counted."""
        if self.window is None or self.last is None:
            raise RuntimeError("no env step ran: nothing to profile")
        steps = self.last["steps"] - self.window["steps"]
        main = self.last["spent"] - self.window["spent"]  # (Counter: missing keys are 0)
        main_s = sum(main.values())
        process_s = self.last["process_s"] - self.window["process_s"]
        ms = {g: 1e3 * main.get(g, 0.0) / steps for g in PHASES}
        ms["loop"] = 1e3 * main.get("loop", 0.0) / steps
        ms["threads"] = 1e3 * (process_s - main_s) / steps
        calls = (self.last["calls"] - self.window["calls"]) / steps
        return {"steps": steps, "ms": ms, "total_ms": 1e3 * process_s / steps, "missing_hooks": self.missing,
                "timed_calls_per_step": calls, "timer_ms": calls * _timer_cost_s() * 1e3}


def _timer_cost_s(calls: int = 20_000) -> float:
    """CPU seconds one timed call adds (a wrapped no-op against the bare one, on a clock of its own)."""

    def noop() -> None:
        pass

    timed = PhaseClock().wrap("sim", noop, counts_step=False)
    costs = []
    for fn in (noop, timed):
        start = time.thread_time()
        for _ in range(calls):
            fn()
        costs.append(time.thread_time() - start)
    return max(costs[1] - costs[0], 0.0) / calls


def _defining(cls: type, method: str) -> list[type]:
    """``cls`` and its loaded subclasses whose own namespace defines ``method`` (each wrapped once)."""
    owners: list[type] = []
    seen: set[type] = set()
    stack = [cls]
    while stack:
        c = stack.pop()
        if c in seen:
            continue
        seen.add(c)
        if method in c.__dict__:
            owners.append(c)
        stack.extend(c.__subclasses__())
    return owners


def profile_run(scenario: str, agent: str, seed: int, steps: int, scenario_dir: str) -> dict[str, Any]:
    """Profile one scaled training run in this process (call it in a fresh one: it wraps classes)."""
    from ecngym.benchmark.training import train_run

    clock = PhaseClock()
    clock.install()
    with tempfile.TemporaryDirectory() as out:
        train_run(scenario, agent, seed, Path(out), budget_steps=steps, progress=False, scenario_dir=scenario_dir)
    return {"scenario": scenario, "agent": agent, **clock.per_step_ms()}


def _safely(scenario: str, agent: str, seed: int, steps: int, scenario_dir: str) -> dict[str, Any]:
    try:
        return profile_run(scenario, agent, seed, steps, scenario_dir)
    except Exception as exc:  # reported beside the others
        return {"scenario": scenario, "agent": agent, "error": f"{type(exc).__name__}: {exc}"}


def profile_in_fresh_process(scenario: str, agent: str, seed: int, steps: int, scenario_dir: str) -> dict[str, Any]:
    """:func:`profile_run` in a new (spawned) process; ``{"error": ...}`` beside the names if it raised."""
    import concurrent.futures

    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(_safely, scenario, agent, seed, steps, scenario_dir).result()


def profile_suite(suite_name: str, steps: int, progress: Any = None) -> list[dict[str, Any]]:
    """:func:`profile_run` of every (scenario with a training protocol, learner) of a suite, one at a time.

    Each run is in its own fresh process, one after another, so that none slows another's
    thread clock and every process pays its own imports outside the window.

    Raises:
        ConfigError: Naming ``--profile-steps`` if it is below 8, or the suite's field.
    """
    from ecngym.benchmark.suite import load_suite
    from ecngym.benchmark.train_cost import scaled_scenario_dir
    from ecngym.error import ConfigError

    if steps < 8:
        raise ConfigError("--profile-steps", f"got {steps}; give at least 8 env steps")
    suite = load_suite(suite_name)
    say = progress or (lambda text: None)
    runs = [(name, agent, sc.training.seeds[0]) for name, sc in suite.scenarios.items() if sc.training is not None
            for agent in sc.training.agents]
    results = []
    with tempfile.TemporaryDirectory() as folder:
        scaled = str(scaled_scenario_dir(suite.scenarios, steps, Path(folder)))
        for i, (name, agent, seed) in enumerate(runs):
            say(f"profile {i + 1} of {len(runs)}: {name} / {agent}, {steps} env steps ...")
            results.append(profile_in_fresh_process(name, agent, seed, steps, scaled))
    return results


#: Column titles of :data:`GROUPS`
TITLES = {"sim": "sim", "telemetry": "telem.", "kernel": "kernel", "env_glue": "env glue", "reset": "reset+end",
          "inference": "infer.", "updates": "updates", "logging": "logging", "loop": "loop", "threads": "threads"}


def print_profile(results: list[dict[str, Any]], steps: int, console: Any) -> None:
    """The table of :func:`profile_suite`'s results (CPU ms per env step per group)."""
    from rich.table import Table

    table = Table(title=f"where a training step's CPU goes (ms per env step; {steps}-step runs, innermost phase)")
    for col in ("scenario", "learner", "total", *(TITLES[g] for g in GROUPS), "x env", "timers"):
        table.add_column(col, justify="left" if col in ("scenario", "learner") else "right")
    for r in results:
        if "error" in r:
            continue
        env_ms = sum(r["ms"][g] for g in ENV_GROUPS)
        table.add_row(r["scenario"], r["agent"], f"{r['total_ms']:.2f}", *(f"{r['ms'][g]:.2f}" for g in GROUPS),
                      f"{r['total_ms'] / env_ms:.1f}", f"{r['timer_ms']:.2f}")
    console.print(table)
    console.print("sim: simulator events (Fabric.advance); telem.: telemetry read; kernel: the C++ step kernel "
                  "(features, reward); env glue: the rest of env.step in Python (action setting, wrappers, vec env, "
                  "per-agent dicts); reset+end: env resets (trace, fabric build) and episode ends (records, "
                  "summary); infer.: acting (policy forward passes, exploration); updates: replay / rollout "
                  "storage and gradient steps; logging: SB3's logger and callbacks (curves, checkpoints); loop: the "
                  "learner's own code between these; threads: other threads' CPU. Each phase's CPU excludes the "
                  "phases it calls (time.thread_time, innermost phase); the window runs from the first env step "
                  "to the last phase (the first reset, building and saving the learner are outside). x env: "
                  "total / (sim + telem. + kernel + env glue + reset+end), the training step over its env part. "
                  "timers: what the timers themselves add (timed calls per step x the measured cost of one), "
                  "inside the total.", highlight=False)
    other = sorted({(r["agent"], r["steps"]) for r in results if "error" not in r and r["steps"] != steps})
    if other:
        console.print("env steps profiled where not " + f"{steps}: " + ", ".join(f"{a} {n}" for a, n in other)
                      + " (an on-policy learner ends its last rollout)", highlight=False)
    for r in results:
        if "error" in r:
            console.print(f"not profiled: {r['scenario']}/{r['agent']}: {r['error']}", highlight=False)
    missing = sorted({m for r in results for m in r.get("missing_hooks", ())})
    if missing:
        console.print(f"hooks not found (their time is in the enclosing phase): {', '.join(missing)}",
                      highlight=False)


def tier_cost(suite_name: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    """A suite's training CPU-hours per tier from the profiled CPU per env step.

    Each profiled (scenario, learner) of the suite costs ``training seeds x budget x total CPU per
    env step`` at each tier (:func:`~ecngym.benchmark.tiers.resolve_tier`'s budget; ``converged``'s
    is its cap). The profile's window is the steady state: a run's imports and set-up (seconds) are
    left out, well under 1 % of a 100k-step run.

    Args:
        suite_name: The suite costed (its scenarios' profiled runs count; others are left out).
        results: :func:`profile_suite`'s results (those with an error are left out).

    Returns:
        ``tiers``: tier -> ``cpu_h``, ``per_learner_cpu_h``, ``per_scenario_cpu_h``, ``runs``; and the
        ``training_seeds``.
    """
    from ecngym.benchmark.suite import load_suite
    from ecngym.benchmark.tiers import resolve_tier, tier_names

    suite = load_suite(suite_name)
    seeds = suite.spec.training_seeds
    tiers: dict[str, Any] = {}
    for tier in tier_names():
        by_learner: dict[str, float] = {}
        by_scenario: dict[str, float] = {}
        runs = 0
        for r in results:
            if "error" in r or r["scenario"] not in suite.scenarios:
                continue
            budget = resolve_tier(suite.scenarios[r["scenario"]], r["agent"], tier).budget_steps
            cpu_h = seeds * budget * r["total_ms"] / 1e3 / 3600
            by_learner[r["agent"]] = by_learner.get(r["agent"], 0.0) + cpu_h
            by_scenario[r["scenario"]] = by_scenario.get(r["scenario"], 0.0) + cpu_h
            runs += seeds
        tiers[tier] = {"cpu_h": sum(by_learner.values()), "per_learner_cpu_h": by_learner,
                       "per_scenario_cpu_h": by_scenario, "runs": runs}
    return {"suite": suite.name, "training_seeds": seeds, "tiers": tiers}


def print_tier_cost(cost: dict[str, Any], console: Any, cores: int = 2) -> None:
    """The table of :func:`tier_cost`, with each tier's wall time on ``cores`` cores (one run per core)."""
    from rich.table import Table

    table = Table(title=f"suite {cost['suite']}: training CPU-hours per tier, from the profiled CPU per env step "
                        f"({cost['training_seeds']} training seeds per scenario and learner)")
    for col in ("tier", "runs", "CPU-hours", f"hours on {cores} cores", "per learner", "per scenario"):
        table.add_column(col, justify="right")
    for name, t in cost["tiers"].items():
        table.add_row(name, str(t["runs"]), f"{t['cpu_h']:.1f}", f"{t['cpu_h'] / cores:.1f}",
                      ", ".join(f"{k} {v:.1f}" for k, v in t["per_learner_cpu_h"].items()),
                      ", ".join(f"{k} {v:.1f}" for k, v in t["per_scenario_cpu_h"].items()))
    console.print(table)
    console.print("each run: its budget x the profile's total CPU per env step (steady state; a run's imports and "
                  f"set-up, seconds, left out); hours on {cores} cores: one run per core, the CPU-hours / {cores}",
                  highlight=False)
