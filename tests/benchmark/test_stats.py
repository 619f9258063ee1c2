"""The suite statistics give the same numbers on the same inputs, to the last bit.

``data/stats_golden.json`` holds what :func:`ecngym.benchmark.stats.controller_aggregate` returned on
the inputs below when it ran on rliable 1.2.0 and arch 8.0.0 (the implementation before the
statistics moved into ``ecngym.benchmark.stats`` itself); rewrite it only when a change of the
numbers is intended, and say so in the changelog.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from ecngym.benchmark.stats import controller_aggregate

GOLDEN = Path(__file__).parent / "data" / "stats_golden.json"


def _cases() -> list[tuple[str, np.ndarray, np.ndarray | None, int, int]]:
    """(name, scores, static_tuned's scores or None, bootstrap replications, seed)."""
    rng = np.random.default_rng(20240611)
    a, tuned = rng.normal(1.3, 0.4, (5, 3)), rng.normal(1.0, 0.2, (5, 3))
    a_tie = a.copy()
    a_tie[:, 1] = tuned[:, 1]  # one scenario where both score alike (P = 0.5 there)
    learner, tuned4 = rng.normal(0.8, 0.5, (12, 1)), rng.normal(1.0, 0.1, (4, 1))  # 3 training x 4 test seeds
    coarse = np.round(rng.normal(0.5, 1.0, (6, 4)), 1)  # ties inside and across the samples
    coarse_tuned = np.round(rng.normal(0.4, 1.0, (6, 4)), 1)
    return [("a", a, tuned, 300, 7), ("a_tie", a_tie, tuned, 200, 3), ("learner", learner, tuned4, 250, 11),
            ("coarse", coarse, None, 150, 0), ("coarse_vs", coarse, coarse_tuned, 150, 5)]


def _outputs(name: str, scores: np.ndarray, tuned: np.ndarray | None, reps: int, seed: int) -> dict[str, object]:
    agg = controller_aggregate(name, scores, [f"s{i}" for i in range(scores.shape[1])], tuned, reps, seed)
    return {"iqm": agg.iqm, "iqm_ci": list(agg.iqm_ci), "optimality_gap": agg.optimality_gap,
            "optimality_gap_ci": list(agg.optimality_gap_ci), "p_improve": agg.p_improve,
            "p_improve_ci": list(agg.p_improve_ci), "profile": agg.profile.tolist(),
            "profile_ci": agg.profile_ci.tolist()}


def _same(got: object, want: object) -> bool:
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(_same, got, want))
    return (math.isnan(got) and math.isnan(want)) or got == want  # exact, not approximate


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
def test_aggregates_equal_the_recorded_outputs_bit_for_bit(case: tuple) -> None:
    want = json.loads(GOLDEN.read_text())["cases"][case[0]]
    got = _outputs(*case)
    for key, value in want.items():
        assert _same(got[key], value), f"{case[0]}.{key}: {got[key]} != recorded {value}"


if __name__ == "__main__":  # rewrite the golden file (only for an intended change of the numbers)
    GOLDEN.write_text(json.dumps({"cases": {c[0]: _outputs(*c) for c in _cases()}}, indent=1) + "\n")
