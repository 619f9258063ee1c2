"""The reference points of each benchmark scenario: ``static_default``, ``static_tuned``, ``oracle_phase``, ``random``.

* ``static_default``: the fabric preset's own ECN setting (``configs/controller/static_default.yaml``).
* ``static_tuned``: the best single static setting of a grid search **on the train seeds**: every
  setting of the scenario's action templates (which include the preset's), applied alike to every
  controlled port, scored by the scenario's score metric averaged over the train seeds. What a
  careful operator gets from one well-tuned setting (the comparison ACC, Yan et al., SIGCOMM'21 §5,
  and PRED, Li et al., NSDI'25 §6, make against static ECN).
* ``oracle_phase``: for each test trace, in hindsight, the best grid setting per traffic phase
  (each grid setting's whole-trace run scored on the flows that start in the phase), applied by
  :class:`~ecngym.benchmark.oracle.PhaseScheduleController`, which switches at the phase
  boundaries, evaluated as a real run. A reference, never a competitor: its margin over
  ``static_tuned`` is the scenario's adaptivity headroom.
* ``random``: one of the scenario's templates drawn uniformly per action unit every interval
  (``configs/controller/random.yaml``, seeded from the episode's seed): the floor a learner must
  clear. It needs no search, so the references file does not hold it; the board plays it.

``ecngym benchmark references scenario=<name>`` (or ``suite=core|full``) runs the searches once per
scenario version and writes ``configs/suite/references/<name>.yaml`` with the command, the date,
the version, every grid score and the three references' scores on the test seeds. For a scenario
file of your own, ``scenario_file=<folder>/<name>.yaml`` writes ``<folder>/references/<name>.yaml``
(or into ``out=``), never into the package.
"""

from __future__ import annotations

import datetime
import os
import platform
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ecngym.benchmark.scenario_file import OWN_REFERENCE_FOLDER, ScenarioFileArgs
from ecngym.benchmark.suite import SCENARIO_DIR, SUITE_DIR, load_scenario, read_yaml
from ecngym.configs import CONFIG_DIR
from ecngym.error import ConfigError
from ecngym.units import parse_time_ns
from ecngym.validation import Text, Whole

REFERENCE_DIR = SUITE_DIR / "references"


def read_scenario(name: str, scenario_dir: Path | str | None = None) -> dict[str, Any]:
    """A scenario file (``configs/suite/scenarios/<name>.yaml``) as a dict, validated by the suite's loader.

    :func:`ecngym.benchmark.suite.load_scenario` checks every field (seeds disjoint, a known score,
    phases in rising order); the references also need the first phase to start at 0 and every
    phase to start inside the episode (of the env the searches run, :func:`~ecngym.benchmark.oracle.make_env`).

    Raises:
        ConfigError: Naming ``scenarios.<name>`` for a missing file, ``scenarios.<name>.<field>``
            for a bad field.
    """
    from ecngym.benchmark.oracle import make_env
    from ecngym.benchmark.suite import check_phases
    from ecngym.envs.view import EnvView

    scenario = load_scenario(name, scenario_dir)
    folder = Path(scenario_dir) if scenario_dir is not None else SCENARIO_DIR
    prefix = f"scenarios.{name}"
    data = read_yaml(folder / f"{name}.yaml", prefix)
    starts = phase_starts_ns(data)
    if starts[0] != 0:
        raise ConfigError(f"{prefix}.protocol.phases", f"got starts {starts} ns; the first phase starts at 0")
    env = make_env(data["env"])
    try:
        view = EnvView(env)
        interval_ns, steps = view.interval_ns, view.episode_steps
    finally:
        env.close()
    check_phases(scenario, interval_ns, steps)
    return data


def phase_starts_ns(scenario: dict[str, Any]) -> list[int]:
    """The phases' start times of a scenario (ns); one phase at 0 when it states none."""
    phases = scenario["protocol"].get("phases") or [{"name": "all", "start": "0ms"}]
    return [parse_time_ns(p["start"], "protocol.phases.start") for p in phases]


