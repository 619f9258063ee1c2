"""The reference points of each benchmark scenario: the static settings, the phase oracle and ``random``.

* ``static_default``: the fabric preset's own ECN setting (``configs/controller/static_default.yaml``).
* ``static_tuned``: the best single static setting of a grid search **on the train seeds**: every
  setting of the scenario's action templates (which include the preset's), applied alike to every
  controlled port, scored by the scenario's score metric averaged over the train seeds. What a
  careful operator gets from one well-tuned setting (the comparison ACC, Yan et al., SIGCOMM'21 §5,
  and PRED, Li et al., NSDI'25 §6, make against static ECN). **The grid is not clipped**
  (:func:`extend_grid`): while the best setting has the grid's lowest (highest) Kmin, the grid is
  extended past that edge by the best setting with Kmin and Kmax halved (doubled), Pmax kept, and
  searched again, until the best is inside the grid, the next setting would cross a bound (Kmin
  below one full data packet, Kmax above the switch buffer) or :data:`MAX_GRID_EXTENSIONS`
  extensions were made. The extended settings are static settings like the templates (played by
  :class:`~ecngym.baselines.static.StaticEcnController`, which adds a setting to its env's
  templates), and they join the grid the other references use.
* ``static_tuned_per_role``: the best static setting **per switch role** (the switch layer of each
  controlled port: ``tor``; ``leaf`` / ``spine``; ``edge`` / ``agg`` / ``core``), on the train
  seeds, played by :class:`~ecngym.baselines.static.StaticPerLayerEcnController`. The product of
  the grid over the roles is too large to search, so it is a coordinate descent
  (:func:`coordinate_descent`) from ``static_tuned`` on every role: each round tries every grid
  setting on one role with the others held, keeps a strictly better one, and goes on to the next
  role, until a round changes nothing or :data:`MAX_ROLE_ROUNDS` rounds ran. It starts from
  ``static_tuned``, so on the train seeds it is never worse. A scenario whose controlled ports are
  all of one layer has one role: its file says so and holds ``static_tuned``'s setting and scores,
  searched nothing, and plays no extra reference.
* ``phase_tuned``: one setting per traffic phase (``protocol.phases``), **the same schedule on every
  trace**, chosen on the train seeds (the per-role descent with the phases as roles, from
  ``static_tuned`` in every phase: :func:`~ecngym.benchmark.reference_search.phase_tuned_reference`),
  played by :class:`~ecngym.benchmark.oracle.PhaseScheduleController`. What a controller could
  follow; its margin over ``static_tuned`` is the headroom a phase-aware controller could capture. A
  scenario of one phase holds ``static_tuned``'s setting and scores and plays no extra reference.
* ``oracle_phase``: for each test trace, in hindsight, the best grid setting per traffic phase
  (each grid setting's whole-trace run scored on the flows that start in the phase), applied by
  :class:`~ecngym.benchmark.oracle.PhaseScheduleController`, which switches at the phase
  boundaries, evaluated as a real run. A reference, never a competitor: its margin over
  ``static_tuned`` is the scenario's adaptivity headroom.
* ``oracle_window`` (with ``oracle_window=<length>``; off by default, as it costs a few dozen episodes
  per trace): for each test trace, in hindsight, the best schedule of settings per control window
  of that length, searched on branches of the running simulation with state carried across windows
  (:mod:`~ecngym.benchmark.oracle_window`, greedy and each ``beam=`` width), its branches
  ``processes`` at once. Its candidates include ``static_tuned``'s setting (joined to the templates
  when it lies past them), so on each trace it is never worse than ``static_tuned``. The file holds,
  per test seed and beam width, the score, the schedule (one action per window), its CPU seconds,
  and the window's length; per beam width, the median CPU seconds per trace (:func:`window_reference`).
* ``random``: one of the scenario's templates drawn uniformly per action unit every interval
  (``configs/controller/random.yaml``, seeded from the episode's seed): the floor a learner must
  clear. It needs no search, so the references file does not hold it; the board plays it.

``ecngym benchmark references scenario=<name>`` (or ``suite=core|full``) runs the searches once per
scenario version and writes ``configs/suite/references/<name>.yaml`` with the command, the date,
the version, the grid searched (its templates, edges and extension, and why the extension stopped),
every grid score and the references' scores on the test seeds. ``extend_grid=false`` and
``per_role=false`` / ``phase_tuned=false`` leave those searches out. Files written before them (the
suite v1's) hold neither ``search.extension`` nor ``static_tuned_per_role`` nor ``phase_tuned``;
everything that reads a file reads them as they are (their grid was the templates; no per-role or
phase-tuned reference); a file without ``oracle_window`` (every
suite v1 file) has no window oracle, and nothing rewrites it. For a scenario file of your own,
``scenario_file=<folder>/<name>.yaml`` writes ``<folder>/references/<name>.yaml`` (or into ``out=``),
never into the package.
"""

