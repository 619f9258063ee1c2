"""``ecngym run suite=<name>``: every scenario of a suite x every untrained controller and the references.

Each (scenario, controller) is one job: the controller's episodes on the scenario's scored test
seeds, each episode a row of the results store as it ends (:func:`ecngym.commands.eval.evaluate`, the
same machinery as ``ecngym eval``; a stored episode is skipped, so a rerun resumes). Jobs run in
worker processes (``benchmark.jobs``, default one per CPU core), each worker reused across jobs
and holding one fabric at a time (ns-3's simulator is a process singleton). A controller that
does not fit a scenario (a DCTCP-only rule on a RoCE fabric) is reported and left out.

``benchmark.scenario_file=PATH`` runs the suite of one scenario file of your own instead
(:func:`~ecngym.benchmark.scenario_file.scenario_file_suite`: its references beside it).

A scenario may override a controller's config for itself (``controllers:`` in its YAML, e.g.
ByteTuning's ``window_steps`` fitted to its episode); the references come from
:func:`reference_controllers` and are labelled references on the board, never competitors.

Filters ``benchmark.scenario`` / ``benchmark.controller`` run one part of the suite: one Hydra job
per (scenario, controller) through a sweep launcher (``sweep=joblib``, ``sweep=ray``) writes to the
same store; ``ecngym benchmark board`` then builds the board from it.
"""

from __future__ import annotations

import concurrent.futures
import io
import multiprocessing
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf
from pydantic import model_validator
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ecngym.benchmark.scenario_file import ScenarioFileArgs, scenario_file_suite
from ecngym.benchmark.scoring import REFERENCES
from ecngym.benchmark.suite import Suite, load_suite
from ecngym.commands.checks import check_outputs
from ecngym.commands.eval import evaluate
from ecngym.commands.factories import benchmark_controllers, results_store
from ecngym.error import ConfigError, EcnGymError
from ecngym.validation import Text, Whole, config_values, field_error


class BenchmarkOptions(ScenarioFileArgs):
    """``benchmark`` of ``configs/run.yaml``: how ``ecngym run suite=...`` runs.

    Args:
        jobs: Worker processes (null: one per CPU core; 1: in the command's own process).
        scenario: Only this scenario of the suite (null: all).
        controller: Only this controller or reference (null: all).
        bootstrap_reps: Bootstrap replications of the suite aggregates.
        bootstrap_seed: Seed of the bootstrap (the same scores give the same intervals).
        scenario_dir: The folder of scenario files (null: the package's ``configs/suite/scenarios``).
        scenario_file: A scenario file of your own: the suite is that one scenario (null: ``suite``);
            not with ``suite=``, ``scenario``, ``scenario_dir`` or ``train=true``.
        reference_dir: The folder of the references files (null: the package's
            ``configs/suite/references``; with ``scenario_file``, ``references/`` beside the file).
        agent: With ``train=true``: only this learner's training runs (and their scores).
        train_seed: With ``train=true``: only this training seed's runs.
        budget_steps: With ``train=true``: env steps per training run instead of each scenario's
            protocol budget (null: the protocol's; a smaller one is a scaled-down run).
        checkpoint_dir: With ``train=true``: where each training run leaves its checkpoint folder
            (:mod:`ecngym.benchmark.training_runs`); on a cluster, a folder every node sees.
        tier: With ``train=true``: train under this budget tier (``100k``, ``converged``:
            :mod:`ecngym.benchmark.tiers`); its runs resume from their saved state when run again.
    """

    jobs: Whole(1, 1024) | None = None
    scenario: Text | None = None
    controller: Text | None = None
    bootstrap_reps: Whole(100, 1_000_000) = 500
    bootstrap_seed: Whole(0, 2**32 - 1) = 0
    scenario_dir: Text | None = None
    reference_dir: Text | None = None
    agent: Text | None = None
    train_seed: Whole(0, 2**32 - 1) | None = None
    budget_steps: Whole(1, 100_000_000) | None = None
    checkpoint_dir: Text = "outputs/checkpoints"
    tier: Text | None = None

    @model_validator(mode="after")
    def _check(self) -> BenchmarkOptions:
        if self.scenario_dir is not None and not Path(self.scenario_dir).is_dir():
            raise field_error("scenario_dir", f"got {self.scenario_dir!r}, not a folder")
        return self

    def partial(self) -> bool:
        """Whether a filter picks a part of the suite (then no board is built)."""
        return any(v is not None for v in (self.scenario, self.controller, self.agent, self.train_seed))

    def worker_count(self) -> int:
        """``jobs``, or the CPU cores this process may use."""
        if self.jobs is not None:
            return self.jobs
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def reference_controllers(scenario: str, scenario_dir: Path | str | None = None,
                          reference_dir: Path | str | None = None) -> dict[str, dict[str, Any]]:
    """The reference controllers of ``scenario`` (:func:`ecngym.benchmark.references.reference_controllers`).

    Raises:
        ConfigError: Naming the scenario when its references (in ``reference_dir``, default the
            package's) have not been computed, or were computed for another version of its file in
            ``scenario_dir``.
    """
    from ecngym.benchmark.references import reference_controllers as references

    return references(scenario, reference_dir, scenario_dir)


