"""The fabric's simulator knobs, read from their one home: the C++ TypeId attributes.

Each section of the fabric's knobs is an ns-3 ``FabricParameters`` TypeId (``NicParameters``,
``DcqcnParameters``, ``DctcpParameters``, ``DctcpRateParameters``, ``TimelyParameters``,
``HpccParameters``, ``WindowParameters``, ``BufferParameters``, see ``sim_backend/model/fabric-parameters.h``); each
knob is one of its attributes, whose default and checker are the knob's default and allowed range.
This module turns them into the fields of :class:`ecngym.sim_backend.config.FabricConfig`:

- the section ``XyzParameters`` is ``fabric.xyz`` (``DctcpRateParameters``: ``fabric.dctcp_rate``);
  ``NicParameters`` holds top-level fields (``fabric.mtu_payload``);
- the attribute ``AlphaIntervalNs`` is the field ``alpha_interval``: its unit suffix (``Ns``,
  ``Bytes``, ``Bps``) makes it a :func:`~ecngym.validation.Duration`, :func:`~ecngym.validation.Bytes`
  or :func:`~ecngym.validation.Rate` field that takes human units ("1us", "5KB", "20Mbps") and
  stores ns, bytes or bit/s; a double is a :func:`~ecngym.validation.Real`, an integer a
  :func:`~ecngym.validation.Whole`, a boolean a :data:`~ecngym.validation.Flag`, an enumeration
  (an ``EnumValue`` with ``MakeEnumChecker``) a :func:`~ecngym.validation.OneOf` of its names
  (``Cc`` is ``fabric.cc``: ``"dcqcn"``, ``"dctcp"`` ...);
- the checker's range is the field's range (a double checker's lower bound of the smallest normal
  double means "> 0"; the ends a unit's own parser enforces, 2^53 B, 2^62 ns, [1 bps, 1 Pbps],
  are left to it, so a message reads "[1, inf) ns").

The attributes are read once per process (cached), when a config is first built.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass
from typing import Any

from ecngym.units import MAX_BYTES, MAX_RATE_BPS, MAX_TIME_NS, MIN_RATE_BPS
from ecngym.validation import Bytes, Duration, Flag, OneOf, Rate, Real, Whole

#: The section whose knobs are top-level fields of the fabric config
TOP_LEVEL = "nic"

#: Attribute-name unit suffix -> (field type factory, the unit's own range ends)
_UNITS: dict[str, tuple[Any, tuple[float, float]]] = {
    "_ns": (Duration, (0, MAX_TIME_NS)),
    "_bytes": (Bytes, (0, MAX_BYTES)),
    "_bps": (Rate, (MIN_RATE_BPS, MAX_RATE_BPS)),
}


def snake(camel: str) -> str:
    """``AlphaIntervalNs`` -> ``alpha_interval_ns``, ``TLowNs`` -> ``t_low_ns``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", camel).lower()


@dataclass(frozen=True)
class Knob:
    """One simulator knob, as its TypeId attribute declares it.

    Attributes:
        name: Field name (snake case, without the unit suffix).
        attribute: C++ attribute name (``AlphaIntervalNs``).
        kind: The field type (a :mod:`ecngym.validation` annotation).
        default: The attribute's default, in internal units (ns, bytes, bit/s).
        help: The attribute's description.
        range: The allowed range as text (for docs).
    """

    name: str
    attribute: str
    kind: Any
    default: Any
    help: str
    range: str

    def serialise(self, value: Any) -> str:
        """Return the ns-3 attribute string of a validated value (doubles exactly, via ``repr``)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            return repr(value)
        return str(value)


def _number(text: str, is_float: bool) -> float | int:
    x = float(text) if is_float else int(text)
    return int(x) if is_float and x.is_integer() and abs(x) < 2**53 else x


def knob_of_attribute(attr: dict[str, str], strip_unit: bool = True) -> Knob:
    """Return the :class:`Knob` of one attribute as the module describes it.

    Args:
        attr: ``{"name", "help", "initial", "checker"}`` (``describe_fabric_section``).
        strip_unit: Drop the unit suffix from the field name (``alpha_interval``); the DCTCP host
            options keep theirs (``min_rto_ns``).

    Returns:
        The knob.
    """
    name = snake(attr["name"])
    checker = attr["checker"]
    if checker == "bool":
        return Knob(name, attr["name"], Flag, attr["initial"] == "true", attr["help"], "true or false")
    m = re.fullmatch(r"(\S+) (\S+):(\S+)", checker)
    if m is None:  # an enumeration: "A|B|C"
        choices = tuple(checker.split("|"))
        return Knob(name, attr["name"], OneOf(*choices), attr["initial"], attr["help"], " | ".join(choices))
    ctype, lo_text, hi_text = m.groups()
    is_float = ctype in ("double", "float")
    low: Any = _number(lo_text, is_float)
    high: Any = _number(hi_text, is_float)
    default: Any = float(attr["initial"]) if is_float else int(attr["initial"])
    unit = next((u for u in _UNITS if name.endswith(u)), None)
    if unit is not None:
        factory, (unit_low, unit_high) = _UNITS[unit]
        low = None if factory is Rate and low <= unit_low else low
        high = None if high >= unit_high else high
        kind = factory(low, high)
        if strip_unit:
            name = name.removesuffix(unit)
        shown = f"[{low if low is not None else unit_low}, {high if high is not None else 'inf'}]"
    elif is_float:
        low_open = 0 < low < sys.float_info.min * 2  # the checker's "> 0"
        low = 0 if low_open else low
        kind = Real(low, high, low_open=low_open)
        shown = f"{'(' if low_open else '['}{low}, {high}]"
    else:
        kind = Whole(low, high)
        shown = f"[{low}, {high}]"
    return Knob(name, attr["name"], kind, default, attr["help"], shown)


@functools.cache
def sections() -> dict[str, str]:
    """Return section name -> TypeId name of every knob section compiled into the fabric."""
    from ecngym.sim_backend import _fabric

    out = {}
    for type_name in _fabric.fabric_section_types():
        short = type_name.rsplit("::", 1)[-1].removesuffix("Parameters")
        out[snake(short)] = type_name
    return out


@functools.cache
def section_knobs(section: str) -> dict[str, Knob]:
    """Return field name -> :class:`Knob` of one section (``"dcqcn"``, ``"nic"`` ...)."""
    from ecngym.sim_backend import _fabric

    return {k.name: k for k in map(knob_of_attribute, _fabric.describe_fabric_section(sections()[section]))}


@functools.cache
def tcp_host_knobs() -> dict[str, Knob]:
    """Return the Linux-like DCTCP host options (``TcpHostOptions``' attributes), names with units."""
    from ecngym.sim_backend import _fabric

    return {k.name: k for k in (knob_of_attribute(a, strip_unit=False) for a in _fabric.describe_tcp_host())}


def attribute_strings(knobs: dict[str, Knob], values: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Return the attribute names and strings of validated field values (the fields of ``knobs``)."""
    names = [k.attribute for k in knobs.values()]
    return names, [k.serialise(values[name]) for name, k in knobs.items()]


@functools.cache
def pfc_alpha_bounds() -> tuple[float | int, float | int, bool]:
    """The PFC dynamic-threshold alpha's allowed range, from ``BufferParameters``' ``PfcAlpha`` checker.

    Returns:
        (low, high, low_open): alpha lies in [low, high], or (low, high] when ``low_open`` (whole
        bounds as ints, as the knob holds them).
    """
    limits = section_knobs("buffer")["pfc_alpha"].kind.__metadata__[0].func.keywords
    return limits["low"], limits["high"], bool(limits["low_open"])
