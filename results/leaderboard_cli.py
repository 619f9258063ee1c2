"""``ecngym leaderboard``: the store's board: its suite scenarios by the suite board's rules, then its other scenarios.

Nothing is simulated. The scenarios of ``--suite`` (default ``core``) get the suite board that
``ecngym run`` prints (each scenario's own score, normalized against its references, references
labelled and never ranked; a trained agent scored with ``ecngym benchmark eval`` joins its
scenario's table); every other scenario of the store (``ecngym run suite=null``, ``ecngym eval``
sweeps) is ranked on the raw ``--score``. The tables fit the terminal (``--wide``: one line per
row); the page goes to ``--html``, by default a file of its own, never the page ``ecngym run``
wrote.
"""

from __future__ import annotations

import argparse

from rich.console import Console

from ecngym.error import ConfigError
from ecngym.results.leaderboard import store_leaderboard
from ecngym.results.ranking import DEFAULT_SCORE
from ecngym.results.store import ResultStore
from ecngym.results.terminal import terminal_console

#: ``ecngym leaderboard``'s page: not ``ecngym run``'s ``outputs/leaderboard.html``.
DEFAULT_HTML = "outputs/leaderboard-store.html"


def main(argv: list[str] | None = None, console: Console | None = None) -> int:
    """Entry point of ``ecngym leaderboard``."""
    parser = argparse.ArgumentParser(prog="ecngym leaderboard", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", default="outputs/results", help="results store directory (default %(default)s)")
    parser.add_argument("--suite", default="core",
                        help="the suite whose scenarios get the suite board (default %(default)s; a name or a file)")
    parser.add_argument("--scenario-dir", default=None, help="the suite's scenario folder (default: the package's)")
    parser.add_argument("--score", default=DEFAULT_SCORE,
                        help="metric the store's other scenarios (not the suite's: those use their own) are ranked "
                             "by (default %(default)s: p99 FCT slowdown of flows < 100 KB; e.g. slowdown_p99_all, "
                             "slowdown_avg_100KB-1MB, queue_p99_bytes, utilization, return)")
    parser.add_argument("--html", default=DEFAULT_HTML, help="page to write (default %(default)s; '' for none)")
    parser.add_argument("--scenario", default=None, help="only this scenario (name or hash prefix)")
    parser.add_argument("--wide", action="store_true",
                        help="one line per table row whatever the terminal's width (default: fit the terminal)")
    parser.add_argument("--logger", choices=("none", "wandb", "tensorboard"), default="none",
                        help="also log the tables (W&B offline run / TensorBoard text) under the store")
    args = parser.parse_args(argv)
    store = ResultStore(args.store, "--store")
    console = console or terminal_console(args.wide)
    try:
        rankings = store_leaderboard(store, console, args.suite, args.scenario_dir, args.score, args.html or None,
                                     scenario=args.scenario, wide=args.wide, html_field="--html")
    except ConfigError as exc:  # name the option that gave it
        if exc.field in ("score", "scenario", "suite"):
            raise ConfigError(f"--{exc.field}", exc.message) from None
        raise
    if args.logger != "none":  # made once there is a ranking: a missing store gets no logs folder
        from ecngym.results.loggers import log_tables, make_logger

        with make_logger({"name": args.logger}, "leaderboard", store.root / "logs", {"score": args.score}) as logger:
            log_tables(logger, rankings)
    return 0
