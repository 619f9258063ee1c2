"""Port AQM policies: chosen by name per switch port at run time, with bounded parameters.

Each policy is a C++ class (``sim_backend/model/*-aqm-policy.*``) whose tunables are ns-3 TypeId
attributes with checkers; this module is its Python face. The checkers are the one home of each
parameter's allowed range: :func:`policy_spec` reads them from the compiled module, so the
ranges in an error message are the ones the simulator enforces.

The policies are those the compiled module registers with ns-3 (:func:`policies`, named by
:func:`short_name`: ``EcnSharpAqmPolicy`` -> ``ecn_sharp``), so a new one needs nothing here: each
C++ class's documentation says what it does and cites its paper, and the
[AQM policy reference](../aqm-policies.md) lists every one with its C++ type, parameters and
telemetry.

The parameters an env's action tunes when it names none are declared by each policy too
(``PortAqmPolicy::DescribeActionAttributes``), read here by :func:`action_params`
(``ACTION_PARAMS``), and so is the RED marking curve a policy has (``PortAqmPolicy::DescribeMarkingCurve``,
:func:`marking_curve`).

Parameter names are the attributes' names in snake case (``KminBytes`` -> ``kmin_bytes``). Byte
and time parameters (``*_bytes``, ``*_ns``) accept human units ("65KB", "80us"); enumerations
take one of their names; booleans must be booleans.

Per-policy telemetry appears in ``Fabric.read_telemetry()`` under ``"<policy>.<name>"`` keys, one
value per port (NaN where the port runs another policy). Each policy declares its quantities in
C++ (``PortAqmPolicy::DescribeTelemetry``: name, unit, normaliser, help), read here by
:func:`telemetry`; the env's observation features are these (:func:`telemetry_specs`), and the
[AQM policy reference](../aqm-policies.md) lists them.
"""

from __future__ import annotations

import functools
import math
import numbers
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ecngym.error import ConfigError, check_range, shown
from ecngym.units import parse_bytes, parse_time_ns

#: Policies whose short name is not the rule of :func:`short_name` (the papers' names: PRED's FCS
#: is the part of PRED in the data plane; R-AQM keeps its "AQM").
_SHORT_NAMES = {"PredFcsAqmPolicy": "pred", "RAqmPolicy": "r_aqm"}


def short_name(type_name: str) -> str:
    """The short name of a policy's TypeId: its class name without ``AqmPolicy``, in snake case.

    ``ns3::ecngym::EcnSharpAqmPolicy`` -> ``ecn_sharp``; the two older names of :data:`_SHORT_NAMES`
    (``PredFcsAqmPolicy`` -> ``pred``, ``RAqmPolicy`` -> ``r_aqm``) are kept as they are.
    """
    cls = type_name.rpartition("::")[2]
    return _SHORT_NAMES.get(cls) or _snake(cls.removesuffix("AqmPolicy"))


@functools.cache
def policies() -> dict[str, str]:
    """Short name -> C++ TypeId name of every port AQM policy the compiled module registers (sorted).

    Read from ns-3's TypeId registry (``_fabric.aqm_types``: the constructible children of
    ``PortAqmPolicy``), so a policy compiled in is known here by that alone.

    Raises:
        RuntimeError: If two policies would share a short name.
    """
    from ecngym.sim_backend import _fabric

    out: dict[str, str] = {}
    for type_name in sorted(_fabric.aqm_types(), key=short_name):
        name = short_name(type_name)
        if name in out:
            raise RuntimeError(f"AQM policies {out[name]} and {type_name} share the short name {name!r}")
        out[name] = type_name
    return out


@dataclass(frozen=True)
class TelemetrySpec:
    """One quantity a policy reports per interval, as its C++ class declares it.

    Attributes:
        name: Telemetry key, ``"<policy>.<quantity>"``.
        unit: Its unit (``"packets"``, ``"ns"``, ``"0/1"``, ...).
        normaliser: How an observation maps it into [0, 1] (:mod:`ecngym.envs.observation`):
            ``"share:<key>"``, ``"saturate:<scale>"``, ``"fraction_of:<scale>"``, ``"queue_time"``
            or ``"flag"``.
        help: What it counts.
    """

    name: str
    unit: str
    normaliser: str
    help: str


