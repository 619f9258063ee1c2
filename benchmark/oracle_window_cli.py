"""``ecngym benchmark oracle-window``: the window oracle on a scenario's test traces, beside its other references.

For each scenario and test seed: the beam search of :mod:`ecngym.benchmark.oracle_window` at each
beam width asked for (1 = greedy), then a table with the references file's ``S_default``,
``S_tuned`` and ``S_oracle_phase`` and the hindsight best constant on each trace. The **headroom**
is ``S_tuned - S_oracle_window`` per test seed (paired; mean with a 95% Student-t CI), and the
page counts the traces where the window oracle is worse than ``static_tuned`` or the phase oracle
(by construction it cannot be worse than a constant it evaluated; ``static_tuned`` is one of them,
so a count above zero is a bug, not noise). The candidates are the scenario's templates with
``static_tuned``'s setting and the settings ``oracle_phase`` plays joined to them where they lie past
the templates (the references' grid extension). Each scenario's schedules, scores and search cost are
written to ``<out_dir>/<scenario>.yaml``; the last printed line is the table as JSON.
``ecngym benchmark references ... oracle_window=2ms beam=1,2`` runs the same search
(:func:`search_test_traces`) and stores it in the references file instead.

Example::

    ecngym benchmark oracle-window suite=core test_seeds=3 window=2ms beam=1,2 markdown=docs/benchmarks/oracle-window.md
"""

from __future__ import annotations

import datetime
import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ecngym.error import ConfigError
from ecngym.validation import ConfigModel, Text, Whole

#: Where the window oracle's schedules are written by default.
DEFAULT_OUT_DIR = "outputs/oracle_window"


class OracleWindowArgs(ConfigModel):
    """The arguments of ``ecngym benchmark oracle-window`` (``key=value``).

    Args:
        suite: Every scenario of this suite (or ``scenario``).
        scenario: Scenario names, comma-separated (or ``suite``).
        window: Control window length ("2ms").
        beam: Beam widths, comma-separated (1 = greedy).
        test_seeds: The first this many test seeds of each scenario (default: all).
        processes: Branches simulated at once.
        out_dir: Folder of the per-scenario schedule files.
        markdown: Also write the page there.
    """

    suite: Text | None = None
    scenario: Text | None = None
    window: Text = "2ms"
    beam: Text = "1"
    test_seeds: Whole(1, 10_000) | None = None
    processes: Whole(1, 1024) = 2
    out_dir: Text = DEFAULT_OUT_DIR
    markdown: Text | None = None


def beam_widths(value: str | Sequence[int], field: str = "beam") -> list[int]:
    """The beam widths asked for: ``"1,2"`` (text) or a sequence of whole numbers, each >= 1, none twice.

    Raises:
        ConfigError: Naming ``field`` on an empty list, a width that is not a whole number >= 1, or one given twice.
    """
    if isinstance(value, str):
        try:
            out = [int(x) for x in value.split(",")]
        except ValueError:
            out = []
    else:
        out = [int(x) for x in value if isinstance(x, (int, np.integer)) and not isinstance(x, bool)]
        if len(out) != len(value):
            out = []
    if not out or any(b < 1 for b in out):
        raise ConfigError(field, f"got {value!r}; expected beam widths >= 1, comma-separated (e.g. 1,2)")
    if len(set(out)) != len(out):
        raise ConfigError(field, f"got {value!r}; give each beam width once")
    return out


def window_ns_of(window: Any, field: str = "window") -> int:
    """The control window's length in ns, from ``"2ms"`` or a whole number of ns.

    Raises:
        ConfigError: Naming ``field`` if it is not a positive duration.
    """
    from ecngym.units import parse_time_ns

    ns = parse_time_ns(window, field)
    if ns <= 0:
        raise ConfigError(field, f"got {window!r}; expected a positive duration such as '2ms'")
    return ns


