"""One typed validation layer for every ecngym config (pydantic v2).

Each config is a :class:`ConfigModel`; each field is declared **once**, with its type, unit and
allowed range, using the field types of this module. Validation is strict: no truthiness
(``"no"`` is not ``False``), no float -> int truncation (``2.5`` is not a count; ``3.0`` is 3), no
string -> number except the documented unit strings (``"5KB"``, ``"10us"``, ``"100Gbps"``); sizes,
durations and rates are converted once to bytes / ns / bit/s and bounded so that nothing
overflows after conversion (:mod:`ecngym.units`). Every failure is a
:class:`~ecngym.error.ConfigError` naming the full dotted field (``env.action.templates[2]``),
what was given and what is allowed.

Declaring a new config::

    from ecngym.validation import Bytes, ConfigModel, Duration, Flag, OneOf, Rate, Real, Whole

    class ShaperConfig(ConfigModel):
        mode: OneOf("off", "token_bucket") = "off"   # one of these strings
        burst: Bytes(low=1) = "64KB"                 # human units in, whole bytes out
        interval: Duration(low=1) = "10us"           # ns
        rate: Rate() = "10Gbps"                      # bit/s (float)
        weight: Real(0, 1) = 0.5                     # finite float in [0, 1]
        queues: Whole(1, 8) = 2                      # int; 3.0 ok, 2.5 / "3" / True refused
        enabled: Flag = True                         # a real boolean only

    cfg = ShaperConfig.parse({"burst": "1MB"}, "fabric.shaper")   # ConfigError names fabric.shaper.burst
    cfg2 = cfg.updated({"weight": 0.2}, "fabric.shaper")           # (nested) overrides, re-validated

Cross-field rules go in a pydantic ``@model_validator(mode="after")`` that raises
``ValueError(message)``; name the field with :func:`field_error` to point the error at it. A
single value outside any model (a CLI argument, a method argument) is checked with
:func:`check` (``check("episodes", n, Whole(1))``).
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, TypeAdapter, ValidationError

from ecngym.error import ConfigError, as_given, check_range
from ecngym.units import MAX_BYTES, MAX_TIME_NS, parse_bytes, parse_rate_bps, parse_time_ns

__all__ = ["Bytes", "ConfigModel", "Duration", "Flag", "OneOf", "Rate", "Real", "Text", "Whole", "check", "convert",
           "describe_field", "describe_type", "field_error", "is_finite_number", "is_number", "range_text"]


# ---------------------------------------------------------------------------------------- field types
def range_text(low: float | None, high: float | None, low_open: bool = False, high_open: bool = False) -> str:
    """``[low, high]`` with open ends as parentheses and missing bounds as infinities."""
    lo = "-inf" if low is None else repr(low)
    hi = "inf" if high is None else repr(high)
    return f"{'(' if low_open or low is None else '['}{lo}, {hi}{')' if high_open or high is None else ']'}"


def _in_range(value: float, low: float | None, high: float | None, low_open: bool = False,
              high_open: bool = False, unit: str = "", *, given: Any) -> None:
    """Refuse ``value`` outside the range; the message shows ``given``, as the user wrote it (:func:`as_given`)."""
    try:
        check_range("", value, low, high, low_inclusive=not low_open, high_inclusive=not high_open)
    except ConfigError:
        allowed = range_text(low, high, low_open, high_open)
        raise ValueError(f"got {as_given(given, value, unit)}, allowed range is {allowed}{unit}") from None


def is_number(value: Any) -> bool:
    """Whether ``value`` is a real number (Python or NumPy); booleans are not, nor strings."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def is_finite_number(value: Any) -> bool:
    """Whether ``value`` is a real number (:func:`is_number`) with a finite float value.

    NaN and infinities are not; nor is an int beyond the float range (``10**400``), for which
    ``math.isfinite`` raises ``OverflowError``.
    """
    if not is_number(value):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _whole(value: Any, low: int | None, high: int | None) -> int:
    integer = isinstance(value, numbers.Integral) and is_number(value)  # any size: 10**400 never becomes a float
    if not integer and not (is_finite_number(value) and value == int(value)):
        raise ValueError(f"expected a whole number, got {value!r}")
    n = int(value)
    _in_range(n, low, high, given=value)
    return n


def _real(value: Any, low: float | None, high: float | None, low_open: bool, high_open: bool) -> float:
    if not is_finite_number(value):
        raise ValueError(f"expected a finite number, got {value!r}")
    x = float(value)
    _in_range(x, low, high, low_open, high_open, given=value)
    return x


def _unit(parse: Any, value: Any, low: float | None, high: float | None, unit: str) -> Any:
    try:
        v = parse(value, "")
    except ConfigError as exc:
        raise ValueError(exc.message) from None
    _in_range(v, low, high, unit=unit, given=value)
    return v


