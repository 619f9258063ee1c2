"""Actions -> ECN settings: discrete templates or a continuous box, per port / layer / all."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from ecngym.envs.config import ActionConfig, number
from ecngym.error import ConfigError, InvalidAction, check_range, first_offending, shown
from ecngym.units import parse_bytes
from ecngym.validation import Real, check, is_finite_number

REFERENCE_RATE_BPS = 100e9
#: Distinct discrete actions whose settings :meth:`EcnActionMapper.to_settings` remembers.
SETTINGS_MEMO_SIZE = 4096


def action_key(action: object) -> object:
    """A hashable, exact identity of an action (``None`` when it is not cheap to build)."""
    if isinstance(action, np.ndarray):
        return (action.dtype.str, action.shape, action.tobytes())
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        return int(action)
    return None


@dataclass
class EcnSetting:
    """One (Kmin, Kmax, Pmax) setting in bytes."""

    kmin_bytes: int
    kmax_bytes: int
    pmax: float


class EcnActionMapper:
    """Builds the action space and turns actions into per-port ECN settings.

    Its actuation interface is the one every action mapper offers the scenario: :attr:`policy`,
    :attr:`params` and :meth:`port_values` (one row of the tuned parameters per controlled port,
    what ``Fabric.set_aqm_values`` takes).

    Args:
        cfg: Action configuration.
        ports: Controlled switch egress port ids.
        port_layers: Layer name of each controlled port.
        port_rates_bps: Line rate of each controlled port.
        static_default: The fabric's own ECN setting (always a template).

    Raises:
        ConfigError: On a bad type, scope, template or range.
    """

    #: The policy whose parameters the action sets, and those parameters (columns of :meth:`port_values`).
    policy = "red"
    params = ("kmin_bytes", "kmax_bytes", "pmax")

    def __init__(self, cfg: ActionConfig, ports: np.ndarray, port_layers: np.ndarray,
                 port_rates_bps: np.ndarray, static_default: EcnSetting) -> None:
        self.cfg = cfg
        self.ports = ports
        self._memo: dict[object, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # see to_settings
        self._values_memo: dict[object, np.ndarray] = {}  # see port_values
        if cfg.type not in ("discrete", "continuous"):
            raise ConfigError("env.action.type", f"got {cfg.type!r}, allowed: 'discrete', 'continuous'")
        if cfg.scope not in ("all", "layer", "port"):
            raise ConfigError("env.action.scope", f"got {cfg.scope!r}, allowed: 'all', 'layer', 'port'")
        self.groups, self.group_names = action_units(cfg.scope, ports, port_layers)
        self.n_units = len(self.group_names)
        self.rate_scale = (port_rates_bps / REFERENCE_RATE_BPS) if cfg.scale_with_rate else np.ones(len(ports))
        # each unit's one rate scale (NaN: its ports differ, so encode cannot address the unit)
        low, high = (np.full(self.n_units, fill) for fill in (np.inf, -np.inf))
        np.minimum.at(low, self.groups, self.rate_scale)
        np.maximum.at(high, self.groups, self.rate_scale)
        self._unit_scale = np.where(low == high, low, np.nan)
        # both representations are checked whichever is used: a bad field fails now, not after a switch
        self.templates, static_index = self._templates(static_default)
        self.kmin_lo, self.kmin_hi = self._range("kmin_range", cfg.kmin_range)
        self.span_lo, self.span_hi = self._range("kmax_span_range", cfg.kmax_span_range)
        if len(cfg.pmax_range) != 2:
            raise ConfigError("env.action.pmax_range", f"expected [low, high], got {cfg.pmax_range!r}")
        field = "env.action.pmax_range"
        self.pmax_lo, self.pmax_hi = (float(check_range(field, number(field, v), 0, 1)) for v in cfg.pmax_range)
        if self.pmax_lo > self.pmax_hi:
            raise ConfigError("env.action.pmax_range", f"low {self.pmax_lo} > high {self.pmax_hi}")
        if cfg.type == "discrete":
            n = len(self.templates)
            self._template_kmin = np.array([t.kmin_bytes for t in self.templates], dtype=np.float64)
            self._template_kmax = np.array([t.kmax_bytes for t in self.templates], dtype=np.float64)
            self._template_pmax = np.array([t.pmax for t in self.templates], dtype=np.float64)
            self.space = spaces.Discrete(n) if self.n_units == 1 else spaces.MultiDiscrete([n] * self.n_units)
        else:
            self.space = spaces.Box(-1.0, 1.0, shape=(self.n_units, 3), dtype=np.float32)
        self.static_index = 0 if cfg.type == "continuous" else static_index

    # ------------------------------------------------------------------ construction
    def _templates(self, default: EcnSetting) -> tuple[list[EcnSetting], int]:
        """The discrete templates (``env.action.templates``, then the static setting if it is none of them).

        Returns:
            The templates, and the index of the static setting (``env.action.static_default``, else ``default``).
        """
        out = []
        fields = [f"env.action.templates[{i}]" for i in range(len(self.cfg.templates))]
        entries = [*self.cfg.templates, self.cfg.static_default or [default.kmin_bytes, default.kmax_bytes,
                                                                     default.pmax]]
        fields.append("env.action.static_default")
        for field, t in zip(fields, entries, strict=True):
            setting = _setting(field, t)
            if setting not in out:
                out.append(setting)
            elif field != "env.action.static_default":  # (the default may be a template: it is one then)
                # two indices of one setting: the space would silently lose one
                raise ConfigError(field, f"repeats env.action.templates[{out.index(setting)}] ({t!r}); "
                                         "give each setting once")
        return out, out.index(_setting(fields[-1], entries[-1]))

    def _range(self, name: str, pair: list) -> tuple[int, int]:
        if len(pair) != 2:
            raise ConfigError(f"env.action.{name}", f"expected [low, high], got {pair!r}")
        lo, hi = parse_bytes(pair[0], f"env.action.{name}"), parse_bytes(pair[1], f"env.action.{name}")
        if lo > hi:
            raise ConfigError(f"env.action.{name}", f"low {lo} > high {hi}")
        return lo, hi

    # ------------------------------------------------------------------ mapping
    def static_action(self) -> np.ndarray | int:
        """The action that applies the static default everywhere."""
        if self.cfg.type == "discrete":
            return self.static_index if self.n_units == 1 else np.full(self.n_units, self.static_index)
        raise InvalidAction("a continuous action space has no designated static action")

    def to_settings(self, action: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Validate ``action`` and return per-port (kmin_bytes, kmax_bytes, pmax) arrays (read-only).

        Discrete actions are remembered by their exact identity (dtype, shape, bytes), so an
        action seen before costs a lookup (up to :data:`SETTINGS_MEMO_SIZE` of them).

        Raises:
            InvalidAction: If the action is not in the action space (never clamped).
        """
        key = action_key(action) if self.cfg.type == "discrete" else None
        if key is not None and key in self._memo:
            return self._memo[key]
        out = self._to_settings(action)
        for a in out:
            a.setflags(write=False)  # shared by every later lookup of this action
        if key is not None:
            if len(self._memo) >= SETTINGS_MEMO_SIZE:
                self._memo.clear()
            self._memo[key] = out
        return out

    def port_values(self, action: object) -> np.ndarray:
        """Validate ``action`` and return one (kmin_bytes, kmax_bytes, pmax) row per port.

        Returns:
            A read-only, C-contiguous ``float64`` array ``(ports, 3)`` (the byte values are whole
            numbers below 2^53, exact in float64), remembered for a discrete action as
            :meth:`to_settings` is.

        Raises:
            InvalidAction: If the action is not in the action space (never clamped).
        """
        key = action_key(action) if self.cfg.type == "discrete" else None
        if key is not None and key in self._values_memo:
            return self._values_memo[key]
        values = np.column_stack(self.to_settings(action)).astype(np.float64, copy=False)
        values.setflags(write=False)
        if key is not None:
            if len(self._values_memo) >= SETTINGS_MEMO_SIZE:
                self._values_memo.clear()
            self._values_memo[key] = values
        return values

    def _to_settings(self, action: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.cfg.type == "discrete":
            per_port = template_indices(action, len(self.templates), self.space)[self.groups]
            kmin, kmax = self._template_kmin[per_port], self._template_kmax[per_port]
            pmax = self._template_pmax[per_port]
        else:
            u = (box_values(action, self.space.shape) + 1.0) / 2.0
            kmin = (self.kmin_lo + u[:, 0] * (self.kmin_hi - self.kmin_lo))[self.groups]
            kmax = kmin + (self.span_lo + u[:, 1] * (self.span_hi - self.span_lo))[self.groups]
            pmax = (self.pmax_lo + u[:, 2] * (self.pmax_hi - self.pmax_lo))[self.groups]
        kmin = np.round(kmin * self.rate_scale).astype(np.uint64)
        kmax = np.maximum(np.round(kmax * self.rate_scale).astype(np.uint64), kmin)
        return kmin, kmax, pmax

    def encode(self, kmin_bytes: Any, kmax_bytes: Any, pmax: Any) -> np.ndarray | int:
        """The action that sets (Kmin, Kmax, Pmax) on every unit: the inverse of :meth:`to_settings`.

        Values are what the ports should get, in bytes at the ports' own rates (a scalar for all
        units, or one entry per unit in unit order). With ``scale_with_rate`` each unit's ports must
        share one rate scale. A continuous action is exact to within one byte of float32 rounding
        (``to_settings(encode(x))`` is checked against ``x``); a discrete one must hit a template.

        Raises:
            InvalidAction: If a value is not a number or has another count than the units
                (:func:`unit_values`), or is not expressible in this action space (not a template, or
                outside a continuous range); nothing is clamped.
        """
        n = self.n_units
        want = [unit_values(name, v, n) for name, v in (("kmin_bytes", kmin_bytes), ("kmax_bytes", kmax_bytes),
                                                          ("pmax", pmax))]
        mixed = np.flatnonzero(np.isnan(self._unit_scale))
        if len(mixed):
            raise InvalidAction(f"unit {self.group_names[mixed[0]]!r} mixes port rates; with scale_with_rate its "
                                "ports take different byte values for one action")
        kmin_u, kmax_u, pmax_u = want[0] / self._unit_scale, want[1] / self._unit_scale, want[2]
        below = np.flatnonzero(kmax_u < kmin_u)
        if len(below):
            u, more = first_offending(below)
            raise InvalidAction(f"kmax_bytes[{u}]: got {want[1][u]:g} B, below kmin_bytes {want[0][u]:g} B (unit "
                                f"{self.group_names[u]!r}){more}")
        if self.cfg.type == "discrete":
            hits = ((np.abs(self._template_kmin - kmin_u[:, None]) <= 0.5)  # (units, templates)
                    & (np.abs(self._template_kmax - kmax_u[:, None]) <= 0.5)
                    & (np.abs(self._template_pmax - pmax_u[:, None]) <= 1e-9))
            missing = np.flatnonzero(~hits.any(axis=1))
            if len(missing):
                u, more = first_offending(missing)
                raise InvalidAction(f"({want[0][u]:.0f} B, {want[1][u]:.0f} B, {want[2][u]}) on unit "
                                    f"{self.group_names[u]!r}{more} is not one of the env's ECN templates; add it via "
                                    "env.action.static_default or env.action.templates, or use "
                                    "action.type=continuous")
            idx = hits.argmax(axis=1).astype(np.int64)  # the first matching template, as before
            return int(idx[0]) if n == 1 else idx
        action = np.empty((n, 3), dtype=np.float32)
        for col, (v, lo, hi, name) in enumerate(((kmin_u, self.kmin_lo, self.kmin_hi, "kmin"),
                                                  (kmax_u - kmin_u, self.span_lo, self.span_hi, "kmax - kmin"),
                                                  (pmax_u, self.pmax_lo, self.pmax_hi, "pmax"))):
            bad = np.flatnonzero((v < lo - 1e-9) | (v > hi + 1e-9))
            if len(bad):
                u, more = first_offending(bad)
                raise InvalidAction(f"{name} {v[u]:g} (unit {self.group_names[u]!r}, at the reference rate){more} "
                                    f"outside the continuous action range [{lo}, {hi}]")
            action[:, col] = 0.0 if hi == lo else np.clip(2 * (v - lo) / (hi - lo) - 1, -1.0, 1.0)
        kmin, kmax, pm = self.to_settings(action)
        port_want = [w[self.groups] for w in want]
        off = (np.abs(kmin - port_want[0]) > 1) | (np.abs(kmax - port_want[1]) > 1) | (np.abs(pm - port_want[2]) > 1e-6)
        if off.any():
            p, more = first_offending(np.flatnonzero(off))
            u = self.groups[p]
            raise InvalidAction(f"({want[0][u]:.0f} B, {want[1][u]:.0f} B, {want[2][u]}) on unit "
                                f"{self.group_names[u]!r} (port {self.ports[p]}){more} does not survive float32 "
                                "encoding to within 1 byte / 1e-6")
        return action

    def param_bounds(self) -> dict[str, tuple[float, float]]:
        """None: the RED curve is shown by the ``kmin`` / ``kmax`` / ``pmax`` features, not ``aqm.<parameter>``."""
        return {}

    @property
    def kmax_bound_bytes(self) -> float:
        """Largest Kmax this mapper can produce (for feature normalisation)."""
        if self.cfg.type == "discrete":
            top = max(t.kmax_bytes for t in self.templates)
        else:
            top = self.kmin_hi + self.span_hi
        return float(top * self.rate_scale.max())


def unit_values(name: str, value: Any, n_units: int) -> np.ndarray:
    """One argument of an action's ``encode`` as float64 values, one per action unit.

    The one check of the values given to :meth:`EcnActionMapper.encode` and
    :meth:`~ecngym.envs.aqm_action.AqmActionMapper.encode`: a real number (for every unit) or a
    flat list / array of ``n_units`` of them; booleans (``True`` is not 1), strings (``"20KB"``),
    ``None``, NaN and infinities are refused, and nothing but a single number is broadcast.

    Args:
        name: The argument's name (``"kmin_bytes"``, a tuned parameter), for the message.
        value: The value as given.
        n_units: How many units the action has.

    Returns:
        ``n_units`` float64 values (a read-only broadcast of a single number).

    Raises:
        InvalidAction: Naming ``name`` (and the first bad entry), what was given and what is allowed.
    """
    expected = f"expected a finite number (for every unit) or {n_units} of them (one per unit)"
    try:
        a = np.asarray(value)
    except (ValueError, TypeError):  # ragged nesting
        raise InvalidAction(f"{name}: {expected}, got {value!r}") from None
    if a.ndim > 1 or (a.ndim == 1 and len(a) != n_units):
        raise InvalidAction(f"{name}: {expected}, got {_shape_of(value, a)}")
    if isinstance(value, np.ndarray) and a.dtype.kind in "iuf":  # no booleans or strings in there
        items, bad = a.reshape(-1), np.flatnonzero(~np.isfinite(a.reshape(-1)))
    else:  # each entry as given: np.asarray([1, True]) has made True a 1
        items = [a.item()] if a.ndim == 0 else list(value)
        bad = [i for i, v in enumerate(items) if not is_finite_number(v)]
    if len(bad):
        if a.ndim == 0:
            raise InvalidAction(f"{name}: {expected}, got {value!r}")
        i, more = first_offending(bad)
        raise InvalidAction(f"{name}[{i}]: got {shown(items[i])}{more}, expected a finite number")
    return np.broadcast_to(a.astype(np.float64), (n_units,))


def template_indices(action: object, n_templates: int, space: spaces.Space) -> np.ndarray:
    """Check a discrete action and return its template indices, one per unit (int64).

    The one check of a discrete action (single-agent, AQM-parameter and per-agent actions): whole
    numbers (integers, or floats like ``3.0``) in [0, ``n_templates``), in the shape of ``space``
    (one index for a ``Discrete`` space, as Gymnasium's ``Discrete.contains`` has it: ``[3]`` is
    not an element of ``Discrete(13)``; one per unit for a ``MultiDiscrete`` one); booleans,
    strings, NaN and non-integral floats are refused (also a boolean in a list, ``[True, 1]``, which
    NumPy makes a 1), nothing is clamped.

    Args:
        action: The action as given (an int, a NumPy scalar or array, a list).
        n_templates: How many templates each index chooses from.
        space: The action space: its shape is the action's, and it is named in the message.

    Returns:
        The indices, one per unit (a 1-D array also for a ``Discrete`` space).

    Raises:
        InvalidAction: Naming the space and what was given.
    """
    if (isinstance(space, spaces.Discrete) and (type(action) is int or isinstance(action, np.integer))
            and 0 <= action < n_templates):  # a policy's index (~1 of 22 us): nothing below could refuse it
        return np.array([action], dtype=np.int64)
    try:
        a = np.asarray(action)
    except (ValueError, TypeError):  # ragged nesting, or not array-like at all
        raise InvalidAction(f"expected an element of {space}, got {action!r}") from None
    kind = str(space) if isinstance(space, spaces.Discrete) else type(space).__name__  # (not MultiDiscrete's nvec)
    expected = (f"{math.prod(space.shape)} integer template index(es) in [0, {n_templates}) (an element of {kind}: "
                f"shape {space.shape})")
    if a.shape != space.shape:
        raise InvalidAction(f"expected {expected}, got {_shape_of(action, a)}")
    _refuse_listed_bools(action, a, f"expected {expected}")
    if a.dtype.kind in "iu":
        whole = np.ones(a.shape, dtype=bool)
    elif a.dtype.kind == "f":
        whole = np.isfinite(a) & (a == np.round(a))
    else:  # booleans, strings, objects
        whole = np.zeros(a.shape, dtype=bool)
    if not whole.all():
        raise InvalidAction(f"expected {expected}, {_offending(action, a, whole)}")
    # the range is checked before the cast: 2**63 or 1e300 would wrap (or warn) as int64
    inside = (a >= 0) & (a < n_templates)
    if not inside.all():
        raise InvalidAction(f"expected {expected}, {_offending(action, a, inside)}")
    return a.astype(np.int64).reshape(-1)


def box_values(action: object, shape: tuple[int, ...]) -> np.ndarray:
    """Check a continuous action and return it as float64: ``shape``, finite, every entry in [-1, 1].

    The one check of a continuous action (single-agent, AQM-parameter and per-agent actions);
    booleans (also in a list, ``[[True, 0, 0]]``, which NumPy makes a 1.0), strings and complex
    numbers are refused, nothing is clamped.

    Raises:
        InvalidAction: Naming the expected shape and what was given (its first bad entry).
    """
    expected = f"expected a float array of shape {tuple(shape)} in [-1, 1]"
    try:
        a = np.asarray(action)
    except (ValueError, TypeError):  # ragged nesting, or not array-like at all
        raise InvalidAction(f"{expected}, got {action!r}") from None
    if a.shape != tuple(shape):
        raise InvalidAction(f"{expected}, got {_shape_of(action, a)}")
    _refuse_listed_bools(action, a, expected)
    ok = (np.isfinite(a) & (np.abs(a) <= 1.0)) if a.dtype.kind in "iuf" else np.zeros(a.shape, dtype=bool)
    if not ok.all():
        raise InvalidAction(f"{expected}, {_offending(action, a, ok)}")
    return a.astype(np.float64)


#: Entry types of a flat list action that hold no boolean (:func:`_refuse_listed_bools`).
_NOT_BOOL_OR_NESTED = frozenset({int, float, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                 np.uint64, np.float16, np.float32, np.float64})


def _refuse_listed_bools(action: object, a: np.ndarray, expected: str) -> None:
    """Refuse a boolean entry of a list (or tuple) action, which ``np.asarray`` has made a number.

    ``np.asarray([True, 1])`` is ``[1, 1]``: only the entries as given still show the boolean, so a
    list's entries are looked at here; an array needs no look (its dtype shows booleans, kind
    ``"b"``, which the callers refuse as not numbers), nor does a scalar or a non-numeric ``a``.

    Args:
        action: The action as given (a list or tuple, nested for a 2-D action, is looked at).
        a: ``np.asarray(action)``, of the expected shape.
        expected: What the action space takes, the start of the message.

    Raises:
        InvalidAction: ``{expected}, got action[0] = True (and N more)``.
    """
    if isinstance(action, np.ndarray) or not a.ndim or a.dtype.kind not in "iuf":
        return
    if _NOT_BOOL_OR_NESTED.issuperset(map(type, action)):
        return  # a flat list of plain numbers: the common list, at the cost of a look at each entry's type
    given = np.asarray(action, dtype=object)  # the entries as given
    if given.shape != a.shape:  # entries that are array-likes of their own (not of lists or NumPy)
        return
    is_bool = np.fromiter((isinstance(v, (bool, np.bool_)) or (isinstance(v, np.ndarray) and v.dtype.kind == "b")
                           for v in given.flat), dtype=bool, count=given.size)
    if is_bool.any():
        raise InvalidAction(f"{expected}, {_offending(action, given, ~is_bool.reshape(a.shape))}")


def _shape_of(action: object, a: np.ndarray) -> str:
    """What an action of the wrong shape was, for a message: a scalar as given, an array by its shape."""
    return repr(action) if a.ndim == 0 else f"shape {a.shape}"


def _offending(action: object, a: np.ndarray, ok: np.ndarray) -> str:
    """``got action[7, 2] = 1.5 (and 3 more)``: the first entry of ``a`` that is not ``ok`` (a scalar as given)."""
    if a.ndim == 0:
        return f"got {shown(action)}"
    i, more = first_offending(np.flatnonzero(~ok.reshape(-1)))
    at = ", ".join(str(int(k)) for k in np.unravel_index(i, a.shape))
    return f"got action[{at}] = {shown(a.reshape(-1)[i])}{more}"


def action_units(scope: str, ports: np.ndarray, port_layers: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """The unit of each controlled port and the units' names, for ``env.action.scope``.

    ``"all"``: one unit; ``"layer"``: one per switch layer (sorted by name); ``"port"``: one per port.
    """
    if scope == "all":
        return np.zeros(len(ports), dtype=np.int64), ["all"]
    if scope == "layer":
        names = sorted({str(layer) for layer in port_layers})
        return np.array([names.index(layer) for layer in port_layers], dtype=np.int64), names
    return np.arange(len(ports), dtype=np.int64), [f"port{p}" for p in ports]


def _setting(field: str, entry: object) -> EcnSetting:
    """Parse one ``[kmin, kmax, pmax]`` entry (bytes or size strings, a probability).

    Raises:
        ConfigError: Naming ``field`` if the entry is malformed or out of range.
    """
    if isinstance(entry, (str, bytes)) or not hasattr(entry, "__len__") or len(entry) != 3:
        raise ConfigError(field, f"expected [kmin, kmax, pmax], got {entry!r}")
    kmin, kmax = parse_bytes(entry[0], field + ".kmin"), parse_bytes(entry[1], field + ".kmax")
    pmax = check(field + ".pmax", entry[2], Real(0, 1))  # a number: not '0.5', not true
    if kmax < kmin:
        raise ConfigError(field, f"kmax {kmax} B < kmin {kmin} B")
    return EcnSetting(kmin, kmax, pmax)
