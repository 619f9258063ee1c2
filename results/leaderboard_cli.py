"""``ecngym leaderboard``: rank controllers per scenario from the results store; terminal tables and HTML page."""

from __future__ import annotations

import argparse

from rich.console import Console

from ecngym.error import ConfigError
from ecngym.results.leaderboard import leaderboard_from_store
from ecngym.results.ranking import DEFAULT_SCORE
from ecngym.results.store import ResultStore


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
        from ecngym.results.loggers import log_tables, make_logger

        with make_logger({"name": args.logger}, "leaderboard", store.root / "logs", {"score": args.score}) as logger:
            log_tables(logger, rankings)
    return 0
