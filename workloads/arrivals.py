"""Arrival patterns. Each returns a flow DataFrame (src, dst, size_bytes, start_ns, tag).

All randomness comes from the ``numpy.random.Generator`` passed in, so a trace is a pure function
of its parameters and seed. Hosts are indices ``0 .. hosts-1``; a flow's source and destination
always differ.
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


def no_flows() -> pd.DataFrame:
    """An empty flow table with the arrival patterns' columns and dtypes."""
    return _frame([], [], [], [], "none")


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

    The aggregate arrival rate is ``load x hosts x link_rate / (8 x mean flow size)``, so the
    expected offered bytes are ``load x hosts x link_rate x (end - start) / 8``. Each flow's source
    is uniform over the hosts and its destination uniform over the other hosts.

    Args:
        rng: Random generator (arrival gaps, then hosts, then sizes).
        sizes: Flow-size distribution.
        hosts: Number of hosts.
        link_rate_bps: Host link rate in bit/s.
        load: Target load in [0, 1).
        start_ns: Window start.
        end_ns: Window end (exclusive).

    Returns:
        The flows, tagged ``"background"``, in start order.
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
    """Incast bursts: ``degree`` distinct senders each send ``size_bytes`` to one receiver at once.

    Args:
        rng: Random generator (burst times, receivers, senders).
        hosts: Number of hosts.
        degree: Senders per burst, 1 .. hosts-1.
        size_bytes: Bytes per sender.
        start_ns: Window start (the first periodic burst starts here).
        end_ns: Window end (exclusive).
        period_ns: Fixed time between bursts, or ``None`` for Poisson bursts.
        mean_interval_ns: Mean time between Poisson bursts (when ``period_ns`` is ``None``).
        receiver: The receiver of every burst, or ``None`` for a uniformly random one per burst.
            Senders are drawn without replacement among the other hosts.

    Returns:
        The flows, tagged ``"incast"``.
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
        return no_flows()
    src = np.concatenate(rows_src)
    return _frame(src, np.concatenate(rows_dst), np.full(len(src), size_bytes), np.concatenate(rows_t), "incast")


def permutation(rng: np.random.Generator, hosts: int, size_bytes: int, start_ns: int) -> pd.DataFrame:
    """Every host sends one ``size_bytes`` flow to another host, each host receiving one.

    The destinations are a uniformly random derangement (a permutation with no fixed point).

    Returns:
        ``hosts`` flows tagged ``"permutation"``, all starting at ``start_ns``.
    """
    while True:
        perm = rng.permutation(hosts)
        if not np.any(perm == np.arange(hosts)):
            break
    return _frame(np.arange(hosts), perm, np.full(hosts, size_bytes), np.full(hosts, start_ns), "permutation")


def all_to_all(hosts: int, size_bytes: int, start_ns: int) -> pd.DataFrame:
    """Every ordered pair of distinct hosts exchanges one ``size_bytes`` flow (a shuffle).

    Returns:
        ``hosts x (hosts - 1)`` flows tagged ``"all_to_all"``, all starting at ``start_ns``.
    """
    src, dst = np.nonzero(~np.eye(hosts, dtype=bool))
    return _frame(src, dst, np.full(len(src), size_bytes), np.full(len(src), start_ns), "all_to_all")


def long_lived(
    rng: np.random.Generator, hosts: int, flows: int, size_bytes: int, start_ns: int, receiver: int | None
) -> pd.DataFrame:
    """``flows`` large flows from distinct senders, all starting at ``start_ns`` (steady-state tests).

    Args:
        rng: Random generator (sender choice, and destinations when ``receiver`` is ``None``).
        hosts: Number of hosts.
        flows: Number of flows (at most ``hosts - 1`` with a receiver, ``hosts`` without).
        size_bytes: Size of every flow: make it large enough to outlast the run.
        start_ns: Start time of every flow.
        receiver: Common destination (an N-to-1 bottleneck), or ``None`` for a uniformly random
            destination other than each sender.

    Returns:
        The flows, tagged ``"long_lived"``.
    """
    if receiver is not None:
        src = rng.choice(np.delete(np.arange(hosts), receiver), size=flows, replace=False)
        dst = np.full(flows, receiver)
    else:
        src = rng.choice(hosts, size=flows, replace=False)
        dst = (src + rng.integers(1, hosts, flows)) % hosts  # uniform over the other hosts
    return _frame(src, dst, np.full(flows, size_bytes), np.full(flows, start_ns), "long_lived")
