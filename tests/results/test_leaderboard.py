"""The leaderboard's statistics on hand-made rows: each controller's paired difference from the leader."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ecngym.results.leaderboard import rich_table
from ecngym.results.ranking import rank

SCORE = "slowdown_p99_<100KB"


def _rows(scores: dict[str, list[float]]) -> pd.DataFrame:
    """Episode rows of one scenario: each controller at seeds 1, 2, 3, one trace per seed."""
    rows = []
    for controller, values in scores.items():
        for seed, value in enumerate(values, start=1):
            rows.append({"row_id": f"{controller}-{seed}", "command": "eval", "scenario_hash": "s" * 64,
                         "scenario": "incast", "env_id": "ecngym/RoceIncast-v0", "controller": controller,
                         "controller_hash": controller * 8, "controller_params": "{}", "seed": seed,
                         "trace_hash": f"{seed}" * 64, "created_at": pd.Timestamp("2026-01-01"), SCORE: value})
    return pd.DataFrame(rows)


def test_the_paired_difference_separates_what_the_per_controller_intervals_cannot():
    # the traces differ a lot between seeds; on each trace B is worse than A by about 1
    a = [2.0, 10.0, 30.0]
    b = [3.0, 11.2, 30.8]
    (ranking,), _ = rank(_rows({"A": a, "B": b}))
    t = ranking.table.set_index("controller")
    assert list(ranking.table["controller"]) == ["A", "B"]
    # the per-controller intervals overlap almost entirely ...
    assert t.loc["B", "ci95_low"] < t.loc["A", "ci95_high"]
    # ... the paired one is the t interval of the per-seed differences, and excludes 0
    diff = np.subtract(b, a)
    low, high = stats.t.interval(0.95, 2, loc=diff.mean(), scale=stats.sem(diff))
    assert t.loc["B", "delta_vs_leader"] == pytest.approx(1.0)
    assert (t.loc["B", "delta_ci95_low"], t.loc["B", "delta_ci95_high"]) == pytest.approx((low, high))
    assert 0 < low
    assert t.loc["A", "delta_vs_leader"] == 0.0  # the leader against itself


def test_a_difference_that_changes_sign_between_seeds_is_not_called():
    (ranking,), _ = rank(_rows({"A": [5.0, 6.0, 7.0], "B": [4.0, 7.5, 7.0]}))
    b = ranking.table.set_index("controller").loc["B"]
    assert b["delta_ci95_low"] < 0 < b["delta_ci95_high"]


def test_the_terminal_table_shows_the_paired_column():
    from rich.console import Console

    (ranking,), _ = rank(_rows({"A": [2.0, 10.0, 30.0], "B": [3.0, 11.2, 30.8]}))
    console = Console(width=200, record=True)
    console.print(rich_table(ranking))
    text = console.export_text()
    assert "Δ vs #1, paired CI" in text and "+1 [0.5, 1.5]" in text


@pytest.mark.parametrize("score", ["controller", "trace_hash", "seed"])
def test_a_provenance_column_is_no_score(score):
    # 'controller' / 'trace_hash' were a ValueError traceback (float() of a name); 'seed' ranked by the seed
    from ecngym.error import ConfigError

    with pytest.raises(ConfigError, match=rf"^score: got '{score}', not a metric of the stored episodes; "
                                          r"known: \['slowdown_p99_<100KB'\]"):
        rank(_rows({"A": [1.0, 2.0, 3.0]}), score=score)


@pytest.mark.parametrize(("kwargs", "message"), [
    # were an IsADirectoryError / TypeError after the tables were printed, and '' ranked every scenario
    ({"html": "."}, r"^html: got '\.', which is a directory; expected the path of a file to write"),
    ({"html": 5}, r"^html: got 5, expected the path of a file to write"),
    ({"scenario": 5}, r"^scenario: expected a string, got 5"),
    ({"scenario": ""}, r"^scenario: got '', expected a scenario name or a prefix of its hash"),
])
def test_leaderboard_from_store_names_a_bad_page_or_scenario(tmp_path, kwargs, message):
    from rich.console import Console

    from ecngym.error import ConfigError
    from ecngym.results import ResultStore
    from ecngym.results.leaderboard import leaderboard_from_store

    with pytest.raises(ConfigError, match=message):
        leaderboard_from_store(ResultStore(tmp_path), Console(), **kwargs)


@pytest.mark.parametrize(("hashes", "message"), [
    # 's' was a pandas TypeError in rank, and in leaderboard_from_store the set of its letters
    ("s" * 64, r"^scenario_hashes: got 'sss.*', expected a list of scenario hashes \(strings\), or None"),
    (5, r"^scenario_hashes: got 5, expected a list of scenario hashes"),
    (["s" * 64, 7], r"^scenario_hashes\[1\]: expected a string, got 7"),
])
def test_scenario_hashes_must_be_a_collection_of_strings(tmp_path, hashes, message):
    from rich.console import Console

    from ecngym.error import ConfigError
    from ecngym.results import ResultStore
    from ecngym.results.leaderboard import leaderboard_from_store

    with pytest.raises(ConfigError, match=message):
        rank(_rows({"A": [1.0, 2.0, 3.0]}), scenario_hashes=hashes)
    with pytest.raises(ConfigError, match=message):  # before the (here absent) store is read
        leaderboard_from_store(ResultStore(tmp_path), Console(), scenario_hashes=hashes)
    (ranking,), _ = rank(_rows({"A": [1.0, 2.0, 3.0]}), scenario_hashes=("s" * 64,))  # a tuple is a collection
    assert ranking.scenario_hash == "s" * 64


@pytest.mark.parametrize(("level", "message"), [
    # 2 was scipy's ValueError, nan returned (nan, nan) as if there were too few values, 'x' a numpy UFuncTypeError
    (2, r"^level: got 2, allowed range is \(0, 1\)"),
    (0, r"^level: got 0, allowed range is \(0, 1\)"),
    (float("nan"), r"^level: expected a finite number, got nan"),
    ("x", r"^level: expected a finite number, got 'x'"),
    (True, r"^level: expected a finite number, got True"),
])
def test_a_confidence_level_outside_0_1_is_refused(level, message):
    from ecngym.error import ConfigError
    from ecngym.results.ranking import confidence_interval

    with pytest.raises(ConfigError, match=message):
        confidence_interval(np.array([1.0, 2.0, 3.0]), level=level)
    with pytest.raises(ConfigError, match=message):  # also with too few values for an interval
        confidence_interval(np.array([1.0]), level=level)
    assert confidence_interval(np.array([1.0, 2.0, 3.0]), level=0.5) == pytest.approx(
        stats.t.interval(0.5, 2, loc=2.0, scale=stats.sem([1.0, 2.0, 3.0])))