def search_test_traces(env_overrides: Mapping[str, Any], tuned: Sequence[Any], more_settings: Sequence[Sequence[Any]],
                       score: str, lower: bool, seeds: Sequence[int], window: Any, beams: Sequence[int],
                       processes: int, label: str) -> dict[str, Any]:
    """The window oracle's search on each test trace, at each beam width (the shared part of both commands).

    The candidates are the scenario's templates with ``tuned`` (``static_tuned``'s setting) and
    ``more_settings`` (e.g. the settings ``oracle_phase`` plays) joined to them where they lie past
    the templates (the references' grid extension), so every one of them is a constant the search
    evaluates: the result is never worse than ``tuned`` held throughout on that trace.

    Args:
        env_overrides: The scenario's ``env`` mapping.
        tuned: ``static_tuned``'s ``[kmin_bytes, kmax_bytes, pmax]``.
        more_settings: More settings to play (bytes), joined to the templates like ``tuned``.
        score: The episode-summary metric optimised.
        lower: Whether lower is better.
        seeds: The test seeds (traces).
        window: The control window's length ("2ms" or ns).
        beams: Beam widths (1 = greedy); each is a search of its own.
        processes: Branches simulated at once.
        label: The progress bar's label.

    Returns:
        ``window`` (as given), ``window_ns``, ``window_steps``, ``windows`` (per episode), ``beams``,
        ``templates`` (the settings the schedules' indices refer to: :func:`schedule_env` makes the
        env), ``static_tuned_action`` and ``per_test_seed``: per seed the
        trace hash, the best constant in hindsight, ``static_tuned``'s score on the branch and per
        beam width the schedule (one action per window), score, cost and the best score per level.

    Raises:
        ConfigError: Naming ``window`` / ``beam`` on a bad value.
    """
    from tqdm import tqdm

    from ecngym.envs.branch import without_tqdm_monitor

    without_tqdm_monitor()  # its monitor thread would make every branch (a fork) unsafe

    from ecngym.benchmark.oracle import make_env
    from ecngym.benchmark.oracle_window import search_windows, window_steps_of
    from ecngym.envs.view import EnvView

    window_ns = window_ns_of(window)
    beams = beam_widths(list(beams))
    # static_tuned's setting may lie past the templates (the references' grid extension): it joins them
    env_cfg = schedule_env(env_overrides, [tuned, *more_settings])
    env = make_env(env_cfg)
    try:
        steps = window_steps_of(env, window_ns)
        interval_ns = int(EnvView(env).interval_ns)
        episode_steps = int(env.unwrapped.config.episode_steps)
        env.reset(seed=int(seeds[0]))
        tuned_action = tuple(int(x) for x in np.atleast_1d(EnvView(env).encode(*tuned)))
        templates = [[int(t[0]), int(t[1]), float(t[2])] for t in EnvView(env).action_templates]
    finally:
        env.close()
    per_seed: dict[str, Any] = {}
    for seed in tqdm(seeds, desc=f"oracle_window {label}", unit="trace", file=sys.stderr):
        row: dict[str, Any] = {"beams": {}}
        for beam in beams:
            env = make_env(env_cfg)
            try:
                r = search_windows(env, int(seed), steps, beam, score, lower, constants=[tuned_action],
                                   processes=processes)
                row["trace_hash"] = str(EnvView(env).trace_hash)
            finally:
                env.close()
            best_const = (min if lower else max)(r.constants.items(), key=lambda kv: kv[1])
            row["best_constant"] = {"action": list(best_const[0]), "score": best_const[1]}
            row["static_tuned_on_branch"] = r.constants.get(tuned_action)
            row["beams"][str(beam)] = {
                "score": r.score, "schedule": [list(a) for a in r.schedule],
                "rollouts": r.rollouts, "env_steps": r.env_steps, "cpu_s": round(r.cpu_s, 2),
                "wall_s": round(r.wall_s, 2), "best_per_level": r.levels}
        per_seed[str(seed)] = {"trace_hash": row.pop("trace_hash"), **row}
    return {"window": window, "window_ns": steps * interval_ns, "window_steps": steps,
            "windows": math.ceil(episode_steps / steps), "beams": beams, "templates": templates,
            "static_tuned_action": list(tuned_action), "per_test_seed": per_seed}


