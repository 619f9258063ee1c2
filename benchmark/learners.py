"""``ecngym benchmark learners``: the learner table, scored as RL researchers score agents.

Every shipped checkpoint (:mod:`ecngym.benchmark.checkpoints`: scenario x learner x training seed)
plays every scored test seed of its scenario and of the scenario's held-out traffic family::

    ecngym benchmark learners suite=core jobs=2 markdown=docs/benchmarks/learners.md

Scores are normalized per (training seed x test seed) against the two static references, as on the
board (:mod:`ecngym.benchmark.scoring`): on the test seeds, against the stored references of the
scenario (``configs/suite/references``); on the held-out family, against ``static_default`` and
``static_tuned`` played on its seeds here, ``static_tuned`` being the setting tuned on the
in-distribution train seeds ([OURS]: the same information the learners get). Per learner and
scenario: the interquartile mean with its stratified-bootstrap 95 % CI and the probability of
improvement over ``static_tuned`` (rliable, :mod:`ecngym.benchmark.stats`), whether it beats
``static_tuned`` (CI above 1), the share of the adaptivity headroom it captures
((score − 1) / headroom, :mod:`ecngym.benchmark.headroom`), the training budget and cost, and
whether its policy depends on the state: the mutual information between its actions and the traffic
phase and between its actions and the queue (:mod:`ecngym.benchmark.adaptivity`), beside the
``random`` reference's, played on the same test seeds (a policy that plays one template is reported
as such, with the template). The learning curves (the trainer's reward over env steps,
mean and 95 % CI over training seeds) close the page. ``cache=DIR`` keeps each evaluation job's rows
in ``DIR`` (keyed by :func:`job_key`: a checkpoint's weights, the scenario version, the seeds, the
ecngym version), so a rerun, or the whole suite after one scenario, plays only what is missing.

``scenario_file=PATH`` scores them on a scenario file of your own instead
(:func:`~ecngym.benchmark.scenario_file.scenario_file_suite`): the shipped checkpoints of the shipped
scenario registered under its id play its test seeds and held-out family, normalized against its own
references (beside the file, or in ``reference_dir``).
"""

from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from rich.table import Table

from ecngym.benchmark.adaptivity import state_dependence
from ecngym.benchmark.scenario_file import ScenarioFileArgs
from ecngym.error import ConfigError
from ecngym.validation import Flag, Text, Whole

#: The families a checkpoint is scored on.
FAMILIES = ("test", "held_out")


class LearnerArgs(ScenarioFileArgs):
    """The arguments of ``ecngym benchmark learners`` (``key=value``).

    ``suite`` None: ``core`` (unless ``scenario_file``); ``reference_dir``: the folder of the
    references files (None: the package's; with ``scenario_file``, ``references/`` beside the file).
    """

    suite: Text | None = None
    reference_dir: Text | None = None
    jobs: Whole(1, 256) = 2
    reps: Whole(100, 1_000_000) = 500
    seed: Whole(0, 2**32 - 1) = 0
    checkpoints: Text | None = None
    held_out: Flag = True
    scenario: Text | None = None
    markdown: Text | None = None
    json_out: Text | None = None
    cache: Text | None = None


class ActionLog:
    """Wraps a controller: records each decision's actions, its time and the queue it saw."""

    def __init__(self, controller: Any) -> None:
        self.controller = controller
        self.name = controller.name
        #: per decision: (time ns, actions of every unit, controlled ports' mean queue bytes before it)
        self.records: list[tuple[int, np.ndarray, float]] = []

    def __getattr__(self, item: str) -> Any:
        return getattr(self.controller, item)

    def reset(self, env: Any) -> None:
        """Reset the controller and the log."""
        self.records = []
        self.controller.reset(env)

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """The controller's action, logged with the time it was taken and the queue of the interval before."""
        action = self.controller.act(observation, info)
        tel = info.get("telemetry")
        queue = (float(np.mean(np.asarray(tel["mean_queue_bytes"])[np.asarray(info["ports"])]))
                 if tel is not None and "ports" in info else float("nan"))
        self.records.append((int(info.get("time_ns", 0)), np.atleast_1d(np.asarray(action)).copy(), queue))
        return action


