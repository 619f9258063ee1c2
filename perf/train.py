"""``ecngym bench train``: training throughput as a share of env-only throughput (PPO, DQN, ACC).

For each algorithm, in a fresh process (so thread settings do not leak between measurements):

* ``env_steps_per_s``: env steps per wall second of the training env alone, stepped with the
  static action (no learner): the single-agent ``RoceIncast-v0`` for PPO and DQN, ACC's
  shared-policy parallel env (16 port agents, Δt = 15 RTT) for ACC;
* ``train_steps_per_s``: env steps per wall second of ``model.learn`` (sampling, inference,
  replay and gradient steps), with SB3's default hyperparameters for PPO / DQN (PPO collects at
  least one 2048-step rollout and runs 320 minibatch updates on it) and ACC's config;
* ``share``: train / env-only (goal >= 0.5);
* where a training env step's wall time goes, in ms per env step: ``env_ms`` (1 / env-only
  rate), ``update_ms`` (inside the algorithm's ``train``: replay sampling / minibatches, forward
  and backward passes, optimizer steps) and ``other_ms`` (the rest: acting, storing transitions,
  wrappers and callbacks, and the env work that a changing action costs and the static one
  does not, e.g. setting the ECN curve).

``acc_overlap`` is ACC with ``overlap_updates=True`` (:mod:`ecngym.agents.ddqn`): each gradient
step runs while the fabric simulates the next interval in a second thread, so its
``update_ms`` is mostly hidden behind ``env_ms`` and ``other_ms`` comes out negative by about
the hidden part.

``--threads`` sets threads per torch / BLAS pool (default: the training default, 1; 0 = the
libraries' own defaults, which is what training used before the thread fix);
``--compare-defaults`` measures both. ``--rllib 1,2`` adds RLlib's ACC (multi-agent DQN) sampling
throughput with 1 and 2 env-runner processes (:func:`rllib_sampling`: each runner its own process
with one fabric and one thread, every runner sampling ``--steps`` env steps at once while the
driver waits, warm-up excluded) and the speedup over the first count. On a machine with fewer
free cores than runners the speedup cannot reach the runner count: the table prints the load
average before the run. ``--plateau`` trains ACC on the default incast scenario until its greedy
reward on held-out traces stops improving and prints the training wall time to that plateau
(:mod:`ecngym.agents.plateau`: the rule; ``--eval-every`` / ``--patience`` / ``--tol`` /
``--window`` / ``--max-steps`` / ``--max-train-s``). ``--profile [SUITE]`` prints where a training
step's CPU goes per learner and scenario (:mod:`ecngym.perf.train_profile`). ``--learners all`` (or a
list) measures each learner's training env steps/s with 1 and 2 sampling processes, the ratio, its CPU minutes per
100k env steps and the suite's training CPU-hours at each tier (:mod:`ecngym.perf.train_scaling`;
``--scaling-suite`` / ``--scenario`` / ``--scenario-dir``); ``--quick`` is its smoke run (a few
steps: not a measurement). The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
import traceback
from dataclasses import fields
from queue import Empty
from typing import Any

from ecngym.agents.learning import TRAIN_SEED
from ecngym.agents.plateau import PlateauRule, measure_plateau
from ecngym.error import ConfigError
from ecngym.markdown_page import add_markdown_option, open_page, page_console
from ecngym.perf.train_profile import PROFILE_STEPS

ALGORITHMS = ("ppo", "dqn", "acc", "acc_overlap")
ENV_ID = "ecngym/RoceIncast-v0"


def _env_only(env: Any, steps: int, action: Any) -> float:
    env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        _, _, term, trunc, _ = env.step(action)
        if term or trunc:
            env.reset()
    return steps / (time.perf_counter() - start)


def measure(algorithm: str, steps: int, threads: int) -> dict[str, Any]:
    """Env-only and training env steps/s of one algorithm in this process.

    Raises:
        ValueError: ``algorithm`` is not one of :data:`ALGORITHMS`.
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm: got {algorithm!r}, allowed: {list(ALGORITHMS)}")
    from ecngym.agents.sb3 import unchecked_distributions
    from ecngym.agents.threads import limit_threads

    limit_threads(threads)
    import gymnasium as gym
    import torch

    import ecngym.envs  # noqa: F401

    out: dict[str, Any] = {"algorithm": algorithm, "threads": threads, "torch_threads": torch.get_num_threads()}
    if algorithm in ("ppo", "dqn"):
        from stable_baselines3.common.env_util import make_vec_env

        from ecngym.agents.sb3 import in_process_vec_env_class, new_model

        env = gym.make(ENV_ID)
        out["env_steps_per_s"] = _env_only(env, steps, env.unwrapped.static_action())
        env.close()
        venv = make_vec_env(lambda: gym.make(ENV_ID), n_envs=1, seed=0, vec_env_cls=in_process_vec_env_class())
        model = new_model(algorithm, venv, 0)  # as ecngym train
    else:
        from ecngym.agents.acc import make_shared_vec_env
        from ecngym.agents.config import agent_config, agent_env_config
        from ecngym.agents.ddqn import DoubleDQN
        from ecngym.envs.multi_agent import EcnTuningParallelEnv
        from ecngym.envs.registration import scenario_config
        from ecngym.envs.view import EnvView

        agent = agent_config("acc")
        cfg = agent_env_config(scenario_config(ENV_ID), agent["env"])
        par = EcnTuningParallelEnv(cfg, agent_granularity=agent["granularity"])
        static = EnvView(par).static_action_index
        par.reset(seed=0)
        start = time.perf_counter()
        for _ in range(steps):
            par.step({a: static for a in par.possible_agents})
            if not par.agents:
                par.reset()
        out["env_steps_per_s"] = steps / (time.perf_counter() - start)
        par.close()
        venv = make_shared_vec_env(cfg, agent["granularity"])
        hyper = {**agent["hyperparams"], "exploration_fraction": 0.5,
                 "overlap_updates": algorithm == "acc_overlap"}
        model = DoubleDQN("MlpPolicy", venv, seed=0, device="cpu", verbose=0, **hyper)
    per_step = venv.num_envs  # SB3 counts one timestep per sub-env (per agent for ACC)
    update_s = _time_updates(model)
    start = time.perf_counter()
    with unchecked_distributions():  # as ecngym train
        model.learn(total_timesteps=steps * per_step)
    wall = time.perf_counter() - start
    venv.close()
    out["train_env_steps"] = n = model.num_timesteps // per_step
    out["train_steps_per_s"] = n / wall
    out["share"] = out["train_steps_per_s"] / out["env_steps_per_s"]
    out["env_ms"] = 1e3 / out["env_steps_per_s"]
    out["update_ms"] = 1e3 * update_s[0] / n
    out["other_ms"] = 1e3 * wall / n - out["env_ms"] - out["update_ms"]
    return out