@dataclass
class Job:
    """One (scenario, controller): its episodes on the scenario's scored test seeds."""

    scenario: str
    env_id: str
    env_kwargs: dict[str, Any]
    controller: str
    controller_cfg: dict[str, Any]
    seeds: list[int]
    reference: bool
    store_dir: str
    skip_existing: bool
    out_dir: str


@dataclass
class JobResult:
    """What a job did: its rows (stored or skipped) or why it could not run."""

    job: Job
    row_ids: list[str] = field(default_factory=list)
    failure: str | None = None
    wall_s: float = 0.0


def job_config(job: Job) -> DictConfig:
    """The ``ecngym eval``-shaped config :func:`ecngym.commands.eval.evaluate` runs a job with."""
    return OmegaConf.create({"env": {"id": job.env_id, "name": job.scenario, "kwargs": job.env_kwargs},
                             "results": {"dir": job.store_dir, "skip_existing": job.skip_existing},
                             "logger": None})


def run_job(job: Job) -> JobResult:
    """Run one job (in a worker process or in this one); a config the scenario refuses is a failure."""
    start = time.perf_counter()
    out = Path(job.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    try:
        rows, _ = evaluate(job_config(job), OmegaConf.create(job.controller_cfg), job.seeds, "run",
                           Console(file=io.StringIO()), out)
    except EcnGymError as exc:  # one controller's bad fit must not stop the others
        return JobResult(job, failure=str(exc), wall_s=time.perf_counter() - start)
    return JobResult(job, row_ids=[r["row_id"] for r in rows], wall_s=time.perf_counter() - start)


def learner_controllers(scenario: str, root: Path | None = None,
                        version: int | None = None) -> dict[str, dict[str, Any]]:
    """The shipped checkpoint each learner plays on the board of ``scenario``: its first training seed's.

    (The learner table, ``ecngym benchmark learners``, scores every training seed.)

    Raises:
        ConfigError: Naming ``controller.path`` for a checkpoint whose card names another scenario,
            or another ``version`` of it (when given; the player checks the package's scenario
            files' versions itself).
    """
    from ecngym.benchmark.checkpoints import check_scenario, load_card, shipped

    out = {}
    for agent, dirs in shipped(scenario, root).items():
        if version is not None:
            check_scenario(load_card(dirs[0])[1], None, scenario, version)
        out[agent] = {"_target_": "ecngym.benchmark.checkpoints.CheckpointController", "path": str(dirs[0])}
    return out


def suite_learners(suite: Suite, scenario: str) -> dict[str, dict[str, Any]]:
    """The shipped learner checkpoints that play ``scenario`` of ``suite`` (:func:`learner_controllers`).

    Those of the scenario itself; for a scenario file of the user's, those of the shipped scenario
    registered under its id (:attr:`~ecngym.benchmark.suite.Suite.checkpoints_of`); none without one.
    """
    shipped = suite.checkpoints_of.get(scenario)
    return {} if shipped is None else learner_controllers(shipped.name, version=shipped.version)


def plan_jobs(suite: Suite, controllers: dict[str, Any], store_dir: Path, out: Path, skip_existing: bool,
              options: BenchmarkOptions, references: Any = None, learners: bool = False) -> list[Job]:
    """Every job of the suite (references first), filtered by ``options.scenario`` / ``options.controller``.

    Args:
        suite: The suite.
        controllers: The competitors' configs by name (``configs/controller/<name>.yaml``); a name
            that is also a reference's is left to the reference.
        store_dir: The results store.
        out: The run's output folder (each job's controller log goes under it).
        skip_existing: Skip stored episodes.
        options: The benchmark options.
        references: ``scenario -> {reference name: controller config}`` (default
            :func:`reference_controllers` of the suite's scenario files).
        learners: Add each scenario's shipped learner checkpoints (:func:`suite_learners`).

    Raises:
        ConfigError: Naming ``benchmark.scenario`` / ``benchmark.controller`` for a name the suite
            or the controllers do not have, or the scenario whose references are missing or stale.
    """
    references = references or (lambda name: reference_controllers(name, suite.scenario_dir, suite.reference_dir))
    trained = {name: suite_learners(suite, name) if learners else {} for name in suite.scenarios}
    if options.scenario is not None and options.scenario not in suite.scenarios:
        raise ConfigError("benchmark.scenario", f"got {options.scenario!r}; suite {suite.name} has "
                                                f"{list(suite.scenarios)}")
    known = {*controllers, *REFERENCES, *(a for t in trained.values() for a in t)}
    if options.controller is not None and options.controller not in known:
        raise ConfigError("benchmark.controller", f"got {options.controller!r}; known: {sorted(known)}")
    jobs = []
    for name, scenario in suite.scenarios.items():
        if options.scenario is not None and name != options.scenario:
            continue
        wants_references = options.controller is None or options.controller in REFERENCES
        configs = {ref: (dict(cfg), True) for ref, cfg in (references(name) if wants_references else {}).items()}
        for cname, ccfg in controllers.items():
            if cname not in configs:
                plain = config_values(ccfg, "controller") if OmegaConf.is_config(ccfg) else dict(ccfg)
                override = scenario.controllers.get(cname)
                if override:
                    plain = config_values(OmegaConf.merge(OmegaConf.create(plain), OmegaConf.create(override)))
                configs[cname] = (plain, False)
        for cname, ccfg in trained[name].items():
            configs.setdefault(cname, (ccfg, False))
        for cname, (ccfg, is_reference) in configs.items():
            if options.controller is not None and cname != options.controller:
                continue
            jobs.append(Job(scenario=name, env_id=scenario.id, env_kwargs=dict(scenario.env), controller=cname,
                            controller_cfg=ccfg, seeds=suite.test_seeds(name), reference=is_reference,
                            store_dir=str(store_dir), skip_existing=skip_existing,
                            out_dir=str(out / "suite" / name / cname)))
    return jobs


def learner_jobs(suite: Suite, results: list[Any], store_dir: Path, out: Path, skip_existing: bool) -> list[Job]:
    """One evaluation job per finished training run: its checkpoint on the scenario's scored test seeds.

    Args:
        suite: The suite the runs trained on.
        results: The runs' :class:`~ecngym.benchmark.training_runs.TrainingResult` (those without a
            checkpoint, the failed ones, get no job).
        store_dir: The results store.
        out: The run's output folder (each job's controller log goes under it).
        skip_existing: Skip stored episodes.
    """
    from ecngym.benchmark.training_runs import checkpoint_controller, learner_name

    jobs = []
    for result in sorted((r for r in results if r.checkpoint), key=lambda r: r.run.name):
        run = result.run
        scenario = suite.scenarios[run.scenario]
        label = learner_name(run.agent, run.seed)
        jobs.append(Job(scenario=run.scenario, env_id=scenario.id, env_kwargs=dict(scenario.env), controller=label,
                        controller_cfg=checkpoint_controller(result), seeds=suite.test_seeds(run.scenario),
                        reference=False, store_dir=str(store_dir), skip_existing=skip_existing,
                        out_dir=str(out / "suite" / run.scenario / run.agent / f"seed{run.seed}")))
    return jobs


def check_scenarios(suite: Suite) -> None:
    """Build each scenario's env once (no fabric): a bad scenario fails here, not once per controller.

    Raises:
        ConfigError: Naming ``scenarios.<name>.env...`` with the env's message.
    """
    import gymnasium as gym

    import ecngym.envs  # noqa: F401  (registers the ids)

    for name, scenario in suite.scenarios.items():
        try:
            gym.make(scenario.id, **scenario.env).close()
        except ConfigError as exc:
            raise ConfigError(f"scenarios.{name}.{exc.field}", exc.message) from None
        except gym.error.Error as exc:
            raise ConfigError(f"scenarios.{name}.id", f"got {scenario.id!r}: {exc}") from None


def worker_pool(workers: int, jobs: int) -> concurrent.futures.ProcessPoolExecutor | None:
    """The worker processes (None for one worker or one job: everything runs in this process).

    Started with ``spawn``: a fresh interpreter per worker (a forked copy of this process would
    share its threads' locks); each worker is reused for many jobs, so its start-up is paid once.
    """
    if workers <= 1 or jobs <= 1:
        return None
    context = multiprocessing.get_context("spawn")
    return concurrent.futures.ProcessPoolExecutor(max_workers=min(workers, jobs), mp_context=context)


def run_jobs(jobs: list[Job], pool: concurrent.futures.Executor | None, console: Console) -> list[JobResult]:
    """Run the jobs (in ``pool``, or in this process) under one progress bar of episodes."""
    results = []
    columns = (TextColumn("[bold]suite[/]"), BarColumn(), MofNCompleteColumn(), TextColumn("episodes"),
               TimeElapsedColumn(), TextColumn("{task.description}"))
    # (no redirection of sys.stdout / sys.stderr: the jobs print nothing here, and a redirection restores
    # whatever streams it found at the start, also ones closed since)
    # (no auto-refresh: its thread would make a job run in this process unable to fork, as
    # mpc_forecast's branches do; the bar moves as jobs end)
    with Progress(*columns, console=console, transient=False, redirect_stdout=False,
                  redirect_stderr=False, auto_refresh=False) as progress:
        task = progress.add_task("", total=sum(len(j.seeds) for j in jobs))

        def done(result: JobResult) -> None:
            results.append(result)
            status = f"{result.job.scenario}/{result.job.controller}" + (" (left out)" if result.failure else "")
            progress.update(task, advance=len(result.job.seeds), description=status, refresh=True)

        if pool is None:
            for job in jobs:
                done(run_job(job))
        else:
            for future in concurrent.futures.as_completed([pool.submit(run_job, job) for job in jobs]):
                done(future.result())
    return results


def _overhead_text(store: Any, results: list[JobResult], started_at: Any, wall_s: float,
                   pool: concurrent.futures.Executor | None) -> str:
    """``; runner overhead X s per episode``: worker time not spent in an episode, per episode simulated now.

    Worker time is the wall time x the workers (idle workers at the end count: they are the runner's
    too); episode time is the stored rows' ``wall_s`` of the episodes this run simulated.
    """
    ids = [rid for r in results for rid in r.row_ids]
    if not ids:
        return ""
    rows = store.query("SELECT wall_s, created_at FROM episodes WHERE list_contains($ids, row_id)", {"ids": ids})
    new = rows[rows["created_at"].dt.tz_localize(None) >= started_at.tz_localize(None)] if len(rows) else rows
    if new.empty:
        return "; nothing simulated (every episode was stored)"
    workers = getattr(pool, "_max_workers", 1) if pool is not None else 1
    per_episode = (wall_s * workers - float(new["wall_s"].sum())) / len(new)
    return (f"; {len(new)} simulated now, {new['wall_s'].sum():.0f} s in episodes, runner overhead "
            f"{per_episode:.2f} s per episode ({workers} worker(s))")


#: The suite board's page (``leaderboard.html`` left at null): the page ``make demo`` writes.
SUITE_PAGE = "outputs/leaderboard.html"

#: ``ecngym run`` keys that only the single-scenario mode (``suite=null``) reads.
SINGLE_SCENARIO_KEYS = ("env", "fabric", "topology", "workload", "seeds", "leaderboard.score")


def check_suite_overrides() -> None:
    """Refuse a command-line key a suite run would ignore (a scenario's env is its suite file's).

    Raises:
        ConfigError: Naming the key and the mode that reads it.
    """
    from hydra.core.hydra_config import HydraConfig

    from ecngym.cli import key_of_override

    if not HydraConfig.initialized():
        return
    for override in HydraConfig.get().overrides.task:
        key = key_of_override(override)
        if any(key == k or key.startswith(k + ".") for k in SINGLE_SCENARIO_KEYS):
            raise ConfigError(key, f"got {override!r}, but a suite run ignores it: each scenario's env, seeds and "
                                   "score are its file's (configs/suite/scenarios/); for one scenario of your own "
                                   "add suite=null")


def suite_main(cfg: DictConfig, out: Path, console: Console) -> None:
    """``ecngym run suite=...``: run the suite's jobs, then print the board and write the page.

    Raises:
        ConfigError: On a bad suite, scenario, option or output path (before anything runs), or
            when every controller failed.
    """
    import hydra.utils

    from ecngym.files import check_output_path
    from ecngym.results.config import parse_results

    check_suite_overrides()
    options = BenchmarkOptions.parse(cfg.get("benchmark"), "benchmark")
    train = check_train_options(cfg.get("train", False), options)
    suite = run_suite(cfg, options, train)
    html = check_output_path("leaderboard.html", cfg.leaderboard.html or SUITE_PAGE)
    check_outputs(cfg)
    check_scenarios(suite)
    controllers = benchmark_controllers(cfg)
    store = results_store(cfg)
    if not options.partial():  # before anything runs: the page is written at the end
        from ecngym.benchmark.page import suite_page_kind
        from ecngym.results.page import check_page_target

        check_page_target("leaderboard.html", Path(hydra.utils.to_absolute_path(str(html))),
                          suite_page_kind(suite.name, store))
    skip_existing = parse_results(cfg.get("results")).skip_existing
    runs = []
    if train and options.controller is None:  # (benchmark.controller picks an untrained controller's jobs)
        from ecngym.benchmark.training_runs import plan_training

        runs = plan_training(suite, options, checkpoint_root(options))
    learners_only = train and (options.agent is not None or options.train_seed is not None)
    # the shipped learners join a suite that asks for them, unless the command line names the controllers
    # or the learners are trained now (train=true: the runs' own checkpoints are scored instead)
    learners = suite.spec.learners and cfg.controllers == "all" and not train
    jobs = [] if learners_only else plan_jobs(suite, controllers, store.root, out, skip_existing, options,
                                              learners=learners)
    workers = options.worker_count()
    console.print(f"[bold]suite {suite.name}[/] v{suite.spec.version}: {len(suite.scenarios)} scenarios, "
                  + (f"{len(runs)} training runs (scenario x learner x training seed) then their scores, " if train
                     else "")
                  + f"{len(jobs)} jobs (scenario x controller), {sum(len(j.seeds) for j in jobs)} episodes on "
                  f"{min(workers, max(len(jobs), len(runs), 1))} worker process(es); store {store.root}")
    pool = worker_pool(workers, max(len(jobs), len(runs)))
    try:
        if runs:
            jobs = _train(suite, runs, pool, store, out, skip_existing, console) + jobs
        _run_and_report(cfg, suite, jobs, pool, options, store, html, console)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def run_suite(cfg: DictConfig, options: BenchmarkOptions, train: bool = False) -> Suite:
    """The suite ``ecngym run`` runs: ``cfg.suite``, or the suite of ``benchmark.scenario_file``.

    Raises:
        ConfigError: Naming ``benchmark.scenario_file`` when it is given with ``suite=...`` on the
            command line or with ``train=true``, or the suite's or the file's bad field.
    """
    if options.scenario_file is None:
        return load_suite(cfg.suite, options.scenario_dir, options.reference_dir)
    from hydra.core.hydra_config import HydraConfig

    from ecngym.cli import key_of_override

    given = ([o for o in HydraConfig.get().overrides.task if key_of_override(o).split(".")[0] == "suite"]
             if HydraConfig.initialized() else [])
    if given:
        shown = "suite=null" if given[0].startswith("~") else given[0]  # (the command line's suite=null reads ~suite)
        raise ConfigError("benchmark.scenario_file", f"got {options.scenario_file!r} together with {shown!r}; give "
                                                     "one of them: a scenario file is a suite of its own")
    if train:
        raise ConfigError("benchmark.scenario_file", f"got {options.scenario_file!r} with train=true: training reads "
                                                     "its scenarios from the package or benchmark.scenario_dir; train "
                                                     "without scenario_file, or leave train=true out")
    return scenario_file_suite(options.scenario_file, "benchmark.scenario_file", options.reference_dir)


def check_train_options(train: Any, options: BenchmarkOptions) -> bool:
    """``train`` as a flag; the training-only benchmark options refused without it.

    Raises:
        ConfigError: Naming ``train`` for a value that is not a boolean, or the option
            (``benchmark.agent`` ...) given without ``train=true`` (it would be ignored).
    """
    from ecngym.validation import Flag, check

    train = check("train", train, Flag)
    if not train:
        defaults = BenchmarkOptions()
        for name in ("agent", "train_seed", "budget_steps", "checkpoint_dir", "tier"):
            if getattr(options, name) != getattr(defaults, name):
                raise ConfigError(f"benchmark.{name}", f"got {getattr(options, name)!r}, but only train=true "
                                                       "trains learners; add train=true or leave it out")
    return train


def checkpoint_root(options: BenchmarkOptions) -> Path:
    """``benchmark.checkpoint_dir`` as an absolute path (relative: from the directory the command started in).

    Raises:
        ConfigError: Naming ``benchmark.checkpoint_dir`` if it cannot be a writable folder.
    """
    import hydra.utils

    from ecngym.files import check_writable_directory

    path = Path(hydra.utils.to_absolute_path(options.checkpoint_dir))
    check_writable_directory("benchmark.checkpoint_dir", path, "a folder for the training runs' checkpoints")
    return path


def _train(suite: Suite, runs: list[Any], pool: concurrent.futures.Executor | None, store: Any, out: Path,
           skip_existing: bool, console: Console) -> list[Job]:
    """Train the runs (finished ones skipped); the evaluation jobs of every finished run.

    Raises:
        ConfigError: Naming ``train`` when every run failed.
    """
    from ecngym.benchmark.training_runs import run_trainings, training_summary

    results = run_trainings(runs, pool, console)
    console.print(training_summary(results))
    failed = [r for r in results if r.failure]
    if failed and len(failed) == len(results):
        raise ConfigError("train", "no training run finished: " + "; ".join(
            f"{r.run.name}: {r.failure.strip().splitlines()[-1]}" for r in failed[:5]))
    return learner_jobs(suite, results, store.root, out, skip_existing)


def _run_and_report(cfg: DictConfig, suite: Suite, jobs: list[Job], pool: concurrent.futures.Executor | None,
                    options: BenchmarkOptions, store: Any, html: Any, console: Console) -> None:
    """Run the jobs, then (for the whole suite) print the board and write the page."""
    import hydra.utils
    import pandas as pd

    started_at = pd.Timestamp.now(tz="UTC")
    start = time.perf_counter()
    results = run_jobs(jobs, pool, console)
    wall = time.perf_counter() - start
    failed = [r for r in results if r.failure]
    for r in sorted(failed, key=lambda r: (r.job.scenario, r.job.controller)):
        console.print(f"[yellow]{r.job.scenario}: {r.job.controller} left out: {r.failure}[/]")
    episodes = sum(len(r.row_ids) for r in results)
    console.print(f"{episodes} episodes of {len(results) - len(failed)} jobs in {wall:.0f} s "
                  f"({len(failed)} left out){_overhead_text(store, results, started_at, wall, pool)}")
    if results and len(failed) == len(results):
        raise ConfigError("controllers", "no controller ran on any scenario: " + "; ".join(
            f"{r.job.scenario}/{r.job.controller}: {r.failure}" for r in failed[:5]))
    if options.partial():
        console.print(f"part of the suite (benchmark.scenario / controller / agent / train_seed): the board of "
                      f"everything stored: ecngym benchmark board suite={suite.name} store={store.root}")
        return
    from ecngym.benchmark.board import build_board, print_board

    start = time.perf_counter()
    board = build_board(store, suite, reps=options.bootstrap_reps, seed=options.bootstrap_seed, pool=pool)
    print_board(board, console)
    from ecngym.benchmark.page import write_suite_page

    path = write_suite_page(board, store, Path(hydra.utils.to_absolute_path(str(html))), "leaderboard.html")
    console.print(f"leaderboard page: {path} (board and page in {time.perf_counter() - start:.0f} s)")
