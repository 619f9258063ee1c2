"""Sweeps write through the store: rows per episode, the leaderboard, SIGKILL mid-sweep, Optuna."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from ecngym import cli
from ecngym.results import ResultStore
from ecngym.results.leaderboard import leaderboard_from_store
from ecngym.results.ranking import rank

CONTROLLERS = "static_dcqcn,static_hpcc,static_vendor"


def test_sweep_of_three_controllers_by_two_seeds_is_ranked_with_cis(tmp_path, capsys, monkeypatch):
    store_dir = tmp_path / "store"
    # run from a git checkout: each row records the commit of the directory the command ran in
    work = tmp_path / "work"
    work.mkdir()
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    monkeypatch.chdir(work)
    assert cli.main(["eval", "-m", f"controller={CONTROLLERS}", "seed=1,2", "env.kwargs.episode_steps=10",
                     f"results.dir={store_dir}", f"hydra.sweep.dir={tmp_path / 'sweep'}"]) == 0
    store = ResultStore(store_dir)
    rows = store.episodes()
    assert len(rows) == 6 and rows["row_id"].is_unique
    assert rows.groupby("seed")["trace_hash"].nunique().tolist() == [1, 1]  # one trace per seed ...
    assert rows["trace_hash"].nunique() == 2                                  # ... different between seeds
    assert set(rows["controller"]) == {"static_dcqcn", "static_hpcc", "static_vendor"}
    assert rows["scenario_hash"].nunique() == 1 and (rows["git_commit"] == head).all()
    for r in rows.itertuples():  # every row's per-flow records are there and complete
        assert len(store.frame(r.flows_path)) == r.flows_total > 0
    (ranking,), refused = rank(rows)
    assert refused == [] and list(ranking.table["rank"]) == [1, 2, 3]
    assert (ranking.table["seeds"] == 2).all()
    t = ranking.table
    assert ((t["ci95_low"] <= t["score_mean"]) & (t["score_mean"] <= t["ci95_high"])).all()
    assert t["score_mean"].is_monotonic_increasing  # lower slowdown ranks first

    # a row measured on another trace at seed 1 is refused from that ranking, and said so
    intruder = rows.iloc[0]
    store.commit({**{c: intruder[c] for c in ("command", "controller_params", "env_id", "scenario",
                                              "scenario_hash", "scenario_config", "ecngym_version")},
                  "row_id": "intruder", "controller": "static_intruder", "controller_hash": "intruder",
                  "trace_hash": "f" * 64, "seed": 1, "metrics": {"slowdown_p99_<100KB": 0.5}})
    (ranking,), refused = rank(store.episodes())
    assert "static_intruder" not in set(ranking.table["controller"]) and len(ranking.table) == 3
    assert len(refused) == 1 and "static_intruder seed 1" in refused[0] and "not ranked together" in refused[0]
    capsys.readouterr()
    assert cli.main(["leaderboard", "--store", str(store_dir), "--html", ""]) == 0
    out = capsys.readouterr().out
    assert "not ranked together" in out and "static_hpcc" in out and "95% CI" in out


def _rows_done(store: ResultStore) -> int:
    try:
        return len(store.episodes())
    except Exception:  # noqa: BLE001  (no database yet)
        return 0


def test_sigkill_mid_sweep_keeps_finished_rows_and_a_rerun_fills_in_the_rest(tmp_path):
    store_dir = tmp_path / "store"
    args = [sys.executable, "-m", "ecngym", "eval", "-m", "sweep=joblib", f"controller={CONTROLLERS}", "seed=1,2",
            "env.kwargs.episode_steps=60", f"results.dir={store_dir}", f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    store = ResultStore(store_dir)
    proc = subprocess.Popen(args, cwd=tmp_path, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while _rows_done(store) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and both joblib workers, mid-way
        proc.wait()
    before = store.episodes()
    assert 2 <= len(before) < 6, "the sweep must be killed mid-way"
    for r in before.itertuples():  # every finished row is whole
        assert r.trace_hash and r.controller and r.flows_total > 0
        assert len(store.frame(r.flows_path)) == r.flows_total
    rerun = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=400)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    after = store.episodes()
    assert len(after) == 6 and after["row_id"].is_unique
    assert len(after.groupby(["controller", "seed"])) == 6
    kept = after.set_index("row_id").loc[before["row_id"], "created_at"]
    assert (kept.to_numpy() == before["created_at"].to_numpy()).all()  # finished rows were not run again
    assert rerun.stdout.count("already in the store") == len(before)


def test_optuna_sweep_improves_on_its_first_trial(tmp_path):
    store_dir = tmp_path / "store"
    assert cli.main(["eval", "-m", "sweep=optuna_static", "hydra.sweeper.n_trials=8",
                     "hydra.sweeper.sampler.n_startup_trials=3", "env.kwargs.episode_steps=40",
                     f"results.dir={store_dir}", f"hydra.sweep.dir={tmp_path / 'sweep'}"]) == 0
    rows = ResultStore(store_dir).episodes().sort_values("created_at")
    assert len(rows) == 8 and rows["controller_hash"].nunique() == 8  # 8 distinct settings tried
    first, best = rows["slowdown_p99_<100KB"].iloc[0], rows["slowdown_p99_<100KB"].min()
    assert best < first
    import yaml

    result = yaml.safe_load((tmp_path / "sweep" / "optimization_results.yaml").read_text())
    assert result["best_value"] == pytest.approx(best)  # the sweeper optimised the value read from the store
    params = json.loads(rows.loc[rows["slowdown_p99_<100KB"].idxmin(), "controller_params"])
    assert params["setting"][0] == f"{result['best_params']['tune.kmin_kb']}KB"
    assert set(rows["controller"]) == {"static_tuned"}


def test_run_is_the_benchmark_and_ends_with_the_leaderboard(tmp_path, capsys):
    store_dir, page = tmp_path / "store", tmp_path / "board.html"
    assert cli.main(["run", "suite=null",
                     "controllers=[static_dcqcn,static_hpcc]", "seeds=[1,2]", "env.kwargs.episode_steps=10",
                     f"results.dir={store_dir}", f"leaderboard.html={page}",
                     f"hydra.run.dir={tmp_path / 'run'}"]) == 0
    out = capsys.readouterr().out
    assert "2 controllers x 2 seeds" in out and "static_dcqcn" in out and page.is_file()
    rows = ResultStore(store_dir).episodes()
    assert len(rows) == 4 and set(rows["command"]) == {"run"}
    # a second run finds every episode stored and simulates nothing
    assert cli.main(["run", "suite=null",
                     "controllers=[static_dcqcn,static_hpcc]", "seeds=[1,2]", "env.kwargs.episode_steps=10",
                     f"results.dir={store_dir}", f"leaderboard.html={page}",
                     f"hydra.run.dir={tmp_path / 'run2'}"]) == 0
    assert capsys.readouterr().out.count("2 of 2 episodes already in the store") == 2
    assert len(ResultStore(store_dir).episodes()) == 4


def test_run_rejects_unknown_controllers_and_empty_seeds(tmp_path, capsys):
    assert cli.main(["run", "suite=null", "controllers=[static_nope]", f"results.dir={tmp_path}",
                     f"hydra.run.dir={tmp_path / 'r'}"]) == 2
    assert "controllers: unknown controller(s) ['static_nope']" in capsys.readouterr().err
    assert cli.main(["run", "suite=null",
                     "seeds=[]", f"results.dir={tmp_path}", f"hydra.run.dir={tmp_path / 'r'}"]) == 2
    assert "seeds" in capsys.readouterr().err
    assert cli.main(["run", "suite=null", "controllers=[static_dcqcn,sb3]", "seeds=[1]", "env.kwargs.episode_steps=5",
                     f"results.dir={tmp_path}", f"hydra.run.dir={tmp_path / 'r'}"]) == 2  # named: must all run
    assert "sb3: controller.path" in capsys.readouterr().err
    assert cli.main(["eval", "results.skip_existing=no", f"results.dir={tmp_path}",
                     f"hydra.run.dir={tmp_path / 'r'}"]) == 2
    assert "results.skip_existing" in capsys.readouterr().err
    assert cli.main(["eval", "logger=wandb", "logger.mode=live", f"results.dir={tmp_path}",
                     f"hydra.run.dir={tmp_path / 'r'}"]) == 2
    assert "logger.mode" in capsys.readouterr().err and not list(tmp_path.glob("**/wandb"))


def test_leaderboard_names_an_unknown_score_and_a_missing_store(tmp_path, capsys):
    assert cli.main(["leaderboard", "--store", str(tmp_path / "none")]) == 2
    assert "no results store at" in capsys.readouterr().err
    assert cli.main(["eval", "env.kwargs.episode_steps=5", f"results.dir={tmp_path}",
                     f"hydra.run.dir={tmp_path / 'e'}"]) == 0
    capsys.readouterr()
    assert cli.main(["leaderboard", "--store", str(tmp_path), "--score", "speed", "--html", ""]) == 2
    assert "ecngym leaderboard: error: --score: got 'speed'" in capsys.readouterr().err
    assert cli.main(["leaderboard", "--store", str(tmp_path), "--scenario", "nope", "--html", ""]) == 2
    assert "ecngym leaderboard: error: --scenario: got 'nope'; stored scenarios: [" in capsys.readouterr().err


def test_leaderboard_renders_to_html_from_python(tmp_path):
    assert cli.main(["eval", "-m", "controller=static_dcqcn,static_hpcc", "env.kwargs.episode_steps=5",
                     f"results.dir={tmp_path / 's'}", f"hydra.sweep.dir={tmp_path / 'sw'}"]) == 0
    (ranking,) = leaderboard_from_store(ResultStore(tmp_path / "s"), Console(width=150), html=str(tmp_path / "p.html"))
    text = (tmp_path / "p.html").read_text()
    assert text.count('class="lb-row ') == 2 and "Plotly.newPlot" in text and "<script" in text
    assert "https://cdn" not in text.split("<body>")[1][:2000] or "plotly.js" in text  # plotly.js embedded
    assert isinstance(ranking.table, pd.DataFrame) and Path(tmp_path / "p.html").stat().st_size > 1e6
