"""Arrival patterns. Each returns a flow DataFrame (src, dst, size_bytes, start_ns, tag).

All randomness comes from the ``numpy.random.Generator`` passed in, so a trace is a pure function
of its parameters and seed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ecngym.workloads.distributions import FlowSizeDistribution

_EMPTY = {"src": [], "dst": [], "size_bytes": [], "start_ns": [], "tag": []}


def _frame(src, dst, size, start, tag: str) -> pd.DataFrame:
    return pd.DataFrame({
        "src": np.asarray(src, dtype=np.int32), "dst": np.asarray(dst, dtype=np.int32),
        "size_bytes": np.asarray(size, dtype=np.int64), "start_ns": np.asarray(start, dtype=np.int64),
        "tag": tag,
    })


def _poisson_times(rng: np.random.Generator, rate_per_ns: float, start_ns: int, end_ns: int) -> np.ndarray:
    """Arrival times of a Poisson process on [start, end)."""
    if rate_per_ns <= 0 or end_ns <= start_ns:
        return np.zeros(0, dtype=np.int64)
    expected = rate_per_ns * (end_ns - start_ns)
    chunks, t = [], float(start_ns)
    while t < end_ns:
        gaps = rng.exponential(1.0 / rate_per_ns, size=int(expected * 1.1) + 16)
        times = t + np.cumsum(gaps)
        chunks.append(times)
        t = times[-1]
    times = np.concatenate(chunks)
    return times[times < end_ns].astype(np.int64)


def _random_pairs(rng: np.random.Generator, n: int, hosts: int) -> tuple[np.ndarray, np.ndarray]:
    src = rng.integers(0, hosts, n)
    dst = (src + rng.integers(1, hosts, n)) % hosts  # uniform over the other hosts
    return src, dst


def poisson_background(
    rng: np.random.Generator,
    sizes: FlowSizeDistribution,
    hosts: int,
    link_rate_bps: float,
    load: float,
    start_ns: int,
    end_ns: int,
) -> pd.DataFrame:
    """Poisson flow arrivals offering ``load`` of every host link on [start, end).

    Aggregate rate = load x hosts x link_rate / (8 x mean flow size); uniform random source and
    destination (distinct).
    """
    rate_per_ns = load * hosts * link_rate_bps / (8.0 * sizes.mean_bytes) / 1e9
    start = _poisson_times(rng, rate_per_ns, start_ns, end_ns)
    src, dst = _random_pairs(rng, len(start), hosts)
    return _frame(src, dst, sizes.sample(rng, len(start)), start, "background")


def incast(
    rng: np.random.Generator,
    hosts: int,
    degree: int,
    size_bytes: int,
    start_ns: int,
    end_ns: int,
    *,
    period_ns: int | None = None,
    mean_interval_ns: int | None = None,
    receiver: int | None = None,
) -> pd.DataFrame:
    """Incast bursts: ``degree`` distinct senders each send ``size_bytes`` to one receiver.

    Bursts come every ``period_ns`` (fixed) or at Poisson times with ``mean_interval_ns``; the
    receiver is ``receiver`` or drawn per burst; senders are drawn among the other hosts.
    """
    if period_ns:
        times = np.arange(start_ns, end_ns, period_ns, dtype=np.int64)
    else:
        times = _poisson_times(rng, 1.0 / mean_interval_ns, start_ns, end_ns)
    rows_src, rows_dst, rows_t = [], [], []
    for t in times:
        rcv = receiver if receiver is not None else int(rng.integers(0, hosts))
        others = np.delete(np.arange(hosts), rcv)
        senders = rng.choice(others, size=degree, replace=False)
        rows_src.append(senders)
        rows_dst.append(np.full(degree, rcv))
        rows_t.append(np.full(degree, t))
    if not rows_src:
        return _frame(*[[]] * 4, "incast")
    src = np.concatenate(rows_src)
    return _frame(src, np.concatenate(rows_dst), np.full(len(src), size_bytes), np.concatenate(rows_t), "incast")


def permutation(rng: np.random.Generator, hosts: int, size_bytes: int, start_ns: int) -> pd.DataFrame:
    """Every host sends one flow to a distinct other host (a random derangement)."""
    while True:
        perm = rng.permutation(hosts)
        if not np.any(perm == np.arange(hosts)):
            break
    return _frame(np.arange(hosts), perm, np.full(hosts, size_bytes), np.full(hosts, start_ns), "permutation")


def all_to_all(hosts: int, size_bytes: int, start_ns: int) -> pd.DataFrame:
    """Every ordered pair of distinct hosts exchanges one flow at ``start_ns`` (a shuffle)."""
    src, dst = np.nonzero(~np.eye(hosts, dtype=bool))
    return _frame(src, dst, np.full(len(src), size_bytes), np.full(len(src), start_ns), "all_to_all")


def long_lived(
    rng: np.random.Generator, hosts: int, flows: int, size_bytes: int, start_ns: int, receiver: int | None
) -> pd.DataFrame:
    """``flows`` large flows from distinct senders (to ``receiver``, or random pairs) for steady state."""
    if receiver is not None:
        src = rng.choice(np.delete(np.arange(hosts), receiver), size=flows, replace=False)
        dst = np.full(flows, receiver)
    else:
        src, dst = _random_pairs(rng, flows, hosts)
    return _frame(src, dst, np.full(flows, size_bytes), np.full(flows, start_ns), "long_lived")
