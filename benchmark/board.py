"""The suite board: which stored episodes count, their scores, the suite aggregates, the terminal tables.

For each scenario of the suite, the rows that count are the ``run`` episodes of that scenario on
its scored test seeds, measured on the scenario config of its latest ``static_default`` row
(normalization is only meaningful against references on the same scenario: rows of another config
are listed as refused), the latest row per (controller, seed). A learner that observes, is rewarded
or monitors its own way (its env's ``observation``, ``reward``, ``interval_short``) runs the same
scenario: its rows count when their :func:`~ecngym.results.record.traffic_identity` is
``static_default``'s and each of its episodes ran ``static_default``'s trace at that seed.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from rich.console import Console

from ecngym.benchmark.scoring import REFERENCES, ScenarioScores, normalized_matrices, score_scenario
from ecngym.benchmark.stats import DEFAULT_REPS, Aggregate, aggregates
from ecngym.benchmark.suite import Suite
from ecngym.results.ranking import Ranking, rank
from ecngym.results.store import ResultStore, StoreError
from ecngym.results.terminal import Column, fit_tables, print_tables

#: Controller classes that apply one setting all episode (the rest are dynamic: they adapt).
STATIC_CLASSES = ("StaticEcnController", "StaticPerLayerEcnController", "StaticAqmController")


@dataclass
class SuiteBoard:
    """Everything the terminal board and the page show."""

    suite: Suite
    scores: list[ScenarioScores]
    aggregates: dict[str, Aggregate]
    rankings: dict[str, list[Ranking]]
    rows: dict[str, pd.DataFrame]
    dynamic: set[str]
    refused: list[str] = field(default_factory=list)

    def sentence(self, scores: ScenarioScores) -> str:
        """The plain answer for one scenario: does a dynamic controller beat ``static_tuned``?

        Read from the paired per-seed differences S_tuned − S_c (:mod:`ecngym.benchmark.scoring`).
        """
        prefix = ""
        if scores.no_reference_gap:
            why = (f"its references are missing ({', '.join(scores.missing_references)})"
                   if scores.missing_references else "static_tuned does not beat static_default clearly "
                                                     "(paired 95% CI of their difference includes 0)")
            prefix = f"no normalized scores ({why}: raw {scores.score} only, no_reference_gap); "
            if scores.missing_references and "static_tuned" in scores.missing_references:
                return f"{scores.scenario}: {prefix.rstrip('; ')}."
        winners = scores.dynamic_beats_tuned(self.dynamic)
        unit = f"raw {scores.score}"
        if winners:
            shown = ", ".join(f"{c.controller} (Δ {c.delta_tuned_mean:+.3g} [{c.delta_tuned_ci[0]:+.3g}, "
                              f"{c.delta_tuned_ci[1]:+.3g}])" for c in scores.controllers if c.controller in winners)
            return (f"{scores.scenario}: {prefix}yes: {shown} beat static_tuned (paired Δ = S_tuned − S_c in "
                    f"{unit}, 95% CI above 0).")
        best = next((c for c in sorted(scores.controllers, key=lambda c: -_finite_or(c.delta_tuned_mean))
                     if c.controller in self.dynamic and not c.reference and math.isfinite(c.delta_tuned_mean)),
                    None)
        detail = (f"; the closest dynamic controller, {best.controller}, has Δ {best.delta_tuned_mean:+.3g} "
                  f"[{best.delta_tuned_ci[0]:+.3g}, {best.delta_tuned_ci[1]:+.3g}] ({unit}; better on "
                  f"{best.wins_over_tuned[0]} of {best.wins_over_tuned[1]} seeds)" if best else "")
        # a static competitor (another fixed setting or a fixed in-switch AQM policy) can beat static_tuned too:
        # the ▲ in its cell, said here so the sentence and the table agree
        static = [c for c in scores.controllers if c.controller not in self.dynamic and not c.reference
                  and c.controller != "static_tuned" and c.beats_tuned]
        also = ("; static controller(s) that do beat it: " + ", ".join(
            f"{c.controller} (Δ {c.delta_tuned_mean:+.3g} [{c.delta_tuned_ci[0]:+.3g}, {c.delta_tuned_ci[1]:+.3g}])"
            for c in static) + ": one fixed setting or in-switch policy outside static_tuned's grid") if static else ""
        return (f"{scores.scenario}: {prefix}no dynamic controller beats static_tuned (none has a paired 95% CI "
                f"of S_tuned − S_c above 0){detail}{also}.")


def _finite_or(x: float, default: float = -math.inf) -> float:
    return x if math.isfinite(x) else default


def _is_static(params: str) -> bool:
    try:
        target = str(json.loads(params).get("_target_", ""))
    except (ValueError, AttributeError):
        return False
    return target.rsplit(".", 1)[-1] in STATIC_CLASSES


def select_rows(episodes: pd.DataFrame, suite: Suite) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """The rows that count per scenario, and one sentence per row set left out.

    Raises:
        StoreError: If no scenario of the suite has a stored ``static_default`` row.
    """
    out, refused = {}, []
    runs = episodes[episodes["command"] == "run"]
    for name in suite.scenarios:
        seeds = suite.test_seeds(name)
        rows = runs[(runs["scenario"] == name) & runs["seed"].isin(seeds)].sort_values("created_at", kind="stable")
        defaults = rows[rows["controller"] == "static_default"]
        if defaults.empty:
            refused.append(f"{name}: no static_default row on its test seeds: not scored")
            continue
        shash = defaults["scenario_hash"].iloc[-1]
        same = _same_scenario(rows, defaults)
        other = rows[~same]
        if len(other):
            refused.append(f"{name}: {len(other)} row(s) of another scenario config than static_default's "
                           f"({shash[:8]}) left out: {sorted(set(other['controller']))}")
        rows = rows[same]
        # one parameter set per controller name: its latest (said, so that a retrained agent under an old
        # name does not replace the earlier one silently)
        latest = rows.groupby("controller")["controller_hash"].last()
        for controller, sets in rows.groupby("controller")["controller_hash"].nunique().items():
            if sets > 1:
                refused.append(f"{name}: {controller}: {sets} parameter sets stored under one name; the latest "
                               f"({latest[controller][:8]}) counts")
        rows = rows[rows["controller_hash"] == rows["controller"].map(latest)]
        out[name] = rows.drop_duplicates(["controller", "seed"], keep="last")
    if not out:
        raise StoreError(f"no scenario of suite {suite.name} has stored episodes of static_default on its test "
                         f"seeds; run: ecngym run suite={suite.name}")
    return out, refused


def _same_scenario(rows: pd.DataFrame, defaults: pd.DataFrame) -> pd.Series:
    """Which rows ran ``static_default``'s scenario: its scenario hash, or its traffic identity and traces.

    (A learner with its own observation / reward / short interval has another scenario hash; the
    traffic identity ignores those keys, and the trace hash per seed confirms the same traffic.)
    """
    from ecngym.results.record import traffic_identity

    latest = defaults.iloc[-1]
    shash = latest["scenario_hash"]

    def traffic(row: pd.Series) -> str:
        try:
            return traffic_identity(row["env_id"], json.loads(row["scenario_config"]))
        except (TypeError, ValueError):
            return ""

    own = defaults[defaults["scenario_hash"] == shash].drop_duplicates("seed", keep="last")
    traces = dict(zip(own["seed"], own["trace_hash"], strict=True))
    target = traffic(latest)
    same_hash = rows["scenario_hash"] == shash
    other = rows[~same_hash]
    if other.empty:
        return same_hash
    ok = other.apply(lambda r: traffic(r) == target and traces.get(r["seed"]) == r["trace_hash"], axis=1)
    return same_hash | ok.reindex(rows.index, fill_value=False)


def build_board(store: ResultStore, suite: Suite, reps: int = DEFAULT_REPS, seed: int = 0,
                pool: Any = None) -> SuiteBoard:
    """Score the suite's stored episodes and aggregate them.

    Args:
        store: The results store.
        suite: The suite.
        reps: Bootstrap replications of the aggregates.
        seed: Seed of the bootstrap.
        pool: Worker processes for the bootstrap (None: this process; same results either way).

    Raises:
        StoreError: If the store is missing or holds nothing of the suite.
    """
    rows, refused = select_rows(store.episodes(), suite)
    scores, rankings, dynamic = [], {}, set()
    for name, r in rows.items():
        protocol = suite.scenarios[name].protocol
        scores.append(score_scenario(r, name, protocol.score, protocol.lower_is_better, protocol.second_axis,
                                     suite.test_seeds(name)))
        # one ranking of the scenario (its learners, which observe their own way, are no scenario of their
        # own: select_rows checked they ran its traffic); references at their place, labelled, never ranked
        rankings[name], ranking_refused = rank(r, protocol.score, by="scenario", references=REFERENCES)
        refused += ranking_refused
        dynamic |= {c for c, p in zip(r["controller"], r["controller_params"], strict=True)
                    if c not in REFERENCES and not _is_static(p)}
    return SuiteBoard(suite=suite, scores=scores, aggregates=aggregates(normalized_matrices(scores), reps=reps,
                                                                        seed=seed, pool=pool),
                      rankings=rankings, rows=rows, dynamic=dynamic, refused=refused)


def fmt_ci(mean: float, ci: tuple[float, float], digits: int = 2, spec: str = "f") -> str:
    """``1.23 [0.9, 1.5]`` (``—`` for a missing value, no bounds where there is no interval).

    Args:
        mean: The value.
        ci: Its interval.
        digits: Decimals (``spec="f"``) or significant digits (``spec="g"``).
        spec: The format type.
    """
    if not math.isfinite(mean):
        return "—"
    form = f"{{:.{digits}{spec}}}"
    bounds = f" [{form.format(ci[0])}, {form.format(ci[1])}]" if all(math.isfinite(c) for c in ci) else ""
    return f"{form.format(mean)}{bounds}"


def headroom_rows(board: SuiteBoard) -> list[dict[str, Any]]:
    """One entry per scenario of the headroom table (the terminal board and the page print it alike).

    Each holds the scenario, its score, the static references' and the phase oracle's raw scores
    (``—`` for one the scenario has not: ``static_tuned_per_role`` is optional) and the headroom as
    ``fmt_ci`` text, and two flags: ``no_reference_gap`` and ``no_headroom`` (a finite CI that does
    not lie above 0).
    """
    rows = []
    for s in board.scores:
        refs = {}
        for ref in ("static_default", "static_tuned", "static_tuned_per_role", "oracle_phase"):
            c = s.by_name(ref)
            refs[ref] = fmt_ci(c.raw_mean, c.raw_ci, 4, "g") if c is not None else "—"
        rows.append({"scenario": s.scenario, "score": s.score, "S_default": refs["static_default"],
                     "S_tuned": refs["static_tuned"], "S_tuned_per_role": refs["static_tuned_per_role"],
                     "S_oracle_phase": refs["oracle_phase"],
                     "headroom": fmt_ci(s.headroom[0], s.headroom[1:]), "no_reference_gap": s.no_reference_gap,
                     "no_headroom": all(math.isfinite(x) for x in s.headroom) and not s.headroom[1] > 0})
    return rows


def overview_rows(board: SuiteBoard) -> list[dict[str, Any]]:
    """One entry per controller: its normalized score per scenario and its aggregates; competitors first.

    Competitors are ordered by IQM (best first); references follow, labelled, never ranked.
    """
    names = sorted({c.controller for s in board.scores for c in s.controllers})
    entries = []
    for name in names:
        per, mark, delta, beats, paired = {}, {}, {}, 0, 0
        for s in board.scores:
            c = s.by_name(name)
            delta[s.scenario] = ((c.delta_tuned_mean, c.delta_tuned_ci) if c is not None
                                 else (float("nan"), (float("nan"), float("nan"))))
            per[s.scenario] = (c.normalized_mean, c.normalized_ci) if c is not None and not s.no_reference_gap \
                else (float("nan"), (float("nan"), float("nan")))
            mark[s.scenario] = paired_mark(c)
            if c is not None and math.isfinite(c.delta_tuned_ci[0]) and name != "static_tuned":
                paired += 1
                beats += int(c.beats_tuned)
        entries.append({"controller": name, "reference": name in REFERENCES, "dynamic": name in board.dynamic,
                        "per_scenario": per, "paired_mark": mark, "delta_tuned": delta, "beats_tuned": (beats, paired),
                        "aggregate": board.aggregates.get(name)})

    def key(e: dict[str, Any]) -> tuple[bool, float, str]:
        agg = e["aggregate"]
        iqm = agg.iqm if agg is not None and math.isfinite(agg.iqm) else -math.inf
        return (e["reference"], -iqm, e["controller"])

    return sorted(entries, key=key)


def paired_mark(c: Any) -> str:
    """``▲`` if the paired 95% CI of S_tuned − S_c lies above 0 (better than static_tuned), ``▼`` below, else ``""``."""
    if c is None or not math.isfinite(c.delta_tuned_ci[0]):
        return ""
    return "▲" if c.beats_tuned else "▼" if c.delta_tuned_ci[1] < 0 else ""


def beats_text(e: dict[str, Any]) -> str:
    """The overview's "beats tuned" cell: scenarios where the paired CI lies above 0, of those paired."""
    won, paired = e["beats_tuned"]
    return f"{won}/{paired}" if paired and e["controller"] != "static_tuned" else "—"