def _play(job: dict[str, Any]) -> list[dict[str, Any]]:
    """One controller on one family's seeds: the score, second axis and state dependence per seed."""
    import gymnasium as gym

    import ecngym.envs  # noqa: F401
    from ecngym.baselines.registry import build_controller
    from ecngym.benchmark.suite import load_scenario
    from ecngym.envs.for_controller import make_for_controller
    from ecngym.envs.view import EnvView
    from ecngym.results.record import measure_episode

    sc = load_scenario(job["scenario"], job.get("scenario_dir"))
    env_kwargs = sc.held_out_env() if job["family"] == "held_out" else dict(sc.env)
    controller = build_controller(job["controller_cfg"])
    logged = ActionLog(controller)
    env = make_for_controller(lambda extra: gym.make(sc.id, **{**env_kwargs, **extra}), controller)
    starts = [int(p.start) for p in sc.protocol.phases]
    view = EnvView(env)
    out = []
    try:
        for seed in job["seeds"]:
            episode = measure_episode(env, logged, seed)
            row = {"scenario": sc.name, "family": job["family"], "controller": job["name"], "agent": job["agent"],
                   "train_seed": job["train_seed"], "seed": int(seed),
                   "score": float(episode.summary[sc.protocol.score]),
                   "second": float(episode.summary.get(sc.protocol.second_axis, float("nan"))),
                   "trace_hash": view.trace_hash}
            if job["agent"] or job["name"] == "random":
                dep = state_dependence(logged.records, starts)
                row.update(mi_phase_bits=dep["mi_phase_bits"], mi_queue_bits=dep["mi_queue_bits"],
                           phase_modes=json.dumps(dep["phase_modes"]), distinct_actions=dep["distinct_actions"],
                           mode=json.dumps(dep["mode"]))
            out.append(row)
    finally:
        env.close()
    return out


def job_key(job: dict[str, Any]) -> str:
    """What one evaluation job's rows depend on, hashed.

    Args:
        job: One job of :func:`plan`.

    Returns:
        24 hex digits over its scenario (name, env id, version), family, seeds, controller (for a
        checkpoint: its weights' sha256) and the ecngym version.
    """
    import hashlib

    import ecngym
    from ecngym.benchmark.suite import load_scenario

    sc = load_scenario(job["scenario"], job.get("scenario_dir"))
    weights = None
    if job["agent"]:
        from ecngym.benchmark.checkpoints import load_card

        weights = load_card(job["controller_cfg"]["path"])[1]["weights_sha256"]
    what = {"scenario": [sc.name, sc.id, sc.version], "family": job["family"], "seeds": list(job["seeds"]),
            "name": job["name"], "controller": None if weights else job["controller_cfg"], "weights": weights,
            "ecngym": getattr(ecngym, "__version__", None)}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:24]


def _play_cached(job: dict[str, Any]) -> list[dict[str, Any]]:
    """:func:`_play`, its rows kept under ``job["cache"]`` when set: a rerun plays only what is missing."""
    cache = job.get("cache")
    if not cache:
        return _play(job)
    path = Path(cache) / f"{job['scenario']}-{job['family']}-{job['name'].replace('@', '-')}-{job_key(job)}.json"
    if path.is_file():
        return json.loads(path.read_text())
    rows = _play(job)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(rows))
    tmp.replace(path)  # (whole files only: a killed run leaves no half row)
    return rows


def checkpoint_dirs(suite: Any, scenario: str, root: Path | None) -> dict[str, list[Path]]:
    """Agent -> the shipped checkpoint folders that play ``scenario`` of ``suite`` (sorted by training seed).

    The scenario's own; for a scenario file of the user's, those of the shipped scenario registered
    under its id (:attr:`~ecngym.benchmark.suite.Suite.checkpoints_of`); none without one.
    """
    from ecngym.benchmark.checkpoints import shipped

    trained_on = suite.checkpoints_of.get(scenario)
    return {} if trained_on is None else shipped(trained_on.name, root)