def grid_settings(scenario: dict[str, Any]) -> list[tuple[int, int, float]]:
    """The search grid: the scenario env's discrete action templates (the preset's setting among them).

    Raises:
        ConfigError: Naming ``scenarios.<name>.env.action.type`` if the action is not discrete.
    """
    from ecngym.benchmark.oracle import make_env
    from ecngym.envs.view import EnvView

    env = make_env(scenario["env"])
    try:
        view = EnvView(env)
        if view.action_type != "discrete":
            raise ConfigError(f"scenarios.{scenario['name']}.env.action.type", "the reference grid is the discrete "
                                                                               "templates; got a continuous action")
        return [(int(kmin), int(kmax), float(pmax)) for kmin, kmax, pmax in view.action_templates]
    finally:
        env.close()


def default_setting(scenario: dict[str, Any]) -> tuple[int, int, float]:
    """The fabric preset's own ECN setting on the scenario (``static_default``'s)."""
    from ecngym.baselines.static import StaticEcnController
    from ecngym.benchmark.oracle import make_env

    env = make_env(scenario["env"])
    try:
        return StaticEcnController("env_default").target(env)
    finally:
        env.close()


def _episode(job: tuple[dict[str, Any], Any, int, list[int], str, str]) -> dict[str, Any]:
    """One grid episode (a worker process's job): its score, per-phase scores, flow counts and wall time."""
    import time

    from ecngym.benchmark.oracle import phase_metric, run_controller, run_static

    env, what, seed, starts, score, second = job
    cpu0 = time.process_time()
    if isinstance(what, dict):
        from ecngym.baselines.registry import build_controller

        summary, flows, wall = run_controller(env, build_controller(what), seed)
    else:
        summary, flows, wall = run_static(env, what, seed)
    from ecngym.sim_backend.metrics import SIZE_BUCKETS

    done = flows[flows["finished"]]
    buckets = {name: int(((done["size_bytes"] >= lo) & (done["size_bytes"] < hi)).sum())
               for name, (lo, hi) in SIZE_BUCKETS.items()}
    return {"score": float(summary[score]), "second_axis": float(summary[second]),
            "phases": phase_metric(flows, starts, score), "flows_total": int(summary["flows_total"]),
            "flows_finished": int(summary["flows_finished"]), "finished_per_bucket": buckets,
            "wall_s": float(wall), "cpu_s": float(time.process_time() - cpu0)}


def _run_jobs(jobs: list[tuple[Any, ...]], processes: int) -> list[dict[str, Any]]:
    if processes <= 1:
        return [_episode(j) for j in jobs]
    with ProcessPoolExecutor(processes) as pool:
        return list(pool.map(_episode, jobs))


def _trace_hash(env_overrides: dict[str, Any], seed: int) -> str:
    """The trace hash of a scenario's episode with ``seed`` (what the oracle keys its choice by)."""
    from ecngym.benchmark.oracle import make_env

    env = make_env(env_overrides, episode_steps=None)
    try:
        return str(env.reset(seed=seed)[1]["trace_hash"])
    finally:
        env.close()


def _key(setting: Sequence[Any]) -> str:
    return f"{int(setting[0])}/{int(setting[1])}/{float(setting[2]):g}"


