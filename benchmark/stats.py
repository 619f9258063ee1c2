"""Suite-level aggregates of normalized scores, as Agarwal et al. (NeurIPS'21, section 4) define them.

The paper: "Deep Reinforcement Learning at the Edge of the Statistical Precipice".

Per controller, the normalized scores of its scenarios form a matrix (test seeds x scenarios). From
it come the interquartile mean (IQM), the optimality gap to 1 (the mean shortfall below
``static_tuned``'s level), the probability of improvement over ``static_tuned`` (the chance that, on
a scenario drawn at random, the controller's score on a random seed beats ``static_tuned``'s), each
with a stratified-bootstrap 95 % confidence interval (resampling seeds within each scenario), and
the performance profile (the share of (scenario, seed) scores above each threshold τ, with its
bootstrap band).

The definitions, the bootstrap and its order of random draws are those of the paper's library,
rliable 1.2 (``rliable.metrics``, ``rliable.library.get_interval_estimates`` with its stratified
percentile bootstrap on ``arch``), written out here instead of imported: every rliable release
requires ``arch < 8``, and arch 7 does not import under pandas 3, so installing rliable always left a
dependency conflict. The outputs are identical to rliable's on the same inputs and seed
(``tests/benchmark/test_stats.py`` checks them bit for bit against outputs recorded with rliable).

Only scenarios where normalization is meaningful enter (``no_reference_gap`` scenarios are scored
on their raw metric only: :mod:`ecngym.benchmark.scoring`), and a controller's aggregate covers the
scenarios it ran (a DCTCP-only controller skips the RoCE ones; the board says how many).

The bootstrap is seeded (``seed``), so the same scores give the same intervals.
"""

from __future__ import annotations

import concurrent.futures
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.stats

#: Bootstrap replications (rliable's default is 50,000; fewer keep the board quick: each replication of
#: the probability of improvement is a Mann-Whitney test, ~1 ms).
DEFAULT_REPS = 500
#: The thresholds τ of the performance profile (normalized score).
PROFILE_TAUS = np.linspace(-1.0, 2.0, 31)


@dataclass
class Aggregate:
    """One controller's suite aggregates: point estimates and 95 % CIs."""

    controller: str
    scenarios: list[str]
    iqm: float
    iqm_ci: tuple[float, float]
    optimality_gap: float
    optimality_gap_ci: tuple[float, float]
    #: P(controller > static_tuned) and its CI (NaN for static_tuned itself)
    p_improve: float = float("nan")
    p_improve_ci: tuple[float, float] = (float("nan"), float("nan"))
    #: performance profile at :data:`PROFILE_TAUS`: fraction of scores > τ, lower and upper band
    profile: np.ndarray = field(default_factory=lambda: np.zeros(0))
    profile_ci: np.ndarray = field(default_factory=lambda: np.zeros((2, 0)))


def iqm(scores: np.ndarray) -> float:
    """The interquartile mean: the mean of the middle 50 % of all scores (25 % trimmed from each end).

    Args:
        scores: Normalized scores (runs x scenarios); every entry counts once.

    Returns:
        The IQM.
    """
    return float(scipy.stats.trim_mean(scores, proportiontocut=0.25, axis=None))


def optimality_gap(scores: np.ndarray, gamma: float = 1.0) -> float:
    """How far the scores fall short of ``gamma`` on average (scores above ``gamma`` count as ``gamma``).

    Args:
        scores: Normalized scores (runs x scenarios).
        gamma: The target level.

    Returns:
        ``gamma`` minus the mean of the scores clipped at ``gamma``.
    """
    return float(gamma - np.mean(np.minimum(scores, gamma)))


def probability_of_improvement(scores_x: np.ndarray, scores_y: np.ndarray) -> float:
    """P(X > Y): per scenario the Mann-Whitney U statistic over all run pairs, averaged over scenarios.

    A scenario where both score alike on every run counts 0.5 (as in rliable).

    Args:
        scores_x: X's scores (runs of X x scenarios).
        scores_y: Y's scores (runs of Y x the same scenarios); the run counts may differ.

    Returns:
        The probability that X's score on a random run beats Y's, averaged over the scenarios.
    """
    per_scenario = []
    for col in range(scores_x.shape[1]):
        x, y = scores_x[:, col], scores_y[:, col]
        if np.array_equal(x, y):
            per_scenario.append(0.5)
        else:
            u, _ = scipy.stats.mannwhitneyu(x, y, alternative="greater")
            per_scenario.append(u / (len(x) * len(y)))
    return float(np.mean(per_scenario))


def _iqm_and_gap(x: np.ndarray) -> np.ndarray:
    return np.array([iqm(x), optimality_gap(x, 1.0)])


def _profile(x: np.ndarray) -> np.ndarray:
    """The performance profile: the share of all scores above each τ of :data:`PROFILE_TAUS`."""
    return np.array([np.mean(x > tau) for tau in PROFILE_TAUS])


