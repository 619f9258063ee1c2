"""Ranking controllers per scenario from the store's episode rows (no output: the terminal table and the page use it).

The score (``--score``, default :data:`DEFAULT_SCORE`) is one of the episode metrics; for each
controller (name + parameters) it is averaged over seeds, with a 95 % confidence interval from
Student's t over the per-seed values (none with one seed). Lower is better except for the metrics
in :data:`HIGHER_IS_BETTER`.

Every controller of a ranking ran the same trace at each seed, so the ranking also gives each
controller's **paired** difference from the leader: the mean over seeds of (its score − the
leader's score at that seed), with a Student-t 95 % interval over those per-seed differences.
The shared trace cancels out of a difference, so this interval is far narrower than the two
controllers' own intervals suggest; one that excludes 0 says the two differ at the 95 % level
(a per-pair test: with many controllers, some such calls are false by chance).

Rows are only ranked against rows measured on the same traffic:

* A scenario (env id + resolved env config without its action space, ``scenario_hash``) is ranked
  on its own.
* At each seed, the trace that most controllers ran is the reference; a row measured on another
  trace at that seed (a changed workload generator, a different trace file) is **refused** from the
  ranking and listed with the reason.
* Controllers that ran different seed sets ran different traces: each set of (seed, trace) pairs
  (its ``trace_set`` hash) gets its own ranking table.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ecngym.error import ConfigError
from ecngym.results.store import COLUMNS, canonical_hash
from ecngym.validation import Real, Text, check

#: p99 FCT slowdown of flows under 100 KB: the latency that ECN tuning is mostly about (LAECN, ACC).
DEFAULT_SCORE = "slowdown_p99_<100KB"
#: Metrics where a larger value ranks higher (``return_last10_mean``: SB3 training rows stored
#: before it became ``reward_last10_mean``, so older stores still rank the right way).
HIGHER_IS_BETTER = frozenset({"return", "utilization", "flows_finished", "reward_last10_mean", "return_last10_mean"})
#: Columns shown beside the score (when present).
CONTEXT_METRICS = ("slowdown_p50_<100KB", "slowdown_p99_all", "queue_p99_bytes", "utilization", "inference_us_mean")
#: Short column labels for the terminal table.
LABELS = {"slowdown_p99_<100KB": "p99 slowdown <100KB", "slowdown_p50_<100KB": "p50 <100KB",
          "slowdown_p99_all": "p99 all", "queue_p99_bytes": "queue p99 B", "utilization": "util",
          "inference_us_mean": "act µs"}


@dataclass
class Ranking:
    """One ranking table: the controllers of one scenario measured on one set of traces."""

    scenario: str
    scenario_hash: str
    env_id: str
    trace_set: str                 # hash of the sorted (seed, trace hash) pairs
    traces: dict[int, str]         # seed -> trace hash
    score: str
    table: pd.DataFrame            # one row per controller, ranked
    rows: pd.DataFrame             # the episode rows behind it
    refused: list[str] = field(default_factory=list)


def confidence_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Student-t interval of the mean of ``values`` (nan, nan with fewer than two finite values).

    Args:
        values: The sample (non-finite values are left out).
        level: The confidence level, in (0, 1).

    Returns:
        (low, high).

    Raises:
        ConfigError: If ``level`` is not a number in (0, 1).
    """
    from scipy import stats

    level = check("level", level, Real(0, 1, low_open=True, high_open=True))
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if len(values) < 2:
        return float("nan"), float("nan")
    sem = stats.sem(values)
    if sem == 0:
        return float(values.mean()), float(values.mean())
    low, high = stats.t.interval(level, len(values) - 1, loc=values.mean(), scale=sem)
    return float(low), float(high)