def plan(suite: Any, root: Path | None, held_out: bool, only: str | None = None) -> list[dict[str, Any]]:
    """The evaluation jobs: every checkpoint on both families; the static references on the held-out family."""
    from ecngym.benchmark.references import reference_controllers

    jobs = []
    where = {"scenario_dir": str(suite.scenario_dir)}
    for name, sc in suite.scenarios.items():
        if sc.training is None or (only is not None and name != only):
            continue
        families = {"test": suite.test_seeds(name)}
        refs = reference_controllers(name, suite.reference_dir, suite.scenario_dir)
        if held_out and sc.held_out is not None:
            families["held_out"] = list(sc.held_out.test_seeds[:suite.spec.test_seeds])
            for ref in ("static_default", "static_tuned"):
                jobs.append({"scenario": name, "family": "held_out", "name": ref, "agent": None, "train_seed": None,
                             "controller_cfg": refs[ref], "seeds": families["held_out"], **where})
        # the random reference on the test seeds: the yardstick of the learners' state dependence
        jobs.append({"scenario": name, "family": "test", "name": "random", "agent": None, "train_seed": None,
                     "controller_cfg": refs["random"], "seeds": families["test"], **where})
        trained = set(suite.training_seeds(name))
        for agent, dirs in checkpoint_dirs(suite, name, root).items():
            for d in dirs:
                k = int(d.name[4:])
                if k not in trained:
                    continue
                cfg = {"_target_": "ecngym.benchmark.checkpoints.CheckpointController", "path": str(d),
                       "name": f"{agent}@{k}"}
                for family, seeds in families.items():
                    jobs.append({"scenario": name, "family": family, "name": f"{agent}@{k}", "agent": agent,
                                 "train_seed": k, "controller_cfg": cfg, "seeds": seeds, **where})
    return jobs


def reference_rows(suite: Any, only: str | None = None) -> pd.DataFrame:
    """``static_default`` / ``static_tuned`` / ``oracle_phase`` test-seed scores from the stored references."""
    from ecngym.benchmark.references import read_references

    rows = []
    for name, sc in suite.scenarios.items():
        if sc.training is None or (only is not None and name != only):
            continue
        doc = read_references(name, suite.reference_dir, suite.scenario_dir)
        for ref in ("static_default", "static_tuned", "oracle_phase"):
            for seed in suite.test_seeds(name):
                rows.append({"scenario": name, "family": "test", "controller": ref, "agent": None, "train_seed": None,
                             "seed": int(seed), "score": float(doc[ref]["test"]["score"][str(seed)]),
                             "second": float(doc[ref]["test"]["second_axis"][str(seed)])})
    return pd.DataFrame(rows)


def normalize(rows: pd.DataFrame, lower_is_better: bool) -> tuple[pd.Series, float]:
    """Normalized scores of one (scenario, family)'s rows against its references, and the reference gap.

    ``(S_default(seed) − S)/(mean S_default − mean S_tuned)`` for a lower-is-better score (the
    board's rule, :mod:`ecngym.benchmark.scoring`), paired per test seed.
    """
    sign = 1.0 if lower_is_better else -1.0
    ref = rows[rows["controller"].isin(["static_default", "static_tuned"])].pivot_table(
        index="seed", columns="controller", values="score")
    gap = float(sign * (ref["static_default"] - ref["static_tuned"]).mean())
    default = rows["seed"].map(ref["static_default"])
    return sign * (default - rows["score"]) / gap, gap


def _ci_text(values: np.ndarray) -> str:
    from ecngym.benchmark.board import fmt_ci
    from ecngym.results.ranking import confidence_interval

    values = values[np.isfinite(values)]
    return fmt_ci(float(values.mean()), confidence_interval(values)) if values.size else "—"


