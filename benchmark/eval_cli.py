"""``ecngym benchmark eval checkpoint=DIR``: your trained agent on its scenario's suite board.

A checkpoint of ``ecngym train suite=<s> scenario=<sc> agent=<a> seed=<n>`` is played on the
scenario it was trained on (its card's), on that scenario's scored test seeds, exactly as
``ecngym run suite=...`` plays every controller (:func:`ecngym.benchmark.runner.run_job`: same env,
same traces, one row per episode in the store, stored episodes skipped). Its rows are then part of
the suite board of the store (``ecngym leaderboard``, ``ecngym benchmark board``), in the scenario's
one table beside the shipped controllers and learners; this command prints where it stands::

    ecngym benchmark eval checkpoint=outputs/train/roce_storage_incast/acc/seed1 [suite=core] [store=DIR]

The name on the board is ``<agent>_seed<n>_<budget>steps`` (``name=`` to choose another): never a
shipped learner's (``acc``), so the shipped one is not replaced.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ecngym.cli import key_value_arguments
from ecngym.error import ConfigError
from ecngym.validation import ConfigModel, Flag, Text


class EvalArgs(ConfigModel):
    """The arguments of ``ecngym benchmark eval``."""

    checkpoint: Text
    suite: Text = "core"
    store: Text = "outputs/results"
    name: Text | None = None
    scenario_dir: Text | None = None
    out: Text = "outputs/benchmark-eval"
    wide: Flag = False


def board_name(card: dict) -> str:
    """The name a user's checkpoint is stored and ranked under: ``<agent>_seed<n>_<budget>steps``."""
    return f"{card['agent']}_seed{card['seed']}_{card['budget_steps']}steps"


def eval_main(argv: list[str] | None = None) -> int:
    """``ecngym benchmark eval``: play a checkpoint on its scenario's test seeds, print its place on the board.

    Raises:
        ConfigError: Naming ``checkpoint`` for a folder without a checkpoint or one trained on a
            scenario the suite does not have, ``name`` for a reference's or a shipped learner's
            name, or the error the episodes ended with.
    """
    from rich.console import Console

    from ecngym.benchmark.board import build_board, print_board
    from ecngym.benchmark.checkpoints import load_card
    from ecngym.benchmark.runner import Job, learner_controllers, run_job
    from ecngym.benchmark.scoring import REFERENCES
    from ecngym.benchmark.suite import load_suite
    from ecngym.results import ResultStore

    usage = "ecngym benchmark eval checkpoint=DIR [suite=core] [store=DIR] [name=NAME] [wide=true]"
    args = key_value_arguments(EvalArgs, list(sys.argv[1:] if argv is None else argv), usage, __doc__)
    path, card = load_card(args.checkpoint, "checkpoint")
    suite = load_suite(args.suite, args.scenario_dir)
    scenario = card.get("scenario")
    if scenario not in suite.scenarios:
        raise ConfigError("checkpoint", f"{str(path)!r} was trained on scenario {scenario!r}, which suite "
                                        f"{suite.name} does not have ({list(suite.scenarios)}); train one with "
                                        f"ecngym train suite={suite.name} scenario=<scenario> agent=<agent> seed=<n>")
    name = args.name or board_name(card)
    taken = {*REFERENCES, *learner_controllers(scenario)}
    if name in taken:
        raise ConfigError("name", f"got {name!r}, the name of a reference or a shipped learner on {scenario}: "
                                  f"its rows would replace those; choose another (taken: {sorted(taken)})")
    store = ResultStore(args.store, "store")
    sc = suite.scenarios[scenario]
    job = Job(scenario=scenario, env_id=sc.id, env_kwargs=dict(sc.env), controller=name,
              controller_cfg={"_target_": "ecngym.benchmark.checkpoints.CheckpointController", "path": str(path),
                              "name": name},
              seeds=suite.test_seeds(scenario), reference=False, store_dir=str(store.root), skip_existing=True,
              out_dir=str(Path(args.out) / scenario / name))
    console = Console(width=100_000, soft_wrap=True) if args.wide else Console()
    console.print(f"{name} ({card['agent']}, training seed {card['seed']}, {card['budget_steps']} env steps) on "
                  f"{scenario}: test seeds {job.seeds}; store {store.root}")
    result = run_job(job)
    if result.failure:
        raise ConfigError("checkpoint", f"{name} could not play {scenario}: {result.failure}")
    board = build_board(store, suite)
    print_board(board, console, wide=args.wide)
    scores = next(s for s in board.scores if s.scenario == scenario)
    mine = scores.by_name(name)
    ranking = next((r for r in board.rankings.get(scenario, []) if name in set(r.table["controller"])), None)
    if mine is None or ranking is None:
        console.print(f"[yellow]{name} is not on the board of {scenario} (see the rows left out above)[/]")
        return 1
    row = ranking.table[ranking.table["controller"] == name].iloc[0]
    competitors = int((~ranking.table["reference"]).sum())
    console.print(f"[bold]{name}[/] on {scenario}: normalized {mine.normalized_mean:.2f} [{mine.normalized_ci[0]:.2f}, "
                  f"{mine.normalized_ci[1]:.2f}] (static_tuned = 1); #{row['rank']} of {competitors} on raw "
                  f"{ranking.score}. The page: ecngym leaderboard --store {store.root}")
    return 0
