"""Parse human units ("100Gbps", "5KB", "10us") into the fabric's internal units.

Inside ecngym everything is bytes, nanoseconds and bits per second. Configs may use human units;
they are parsed once, at the edge, and a malformed value raises :class:`~ecngym.error.ConfigError`
naming the field.

Conventions follow the networking literature and the HPCC simulator: ``KB`` = 1000 B, ``KiB`` =
1024 B, ``MB`` = 10^6 B, ``MiB`` = 2^20 B; rates are decimal (``Gbps`` = 10^9 bit/s).
"""

from __future__ import annotations

import math
import numbers
import re
from typing import Any

from ecngym.error import ConfigError

#: Largest size accepted (2^53 B, ~9 PB): exact as a float, far below the fabric's 64-bit counters.
MAX_BYTES = 1 << 53
#: Largest duration or absolute time accepted (2^62 ns, ~146 years): sums of two stay below 2^63.
MAX_TIME_NS = 1 << 62
#: Link and DCQCN rates lie in [1 bit/s, 1 Pbit/s]: the fabric divides by the whole-bit/s rate.
MIN_RATE_BPS = 1.0
MAX_RATE_BPS = 1e15

_NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
_PATTERN = re.compile(rf"^\s*{_NUMBER}\s*([A-Za-z/]*)\s*$")

_BYTE_UNITS = {
    "": 1, "b": 1, "B": 1,
    "KB": 1_000, "kB": 1_000, "KiB": 1_024,
    "MB": 1_000_000, "MiB": 1 << 20,
    "GB": 1_000_000_000, "GiB": 1 << 30,
    "cells": 256, "cell": 256,  # Broadcom Trident-class MMU cell (ByteTuning §2.1)
}
_TIME_UNITS = {
    "": 1, "ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
}
_RATE_UNITS = {
    "": 1, "bps": 1, "b/s": 1,
    "Kbps": 1e3, "kbps": 1e3, "Kb/s": 1e3,
    "Mbps": 1e6, "Mb/s": 1e6,
    "Gbps": 1e9, "Gb/s": 1e9, "G": 1e9,
    "Tbps": 1e12,
}


def _parse(field: str, value: object, units: dict[str, float], kind: str) -> float | int:
    """Return ``value`` in the internal unit: an exact int for whole inputs, else a finite float."""
    if isinstance(value, bool):
        raise ConfigError(field, f"expected a {kind}, got the boolean {value!r}")
    if isinstance(value, numbers.Integral):  # int and numpy integers: exact, even beyond 2^53
        return int(value)
    if isinstance(value, numbers.Real):  # float and numpy floats
        number = float(value)
    elif not isinstance(value, str):
        raise ConfigError(field, f"expected a {kind} such as {_example(kind)}, got {value!r}")
    else:
        m = _PATTERN.match(value)
        if m is None or m.group(2) not in units:
            allowed = ", ".join(u for u in units if u)
            raise ConfigError(
                field, f"cannot parse {value!r} as a {kind}; use a number with one of: {allowed}"
            )
        mantissa, scale = m.group(1), units[m.group(2)]
        if mantissa.lstrip("+-").isdigit() and isinstance(scale, int):
            return int(mantissa) * scale  # "9007199254740993B" stays exact
        number = float(mantissa) * scale
    if not math.isfinite(number):  # NaN, inf, or a literal beyond float range ("1e400KB")
        raise ConfigError(field, f"expected a finite {kind}, got {value!r}")
    return number


def _example(kind: str) -> str:
    return {"size": "'5KB'", "duration": "'10us'", "rate": "'100Gbps'"}[kind]


def parse_bytes(value: object, field: str = "value") -> int:
    """Parse a size ("5KB", "32MiB", 4000) into whole bytes.

    Raises:
        ConfigError: If the value is malformed, negative, not a whole number of bytes or beyond 2^53.
    """
    b = _parse(field, value, _BYTE_UNITS, "size")
    if b < 0 or b != int(b):
        raise ConfigError(field, f"expected a non-negative whole number of bytes, got {value!r}")
    if b > MAX_BYTES:
        raise ConfigError(field, f"got {value!r}, allowed range is [0, 2^53] bytes")
    return int(b)


