"""``ecngym train suite=...`` and ``ecngym benchmark train-learners``: train the suite's learners.

Both take ``key=value`` arguments::

    ecngym train suite=core scenario=roce_storage_incast agent=acc seed=1
    ecngym benchmark train-learners suite=core jobs=2 dest=benchmark/checkpoints

``ecngym train suite=<s> scenario=<scenario> agent=<a> seed=<n>`` trains one learner under the
scenario's training protocol (:func:`ecngym.benchmark.training.train_run`) and writes its
checkpoint (``out=``, default ``outputs/train/<scenario>/<agent>/seed<n>``); where the package
ships a checkpoint of that (scenario, agent, seed), it says whether the weights came out identical.
``train-learners`` trains every (scenario x learner x training seed) of a suite, plus one longer
run per learner where a scenario declares ``long_budget_steps``, in ``jobs`` processes, and copies
the checkpoints into ``dest`` (the package's ``benchmark/checkpoints`` in a source checkout).

With ``tier=100k|converged`` it is one resumable command (:mod:`ecngym.benchmark.training_runs`):
each run trains under the tier straight into ``dest`` (default ``outputs/checkpoints/<tier>``),
a finished run (its ``training_run.json``) is skipped, and an unfinished one goes on from the state
it saved before it was killed; run it again until it reports nothing left::

    ecngym benchmark train-learners suite=core tier=100k jobs=2
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from ecngym.cli import key_value_arguments
from ecngym.error import ConfigError
from ecngym.validation import ConfigModel, Flag, Text, Whole


class TrainArgs(ConfigModel):
    """The arguments of ``ecngym train suite=...``."""

    suite: Text
    scenario: Text
    agent: Text
    seed: Whole(0, 2**31 - 1)
    budget_steps: Whole(1, 100_000_000) | None = None
    out: Text | None = None
    progress: Flag = True
    scenario_dir: Text | None = None
    tier: Text | None = None


def check_choice(field: str, value: Any, allowed: list[Any], what: str) -> None:
    """Refuse ``value`` unless it is one of ``allowed``, naming the field, the value and the choices.

    Args:
        field: The argument (``agent``).
        value: Its value.
        allowed: The values allowed.
        what: What the allowed values are, for the message (``"the learners"``).

    Raises:
        ConfigError: ``<field>: got <value>; <what>: <allowed>. Did you mean '<closest>'?``
    """
    from ecngym.workloads.distributions import suggest

    if value not in allowed:
        hint = suggest(value, [str(a) for a in allowed]) if isinstance(value, str) else ""
        raise ConfigError(field, f"got {value!r}; {what}: {allowed}.{hint}".rstrip("."))


TRAIN_USAGE = ("ecngym train suite=core scenario=<scenario> agent=acc|laecn|haecn|ppo|dqn seed=<n> "
               "[tier=100k|converged] [budget_steps=N] [out=DIR]")


def train_main(argv: list[str] | None = None) -> int:
    """``ecngym train suite=...``: one learner's checkpoint, compared with the shipped one if any.

    Raises:
        ConfigError: On a bad argument, a scenario the suite does not have, or the trainer's error.
    """
    from ecngym.agents.registry import learner_names
    from ecngym.benchmark.checkpoints import CHECKPOINT_DIR, WEIGHTS_FILE, load_card
    from ecngym.benchmark.suite import load_suite
    from ecngym.benchmark.training import train_run
    from ecngym.files import check_writable_directory

    args = key_value_arguments(TrainArgs, list(sys.argv[1:] if argv is None else argv), TRAIN_USAGE, __doc__)
    check_choice("agent", args.agent, learner_names(), "the learners")
    suite = load_suite(args.suite, args.scenario_dir)
    check_choice("scenario", args.scenario, list(suite.scenarios), f"suite {suite.name} has")
    # (checked before the training: a folder that cannot be written would lose the trained weights)
    out = check_writable_directory("out", args.out or f"outputs/train/{args.scenario}/{args.agent}/seed{args.seed}",
                                   "a checkpoint folder")
    console = Console()
    start = time.perf_counter()
    path = train_run(args.scenario, args.agent, args.seed, out, budget_steps=args.budget_steps,
                     progress=args.progress, scenario_dir=args.scenario_dir, tier=args.tier)
    _, card = load_card(path)
    console.print(f"checkpoint: {path} ({card['weights_bytes']} bytes, sha256 {card['weights_sha256'][:16]}) in "
                  f"{time.perf_counter() - start:.0f} s")
    ship = CHECKPOINT_DIR / args.scenario / args.agent / f"seed{args.seed}"
    if (ship / WEIGHTS_FILE).is_file():
        _, shipped = load_card(ship)
        same = shipped["weights_sha256"] == card["weights_sha256"]
        console.print(f"shipped checkpoint {ship}: weights {'identical (bit for bit)' if same else 'DIFFER'} "
                      f"(sha256 {shipped['weights_sha256'][:16]} vs {card['weights_sha256'][:16]})")
        if not same:
            console.print(weight_spread(ship, path))
    return 0


def weight_spread(a: Path, b: Path) -> str:
    """How far two checkpoints' weights are apart (largest absolute difference per network)."""
    import numpy as np
    from safetensors.numpy import load_file

    from ecngym.benchmark.checkpoints import WEIGHTS_FILE

    ta, tb = load_file(str(Path(a) / WEIGHTS_FILE)), load_file(str(Path(b) / WEIGHTS_FILE))
    diffs = {k: float(np.abs(ta[k] - tb[k]).max()) for k in sorted(ta) if k in tb and ta[k].shape == tb[k].shape}
    worst = max(diffs.items(), key=lambda kv: kv[1]) if diffs else ("-", float("nan"))
    return f"largest weight difference {worst[1]:.3g} ({worst[0]}); {len(diffs)} tensors compared"


