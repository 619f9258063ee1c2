"""Checks of a topology's node and link tables: array fields, node ids, reachability, build memory.

:class:`~ecngym.sim_backend.topology.Topology` and its builders use them; each names the field it
refuses (``topology.link_a[3]``) with what was given and what is allowed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ecngym.error import ConfigError, first_offending, shown
from ecngym.validation import range_text


def reached(num_nodes: int, link_a: np.ndarray, link_b: np.ndarray, root: int) -> np.ndarray:
    """Which nodes a breadth-first search over the links reaches from ``root``.

    One NumPy step per hop (not one Python step per link: a fat-tree k = 64 has ~200k links).

    Returns:
        One flag per node.
    """
    ends, peers = np.concatenate([link_a, link_b]), np.concatenate([link_b, link_a])
    order = np.argsort(ends, kind="stable")
    peers = peers[order]
    start = np.searchsorted(ends[order], np.arange(num_nodes + 1))  # node n's peers: peers[start[n]:start[n + 1]]
    seen = np.zeros(num_nodes, dtype=bool)
    seen[root] = True
    frontier = np.array([root])
    while len(frontier):
        lo, counts = start[frontier], start[frontier + 1] - start[frontier]
        at = np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
        frontier = np.unique(peers[at])
        frontier = frontier[~seen[frontier]]
        seen[frontier] = True
    return seen


def id_ranges(ids: np.ndarray) -> str:
    """``0-3, 5-8``: sorted ids as runs."""
    ids = np.sort(ids)
    runs, start = [], 0
    for i in range(1, len(ids) + 1):
        if i == len(ids) or ids[i] != ids[i - 1] + 1:
            runs.append(f"{ids[start]}" if start == i - 1 else f"{ids[start]}-{ids[i - 1]}")
            start = i
    return ", ".join(runs)


#: Largest node index / node id: the fabric holds them as uint32.
MAX_NODE_ID = 2**32 - 1


def checked_array(field_name: str, values: Any, dtype: type, low: float, high: float, length: int | None = None,
                 per: str = "link") -> np.ndarray:
    """``values`` as a contiguous 1-D ``dtype`` array, every entry checked to lie in [low, high].

    Integer ``dtype`` takes integers only (a float is refused, never truncated); ``float64``
    takes any real numbers; an empty list is an empty array.

    Args:
        field_name: The field, named in the error.
        values: An array or a list.
        dtype: The fabric's dtype of the field.
        low: Smallest allowed entry.
        high: Largest allowed entry.
        length: The number of entries required (``None``: any).
        per: What one entry stands for, for the message.

    Returns:
        The array (``values`` itself where it already is one of that dtype).

    Raises:
        ConfigError: Naming ``field_name`` (``field_name[i]`` for an entry out of range).
    """
    kinds, what = ("iu", "integers") if np.dtype(dtype).kind in "iu" else ("iuf", "numbers")
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError, OverflowError):  # ragged or unconvertible
        raise ConfigError(field_name, f"expected a flat array of {what}, got {type(values).__name__} "
                                      f"{values!r:.80}") from None
    if arr.ndim != 1 or (arr.dtype.kind not in kinds and len(arr)):  # ([] is float64 to numpy)
        raise ConfigError(field_name, f"expected a flat array of {what}, got {arr.dtype} of shape {arr.shape}")
    if length is not None and len(arr) != length:
        raise ConfigError(field_name, f"expected {length} entries (one per {per}), got {len(arr)}")
    bad = np.flatnonzero(~((arr >= low) & (arr <= high)))  # NaN is never in range
    if len(bad):
        i, more = first_offending(bad)
        raise ConfigError(f"{field_name}[{i}]", f"got {shown(arr[i])}{more}, allowed range is "
                                                f"{range_text(low, high)}")
    return np.ascontiguousarray(arr, dtype=dtype)


def check_distinct(field_name: str, ids: np.ndarray) -> None:
    """Refuse an id that an earlier entry of ``ids`` has already (one id per node).

    Raises:
        ConfigError: ``field_name[i]: got 4 (and N more), already the id of node 0; ...``, ``i``
            the first entry that repeats an earlier one.
    """
    order = np.argsort(ids, kind="stable")  # equal ids keep their order: the first of each comes first
    repeats = order[1:][ids[order[1:]] == ids[order[:-1]]]
    if len(repeats):
        i, more = first_offending(np.sort(repeats))
        first = int(np.flatnonzero(ids == ids[i])[0])
        raise ConfigError(f"{field_name}[{i}]", f"got {shown(ids[i])}{more}, already the id of node {first}; "
                                                "each node needs its own id")


#: Ports per switch the fabric supports (16-bit local port index).
MAX_SWITCH_PORTS = 65535


def check_memory(name: str, hosts: int, switches: int, links: int, available_bytes: int | None = None) -> None:
    """Refuse a topology whose estimated build memory exceeds the budget (``Topology.check_buildable``).

    Raises:
        ConfigError: Naming ``topology`` with the estimate and the budget.
    """
    nodes = hosts + switches
    need = 4 * hosts * nodes + 56 * switches * hosts + 2048 * 2 * links
    budget = available_memory() if available_bytes is None else available_bytes
    if budget is not None and need > budget:
        raise ConfigError("topology", f"{name} needs at least ~{need / 1e9:.1f} GB to build (routing tables of "
                                      f"{hosts} hosts x {nodes} nodes, {switches} switches); {budget / 1e9:.1f} GB "
                                      "is available")


def available_memory() -> int | None:
    """``MemAvailable`` in bytes, or ``None`` where /proc/meminfo is absent (not Linux)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None
