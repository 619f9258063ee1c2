"""The ``score_dense`` reward: every step, minus the change of the episode's score so far.

The score it follows is a mean FCT slowdown of the flows that finish in the episode,
``slowdown_avg_<bucket>`` (:func:`ecngym.envs.summary.episode_summary`): a flow counts once it has
finished, and a flow still running at the end is left out, so the denominator is the number of
finished flows, which no one knows at reset. With F_t the flows of the bucket finished by the end
of step t, S_t the sum of their slowdowns and M_t = S_t / F_t (0 while F_t = 0), the reward of step
t is::

    r_t = −(M_t − M_{t−1})  −  (Φ_t − Φ_{t−1}),      M_0 = Φ_0 = 0

* **−(M_t − M_{t−1})** pays each flow's contribution to the score as it completes: a flow finishing
  with slowdown s while the mean is M moves it by (s − M) / F_t; a step in which no flow of the
  bucket finishes pays 0.
* **Φ_t** = (S_t + R_t) / (F_t + N_t) − M_t charges the delay that running flows accrue: N_t flows
  of the bucket started (start ≤ t) and not finished, R_t the sum of their slowdowns so far,
  max(1, (t − start) / ideal FCT). At the episode's last step Φ_T = 0: the running flows leave
  the score there, as they leave the summary's mean.

Both sums telescope, so the undiscounted episode return is exactly −M_T = −score (the constant is
0), and the shaping term sums to 0 whatever the policy does: it is potential-based (Ng, Harada and
Russell, ICML 1999) for the undiscounted finite-horizon objective, which is the score, so the
policy that optimises the score is unchanged. (A learner that discounts with γ < 1 optimises an
approximation of the score, with or without the shaping; Ng et al.'s invariance under γ needs
γΦ_t − Φ_{t−1}, whose undiscounted sum is not −score.) Together the two terms are −(V_t − V_{t−1})
with V_t the mean slowdown so far over every started flow of the bucket, finished or not.

Where no flow of the bucket finishes the score is NaN and the return is 0. A percentile score
(``slowdown_p99_all``) is refused: it is not a sum over flows, so no flow has a share of it to pay
when it completes. The counts and sums come from the C++ ``FlowSlowdownTracker``
(``sim_backend/helper/flow-slowdown-tracker.h``), which visits only the running flows each step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ecngym.sim_backend.metrics import SIZE_BUCKETS

#: The score ``score_dense`` follows when ``env.reward.score`` is unset.
DEFAULT_SCORE = "slowdown_avg_all"
#: The metric prefix of a mean slowdown.
_MEAN = "slowdown_avg_"
#: Size ranges (bytes, [low, high)) by bucket name, as the episode summary buckets them.
_BUCKETS: dict[str, tuple[float, float]] = {**SIZE_BUCKETS, "all": (0, float("inf"))}
#: The tracker's "no upper bound".
_NO_BOUND = 2**64 - 1


def score_size_range(score: str) -> tuple[int, int]:
    """The flow-size range of a mean-slowdown score, as the tracker takes it.

    Args:
        score: An episode-summary metric.

    Returns:
        (smallest size counted, first size not counted) in bytes.

    Raises:
        ValueError: If ``score`` is not ``slowdown_avg_<bucket>`` (a percentile is refused with
            the reason).
    """
    known = [f"{_MEAN}{b}" for b in _BUCKETS]
    if score.startswith("slowdown_p"):
        raise ValueError(f"got {score!r}: a percentile of the slowdowns is not a sum over flows, so no flow has a "
                         f"share of it to pay when it completes and score_dense cannot make it its return; "
                         f"score_dense takes a mean slowdown: {known}")
    bucket = score.removeprefix(_MEAN)
    if not score.startswith(_MEAN) or bucket not in _BUCKETS:
        raise ValueError(f"got {score!r}; score_dense's return is minus a mean FCT slowdown: {known}")
    low, high = _BUCKETS[bucket]
    return int(low), (_NO_BOUND if np.isinf(high) else int(high))


def mean_finished_slowdown(records: Any, score: str) -> float:
    """The score ``score_dense`` follows, from flow records: the mean slowdown of the finished flows in its range.

    Args:
        records: Flow records (a DataFrame or ``Fabric.flow_columns``).
        score: A mean-slowdown metric (:func:`score_size_range`).

    Returns:
        The mean (NaN when no flow of the range finished), as the episode summary computes it.
    """
    low, high = score_size_range(score)
    finished = np.asarray(records["finished"], dtype=bool)
    sizes = np.asarray(records["size_bytes"])
    keep = finished & (sizes >= low) & (sizes < high)
    return float(np.asarray(records["slowdown"], dtype=np.float64)[keep].mean()) if keep.any() else float("nan")


class ScoreDenseReward:
    """The ``score_dense`` reward of one env: its running totals, step by step.

    Args:
        score: The mean-slowdown metric it follows (None: :data:`DEFAULT_SCORE`).

    Raises:
        ValueError: If ``score`` is not a mean slowdown (:func:`score_size_range`).
    """

    def __init__(self, score: str | None = None) -> None:
        self.score = score or DEFAULT_SCORE
        self._low, self._high = score_size_range(self.score)
        self._sim: Any = None
        self._tracker: Any = None
        self._value = 0.0

    def start(self, fabric: Any) -> None:
        """Start an episode on ``fabric`` (:class:`~ecngym.sim_backend.Fabric`, before its first step)."""
        self._sim = fabric.sim
        self._tracker = self._sim.flow_slowdown_tracker(self._low, self._high)
        self._value = 0.0

    def step(self, last: bool) -> float:
        """The reward of the step just simulated.

        Args:
            last: Whether it was the episode's last step (then the running flows leave the value).

        Returns:
            −(V_t − V_{t−1}), V the mean slowdown so far (the module's formula).
        """
        finished_sum, finished, running_sum, running = self._sim.flow_slowdowns(self._tracker)
        if last:
            value = finished_sum / finished if finished else 0.0
        else:
            count = finished + running
            value = (finished_sum + running_sum) / count if count else 0.0
        reward = self._value - value
        self._value = value
        return reward