class TrainAllArgs(ConfigModel):
    """The arguments of ``ecngym benchmark train-learners``."""

    suite: Text = "core"
    jobs: Whole(1, 256) = 2
    #: where the checkpoints go (default: ``benchmark/checkpoints``; with a tier ``outputs/checkpoints/<tier>``)
    dest: Text | None = None
    scratch: Text = "outputs/train-learners"
    scenario: Text | None = None
    agent: Text | None = None
    seed: Whole(0, 2**31 - 1) | None = None
    long: Flag = True
    #: a budget tier: resumable runs under it (the module docstring)
    tier: Text | None = None
    #: with a tier: a cap on its budget (scaled-down runs)
    budget_steps: Whole(1, 100_000_000) | None = None
    scenario_dir: Text | None = None


def _train_one(job: tuple[str, str, int, int | None, bool, str, str]) -> str:
    from ecngym.benchmark.checkpoints import ship
    from ecngym.benchmark.training import train_run

    scenario, agent, seed, budget, long, scratch, dest = job
    label = f"long{seed}" if long else f"seed{seed}"
    out = Path(scratch) / scenario / agent / label
    start = time.perf_counter()
    train_run(scenario, agent, seed, out, budget_steps=budget, progress=False)
    ship(out, Path(dest) / scenario / agent / ("long" if long else label), weights=not long)
    return f"{scenario}/{agent}/{label}: {time.perf_counter() - start:.0f} s"


def train_all_main(argv: list[str] | None = None) -> int:
    """``ecngym benchmark train-learners``: every (scenario x learner x training seed) of a suite.

    Raises:
        ConfigError: On a bad argument: a ``scenario`` / ``agent`` / ``seed`` filter that the suite
            does not train (naming the allowed values, so a misspelt one never trains nothing), or a
            ``dest`` / ``scratch`` folder that cannot be written.
    """
    from ecngym.agents.registry import learner_names
    from ecngym.benchmark.suite import load_suite
    from ecngym.files import check_writable_directory

    args = key_value_arguments(TrainAllArgs, list(sys.argv[1:] if argv is None else argv),
                               "ecngym benchmark train-learners suite=core jobs=2 [tier=100k|converged] dest=DIR",
                               __doc__)
    suite = load_suite(args.suite, args.scenario_dir)
    trained = [name for name, sc in suite.scenarios.items() if sc.training is not None]
    if not trained:
        raise ConfigError("suite", f"got {args.suite!r}: none of its scenarios {list(suite.scenarios)} declares "
                                   "training (training: in its YAML)")
    if args.scenario is not None:
        check_choice("scenario", args.scenario, trained, f"the scenarios suite {suite.name} trains on")
    if args.agent is not None:
        check_choice("agent", args.agent, learner_names(), "the learners")
    if args.seed is not None:
        seeds = sorted({k for name in trained if args.scenario in (None, name) for k in suite.training_seeds(name)})
        check_choice("seed", args.seed, seeds, f"suite {suite.name}'s training seeds")
    if args.dest is None:
        args.dest = f"outputs/checkpoints/{args.tier}" if args.tier is not None else "benchmark/checkpoints"
    for field in ("dest", "scratch"):
        check_writable_directory(field, getattr(args, field), "a checkpoint folder")
    if args.tier is not None:
        return _train_tier(suite, args)
    if args.budget_steps is not None:
        raise ConfigError("budget_steps", f"got {args.budget_steps}, but it caps a tier's budget: add tier=...")
    jobs: list[tuple[Any, ...]] = []
    for name, sc in suite.scenarios.items():
        if sc.training is None or (args.scenario and name != args.scenario):
            continue
        for agent in sc.training.learners():
            if args.agent and agent != args.agent:
                continue
            jobs += [(name, agent, k, None, False, args.scratch, args.dest) for k in suite.training_seeds(name)
                     if args.seed is None or k == args.seed]
            if args.long and sc.training.long_budget_steps:
                jobs.append((name, agent, suite.training_seeds(name)[0], sc.training.long_budget_steps, True,
                             args.scratch, args.dest))
    console = Console()
    console.print(f"{len(jobs)} training runs in {args.jobs} process(es)")
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
        for line in pool.map(_train_one, jobs):
            console.print(line)
    return 0


def _train_tier(suite: Any, args: TrainAllArgs) -> int:
    """``train-learners tier=...``: the suite's runs under the tier, resumable; 1 if any failed."""
    from ecngym.benchmark.runner import BenchmarkOptions
    from ecngym.benchmark.training_runs import plan_training, run_trainings, training_summary

    options = BenchmarkOptions.parse({"scenario": args.scenario, "agent": args.agent, "train_seed": args.seed,
                                      "budget_steps": args.budget_steps, "tier": args.tier,
                                      "scenario_dir": args.scenario_dir}, "")
    root = Path(args.dest or f"outputs/checkpoints/{args.tier}").resolve()
    runs = plan_training(suite, options, root)
    console = Console()
    console.print(f"{len(runs)} training runs under tier {args.tier} in {args.jobs} process(es), into {root}")
    if args.jobs == 1:
        results = run_trainings(runs, None, console)
    else:
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
            results = run_trainings(runs, pool, console)
    console.print(training_summary(results))
    return 1 if any(r.failure for r in results) else 0