def paired_difference(values: pd.Series, reference: pd.Series) -> tuple[float, float, float]:
    """Mean of ``values − reference`` over their common index (seeds) and its Student-t 95 % interval.

    Returns:
        (mean, low, high); the bounds are nan with fewer than two common seeds, and the mean too
        with none.
    """
    diff = (values.astype(float) - reference.astype(float)).dropna()
    low, high = confidence_interval(diff.to_numpy())
    return (float(diff.mean()) if len(diff) else float("nan")), low, high


def check_scenario_hashes(scenario_hashes: Any) -> list[str] | None:
    """``scenario_hashes`` as a list of strings, or None (every scenario).

    Raises:
        ConfigError: Naming ``scenario_hashes`` if it is a single string (not a list of one) or
            not a collection, or ``scenario_hashes[i]`` if an element is not a string.
    """
    if scenario_hashes is None:
        return None
    if isinstance(scenario_hashes, (str, bytes)) or not isinstance(scenario_hashes, Collection):
        raise ConfigError("scenario_hashes", f"got {scenario_hashes!r}, expected a list of scenario hashes "
                                             "(strings), or None for every scenario")
    return check("scenario_hashes", list(scenario_hashes), list[Text])


def rank(episodes: pd.DataFrame, score: str = DEFAULT_SCORE, scenario_hashes: list[str] | None = None,
         by: str = "scenario_hash", references: Collection[str] = ()) -> tuple[list[Ranking], list[str]]:
    """Rank the episode rows (:meth:`ResultStore.episodes`) per scenario and trace set.

    Args:
        episodes: The store's rows.
        score: The metric to rank by.
        scenario_hashes: Only these scenarios (a list of hashes; all when None).
        by: What makes one scenario: ``scenario_hash`` (the env config), or ``scenario`` (the
            name: for rows a caller has already found to run the same traffic, such as a suite
            scenario's learners that observe or are rewarded their own way; the ranking then
            carries the rows' most common scenario hash).
        references: Controller names that are references: listed in the table at their score's
            place, labelled (``rank`` None, ``reference`` True), never ranked; the ranks and the
            leader the paired differences are taken from are the other controllers'.

    Returns:
        (the rankings, the refusals: one sentence per row kept out of a ranking and why).

    Raises:
        ConfigError: If ``score`` is no metric of the rows (a provenance column of the store, such
            as ``controller`` or ``seed``, is none), or ``scenario_hashes`` is not a collection
            of strings (:func:`check_scenario_hashes`).
    """
    scenario_hashes = check_scenario_hashes(scenario_hashes)
    if by not in ("scenario_hash", "scenario"):
        raise ConfigError("by", f"got {by!r}, expected 'scenario_hash' or 'scenario'")
    rows = episodes[episodes["command"] != "train"]
    if scenario_hashes is not None:
        rows = rows[rows["scenario_hash"].isin(scenario_hashes)]
    metrics = [c for c in rows.columns if c not in COLUMNS]  # the rest are the metrics MAP's keys
    if score not in metrics:
        raise ConfigError("score", f"got {score!r}, not a metric of the stored episodes; known: {sorted(metrics)}")
    # the latest row of each (scenario, controller, seed): a rerun with a newer version supersedes
    rows = rows.sort_values("created_at", kind="stable").drop_duplicates(
        ["scenario_hash", "controller_hash", "seed"], keep="last")
    ascending = score not in HIGHER_IS_BETTER
    rankings, refused = [], []
    for _, scen in rows.groupby(by, sort=False):
        scenario_hash = scen["scenario_hash"].value_counts().index[0]
        reference: dict[int, str] = {}
        for seed, at_seed in scen.groupby("seed"):
            counts = Counter(at_seed["trace_hash"])
            reference[int(seed)] = max(counts, key=lambda h: (counts[h], -at_seed.index[at_seed["trace_hash"] == h][0]))
        other = scen["trace_hash"].to_numpy() != scen["seed"].map(reference).to_numpy()
        scenario_label = f"{scen['scenario'].iloc[0]} [{scenario_hash[:8]}]"
        messages = [f"{scenario_label}: refused {r.controller} seed {r.seed} (row {r.row_id[:10]}): measured on trace "
                    f"{r.trace_hash[:12]}, the other controllers at seed {r.seed} ran trace "
                    f"{reference[int(r.seed)][:12]}; rows of different traces are not ranked together"
                    for r in scen[other].itertuples()]
        refused += messages
        kept = scen[~other]
        trace_sets = kept.groupby("controller_hash")["seed"].apply(
            lambda seeds, reference=reference: canonical_hash(sorted((int(s), reference[int(s)]) for s in seeds), 12))
        for trace_set, controllers in trace_sets.groupby(trace_sets):
            group = kept[kept["controller_hash"].isin(controllers.index)]
            seeds = sorted(int(s) for s in group["seed"].unique())
            rankings.append(Ranking(scenario=str(scen["scenario"].iloc[0]), scenario_hash=str(scenario_hash),
                                    env_id=str(scen["env_id"].iloc[0]), trace_set=str(trace_set),
                                    traces={s: reference[s] for s in seeds}, score=score,
                                    table=_table(group, score, ascending, references), rows=group, refused=messages))
    return rankings, refused