from __future__ import annotations

import copy
import datetime
import os
import platform
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from ecngym.benchmark.reference_search import (
    EXTENSION_STOPS,
    GRID_EXTENSION_FACTOR,
    MAX_GRID_EXTENSIONS,
    MAX_ROLE_ROUNDS,
    GridSearch,
    best_of,
    coordinate_descent,
    extend_grid,
    grid_bounds,
    grid_edges,
    per_role_controller,
    phase_tuned_controller,
    phase_tuned_reference,
    setting_key,
    switch_roles,
)
from ecngym.benchmark.scenario_file import OWN_REFERENCE_FOLDER, ScenarioFileArgs
from ecngym.benchmark.suite import SCENARIO_DIR, SUITE_DIR, load_scenario, read_yaml
from ecngym.configs import CONFIG_DIR
from ecngym.error import ConfigError
from ecngym.units import parse_time_ns
from ecngym.validation import Flag, Text, Whole

if TYPE_CHECKING:
    from ecngym.benchmark.oracle import Setting

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


def compute_references(name: str, processes: int = 2, scenario_dir: Path | str | None = None,
                       test_seeds: int | None = None, extend: bool = True, per_role: bool = True,
                       phase_tuned: bool = True,
                       max_extensions: int = MAX_GRID_EXTENSIONS,
                       max_role_rounds: int = MAX_ROLE_ROUNDS, oracle_window: str | int | None = None,
                       beams: str | Sequence[int] = (1,)) -> dict[str, Any]:
    """Search the static references on the train seeds, pick ``oracle_phase``, score them all on the test seeds.

    With ``oracle_window``, also search the window oracle on every test seed at each beam width
    (:func:`window_reference`).

    Args:
        name: The scenario.
        processes: Worker processes for the episodes.
        scenario_dir: Where the scenario files are (default: the package's).
        test_seeds: Use only the first this many test seeds (default: all).
        extend: Extend the grid past its edges (:func:`extend_grid`); else the grid is the templates.
        per_role: Search ``static_tuned_per_role`` (:func:`coordinate_descent`).
        phase_tuned: Search ``phase_tuned`` (:func:`phase_tuned_reference`).
        max_extensions: The most extensions of the grid.
        max_role_rounds: The most rounds of the per-role search.
        oracle_window: The window oracle's control window ("2ms" or ns), or ``None`` for none.
        beams: Its beam widths (1 = greedy): ``"1,2"`` or a sequence.

    Returns:
        The references document (:func:`write_references` writes it).

    Raises:
        ConfigError: Naming ``oracle_window`` (not a positive duration) or ``beam`` (not whole numbers
            >= 1, once each) before anything runs; ``scenarios.<name>[.<field>]`` as :func:`read_scenario`.
    """
    from ecngym.benchmark.oracle_window_cli import beam_widths, window_ns_of

    if oracle_window is not None:  # (refused before the searches, not after them)
        window_ns_of(oracle_window, "oracle_window")
        beams = beam_widths(beams, "beam")
    sc = read_scenario(name, scenario_dir)
    proto = sc["protocol"]
    score, second = proto["score"], proto["second_axis"]
    lower = bool(proto.get("lower_is_better", True))
    starts = phase_starts_ns(sc)
    train = [int(s) for s in proto["train_seeds"]]
    test = [int(s) for s in proto["test_seeds"]][:test_seeds]
    templates = grid_settings(sc)
    default = default_setting(sc)
    env = sc["env"]
    runs: dict[tuple[str, int], dict[str, Any]] = {}
    grid_runs: list[dict[str, Any]] = []  # every grid episode (the wall-time figures)

    def play(settings: Sequence[Setting], seeds: Sequence[int]) -> None:
        jobs = [(env, list(g), s, starts, score, second) for g in settings for s in seeds
                if (setting_key(g), s) not in runs]
        results = _run_jobs(jobs, processes)
        runs.update({(setting_key(j[1]), j[2]): r for j, r in zip(jobs, results, strict=True)})
        grid_runs.extend(results)

    def train_mean(g: Setting) -> float:
        return float(np.mean([runs[(setting_key(g), s)]["score"] for s in train]))

    def train_scored(settings: list[Setting]) -> list[float]:
        play(settings, train)
        return [train_mean(g) for g in settings]

    play(templates, [*train, *test])
    search = GridSearch(settings=list(templates), train_scores={setting_key(g): train_mean(g) for g in templates},
                        stopped="disabled")
    bounds = grid_bounds(sc) if extend else None
    if bounds is not None:
        search = extend_grid(templates, search.train_scores, train_scored, lower, *bounds, max_extensions)
    grid = search.settings
    train_scores = search.train_scores
    play(grid, test)  # the extensions on the test seeds (the templates ran there already)
    tuned = best_of(grid, [train_scores[setting_key(g)] for g in grid], lower)  # (ties: the first in grid order)

    per_seed: dict[str, Any] = {}
    for seed in test:
        choice = []
        for i in range(len(starts)):
            phase = [runs[(setting_key(g), seed)]["phases"][i] for g in grid]
            scored = [(g, x) for g, x in zip(grid, phase, strict=True) if np.isfinite(x)]
            choice.append(list(best_of([g for g, _ in scored], [x for _, x in scored], lower) if scored else tuned))
        per_seed[str(seed)] = {"trace_hash": _trace_hash(env, seed), "settings": choice}
    oracle_cfg = oracle_controller(starts, per_seed)
    oracle_runs = _run_jobs([(env, oracle_cfg, seed, starts, score, second) for seed in test], processes)

    def test_block(rows: list[dict[str, Any]]) -> dict[str, Any]:
        return {"score": {str(s): r["score"] for s, r in zip(test, rows, strict=True)},
                "second_axis": {str(s): r["second_axis"] for s, r in zip(test, rows, strict=True)}}

    def per_test_seed(field: str) -> dict[str, dict[str, Any]]:
        """Every grid setting's ``field`` (score or per-phase scores) per test seed."""
        return {setting_key(g): {str(s): runs[(setting_key(g), s)][field] for s in test} for g in grid}

    default_rows = [runs[(setting_key(default), s)] for s in test]
    tuned_rows = [runs[(setting_key(tuned), s)] for s in test]
    doc: dict[str, Any] = {
        "scenario": name, "scenario_version": int(sc.get("version", 1)),
        "command": " ".join([f"ecngym benchmark references scenario={name}",
                             *(["extend_grid=false"] if not extend else []),
                             *(["per_role=false"] if not per_role else []),
                             *(["phase_tuned=false"] if not phase_tuned else []),
                             *([f"oracle_window={oracle_window}", f"beam={','.join(map(str, beams))}"]
                               if oracle_window is not None else [])]),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "ecngym_version": _version(), "machine": machine_stamp(),
        "score": score, "lower_is_better": lower, "second_axis": second,
        "phase_starts_ns": starts,
        "search": {"method": "grid", "settings": [list(g) for g in grid], "train_seeds": train,
                   "train_scores": train_scores,
                   "test_scores": per_test_seed("score"), "test_phase_scores": per_test_seed("phases"),
                   "templates": [list(g) for g in templates],
                   "edges": {"kmin_low_bytes": min(int(g[0]) for g in grid),
                             "kmin_high_bytes": max(int(g[0]) for g in grid),
                             "tuned_on": grid_edges(tuned, grid)},
                   "extension": _extension_record(search, bounds, max_extensions)},
        "static_default": {"setting": list(default), "train_score": train_scores[setting_key(default)],
                           "test": test_block(default_rows)},
        "static_tuned": {"setting": list(tuned), "train_score": train_scores[setting_key(tuned)],
                         "test": test_block(tuned_rows)},
    }
    if per_role:
        doc["static_tuned_per_role"] = _per_role_reference(sc, grid, tuned, train_scores[setting_key(tuned)], train,
                                                           test, lower, processes, max_role_rounds,
                                                           test_block(tuned_rows))
    if phase_tuned:
        phases = [str(p["name"]) for p in proto.get("phases") or [{"name": "all"}]]
        doc["phase_tuned"] = phase_tuned_reference(
            phases, starts, grid, tuned, train_scores[setting_key(tuned)], test_block(tuned_rows),
            lambda cfgs, seeds: _run_jobs([(env, c, s, starts, score, second) for c in cfgs for s in seeds], processes),
            train, test, lower, f"scenarios.{name}", max_role_rounds)
    doc["oracle_phase"] = {"phase_starts_ns": starts, "per_test_seed": per_seed, "test": test_block(oracle_runs)}
    if oracle_window is not None:
        doc["oracle_window"] = window_reference(sc, tuned, per_seed, test, oracle_window, list(beams), processes)
    walls = [r["wall_s"] for r in grid_runs]
    cpus = [r["cpu_s"] for r in grid_runs]
    doc["episode"] = {
        "flows_total_mean": float(np.mean([r["flows_total"] for r in grid_runs])),
        "finished_per_bucket_min": {b: int(min(r["finished_per_bucket"][b] for r in default_rows))
                                    for b in default_rows[0]["finished_per_bucket"]},
        "finished_per_bucket_mean": {b: float(np.mean([r["finished_per_bucket"][b] for r in default_rows]))
                                     for b in default_rows[0]["finished_per_bucket"]},
        "wall_s_median": float(np.median(walls)), "wall_s_max": float(np.max(walls)),
        "cpu_s_median": float(np.median(cpus)), "cpu_s_max": float(np.max(cpus)),
        "wall_note": f"wall and CPU seconds per episode (env build, run, flow records) over the "
                     f"{len(walls)} grid episodes, {processes} worker processes, measured by this "
                     f"command; CPU seconds approximate the wall time on one idle core"}
    return doc


