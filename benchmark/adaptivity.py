"""Does a policy react to the state? Mutual information between its actions and the traffic phase or queue.

The share of decisions that differ from a policy's most frequent action cannot tell a policy that
follows the traffic from one that scatters: a template drawn uniformly from 7 is off its mode 86 %
of the time. The mutual information I(A; S) between the action A and a state variable S is 0 for
any policy whose actions do not depend on S (the random reference among them), whatever their
spread, and log2(#phases) bits at most for the phase. Two state variables are measured, each
decision's

* **phase**: the scenario's traffic phase (``protocol.phases``) at the decision's time;
* **queue**: the controlled ports' mean data-queue bytes over the interval before the decision
  (what the decision could see), discretised into its quartiles over the episode's decisions
  (fewer bins when quartiles coincide, as with an empty queue most of the time).

A decision with one action per unit (port, layer) gives one sample per unit, paired with the
decision's state. The estimate is the plug-in one with the Miller–Madow bias correction (Miller
1955): each entropy gets (m − 1) / (2N) nats added, m its occupied cells and N the samples, which
removes the first-order bias (m_A − 1)(m_S − 1) / (2N ln 2) bits that a plug-in MI of independent
variables has. The corrected estimate can fall slightly below 0; it is reported as it is.
Successive decisions are not independent samples, so the estimate is a description of the
episode, not a test; the random reference's value beside it is the yardstick.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

#: Quantile bins of the queue state [OURS].
QUEUE_BINS = 4


def _entropy_mm_nats(labels: np.ndarray) -> float:
    """Plug-in entropy of a 1-D integer array with the Miller–Madow correction (nats)."""
    _, counts = np.unique(labels, return_counts=True)
    n = counts.sum()
    p = counts / n
    return float(-(p * np.log(p)).sum() + (len(counts) - 1) / (2 * n))


def mutual_information_bits(actions: Any, states: Any) -> float:
    """I(A; S) in bits, plug-in with the Miller–Madow correction.

    Args:
        actions: One discrete action per sample (any hashable values that NumPy can order).
        states: One discrete state per sample.

    Returns:
        The estimate (NaN without samples; can be slightly negative).

    Raises:
        ValueError: If the two have different lengths.
    """
    a = np.unique(np.asarray(actions), return_inverse=True)[1].reshape(-1)
    s = np.unique(np.asarray(states), return_inverse=True)[1].reshape(-1)
    if len(a) != len(s):
        raise ValueError(f"actions and states have {len(a)} and {len(s)} samples; one state per action")
    if not len(a):
        return float("nan")
    joint = a.astype(np.int64) * (int(s.max()) + 1) + s
    mi = _entropy_mm_nats(a) + _entropy_mm_nats(s) - _entropy_mm_nats(joint)
    return mi / np.log(2)


def queue_levels(queue_bytes: np.ndarray, bins: int = QUEUE_BINS) -> np.ndarray:
    """Each value's quantile bin among ``queue_bytes`` (0 .. bins − 1; coinciding quantiles merge bins)."""
    q = np.asarray(queue_bytes, dtype=np.float64)
    if not q.size:
        return np.zeros(0, dtype=np.int64)
    edges = np.unique(np.quantile(q, np.linspace(0, 1, bins + 1)[1:-1]))
    return np.searchsorted(edges, q, side="left").astype(np.int64)


def phase_index(times_ns: np.ndarray, phase_starts_ns: list[int]) -> np.ndarray:
    """The phase (index into ``phase_starts_ns``, sorted) each time falls in (0 before the first start)."""
    starts = np.asarray(list(phase_starts_ns) or [0], dtype=np.int64)
    return np.maximum(np.searchsorted(starts, np.asarray(times_ns, dtype=np.int64), side="right") - 1, 0)


def state_dependence(records: list[tuple[int, np.ndarray, float]], phase_starts_ns: list[int]) -> dict[str, Any]:
    """How a policy's decisions depend on the traffic phase and the queue, in one episode.

    Args:
        records: Per decision: (time in ns, the actions of every unit, the controlled ports' mean
            queue bytes over the interval before it).
        phase_starts_ns: The scenario's traffic phase starts.

    Returns:
        ``mi_phase_bits`` and ``mi_queue_bits`` (:func:`mutual_information_bits`, samples per unit),
        ``phase_modes`` (the most frequent action of each phase; None for a phase without a
        decision), ``distinct_actions`` and ``mode`` (the most frequent action overall).
    """
    if not records:
        return {"mi_phase_bits": float("nan"), "mi_queue_bits": float("nan"), "phase_modes": [],
                "distinct_actions": 0, "mode": None}
    units = np.array([len(a) for _, a, _ in records])
    actions = np.concatenate([a for _, a, _ in records])
    phases = np.repeat(phase_index(np.array([t for t, _, _ in records]), phase_starts_ns), units)
    queues = np.repeat(queue_levels(np.array([q for _, _, q in records])), units)
    modes = []
    for i in range(max(1, len(phase_starts_ns))):
        sel = actions[phases == i]
        modes.append(Counter(sel.tolist()).most_common(1)[0][0] if sel.size else None)
    return {"mi_phase_bits": mutual_information_bits(actions, phases),
            "mi_queue_bits": mutual_information_bits(actions, queues),
            "phase_modes": modes, "distinct_actions": len(set(actions.tolist())),
            "mode": Counter(actions.tolist()).most_common(1)[0][0]}
