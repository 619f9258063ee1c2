"""The state-dependence measure: mutual information between actions and the phase or queue, on synthetic sequences."""

from __future__ import annotations

import numpy as np
import pytest

from ecngym.benchmark.adaptivity import mutual_information_bits, phase_index, queue_levels, state_dependence

STARTS = [0, 1_000, 2_000]


def _records(actions_of, n: int = 600, units: int = 1, seed: int = 0) -> list[tuple[int, np.ndarray, float]]:
    """N decisions spread over the three phases; queue bytes rise and fall with a period of 7 decisions."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        t = i * 3_000 // n
        queue = float((i % 7) * 1_000)
        out.append((t, np.asarray(actions_of(t, queue, rng, units)).reshape(-1), queue))
    return out


def test_phase_locked_actions_carry_the_phase():
    dep = state_dependence(_records(lambda t, q, rng, u: [t // 1_000 * 2]), STARTS)
    assert dep["mi_phase_bits"] == pytest.approx(np.log2(3), abs=0.01)
    assert dep["phase_modes"] == [0, 2, 4] and dep["distinct_actions"] == 3


def test_uniform_random_actions_carry_nothing():
    """Uniform draws over 7 templates: ~0 bits with the phase and the queue (86 % of them are "off the mode")."""
    values = [state_dependence(_records(lambda t, q, rng, u: rng.integers(7, size=u), units=4, seed=s), STARTS)
              for s in range(20)]
    for key in ("mi_phase_bits", "mi_queue_bits"):
        mean = np.mean([v[key] for v in values])
        assert abs(mean) < 0.005, (key, mean)


def test_queue_reactive_actions_carry_the_queue_not_the_phase():
    dep = state_dependence(_records(lambda t, q, rng, u: [int(q >= 3_500)]), STARTS)
    assert dep["mi_queue_bits"] > 0.5
    assert abs(dep["mi_phase_bits"]) < 0.01


def test_one_template_carries_nothing():
    dep = state_dependence(_records(lambda t, q, rng, u: [3]), STARTS)
    assert dep["mi_phase_bits"] == 0.0 and dep["mi_queue_bits"] == 0.0 and dep["distinct_actions"] == 1


def test_miller_madow_removes_the_plug_in_bias():
    """Independent variables: plug-in MI is biased up by ~(m_a - 1)(m_s - 1)/(2N ln 2); the corrected one is not."""
    rng = np.random.default_rng(1)
    n, estimates, plugin = 300, [], []
    for _ in range(200):
        a, s = rng.integers(6, size=n), rng.integers(4, size=n)
        estimates.append(mutual_information_bits(a, s))
        joint = np.unique(np.stack([a, s]), axis=1, return_counts=True)[1] / n
        pa, ps = np.bincount(a) / n, np.bincount(s) / n
        plugin.append(float((joint * np.log2(joint)).sum() - (pa * np.log2(pa)).sum() - (ps * np.log2(ps)).sum()))
    assert np.mean(plugin) == pytest.approx(5 * 3 / (2 * n * np.log(2)), rel=0.25)
    assert abs(np.mean(estimates)) < 0.2 * np.mean(plugin)


def test_helpers():
    assert phase_index(np.array([0, 999, 1_000, 5_000]), STARTS).tolist() == [0, 0, 1, 2]
    assert queue_levels(np.zeros(10)).tolist() == [0] * 10  # coinciding quartiles: one bin
    assert sorted(set(queue_levels(np.arange(100.0)).tolist())) == [0, 1, 2, 3]
    assert np.isnan(mutual_information_bits([], []))
    with pytest.raises(ValueError, match="one state per action"):
        mutual_information_bits([1, 2], [1])
