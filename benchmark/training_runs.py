"""``ecngym run suite=<s> train=true``: every (scenario x agent x training seed) training run, resumable, then scored.

A **training run** is one (scenario, learner, training seed) of the suite's training protocol (each
scenario's ``training:`` block: its budget in env steps, its training seeds, of which the suite
trains the first ``training_seeds``; every learner, :func:`~ecngym.agents.registry.learner_names`). Each run trains
with :func:`ecngym.benchmark.training.train_run` in a worker process and leaves one **complete
checkpoint folder**::

    <benchmark.checkpoint_dir>/<scenario>/<agent>/seed<k>/      the trained run
        training_run.json                                       written last: the run is finished

The run trains in a hidden sibling folder (``.seed<k>.partial-...``) that is renamed into place
once the run has finished and ``training_run.json`` is written, so a folder under its final name is
always complete (a rename is atomic on one file system, also a shared one such as NFS). A rerun
skips every finished run and starts an unfinished one again from scratch (its partial folder is
removed). Then every finished run's checkpoint is evaluated like any controller
(:mod:`ecngym.benchmark.runner`: one job per run, one results-store row per test episode, stored
episodes skipped), beside the references and the untrained controllers, and the board is printed.

On a cluster each training run is one Hydra job (``-m sweep=ray`` with ``benchmark.scenario`` x
``benchmark.agent`` x ``benchmark.train_seed`` lists: docs/tutorials/train-on-a-cluster.md); the
filters make a run of the command train and score just that part.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import platform
import resource
import shutil
import socket
import sys
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from ecngym.error import ConfigError, EcnGymError

#: The file a finished training run's folder holds (written last, before the folder is renamed into place).
DONE_FILE = "training_run.json"
#: The infix of a training run's folder while it trains (``.seed<k>.partial-<pid>-<random>``).
PARTIAL = ".partial-"


@dataclass(frozen=True)
class TrainingRun:
    """One (scenario, learner, training seed) of a suite's training protocol.

    Args:
        scenario: The scenario's name.
        agent: The learner (``acc``, ``laecn``, ``haecn``, ``ppo``, ``dqn``).
        seed: The training seed (a value of the scenario's ``training.seeds``).
        budget_steps: Env steps to train for (the protocol's, or ``benchmark.budget_steps``; with a
            tier, None: the tier's, else a cap on it).
        checkpoint_root: The checkpoint folder (``benchmark.checkpoint_dir``, absolute).
        scenario_dir: The folder of the scenario's file (None: the package's).
        tier: A budget tier (:mod:`ecngym.benchmark.tiers`), or None (the scenario's legacy budget).
            A tier's run is resumable: a killed one goes on from its saved state when run again.
    """

    scenario: str
    agent: str
    seed: int
    budget_steps: int | None
    checkpoint_root: str
    scenario_dir: str | None = None
    tier: str | None = None

    @property
    def name(self) -> str:
        """``<scenario>/<agent>/seed<k>``: the run's label and its folder under the checkpoint root."""
        return f"{self.scenario}/{self.agent}/seed{self.seed}"

    @property
    def folder(self) -> Path:
        """The run's checkpoint folder once finished."""
        return Path(self.checkpoint_root) / self.scenario / self.agent / f"seed{self.seed}"


@dataclass
class TrainingResult:
    """What one training run did: trained now, found finished, or failed (and why).

    Args:
        run: The run.
        checkpoint: The trained checkpoint (absolute path), None if it failed.
        trained: True if it trained now, False if it was found finished.
        failure: Why it failed (a config the scenario refuses), or None.
        wall_s: Wall seconds of the training (of the finished run, as recorded).
        cpu_s: CPU seconds of the training process (user + system, its threads and children).
    """

    run: TrainingRun
    checkpoint: str | None = None
    trained: bool = False
    failure: str | None = None
    wall_s: float = 0.0
    cpu_s: float = 0.0


def finished_record(run: TrainingRun) -> dict[str, Any] | None:
    """The ``training_run.json`` of a finished run, or None if the run has not finished.

    A folder without the file, or with a file that is not the JSON object this module writes, is
    not a finished run.

    Raises:
        ConfigError: Naming ``benchmark.checkpoint_dir`` if the folder holds the finished run of
            another tier or budget (it would be taken for this one).
    """
    path = run.folder / DONE_FILE
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("checkpoint"), str):
        return None
    theirs = (record.get("tier"), record.get("budget_steps"))
    if theirs != (run.tier, run.budget_steps):
        raise ConfigError("benchmark.checkpoint_dir", f"{run.folder} holds {run.name} trained with tier {theirs[0]!r} "
                                                      f"and budget_steps {theirs[1]!r}, not tier {run.tier!r} and "
                                                      f"budget_steps {run.budget_steps!r}: give another folder")
    return record


def partial_folder(run: TrainingRun) -> Path:
    """Where an unfinished tier run trains (one fixed folder: a rerun resumes from its saved state there)."""
    return run.folder.parent / f".{run.folder.name}{PARTIAL}{run.tier}"


def _cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of its waited-for children so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _ray_node() -> str | None:
    """The Ray node this process runs on (a Ray task of a cluster sweep), else None."""
    ray = sys.modules.get("ray")  # (never imported here: only a process Ray started has it)
    if ray is None or not ray.is_initialized():
        return None
    return str(ray.get_runtime_context().get_node_id())


def default_train_function() -> Callable[..., Path]:
    """The trainer of one run: :func:`ecngym.benchmark.training.train_run`."""
    from ecngym.benchmark.training import train_run

    return train_run


def run_training(run: TrainingRun, train: Callable[..., Path] | None = None) -> TrainingResult:
    """Train one run unless it has finished already; leave a complete checkpoint folder.

    Safe in a fresh worker process (a spawned pool worker, a Ray task).

    Args:
        run: The run.
        train: ``train(scenario, agent, seed, out_dir, *, budget_steps, progress)`` returning the
            checkpoint's path inside ``out_dir`` (default :func:`default_train_function`).

    Returns:
        The result; a run the scenario or agent refuses (an :class:`~ecngym.error.EcnGymError`) is
        a failure, not an exception, so that the other runs go on.
    """
    record = finished_record(run)
    if record is not None:
        return TrainingResult(run, checkpoint=str(run.folder / record["checkpoint"]), trained=False,
                              wall_s=float(record.get("wall_s", 0.0)), cpu_s=float(record.get("cpu_s", 0.0)))
    folder = run.folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    if run.tier is None:
        for stale in folder.parent.glob(f".{folder.name}{PARTIAL}*"):  # an unfinished earlier attempt
            shutil.rmtree(stale, ignore_errors=True)
        partial = folder.parent / f".{folder.name}{PARTIAL}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    else:  # a tier's run resumes where a killed attempt saved its state
        partial = partial_folder(run)
    train = train or default_train_function()
    cpu_start, start = _cpu_seconds(), time.perf_counter()
    try:
        where: dict[str, Any] = {"scenario_dir": run.scenario_dir} if run.scenario_dir is not None else {}
        if run.tier is not None:
            where["tier"] = run.tier
        checkpoint = Path(train(run.scenario, run.agent, run.seed, partial, budget_steps=run.budget_steps,
                                progress=False, **where))
    except EcnGymError as exc:
        if run.tier is None:
            shutil.rmtree(partial, ignore_errors=True)
        return TrainingResult(run, failure=str(exc), wall_s=time.perf_counter() - start)
    wall, cpu = time.perf_counter() - start, _cpu_seconds() - cpu_start
    try:
        relative = checkpoint.resolve().relative_to(partial.resolve())
    except ValueError:
        raise RuntimeError(f"{run.name}: the trainer returned {checkpoint}, outside its folder {partial}") from None
    from ecngym import __version__

    # (the saved state holds the replay: it is what resumes a killed run, and a finished one needs none)
    shutil.rmtree(partial / "train" / "state", ignore_errors=True)
    record = {"scenario": run.scenario, "agent": run.agent, "seed": run.seed, "budget_steps": run.budget_steps,
              "tier": run.tier, "checkpoint": str(relative), "wall_s": wall, "cpu_s": cpu,
              "ecngym_version": __version__,
              "host": socket.gethostname(), "ray_node": _ray_node(), "python": platform.python_version(),
              "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    (partial / DONE_FILE).write_text(json.dumps(record, indent=2))
    try:
        os.rename(partial, folder)
    except OSError:  # another job finished the same run first: keep its folder
        shutil.rmtree(partial, ignore_errors=True)
        if finished_record(run) is None:
            raise
        return run_training(run, train)
    return TrainingResult(run, checkpoint=str(folder / relative), trained=True, wall_s=wall, cpu_s=cpu)


def _run_training_in_worker(run: TrainingRun) -> TrainingResult:
    """:func:`run_training` with the default trainer, its traceback kept in the failure on a crash."""
    try:
        return run_training(run)
    except Exception:  # a bug in one run must not lose the others' results
        return TrainingResult(run, failure=traceback.format_exc(limit=8))


def run_trainings(runs: list[TrainingRun], pool: concurrent.futures.Executor | None, console: Console,
                  work: Callable[[TrainingRun], TrainingResult] = _run_training_in_worker) -> list[TrainingResult]:
    """Run the training runs (in ``pool``, or one after the other here) under one bar plus one per running run.

    Finished runs are counted at once and not submitted.

    Args:
        runs: The runs.
        pool: Worker processes (None: this process).
        console: Where the bars go.
        work: What runs one run (default: :func:`run_training` with the default trainer).

    Returns:
        One result per run, in finishing order.
    """
    results: list[TrainingResult] = []
    todo = []
    for run in runs:
        record = finished_record(run)
        if record is None:
            todo.append(run)
        else:
            results.append(TrainingResult(run, checkpoint=str(run.folder / record["checkpoint"]),
                                          wall_s=float(record.get("wall_s", 0.0)),
                                          cpu_s=float(record.get("cpu_s", 0.0))))
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False, redirect_stdout=False,
                  redirect_stderr=False) as progress:
        suite = progress.add_task("[bold]training runs[/]", total=len(runs), completed=len(results))
        bars: dict[Any, Any] = {}

        def finish(result: TrainingResult) -> None:
            results.append(result)
            progress.advance(suite)
            if result.failure:
                console.print(f"[yellow]{result.run.name}: failed: {result.failure.splitlines()[-1]}[/]")

        if pool is None:
            for run in todo:
                bar = progress.add_task(f"  {run.name}", total=None)
                finish(work(run))
                progress.remove_task(bar)
            return results
        futures = {pool.submit(work, run): run for run in todo}
        pending = set(futures)
        while pending:
            done, pending = concurrent.futures.wait(pending, timeout=0.5,
                                                    return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                if future in bars:
                    progress.remove_task(bars.pop(future))
                finish(future.result())
            for future in pending:  # a bar per run a worker has taken
                if future.running() and future not in bars:
                    bars[future] = progress.add_task(f"  {futures[future].name}", total=None)
    return results


def training_protocol(suite: Any, scenario: str) -> tuple[list[str], list[int], int] | None:
    """(learners, training seeds, budget in env steps) the suite trains on ``scenario``; None if none train there.

    The training seeds are the first ``training_seeds`` (the suite's count) of the scenario's
    ``training.seeds``.

    Raises:
        ConfigError: Naming ``suite.training_seeds`` if the scenario has fewer training seeds.
    """
    training = suite.scenarios[scenario].training
    if training is None:
        return None
    count = suite.spec.training_seeds
    if count > len(training.seeds):
        raise ConfigError("suite.training_seeds", f"got {count}, but scenario {scenario} has only "
                                                  f"{len(training.seeds)} training seeds (training.seeds)")
    return training.learners(), list(training.seeds[:count]), int(training.budget_steps)


def plan_training(suite: Any, options: Any, checkpoint_root: Path) -> list[TrainingRun]:
    """Every training run of the suite, filtered by ``benchmark.scenario`` / ``agent`` / ``train_seed``.

    Args:
        suite: The suite (:func:`~ecngym.benchmark.suite.load_suite`).
        options: The benchmark options (:class:`~ecngym.benchmark.runner.BenchmarkOptions`).
        checkpoint_root: Where the runs' folders go.

    Returns:
        The runs, scenario by scenario, then agent, then seed.

    Raises:
        ConfigError: Naming ``benchmark.scenario`` / ``benchmark.agent`` / ``benchmark.train_seed``
            for a value no run of the suite has, ``suite`` if no scenario of the suite declares
            training.
    """
    if options.scenario is not None and options.scenario not in suite.scenarios:
        raise ConfigError("benchmark.scenario", f"got {options.scenario!r}; suite {suite.name} has "
                                                f"{list(suite.scenarios)}")
    protocols = {name: training_protocol(suite, name) for name in suite.scenarios}
    if all(p is None for p in protocols.values()):
        raise ConfigError("suite", f"no scenario of suite {suite.name} declares training (a training: block); "
                                   "nothing for train=true to train")
    agents = sorted({a for p in protocols.values() if p for a in p[0]})
    seeds = sorted({s for p in protocols.values() if p for s in p[1]})
    if options.agent is not None and options.agent not in agents:
        raise ConfigError("benchmark.agent", f"got {options.agent!r}; the learners of suite {suite.name}: {agents}")
    tier = getattr(options, "tier", None)
    if tier is not None:
        from ecngym.benchmark.tiers import tier_names

        if tier not in tier_names():
            raise ConfigError("benchmark.tier", f"got {tier!r}; the tiers: {tier_names()}")
    if options.train_seed is not None and options.train_seed not in seeds:
        raise ConfigError("benchmark.train_seed", f"got {options.train_seed!r}; the training seeds of suite "
                                                  f"{suite.name}: {seeds}")
    runs = []
    for name, protocol in protocols.items():
        if protocol is None or options.scenario not in (None, name):
            continue
        names, training_seeds, budget = protocol
        for agent in names:
            if options.agent not in (None, agent):
                continue
            for seed in training_seeds:
                if options.train_seed not in (None, seed):
                    continue
                # (a tier's budget is the tier's: benchmark.budget_steps, if given, caps it)
                steps = options.budget_steps if tier is not None else options.budget_steps or budget
                runs.append(TrainingRun(name, agent, seed, steps, str(checkpoint_root), options.scenario_dir, tier))
    return runs


def learner_name(agent: str, seed: int) -> str:
    """The name a training run's episodes are stored and ranked under: ``<agent>_seed<k>``.

    One board row per training seed: the latest row per (controller, test seed) counts on the
    board, so runs of one learner under one name would hide all training seeds but one.
    """
    return f"{agent}_seed{seed}"


def checkpoint_controller(result: TrainingResult) -> dict[str, Any]:
    """The config of the controller that plays a finished run's checkpoint.

    (:class:`~ecngym.benchmark.checkpoints.CheckpointController`, named by :func:`learner_name`.)
    """
    return {"_target_": "ecngym.benchmark.checkpoints.CheckpointController", "path": str(result.checkpoint),
            "name": learner_name(result.run.agent, result.run.seed)}


def training_summary(results: list[TrainingResult]) -> str:
    """One line: runs trained now / found finished / failed, and the CPU time of the ones trained now."""
    now = [r for r in results if r.trained]
    failed = [r for r in results if r.failure]
    found = len(results) - len(now) - len(failed)
    return (f"training: {len(now)} run(s) trained now ({sum(r.cpu_s for r in now) / 3600:.2f} CPU-h, "
            f"{sum(r.wall_s for r in now):.0f} s wall in runs), {found} found finished, {len(failed)} failed")
