"""``ecngym benchmark board`` and ``ecngym benchmark rewards``: a suite's board and reward correlations from the store.

Both read the results store only (nothing is simulated) and take ``key=value`` arguments::

    ecngym benchmark board suite=full store=outputs/results html=outputs/leaderboard.html
    ecngym benchmark board scenario_file=my_scenarios/my_storage_incast.yaml store=outputs/results
    ecngym benchmark rewards suite=core markdown=docs/benchmarks/rewards.md

``board`` prints the suite board and writes its page (after a suite run split over sweep jobs).
``rewards`` prints, per scenario, the Spearman rank correlation of each RL reward's episode return
with the scenario's score over its stored episodes; its last line is the table as JSON.
``scenario_file=PATH`` takes the suite of one scenario file of your own
(:func:`~ecngym.benchmark.scenario_file.scenario_file_suite`) instead of ``suite`` (default ``core``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from ecngym.benchmark.scenario_file import ScenarioFileArgs
from ecngym.validation import Flag, Text, Whole

#: The suite a board is built for when neither ``suite`` nor ``scenario_file`` is given.
DEFAULT_SUITE = "core"


class BoardArgs(ScenarioFileArgs):
    """The arguments of ``ecngym benchmark board`` / ``rewards`` (``key=value``)."""

    #: None: :data:`DEFAULT_SUITE`, unless ``scenario_file`` is given
    suite: Text | None = None
    store: Text = "outputs/results"
    html: Text = "outputs/leaderboard.html"
    scenario_dir: Text | None = None
    reps: Whole(100, 1_000_000) = 500
    seed: Whole(0, 2**32 - 1) = 0
    #: also write what is printed as a docs page there (``ecngym.markdown_page``: stamped with the
    #: version, date, machine and command), e.g. ``docs/benchmarks/suite.md``
    markdown: Text | None = None
    #: one line per table row whatever the terminal's width (a ``markdown`` page always gets this)
    wide: Flag = False


def _board(argv: list[str] | None, usage: str) -> tuple[Any, Any, BoardArgs]:
    from ecngym.benchmark.board import build_board
    from ecngym.benchmark.scenario_file import scenario_file_suite
    from ecngym.benchmark.suite import load_suite
    from ecngym.cli import key_value_arguments
    from ecngym.results import ResultStore

    argv = list(sys.argv[1:] if argv is None else argv)
    args = key_value_arguments(BoardArgs, argv, usage, __doc__)
    if args.scenario_file is not None:  # (with suite or scenario_dir: refused by the model)
        suite = scenario_file_suite(args.scenario_file)
    else:
        suite = load_suite(args.suite or DEFAULT_SUITE, args.scenario_dir)
    store = ResultStore(args.store, "store")
    return build_board(store, suite, reps=args.reps, seed=args.seed), store, args


def board_main(argv: list[str] | None = None) -> int:
    """``ecngym benchmark board``: print a suite's board from the store and write its page."""
    from ecngym.benchmark.board import print_board
    from ecngym.benchmark.page import suite_page_kind, write_suite_page
    from ecngym.files import check_output_path
    from ecngym.markdown_page import open_page, page_console
    from ecngym.results.page import check_page_target

    usage = ("ecngym benchmark board [suite=core | scenario_file=PATH] [store=DIR] [html=FILE] [scenario_dir=DIR] "
             "[reps=N] [seed=N] [markdown=FILE.md] [wide=true]")
    argv = list(sys.argv[1:] if argv is None else argv)
    board, store, args = _board(argv, usage)
    html = Path(check_output_path("html", args.html))
    check_page_target("html", html, suite_page_kind(board.suite.name, store))  # (the same board may be rebuilt)
    page = open_page(args.markdown, f"Suite {board.suite.name}: the board", "ecngym benchmark board", argv,
                     "Normalized scores per scenario and controller, the rliable aggregates, the adaptivity "
                     "headroom and, per scenario, whether a dynamic controller beats static_tuned.",
                     field="markdown")
    wide = args.wide or page is not None  # a docs page gets one table per board, whatever the terminal
    console = page_console(page, 130) if wide else page_console(page)
    print_board(board, console, wide=wide)
    Console().print(f"leaderboard page: {write_suite_page(board, store, html, 'html')}")
    if page is not None:
        page.write()
    return 0


def rewards_main(argv: list[str] | None = None) -> int:
    """``ecngym benchmark rewards``: the reward-score rank correlations; the last line is JSON."""
    from ecngym.benchmark.rewards import correlation_table, reward_correlations
    from ecngym.markdown_page import open_page, page_console

    usage = ("ecngym benchmark rewards [suite=core | scenario_file=PATH] [store=DIR] [scenario_dir=DIR] "
             "[markdown=FILE.md]")
    argv = list(sys.argv[1:] if argv is None else argv)
    board, _, args = _board(argv, usage)
    page = open_page(args.markdown, f"Suite {board.suite.name}: do the RL rewards agree with the score?",
                     "ecngym benchmark rewards", argv,
                     "Spearman rank correlation, over the stored episodes of each scenario, between each "
                     "reward's episode return and the scenario's score (sign set so that +1 means the reward "
                     "orders the episodes as the score does).", field="markdown")
    frame = reward_correlations(board)
    page_console(page).print(correlation_table(frame, board.suite.name))
    records = [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
               for r in frame.to_dict(orient="records")]
    print(json.dumps({"suite": board.suite.name, "spearman": records}))
    if page is not None:
        page.write()
    return 0