def summarize(rows: pd.DataFrame, suite: Any, reps: int, seed: int, root: Path | None) -> list[dict[str, Any]]:
    """One entry per (scenario, learner): scores per family, rliable aggregates, state dependence, cost."""
    from ecngym.benchmark.board import fmt_ci
    from ecngym.benchmark.checkpoints import load_card
    from ecngym.benchmark.headroom import scenario_headroom
    from ecngym.benchmark.stats import controller_aggregate

    out = []
    for name, sc in suite.scenarios.items():
        if sc.training is None or name not in set(rows["scenario"]):
            continue
        trained = set(rows.loc[rows["scenario"] == name, "train_seed"].dropna().astype(int))
        headroom = scenario_headroom(name, suite.reference_dir, suite.scenario_dir)["headroom_normalized"]
        cards = {a: [load_card(d)[1] for d in dirs if int(d.name[4:]) in trained]
                 for a, dirs in checkpoint_dirs(suite, name, root).items()}
        scenario_rows = rows[rows["scenario"] == name]
        random_rows = scenario_rows[scenario_rows["controller"] == "random"]
        per_family = {}
        for family in FAMILIES:
            fam = rows[(rows["scenario"] == name) & (rows["family"] == family)].copy()
            if fam.empty:
                continue
            fam["normalized"], gap = normalize(fam, sc.protocol.lower_is_better)
            per_family[family] = (fam, gap)
        for agent in cards:
            entry: dict[str, Any] = {"scenario": name, "agent": agent, "training_seeds": len(cards[agent])}
            for family, (fam, gap) in per_family.items():
                mine = fam[fam["agent"] == agent]
                tuned = fam[fam["controller"] == "static_tuned"]["normalized"].to_numpy(float)
                scores = mine["normalized"].to_numpy(float)
                entry[f"{family}_n"] = int(len(scores))
                entry[f"{family}_gap"] = gap
                if gap <= 0 or not np.isfinite(scores).all() or not len(scores):
                    entry[f"{family}_iqm"] = "no reference gap" if gap <= 0 else "—"
                    continue
                agg = controller_aggregate(f"{name}/{family}/{agent}", scores.reshape(-1, 1), [name],
                                           tuned.reshape(-1, 1), reps, seed)
                entry[f"{family}_mean"] = float(scores.mean())
                entry[f"{family}_iqm"] = fmt_ci(agg.iqm, agg.iqm_ci)
                entry[f"{family}_p_improve"] = fmt_ci(agg.p_improve, agg.p_improve_ci)
                entry[f"{family}_beats_tuned"] = bool(agg.iqm_ci[0] > 1.0)
                entry[f"{family}_raw"] = _ci_text(mine["score"].to_numpy(float))
                if family == "test":
                    entry["headroom_captured"] = ((agg.iqm - 1.0) / headroom if np.isfinite(headroom) and headroom > 0
                                                  else float("nan"))
                    for key in ("mi_phase_bits", "mi_queue_bits"):
                        entry[key] = float(mine[key].mean())
                        entry[f"random_{key}"] = (float(random_rows[key].mean()) if key in random_rows
                                                  and len(random_rows) else float("nan"))
                    modes = [json.loads(m) for m in mine["phase_modes"]]
                    entry["phase_dependent_share"] = float(np.mean([len(set(m)) > 1 for m in modes]))
                    entry["one_template"] = bool((mine["distinct_actions"] == 1).all())
                    entry["modes"] = sorted({json.dumps(json.loads(m)) for m in mine["mode"]})
            entry["budget_steps"] = cards[agent][0]["budget_steps"] if cards[agent] else None
            entry["train_wall_s"] = float(np.mean([c["training_cost"]["wall_s"] for c in cards[agent]]))
            entry["train_cpu_s"] = float(np.mean([c["training_cost"]["cpu_s"] for c in cards[agent]]))
            out.append(entry)
    return out


def _dependence_text(e: dict[str, Any]) -> str:
    if "mi_phase_bits" not in e:
        return "—"
    if e.get("one_template"):
        return f"one template (state-independent): template {', '.join(e.get('modes', []))}"
    return (f"MI(action; phase) {e['mi_phase_bits']:.2f} bits (random {e['random_mi_phase_bits']:.2f}), "
            f"MI(action; queue) {e['mi_queue_bits']:.2f} bits (random {e['random_mi_queue_bits']:.2f}); "
            f"mode changes with the phase in {e['phase_dependent_share']:.0%} of episodes")


def learner_table(entries: list[dict[str, Any]]) -> Table:
    """The learner table (one row per scenario x learner)."""
    table = Table(title="Learners: normalized score IQM [95% CI] over training seeds x test seeds "
                        "(static_default 0, static_tuned 1)",
                  caption="headroom captured = (IQM - 1) / the scenario's headroom (oracle_phase - "
                          "static_tuned): a large negative share is a learner below static_tuned on a scenario "
                          "with little headroom")
    for col in ("scenario", "learner", "runs", "test IQM", "P(> tuned)", "beats tuned", "headroom captured",
                "held-out IQM", "held-out P(> tuned)", "state dependence", "budget (env steps)",
                "train wall / CPU s"):
        table.add_column(col)
    for e in entries:
        captured = e.get("headroom_captured", float("nan"))
        runs = f"{e['training_seeds']} x {e.get('test_n', 0) // max(1, e['training_seeds'])}"
        table.add_row(e["scenario"], e["agent"], runs,
                      str(e.get("test_iqm", "—")), str(e.get("test_p_improve", "—")),
                      "yes" if e.get("test_beats_tuned") else "no",
                      f"{captured:.0%}" if np.isfinite(captured) else "—",
                      str(e.get("held_out_iqm", "—")), str(e.get("held_out_p_improve", "—")),
                      _dependence_text(e), str(e.get("budget_steps")),
                      f"{e['train_wall_s']:.0f} / {e['train_cpu_s']:.0f}")
    return table