def compute_references(name: str, processes: int = 2, scenario_dir: Path | str | None = None,
                       test_seeds: int | None = None) -> dict[str, Any]:
    """Run the grid on the train and test seeds, pick ``static_tuned`` and ``oracle_phase``, evaluate the oracle.

    Args:
        name: The scenario.
        processes: Worker processes for the episodes.
        scenario_dir: Where the scenario files are (default: the package's).
        test_seeds: Use only the first this many test seeds (default: all).

    Returns:
        The references document (:func:`write_references` writes it).
    """
    sc = read_scenario(name, scenario_dir)
    proto = sc["protocol"]
    score, second = proto["score"], proto["second_axis"]
    lower = bool(proto.get("lower_is_better", True))
    best = min if lower else max
    starts = phase_starts_ns(sc)
    train = [int(s) for s in proto["train_seeds"]]
    test = [int(s) for s in proto["test_seeds"]][:test_seeds]
    grid = grid_settings(sc)
    default = default_setting(sc)
    env = sc["env"]
    jobs = [(env, list(g), seed, starts, score, second) for g in grid for seed in [*train, *test]]
    results = _run_jobs(jobs, processes)
    runs = {(_key(j[1]), j[2]): r for j, r in zip(jobs, results, strict=True)}

    train_scores = {_key(g): float(np.mean([runs[(_key(g), s)]["score"] for s in train])) for g in grid}
    tuned = best(grid, key=lambda g: train_scores[_key(g)])  # (ties: the first in template order)
    per_seed: dict[str, Any] = {}
    for seed in test:
        choice = []
        for i in range(len(starts)):
            scored = [g for g in grid if np.isfinite(runs[(_key(g), seed)]["phases"][i])]
            choice.append(list(best(scored, key=lambda g: runs[(_key(g), seed)]["phases"][i]) if scored else tuned))
        per_seed[str(seed)] = {"trace_hash": _trace_hash(env, seed), "settings": choice}
    oracle_cfg = oracle_controller(starts, per_seed)
    oracle_runs = _run_jobs([(env, oracle_cfg, seed, starts, score, second) for seed in test], processes)

    def test_block(rows: list[dict[str, Any]]) -> dict[str, Any]:
        return {"score": {str(s): r["score"] for s, r in zip(test, rows, strict=True)},
                "second_axis": {str(s): r["second_axis"] for s, r in zip(test, rows, strict=True)}}

    default_rows = [runs[(_key(default), s)] for s in test]
    tuned_rows = [runs[(_key(tuned), s)] for s in test]
    walls = [r["wall_s"] for r in results]
    cpus = [r["cpu_s"] for r in results]
    return {
        "scenario": name, "scenario_version": int(sc.get("version", 1)),
        "command": f"ecngym benchmark references scenario={name}",
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "ecngym_version": _version(), "machine": machine_stamp(),
        "score": score, "lower_is_better": lower, "second_axis": second,
        "phase_starts_ns": starts,
        "search": {"method": "grid", "settings": [list(g) for g in grid], "train_seeds": train,
                   "train_scores": train_scores,
                   "test_scores": {_key(g): {str(s): runs[(_key(g), s)]["score"] for s in test} for g in grid},
                   "test_phase_scores": {_key(g): {str(s): runs[(_key(g), s)]["phases"] for s in test} for g in grid}},
        "static_default": {"setting": list(default), "train_score": train_scores[_key(default)],
                           "test": test_block(default_rows)},
        "static_tuned": {"setting": list(tuned), "train_score": train_scores[_key(tuned)],
                         "test": test_block(tuned_rows)},
        "oracle_phase": {"phase_starts_ns": starts, "per_test_seed": per_seed, "test": test_block(oracle_runs)},
        "episode": {"flows_total_mean": float(np.mean([r["flows_total"] for r in results])),
                    "finished_per_bucket_min": {b: int(min(r["finished_per_bucket"][b] for r in default_rows))
                                                for b in default_rows[0]["finished_per_bucket"]},
                    "finished_per_bucket_mean": {b: float(np.mean([r["finished_per_bucket"][b] for r in default_rows]))
                                                 for b in default_rows[0]["finished_per_bucket"]},
                    "wall_s_median": float(np.median(walls)), "wall_s_max": float(np.max(walls)),
                    "cpu_s_median": float(np.median(cpus)), "cpu_s_max": float(np.max(cpus)),
                    "wall_note": f"wall and CPU seconds per episode (env build, run, flow records) over the "
                                 f"{len(walls)} grid episodes, {processes} worker processes, measured by this "
                                 f"command; CPU seconds approximate the wall time on one idle core"},
    }


def oracle_controller(starts_ns: Sequence[int], per_seed: dict[str, Any]) -> dict[str, Any]:
    """The Hydra config of the ``oracle_phase`` controller: per test trace (by hash), one setting per phase."""
    return {"_target_": "ecngym.benchmark.oracle.PhaseScheduleController", "name": "oracle_phase",
            "starts": [int(s) for s in starts_ns],
            "per_trace": {v["trace_hash"]: [list(x) for x in v["settings"]] for v in per_seed.values()}}