def board_columns(board: SuiteBoard,
                  entries: list[dict[str, Any]] | None = None) -> tuple[Column, list[Column], list[str | None]]:
    """The overview as columns: controller names, the ranking columns, then one column per scenario.

    The ranking columns (the aggregates the order comes from) are key columns: at any terminal width
    they stay in the first table. A new aggregate or verdict is one more entry of
    :data:`AGGREGATE_COLUMNS`.
    """
    entries = overview_rows(board) if entries is None else entries
    name = Column("controller", [e["controller"] + (" (ref)" if e["reference"] else "") for e in entries],
                  justify="left")
    columns = [Column(label, [fmt_ci(*getter(e["aggregate"])) if e["aggregate"] is not None else "—"
                              for e in entries], key=True)
               for label, getter in AGGREGATE_COLUMNS.items()]
    columns.append(Column("beats tuned", [beats_text(e) for e in entries], key=True))
    columns += [Column(s.scenario, [f"{fmt_ci(*e['per_scenario'][s.scenario])}{e['paired_mark'][s.scenario]}"
                                    for e in entries]) for s in board.scores]
    return name, columns, ["dim" if e["reference"] else None for e in entries]


#: The aggregate columns of the overview (label -> (value, CI) of an :class:`Aggregate`), in order.
AGGREGATE_COLUMNS = {"IQM": lambda a: (a.iqm, a.iqm_ci),
                     "P(>tuned)": lambda a: (a.p_improve, a.p_improve_ci),
                     "opt. gap": lambda a: (a.optimality_gap, a.optimality_gap_ci)}