#: The long run's flatness tolerance: a cycle mean within this share of the final one counts as flat [OURS].
FLAT_TOLERANCE = 0.02


def flattened_by(curve: pd.DataFrame, cycle_steps: int, tolerance: float = FLAT_TOLERANCE) -> int | None:
    """The env step from which a learning curve stays flat (the rule that set the training budget).

    The trainer's reward is averaged over one cycle of the train seeds (``cycle_steps``: every train
    trace once, so the traces' own differences cancel), ending at each point of the curve; the curve
    has flattened at the first point from which every later cycle mean lies within ``tolerance`` x
    |final cycle mean| of the final cycle mean [OURS].

    Args:
        curve: ``env_steps`` and ``reward`` columns (a checkpoint's ``curve.csv``).
        cycle_steps: Env steps of one cycle of the train seeds (train seeds x episode steps).
        tolerance: The share of the final cycle mean within which the curve counts as flat.

    Returns:
        The env step, or None when the curve is shorter than two cycles (too short to tell).
    """
    steps = curve["env_steps"].to_numpy(float)
    reward = curve["reward"].to_numpy(float)
    if len(steps) == 0 or steps[-1] < 2 * cycle_steps:
        return None
    points = [i for i in range(len(steps)) if steps[i] >= cycle_steps]
    means = np.array([reward[(steps > steps[i] - cycle_steps) & (steps <= steps[i])].mean() for i in points])
    within = np.abs(means - means[-1]) <= tolerance * abs(means[-1])
    first = len(points) - 1
    while first > 0 and within[first - 1]:
        first -= 1
    return int(steps[points[first]])


def curve_table(suite: Any, root: Path | None, only: str | None = None) -> Table | None:
    """Learning curves: the trainer's reward over env steps, mean [95% CI] over training seeds, at five points."""
    from ecngym.benchmark.checkpoints import CURVE_FILE
    from ecngym.results.ranking import confidence_interval

    table = Table(title="Learning curves: the trainer's own reward (mean [95% CI] over training seeds) at a "
                        "fraction of the budget")
    fractions = (0.2, 0.4, 0.6, 0.8, 1.0)
    for col in ("scenario", "learner", *(f"{f:.0%}" for f in fractions), "long run: steps, at 25% / 100%",
                "long run flat by (env steps)"):
        table.add_column(col)
    any_row = False
    for name, sc in suite.scenarios.items():
        if sc.training is None or (only is not None and name != only):
            continue
        for agent, dirs in checkpoint_dirs(suite, name, root).items():
            curves = [pd.read_csv(d / CURVE_FILE) for d in dirs if int(d.name[4:]) in suite.training_seeds(name)]
            if not curves:
                continue
            budget = sc.training.budget_steps
            cells = []
            for f in fractions:
                vals = np.array([np.interp(f * budget, c["env_steps"], c["reward"]) for c in curves])
                low, high = confidence_interval(vals)
                cells.append(f"{vals.mean():.3g} [{low:.3g}, {high:.3g}]" if np.isfinite(low) else f"{vals.mean():.3g}")
            long_path = dirs[0].parent / "long" / CURVE_FILE
            long, flat = "—", "—"
            if long_path.is_file():
                c = pd.read_csv(long_path)
                end = float(c["env_steps"].iloc[-1])
                long = f"{end:.0f}: {np.interp(end / 4, c['env_steps'], c['reward']):.3g} / {c['reward'].iloc[-1]:.3g}"
                at = flattened_by(c, len(sc.protocol.train_seeds) * int(sc.env["episode_steps"]))
                flat = "too short" if at is None else str(at)
            table.add_row(name, agent, *cells, long, flat)
            any_row = True
    return table if any_row else None


def _root() -> Path:
    from ecngym.benchmark.checkpoints import CHECKPOINT_DIR

    return CHECKPOINT_DIR


