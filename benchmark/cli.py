"""``ecngym benchmark board`` and ``ecngym benchmark rewards``: a suite's board and reward correlations from the store.

Both read the results store only (nothing is simulated) and take ``key=value`` arguments::

    ecngym benchmark board suite=full store=outputs/results html=outputs/leaderboard.html
    ecngym benchmark rewards suite=core

``board`` prints the suite board and writes its page (after a suite run split over sweep jobs).
``rewards`` prints, per scenario, the Spearman rank correlation of each RL reward's episode return
with the scenario's score over its stored episodes; its last line is the table as JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from ecngym.error import ConfigError
from ecngym.validation import ConfigModel, Text, Whole


class BoardArgs(ConfigModel):
    """The arguments of ``ecngym benchmark board`` / ``rewards`` (``key=value``)."""

    suite: Text = "core"
    store: Text = "outputs/results"
    html: Text = "outputs/leaderboard.html"
    scenario_dir: Text | None = None
    reps: Whole(100, 1_000_000) = 500
    seed: Whole(0, 2**32 - 1) = 0


def parse_key_values(argv: list[str], usage: str) -> BoardArgs:
    """``key=value`` arguments as :class:`BoardArgs`.

    Raises:
        ConfigError: Naming an argument that is not ``key=value``, or the bad field.
    """
    values: dict[str, Any] = {}
    for arg in argv:
        key, sep, value = arg.partition("=")
        if not sep or not key:
            raise ConfigError(arg, f"expected key=value; usage: {usage}")
        values[key] = int(value) if key in ("reps", "seed") and value.lstrip("-").isdigit() else value
    return BoardArgs.parse(values, "")


def _board(argv: list[str] | None, usage: str) -> tuple[Any, Any, BoardArgs]:
    from ecngym.benchmark.board import build_board
    from ecngym.benchmark.suite import load_suite
    from ecngym.results import ResultStore

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(f"usage: {usage}\n\n{__doc__}")
        raise SystemExit(0)
    args = parse_key_values(argv, usage)
    suite = load_suite(args.suite, args.scenario_dir)
    store = ResultStore(args.store, "store")
    return build_board(store, suite, reps=args.reps, seed=args.seed), store, args


def board_main(argv: list[str] | None = None) -> int:
    """``ecngym benchmark board``: print a suite's board from the store and write its page."""
    from ecngym.benchmark.board import print_board
    from ecngym.files import check_output_path
    from ecngym.results.page import write_suite_page

    usage = "ecngym benchmark board [suite=core] [store=DIR] [html=FILE] [scenario_dir=DIR] [reps=N] [seed=N]"
    board, store, args = _board(argv, usage)
    console = Console()
    print_board(board, console)
    html = check_output_path("html", args.html)
    console.print(f"leaderboard page: {write_suite_page(board, store, Path(html), 'html')}")
    return 0


def rewards_main(argv: list[str] | None = None) -> int:
    """``ecngym benchmark rewards``: the reward-score rank correlations; the last line is JSON."""
    from ecngym.benchmark.rewards import correlation_table, reward_correlations

    usage = "ecngym benchmark rewards [suite=core] [store=DIR] [scenario_dir=DIR]"
    board, _, args = _board(argv, usage)
    frame = reward_correlations(board)
    Console().print(correlation_table(frame, args.suite))
    records = [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
               for r in frame.to_dict(orient="records")]
    print(json.dumps({"suite": args.suite, "spearman": records}))
    return 0
