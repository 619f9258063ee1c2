"""Train one learner on one benchmark scenario under its training protocol, and write its checkpoint.

``ecngym train suite=<s> agent=<a> seed=<n>`` runs :func:`train_run`. The protocol is the
scenario's ``training:`` block (:class:`~ecngym.benchmark.suite.Training`): a budget in env steps,
the training seeds, each learner's hyperparameters with their source. A learner trains on the
scenario's ``protocol.train_seeds`` (the traces ``static_tuned`` was tuned on: the same information),
one per episode in turn, and is scored on its test seeds like every controller.

The learners ([OURS] protocol, docs/concepts/learning-agents.md):

* the learning agents (:func:`~ecngym.agents.registry.agent_names`: ``acc``, ``laecn``, ``haecn``
  and any registered one): ecngym's learning agents (:mod:`ecngym.agents`), their own
  algorithm, networks, state features and reward (``configs/agent/<name>.yaml``); one shared policy
  over per-port agents. They decide at the scenario's control interval (ACC's and HAECN's 15 base
  RTTs would change the episode's simulated time, which the scenario fixes as interval x steps);
  LAECN keeps its adaptive interval (a third of the scenario's while no long flow is active, the
  paper's 15 : 5 ratio).
* SB3's algorithms (``ppo``, ``dqn``) on the scenario's env exactly as it is (its observation, one
  template for every port, its ``fct`` reward): the plain-RL baselines.

What a run leaves in ``out_dir``: the checkpoint (:mod:`ecngym.benchmark.checkpoints`:
``model.safetensors``, ``card.json``, ``card.md``, ``curve.csv``) and the trainer's own run folder
``train/`` (not shipped).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ecngym.agents.registry import is_agent, learner_names
from ecngym.benchmark.learner_reward import learner_reward
from ecngym.benchmark.suite import Scenario, load_scenario, scenario_env
from ecngym.error import ConfigError

#: LAECN's long : short monitoring interval (15 : 5 base RTTs, LAECN §III-A Table I), kept on the scenario's Δt.
LAECN_INTERVAL_RATIO = 3


def _short_interval(interval: Any) -> Any:
    """A third of a control interval (``"5rtt"`` -> ``"1.6667rtt"``, ns -> ns)."""
    if isinstance(interval, str) and interval.endswith("rtt"):
        return f"{float(interval[:-3]) / LAECN_INTERVAL_RATIO:.6g}rtt"
    return max(1, int(interval) // LAECN_INTERVAL_RATIO)


def agent_overrides(agent: str, base_env: dict[str, Any], hyperparams: dict[str, Any]) -> dict[str, Any]:
    """The agent config overrides of a learning agent on a scenario: its Δt tied to the scenario's.

    An agent whose own config has a short interval (LAECN's ``interval_short``) keeps the paper's
    ratio to the scenario's interval; one without (ACC, HAECN) has none.

    Args:
        agent: A learning agent (:func:`~ecngym.agents.registry.is_agent`).
        base_env: The scenario's resolved env config.
        hyperparams: The scenario's overrides of the agent's config (``training.agents.<a>.hyperparams``).
    """
    from ecngym.agents.config import agent_config

    own = agent_config(agent)
    env = dict(own["env"])
    env["interval"] = base_env["interval"]
    env["interval_short"] = _short_interval(base_env["interval"]) if env.get("interval_short") is not None else None
    overrides = json.loads(json.dumps(hyperparams))
    overrides["env"] = {**env, **overrides.get("env", {})}
    return overrides


def _with_reward(scenario: Scenario, agent: str, hyper: dict[str, Any]) -> dict[str, Any]:
    """``hyper`` with the learner's reward for this scenario in its env overrides (none: the paper's own)."""
    reward = learner_reward(scenario, agent)
    return hyper if reward is None else {**hyper, "env": {**hyper.get("env", {}), "reward": reward}}


def _train_agent(scenario: Scenario, agent: str, seed: int, base_env: dict[str, Any], budget: int, run_dir: Path,
                 progress: bool, threads: Any) -> tuple[Path, dict[str, Any], pd.DataFrame]:
    """Train ACC / LAECN / HAECN under the scenario's legacy budget; (weights file, agent.json, learning curve)."""
    from ecngym.agents import train_agent
    from ecngym.agents.config import agent_config

    cfg = agent_config(agent, agent_overrides(agent, base_env, _with_reward(
        scenario, agent, scenario.training.settings(agent).hyperparams)))
    path = train_agent(base_env, cfg, run_dir, timesteps=budget, seed=seed, progress_bar=progress,
                       threads=threads, episode_seeds=list(scenario.protocol.train_seeds))
    meta = json.loads((run_dir / "agent.json").read_text())
    curve = pd.read_csv(run_dir / "curve.csv")
    return path, meta, curve