def print_board(board: SuiteBoard, console: Console, wide: bool = False) -> None:
    """The suite board in the terminal: overview, headroom, one verdict per scenario.

    Args:
        board: The board.
        console: Where it goes; its width is the limit (:func:`~ecngym.results.terminal.fit_tables`).
        wide: One line per row whatever the width.
    """
    entries = overview_rows(board)
    name, columns, styles = board_columns(board, entries)
    print_tables(console, fit_tables(
        console, name, columns, styles, wide=wide,
        title=f"suite {board.suite.name} v{board.suite.spec.version}: normalized score (0 = static_default, "
              "1 = static_tuned), mean [95% CI] over test seeds; ranked by IQM",
        caption="IQM and optimality gap (to 1) over the scenarios with a reference gap, stratified-bootstrap "
                "95% CIs; P(>tuned): probability of improvement over static_tuned; beats tuned: scenarios where the "
                "paired 95% CI of S_tuned − S_c over the test seeds lies above 0 (▲ in the scenario's cell; ▼: "
                "below 0). References are labelled (ref), never ranked."))
    iqm = next(c for c in columns if c.label == "IQM")  # the overview's, beside the differences
    deltas = [Column(s.scenario, [fmt_ci(*e["delta_tuned"][s.scenario], 3, "g") + e["paired_mark"][s.scenario]
                                  for e in entries]) for s in board.scores]
    print_tables(console, fit_tables(
        console, name, [iqm, *deltas], styles, wide=wide,
        title="paired difference from static_tuned: S_tuned − S_c per test seed in the scenario's score units "
              "(positive = better than static_tuned), mean [95% CI]; the verdicts above read it"))
    rows = headroom_rows(board)
    flags = [", ".join((["no_reference_gap"] if r["no_reference_gap"] else [])
                       + (["no headroom"] if r["no_headroom"] else [])) for r in rows]
    head = [Column(label, [r[key] for r in rows], key=key in ("headroom", "flag"))
            for label, key in (("headroom", "headroom"), ("score", "score"), ("S_default", "S_default"),
                               ("S_tuned", "S_tuned"), ("S_tuned_per_role", "S_tuned_per_role"),
                               ("S_oracle_phase", "S_oracle_phase"))]
    head.insert(1, Column("flag", flags, key=True, justify="left"))
    print_tables(console, fit_tables(
        console, Column("scenario", [r["scenario"] for r in rows], justify="left"), head, wide=wide,
        title="adaptivity headroom per scenario: oracle_phase − static_tuned (normalized units; raw score units "
              "where no_reference_gap), mean [95% CI] over test seeds"))
    for s in board.scores:
        console.print(board.sentence(s))
    for message in board.refused:
        console.print(f"[yellow]{message}[/]")
