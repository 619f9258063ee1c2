"""The leaderboard of a results store: its rankings as terminal tables, its page and its logged tables.

The ranking itself (scores, confidence intervals, paired differences, which rows are ranked
together) is :mod:`ecngym.results.ranking`; the HTML page is :mod:`ecngym.results.page`; the
``ecngym leaderboard`` command is :mod:`ecngym.results.leaderboard_cli`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ecngym.error import ConfigError
from ecngym.files import check_output_path
from ecngym.results.ranking import (
    CONTEXT_METRICS,
    DEFAULT_SCORE,
    HIGHER_IS_BETTER,
    LABELS,
    Ranking,
    check_scenario_hashes,
    fmt_number,
    paired_text,
    rank,
    rank_text,
)
from ecngym.results.store import ResultStore, StoreError
from ecngym.results.terminal import UNBOUNDED_WIDTH, Column, fit_tables, print_tables
from ecngym.validation import Text, check


def ranking_columns(ranking: Ranking) -> tuple[Column, list[Column], list[str | None]]:
    """A ranking as columns: controllers, the ranking columns (kept whole at any width), the rest.

    The ranking columns are ``#``, the score and the paired difference from the leader; the rest
    its 95 % CI, seeds and the context metrics.

    References (``reference`` rows) are labelled ``(ref)``, shown at their score's place, not ranked.
    """
    table = ranking.table
    rows = list(table.itertuples())
    competitors = int((~table["reference"]).sum()) if "reference" in table else len(table)
    name = Column("controller", [r.controller + (" (ref)" if getattr(r, "reference", False) else "") for r in rows],
                  justify="left")
    columns = [Column("#", [rank_text(r, competitors) for r in rows], key=True),
               Column(LABELS.get(ranking.score, ranking.score), [fmt_number(r.score_mean, 4) for r in rows], key=True),
               Column("Δ vs #1, paired CI", [paired_text(r) for r in rows], key=True),
               Column("95% CI", [f"[{fmt_number(r.ci95_low)}, {fmt_number(r.ci95_high)}]" for r in rows]),
               Column("seeds", [str(r.seeds) for r in rows])]
    columns += [Column(LABELS.get(m, m), [fmt_number(v) for v in table[m]]) for m in CONTEXT_METRICS if m in table]
    return name, columns, ["dim" if getattr(r, "reference", False) else None for r in rows]


def ranking_tables(ranking: Ranking, console: Console, wide: bool = False) -> list[Table]:
    """The ranking as rich tables that fit ``console`` (:func:`~ecngym.results.terminal.fit_tables`)."""
    direction = "higher" if ranking.score in HIGHER_IS_BETTER else "lower"
    name, columns, styles = ranking_columns(ranking)
    return fit_tables(console, name, columns, styles, wide=wide,
                      title=f"{ranking.scenario} ({ranking.env_id}) · scenario {ranking.scenario_hash[:8]} · "
                            f"traces {ranking.trace_set} (seeds {', '.join(map(str, ranking.traces))})",
                      caption=f"score: {ranking.score}, mean over seeds, 95% CI (Student t); {direction} is better; "
                              "Δ vs #1: mean and 95% CI of the per-seed difference from the leader; (ref): a "
                              "reference, shown at its place, never ranked")


def rich_table(ranking: Ranking) -> Table:
    """The ranking as one rich table, every cell on one line (for pages and logs, not a terminal)."""
    return ranking_tables(ranking, Console(width=UNBOUNDED_WIDTH), wide=True)[0]


def leaderboard_from_store(store: ResultStore, console: Console, score: str = DEFAULT_SCORE, html: str | None = None,
                           scenario_hashes: list[str] | None = None, scenario: str | None = None,
                           logger: Any = None, html_field: str = "html", wide: bool = False,
                           page_kind: str | None = None) -> list[Ranking]:
    """Print the leaderboard of ``store`` and write its HTML page to ``html``.

    Args:
        store: The results store.
        console: Where the tables go.
        score: The metric to rank by.
        html: The page to write (a file path), or None for none.
        scenario_hashes: Only these scenarios (a list of hashes; all when None).
        scenario: Only this scenario: its name or a prefix of its hash.
        logger: A logger to log the tables to (:func:`ecngym.results.make_logger`), or None.
        html_field: The option that gave ``html`` (``--html``), named in its errors.
        wide: Print every table on one line per row, whatever the console's width.
        page_kind: What the page is (:func:`~ecngym.results.page.check_page_target`: a page of
            another kind at ``html`` is not overwritten); default: the store's rankings.

    Returns:
        The rankings.

    Raises:
        StoreError: If the store is missing or unreadable.
        ConfigError: On an unknown score, a scenario that has no rows, an empty or non-string
            ``scenario``, ``scenario_hashes`` that are not a collection of strings, or an ``html``
            that cannot name a file to write (naming ``html_field``).
    """
    from ecngym.benchmark.scoring import REFERENCES
    from ecngym.results.page import check_page_target

    page_kind = page_kind or f"rankings of store {store.root}"
    if html is not None:
        check_output_path(html_field, html)  # before the store is read, not after the tables
        check_page_target(html_field, Path(html), page_kind)
    scenario_hashes = check_scenario_hashes(scenario_hashes)  # (a string would be taken as a set of letters)
    if scenario is not None and not check("scenario", scenario, Text).strip():
        raise ConfigError("scenario", f"got {scenario!r}, expected a scenario name or a prefix of its hash")
    episodes = store.episodes()
    if scenario is not None:
        match = episodes[(episodes["scenario"] == scenario) | episodes["scenario_hash"].str.startswith(scenario)]
        if match.empty:
            stored = sorted(set(episodes["scenario"] + " [" + episodes["scenario_hash"] + "]"))
            raise ConfigError("scenario", f"got {scenario!r}; stored scenarios: {stored}")
        scenario_hashes = sorted(set(match["scenario_hash"]) & set(scenario_hashes or match["scenario_hash"]))
    rankings, refused = rank(episodes, score, scenario_hashes, references=REFERENCES)
    if not rankings:
        raise StoreError(f"no evaluated episodes to rank in {store.root}")
    for ranking in rankings:
        print_tables(console, ranking_tables(ranking, console, wide))
    for message in refused:
        console.print(f"[yellow]{message}[/]")
    if html:
        from ecngym.results.page import write_page

        path = write_page(rankings, refused, store, Path(html), html_field, kind=page_kind)
        console.print(f"leaderboard page: {path}")
    if logger is not None:
        from ecngym.results.loggers import log_tables

        log_tables(logger, rankings)
    return rankings


def store_page_kind(store: ResultStore) -> str:
    """What ``ecngym leaderboard``'s page is (:func:`~ecngym.results.page.check_page_target`)."""
    return f"leaderboard of store {store.root}"


