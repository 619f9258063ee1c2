"""Normalized scores against the two static references, per (controller, scenario, test seed).

For a lower-is-better score S (a slowdown)::

    normalized(c, seed) = (S_default(seed) − S_c(seed)) / (mean S_default − mean S_tuned)

and symmetrically (S_c − S_default) / (mean S_tuned − mean S_default) for a higher-is-better one,
so ``static_default`` scores 0 and ``static_tuned`` 1 on average; above 1 beats what one well-tuned
static setting gets. The numerator is paired per test seed (every controller ran the same trace
at a seed, so the trace's own difficulty cancels); the denominator is the references' gap over
all test seeds (one per-seed gap could be near 0 and blow a single seed up).

**The no-gap rule.** Where ``static_tuned`` does not beat ``static_default`` clearly, the ratio is
meaningless (a denominator within noise of 0 turns noise into huge normalized scores). So unless
the paired 95 % CI (Student t over the test seeds) of S_default − S_tuned (oriented so that
positive means ``static_tuned`` is better) lies above 0, the scenario is flagged
``no_reference_gap``: it is scored on its raw metric only, left out of the suite's normalized
aggregates, and the page says so. (With fewer than two test seeds no CI exists: flagged too.)

The raw score and the scenario's second axis (a large-flow slowdown, for the Pareto view) are kept
beside the normalized score.

**Verdicts are paired.** Whether a controller beats ``static_tuned`` is read from the per-seed
differences ``Δ(seed) = S_tuned(seed) − S_c(seed)`` (oriented so that positive = c better), with a
paired Student-t 95 % CI over the test seeds: "beats" when the CI lies above 0. The normalized
score's own CI also carries the seeds' spread of the default's score, so a constant better on every
seed could read as "does not beat" from it; the paired difference cancels what the seed's trace
does to both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ecngym.results.ranking import confidence_interval

#: The reference controllers (their rows are labelled references, never ranked as competitors); ``random``
#: (a template drawn uniformly every interval) is the floor a learner must clear.
REFERENCES = ("static_default", "static_tuned", "static_tuned_per_role", "phase_tuned", "oracle_phase", "random")
#: The references a scenario has only where its references file holds them (``static_tuned_per_role``:
#: searched where the controlled ports span several switch layers; ``phase_tuned``: where the scenario
#: has several traffic phases; both by files written since they exist).
OPTIONAL_REFERENCES = ("static_tuned_per_role", "phase_tuned")


@dataclass
class ControllerScore:
    """One controller on one scenario, over its test seeds."""

    controller: str
    reference: bool
    seeds: int
    raw_mean: float
    raw_ci: tuple[float, float]
    second_mean: float
    normalized_mean: float = float("nan")
    normalized_ci: tuple[float, float] = (float("nan"), float("nan"))
    #: S_tuned − S_c per test seed (raw units, positive = better than static_tuned): mean and paired 95 % CI
    delta_tuned_mean: float = float("nan")
    delta_tuned_ci: tuple[float, float] = (float("nan"), float("nan"))
    #: the seeds on which it beats static_tuned, of those both ran
    wins_over_tuned: tuple[int, int] = (0, 0)

    @property
    def beats_tuned(self) -> bool:
        """Whether the paired 95 % CI of S_tuned − S_c lies above 0 (it beats ``static_tuned``)."""
        return math.isfinite(self.delta_tuned_ci[0]) and self.delta_tuned_ci[0] > 0.0


@dataclass
class ScenarioScores:
    """The scores of every controller on one scenario.

    ``raw``, ``second`` and ``normalized`` are DataFrames indexed by controller with one column per
    test seed (``normalized`` is empty when ``no_reference_gap``).
    """

    scenario: str
    score: str
    lower_is_better: bool
    second_axis: str
    seeds: list[int]
    raw: pd.DataFrame
    second: pd.DataFrame
    normalized: pd.DataFrame
    #: S_default − S_tuned oriented so that positive = static_tuned better: mean, CI low, CI high
    reference_gap: tuple[float, float, float]
    no_reference_gap: bool
    controllers: list[ControllerScore] = field(default_factory=list)
    #: oracle_phase − static_tuned per seed (normalized units, raw units under no_reference_gap): mean, low, high
    headroom: tuple[float, float, float] = (float("nan"), float("nan"), float("nan"))
    missing_references: list[str] = field(default_factory=list)

    def by_name(self, name: str) -> ControllerScore | None:
        """The controller's scores, or None if it has none here."""
        return next((c for c in self.controllers if c.controller == name), None)

    def dynamic_beats_tuned(self, dynamic: set[str]) -> list[str]:
        """The dynamic controllers (names in ``dynamic``) whose paired CI of S_tuned − S_c lies above 0."""
        return [c.controller for c in self.controllers if c.controller in dynamic and not c.reference
                and c.beats_tuned]