INTRO = ("Every shipped checkpoint (scenario x learner x training seed) plays the scenario's scored test seeds "
         "and its held-out traffic family's seeds. Normalized score: static_default 0, static_tuned 1 (the board's "
         "rule); on the held-out family static_tuned is the setting tuned on the in-distribution train seeds, the "
         "same information the learners get [OURS]. IQM, CIs and P(improvement) are rliable's, over training "
         "seeds x test seeds. 'headroom captured' = (IQM − 1) / the scenario's adaptivity headroom (oracle_phase − "
         "static_tuned, normalized); where that headroom is tiny (most v1 scenarios: 0.01-0.1 in normalized units) "
         "a learner a little below static_tuned reads as a large negative share (IQM 0.87 over a headroom of 0.01 "
         "is -1300 %): it says 'below static_tuned', scaled by how little there was to capture. State dependence: "
         "the mutual information (bits; plug-in with the Miller-Madow "
         "correction, one sample per decision and action unit) between the learner's action and the traffic phase, "
         "and between its action and the controlled ports' mean queue before the decision (in its quartiles), "
         "each beside the random reference's on the same test seeds (0 in expectation: its draws ignore the "
         "state); and in how many episodes its most frequent action changes with the phase. A policy that "
         "plays one template is named with it. The protocol, the budget and how to reproduce a checkpoint: "
         "docs/concepts/learning-agents.md. With cache=DIR, the wall time above counts only the episodes played by "
         "that run; the others were read from the cache (each keyed by the checkpoint's weights, seeds and version).")


def main(argv: list[str] | None = None) -> int:
    """``ecngym benchmark learners``: evaluate every checkpoint, print the learner table, write the page.

    Raises:
        ConfigError: On a bad argument or an unknown suite.
    """
    from rich.console import Console

    from ecngym.benchmark.scenario_file import scenario_file_suite
    from ecngym.benchmark.suite import load_suite
    from ecngym.cli import key_value_arguments
    from ecngym.markdown_page import open_page, page_console

    argv = list(sys.argv[1:] if argv is None else argv)
    usage = ("ecngym benchmark learners [suite=core | scenario_file=PATH] jobs=2 [scenario=NAME] [held_out=true] "
             "[cache=DIR] [reference_dir=DIR] markdown=PATH")
    args = key_value_arguments(LearnerArgs, argv, usage, __doc__)
    if args.scenario_file is not None:  # (with suite or scenario: refused by the model)
        suite = scenario_file_suite(args.scenario_file, reference_dir=args.reference_dir)
        title = f"Learners on scenario {suite.name}"
    else:
        suite = load_suite(args.suite or "core", reference_dir=args.reference_dir)
        title = f"Learners on the {suite.name} scenarios"
    page = open_page(args.markdown, title, "ecngym benchmark learners", argv, INTRO, field="markdown")
    console = page_console(page, width=220) if page is not None else Console(width=220)
    root = Path(args.checkpoints) if args.checkpoints else None
    if args.scenario is not None and args.scenario not in suite.scenarios:
        raise ConfigError("scenario", f"got {args.scenario!r}; suite {suite.name} has {list(suite.scenarios)}")
    jobs = plan(suite, root, args.held_out, args.scenario)
    for job in jobs:
        job["cache"] = args.cache
    if not any(j["agent"] for j in jobs):
        if args.scenario_file is not None:
            base = root or _root()
            have = sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []
            raise ConfigError("scenario_file", f"got {args.scenario_file!r}: no shipped checkpoint under {base} plays "
                                               "it: a scenario file plays the checkpoints of the shipped scenario "
                                               "registered under its id, and needs a training: block; keep the id "
                                               f"and training: of a scenario that has checkpoints ({have})")
        raise ConfigError("checkpoints", f"no shipped checkpoint of suite {suite.name}'s scenarios under "
                                         f"{root or _root()}; train them: ecngym benchmark train-learners")
    Console(stderr=True).print(f"{len(jobs)} evaluation jobs, {sum(len(j['seeds']) for j in jobs)} episodes, "
                               f"{args.jobs} process(es)")
    if args.jobs > 1:
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
            played = [r for rows in pool.map(_play_cached, jobs) for r in rows]
    else:
        played = [r for job in jobs for r in _play_cached(job)]
    rows = pd.concat([reference_rows(suite, args.scenario), pd.DataFrame(played)], ignore_index=True)
    entries = summarize(rows, suite, args.reps, args.seed, root)
    console.print(learner_table(entries))
    curves = curve_table(suite, root, args.scenario)
    if curves is not None:
        console.print(curves)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"entries": entries, "rows": rows.to_dict(orient="records")},
                                              indent=1, default=str))
    if page is not None:
        console.print(f"page: {page.write()}")
    return 0