def stratified_bootstrap(statistic: Callable[..., np.ndarray | float], samples: tuple[np.ndarray, ...], reps: int,
                         seed: int, size: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """A statistic and its stratified percentile-bootstrap confidence interval.

    Each replication resamples the runs (rows) of every sample with replacement, independently in
    each scenario (column) and independently per sample, and evaluates the statistic on the
    resampled matrices; the interval is the replications' ``(1 - size) / 2`` and ``(1 + size) / 2``
    percentiles. The draws (NumPy's legacy ``RandomState`` seeded with ``seed``, one
    ``choice(runs, shape)`` per sample and replication, in order) and the percentile arithmetic
    are rliable 1.2's on arch 8, so the intervals equal rliable's with the global NumPy seed set to
    ``seed``.

    Args:
        statistic: Maps the samples (as positional arguments) to a scalar or a 1-D array.
        samples: The score matrices (runs x scenarios), all with the same scenarios.
        reps: Bootstrap replications.
        seed: Seed of the resampling.
        size: Coverage of the interval.

    Returns:
        The statistic on the samples (1-D) and its interval (2 x the statistic's length: lower, upper).
    """
    rng = np.random.RandomState(seed)
    point = np.atleast_1d(np.asarray(statistic(*samples), float))
    columns = [np.ogrid[0:0, 0:x.shape[1]][1] for x in samples]
    results = np.zeros((reps, point.shape[0]))
    for rep in range(reps):
        resampled = [x[rng.choice(len(x), x.shape, replace=True), col] for x, col in zip(samples, columns, strict=True)]
        results[rep] = statistic(*resampled)
    alpha = (1.0 - size) / 2
    percentiles = [100 * alpha, 100 * (1.0 - alpha)]
    bounds = np.array([np.percentile(results[:, i], percentiles) for i in range(point.shape[0])])
    return point, bounds.T


def controller_aggregate(name: str, scores: np.ndarray, scenarios: list[str], tuned_scores: np.ndarray | None,
                         reps: int, seed: int) -> Aggregate:
    """One controller's aggregates, its bootstrap seeded from ``seed`` and its name.

    Seeded per controller, so a controller's intervals do not depend on which others are on the
    board, nor on the order or the process they are computed in.

    Args:
        name: The controller.
        scores: Its normalized scores (test seeds x scenarios).
        scenarios: The scenarios of the columns.
        tuned_scores: ``static_tuned``'s scores on the same scenarios (None: no probability of improvement).
        reps: Bootstrap replications.
        seed: Seed of the suite's bootstrap.
    """
    own_seed = (seed + zlib.crc32(name.encode())) % 2**32
    points, cis = stratified_bootstrap(_iqm_and_gap, (scores,), reps, own_seed)
    profile, profile_ci = stratified_bootstrap(_profile, (scores,), reps, own_seed)
    agg = Aggregate(controller=name, scenarios=list(scenarios), iqm=float(points[0]),
                    iqm_ci=(float(cis[0][0]), float(cis[1][0])), optimality_gap=float(points[1]),
                    optimality_gap_ci=(float(cis[0][1]), float(cis[1][1])), profile=profile, profile_ci=profile_ci)
    if tuned_scores is not None:
        p_point, p_ci = stratified_bootstrap(probability_of_improvement, (scores, tuned_scores), reps, own_seed)
        agg.p_improve = float(p_point[0])
        agg.p_improve_ci = (float(p_ci[0][0]), float(p_ci[1][0]))
    return agg


def aggregates(matrices: dict[str, pd.DataFrame], tuned: str = "static_tuned", reps: int = DEFAULT_REPS,
               seed: int = 0, pool: concurrent.futures.Executor | None = None) -> dict[str, Aggregate]:
    """The aggregates of each controller's normalized scores (IQM, optimality gap, P(improvement), profile).

    Args:
        matrices: Controller -> its normalized scores, a DataFrame (test seeds x scenarios) without
            missing values (a scenario a controller did not complete is left out of its columns).
        tuned: The reference the probability of improvement is measured against.
        reps: Bootstrap replications.
        seed: Seed of the bootstrap.
        pool: Worker processes to spread the controllers over (None: this process). The results
            are the same either way (each controller's bootstrap has its own seed).

    Returns:
        Controller -> :class:`Aggregate` (controllers with no scenario are left out).
    """
    calls = []
    for name, m in matrices.items():
        if m.shape[1] == 0:
            continue
        tuned_scores = None
        if tuned in matrices and name != tuned:
            common = [c for c in m.columns if c in matrices[tuned].columns]
            if common:
                m, tuned_scores = m[common], matrices[tuned][common].to_numpy(float)
        calls.append((name, m.to_numpy(float), [str(c) for c in m.columns], tuned_scores, reps, seed))
    if pool is None:
        results = [controller_aggregate(*call) for call in calls]
    else:
        results = list(pool.map(controller_aggregate, *zip(*calls, strict=True))) if calls else []
    return {agg.controller: agg for agg in results}