def _mean_ci(values: np.ndarray) -> tuple[float, tuple[float, float]]:
    finite = values[np.isfinite(values)]
    return (float(finite.mean()) if finite.size else float("nan")), confidence_interval(finite)


def score_scenario(rows: pd.DataFrame, scenario: str, score: str, lower_is_better: bool, second_axis: str,
                   seeds: list[int]) -> ScenarioScores:
    """Score one scenario's episode rows.

    Args:
        rows: Its episode rows (columns ``controller``, ``seed``, the metrics), one per
            (controller, seed).
        scenario: Its name.
        score: The score metric.
        lower_is_better: The score's direction.
        second_axis: The second-axis metric.
        seeds: The test seeds scored.

    Returns:
        The scores (``missing_references`` names a reference without a row at every seed; then
        nothing is normalized and the scenario counts as ``no_reference_gap``).
    """
    rows = rows[rows["seed"].isin(seeds)]
    raw = rows.pivot_table(index="controller", columns="seed", values=score, aggfunc="last", dropna=False)
    raw = raw.reindex(columns=seeds).astype(float)
    second = (rows.pivot_table(index="controller", columns="seed", values=second_axis, aggfunc="last", dropna=False)
              .reindex(index=raw.index, columns=seeds).astype(float)) if second_axis in rows else raw * np.nan
    sign = 1.0 if lower_is_better else -1.0
    missing = [r for r in ("static_default", "static_tuned") if r not in raw.index or raw.loc[r].isna().any()]
    gap = (float("nan"),) * 3
    normalized = pd.DataFrame(index=raw.index, columns=seeds, dtype=float)
    if not missing:
        diff = sign * (raw.loc["static_default"] - raw.loc["static_tuned"]).to_numpy(float)
        low, high = confidence_interval(diff)
        gap = (float(diff.mean()), low, high)
    no_gap = bool(missing) or not (math.isfinite(gap[1]) and gap[1] > 0)
    if not no_gap:
        normalized = sign * (raw.loc["static_default"] - raw) / gap[0]
    out = ScenarioScores(scenario=scenario, score=score, lower_is_better=lower_is_better, second_axis=second_axis,
                         seeds=list(seeds), raw=raw, second=second, normalized=normalized if not no_gap else
                         normalized.iloc[0:0], reference_gap=gap, no_reference_gap=no_gap, missing_references=missing)
    for name in raw.index:
        raw_mean, raw_ci = _mean_ci(raw.loc[name].to_numpy(float))
        entry = ControllerScore(controller=str(name), reference=name in REFERENCES,
                                seeds=int(raw.loc[name].notna().sum()), raw_mean=raw_mean, raw_ci=raw_ci,
                                second_mean=float(np.nanmean(second.loc[name])) if second.loc[name].notna().any()
                                else float("nan"))
        if not no_gap:
            entry.normalized_mean, entry.normalized_ci = _mean_ci(normalized.loc[name].to_numpy(float))
        if "static_tuned" in raw.index:
            delta = sign * (raw.loc["static_tuned"] - raw.loc[name]).to_numpy(float)
            entry.delta_tuned_mean, entry.delta_tuned_ci = _mean_ci(delta)
            finite = delta[np.isfinite(delta)]
            entry.wins_over_tuned = (int((finite > 0).sum()), int(finite.size))
        out.controllers.append(entry)
    if "oracle_phase" in raw.index and "static_tuned" in raw.index:
        table = normalized if not no_gap else -sign * raw  # higher = better either way
        diff = (table.loc["oracle_phase"] - table.loc["static_tuned"]).to_numpy(float)
        diff = diff[np.isfinite(diff)]
        if diff.size:
            low, high = confidence_interval(diff)
            out.headroom = (float(diff.mean()), low, high)
    key = (lambda c: -c.normalized_mean) if not no_gap else (lambda c: sign * c.raw_mean)
    out.controllers.sort(key=lambda c: (c.reference, _nan_last(key(c))))
    return out


def _nan_last(x: float) -> float:
    return x if math.isfinite(x) else math.inf


def normalized_matrices(scores: list[ScenarioScores]) -> dict[str, pd.DataFrame]:
    """Controller -> its normalized scores (test seeds x scenarios with a reference gap it completed).

    The input of :func:`ecngym.benchmark.stats.aggregates`.
    """
    columns: dict[str, dict[str, np.ndarray]] = {}
    for s in scores:
        if s.no_reference_gap:
            continue
        for name in s.normalized.index:
            values = s.normalized.loc[name].to_numpy(float)
            if np.isfinite(values).all():
                columns.setdefault(str(name), {})[s.scenario] = values
    return {name: pd.DataFrame(cols) for name, cols in columns.items()}