def parse_time_ns(value: object, field: str = "value") -> int:
    """Parse a duration ("10us", "1ms", 2500) into whole nanoseconds.

    Raises:
        ConfigError: If the value is malformed, negative, finer than 1 ns or beyond 2^62 ns.
    """
    t = _parse(field, value, _TIME_UNITS, "duration")
    if t < 0 or abs(t - round(t)) > 1e-6:
        raise ConfigError(field, f"expected a non-negative whole number of ns, got {value!r}")
    if t > MAX_TIME_NS:
        raise ConfigError(field, f"got {value!r}, allowed range is [0, 2^62] ns (~146 years)")
    return int(round(t))


def parse_rate_bps(value: object, field: str = "value") -> float:
    """Parse a link rate ("100Gbps", 25e9) into bits per second.

    Raises:
        ConfigError: If the value is malformed or outside [1 bit/s, 1 Pbit/s].
    """
    r = _parse(field, value, _RATE_UNITS, "rate")
    if not MIN_RATE_BPS <= r <= MAX_RATE_BPS:
        raise ConfigError(field, f"got {value!r}, allowed range is [1bps, 1e15bps] (1 Pbps)")
    return float(r)


def is_rtt(value: object) -> bool:
    """Whether ``value`` is a duration in base RTTs (``"5rtt"``, ``"1.25 RTT"``)."""
    return isinstance(value, str) and value.strip().lower().endswith("rtt")


def rtt_multiple(value: str, field: str = "value", high: float | None = None) -> float:
    """The number of RTTs in ``"<x>rtt"``: finite, > 0 and at most ``high``.

    ``high`` defaults to 2^62, the most any duration may be (an RTT is at least 1 ns). Every field
    that takes base RTTs takes a time too, and the messages say so.

    Raises:
        ConfigError: Naming ``field`` if it does not parse or is out of that range.
    """
    try:
        x = float(value.strip()[:-3])
    except ValueError:
        raise ConfigError(field, f"cannot parse {value!r}; use e.g. '5rtt' or '20us'") from None
    if not 0 < x <= (MAX_TIME_NS if high is None else high):  # NaN fails too
        limit = "2^62" if high is None else f"{high:g}"
        raise ConfigError(field, f"got {value!r}, allowed: a number of base RTTs in (0, {limit}], or a duration")
    return x


def rtt_to_ns(value: str, rtt_ns: float, field: str = "value") -> int:
    """``"<x>rtt"`` as whole nanoseconds, one RTT lasting ``rtt_ns`` (rounded to the nearest ns).

    The one place a duration in RTTs becomes ns: nothing is clamped, a result below 1 ns (the
    fabric's clock tick) or beyond 2^62 ns is refused.

    Raises:
        ConfigError: Naming ``field`` if the value does not parse or its duration is out of [1, 2^62] ns.
    """
    ns = rtt_multiple(value, field) * rtt_ns
    if not 1 <= ns <= MAX_TIME_NS:
        raise ConfigError(field, f"got {value!r} = {ns:.6g} ns with a base RTT of {rtt_ns:g} ns; allowed range "
                                 "is [1, 2^62] ns")
    return int(round(ns))


def duration_ns(value: object, rtt_ns: float | None, field: str = "value") -> int | None:
    """A positive duration, given as a time ("400us", ns) or in base RTTs ("5rtt"), as whole ns.

    Args:
        value: The duration as given.
        rtt_ns: One base RTT in ns, or ``None`` before it is known: then an ``"<x>rtt"`` is only
            checked (:func:`rtt_multiple`) and ``None`` returned.
        field: The field named in errors.

    Raises:
        ConfigError: Naming ``field`` if the value does not parse, is not > 0, or an RTT form comes
            to under 1 ns or over 2^62 ns (:func:`rtt_to_ns`).
    """
    if is_rtt(value):
        if rtt_ns is None:
            rtt_multiple(value, field)
            return None
        return rtt_to_ns(value, rtt_ns, field)
    ns = parse_time_ns(value, field)
    if ns <= 0:
        raise ConfigError(field, f"must be > 0, got {value!r}")
    return ns


def bdp_bytes(rate_bps: Any, rtt_ns: Any) -> Any:
    """Bandwidth-delay product in bytes: ``rate_bps`` x ``rtt_ns`` / 8e9 (floats or NumPy arrays).

    The one home of this arithmetic in Python (the env's step mapping, DCTCP's and ECN*'s K, DEMT's
    C·D), evaluated in this order, so every caller gets the same bits; the simulator's twin is
    ``BdpBytes`` (sim_backend/model/path-facts.h), the same operations in the same order.

    Args:
        rate_bps: Link rate(s), bit/s.
        rtt_ns: Round-trip time(s), ns.

    Returns:
        The product, bytes (not rounded).
    """
    return rate_bps * rtt_ns / 8e9