def schedule_env(env_overrides: Mapping[str, Any], settings: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """The scenario's env overrides with ``settings`` joined to its templates (those past them at the end).

    The window oracle searches, and its schedules replay, on this env: a schedule's action indices
    refer to its templates (the scenario's own, then the settings joined), which the oracle's
    record lists as ``templates``; passing those back gives the same env. The traffic is the
    scenario's (:func:`~ecngym.baselines.static.templates_overrides`).

    Args:
        env_overrides: The scenario's ``env`` mapping.
        settings: ``[kmin_bytes, kmax_bytes, pmax]`` settings to make playable.

    Returns:
        The env overrides (the scenario's, with the whole action config where settings were joined).
    """
    from ecngym.baselines.static import templates_overrides
    from ecngym.benchmark.oracle import make_env

    probe = make_env(env_overrides)
    try:
        return {**env_overrides, **templates_overrides(probe, settings)}
    finally:
        probe.close()


def scenario_oracle_window(name: str, window: str, beams: Sequence[int], test_seeds: int | None,
                           processes: int) -> dict[str, Any]:
    """Search the window oracle on a scenario's test traces (see the module doc).

    Returns:
        The scenario's document: per test seed the trace hash, the references' scores, the best
        constant, and per beam width the schedule (actions and settings), score and cost.
    """
    from ecngym.benchmark.references import read_references, read_scenario

    sc = read_scenario(name)
    refs = read_references(name)
    proto = sc["protocol"]
    score, lower = proto["score"], bool(proto.get("lower_is_better", True))
    seeds = [int(s) for s in proto["test_seeds"]][:test_seeds]
    found = search_test_traces(sc["env"], refs["static_tuned"]["setting"], phase_settings(refs), score, lower, seeds,
                               window, beams, processes, name)
    per_seed = {
        seed: {"static_default": refs["static_default"]["test"]["score"].get(seed),
               "static_tuned": refs["static_tuned"]["test"]["score"].get(seed),
               "oracle_phase": refs["oracle_phase"]["test"]["score"].get(seed), **row}
        for seed, row in found["per_test_seed"].items()}
    return {"scenario": name, "scenario_version": int(sc.get("version", 1)), "score": score,
            "lower_is_better": lower, "window": window, "window_steps": found["window_steps"], "beams": found["beams"],
            "templates": found["templates"], "static_tuned_action": found["static_tuned_action"],
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "per_test_seed": per_seed}


def phase_settings(refs: Mapping[str, Any]) -> list[list[Any]]:
    """Every setting ``oracle_phase`` plays on some test trace of a references document (in first-seen order)."""
    seen: dict[tuple[int, int, float], None] = {}
    for row in refs["oracle_phase"]["per_test_seed"].values():
        for s in row["settings"]:
            seen.setdefault((int(s[0]), int(s[1]), float(s[2])), None)
    return [list(s) for s in seen]


def summary_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per beam width: the scenario's means, the paired headroom and the bound checks."""
    from ecngym.benchmark.headroom import mean_ci

    sign = 1.0 if doc["lower_is_better"] else -1.0
    seeds = list(doc["per_test_seed"])
    rows = []
    for beam in doc["beams"]:
        per = [doc["per_test_seed"][s] for s in seeds]
        tuned = np.array([p["static_tuned"] for p in per], dtype=float)
        phase = np.array([p["oracle_phase"] for p in per], dtype=float)
        default = np.array([p["static_default"] for p in per], dtype=float)
        window = np.array([p["beams"][str(beam)]["score"] for p in per], dtype=float)
        const = np.array([p["best_constant"]["score"] for p in per], dtype=float)
        head = mean_ci(sign * (tuned - window))
        gap = float(np.mean(sign * (default - tuned)))
        rows.append({
            "scenario": doc["scenario"], "beam": int(beam), "window": doc["window"], "test_seeds": len(seeds),
            "S_default": float(default.mean()), "S_tuned": float(tuned.mean()),
            "S_best_constant": float(const.mean()), "S_oracle_phase": float(phase.mean()),
            "S_oracle_window": float(window.mean()),
            "headroom": head[0], "headroom_ci": [head[1], head[2]],
            "headroom_relative": head[0] / float(tuned.mean()),
            "headroom_normalized": head[0] / gap if gap else float("nan"),
            "worse_than_tuned": int(np.sum(sign * (window - tuned) > 0)),
            "worse_than_phase": int(np.sum(sign * (window - phase) > 0)),
            "cpu_s_per_trace": float(np.mean([p["beams"][str(beam)]["cpu_s"] for p in per])),
            "env_steps_per_trace": float(np.mean([p["beams"][str(beam)]["env_steps"] for p in per])),
        })
    return rows


INTRO = (
    "The window oracle (`oracle_window`) searches, in hindsight on each test trace, the best schedule of the "
    "scenario's templates per control window, on branches of the running simulation: state (queues, DCQCN "
    "rates, PFC) carries across windows as in a real run. Every schedule it scores is a complete run, and the "
    "constants of every template (and static_tuned's setting) are among them, so it is never worse than the "
    "best constant on that trace. S_default, S_tuned and S_oracle_phase are the references file's test runs "
    "(`configs/suite/references/`); S_best_constant is the best template held throughout on each trace "
    "(hindsight). **Headroom** = S_tuned - S_oracle_window per test seed (paired), mean and 95% Student-t CI; "
    "relative: over S_tuned; normalized: over the mean S_default - S_tuned. **worse than tuned / phase**: test "
    "traces where the window oracle scores worse than that reference (target 0).")


def add_table(page: Any, rows: list[dict[str, Any]]) -> None:
    """Add the window oracle's table to ``page``."""
    from rich.markup import escape
    from rich.table import Table

    table = Table()
    for column in ("scenario", "beam", "seeds", "S_default", "S_tuned", "S_best_const", "S_oracle_phase",
                   "S_oracle_window", "headroom [95% CI]", "rel.", "norm.", "worse than tuned / phase",
                   "CPU s / trace"):
        table.add_column(escape(column))
    for r in rows:
        ci = r["headroom_ci"]
        table.add_row(*(escape(str(c)) for c in (
            r["scenario"], r["beam"], r["test_seeds"], f"{r['S_default']:.3f}", f"{r['S_tuned']:.3f}",
            f"{r['S_best_constant']:.3f}", f"{r['S_oracle_phase']:.3f}", f"{r['S_oracle_window']:.3f}",
            f"{r['headroom']:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]", f"{100 * r['headroom_relative']:+.1f} %",
            f"{r['headroom_normalized']:+.2f}", f"{r['worse_than_tuned']} / {r['worse_than_phase']}",
            f"{r['cpu_s_per_trace']:.0f}")))
    page.add(table)


def main(argv: Sequence[str] | None = None) -> int:
    """``ecngym benchmark oracle-window``: search, write the schedules, print the table; last line JSON.

    Raises:
        ConfigError: On a bad argument (naming it), or neither / both of ``suite`` and ``scenario``.
    """
    from ecngym.benchmark.references import suite_scenarios
    from ecngym.cli import key_value_arguments
    from ecngym.files import check_output_path
    from ecngym.markdown_page import MarkdownPage, open_page

    argv = list(sys.argv[1:] if argv is None else argv)
    usage = ("ecngym benchmark oracle-window suite=<core|full> | scenario=<name>[,...] [window=2ms] [beam=1,2] "
             "[test_seeds=N] [processes=2] [out_dir=DIR] [markdown=FILE.md]")
    args = key_value_arguments(OracleWindowArgs, argv, usage, __doc__)
    if bool(args.suite) == bool(args.scenario):
        raise ConfigError("suite", "give suite=<core|full> or scenario=<name> (one of them)")
    window_ns_of(args.window)  # (refused now, not after the first search)
    beams = beam_widths(args.beam)
    names = args.scenario.split(",") if args.scenario else suite_scenarios(args.suite)
    out_dir = Path(check_output_path("out_dir", str(Path(args.out_dir) / "x"))).parent
    title, prog = "The window oracle: headroom with state carried", "ecngym benchmark oracle-window"
    stamped = [a for a in argv if not a.startswith("out_dir=")]  # (a folder of the machine it ran on)
    page = (open_page(args.markdown, title, prog, stamped, INTRO, field="markdown")
            or MarkdownPage(title, [*prog.split(), *stamped], INTRO))
    rows: list[dict[str, Any]] = []
    for name in names:
        doc = scenario_oracle_window(name, args.window, beams, args.test_seeds, args.processes)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{name}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))  # written as each finishes
        rows += summary_rows(doc)
    add_table(page, rows)
    print(page.render())
    if args.markdown:
        page.write()
    print(json.dumps(rows))
    return 0