def _train_agent_tier(scenario: Scenario, scenario_dir: Any, agent: str, seed: int, base_env: dict[str, Any],
                      plan: Any, budget: int, run_dir: Path, progress: bool, threads: Any, halt_at: int | None,
                      reference_dir: Any) -> tuple[Path, dict[str, Any], pd.DataFrame]:
    """Train a learning agent under a tier: resumable (its kind's ``resumable``), scored on the validation seeds."""
    from ecngym.agents.config import agent_config
    from ecngym.agents.registry import agent_kind
    from ecngym.agents.resumable import STATE_DIR
    from ecngym.benchmark.validation import Validator, agent_snapshot_card

    kind = agent_kind(agent)
    if kind.resumable is None:
        raise ConfigError("tier", f"learner {agent} has no resumable trainer (its AgentKind's resumable): it cannot "
                                  "train under a tier")
    cfg = agent_config(agent, agent_overrides(agent, base_env, _with_reward(scenario, agent, plan.hyperparams)))
    resume_steps = resume_point(run_dir / STATE_DIR)
    validator = Validator(scenario, scenario_dir, agent, seed, plan.validation_seeds, run_dir,
                          agent_snapshot_card(scenario, cfg, seed, base_env), plan.stop, reference_dir, resume_steps)
    try:
        path = kind.resumable(base_env, cfg, run_dir, timesteps=budget, seed=seed,
                              episode_seeds=list(scenario.protocol.train_seeds), every=plan.eval_every_steps,
                              hook=validator, halt_at=halt_at, progress_bar=progress, threads=threads)
    finally:
        validator.close()
    meta = json.loads((run_dir / "agent.json").read_text())
    meta["tier_record"] = meta.pop("run")
    return Path(path), meta, pd.read_csv(run_dir / meta.get("curve", "curve.csv"))


def resume_point(state_dir: Path) -> int | None:
    """Env steps of a run's saved training state, said on stderr; None for a run that starts anew.

    Args:
        state_dir: The run's state folder (:data:`ecngym.agents.resumable.STATE_DIR` in its run folder).
    """
    from ecngym.agents.train_state import load_state, state_exists

    if not state_exists(state_dir):
        return None
    steps = _saved_env_steps(load_state(state_dir))
    print(f"resuming {state_dir.parent} from its saved state at {steps} env steps", file=sys.stderr)
    return steps


def _saved_env_steps(state: dict[str, Any]) -> int:
    """Env steps of a saved training state (its run record's; an older SB3 state's timestep counter)."""
    run = state.get("run", {})
    return int(run["env_steps"]) if "env_steps" in run else int(state["counters"]["num_timesteps"])


def _sb3_env_overrides(scenario: Scenario, agent: str) -> dict[str, Any]:
    """The env overrides an SB3 learner trains with: its reward, and one template for all if it needs one action.

    [OURS] an algorithm whose SB3 class does not take a MultiDiscrete action (DQN picks one of n
    actions) sets one template for every port on a scenario with one action per layer or port (the
    action encoding is the controller's; the traffic stays the scenario's).
    """
    from ecngym.agents.sb3 import takes_multi_discrete

    overrides: dict[str, Any] = {}
    action = dict(scenario.env.get("action", {}))
    if not takes_multi_discrete(agent) and action.get("scope", "all") != "all":
        overrides["action"] = {**action, "scope": "all"}
    reward = learner_reward(scenario, agent)  # (None: the scenario env's own reward)
    if reward is not None:
        overrides["reward"] = reward
    return overrides


def _train_sb3(scenario: Scenario, agent: str, seed: int, budget: int, run_dir: Path, progress: bool,
               threads: Any) -> tuple[Path, dict[str, Any], pd.DataFrame]:
    """Train SB3's PPO / DQN on the scenario's env as it is; (model.zip, meta, learning curve)."""
    import gymnasium as gym

    import ecngym.envs  # noqa: F401
    from ecngym.agents.sb3 import check_hyperparams, train
    from ecngym.agents.seeds import CycledSeeds
    from ecngym.commands.train import training_curve

    hyper = check_hyperparams(agent, dict(scenario.training.settings(agent).hyperparams))
    made: list[CycledSeeds] = []
    overrides = _sb3_env_overrides(scenario, agent)
    env_kwargs = {**scenario.env, **overrides}

    def factory() -> gym.Env:
        env = CycledSeeds(gym.make(scenario.id, **env_kwargs), list(scenario.protocol.train_seeds))
        made.append(env)
        return env

    path = train(factory, agent, budget, seed, run_dir, hyperparams=hyper, progress_bar=progress, threads=threads)
    episodes = [e for env in made for e in env.episodes]
    curve = training_curve(run_dir / "monitor")
    return path, {"agent": agent, "framework": "sb3", "hyperparams": hyper, "episodes": episodes,
                  "env_overrides": overrides}, curve


