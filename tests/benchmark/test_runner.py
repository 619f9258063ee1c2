"""``ecngym run suite=...`` end to end on the fixture suite: rows, resume, board, page (headless Chromium), commands.

One suite run (two worker processes) on the fixture scenario ``tiny_incast`` with four controllers and the
fixture's references; the tests read what it stored and wrote.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ecngym import cli
from ecngym.benchmark.board import build_board
from ecngym.benchmark.suite import load_suite
from ecngym.results import ResultStore

HERE = Path(__file__).resolve().parent
CONTROLLERS = ["static_dcqcn", "pred", "bytetuning", "dctcp_demt_dynamic"]
REFERENCES = ["oracle_phase", "random", "static_default", "static_tuned"]


def _run(tmp: Path, *extra: str) -> int:
    return cli.main(["run", "suite.scenarios=[tiny_incast]", "suite.test_seeds=3", "benchmark.jobs=2",
                     f"benchmark.scenario_dir={HERE / 'scenarios'}", f"controllers=[{','.join(CONTROLLERS)}]",
                     f"results.dir={tmp / 'store'}", f"leaderboard.html={tmp / 'board.html'}",
                     f"hydra.run.dir={tmp / 'run'}", *extra])


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory, reference_reader):
    tmp = tmp_path_factory.mktemp("suite")
    with pytest.MonkeyPatch.context() as mp:
        import ecngym.benchmark.runner as runner

        mp.setattr(runner, "reference_controllers", reference_reader)
        assert _run(tmp) == 0
        first = ResultStore(tmp / "store").episodes()
        assert _run(tmp) == 0  # a rerun: every episode is stored already
    return tmp, first


def test_every_controller_and_reference_has_a_row_per_test_seed(suite_run):
    tmp, rows = suite_run
    assert sorted(rows["controller"].unique()) == sorted(CONTROLLERS + REFERENCES)
    assert sorted(rows["seed"].unique()) == [1002, 1003, 1004]  # the first 3 of the scenario's test seeds
    assert len(rows) == 3 * (len(CONTROLLERS) + len(REFERENCES)) and rows["row_id"].is_unique
    assert (rows["scenario"] == "tiny_incast").all() and rows["scenario_hash"].nunique() == 1
    assert rows.groupby("seed")["trace_hash"].nunique().tolist() == [1, 1, 1]  # one trace per seed


def test_rows_hold_the_return_under_every_reward(suite_run):
    _, rows = suite_run
    for name in ("acc", "pred", "fct", "score_dense"):
        assert np.isfinite(rows[f"return_{name}"]).all()
    # score_dense's return is minus the episode's mean slowdown (every fixture scenario's score)
    np.testing.assert_allclose(rows["return_score_dense"], -rows["slowdown_avg_all"], rtol=1e-12)
    # the env's own reward (acc) is the episode's return, exactly: one definition of each reward
    assert np.array_equal(rows["return_acc"].to_numpy(), rows["episode_return"].to_numpy())
    assert (rows["return_fct"] < 0).all() and not np.allclose(rows["return_acc"], rows["return_pred"])


def test_a_scenario_controller_override_is_applied(suite_run):
    _, rows = suite_run
    params = json.loads(rows.loc[rows["controller"] == "bytetuning", "controller_params"].iloc[0])
    assert params["window_steps"] == 3 and params["settle_steps"] == 1  # the scenario's, not the config's 50 / 5


def test_a_rerun_simulates_nothing_again(suite_run):
    tmp, first = suite_run
    again = ResultStore(tmp / "store").episodes()
    assert len(again) == len(first)
    assert list(again.sort_values("row_id")["created_at"]) == list(first.sort_values("row_id")["created_at"])


def test_board_normalizes_against_the_references(suite_run):
    tmp, _ = suite_run
    suite = load_suite({"name": "core", "version": 1, "test_seeds": 3, "scenarios": ["tiny_incast"]},
                       HERE / "scenarios")
    board = build_board(ResultStore(tmp / "store"), suite, reps=200)
    (scores,) = board.scores
    assert not scores.no_reference_gap and scores.reference_gap[1] > 0
    assert scores.by_name("static_default").normalized_mean == 0
    assert math.isclose(scores.by_name("static_tuned").normalized_mean, 1.0)
    assert set(board.aggregates) == set(CONTROLLERS + REFERENCES)
    assert board.dynamic == {"pred", "bytetuning", "dctcp_demt_dynamic"}  # static_dcqcn is a static setting
    again = build_board(ResultStore(tmp / "store"), suite, reps=200)  # the seeded bootstrap repeats
    assert all(board.aggregates[n].iqm_ci == again.aggregates[n].iqm_ci for n in board.aggregates)


def test_rewards_command_prints_a_spearman_table_and_json(suite_run, capsys):
    tmp, _ = suite_run
    capsys.readouterr()
    assert cli.main(["benchmark", "rewards", f"suite={HERE / 'tiny_suite.yaml'}", f"store={tmp / 'store'}",
                     f"scenario_dir={HERE / 'scenarios'}"]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    (row,) = last["spearman"]
    assert row["scenario"] == "tiny_incast" and row["episodes"] == 3 * (len(CONTROLLERS) + len(REFERENCES))
    # (the fixture's score is queue_p99_bytes: score_dense's return, −slowdown_avg_all, is not it)
    assert all(row[name] is None or -1 <= row[name] <= 1 for name in ("acc", "pred", "fct", "score_dense"))


def test_board_command_writes_the_page(suite_run):
    tmp, _ = suite_run
    page = tmp / "board2.html"
    assert cli.main(["benchmark", "board", f"suite={HERE / 'tiny_suite.yaml'}", f"store={tmp / 'store'}",
                     f"scenario_dir={HERE / 'scenarios'}", f"html={page}", "reps=200"]) == 0
    assert "suite-overview" in page.read_text()


def test_page_embeds_plotly_once_and_labels_references(suite_run):
    tmp, _ = suite_run
    text = (tmp / "board.html").read_text()
    assert text.count("plotly.js v") == 1  # the library's banner: embedded once for every plot
    kinds = dict(re.findall(r'<tr class="suite-row [a-z]+" data-controller="([^"]+)" data-kind="([a-z]+)"', text))
    assert kinds == {**dict.fromkeys(CONTROLLERS, "competitor"), **dict.fromkeys(REFERENCES, "reference")}
    assert re.search(r'<p class="verdict" data-scenario="tiny_incast">tiny_incast: (yes|no)', text)
    assert text.count('<div class="table-wrap"><table') >= 4  # every table scrolls inside its own box


def test_page_renders_in_headless_chromium(chromium, suite_run, tmp_path):
    tmp, _ = suite_run
    dom = chromium("--dump-dom", (tmp / "board.html").as_uri()).stdout
    # plotly drew: the profile, the Pareto view, and the ranking's three figures
    assert dom.count('class="plot-container plotly"') == 5
    assert len(re.findall(r'<tr class="suite-row', dom)) == len(CONTROLLERS) + len(REFERENCES)
    from PIL import Image

    shot = tmp_path / "shot.png"
    chromium("--window-size=1000,2400", f"--screenshot={shot}", (tmp / "board.html").as_uri())
    pixels = np.asarray(Image.open(shot).convert("RGB"), dtype=np.int16)
    assert (pixels < 240).any(axis=2).mean() > 0.05 and len(np.unique(pixels.reshape(-1, 3), axis=0)) > 200


def test_a_joblib_sweep_runs_one_job_per_scenario_and_controller_into_one_store(tmp_path):
    # competitors only: the sweep's jobs run in worker processes, which read the package's references
    assert cli.main(["run", "-m", "sweep=joblib", "suite.scenarios=[tiny_incast]", "suite.test_seeds=2",
                     "benchmark.jobs=1", f"benchmark.scenario_dir={HERE / 'scenarios'}",
                     "benchmark.scenario=tiny_incast", "benchmark.controller=static_dcqcn,static_vendor",
                     f"results.dir={tmp_path / 'store'}", f"hydra.sweep.dir={tmp_path / 'sweep'}"]) == 0
    rows = ResultStore(tmp_path / "store").episodes()
    assert sorted(rows["controller"]) == ["static_dcqcn"] * 2 + ["static_vendor"] * 2
    assert sorted((tmp_path / "sweep").glob("*/.hydra")) and len(list((tmp_path / "sweep").glob("*/.hydra"))) == 2


@pytest.mark.parametrize("override", ["seeds=[1,2]", "env.kwargs.episode_steps=5"])
def test_a_suite_run_refuses_single_scenario_keys(tmp_path, override):
    # (a command of its own: nothing of this module's suite run is in its process)
    import sys

    key = override.split("=")[0]
    proc = subprocess.run([sys.executable, "-m", "ecngym", "run", override, f"results.dir={tmp_path / 'store'}",
                           f"hydra.run.dir={tmp_path / 'run'}"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert f"ecngym run: error: {key}: got {override!r}, but a suite run ignores it" in proc.stderr
    assert not (tmp_path / "store").exists()