def window_reference(sc: dict[str, Any], tuned: Setting, phase_per_seed: dict[str, Any], test: list[int],
                     window: str | int, beams: list[int], processes: int) -> dict[str, Any]:
    """The references file's ``oracle_window``: the window oracle searched on every test seed, per beam width.

    The search is :func:`~ecngym.benchmark.oracle_window_cli.search_test_traces` (the one ``ecngym
    benchmark oracle-window`` runs), its branches ``processes`` at once; its candidates are the
    templates with ``static_tuned``'s setting and ``oracle_phase``'s settings joined where they lie
    past them (the grid extension), so on every trace it is never worse than ``static_tuned``. Per
    test seed the file holds, per beam width, the score, the schedule (one action per window,
    indices into ``templates``), the CPU and wall seconds and the rollouts; per beam width the
    median CPU seconds per trace.

    Args:
        sc: The scenario (its file's dict).
        tuned: ``static_tuned``'s setting.
        phase_per_seed: ``oracle_phase``'s ``per_test_seed`` (its settings join the candidates).
        test: The test seeds.
        window: The control window ("2ms" or ns).
        beams: Beam widths (1 = greedy).
        processes: Branches simulated at once.

    Returns:
        The file's ``oracle_window`` block.
    """
    from ecngym.benchmark.oracle_window_cli import phase_settings, search_test_traces

    proto = sc["protocol"]
    found = search_test_traces(sc["env"], tuned, phase_settings({"oracle_phase": {"per_test_seed": phase_per_seed}}),
                               proto["score"], bool(proto.get("lower_is_better", True)), test, window, beams,
                               processes, str(sc.get("name", "")))
    rows = found["per_test_seed"]
    cost = {}
    for b in found["beams"]:
        cpu = [rows[str(s)]["beams"][str(b)]["cpu_s"] for s in test]
        wall = [rows[str(s)]["beams"][str(b)]["wall_s"] for s in test]
        cost[str(b)] = {"cpu_s_per_trace_median": float(np.median(cpu)), "cpu_s_per_trace_max": float(np.max(cpu)),
                        "wall_s_per_trace_median": float(np.median(wall))}
    return {"method": f"beam search over the settings per control window of {window} on branches of the running "
                      f"simulation, state carried across windows; each prefix scored by a rollout (its last setting "
                      f"held to the end); the constants of every setting are among the rollouts "
                      f"(ecngym.benchmark.oracle_window)",
            **found, "processes": processes,
            "cost": cost,
            "cost_note": f"CPU seconds per test trace of each search (the driver's and every branch's own), median "
                         f"and max over the {len(test)} test seeds; wall seconds with {processes} branches at once"}


