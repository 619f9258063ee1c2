"""The arguments of the fabric's setters, checked: target ids and per-target values.

:class:`~ecngym.sim_backend.fabric.Fabric`'s ``set_*`` methods take port or switch ids and, per
target, one value or a value each (numbers, or sizes in bytes or as size strings). Nothing is
truncated, parsed from a float or silently broadcast from the wrong count: each function names the
argument and its first bad entry.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ecngym.error import ConfigError, first_offending, shown
from ecngym.units import MAX_BYTES, parse_bytes
from ecngym.validation import is_number


def target_ids(value: Any, name: str, count: int) -> np.ndarray:
    """Return port / switch ids as an int64 array, each checked to lie in [0, count) and given once.

    Only integers are ids: a float (even 1.0 — a computed id that is not an integer is a bug
    upstream), a string or a boolean is refused, never truncated or parsed. An id given twice
    would take two settings in one call (the last would win), so repeats are refused.

    Raises:
        ConfigError: Naming ``name`` and the first bad entry, or the repeated ids.
    """
    arr = np.atleast_1d(np.asarray(value, dtype=object if _has_big_int(value) else None))
    if arr.ndim != 1:
        raise ConfigError(name, f"expected one id or a flat list of ids, got shape {arr.shape}")
    if arr.size == 0:
        return np.empty(0, dtype=np.int64)  # no targets: nothing to do
    if arr.dtype.kind not in "iu":
        bad = next(v for v in arr.tolist()
                   if isinstance(v, bool) or not isinstance(v, int) or not -(2**63) <= v < 2**63)
        raise ConfigError(name, f"expected integer ids in [0, {count}), got {bad!r}")
    bad = np.flatnonzero((arr < 0) | (arr >= count))  # before the cast: a uint64 >= 2^63 wraps in int64
    if len(bad):
        i, more = first_offending(bad)
        raise ConfigError(f"{name}[{i}]" if len(arr) > 1 else name, f"got {shown(arr[i])}{more}, ids must be in "
                                                                   f"[0, {count})")
    out = arr.astype(np.int64)
    if not strictly_increasing(out):
        ids, counts = np.unique(out, return_counts=True)
        repeated = np.flatnonzero(counts > 1)
        if len(repeated):
            i, more = first_offending(repeated)
            raise ConfigError(name, f"id {int(ids[i])}{more} is given more than once; each id may appear once "
                                    "per call")
    return out


def strictly_increasing(ids: np.ndarray) -> bool:
    """Whether ``ids`` are strictly increasing, so distinct (a cheap test of the common case)."""
    return bool(np.all(ids[1:] > ids[:-1]))


def _has_big_int(value: Any) -> bool:
    """Whether ``value`` holds a Python int beyond int64 (numpy would otherwise raise OverflowError)."""
    items = value if isinstance(value, (list, tuple)) else [value]
    return any(isinstance(v, int) and not -(2**63) <= v < 2**63 for v in items)


def broadcast_reals(value: Any, n: int, name: str) -> np.ndarray:
    """Return ``value`` (a number or ``n`` numbers) as float64; strings and booleans are refused."""
    try:
        arr = np.asarray(value, dtype=object if _has_big_int(value) else None)
    except (TypeError, ValueError):
        raise ConfigError(name, f"expected a number or {n} numbers, got {value!r}") from None
    if arr.dtype.kind not in "iuf":
        items = list(value) if arr.ndim == 1 else []
        bad = [i for i, v in enumerate(items) if not is_number(v)]
        if bad:  # one entry of a list: name it, not the whole list
            i, more = first_offending(bad)
            raise ConfigError(f"{name}[{i}]", f"got {shown(items[i])}{more}, expected a number")
        raise ConfigError(name, f"expected a number or {n} numbers, got {value!r}")
    if arr.ndim > 1 or (arr.ndim == 1 and arr.shape != (n,)):
        raise ConfigError(name, f"expected a number or {n} values (one per target), got shape {arr.shape}")
    return np.broadcast_to(arr.astype(np.float64), (n,)).copy()


def broadcast_bytes(value: Any, n: int, name: str) -> np.ndarray:
    """Return sizes (one, broadcast, or ``n``; bytes or size strings) as uint64 bytes.

    One size is a scalar or a 0-d array (as :func:`broadcast_reals` takes them).

    Raises:
        ConfigError: On a malformed, negative, fractional or out-of-range size (see
            :func:`ecngym.units.parse_bytes`) or a wrong count.
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()  # the scalar it holds: parsed and broadcast as that scalar
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf":  # fast path: already bytes
        if value.shape != (n,):
            raise ConfigError(name, f"expected {n} values (one per target), got shape {value.shape}")
        ok = np.isfinite(value) & (value >= 0) & (value == np.round(value)) & (value <= MAX_BYTES)
        if not ok.all():
            i, more = first_offending(np.flatnonzero(~ok))
            raise ConfigError(f"{name}[{i}]", f"got {shown(value[i])}{more}, allowed: a whole number of bytes in "
                                              "[0, 2^53]")
        return value.astype(np.uint64)
    if isinstance(value, (str, numbers.Real)):  # numbers.Real covers bools: parse_bytes refuses them
        return np.full(n, parse_bytes(value, name), dtype=np.uint64)
    try:
        values = list(value)
    except TypeError:
        raise ConfigError(name, f"expected a size or {n} sizes, got {value!r}") from None
    if len(values) != n:
        raise ConfigError(name, f"expected {n} values (one per target), got {len(values)}")
    return np.array([parse_bytes(v, f"{name}[{i}]") for i, v in enumerate(values)], dtype=np.uint64)