def store_leaderboard(store: ResultStore, console: Console, suite: Any = "core", scenario_dir: str | None = None,
                      score: str = DEFAULT_SCORE, html: str | None = None, scenario: str | None = None,
                      wide: bool = False, html_field: str = "--html", reps: int | None = None) -> list[Ranking]:
    """``ecngym leaderboard``: the suite board of the store's suite scenarios, then its other scenarios.

    One ranking home: a scenario of ``suite`` is ranked by the suite board's rules
    (:func:`ecngym.benchmark.board.build_board`: its own score, normalized against its references,
    its learners and the user's own trained agents in its one table, references labelled and never
    ranked); every other scenario of the store (a ``suite=null`` run, an ``ecngym eval`` sweep) is
    ranked on the raw ``score``, references labelled likewise.

    Args:
        store: The results store.
        console: Where the tables go (its width is the limit, unless ``wide``).
        suite: The suite whose scenarios get the suite board (name, file or contents).
        scenario_dir: Its scenario folder (default: the package's).
        score: The metric the other scenarios are ranked by.
        html: The page to write, or None.
        scenario: Only this scenario (name or a prefix of its hash).
        wide: One line per table row whatever the width.
        html_field: The option that gave ``html``.
        reps: Bootstrap replications of the suite aggregates (default: the suite board's).

    Returns:
        Every ranking shown (the suite scenarios' first).

    Raises:
        StoreError: If the store is missing or holds nothing to rank.
        ConfigError: On a bad suite, score, scenario or page path (naming the option).
    """
    from ecngym.benchmark.board import build_board, print_board
    from ecngym.benchmark.page import write_suite_page
    from ecngym.benchmark.scoring import REFERENCES
    from ecngym.benchmark.stats import DEFAULT_REPS
    from ecngym.benchmark.suite import load_suite
    from ecngym.results.page import check_page_target, write_page

    kind = store_page_kind(store)
    if html is not None:
        check_output_path(html_field, html)
        check_page_target(html_field, Path(html), kind)
    suite = load_suite(suite, scenario_dir)
    episodes = store.episodes()
    if scenario is not None:
        if not check("scenario", scenario, Text).strip():
            raise ConfigError("scenario", f"got {scenario!r}, expected a scenario name or a prefix of its hash")
        episodes = episodes[(episodes["scenario"] == scenario) | episodes["scenario_hash"].str.startswith(scenario)]
        if episodes.empty:
            stored = sorted(set(store.episodes()["scenario"]))
            raise ConfigError("scenario", f"got {scenario!r}; stored scenarios: {stored}")
    board = None
    in_suite = episodes["scenario"].isin(list(suite.scenarios))
    if in_suite.any():
        try:
            board = build_board(store, suite, reps=reps or DEFAULT_REPS)
        except StoreError as exc:  # suite scenario rows without their references: ranked as the others are
            console.print(f"[yellow]{exc}[/]")
    scored = {s.scenario for s in board.scores} if board is not None else set()
    shown = set(episodes["scenario"])
    if board is not None and scenario is not None:  # one suite scenario: its table, by the board's rules
        board.scores = [s for s in board.scores if s.scenario in shown]
        board.rankings = {k: v for k, v in board.rankings.items() if k in shown}
    others = episodes[~episodes["scenario"].isin(scored)]
    rankings, refused = (rank(others, score, references=REFERENCES) if len(others[others["command"] != "train"])
                         else ([], []))
    if board is None and not rankings:
        raise StoreError(f"no evaluated episodes to rank in {store.root}")
    if board is not None and board.scores:
        print_board(board, console, wide=wide)
    if rankings:
        if board is not None:
            console.print(f"[bold]Other scenarios of the store[/] (not in suite {suite.name}): ranked on raw {score}")
        for ranking in rankings:
            print_tables(console, ranking_tables(ranking, console, wide))
        for message in refused:
            console.print(f"[yellow]{message}[/]")
    if html:
        if board is not None and board.scores:
            path = write_suite_page(board, store, Path(html), html_field, kind=kind, others=rankings,
                                    others_refused=refused)
        else:
            path = write_page(rankings, refused, store, Path(html), html_field, kind=kind)
        console.print(f"leaderboard page: {path}")
    scores = board.scores if board is not None else []
    return [r for s in scores for r in board.rankings.get(s.scenario, [])] + rankings
