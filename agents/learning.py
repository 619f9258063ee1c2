"""Train ACC, LAECN and HAECN on one scenario and compare them with static ECN on held-out traces.

This is the experiment behind the slow learning tests (``tests/agents/test_learning.py``) and
the LAECN reproduction (LAECN; docs: algorithms/laecn.md §9 directional claims). Every controller replays the same
held-out traces (seeds disjoint from training, checked); the figures per controller:

* ``mean_reward``: the ACC / LAECN reward ω·U + (1 − ω)·Q_step averaged over simulated time
  (steps weighted by their length, so Δt = 5 and 15 RTT agents compare);
* ``afct_us``: average flow completion time of the finished flows; ``p99_small_slowdown``:
  p99 FCT slowdown of flows < 100 KB;
* ``trigger_rate`` (LAECN / HAECN): policy-generator runs per agent decision;
* PRED (``pred``, at its T_QLA = 5 base RTTs over the same simulated time) beside them, for
  its inference cost (no network: its cost is ``act_wall_s_per_sim_s``);
* ``forward_passes_per_sim_s`` (every network evaluation, LAECN's decision module included),
  ``policy_forward_passes_per_sim_s`` (the policy Q-network only: ACC's every decision, LAECN's
  when triggered), ``flops_per_sim_s``, ``decisions_per_sim_s``, ``act_wall_s_per_sim_s``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import numpy as np

#: The bursty scenario: RoceIncast-v0 (16 hosts, WebSearch 30 % + 8-way 64 KB incasts), 100 x 15 RTT.
BURSTY: dict[str, Any] = {}
#: A stable load on the same fabric: WebSearch background only (no incasts).
STABLE: dict[str, Any] = {"workload": {"workload": "websearch", "load": 0.5, "incast": None}}
#: Held-out evaluation traces (disjoint from the training seeds' traces, which the learned controllers check).
EVAL_SEEDS: tuple[int, ...] = (1001, 1002, 1003)
#: Seed of the learner and its training traces in the learning tests (and ``bench train --plateau``).
TRAIN_SEED = 7


def check_seeds(field: str, seeds: Any) -> list[int]:
    """``seeds`` as a list of ints: held-out trace seeds, at least one, each in the results store's range.

    Raises:
        ConfigError: Naming ``field`` (and the index of a bad seed), if they are not.
    """
    from pydantic import Field

    from ecngym.results.store import MAX_SEED  # (pandas: imported when needed)
    from ecngym.validation import Whole, check

    return check(field, seeds, Annotated[list[Whole(0, MAX_SEED)], Field(min_length=1)])


def bursty_env() -> dict[str, Any]:
    """The bursty scenario's env config: ``RoceIncast-v0`` stepped every 15 base RTTs (ACC's Δt).

    Every controller of the experiment replays the same traces with it: the episode spans the
    agents' 100 x 15 RTT (LAECN's adaptive steps cover the same time; static settings step at
    15 RTT too).
    """
    from ecngym.envs.registration import scenario_config

    return {**scenario_config("RoceIncast-v0"), "interval": "15rtt", **BURSTY}


def evaluate(controller: Any, base_env: dict[str, Any], seeds: list[int]) -> dict[str, Any]:
    """Play ``controller`` on ``base_env`` (plus its env overrides) once per seed; aggregate.

    Args:
        controller: The controller (its ``env_overrides`` are applied, as ``ecngym eval`` does).
        base_env: The scenario's ``EnvConfig`` fields.
        seeds: The held-out trace seeds (at least one).

    Returns:
        The mean of each figure over the episodes, and ``episodes`` (one row per seed).

    Raises:
        ConfigError: Naming ``seeds``, if they are not (:func:`check_seeds`).
    """
    import gymnasium as gym

    import ecngym.envs  # noqa: F401
    from ecngym.envs.for_controller import make_for_controller
    from ecngym.envs.rollout import run_episode

    seeds = check_seeds("seeds", seeds)
    env = make_for_controller(lambda extra: gym.make("ecngym/RoceIncast-v0", **{**base_env, **extra}), controller)
    rows = []
    try:
        for seed in seeds:
            rewards: list[tuple[float, int]] = []
            inner_step = env.step

            def step(action: Any, _inner: Any = inner_step, _log: list = rewards) -> Any:
                out = _inner(action)
                _log.append((out[1], out[4]["interval_ns"]))
                return out

            env.step = step  # record each step's reward and length
            summary, records, _ = run_episode(env, controller, seed=seed)
            env.step = inner_step
            r, dt = np.array(rewards).T
            done = records[records["finished"]]
            small = done[done["size_bytes"] < 100_000]["slowdown"]
            row = {"seed": seed, "trace_hash": summary["trace_hash"], "steps": len(rewards),
                   "mean_reward": float((r * dt).sum() / dt.sum()),
                   "afct_us": float(done["fct_ns"].mean() / 1e3) if len(done) else float("nan"),
                   "p99_small_slowdown": float(np.percentile(small, 99)) if len(small) else float("nan"),
                   **{k: summary[k] for k in ("decisions", "forward_passes", "flops", "decisions_per_sim_s",
                                              "forward_passes_per_sim_s", "flops_per_sim_s",
                                              "act_wall_s_per_sim_s", "utilization", "flows_finished")}}
            # the expensive network (ACC's Q-net, LAECN's policy DDQN) apart from LAECN's tiny decision net
            policy = summary.get("policy_forward_passes", summary["forward_passes"])
            row["policy_forward_passes_per_sim_s"] = policy / (dt.sum() * 1e-9)
            if "policy_forward_passes" in summary:
                row["trigger_rate"] = summary["policy_forward_passes"] / max(summary["decisions"], 1)
            rows.append(row)
    finally:
        env.close()
    numeric = [k for k in rows[0] if isinstance(rows[0][k], (int, float))]
    out = {k: float(np.mean([r[k] for r in rows])) for k in numeric}
    out["episodes"] = rows
    return out


def run(out_dir: Path, *, timesteps: int = 3000, eval_seeds: tuple[int, ...] = EVAL_SEEDS,
        seed: int = TRAIN_SEED, agents: tuple[str, ...] = ("acc", "laecn", "haecn"), rllib: bool = False,
        progress_bar: bool = False, reuse: bool = True,
        overrides: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Train each agent for ``timesteps`` env steps on the bursty scenario, then evaluate all.

    ``overrides`` changes an agent's config (agent name -> fields, nested like its YAML; checked as
    :func:`~ecngym.agents.config.agent_config` checks them), e.g. a shorter warm-up for a quick run.

    With ``reuse``, an agent already trained in ``out_dir/<name>`` (its ``agent.json`` exists) is
    evaluated again without retraining.

    Returns (and writes to ``out_dir/learning.json``): per scenario (``bursty``, ``stable``) and
    controller, the :func:`evaluate` figures; plus training wall times.

    Raises:
        ConfigError: Naming ``eval_seeds`` if they are not (:func:`check_seeds`), ``agent`` on an
            unknown agent name; both before any training.
    """
    from ecngym.agents import learned_controller, train_agent
    from ecngym.agents.config import agent_config
    from ecngym.baselines import StaticEcnController
    from ecngym.baselines.pred import PredController
    from ecngym.envs.config import EnvConfig

    eval_seeds = tuple(check_seeds("eval_seeds", eval_seeds))
    out_dir = Path(out_dir)
    base = bursty_env()
    result: dict[str, Any] = {"timesteps": timesteps, "eval_seeds": list(eval_seeds), "train_wall_s": {},
                              "trained_steps": {}}
    runs = {}
    jobs = [(name, name, "sb3") for name in agents] + ([("acc_rllib", "acc", "rllib")] if rllib else [])
    # an unknown name or a bad override fails before any training
    configs = {agent: agent_config(agent, (overrides or {}).get(agent)) for _, agent, _ in jobs}
    for run_name, agent, framework in jobs:
        run_dir = out_dir / run_name
        runs[run_name] = run_dir
        if (run_dir / "agent.json").is_file() and reuse:  # trained before in this directory
            meta = json.loads((run_dir / "agent.json").read_text())
            result["train_wall_s"][run_name] = meta.get("train_wall_s")
            steps = meta.get("timesteps")
            result["trained_steps"][run_name] = steps.get("offline", 0) + steps.get("online", 0) \
                if isinstance(steps, dict) else steps
            continue
        start = time.perf_counter()
        train_agent(base, configs[agent], run_dir, framework=framework, timesteps=timesteps, seed=seed,
                    progress_bar=progress_bar)
        result["train_wall_s"][run_name] = wall = time.perf_counter() - start
        result["trained_steps"][run_name] = timesteps
        meta = json.loads((run_dir / "agent.json").read_text())
        (run_dir / "agent.json").write_text(json.dumps({**meta, "train_wall_s": wall}, indent=2, default=str))
    for scenario, overrides in (("bursty", BURSTY), ("stable", STABLE)):
        env_cfg = {**base, **overrides}
        figures = {}
        for name, setting in (("static_default", "env_default"), ("static_dcqcn", "dcqcn")):
            figures[name] = evaluate(StaticEcnController(setting), env_cfg, list(eval_seeds))
        # PRED (§III-B; docs: algorithms/pred.md §3) at its own T_QLA = 5 base RTTs: 5 RTT steps over the same
        # simulated time
        # (the same traces, checked below); its inference cost beside the learners'
        steps = EnvConfig.from_dict(env_cfg).episode_steps
        figures["pred"] = evaluate(PredController(), {**env_cfg, "interval": "5rtt", "episode_steps": 3 * steps},
                                   list(eval_seeds))
        for name, path in runs.items():
            figures[name] = evaluate(learned_controller(name.split("_")[0], str(path)), env_cfg, list(eval_seeds))
        hashes = {name: [e["trace_hash"] for e in f["episodes"]] for name, f in figures.items()}
        if len({tuple(h) for h in hashes.values()}) != 1:
            raise RuntimeError(f"{scenario}: controllers saw different traces: {hashes}")
        result[scenario] = figures
        (out_dir / "learning.json").write_text(json.dumps(result, indent=2, default=str))
    return result
