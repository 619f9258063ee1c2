"""The ecngym error hierarchy.

Every error raised on bad user input names the offending field, what was given and what is
allowed, so that a wrong config fails at start-up with a message a user can act on.
"""

from __future__ import annotations

from typing import Any


class EcnGymError(Exception):
    """Base class of every error raised by ecngym."""


class ConfigError(EcnGymError, ValueError):
    """A configuration field is missing, malformed or out of its allowed range.

    Args:
        field: Dotted name of the offending field (``"fabric.buffer_bytes"``).
        message: What is wrong and what is allowed.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        # pickled with its two arguments (the default passes the one formatted string, which
        # __init__ does not take): an error raised in a worker process (a vector env's, Ray's, the
        # plateau evaluator's) comes back to the parent as itself
        return type(self), (self.field, self.message)


class InvalidAction(EcnGymError, ValueError):
    """An action given to an environment does not belong to its action space."""


def shown(value: Any) -> str:
    """``repr`` of a value for an error message, a NumPy scalar as its Python value (``5``, not ``np.int64(5)``)."""
    item = getattr(value, "item", None)
    if item is not None and getattr(value, "shape", None) == ():
        value = item()
    return repr(value)


def as_given(given: Any, value: Any, unit: str = "") -> str:
    """A checked value for a message, as the user wrote it (``unit``: of the converted value).

    A number shows as given (``-1``, not the ``-1.0`` it was converted to; ``11.0``, not ``11``);
    a string as given and converted (``'5KB' = 5000 B``).
    """
    if isinstance(given, str):
        return f"{given!r} = {shown(value)}{unit}"
    return f"{shown(given)}{unit}"


def first_offending(bad: Any) -> tuple[int, str]:
    """The first of an array's offending entries and how many more there are, for a message.

    A message about an array (one value per port: a fabric has thousands) names its first
    offending entry by index and value and counts the rest, never printing the whole array::

        i, more = first_offending(np.flatnonzero(pmax > 1))
        raise ConfigError(f"pmax[{i}]", f"got {shown(pmax[i])}{more}, allowed range is [0, 1]")
        # pmax[7]: got 1.5 (and 3 more), allowed range is [0, 1]

    Args:
        bad: The positions of the offending entries, ascending (at least one).

    Returns:
        (the first position, ``" (and N more)"``, or ``""`` when it is the only one).
    """
    more = len(bad) - 1
    return int(bad[0]), (f" (and {more} more)" if more else "")


#: ``check_range``'s default ``given``: the checked value itself.
_VALUE: Any = object()


def check_range(
    field: str,
    value: float,
    low: float | None = None,
    high: float | None = None,
    *,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
    given: Any = _VALUE,
) -> float:
    """Return ``value`` if it lies in the allowed range, else raise :class:`ConfigError`.

    Args:
        field: Name of the field, used in the error message.
        value: The value to check.
        low: Lower bound, or ``None`` for no lower bound.
        high: Upper bound, or ``None`` for no upper bound.
        low_inclusive: Whether ``low`` itself is allowed.
        high_inclusive: Whether ``high`` itself is allowed.
        given: The value as the user wrote it, when ``value`` is its conversion (``"5KB"``, or
            ``-1`` for ``-1.0``): the message shows it (:func:`as_given`). Default: ``value``.

    Returns:
        ``value`` unchanged (nothing is ever clamped).

    Raises:
        ConfigError: If ``value`` is NaN or outside the range.
    """
    lo_ok = low is None or (value >= low if low_inclusive else value > low)
    hi_ok = high is None or (value <= high if high_inclusive else value < high)
    if value != value or not (lo_ok and hi_ok):  # value != value catches NaN
        lo = "-inf" if low is None else repr(low)
        hi = "inf" if high is None else repr(high)
        lb = "[" if low_inclusive and low is not None else "("
        hb = "]" if high_inclusive and high is not None else ")"
        raise ConfigError(field, f"got {as_given(value if given is _VALUE else given, value)}, "
                                 f"allowed range is {lb}{lo}, {hi}{hb}")
    return value