def _version() -> str:
    from ecngym import __version__

    return str(__version__)


def machine_stamp() -> str:
    """The machine the figures come from: host OS, Python, CPU count."""
    return f"{platform.system()} {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} CPUs"


def references_path(name: str, reference_dir: Path | str | None = None) -> Path:
    """Where a scenario's references file lives."""
    return (Path(reference_dir) if reference_dir is not None else REFERENCE_DIR) / f"{name}.yaml"


def write_references(doc: dict[str, Any], reference_dir: Path | str | None = None) -> Path:
    """Write a references document to ``<reference_dir>/<scenario>.yaml``; return the path."""
    path = references_path(doc["scenario"], reference_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Written by the command below; never by hand.\n" + yaml.safe_dump(doc, sort_keys=False))
    return path


def references_command(name: str, scenario_dir: Path | str | None = None,
                       reference_dir: Path | str | None = None) -> str:
    """The command that writes scenario ``name``'s references file (for messages).

    A shipped scenario's: ``scenario=<name>``; another folder's: ``scenario_file=<folder>/<name>.yaml``,
    with ``out=`` when its references are not beside the file.
    """
    folder = Path(scenario_dir) if scenario_dir is not None else SCENARIO_DIR
    if scenario_dir is None or (SCENARIO_DIR / f"{name}.yaml").is_file():
        return f"ecngym benchmark references scenario={name}"
    command = f"ecngym benchmark references scenario_file={folder / f'{name}.yaml'}"
    if reference_dir is not None and Path(reference_dir).absolute() != (folder / OWN_REFERENCE_FOLDER).absolute():
        command += f" out={reference_dir}"
    return command


def read_references(name: str, reference_dir: Path | str | None = None,
                    scenario_dir: Path | str | None = None) -> dict[str, Any]:
    """A scenario's references document, computed for the scenario's current version.

    Args:
        name: The scenario.
        reference_dir: Where the references files are (default: the package's ``configs/suite/references``).
        scenario_dir: Where the scenario files are (default: the package's ``configs/suite/scenarios``).

    Raises:
        ConfigError: Naming ``references.<name>`` if the file is missing (saying which command writes
            it), is not the references of ``name``, or was computed for another version of the
            scenario than its file's (both versions named: its settings and scores are stale);
            ``scenarios.<name>`` as :func:`~ecngym.benchmark.suite.load_scenario` raises.
    """
    path = references_path(name, reference_dir)
    field = f"references.{name}"
    command = f"`{references_command(name, scenario_dir, reference_dir)}`"
    if not path.is_file():
        raise ConfigError(field, f"no references file {path}; make it with {command}")
    doc = read_yaml(path, field)
    if not isinstance(doc, dict) or doc.get("scenario") != name:
        raise ConfigError(field, f"{path} is not the references of scenario {name!r}")
    version = load_scenario(name, scenario_dir).version
    if doc.get("scenario_version") != version:
        raise ConfigError(field, f"{path} was computed for version {doc.get('scenario_version')!r} of scenario {name}, "
                                 f"its file is version {version}: the references are stale; recompute them with "
                                 f"{command}")
    return doc


def reference_controllers(scenario_name: str, reference_dir: Path | str | None = None,
                          scenario_dir: Path | str | None = None) -> dict[str, dict[str, Any]]:
    """The scenario's references as Hydra-instantiable controller configs (with ``_target_``).

    Args:
        scenario_name: The scenario.
        reference_dir: Where the references files are (default: the package's ``configs/suite/references``).
        scenario_dir: Where the scenario files are (default: the package's ``configs/suite/scenarios``).

    Returns:
        ``{"static_default": ..., "static_tuned": ..., "oracle_phase": ..., "random": ...}``
        (:data:`ecngym.benchmark.scoring.REFERENCES`); references, never competitors.

    Raises:
        ConfigError: Naming ``references.<scenario_name>`` if its references file is missing or was
            computed for another version of the scenario (:func:`read_references`).
    """
    doc = read_references(scenario_name, reference_dir, scenario_dir)
    default = read_yaml(CONFIG_DIR / "controller" / "static_default.yaml", "controller.static_default")
    oracle = doc["oracle_phase"]
    return {
        "static_default": dict(default),
        "static_tuned": {"_target_": "ecngym.baselines.StaticEcnController",
                         "setting": list(doc["static_tuned"]["setting"]), "name": "static_tuned"},
        "oracle_phase": oracle_controller(oracle["phase_starts_ns"], oracle["per_test_seed"]),
        "random": dict(read_yaml(CONFIG_DIR / "controller" / "random.yaml", "controller.random")),
    }


def suite_scenarios(suite: str) -> list[str]:
    """The scenario names of ``configs/suite/<suite>.yaml``.

    Raises:
        ConfigError: Naming ``suite`` if there is no such file.
    """
    path = SUITE_DIR / f"{suite}.yaml"
    if not path.is_file():
        raise ConfigError("suite", f"got {suite!r}: no suite file {path}; suites: "
                                   f"{sorted(p.stem for p in SUITE_DIR.glob('*.yaml'))}")
    return list(read_yaml(path, "suite")["scenarios"])


class ReferencesArgs(ScenarioFileArgs):
    """The arguments of ``ecngym benchmark references`` (``key=value``).

    Args:
        scenario: Scenario names, comma-separated (or ``suite``, or ``scenario_file``).
        suite: Every scenario of this suite.
        processes: Worker processes for the episodes.
        out: The folder the references files go to (default: the package's ``configs/suite/references``;
            with ``scenario_file``, ``references/`` beside the file).
        test_seeds: Only the first this many test seeds (default: all).
    """

    scenario: Text | None = None
    suite: Text | None = None
    processes: Whole(1, 1024) = 2
    out: Text | None = None
    test_seeds: Whole(1) | None = None


def main(argv: Sequence[str] | None = None) -> int:
    """``ecngym benchmark references scenario=<name>[,...] | suite=<core|full> | scenario_file=<path> [...]``.

    Writes each scenario's references file (default: the package's ``configs/suite/references``;
    from a checkout, ``out=configs/suite/references`` to commit them; a scenario file's beside it)
    and prints one JSON line per scenario.

    Raises:
        ConfigError: Naming ``scenario`` when none or more than one of ``scenario``, ``suite`` and
            ``scenario_file`` is given, or the bad argument or scenario field.
    """
    import json

    from ecngym.benchmark.scenario_file import scenario_file_suite
    from ecngym.cli import key_value_arguments

    usage = ("ecngym benchmark references scenario=<name>[,...] | suite=<core|full> | scenario_file=<path> "
             "[processes=2] [out=DIR] [test_seeds=N]")
    args = key_value_arguments(ReferencesArgs, list(sys.argv[1:] if argv is None else argv), usage, main.__doc__)
    if args.scenario_file is not None:  # (with scenario or suite: refused by the model)
        suite = scenario_file_suite(args.scenario_file)
        names, scenario_dir, out = list(suite.scenarios), suite.scenario_dir, args.out or suite.reference_dir
        command = f"ecngym benchmark references scenario_file={args.scenario_file}"
    elif bool(args.scenario) == bool(args.suite):
        raise ConfigError("scenario", "give scenario=<name>, suite=<core|full> or scenario_file=<path> (one of them)")
    else:
        names = args.scenario.split(",") if args.scenario else suite_scenarios(args.suite)
        scenario_dir, out = None, args.out
        command = f"ecngym benchmark references suite={args.suite}" if args.suite else None
    for name in names:
        doc = compute_references(name, processes=args.processes, scenario_dir=scenario_dir, test_seeds=args.test_seeds)
        if command is not None:
            doc["command"] = command
        path = write_references(doc, out)
        print(json.dumps({"scenario": name, "file": str(path), "static_tuned": doc["static_tuned"]["setting"],
                          "wall_s_median": doc["episode"]["wall_s_median"]}))
    return 0
