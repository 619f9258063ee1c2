"""One board, readable everywhere: a two-scenario suite store on every surface.

The terminal (80 columns), the commands' pages (none overwrites another's), and the notebooks run
on it headless.

The store is made once by ``ecngym run`` on the fixture suite ``tiny_incast`` + ``tiny_incast_hot``
(two controllers, the fixture's references, two test seeds): the shape of the main job's store
(several scenarios, references, every controller on each) in seconds.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from unittest import mock

import pandas as pd
import pytest
from rich.console import Console

from ecngym import cli
from ecngym.benchmark.scoring import REFERENCES
from ecngym.error import ConfigError
from ecngym.results import ResultStore
from ecngym.results.leaderboard import store_leaderboard
from ecngym.results.ranking import rank

HERE = Path(__file__).resolve().parent
SCENARIOS = ["tiny_incast", "tiny_incast_hot"]
CONTROLLERS = ["static_dcqcn", "pred"]
SUITE = {"name": "tiny2", "version": 1, "test_seeds": 2, "scenarios": SCENARIOS}


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory, reference_reader):
    tmp = tmp_path_factory.mktemp("two")
    with pytest.MonkeyPatch.context() as mp:
        import ecngym.benchmark.runner as runner

        mp.setattr(runner, "reference_controllers", reference_reader)
        assert cli.main(["run", f"suite.scenarios=[{','.join(SCENARIOS)}]", "suite.test_seeds=2", "benchmark.jobs=1",
                         f"benchmark.scenario_dir={HERE / 'scenarios'}", f"controllers=[{','.join(CONTROLLERS)}]",
                         "benchmark.bootstrap_reps=100", f"results.dir={tmp / 'store'}",
                         f"leaderboard.html={tmp / 'suite.html'}", f"hydra.run.dir={tmp / 'run'}"]) == 0
    return tmp


def _board_text(store_dir: Path, width: int, **kwargs) -> tuple[str, list]:
    console = Console(width=width, record=True, file=open(os.devnull, "w"))  # noqa: SIM115 (closed with the console)
    rankings = store_leaderboard(ResultStore(store_dir / "store"), console, SUITE, HERE / "scenarios", reps=100,
                                 **kwargs)
    return console.export_text(), rankings


def test_the_terminal_board_fits_80_columns_with_the_ranking_columns_whole(store_dir):
    text, _ = _board_text(store_dir, 80)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in text  # no value cut
    header = next(line for line in lines if "controller" in line and "IQM" in line)  # the first table's header
    assert "P(>tuned)" in header and "opt. gap" in header
    for name in [*CONTROLLERS, *(f"{r} (ref)" for r in REFERENCES)]:  # every name whole, on one line
        assert re.search(rf"│ {re.escape(name)} +│", text), name
    # the per-scenario columns are not lost: below, at 80 columns
    assert all(s in text for s in SCENARIOS)


@pytest.mark.parametrize("wide", [False, True])
def test_the_leaderboard_command_at_columns_80(store_dir, monkeypatch, capsys, wide):
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.main(["leaderboard", f"--store={store_dir / 'store'}", f"--suite={HERE / 'tiny_suite.yaml'}",
                     f"--scenario-dir={HERE / 'scenarios'}", "--html=", *(["--wide"] if wide else [])]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if "controller" in line and "IQM" in line)
    assert "P(>tuned)" in header and "opt. gap" in header
    if wide:  # one table, one line per row: the scenario's column beside the aggregates, intervals inline
        assert "tiny_incast" in header
        assert not any(re.match(r"│ +│", line) for line in lines)  # no row continued on a second line
    else:
        assert max(len(line) for line in lines) <= 80
    # the store's other scenario (not in the fixture suite): ranked on raw p99, its key columns whole
    other = next(line for line in lines if "controller" in line and "Δ vs #1" in line)
    assert "#" in other and "p99" in other


def test_references_are_labelled_never_ranked_on_every_ranking(store_dir):
    _, rankings = _board_text(store_dir, 200)
    assert {r.scenario for r in rankings} == set(SCENARIOS)  # one table per scenario, by the suite's rules
    for ranking in rankings:
        table = ranking.table
        assert ranking.score == "queue_p99_bytes"  # the scenario's own score, not the leaderboard's default
        assert table.loc[table["controller"].isin(REFERENCES), "rank"].isna().all()
        refs = set(table.loc[table["reference"], "controller"])  # the optional per-role one where its file has it
        assert ("static_tuned_per_role" in refs) == (ranking.scenario == "tiny_incast_hot")
        assert list(table.loc[~table["reference"], "rank"]) == [1, 2]
        assert set(table.loc[~table["reference"], "controller"]) == set(CONTROLLERS)


def test_the_leaderboard_command_never_overwrites_the_run_page(store_dir, tmp_path, monkeypatch, capsys):
    page = store_dir / "suite.html"
    before = page.read_bytes()
    monkeypatch.chdir(tmp_path)
    args = ["leaderboard", f"--store={store_dir / 'store'}", f"--suite={HERE / 'tiny_suite.yaml'}",
            f"--scenario-dir={HERE / 'scenarios'}"]
    assert cli.main([*args, f"--html={page}"]) == 2
    assert re.search(r"error: --html: .*suite.html holds another page \(suite \w+ board .*not overwritten",
                     capsys.readouterr().err)
    assert page.read_bytes() == before
    assert cli.main(args) == 0  # its own default page, beside the run's
    assert (tmp_path / "outputs" / "leaderboard-store.html").is_file() and page.read_bytes() == before
    assert cli.main(args) == 0  # its own page again: replaced


def test_one_scenario_of_several_scenario_hashes_is_one_ranking():
    # a learner that observes its own way has another scenario hash on the same traffic: one table, not two
    rows = []
    for controller, shash in (("a", "s" * 64), ("b", "t" * 64), ("static_default", "s" * 64)):
        for seed in (1, 2, 3):
            rows.append({"row_id": f"{controller}-{seed}", "command": "run", "scenario_hash": shash,
                         "scenario": "x", "env_id": "ecngym/RoceIncast-v0", "controller": controller,
                         "controller_hash": controller * 8, "controller_params": "{}", "seed": seed,
                         "trace_hash": f"{seed}" * 64, "created_at": pd.Timestamp("2026-01-01"),
                         "score": seed + {"a": 0.0, "b": 1.0, "static_default": 0.5}[controller]})
    rows = pd.DataFrame(rows)
    assert len(rank(rows, "score")[0]) == 2  # by scenario hash: split
    (ranking,), _ = rank(rows, "score", by="scenario", references=REFERENCES)
    assert list(ranking.table["controller"]) == ["a", "static_default", "b"]
    assert list(ranking.table["rank"]) == [1, None, 2]


def test_eval_summary_fits_80_columns(store_dir):
    from ecngym.commands.eval import summary_table

    rows = ResultStore(store_dir / "store").episodes().head(3)
    rows = [{**r, "episode": i} for i, r in enumerate(rows.to_dict(orient="records"))]
    console = Console(width=80, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(summary_table(rows, "t", 80))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80 and "…" not in text
    assert "slowdown <100KB p99" in text and "trace hash" in text


def test_benchmark_eval_refuses_a_checkpoint_of_another_suite_and_a_taken_name(tmp_path):
    from ecngym.benchmark.checkpoints import CHECKPOINT_DIR
    from ecngym.benchmark.eval_cli import eval_main

    shipped = next(CHECKPOINT_DIR.glob("roce_storage_incast/acc/seed*"))
    with pytest.raises(ConfigError, match="checkpoint: .*trained on scenario 'roce_storage_incast', which suite tiny"):
        eval_main([f"checkpoint={shipped}", f"suite={HERE / 'tiny_suite.yaml'}", f"scenario_dir={HERE / 'scenarios'}"])
    with pytest.raises(ConfigError, match="name: got 'acc', the name of a reference or a shipped learner"):
        eval_main([f"checkpoint={shipped}", "suite=core-v1", "name=acc", f"store={tmp_path}"])


def _execute(name: str, store: Path, tmp_path: Path) -> str:
    import nbclient
    import nbformat

    nb = nbformat.read(HERE.parents[1] / "notebooks" / f"{name}.ipynb", as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    first.source = first.source.replace("STORE = None", f"STORE = {str(store)!r}", 1)
    if name == "leaderboard":
        first.source = first.source.replace('SUITE, SCENARIO_DIR = "core", None',
                                            f"SUITE, SCENARIO_DIR = {str(HERE / 'tiny_suite.yaml')!r}, "
                                            f"{str(HERE / 'scenarios')!r}")
    with mock.patch.dict(os.environ, {"TMPDIR": str(tmp_path)}):
        nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path)}}).execute()
    return "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "")
                   for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


def test_compare_controllers_notebook_runs_per_scenario_on_a_suite_store(store_dir, tmp_path):
    before = sorted(p.name for p in (store_dir / "store").iterdir())
    text = _execute("compare_controllers", store_dir / "store", tmp_path)
    # controllers per scenario, each on the 2 test seeds (static_tuned_per_role and phase_tuned: only tiny_incast_hot's
    # fixture has them)
    per = {s: len(CONTROLLERS) + len(REFERENCES) - 2 * (s != "tiny_incast_hot") for s in SCENARIOS}
    assert f"{len(SCENARIOS)} scenario(s), {sum(per.values()) * 2} episodes" in text
    assert all(f"  {s}: {per[s]} controllers, {per[s] * 2} episodes" in text for s in SCENARIOS)
    assert "identical traces for every (scenario, seed): True" in text
    assert sorted(p.name for p in (store_dir / "store").iterdir()) == before


def test_leaderboard_notebook_writes_outside_the_store(store_dir, tmp_path):
    before = sorted(p.name for p in (store_dir / "store").iterdir())
    text = _execute("leaderboard", store_dir / "store", tmp_path)
    assert "2 ranking(s)" in text and "tiny_incast_hot" in text
    assert sorted(p.name for p in (store_dir / "store").iterdir()) == before  # nothing written into the store
    assert len(list(tmp_path.glob("ecngym-page-*/leaderboard.html"))) == 1
