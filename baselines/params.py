"""Checks for controller parameters: each failure is a ConfigError naming ``controller.<field>``.

Numbers go through the typed validation layer (:mod:`ecngym.validation`: no bool as a number, no
2.5 as a count, ranges in one error form); this module only adds the ``controller.`` prefix and
the checks it has no type for (a choice among non-strings, a ``[low, high]`` pair).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ecngym.error import ConfigError
from ecngym.validation import Flag, Real, Whole, check


def real(field: str, value: Any, low: float | None = None, high: float | None = None, *,
         low_inclusive: bool = True, high_inclusive: bool = True) -> float:
    """``value`` as a float if it is a finite real number in the range (never clamped).

    Raises:
        ConfigError: Naming ``controller.<field>`` with what was given and what is allowed.
    """
    return float(check(f"controller.{field}", value, Real(low, high, low_open=not low_inclusive,
                                                         high_open=not high_inclusive)))


def whole(field: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an int if it is a whole number in [low, high] (3.0 is 3; 2.5, "3", True are refused)."""
    return int(check(f"controller.{field}", value, Whole(low, high)))


def flag(field: str, value: Any) -> bool:
    """``value`` if it is a real boolean (1, 0 and "yes" are refused: ``1 in (True, False)`` holds).

    Raises:
        ConfigError: Naming ``controller.<field>``.
    """
    return bool(check(f"controller.{field}", value, Flag))


def choice(field: str, value: Any, allowed: Sequence[Any]) -> Any:
    """``value`` if it is one of ``allowed``."""
    if value not in allowed:
        raise ConfigError(f"controller.{field}", f"got {value!r}, allowed: {list(allowed)}")
    return value


def interval(field: str, value: Any, low: float | None = None, high: float | None = None) -> tuple[float, float]:
    """A ``[low, high]`` pair of reals inside [low, high], first ≤ second."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 2:
        raise ConfigError(f"controller.{field}", f"expected [low, high], got {value!r}")
    lo, hi = real(field, value[0], low, high), real(field, value[1], low, high)
    if lo > hi:
        raise ConfigError(f"controller.{field}", f"low {lo} > high {hi}")
    return lo, hi
