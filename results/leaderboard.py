"""``ecngym leaderboard``: the terminal tables and the page of the rankings (:mod:`ecngym.results.ranking`).

The ranking itself (scores, confidence intervals, paired differences, which rows are ranked
together) lives in :mod:`ecngym.results.ranking`, which the page imports too; its names are
re-exported here.
"""

from __future__ import annotations

import argparse
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
    _fmt,
    check_scenario_hashes,
    confidence_interval,
    paired_difference,
    paired_text,
    rank,
)
from ecngym.results.store import ResultStore, StoreError
from ecngym.validation import Text, check

__all__ = ["CONTEXT_METRICS", "DEFAULT_SCORE", "HIGHER_IS_BETTER", "LABELS", "Ranking", "check_scenario_hashes",
           "confidence_interval", "leaderboard_from_store", "main", "paired_difference", "paired_text", "rank",
           "rich_table"]


def rich_table(ranking: Ranking) -> Table:
    """The ranking as a rich table (every row ran the seeds of the title)."""
    direction = "higher" if ranking.score in HIGHER_IS_BETTER else "lower"
    table = Table(title=f"{ranking.scenario} ({ranking.env_id}) · scenario {ranking.scenario_hash[:8]} · "
                        f"traces {ranking.trace_set} (seeds {', '.join(map(str, ranking.traces))})",
                  caption=f"score: {ranking.score}, mean over seeds, 95% CI (Student t); {direction} is better; "
                          "Δ vs #1: mean and 95% CI of the per-seed difference from the leader")
    table.add_column("#", justify="right")
    table.add_column("controller", no_wrap=True)
    table.add_column(LABELS.get(ranking.score, ranking.score), justify="right")
    table.add_column("95% CI", justify="right", no_wrap=True)
    table.add_column("Δ vs #1, paired CI", justify="right", no_wrap=True)
    extra = [m for m in CONTEXT_METRICS if m in ranking.table]
    for metric in extra:
        table.add_column(LABELS.get(metric, metric), justify="right")
    for r in ranking.table.itertuples():
        table.add_row(str(r.rank), r.controller, _fmt(r.score_mean, 4), f"[{_fmt(r.ci95_low)}, {_fmt(r.ci95_high)}]",
                      paired_text(r), *[_fmt(ranking.table.loc[r.Index, m]) for m in extra])
    return table


def leaderboard_from_store(store: ResultStore, console: Console, score: str = DEFAULT_SCORE, html: str | None = None,
                           scenario_hashes: list[str] | None = None, scenario: str | None = None,
                           logger: Any = None, html_field: str = "html") -> list[Ranking]:
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

    Returns:
        The rankings.

    Raises:
        StoreError: If the store is missing or unreadable.
        ConfigError: On an unknown score, a scenario that has no rows, an empty or non-string
            ``scenario``, ``scenario_hashes`` that are not a collection of strings, or an ``html``
            that cannot name a file to write (naming ``html_field``).
    """
    if html is not None:
        check_output_path(html_field, html)  # before the store is read, not after the tables
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
    rankings, refused = rank(episodes, score, scenario_hashes)
    if not rankings:
        raise StoreError(f"no evaluated episodes to rank in {store.root}")
    for ranking in rankings:
        console.print(rich_table(ranking))
    for message in refused:
        console.print(f"[yellow]{message}[/]")
    if html:
        from ecngym.results.page import write_page

        path = write_page(rankings, refused, store, Path(html), html_field)
        console.print(f"leaderboard page: {path}")
    if logger is not None:
        log_tables(logger, rankings)
    return rankings


def log_tables(logger: Any, rankings: list[Ranking]) -> None:
    """Log each ranking's table to ``logger`` (a :func:`~ecngym.results.make_logger` logger)."""
    for ranking in rankings:
        logger.log_table(f"leaderboard/{ranking.scenario}/{ranking.trace_set}",
                         ranking.table.drop(columns=["row_ids", "params"]))


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``ecngym leaderboard``."""
    parser = argparse.ArgumentParser(prog="ecngym leaderboard", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", default="outputs/results", help="results store directory (default %(default)s)")
    parser.add_argument("--score", default=DEFAULT_SCORE,
                        help="metric to rank by (default %(default)s: p99 FCT slowdown of flows < 100 KB; e.g. "
                             "slowdown_p99_all, slowdown_avg_100KB-1MB, queue_p99_bytes, utilization, return)")
    parser.add_argument("--html", default="outputs/leaderboard.html", help="page to write ('' for none)")
    parser.add_argument("--scenario", default=None, help="only this scenario (name or hash prefix)")
    parser.add_argument("--logger", choices=("none", "wandb", "tensorboard"), default="none",
                        help="also log the tables (W&B offline run / TensorBoard text) under the store")
    args = parser.parse_args(argv)
    store = ResultStore(args.store, "--store")
    console = Console(width=max(Console().width, 130))  # the table needs ~130 columns (as ecngym run)
    try:
        rankings = leaderboard_from_store(store, console, args.score, args.html or None, scenario=args.scenario,
                                          html_field="--html")
    except ConfigError as exc:  # name the option that gave it (ecngym run names leaderboard.score)
        if exc.field in ("score", "scenario"):
            raise ConfigError(f"--{exc.field}", exc.message) from None
        raise
    if args.logger != "none":  # made once there is a ranking: a missing store gets no logs folder
        from ecngym.results.loggers import make_logger

        with make_logger({"name": args.logger}, "leaderboard", store.root / "logs", {"score": args.score}) as logger:
            log_tables(logger, rankings)
    return 0