@functools.cache
def telemetry(policy: str) -> tuple[TelemetrySpec, ...]:
    """The telemetry a policy declares (``PortAqmPolicy::DescribeTelemetry``), in the order it reports it.

    Raises:
        ConfigError: If the policy is unknown.
    """
    from ecngym.sim_backend import _fabric

    return tuple(TelemetrySpec(**d) for d in _fabric.aqm_telemetry(resolve(policy)[1]))


@functools.cache
def telemetry_specs() -> dict[str, TelemetrySpec]:
    """Every policy's telemetry by key (policies by short name, then each policy's own order)."""
    return {t.name: t for name in policies() for t in telemetry(name)}


def __getattr__(name: str) -> Any:
    """``POLICIES``: :func:`policies`; ``ACTION_PARAMS``: :func:`action_params`.

    Read when first used (the C++ module loads then, not at import).
    """
    if name == "POLICIES":
        return policies()
    if name == "ACTION_PARAMS":
        return action_params()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def action_params() -> dict[str, tuple[str, ...]]:
    """Short name -> the parameters an env's action tunes when ``env.action.params`` names none.

    Each policy declares them in C++ (``PortAqmPolicy::DescribeActionAttributes``: the knobs its
    paper tunes, e.g. PRED's QLA sets lambda, PRED §IV-B; ECN#'s two sojourn targets, ECN# §3;
    R-AQM's K_min / K_max, R-AQM §IV); a policy that declares none is not listed, and an action on
    it names its parameters.

    Raises:
        RuntimeError: If a policy declares an attribute it does not have.
    """
    from ecngym.sim_backend import _fabric

    out: dict[str, tuple[str, ...]] = {}
    for name, type_name in policies().items():
        by_attribute = {s.attribute: s.name for s in _policy_spec(type_name).values()}
        params = tuple(by_attribute[a] for a in _fabric.aqm_action_attributes(type_name))
        if params:
            out[name] = params
    return out


@functools.cache
def marking_curve(policy: str) -> tuple[str, ...]:
    """The parameters that are a policy's RED marking curve, (Kmin, Kmax, Pmax); ``()`` when it has none.

    Each policy declares its curve in C++ (``PortAqmPolicy::DescribeMarkingCurve``): the env's
    ``kmin``, ``kmax`` and ``pmax`` observation features read it, on ports whose policy has one.

    Raises:
        ConfigError: If the policy is unknown.
    """
    from ecngym.sim_backend import _fabric

    type_name = resolve(policy)[1]
    by_attribute = {s.attribute: s.name for s in _policy_spec(type_name).values()}
    return tuple(by_attribute[a] for a in _fabric.aqm_marking_curve(type_name))


def curve_policies() -> tuple[str, ...]:
    """The policies that declare a marking curve (:func:`marking_curve`), by short name."""
    return tuple(name for name in policies() if marking_curve(name))


@functools.cache
def birth_policy() -> str:
    """The policy every switch port is born with where ``fabric.aqm`` sets none (C++ ``FabricConfig::aqmTypeId``)."""
    from ecngym.sim_backend import _fabric

    return resolve(_fabric.FabricConfig().aqm_type_id)[0]