def _time_updates(model: Any) -> list[float]:
    """Sum the wall seconds of the model's updates into the returned one-item list.

    Times ``model.update`` for DoubleDQN (whose ``train`` only defers the work with
    ``overlap_updates``), else ``model.train``.
    """
    total = [0.0]
    name = "update" if hasattr(model, "update") else "train"
    work = getattr(model, name)

    def timed(*args: Any, **kwargs: Any) -> None:
        start = time.perf_counter()
        work(*args, **kwargs)
        total[0] += time.perf_counter() - start

    setattr(model, name, timed)
    return total


def _runner_sample(runner: Any, env_steps: int) -> tuple[int, float]:
    """(env steps sampled, wall seconds) of one env runner's ``sample`` call (runs in the runner)."""
    start = time.perf_counter()
    episodes = runner.sample(num_timesteps=env_steps, explore=True)
    return sum(e.env_steps() for e in episodes), time.perf_counter() - start


def _runner_threads(runner: Any, threads: int) -> int:
    """Limit the runner process's thread pools (as training does); its torch thread count."""
    import torch

    from ecngym.agents.threads import limit_threads

    limit_threads(threads)
    return torch.get_num_threads()


def rllib_sampling(runners: int, steps: int, threads: int) -> dict[str, Any]:
    """Env steps/s that ``runners`` RLlib env runners sample in parallel for ACC (multi-agent DQN).

    What is timed: every remote env runner (its own process, one fabric, one torch / BLAS thread)
    samples ``steps`` env steps with the ACC RLModule's exploring forward pass, all at once; the
    driver only waits for them (no learner, no replay buffer, no episode transfer: each runner
    returns two numbers). A warm-up call of ``steps // 4`` env steps per runner (env and fabric
    built, first episodes reset) is excluded. Figure: all runners' env steps / wall seconds of
    the parallel call; the per-runner rates come too.
    """
    import ray

    from ecngym.agents.config import agent_config, agent_env_config
    from ecngym.agents.rllib import acc_env_config, shared_policy_dqn
    from ecngym.agents.threads import limit_threads
    from ecngym.envs.registration import scenario_config

    limit_threads(threads)
    agent = agent_config("acc")
    cfg = agent_env_config(scenario_config(ENV_ID), agent["env"])
    # address="local": an instance of our own, never a cluster already running on this machine
    ray.init(address="local", num_cpus=runners + 1, include_dashboard=False, log_to_driver=False)
    try:
        config = shared_policy_dqn(acc_env_config(cfg, agent["granularity"]), agent, timesteps=steps,
                                   num_env_runners=runners)
        algo = config.build_algo()
        group = algo.env_runner_group
        remote = {"local_env_runner": False}
        runner_threads = group.foreach_env_runner(lambda r: _runner_threads(r, threads), **remote)
        group.foreach_env_runner(lambda r: _runner_sample(r, max(1, steps // 4)), **remote)  # warm-up
        start = time.perf_counter()
        per_runner = group.foreach_env_runner(lambda r: _runner_sample(r, steps), **remote)
        wall = time.perf_counter() - start
        algo.stop()
    finally:
        ray.shutdown()
    sampled = sum(n for n, _ in per_runner)
    return {"algorithm": f"rllib_acc_{runners}_runners", "runners": runners, "threads": threads,
            "runner_torch_threads": runner_threads, "env_steps": int(sampled), "wall_s": wall,
            "env_steps_per_s": sampled / wall,
            "per_runner_env_steps_per_s": [n / max(t, 1e-9) for n, t in per_runner]}


def _child(algorithm: str, steps: int, threads: int, queue: Any) -> None:
    try:
        if algorithm.startswith("rllib:"):
            queue.put(rllib_sampling(int(algorithm.split(":")[1]), steps, threads))
        else:
            queue.put(measure(algorithm, steps, threads))
    except BaseException:  # the parent reports it; without this it would wait for a result forever
        queue.put({"error": traceback.format_exc()})
        raise


class BenchChildError(RuntimeError):
    """A measuring process failed or died before reporting its figures."""


def in_fresh_process(algorithm: str, steps: int, threads: int) -> dict[str, Any]:
    """:func:`measure` in a new process (thread pools are set once per process).

    Args:
        algorithm: a name of :data:`ALGORITHMS`, or ``"rllib:<runners>"``.
        steps: env steps to measure.
        threads: torch / BLAS threads of the child (0: the libraries' defaults).

    Returns:
        The child's figures.

    Raises:
        BenchChildError: the child raised (its traceback is in the message) or died without reporting.
    """
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    # the child's libraries must load with the limit (0 = leave the defaults: unset the variables)
    saved = {k: os.environ.pop(k, None) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                                   "ECNGYM_THREADS")}
    if threads:
        for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[k] = str(threads)
    try:
        proc = ctx.Process(target=_child, args=(algorithm, steps, threads, queue))
        proc.start()
        result = None
        while result is None:
            try:
                result = queue.get(timeout=1.0)
            except Empty:
                if not proc.is_alive():  # died without a word (a crash in native code, a kill)
                    raise BenchChildError(f"{algorithm}: the measuring process exited with code "
                                          f"{proc.exitcode} before reporting") from None
        proc.join()
        if "error" in result:
            raise BenchChildError(f"{algorithm}: the measuring process failed:\n{result['error']}")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return result


def _print_plateau(console: Any, p: dict[str, Any]) -> None:
    """The learning curve of ``--plateau`` and its one-line verdict."""
    from rich.table import Table

    table = Table(title=f"ACC on {p['scenario']}: greedy reward on held-out seeds {p['eval_seeds']}")
    for col in ("env steps", "training s", "reward", f"mean of last {p['rule']['window']}", "exploration"):
        table.add_column(col, justify="right")
    for c in p["curve"]:
        table.add_row(str(c["env_steps"]), f"{c['train_s']:.1f}", f"{c['reward']:.4f}", f"{c['smoothed']:.4f}",
                      f"{c['exploration']:.3f}")
    console.print(table)
    statics = ", ".join(f"{k} {v:.4f}" for k, v in p["static_rewards"].items())
    if p["plateau_reached"]:
        verdict = (f"ACC reached its plateau after {p['plateau_env_steps']} env steps, "
                   f"{p['plateau_train_s']:.0f} s of training ({p['plateau_train_s'] / 60:.1f} min; goal <= 20 min)")
    else:
        verdict = (f"no plateau within the run (stopped by {p['stopped_by']}); the curve stood at its last "
                   f"level from {p['plateau_env_steps']} env steps, {p['plateau_train_s']:.0f} s of training")
    console.print(f"{verdict}; plateau level {p['plateau_level']:.4f} ({statics}); "
                  f"run: {p['train_s']:.0f} s training + {p['eval_s']:.0f} s evaluating", highlight=False)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``ecngym bench train``."""
    from rich.markup import escape
    from rich.table import Table

    from ecngym.agents.threads import resolve_threads

    parser = argparse.ArgumentParser(prog="ecngym bench train", description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=512, help="env steps per measurement (default 512)")
    parser.add_argument("--algorithms", default=None, help="comma-separated subset of " + ",".join(ALGORITHMS)
                        + " (default: all, or none with --learners / --quick)")
    parser.add_argument("--learners", default=None, help="also measure these learners' sampling scaling (1 and 2 "
                        "processes), CPU-min per 100k env steps and the suite's CPU-hours per tier: 'all' or a "
                        "comma-separated list (ecngym.perf.train_scaling)")
    parser.add_argument("--scaling-suite", default="core", help="--learners: the suite costed (default core)")
    parser.add_argument("--scenario", default=None, help="--learners: the scenario measured (default: the suite's "
                                                         "first with training)")
    parser.add_argument("--scenario-dir", default=None, help="--learners: the folder of scenario files")
    parser.add_argument("--quick", action="store_true", help="smoke run: --learners all at 48 env steps (not a "
                                                             "measurement)")
    parser.add_argument("--threads", type=int, default=None, help="threads per torch / BLAS pool (default 1; "
                                                                  "0 = library defaults)")
    parser.add_argument("--compare-defaults", action="store_true",
                        help="also measure with the libraries' default thread pools (threads=0)")
    parser.add_argument("--rllib", default="", help="also measure RLlib ACC sampling env steps/s with these "
                                                    "env-runner counts, e.g. 1,2")
    parser.add_argument("--plateau", action="store_true",
                        help="also train ACC until its held-out reward plateaus and print the training wall "
                             "time to the plateau (ecngym.agents.plateau; minutes)")
    rule_options = {o.name: f"--{o.name.replace('_', '-')}" for o in fields(PlateauRule)}  # eval_every: --eval-every
    for option in fields(PlateauRule):  # the rule's fields, types, defaults and help
        parser.add_argument(rule_options[option.name], type=type(option.default),
                            default=option.default, help=f"--plateau: {option.metadata['help']} "
                                                         f"(default {option.default})")
    parser.add_argument("--seed", type=int, default=TRAIN_SEED, help="--plateau: seed of the learner and the "
                        f"training traces (default {TRAIN_SEED}, as the learning tests)")
    parser.add_argument("--suite", default=None,
                        help="also measure training per learner on the suite's scenarios (scaled runs of --steps and "
                             "2 x --steps env steps) and print the suite's CPU-hours (ecngym.benchmark.train_cost)")
    parser.add_argument("--profile", nargs="?", const="core", default=None, metavar="SUITE",
                        help="also profile where a training step's CPU goes, per learner on each scenario of the "
                             "suite (default core) with a training protocol: --profile-steps env steps each, one "
                             "fresh process at a time (ecngym.perf.train_profile)")
    parser.add_argument("--profile-steps", type=int, default=PROFILE_STEPS,
                        help=f"--profile: env steps of each profiled training run (default {PROFILE_STEPS})")
    add_markdown_option(parser)
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if args.seed < 0:
        parser.error(f"--seed: got {args.seed}, must be >= 0")
    plateau_only = [rule_options[o.name] for o in fields(PlateauRule) if getattr(args, o.name) != o.default]
    plateau_only += ["--seed"] if args.seed != TRAIN_SEED else []
    if args.profile_steps != PROFILE_STEPS and args.profile is None:
        parser.error("--profile-steps: only used with --profile; add --profile or leave it out")
    if plateau_only and not args.plateau:  # they would be ignored
        parser.error(f"{', '.join(plateau_only)}: only used with --plateau; add --plateau or leave them out")
    if args.plateau:
        try:
            rule = PlateauRule(**{option.name: getattr(args, option.name) for option in fields(PlateauRule)})
        except ConfigError as exc:
            parser.error(str(exc))
    try:
        runner_counts = [int(n) for n in args.rllib.split(",") if n.strip()]
    except ValueError:
        parser.error(f"--rllib: expected comma-separated runner counts, got {args.rllib!r}")
    if any(n < 1 for n in runner_counts):
        parser.error("--rllib: runner counts must be >= 1")
    if args.quick:
        args.learners = args.learners or "all"
        args.steps = 48 if "--steps" not in argv else args.steps
    scaling = args.learners is not None
    if args.algorithms is None:
        args.algorithms = "" if scaling else ",".join(ALGORITHMS)
    algos = [a.strip() for a in args.algorithms.split(",") if a.strip()]
    bad = [a for a in algos if a not in ALGORITHMS]
    if bad or (not algos and not args.rllib and not args.plateau and args.suite is None and args.profile is None
               and not scaling):
        parser.error(f"--algorithms: unknown {bad}; allowed: {list(ALGORITHMS)}")
    if args.steps < 1:
        parser.error("--steps must be >= 1")
    try:
        threads = resolve_threads(args.threads)
    except ConfigError as exc:  # named as given: the option (or $ECNGYM_THREADS), not the config key
        parser.error(f"{'--threads' if exc.field == 'threads' else exc.field}: {exc.message}")
    settings = [threads] + ([0] if args.compare_defaults and threads != 0 else [])
    page = open_page(args.markdown, "Training throughput", parser.prog, argv, parser.description)
    console = page_console(page, 150 if args.profile else 110)  # the tables have 8 (--profile: 15) columns
    load = os.getloadavg()[0]
    results: list[dict[str, Any]] = []
    rllib: list[dict[str, Any]] = []
    failed: list[str] = []

    def measure_into(into: list[dict[str, Any]], algorithm: str, n_threads: int) -> None:
        try:
            into.append(in_fresh_process(algorithm, args.steps, n_threads))
        except BenchChildError as exc:  # report it, keep measuring the others
            failed.append(str(exc))
            console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)  # a traceback holds [...]

    with console.status("") as status:
        for algo in algos:
            for t in settings:
                status.update(f"{algo}: {args.steps} env steps, threads={t or 'library default'} ...")
                measure_into(results, algo, t)
        for n in runner_counts:
            status.update(f"RLlib ACC sampling with {n} env runner(s) ...")
            measure_into(rllib, f"rllib:{n}", threads)
        plateau = None
        if args.plateau:
            status.update("ACC plateau: static settings on the held-out traces ...")
            try:
                plateau = measure_plateau(rule, seed=args.seed, progress=status.update)
            except Exception as exc:  # report it beside the other figures
                failed.append(f"plateau: {exc!r}")
                console.print(f"[red]error:[/red] plateau: {escape(repr(exc))}", highlight=False)
        suite_cost = None
        if args.suite is not None:
            from ecngym.benchmark.train_cost import suite_cost as measure_suite

            try:
                suite_cost = measure_suite(args.suite, args.steps, progress=status.update)
            except ConfigError as exc:
                parser.error(str(exc))
            failed.extend(suite_cost["failed"])
        profile = None
        if args.profile is not None:
            from ecngym.perf.train_profile import profile_suite

            try:
                profile = profile_suite(args.profile, args.profile_steps, progress=status.update)
            except ConfigError as exc:
                parser.error(str(exc))
            failed.extend(f"profile {r['scenario']}/{r['agent']}: {r['error']}" for r in profile if "error" in r)
        learners = None
        if scaling:
            from ecngym.agents.registry import learner_names
            from ecngym.perf.train_scaling import learner_scaling

            names = learner_names() if args.learners == "all" else [a.strip() for a in args.learners.split(",")
                                                                     if a.strip()]
            try:
                learners = learner_scaling(args.scaling_suite, names, args.steps, args.scenario, args.scenario_dir,
                                           progress=status.update)
            except ConfigError as exc:
                parser.error(f"{exc.field}: {exc.message}")
            failed.extend(learners["failed"])
    table = Table(title=f"training throughput on {ENV_ID} ({os.cpu_count()} CPUs, load {load:.1f} before)")
    for col in ("algorithm", "threads", "env-only steps/s", "training steps/s", "share", "env ms/step",
                "update ms/step", "other ms/step"):
        table.add_column(col, justify="right")
    for r in results:
        table.add_row(r["algorithm"], str(r["threads"] or f"default ({r['torch_threads']})"),
                      f"{r['env_steps_per_s']:.0f}", f"{r['train_steps_per_s']:.0f}", f"{r['share']:.0%}",
                      f"{r['env_ms']:.2f}", f"{r['update_ms']:.2f}", f"{r['other_ms']:.2f}")
    if results or not (suite_cost or profile or learners):  # (--algorithms '' with --suite etc.: their tables only)
        console.print(table)
    summary: dict[str, Any] = {"bench": "train", "env": ENV_ID, "steps": args.steps, "cpus": os.cpu_count(),
                               "load_avg_before": load, "results": results}
    if rllib:
        base = rllib[0]["env_steps_per_s"]
        summary["rllib"] = [{**r, "speedup": r["env_steps_per_s"] / base} for r in rllib]
        for r in summary["rllib"]:
            each = ", ".join(f"{x:.0f}" for x in r["per_runner_env_steps_per_s"])
            console.print(f"RLlib ACC sampling, {r['runners']} env runner(s) x {r['env_steps'] // r['runners']} env "
                          f"steps: {r['env_steps_per_s']:.0f} env steps/s (each runner: {each}; torch threads "
                          f"{r['runner_torch_threads']}), {r['speedup']:.2f}x of {rllib[0]['runners']} runner(s)")
    if plateau is not None:
        summary["plateau"] = plateau
        _print_plateau(console, plateau)
    if suite_cost is not None:
        from ecngym.benchmark.train_cost import print_cost

        summary["suite_cost"] = suite_cost
        print_cost(suite_cost, console)
    if profile is not None:
        from ecngym.perf.train_profile import print_profile

        summary["profile"] = profile
        print_profile(profile, args.profile_steps, console)
    if learners is not None:
        from ecngym.perf.train_scaling import print_scaling

        summary["learners"] = learners
        print_scaling(learners, console)
    if profile is not None:
        from ecngym.perf.train_profile import print_tier_cost, tier_cost

        # the profiled suite, and the core suite (the main job's) where the profile covers it
        summary["profile_tiers"] = [tier_cost(name, profile) for name in dict.fromkeys((args.profile, "core"))]
        for cost in summary["profile_tiers"]:
            print_tier_cost(cost, console)
    if failed:
        summary["failed"] = failed
    print(json.dumps(summary))
    if page is not None:
        page.write()
    return 1 if failed else 0
