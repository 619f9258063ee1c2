"""The suite table: references beside a store's controllers, paired per test seed."""

import pytest

from ecngym.benchmark.headroom import mean_ci
from ecngym.benchmark.suite_table import add_suite_table, suite_row
from ecngym.markdown_page import MarkdownPage


def _doc(tuned, window, lower=True):
    """A references document in the file's shape (made-up scores), the window oracle at beams 1 and 2."""
    seeds = [str(1001 + i) for i in range(len(tuned))]

    def block(values):
        return {"test": {"score": dict(zip(seeds, values, strict=True))}}

    return {"scenario": "s", "score": "slowdown_avg_all", "lower_is_better": lower,
            "static_default": block([x + 1 for x in tuned]), "static_tuned": block(tuned),
            "static_tuned_per_role": {"searched": False, **block(tuned)},
            # (worse than every schedule here: no shortfall against oracle_phase needs a reason)
            "oracle_phase": block([x + (9 if lower else -9) for x in tuned]),
            "oracle_window": {"window": "1ms", "window_steps": 48, "beams": [1, 2],
                              "per_test_seed": {s: {"beams": {"1": {"score": w[0]}, "2": {"score": w[1]}}}
                                                for s, w in zip(seeds, window, strict=True)}}}


def test_the_row_pairs_the_window_oracle_and_each_controller_with_static_tuned_per_seed():
    doc = _doc(tuned=[3.0, 4.0, 5.0], window=[(2.9, 2.5), (4.2, 3.5), (4.8, 4.5)])
    # mpc on two of the three seeds: paired on those; a controller the store lacks is left out
    row = suite_row(doc, {"mpc_forecast": {"1001": 2.8, "1003": 5.2}}, ["mpc_forecast", "other"])
    assert row["S_default"] == pytest.approx(5.0) and row["S_tuned"] == pytest.approx(4.0)
    greedy, beam = row["oracle_window"]["1"], row["oracle_window"]["2"]
    assert [e["seed"] for e in greedy["worse_than_tuned"]] == ["1002"] and beam["worse_than_tuned"] == []
    assert (beam["headroom"], *beam["headroom_ci"]) == pytest.approx(mean_ci([0.5, 0.5, 0.5]))
    assert beam["headroom_relative"] == pytest.approx(0.5 / 4.0)
    mpc = row["controllers"]["mpc_forecast"]
    assert mpc["seeds"] == 2 and mpc["S"] == pytest.approx(4.0)
    assert (mpc["delta"], *mpc["delta_ci"]) == pytest.approx(mean_ci([0.2, -0.2]))
    assert not mpc["beats_tuned"] and "other" not in row["controllers"]
    # higher is better: a larger score is the better one
    up = suite_row(_doc(tuned=[3.0, 4.0], window=[(3.5, 3.5), (4.5, 4.5)], lower=False),
                   {"mpc_forecast": {"1001": 3.1, "1002": 4.2}}, ["mpc_forecast"])
    assert up["oracle_window"]["2"]["headroom"] == pytest.approx(0.5)
    assert up["controllers"]["mpc_forecast"]["delta"] == pytest.approx(0.15)


def test_the_table_counts_scenarios_with_headroom_and_controls():
    rows = [suite_row(_doc(tuned=[3.0, 4.0, 5.0], window=[(2.0, 2.0), (3.1, 3.0), (4.0, 4.0)]), {}, []),
            suite_row(_doc(tuned=[3.0, 4.0, 5.0], window=[(3.0, 3.0), (3.9, 3.9), (5.0, 5.0)]), {}, [])]
    page = MarkdownPage("t", ["x"], "")
    add_suite_table(page, rows, [])
    text = page.render()
    assert "1 of 2 scenarios have a window headroom &gt;= 10 % of S_tuned with its CI above 0" in text
    assert "1 have one under 5 % (controls" in text