@dataclass(frozen=True)
class ParamSpec:
    """One tunable of a policy, as its C++ TypeId attribute declares it.

    Attributes:
        name: Python name (snake case).
        attribute: C++ attribute name.
        kind: ``"int"``, ``"float"``, ``"bool"`` or ``"enum"``.
        low, high: Allowed range (numbers; None for bool / enum).
        choices: Allowed names (enum).
        default: Default value (Python type).
        help: Description.
    """

    name: str
    attribute: str
    kind: str
    low: float | None
    high: float | None
    choices: tuple[str, ...]
    default: Any
    help: str

    def convert(self, value: Any, field: str) -> Any:
        """Return ``value`` in internal units (bytes, ns), checked against the range.

        Raises:
            ConfigError: Naming ``field`` and the allowed range or values.
        """
        if self.kind == "bool":
            if isinstance(value, bool) or type(value).__name__ == "bool_":
                return bool(value)
            raise ConfigError(field, f"expected true or false, got {value!r}")
        if self.kind == "enum":
            # a string only: `in` on an array compares elementwise
            if not isinstance(value, str) or value not in self.choices:
                raise ConfigError(field, f"got {value!r}, allowed: {', '.join(map(repr, self.choices))}")
            return value
        if self.name.endswith("_bytes"):
            v: Any = parse_bytes(value, field)
        elif self.name.endswith("_ns"):
            v = parse_time_ns(value, field)
        elif isinstance(value, bool) or not isinstance(value, numbers.Real):  # (numpy booleans are no Real)
            # (a complex number, an array or a string is no number: float() would drop an
            # imaginary part or fail with a TypeError)
            raise ConfigError(field, f"expected a number, got {shown(value)}")
        elif isinstance(value, numbers.Integral):  # range-checked exactly, even beyond float range (10**400)
            v = check_range(field, int(value), self.low, self.high)
            return float(v) if self.kind == "float" else v
        else:
            v = float(value)
            if self.kind == "int":
                if not (math.isfinite(v) and v == math.floor(v)):
                    raise ConfigError(field, f"expected a whole number, got {shown(value)}")
                v = int(v)
        # (the message shows the value as given: 4.0, not the 4 it became; '5MB' and its bytes)
        return check_range(field, float(v) if self.kind == "float" else v, self.low, self.high, given=value)

    def serialise(self, value: Any) -> str:
        """Return the ns-3 attribute string of an already converted value."""
        if self.kind == "bool":
            return "true" if value else "false"
        if self.kind == "float":
            return repr(float(value))
        return str(value)

    def parse(self, text: str) -> Any:
        """Return the Python value of an ns-3 attribute string."""
        if self.kind == "bool":
            return text == "true"
        if self.kind == "int":
            return int(text)
        if self.kind == "float":
            return float(text)
        return text