def _flag(value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"expected true or false, got {value!r}")


def _one_of(value: Any, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"got {value!r}, allowed: {', '.join(repr(c) for c in choices)}")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {value!r}")
    return value


#: Largest seed of a simulation (episode, trace, fabric): seeds are 64-bit unsigned, as the C++
#: fabric's; NumPy's seed sequence would take any whole number (``1e30``, or one too long to write
#: as JSON). A run stored in the results database has a lower bound of its own,
#: :data:`ecngym.results.store.MAX_SEED` (2^63 - 1: a signed BIGINT column).
MAX_SIMULATION_SEED = 2**64 - 1

#: The type factories below return the same annotation object for the same arguments: the validator
#: adapters are cached by annotation (``_cached_adapter``), and a fresh ``functools.partial`` per call
#: would miss that cache every time (a new pydantic ``TypeAdapter`` per checked field, ~14 ms per env
#: reset). ``typed=True`` keeps ``Real(1)`` and ``Real(1.0)`` apart, so messages print what was given.
_memoised_type = functools.lru_cache(maxsize=None, typed=True)


@_memoised_type
def Whole(low: int | None = None, high: int | None = None) -> Any:  # noqa: N802 (a type factory)
    """A whole number (int) in [low, high]; ``3.0`` is 3, but ``2.5``, ``"3"`` and booleans are refused."""
    return Annotated[int, BeforeValidator(functools.partial(_whole, low=low, high=high))]


@_memoised_type
def Real(low: float | None = None, high: float | None = None, *, low_open: bool = False,  # noqa: N802
         high_open: bool = False) -> Any:
    """A finite number (float) in the range (open ends with ``low_open`` / ``high_open``); NaN is refused."""
    return Annotated[float, BeforeValidator(functools.partial(_real, low=low, high=high, low_open=low_open,
                                                              high_open=high_open))]


@_memoised_type
def Bytes(low: int | None = 0, high: int | None = MAX_BYTES) -> Any:  # noqa: N802
    """A size: bytes or a size string ("5KB", "32MiB"), stored as whole bytes in [low, high]."""
    return Annotated[int, BeforeValidator(functools.partial(_unit, parse_bytes, low=low, high=high, unit=" B"))]


@_memoised_type
def Duration(low: int | None = 0, high: int | None = MAX_TIME_NS) -> Any:  # noqa: N802
    """A duration: ns or a duration string ("10us"), stored as whole ns in [low, high]."""
    return Annotated[int, BeforeValidator(functools.partial(_unit, parse_time_ns, low=low, high=high, unit=" ns"))]


@_memoised_type
def Rate(low: float | None = None, high: float | None = None) -> Any:  # noqa: N802
    """A rate: bit/s or a rate string ("100Gbps"), stored as bit/s (float) in [1 bps, 1 Pbps] and [low, high]."""
    return Annotated[float, BeforeValidator(functools.partial(_unit, parse_rate_bps, low=low, high=high,
                                                              unit=" bps"))]


@_memoised_type
def OneOf(*choices: str) -> Any:  # noqa: N802
    """One of the given strings."""
    return Annotated[str, BeforeValidator(functools.partial(_one_of, choices=choices))]


#: A real boolean (Python or numpy); strings such as "no" and numbers are refused.
Flag = Annotated[bool, BeforeValidator(_flag)]
#: A string (numbers are not turned into strings).
Text = Annotated[str, BeforeValidator(_text)]


def describe_type(kind: Any) -> str:
    """What a field of one of this module's types accepts, in words (for generated reference pages).

    Reads the ranges from the validators themselves, so the text is what validation enforces:
    ``Whole(1, 8)`` -> ``"whole number in [1, 8]"``, ``Bytes(low=1)`` -> ``"size (bytes or "5KB") in
    [1, ...] B"``, ``list[Whole(1)]`` -> ``"list of whole number in [1, inf)"``, ``X | None`` ->
    ``"... or null"``, a :class:`ConfigModel` -> its class name.

    Args:
        kind: A field annotation (a type of this module, a list, a union, a model, a plain type).

    Returns:
        One line of text.
    """
    import types
    import typing

    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is Annotated:
        validators = [m for m in kind.__metadata__ if isinstance(m, BeforeValidator)]
        lengths = [m for m in kind.__metadata__ if getattr(m, "min_length", None) is not None]
        if validators:
            return _describe_validator(validators[0].func)
        inner = describe_type(args[0])
        return f"{inner} (at least {lengths[0].min_length})" if lengths else inner
    if origin in (typing.Union, types.UnionType):
        parts = [describe_type(a) for a in args if a is not type(None)]
        return " or ".join(parts) + (" or null" if type(None) in args else "")
    if origin in (list, tuple):
        return f"list of {describe_type(args[0])}" if args else "list"
    if origin is dict:
        return "mapping"
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return kind.__name__
    return getattr(kind, "__name__", str(kind))


