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
)
from ecngym.results.store import ResultStore, StoreError
from ecngym.validation import Text, check


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
        table.add_row(str(r.rank), r.controller, fmt_number(r.score_mean, 4),
                      f"[{fmt_number(r.ci95_low)}, {fmt_number(r.ci95_high)}]", paired_text(r),
                      *[fmt_number(ranking.table.loc[r.Index, m]) for m in extra])
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
        from ecngym.results.loggers import log_tables

        log_tables(logger, rankings)
    return rankings