def _snake(camel: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", camel).lower()


def spec_of_attribute(attr: dict[str, str]) -> ParamSpec:
    """Return the :class:`ParamSpec` of one TypeId attribute as the module describes it.

    Args:
        attr: ``{"name", "help", "initial", "checker"}`` (``describe_aqm`` / ``describe_tcp_host``).

    Returns:
        The parameter, named in snake case, with the checker's range.
    """
    checker = attr["checker"]
    name = _snake(attr["name"])
    if checker == "bool":
        return ParamSpec(name, attr["name"], "bool", None, None, (), attr["initial"] == "true", attr["help"])
    m = re.fullmatch(r"(\S+) (\S+):(\S+)", checker)
    if m is None:  # an enumeration: "A|B|C"
        choices = tuple(checker.split("|"))
        return ParamSpec(name, attr["name"], "enum", None, None, choices, attr["initial"], attr["help"])
    ctype, lo, hi = m.groups()
    kind = "float" if ctype in ("double", "float") else "int"
    conv = float if kind == "float" else int
    default = conv(attr["initial"])
    return ParamSpec(name, attr["name"], kind, conv(lo), conv(hi), (), default, attr["help"])


def resolve(policy: str, field: str = "aqm.policy") -> tuple[str, str]:
    """Return ``(short name, TypeId name)`` of a policy given by short or TypeId name.

    Raises:
        ConfigError: If the policy is unknown (listing the known ones).
    """
    if not isinstance(policy, str):  # a list or dict would be a TypeError (unhashable) in the lookup
        raise ConfigError(field, f"expected a policy name (a string), got {policy!r}; known: "
                                 f"{', '.join(policies())}")
    known = policies()
    if policy in known:
        return policy, known[policy]
    for short, tid in known.items():
        if policy == tid:
            return short, tid
    raise ConfigError(field, f"unknown AQM policy {policy!r}; known: {', '.join(known)}")


def policy_spec(policy: str) -> dict[str, ParamSpec]:
    """Return the parameters of a policy (by short name), read from its C++ TypeId.

    Raises:
        ConfigError: If the policy is unknown (or not a string).
    """
    return _policy_spec(resolve(policy)[1])


@functools.cache
def _policy_spec(type_name: str) -> dict[str, ParamSpec]:
    from ecngym.sim_backend import _fabric

    return {s.name: s for s in map(spec_of_attribute, _fabric.describe_aqm(type_name))}


def policy_defaults(policy: str) -> dict[str, Any]:
    """Return the default value of every parameter of a policy."""
    return {name: spec.default for name, spec in policy_spec(policy).items()}


def validate_params(policy: str, params: dict[str, Any], prefix: str | None = None) -> dict[str, Any]:
    """Check a policy's parameters and return them converted to internal units.

    Args:
        policy: Short or TypeId name.
        params: Parameter name -> value (human units allowed).
        prefix: Field prefix for error messages (default ``"aqm.<policy>"``).

    Raises:
        ConfigError: On an unknown policy or parameter (listing the known ones), or a value
            outside its allowed range (naming policy, field and range).
    """
    short, _ = resolve(policy, prefix or "aqm.policy")
    prefix = prefix or f"aqm.{short}"
    spec = policy_spec(short)
    out: dict[str, Any] = {}
    for key, value in params.items():
        if key not in spec:
            raise ConfigError(f"{prefix}.{key}", f"{short} has no parameter {key!r}; known: {', '.join(spec)}")
        out[key] = spec[key].convert(value, f"{prefix}.{key}")
    return out


def validate_setting(policy: str, params: dict[str, Any], prefix: str, base: dict[str, Any] | None = None
                     ) -> dict[str, Any]:
    """Check a policy's parameters as a whole setting: each against its checker, then the policy's consistency rule.

    The consistency rule is the simulator's (``PortAqmPolicy::CheckConsistency``), run on a scratch
    instance that has the defaults for every parameter neither ``base`` nor ``params`` gives, as
    ``Fabric.set_aqm`` runs it before it installs a policy.

    Args:
        policy: Short or TypeId name.
        params: Parameter name -> value (human units allowed).
        prefix: The setting's field, named in every error (``"fabric.aqm.all"``).
        base: Already converted parameters that ``params`` overrides (the setting of the ports
            this one lands on, when they run the same policy).

    Returns:
        ``params`` converted to internal units (without ``base``).

    Raises:
        ConfigError: As :func:`validate_params`, or naming ``prefix`` with the rule the merged
            setting breaks (``kmax_bytes (1000) must be >= kmin_bytes (2000)``).
    """
    short, _ = resolve(policy, f"{prefix}.policy")
    values = validate_params(short, params, prefix)
    check_setting(short, {**(base or {}), **values}, prefix)
    return values


def setting_error(policy: str, setting: dict[str, Any]) -> str:
    """The policy's own verdict on a full setting ("" if good): its checkers and consistency rule.

    Runs the C++ check (``PortAqmPolicy::CheckConsistency``) on a scratch instance, the one
    ``Fabric.set_aqm`` runs before it installs a policy.

    Args:
        policy: Short name.
        setting: Parameter name -> value in internal units (the rest keep the policy's defaults).

    Returns:
        The simulator's message, or ``""`` when the setting is good.
    """
    from ecngym.sim_backend import _fabric

    names, strings = to_attributes(policy, setting)
    return _fabric.check_aqm(policies()[policy], names, strings)


def check_setting(policy: str, setting: dict[str, Any], field: str) -> None:
    """Raise :class:`ConfigError` naming ``field`` if the policy rejects the setting (:func:`setting_error`)."""
    bad = setting_error(policy, setting)
    if bad:
        raise consistency_error(policy, bad, field)


def validate_rows(policy: str, params: dict[str, Any], ports: np.ndarray, prefix: str | None = None
                  ) -> tuple[list[str], np.ndarray]:
    """Check per-port parameters and return them as the rows ``_fabric.Fabric.set_aqm_values`` takes.

    Each value is checked as :func:`validate_params` checks it (the C++ checker's range); the
    policy's consistency rule is the simulator's, per port.

    Args:
        policy: Short or TypeId name.
        params: Parameter name -> one value for every port, or one per port.
        ports: The port ids (named in a message about one port's value).
        prefix: Field prefix for error messages (default ``"aqm.<policy>"``).

    Returns:
        ``(attribute names, float64 array (len(ports), len(params)))`` in internal units (booleans 0 / 1).

    Raises:
        ConfigError: As :func:`validate_params`, a per-port value named by its entry
            (``field[i]``), its port and the count of further bad entries; on a wrong count, a
            per-port enumeration, or a whole number beyond 2^53 (a row is float64, exact below it).
    """
    short, _ = resolve(policy, prefix or "aqm.policy")
    prefix = prefix or f"aqm.{short}"
    spec = policy_spec(short)
    n = len(ports)
    rows = np.empty((n, len(params)), dtype=np.float64)
    names = []
    for k, (key, value) in enumerate(params.items()):
        if key not in spec:
            raise ConfigError(f"{prefix}.{key}", f"{short} has no parameter {key!r}; known: {', '.join(spec)}")
        s, field = spec[key], f"{prefix}.{key}"
        names.append(s.attribute)
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()  # the scalar it holds, broadcast as that scalar
        if isinstance(value, (str, bytes)) or np.ndim(value) == 0:
            rows[:, k] = _row_value(s, s.convert(value, field), field)
            continue
        items = np.asarray(value, dtype=object)
        if items.shape != (n,):
            raise ConfigError(field, f"expected one value or {n} (one per port), got shape {items.shape}")
        bad: list[tuple[int, ConfigError]] = []
        for i, v in enumerate(items.tolist()):
            try:
                rows[i, k] = _row_value(s, s.convert(v, field), field)
            except ConfigError as e:
                bad.append((i, e))
        if bad:
            i, e = bad[0]
            more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
            raise ConfigError(f"{field}[{i}]" if n > 1 else field, f"port {int(ports[i])}{more}: {e.message}")
    return names, rows


def _row_value(spec: ParamSpec, value: Any, field: str) -> float:
    """``value`` (converted) as a float64 row entry, refused where float64 would round it."""
    if spec.kind == "enum":
        raise ConfigError(field, "an enumeration is set with one value for every port (set_aqm)")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
        raise ConfigError(field, f"got {value}: a per-port value must be at most 2^53 (exact in float64); "
                                 "give one value for every port instead")
    return float(value)


def to_attributes(policy: str, params: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Return the (attribute names, attribute strings) of already validated parameters."""
    spec = policy_spec(resolve(policy)[0])
    return [spec[k].attribute for k in params], [spec[k].serialise(v) for k, v in params.items()]


def consistency_error(policy: str, message: str, prefix: str | None = None) -> ConfigError:
    """Turn the simulator's consistency message (C++ attribute names) into a ConfigError."""
    short, tid = resolve(policy)
    text = message.removeprefix("aqm: ").removeprefix(f"{tid}: ")
    for spec in policy_spec(short).values():
        text = re.sub(rf"\b{spec.attribute}\b", spec.name, text)
    return ConfigError(prefix or f"aqm.{short}", text)


def from_attributes(type_name: str, attrs: dict[str, str]) -> dict[str, Any]:
    """Return ``{"policy": short name, param: value, ...}`` from the simulator's readback."""
    short, _ = resolve(type_name)
    by_attr = {s.attribute: s for s in policy_spec(short).values()}
    out: dict[str, Any] = {"policy": short}
    for attribute, text in attrs.items():
        s = by_attr[attribute]
        out[s.name] = s.parse(text)
    return out


def split_setting(setting: Any, field: str) -> tuple[str, dict[str, Any]]:
    """Split ``{"policy": name, **params}`` (or a bare policy name) into (name, params).

    Raises:
        ConfigError: If the mapping has no ``policy`` key or is not a mapping.
    """
    if isinstance(setting, str):
        return resolve(setting, f"{field}.policy")[0], {}
    try:
        d = dict(setting)
    except (TypeError, ValueError):
        raise ConfigError(field, f"expected a mapping {{policy: name, ...parameters}}, got {setting!r}") from None
    if "policy" not in d:
        raise ConfigError(f"{field}.policy", f"missing; known policies: {', '.join(policies())}")
    name = resolve(d.pop("policy"), f"{field}.policy")[0]
    return name, d