def describe_field(info: Any) -> str:
    """:func:`describe_type` of a model field (pydantic keeps a top-level ``Annotated``'s parts in ``metadata``).

    Args:
        info: A pydantic ``FieldInfo`` (``Model.model_fields[name]``).

    Returns:
        One line of text.
    """
    validators = [m for m in info.metadata if isinstance(m, BeforeValidator)]
    if validators:
        return _describe_validator(validators[0].func)
    lengths = [m.min_length for m in info.metadata if getattr(m, "min_length", None) is not None]
    inner = describe_type(info.annotation)
    return f"{inner} (at least {lengths[0]})" if lengths else inner


def _describe_validator(func: Any) -> str:
    """The words for one of this module's ``BeforeValidator`` functions (a ``functools.partial``)."""
    if func is _flag:
        return "true or false"
    if func is _text:
        return "string"
    inner = func.func if isinstance(func, functools.partial) else func
    kw = func.keywords if isinstance(func, functools.partial) else {}
    if inner is _one_of:
        return "one of " + ", ".join(repr(c) for c in kw["choices"])
    if inner is _whole:
        return f"whole number in {range_text(kw['low'], kw['high'])}"
    if inner is _real:
        return f"number in {range_text(kw['low'], kw['high'], kw['low_open'], kw['high_open'])}"
    if inner is _unit:
        words = {parse_bytes: 'size (bytes or "5KB")', parse_time_ns: 'duration (ns or "10us")',
                 parse_rate_bps: 'rate (bit/s or "100Gbps")'}[func.args[0]]
        return f"{words} in {range_text(kw['low'], kw['high'])}{kw['unit']}"
    doc = (getattr(inner, "__doc__", None) or "").strip()  # a validator of another module: its own words
    return doc.splitlines()[0].rstrip(".") if doc else getattr(inner, "__name__", "value")


# ---------------------------------------------------------------------------------------- models
class ConfigModel(BaseModel):
    """Base of every ecngym config: unknown keys are refused, every field is validated.

    Build with :meth:`parse` (errors name the dotted field under ``prefix``); apply overrides with
    :meth:`updated`. (Keyword construction, ``RewardConfig(name="pred")``, validates too but raises
    pydantic's ``ValidationError``: use :meth:`parse` on user input.) Mapping-valued fields and nested
    models merge key by key in :meth:`updated`, except the fields named in ``replaced_whole`` (e.g. a
    topology: another kind takes other keys).
    """

    model_config = ConfigDict(extra="forbid", strict=True, validate_default=True, arbitrary_types_allowed=True)
    replaced_whole: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def parse(cls, data: Any = None, prefix: str = "") -> Any:
        """Validate ``data`` (a mapping, an OmegaConf config or ``None`` for the defaults).

        Raises:
            ConfigError: Naming the first bad field as ``prefix.field[index]...``.
        """
        if data is None:
            data = {}
        data = plain(data)
        if not isinstance(data, dict):
            raise ConfigError(prefix or cls.__name__, f"expected a mapping of fields, got {data!r}")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise _config_error(exc, prefix, cls) from None

    def updated(self, overrides: Any, prefix: str = "") -> Any:
        """Return a validated copy with (nested) ``overrides`` merged in.

        Raises:
            ConfigError: Naming the first bad field.
        """
        overrides = plain(overrides)
        if not isinstance(overrides, dict):
            raise ConfigError(prefix or type(self).__name__, f"expected a mapping of fields, got {overrides!r}")
        return type(self).parse(_merge(self.as_dict(), overrides, self.replaced_whole), prefix)

    def as_dict(self) -> dict[str, Any]:
        """The configuration as a plain nested dict (internal units), for logging and results."""
        return self.model_dump()


def field_error(field: str, message: str) -> ValueError:
    """A ``ValueError`` for a model validator that points the ConfigError at ``field`` (relative)."""
    return ValueError(f"\x00{field}\x00{message}")


def check(field: str, value: Any, kind: Any) -> Any:
    """Validate one value against a field type (``check("episodes", n, Whole(1))``).

    Raises:
        ConfigError: Naming ``field``.
    """
    try:
        return _adapter(kind).validate_python(plain(value), strict=True)
    except ValidationError as exc:
        model = kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None  # (names its fields)
        raise _config_error(exc, field, model) from None