def _tier_env(env_id: str, env_kwargs: dict[str, Any], seeds: list[int], rank: int, start: int) -> Any:
    """Env ``rank`` of a tier run: the train seeds in turn from index ``rank + start`` (picklable for SubprocVecEnv)."""
    import gymnasium as gym

    import ecngym.envs  # noqa: F401
    from ecngym.agents.seeds import CycledSeeds

    return CycledSeeds(gym.make(env_id, **env_kwargs), seeds, start=rank + start)


def _train_sb3_tier(scenario: Scenario, scenario_dir: Any, agent: str, seed: int, plan: Any, budget: int,
                    run_dir: Path, progress: bool, threads: Any, halt_at: int | None,
                    reference_dir: Any) -> tuple[Path, dict[str, Any], pd.DataFrame]:
    """Train SB3's PPO / DQN under a tier: resumable, scored on the validation seeds as it goes."""
    from functools import partial

    from ecngym.agents.resumable import STATE_DIR, TRAIN_CURVE, train_resumable
    from ecngym.agents.sb3 import check_hyperparams
    from ecngym.benchmark.validation import Validator, sb3_snapshot_card

    hyper = check_hyperparams(agent, dict(plan.hyperparams))
    overrides = _sb3_env_overrides(scenario, agent)
    env_kwargs = {**scenario.env, **overrides}
    make_env = partial(_tier_env, scenario.id, env_kwargs, list(scenario.protocol.train_seeds))
    probe = make_env(0, 0)
    obs_dim = int(np.prod(probe.observation_space.shape))
    probe.close()
    resume_steps = resume_point(run_dir / STATE_DIR)
    validator = Validator(scenario, scenario_dir, agent, seed, plan.validation_seeds, run_dir,
                          sb3_snapshot_card(scenario, agent, seed, overrides, obs_dim), plan.stop, reference_dir,
                          resume_steps)
    try:
        path, record = train_resumable(make_env, agent, budget, seed, run_dir, n_envs=plan.n_envs,
                                       hyperparams=hyper, every=plan.eval_every_steps, hook=validator,
                                       progress_bar=progress, threads=threads, halt_at=halt_at)
    finally:
        validator.close()
    episodes = [e for per_env in record["traces"] for e in per_env]
    meta = {"agent": agent, "framework": "sb3", "hyperparams": hyper, "episodes": episodes,
            "env_overrides": overrides, "tier_record": {k: record[k] for k in ("env_steps", "stopped", "resumed_from")}}
    return path, meta, pd.read_csv(run_dir / TRAIN_CURVE)