def _table(rows: pd.DataFrame, score: str, ascending: bool, references: Collection[str] = ()) -> pd.DataFrame:
    names = rows.groupby("controller_hash")["controller"].first()
    ambiguous = names[names.duplicated(keep=False)].index  # one name, several parameter sets
    out = []
    for chash, group in rows.groupby("controller_hash"):
        values = group[score].to_numpy(float)
        low, high = confidence_interval(values)
        entry = {"controller": names[chash] + (f" [{chash[:6]}]" if chash in ambiguous else ""),
                 "controller_hash": chash, "reference": names[chash] in references,
                 "score_mean": float(group[score].astype(float).mean()),  # pandas skips nan, quietly
                 "ci95_low": low, "ci95_high": high, "seeds": len(values),
                 "params": group["controller_params"].iloc[-1], "row_ids": list(group["row_id"])}
        for metric in CONTEXT_METRICS:
            if metric in group:
                entry[metric] = float(group[metric].astype(float).mean())
        out.append(entry)
    table = pd.DataFrame(out).sort_values("score_mean", ascending=ascending, kind="stable", na_position="last")
    table = table.reset_index(drop=True)
    competitors = ~table["reference"]
    ranks = pd.Series([None] * len(table), dtype=object)
    ranks[competitors] = range(1, int(competitors.sum()) + 1)
    table.insert(0, "rank", ranks)
    by_seed = rows.groupby(["controller_hash", "seed"])[score].first().astype(float)
    # the leader is the first competitor (the first row when every row is a reference)
    leader = by_seed.loc[table["controller_hash"][competitors].iloc[0] if competitors.any()
                         else table["controller_hash"].iloc[0]]
    paired = [paired_difference(by_seed.loc[h], leader) for h in table["controller_hash"]]
    table["delta_vs_leader"], table["delta_ci95_low"], table["delta_ci95_high"] = map(list, zip(*paired, strict=True))
    return table


def rank_text(row: Any, competitors: int) -> str:
    """A ranking row's place: ``3``, ``ref`` for a reference, ``—`` when there is nobody to rank against."""
    if row.rank is None or (isinstance(row.rank, float) and not math.isfinite(row.rank)):
        return "ref"
    return str(row.rank) if competitors > 1 else "—"


def fmt_number(x: Any, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits; ``—`` for None, NaN or an infinity."""
    return "—" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{digits}g}"


def paired_text(row: Any) -> str:
    """``+1.2 [0.3, 2.1]``: a ranking row's paired difference from the leader, 2 digits (``—`` for the leader)."""
    if row.rank == 1 or not math.isfinite(row.delta_vs_leader):
        return "—"
    return f"{row.delta_vs_leader:+.2g} [{fmt_number(row.delta_ci95_low, 2)}, {fmt_number(row.delta_ci95_high, 2)}]"