def convert(value: Any, kind: Any, what: str = "") -> Any:
    """Like :func:`check`, for use inside a validator: raises a ``ValueError``.

    Pydantic turns that into a :class:`ConfigError` naming the field being validated, followed by
    ``what`` (a part of its value: ``env.action.templates[0].pmax``) when given (:func:`field_error`).
    """
    try:
        return check(what, value, kind)
    except ConfigError as exc:
        raise (field_error(what, exc.message) if what else ValueError(exc.message)) from None


@functools.lru_cache(maxsize=256)
def _cached_adapter(kind: Any) -> TypeAdapter:
    return TypeAdapter(kind)


def _adapter(kind: Any) -> TypeAdapter:
    try:
        return _cached_adapter(kind)
    except TypeError:  # an unhashable annotation
        return TypeAdapter(kind)


def config_values(node: Any, name: str = "") -> Any:
    """An OmegaConf node as plain dicts / lists, interpolations resolved.

    Args:
        node: The node (a DictConfig or ListConfig).
        name: The dotted name the node has in a composed config, for a node that is a config of
            its own (``OmegaConf.load`` of a controller file: ``"controller"``), so that messages
            name its keys as for the node of a composed config (``controller.path``), whose keys
            carry their full names already.

    Returns:
        The plain container.

    Raises:
        ConfigError: Naming the key of a mandatory value (``???``, e.g. ``fabric.hpcc_config``)
            left unset, which would otherwise pass on as the string ``"???"``.
    """
    from omegaconf import OmegaConf
    from omegaconf.errors import MissingMandatoryValue

    try:
        return OmegaConf.to_container(node, resolve=True, throw_on_missing=True)
    except MissingMandatoryValue as exc:
        key = exc.full_key or "config"
        # a root: its full keys lack the name. OmegaConf (2.3) has no public getter of a node's parent;
        # a relative OmegaConf.select(node, "..") finds it, but what relative keys mean in select has
        # changed between versions (omegaconf#660, #1303), so the private, stable call stays
        if name and node._get_parent() is None:
            key = f"{name}.{key}"
        raise ConfigError(key, f"required but not given (set {key}=...)") from None


def plain(value: Any) -> Any:
    """OmegaConf containers, mappings and tuples as plain dicts / lists (recursively).

    Raises:
        ConfigError: On a mandatory value left unset (:func:`config_values`).
    """
    if type(value).__module__.startswith("omegaconf"):
        value = config_values(value)
    if isinstance(value, BaseModel):
        return value
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def _merge(base: dict[str, Any], overrides: dict[str, Any], whole: frozenset[str]) -> dict[str, Any]:
    out = dict(base)
    for key, value in overrides.items():
        if key not in whole and isinstance(out.get(key), dict) and isinstance(value, dict):
            out[key] = _merge(out[key], value, frozenset())
        else:
            out[key] = value
    return out


def _dotted(prefix: str, loc: tuple[Any, ...]) -> str:
    name = prefix
    for part in loc:
        if isinstance(part, int):
            name += f"[{part}]"
        elif not str(part).startswith(("function-", "list[", "dict[", "tuple[", "nullable[", "union[")):
            name += f".{part}" if name else str(part)
    return name


def _config_error(exc: ValidationError, prefix: str, model: Any) -> ConfigError:
    err = exc.errors(include_url=False)[0]
    loc = tuple(err["loc"])
    kind = err["type"]
    if kind == "value_error":
        message = str(err["ctx"]["error"])
        if message.startswith("\x00"):  # field_error(): a cross-field rule naming its field
            _, rel, message = message.split("\x00", 2)
            loc = (*loc, *rel.split("."))
    elif kind == "extra_forbidden":
        known = _known_fields(model, loc[:-1])
        message = "unknown field" + (f"; known fields: {known}" if known else "")
    elif kind == "missing":
        message = "required field is missing"
    else:
        message = f"got {err.get('input')!r}: {err['msg'][0].lower()}{err['msg'][1:]}"
    return ConfigError(_dotted(prefix, loc) or (model.__name__ if model else "value"), message)


def _known_fields(model: Any, loc: tuple[Any, ...]) -> list[str]:
    for part in loc:
        if not (isinstance(model, type) and issubclass(model, BaseModel)) or part not in model.model_fields:
            return []
        model = model.model_fields[part].annotation
    if isinstance(model, type) and issubclass(model, BaseModel):
        return sorted(model.model_fields)
    return []


def check_whole(field: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int if it is a whole number in [low, high], else raise :class:`ConfigError`.

    Floats must be whole (``3.0``, not ``2.5``); booleans and strings are refused: :func:`Whole`'s
    rule, in its one-value form.

    Raises:
        ConfigError: Naming ``field``, the value and the allowed range.
    """
    return check(field, value, Whole(low, high))