def _extension_record(search: GridSearch, bounds: tuple[int, int] | None, max_extensions: int) -> dict[str, Any]:
    """The references file's ``search.extension``: whether and how far the grid was extended, and why it stopped."""
    out: dict[str, Any] = {"enabled": bounds is not None, "extended": bool(search.added),
                           "stopped": search.stopped, "why": EXTENSION_STOPS[search.stopped]}
    if bounds is not None:
        out.update({"factor": GRID_EXTENSION_FACTOR, "max_extensions": max_extensions,
                    "kmin_floor_bytes": bounds[0], "kmax_ceiling_bytes": bounds[1], "added": search.added})
    return out


def _per_role_reference(sc: dict[str, Any], grid: list[Setting], tuned: Setting, tuned_score: float,
                        train: list[int], test: list[int], lower: bool, processes: int, max_rounds: int,
                        tuned_test: dict[str, Any]) -> dict[str, Any]:
    """The references file's ``static_tuned_per_role``: searched on the train seeds, played on the test seeds."""
    roles = switch_roles(sc)
    if len(roles) == 1:  # one role: the per-role setting is the single setting, found already
        return {"roles": roles, "searched": False, "same_as": "static_tuned",
                "note": f"the controlled ports are all of one switch layer ({roles[0]}): static_tuned is the "
                        f"per-role setting; nothing searched, no extra reference played",
                "setting": {roles[0]: list(tuned)}, "train_score": tuned_score, "test": copy.deepcopy(tuned_test)}
    proto = sc["protocol"]
    score, second, starts, env = proto["score"], proto["second_axis"], phase_starts_ns(sc), sc["env"]

    def scored(assignments: list[dict[str, Setting]], seeds: list[int]) -> list[dict[str, Any]]:
        jobs = [(env, per_role_controller(a), s, starts, score, second) for a in assignments for s in seeds]
        return _run_jobs(jobs, processes)

    def train_scored(assignments: list[dict[str, Setting]]) -> list[float]:
        rows = scored(assignments, train)
        n = len(train)
        return [float(np.mean([r["score"] for r in rows[i * n:(i + 1) * n]])) for i in range(len(assignments))]

    found = coordinate_descent(roles, grid, tuned, tuned_score, train_scored, lower, max_rounds)
    test_rows = scored([found.setting], test)
    return {"roles": roles, "searched": True,
            "method": f"coordinate descent over the roles from static_tuned on every role: each round tries every "
                      f"grid setting ({len(grid)}) on one role with the others held and keeps a strictly better "
                      f"one, until a round changes nothing or {max_rounds} rounds ran (the product of "
                      f"{len(grid)}^{len(roles)} per-role settings is not searched)",
            "start": "static_tuned", "max_rounds": max_rounds, "rounds": found.rounds, "stopped": found.stopped,
            "moves": found.moves, "settings_scored": found.evaluated,
            "setting": {r: list(found.setting[r]) for r in roles}, "train_score": found.train_score,
            "test": {"score": {str(s): r["score"] for s, r in zip(test, test_rows, strict=True)},
                     "second_axis": {str(s): r["second_axis"] for s, r in zip(test, test_rows, strict=True)}}}


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
        (:data:`ecngym.benchmark.scoring.REFERENCES`), with ``static_tuned_per_role`` and ``phase_tuned`` only
        where the file holds a searched one (:data:`~ecngym.benchmark.scoring.OPTIONAL_REFERENCES`: a file
        written before it, or of a scenario with one switch role, has none); references, never
        competitors.

    Raises:
        ConfigError: Naming ``references.<scenario_name>`` if its references file is missing or was
            computed for another version of the scenario (:func:`read_references`).
    """
    doc = read_references(scenario_name, reference_dir, scenario_dir)
    default = read_yaml(CONFIG_DIR / "controller" / "static_default.yaml", "controller.static_default")
    oracle = doc["oracle_phase"]
    out = {
        "static_default": dict(default),
        "static_tuned": {"_target_": "ecngym.baselines.StaticEcnController",
                         "setting": list(doc["static_tuned"]["setting"]), "name": "static_tuned"},
    }
    per_role = doc.get("static_tuned_per_role")
    if isinstance(per_role, dict) and per_role.get("searched"):
        out["static_tuned_per_role"] = per_role_controller(per_role["setting"])
    phased = doc.get("phase_tuned")
    if isinstance(phased, dict) and phased.get("searched"):
        out["phase_tuned"] = phase_tuned_controller(phased["phase_starts_ns"], phased["schedule"])
    out["oracle_phase"] = oracle_controller(oracle["phase_starts_ns"], oracle["per_test_seed"])
    out["random"] = dict(read_yaml(CONFIG_DIR / "controller" / "random.yaml", "controller.random"))
    return out


def window_means(doc: dict[str, Any]) -> dict[str, float] | None:
    """The window oracle's mean test score per beam width in a references document (``None`` where it holds none)."""
    block = doc.get("oracle_window")
    if not isinstance(block, dict):
        return None
    rows = block["per_test_seed"].values()
    return {str(b): float(np.mean([r["beams"][str(b)]["score"] for r in rows])) for b in block["beams"]}


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
        extend_grid: Extend the grid past the edge ``static_tuned`` is on (:func:`extend_grid`).
        per_role: Search ``static_tuned_per_role`` (:func:`coordinate_descent`).
        phase_tuned: Search ``phase_tuned``, one setting per phase for every trace (:func:`phase_tuned_reference`).
        oracle_window: Also search the window oracle on every test seed with windows this long ("2ms");
            off by default (it costs a few dozen episodes per trace: :func:`window_reference`).
        beam: The window oracle's beam widths, comma-separated (default 1, greedy); only with ``oracle_window``.
    """

    scenario: Text | None = None
    suite: Text | None = None
    processes: Whole(1, 1024) = 2
    out: Text | None = None
    test_seeds: Whole(1) | None = None
    extend_grid: Flag = True
    per_role: Flag = True
    phase_tuned: Flag = True
    oracle_window: Text | None = None
    beam: Text | None = None


def main(argv: Sequence[str] | None = None) -> int:
    """``ecngym benchmark references scenario=<name>[,...] | suite=<core|full> | scenario_file=<path> [...]``.

    Its keys: ``processes=2``, ``out=DIR``, ``test_seeds=N``, ``extend_grid=true``, ``per_role=true``,
    ``phase_tuned=true``, ``oracle_window=2ms`` and ``beam=1,2`` (the window oracle; off without ``oracle_window``)
    (:class:`ReferencesArgs`).

    Writes each scenario's references file (default: the package's ``configs/suite/references``;
    from a checkout, ``out=configs/suite/references`` to commit them; a scenario file's beside it)
    and prints one JSON line per scenario. A published suite's files are frozen: write new ones for a
    new scenario version.

    Raises:
        ConfigError: Naming ``scenario`` when none or more than one of ``scenario``, ``suite`` and
            ``scenario_file`` is given, ``beam`` given without ``oracle_window``, or the bad argument
            or scenario field.
    """
    import json

    from ecngym.benchmark.oracle_window_cli import beam_widths, window_ns_of
    from ecngym.benchmark.scenario_file import scenario_file_suite
    from ecngym.cli import key_value_arguments

    usage = ("ecngym benchmark references scenario=<name>[,...] | suite=<core|full> | scenario_file=<path> "
             "[processes=2] [out=DIR] [test_seeds=N] [extend_grid=true|false] [per_role=true|false] "
             "[phase_tuned=true|false] [oracle_window=2ms [beam=1,2]]")
    args = key_value_arguments(ReferencesArgs, list(sys.argv[1:] if argv is None else argv), usage, main.__doc__)
    if args.oracle_window is None and args.beam is not None:
        raise ConfigError("beam", f"got {args.beam!r} without oracle_window; give oracle_window=<length> (e.g. 2ms) "
                                  "to search the window oracle, or leave beam out")
    window: dict[str, Any] = {}
    if args.oracle_window is not None:  # (refused now, not after the first scenario's searches)
        window = {"oracle_window": args.oracle_window, "beams": beam_widths(args.beam or "1", "beam")}
        window_ns_of(args.oracle_window, "oracle_window")
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
        doc = compute_references(name, processes=args.processes, scenario_dir=scenario_dir,
                                 test_seeds=args.test_seeds, extend=args.extend_grid, per_role=args.per_role,
                                 phase_tuned=args.phase_tuned,
                                 **window)
        if command is not None:
            doc["command"] = command
        path = write_references(doc, out)
        per_role = doc.get("static_tuned_per_role") or {}
        print(json.dumps({"scenario": name, "file": str(path), "static_tuned": doc["static_tuned"]["setting"],
                          "grid_extension": doc["search"]["extension"]["stopped"],
                          "static_tuned_per_role": per_role.get("setting"),
                          "phase_tuned": (doc.get("phase_tuned") or {}).get("schedule"),
                          "oracle_window": window_means(doc),
                          "wall_s_median": doc["episode"]["wall_s_median"]}))
    return 0
