"""Normalized scores, the no-gap rule, headroom and the suite aggregates, on made-up rows (no simulation)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ecngym.benchmark.scoring import normalized_matrices, score_scenario
from ecngym.benchmark.stats import aggregates

SEEDS = [1, 2, 3, 4]


def _rows(scores: dict[str, list[float]], metric: str = "slowdown_p99_all") -> pd.DataFrame:
    return pd.DataFrame([{"controller": c, "seed": s, metric: v, "slowdown_avg_>1MB": 2.0}
                         for c, values in scores.items() for s, v in zip(SEEDS, values, strict=True)])


def test_normalized_score_is_paired_per_seed_over_the_mean_reference_gap():
    rows = _rows({"static_default": [10, 12, 11, 13], "static_tuned": [6, 8, 7, 9],
                  "oracle_phase": [5, 7, 6, 8], "pred": [8, 10, 9, 11]})
    s = score_scenario(rows, "x", "slowdown_p99_all", True, "slowdown_avg_>1MB", SEEDS)
    assert not s.no_reference_gap and s.reference_gap[0] == 4
    assert s.normalized.loc["pred"].tolist() == [0.5] * 4      # (10 - 8) / 4 at every seed
    assert s.normalized.loc["static_default"].tolist() == [0.0] * 4
    assert s.normalized.loc["static_tuned"].tolist() == [1.0] * 4
    assert s.headroom[0] == pytest.approx(0.25)  # oracle 1.25 - tuned 1
    assert s.by_name("pred").raw_mean == 9.5 and s.by_name("pred").second_mean == 2.0
    assert [c.controller for c in s.controllers if not c.reference] == ["pred"]  # references listed apart


def test_higher_is_better_is_normalized_symmetrically():
    rows = _rows({"static_default": [0.5, 0.6, 0.5, 0.6], "static_tuned": [0.7, 0.8, 0.7, 0.8],
                  "ctrl": [0.9, 1.0, 0.9, 1.0]}, "utilization")
    s = score_scenario(rows, "x", "utilization", False, "slowdown_avg_>1MB", SEEDS)
    assert s.normalized.loc["ctrl"].tolist() == pytest.approx([2.0] * 4)


def test_references_within_noise_flag_no_reference_gap_and_keep_raw_scores():
    rows = _rows({"static_default": [10, 12, 11, 13], "static_tuned": [11, 11, 12, 12], "pred": [8, 10, 9, 11]})
    s = score_scenario(rows, "x", "slowdown_p99_all", True, "slowdown_avg_>1MB", SEEDS)
    assert s.no_reference_gap and s.normalized.empty
    assert math.isnan(s.by_name("pred").normalized_mean) and s.by_name("pred").raw_mean == 9.5
    assert normalized_matrices([s]) == {}  # left out of the aggregates


def test_a_missing_reference_flags_the_scenario():
    s = score_scenario(_rows({"static_default": [10, 12, 11, 13], "pred": [8, 10, 9, 11]}), "x",
                       "slowdown_p99_all", True, "slowdown_avg_>1MB", SEEDS)
    assert s.no_reference_gap and s.missing_references == ["static_tuned"]


def test_aggregates_match_their_definitions_and_repeat_with_the_seed():
    rng = np.random.default_rng(0)
    matrices = {"a": pd.DataFrame(rng.normal(1.3, 0.2, (4, 3)), columns=["s1", "s2", "s3"]),
                "static_tuned": pd.DataFrame(rng.normal(1.0, 0.2, (4, 3)), columns=["s1", "s2", "s3"])}
    a, tuned = matrices["a"].to_numpy(), matrices["static_tuned"].to_numpy()
    first = aggregates(matrices, reps=300, seed=7)
    middle = np.sort(a.ravel())[3:9]  # 12 scores: the middle 50 %
    assert first["a"].iqm == pytest.approx(middle.mean())
    assert first["a"].optimality_gap == pytest.approx(np.mean(1 - np.minimum(a, 1)))
    pairs = [np.mean(a[:, c, None] > tuned[None, :, c]) for c in range(3)]  # no ties in these scores
    assert first["a"].p_improve == pytest.approx(np.mean(pairs))
    assert first["a"].iqm_ci[0] <= first["a"].iqm <= first["a"].iqm_ci[1]
    assert math.isnan(first["static_tuned"].p_improve)
    again = aggregates(dict(reversed(list(matrices.items()))), reps=300, seed=7)  # order does not matter
    assert again["a"].iqm_ci == first["a"].iqm_ci and again["a"].p_improve_ci == first["a"].p_improve_ci
    assert aggregates(matrices, reps=300, seed=8)["a"].iqm_ci != first["a"].iqm_ci
    assert first["a"].profile.shape == first["a"].profile_ci.shape[1:]


def test_beating_static_tuned_is_read_from_the_paired_per_seed_differences():
    """A constant better than static_tuned on every seed beats it, though its normalized CI spans 1."""
    rows = _rows({"static_default": [10, 16, 12, 14], "static_tuned": [6, 9, 7, 8],
                  "const": [5.8, 8.9, 6.7, 7.8], "noisy": [3, 12, 4, 11]})
    s = score_scenario(rows, "x", "slowdown_p99_all", True, "slowdown_avg_>1MB", SEEDS)
    const, noisy = s.by_name("const"), s.by_name("noisy")
    assert const.normalized_ci[0] < 1 < const.normalized_ci[1]   # the normalized CI cannot tell
    assert const.delta_tuned_mean == pytest.approx(0.2) and const.delta_tuned_ci[0] > 0
    assert const.wins_over_tuned == (4, 4) and const.beats_tuned
    assert noisy.wins_over_tuned == (2, 4) and not noisy.beats_tuned
    assert s.dynamic_beats_tuned({"const", "noisy"}) == ["const"]
    assert s.by_name("static_tuned").delta_tuned_mean == 0


def test_the_verdict_names_a_static_controller_that_beats_static_tuned_where_no_dynamic_one_does():
    """The sentence and the table's ▲ agree: a fixed setting (or in-switch policy) that wins is named."""
    from ecngym.benchmark.board import SuiteBoard

    rows = _rows({"static_default": [10, 16, 12, 14], "static_tuned": [6, 9, 7, 8],
                  "const": [5.8, 8.9, 6.7, 7.8], "noisy": [3, 12, 4, 11]})
    s = score_scenario(rows, "x", "slowdown_p99_all", True, "slowdown_avg_>1MB", SEEDS)
    board = SuiteBoard(suite=None, scores=[s], aggregates={}, rankings={}, rows={}, dynamic={"noisy"})
    text = board.sentence(s)
    assert "no dynamic controller beats static_tuned" in text and "closest dynamic controller, noisy" in text
    assert "static controller(s) that do beat it: const (Δ +0.2" in text
    board.dynamic = {"noisy", "const"}
    assert board.sentence(s).startswith("x: yes: const (Δ +0.2")