def train_run(scenario: str, agent: str, seed: int, out_dir: Path, *, budget_steps: int | None = None,
              progress: bool = True, scenario_dir: Path | str | None = None, threads: Any = 1,
              tier: str | None = None, halt_at: int | None = None, reference_dir: Path | str | None = None) -> Path:
    """Train one (scenario, learner, training seed) and write its checkpoint into ``out_dir``.

    Safe to call in a fresh worker process (it imports and builds everything it needs; one fabric
    at a time in this process).

    Args:
        scenario: A suite scenario with a ``training:`` block.
        agent: A learner (:func:`~ecngym.agents.registry.learner_names`).
        seed: The training seed (network initialisation and exploration).
        out_dir: Where the checkpoint goes (created; the trainer's run folder is ``out_dir/train``).
        budget_steps: Env steps to train (default: the scenario's ``training.budget_steps``).
        progress: Show the trainer's progress bar.
        scenario_dir: The folder of scenario files (default: the package's).
        threads: Torch / BLAS threads of this process (:func:`ecngym.agents.threads.limit_threads`).
        tier: A budget tier (:mod:`ecngym.benchmark.tiers`: ``100k``, ``converged``): its budget and
            settings replace the scenario's ``training.budget_steps`` and hyperparameters (``budget_steps``
            then caps it, for short tests). Every learner then trains resumably (a rerun of a killed run
            goes on from its state in ``out_dir/train/state``) and is scored on the validation seeds as
            it goes (``validation.csv``, copied beside the checkpoint).
        halt_at: Stop at the first state save at or past this many env steps, as if killed there
            (:class:`~ecngym.agents.resumable.TrainingHalted`; tests of the resume).
        reference_dir: The references files the validation scores are normalized with (default: the package's).

    Returns:
        ``out_dir``, holding the checkpoint.

    Raises:
        ConfigError: Naming ``agent`` for an unknown learner, ``training`` for a scenario without a
            training protocol, ``seed`` / ``budget_steps`` for a bad count, or the config's field.
    """
    from ecngym.benchmark.checkpoints import write_checkpoint
    from ecngym.validation import check_whole

    if agent not in learner_names():
        raise ConfigError("agent", f"got {agent!r}; the learners: {learner_names()}")
    sc = load_scenario(scenario, scenario_dir)
    if sc.training is None:
        raise ConfigError("training", f"scenario {scenario} declares no training protocol (training: in its YAML)")
    seed = check_whole("seed", seed, 0)
    plan = None
    if tier is not None:
        from ecngym.benchmark.tiers import resolve_tier

        plan = resolve_tier(sc, agent, tier)
    default_budget = plan.budget_steps if plan is not None else sc.training.budget_steps
    budget = check_whole("budget_steps", budget_steps if budget_steps is not None else default_budget, 1)
    out_dir = Path(out_dir)
    run_dir = out_dir / "train"
    if run_dir.exists() and plan is None:  # a fresh run: the trainers append to their curves
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    base_env = scenario_env(sc)
    wall0, cpu0 = time.perf_counter(), _cpu_seconds()
    if is_agent(agent) and plan is not None:
        weights, meta, curve = _train_agent_tier(sc, scenario_dir, agent, seed, base_env, plan, budget, run_dir,
                                                 progress, threads, halt_at, reference_dir)
    elif is_agent(agent):
        weights, meta, curve = _train_agent(sc, agent, seed, base_env, budget, run_dir, progress, threads)
    elif plan is not None:
        weights, meta, curve = _train_sb3_tier(sc, scenario_dir, agent, seed, plan, budget, run_dir, progress,
                                               threads, halt_at, reference_dir)
    else:
        weights, meta, curve = _train_sb3(sc, agent, seed, budget, run_dir, progress, threads)
    # (CPU seconds of this process and of its finished children: the env and validation processes)
    cost = {"wall_s": time.perf_counter() - wall0, "cpu_s": _cpu_seconds() - cpu0}
    write_checkpoint(out_dir, sc, agent, seed, budget, weights, meta, curve, cost,
                     budget_default=budget_steps is None)
    if plan is not None:
        _add_tier_to_card(out_dir, sc, plan, budget, meta, run_dir)
    return out_dir


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process and its waited-for children."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _add_tier_to_card(out_dir: Path, sc: Scenario, plan: Any, budget: int, meta: dict[str, Any],
                      run_dir: Path) -> None:
    """The tier, its settings and the validation curve in the checkpoint's card (and the curve beside it)."""
    from dataclasses import asdict

    from ecngym.benchmark.checkpoints import load_card, write_card
    from ecngym.benchmark.validation import VALIDATION_FILE

    _, card = load_card(out_dir)
    card["command"] = card["command"].replace(f" budget_steps={budget}", "") + f" tier={plan.tier}"
    if budget != plan.budget_steps:
        card["command"] += f" budget_steps={budget}"
    card["tier"] = {**asdict(plan), "stop": plan.stop.as_dict() if plan.stop is not None else None,
                    **meta.get("tier_record", {})}
    card["budget_source"] = f"tier {plan.tier} (configs/training/tiers.yaml)"
    card["hyperparams"], card["hyperparams_source"] = plan.hyperparams, plan.source
    curve = run_dir / VALIDATION_FILE
    if curve.is_file():
        shutil.copyfile(curve, out_dir / VALIDATION_FILE)
        rows = pd.read_csv(curve)
        card["validation"] = {"file": VALIDATION_FILE, "seeds": plan.validation_seeds,
                              "points": [[int(r.env_steps), round(float(r.normalized_mean), 4)]
                                         for r in rows.itertuples()]}
    else:
        card["validation"] = {"file": None, "seeds": plan.validation_seeds,
                              "points": [], "why": "no validation point: the run ended before its first "
                                                   "(eval_every_steps above the budget)"}
    write_card(out_dir, card)
