"""Suite-level aggregates of normalized scores, with rliable (Agarwal et al., NeurIPS'21).

Per controller, the normalized scores of its scenarios form a matrix (test seeds x scenarios).
rliable computes from it the interquartile mean (IQM), the optimality gap to 1 (the mean shortfall
below ``static_tuned``'s level), the probability of improvement over ``static_tuned`` (the chance
that, on a scenario drawn at random, the controller's score on a random seed beats
``static_tuned``'s), each with a stratified-bootstrap 95 % confidence interval (resampling seeds
within each scenario), and the performance profile (the share of (scenario, seed) scores above each
threshold τ, with its bootstrap band).

Only scenarios where normalization is meaningful enter (``no_reference_gap`` scenarios are scored
on their raw metric only: :mod:`ecngym.benchmark.scoring`), and a controller's aggregate covers the
scenarios it ran (a DCTCP-only controller skips the RoCE ones; the board says how many).

The bootstrap is seeded (``seed``), so the same scores give the same intervals
(:func:`_seeded_bootstrap` also says how rliable 1.2 runs on arch 8).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ecngym.error import EcnGymError

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


def _rliable_library() -> object:
    """``rliable.library``, or an error that says how to fix the arch release it needs.

    rliable 1.2 declares ``arch < 8``, but arch 7 does not import under pandas 3 (its univariate
    module calls pandas' ``deprecate_kwarg`` with the old signature); arch 8 does, and
    :func:`_seeded_bootstrap` runs rliable on it.

    Raises:
        EcnGymError: If ``rliable.library`` cannot be imported, naming the fix.
    """
    try:
        from rliable import library
    except (ImportError, TypeError) as exc:
        raise EcnGymError(f"rliable cannot be imported ({type(exc).__name__}: {exc}); under pandas 3 it needs "
                          "arch 8, which its metadata does not allow: pip install 'arch>=8'") from None
    return library


@contextlib.contextmanager
def _seeded_bootstrap(seed: int) -> Iterator[None]:
    """Make rliable's stratified bootstraps repeatable and runnable on the installed arch release.

    rliable 1.2's bootstraps draw their resampling indices from NumPy's global random state
    (``np.random.choice``), so the block seeds that state (and restores it afterwards). rliable
    also hands ``random_state`` to arch's ``IIDBootstrap``, which arch 8 (the first release that
    imports under pandas 3) no longer takes (it reads any unknown keyword as data and refuses it);
    with arch 8 the block therefore drops that keyword on its way into arch.
    """
    import arch
    from arch.bootstrap import IIDBootstrap

    original = IIDBootstrap.__init__
    if int(arch.__version__.split(".")[0]) >= 8:

        def init(self: IIDBootstrap, *args: object, random_state: object = None, **kwargs: object) -> None:
            original(self, *args, **kwargs)

        IIDBootstrap.__init__ = init
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)
        IIDBootstrap.__init__ = original


def _iqm_and_gap(x: np.ndarray) -> np.ndarray:
    from rliable import metrics

    return np.array([metrics.aggregate_iqm(x), metrics.aggregate_optimality_gap(x, 1.0)])


def controller_aggregate(name: str, scores: np.ndarray, scenarios: list[str], tuned_scores: np.ndarray | None,
                         reps: int, seed: int) -> Aggregate:
    """One controller's aggregates (rliable), its bootstrap seeded from ``seed`` and its name.

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
    from rliable import metrics

    rly = _rliable_library()
    logging.getLogger("absl").setLevel(logging.WARNING)  # rliable logs one INFO line per call
    own_seed = (seed + zlib.crc32(name.encode())) % 2**32
    with _seeded_bootstrap(own_seed):
        points, cis = rly.get_interval_estimates({name: scores}, _iqm_and_gap, reps=reps)
    with _seeded_bootstrap(own_seed):
        profiles, profile_cis = rly.create_performance_profile({name: scores}, PROFILE_TAUS, reps=reps)
    ci = cis[name]
    agg = Aggregate(controller=name, scenarios=list(scenarios), iqm=float(points[name][0]),
                    iqm_ci=(float(ci[0][0]), float(ci[1][0])), optimality_gap=float(points[name][1]),
                    optimality_gap_ci=(float(ci[0][1]), float(ci[1][1])),
                    profile=np.asarray(profiles[name], float), profile_ci=np.asarray(profile_cis[name], float))
    if tuned_scores is not None:
        with _seeded_bootstrap(own_seed):
            p_points, p_cis = rly.get_interval_estimates({name: (scores, tuned_scores)},
                                                         metrics.probability_of_improvement, reps=reps)
        agg.p_improve = float(np.ravel(p_points[name])[0])
        agg.p_improve_ci = (float(np.ravel(p_cis[name][0])[0]), float(np.ravel(p_cis[name][1])[0]))
    return agg


def aggregates(matrices: dict[str, pd.DataFrame], tuned: str = "static_tuned", reps: int = DEFAULT_REPS,
               seed: int = 0, pool: concurrent.futures.Executor | None = None) -> dict[str, Aggregate]:
    """Rliable's aggregates of each controller's normalized scores.

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
