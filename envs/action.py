"""Actions -> parameters of the controlled ports' AQM policy: one mapper for every policy.

RED's curve (Kmin, Kmax, Pmax), ECN♯'s targets, PRED's λ, CoDel's target and interval, R-AQM's
thresholds: the action tunes ``env.action.params`` of the controlled ports' policy (``env.aqm``;
RED when it is not set), named as the policy's C++ TypeId attributes are
(:mod:`ecngym.sim_backend.aqm`). What one action entry sets is a *unit* (``env.action.scope``).

* **Discrete**: an index per unit into ``env.action.templates``, each one value per tuned
  parameter. The static setting (``env.action.static_default``, else the ports' configured
  setting) is always among them and is :meth:`ActionMapper.static_action`.
* **Continuous**: ``Box(-1, 1, (units, parameters))``, each entry mapped linearly
  (u = (a + 1) / 2) onto its parameter's range in ``env.action.ranges``. A range is absolute,
  ``[low, high]``, or relative to another tuned parameter, ``{relative_to: q, offset: [low, high]}``:
  the value is q's value plus the mapped offset. RED's default Kmax is Kmin + [0, 2 MB], so every
  action keeps Kmax >= Kmin, as RED's rule asks.

The rules, one for every policy:

* **Checks.** Every template and range value is checked against the parameter's C++ checker (the
  one home of its allowed range), every template (with the configured setting) against the
  policy's consistency rule (RED's and R-AQM's Kmin <= Kmax), when the env is built. A
  continuous action's setting is checked by the fabric as it is set (``Fabric.set_aqm_values``
  checks every port's row against the checkers and the policy's rule before anything changes); a
  setting the policy rejects is :class:`~ecngym.error.InvalidAction` and changes nothing. Nothing
  is clamped.
* **Duplicate templates** are refused, naming both indices: two indices of one setting would make
  the space list one setting twice, and an agent's two actions mean the same.
* **Encode tolerances** (:meth:`ActionMapper.encode`, the inverse of the mapping): a discrete value
  names the template whose value it rounds to (whole-number parameters, within 0.5) or equals to
  1e-9 of its size (real ones); a continuous value must lie in its range to 1e-9 (a controller's
  float arithmetic, e.g. a probability summed to 1.0000000000000002) and survive float32 encoding
  to 1e-6 of its range, at least one unit for a whole-number parameter (the port gets it rounded).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
from gymnasium import spaces

from ecngym.envs.config import ActionConfig
from ecngym.error import ConfigError, InvalidAction, first_offending, shown
from ecngym.sim_backend import aqm as aqm_policies
from ecngym.units import parse_bytes
from ecngym.validation import Real, check, is_finite_number

#: Line rate at which template and range byte values hold (``env.action.scale_with_rate``).
REFERENCE_RATE_BPS = 100e9
#: Distinct discrete actions whose per-port values :meth:`ActionMapper.port_values` remembers.
SETTINGS_MEMO_SIZE = 4096
#: RED's three curve parameters, the columns of the ``kmin`` / ``kmax`` / ``pmax`` features.
RED_CURVE = ("kmin_bytes", "kmax_bytes", "pmax")

#: [OURS] A policy's discrete grid when ``env.action.templates`` is not given and the action tunes the
#: policy's default parameters (:data:`ecngym.sim_backend.aqm.ACTION_PARAMS`). RED: Kmin in {20, 80,
#: 320} KB x Kmax in {2, 4} x Kmin x Pmax in {5 %, 20 %} (bytes at 100 Gbps; a LAECN-style grid, LAECN
#: §III-C; docs: algorithms/laecn.md §3.3). Other policies: :data:`DEFAULT_TEMPLATE_FACTORS`.
DEFAULT_TEMPLATES: dict[str, tuple[tuple[Any, ...], ...]] = {
    "red": tuple((k, f * k, p) for k in (20_000, 80_000, 320_000) for f in (2, 4) for p in (0.05, 0.2))}
#: [OURS] The other policies' default discrete grid: each tuned parameter at these multiples of its
#: configured value (every combination that its checker and the policy's consistency rule allow).
DEFAULT_TEMPLATE_FACTORS = (0.5, 1.0, 2.0)
#: [OURS] A policy's continuous ranges for the parameters ``env.action.ranges`` does not give (the
#: others span their whole C++ checker range). RED: Kmin 1 KB .. 1 MB, Kmax = Kmin + 0 .. 2 MB (so
#: Kmax >= Kmin for every action), Pmax 1 % .. 100 %. A relative default applies while its base
#: parameter is tuned.
DEFAULT_RANGES: dict[str, dict[str, Any]] = {
    "red": {"kmin_bytes": ["1KB", "1MB"], "kmax_bytes": {"relative_to": "kmin_bytes", "offset": ["0B", "2MB"]},
            "pmax": [0.01, 1.0]}}
#: Keys of a relative range (``{relative_to: q, offset: [low, high]}``).
RELATIVE_KEYS = ("relative_to", "offset")
#: A continuous encode's slack at the range ends (float noise of a controller's arithmetic).
RANGE_SLACK = 1e-9
#: What a continuous encode keeps through float32, as a share of the range (at least 1e-6; whole
#: numbers at least 1).
ENCODE_ACCURACY = 1e-6
#: A real parameter's discrete encode tolerance, as a share of the value (at least 1e-9).
MATCH_ACCURACY = 1e-9


def action_key(action: object) -> object:
    """A hashable, exact identity of an action (``None`` when it is not cheap to build)."""
    if isinstance(action, np.ndarray):
        return (action.dtype.str, action.shape, action.tobytes())
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        return int(action)
    return None


class EcnSetting(NamedTuple):
    """One RED (Kmin, Kmax, Pmax) setting in bytes; equal to the tuple of its values (a template)."""

    kmin_bytes: int
    kmax_bytes: int
    pmax: float


class ActionMapper:
    """Builds the action space over a policy's parameters and turns actions into per-port values.

    Its actuation interface, the same for every policy: :attr:`policy`, :attr:`params` and
    :meth:`port_values` (one row of the tuned parameters per controlled port, what
    ``Fabric.set_aqm_values`` takes).

    Args:
        cfg: Action configuration.
        ports: Controlled switch egress port ids.
        port_layers: Layer name of each controlled port.
        port_rates_bps: Line rate of each controlled port.
        policy: The controlled ports' policy (short name).
        setting: The ports' configured parameters, converted (the fabric's initial RED setting,
            ``env.aqm``'s); the policy's defaults fill the rest.

    Raises:
        ConfigError: On an unknown or non-numeric parameter, a template, static setting or range
            outside the checkers' ranges, a template the policy's consistency rule rejects, or a
            template given twice.
    """

    def __init__(self, cfg: ActionConfig, ports: np.ndarray, port_layers: np.ndarray,
                 port_rates_bps: np.ndarray, policy: str, setting: dict[str, Any]) -> None:
        self.cfg = cfg
        self.ports = ports
        self.policy = policy
        self.spec = aqm_policies.policy_spec(policy)
        self.base = {**aqm_policies.policy_defaults(policy), **setting}
        aqm_policies.check_setting(policy, self.base, "env.aqm")
        self.groups, self.group_names = action_units(cfg.scope, ports, port_layers)
        self.n_units = len(self.group_names)
        self.params = self._params()
        kinds = [self.spec[p].kind for p in self.params]
        # set_aqm_values takes numbers (booleans 0 / 1); enumerations are names
        self._dtype = object if "enum" in kinds else np.float64
        self._whole = [j for j, k in enumerate(kinds) if k == "int"]
        self._bytes = [j for j, p in enumerate(self.params) if p.endswith("_bytes")]
        self._scaled = bool(cfg.scale_with_rate and self._bytes)
        self.rate_scale = (port_rates_bps / REFERENCE_RATE_BPS) if cfg.scale_with_rate else np.ones(len(ports))
        # each unit's one rate scale (NaN: its ports differ, so encode cannot address the unit)
        low, high = (np.full(self.n_units, fill) for fill in (np.inf, -np.inf))
        np.minimum.at(low, self.groups, self.rate_scale)
        np.maximum.at(high, self.groups, self.rate_scale)
        self._unit_scale = np.where(low == high, low, np.nan)
        # both representations are checked whichever is used: a bad field fails now, not after a switch
        self.templates, self.static_index = self._templates()
        self._template_rows = np.array(self.templates, dtype=self._dtype).reshape(len(self.templates), -1)
        self.low, self.high, self._relative = self._ranges()
        self._memo: dict[object, np.ndarray] = {}  # see port_values
        n = len(self.templates)
        if cfg.type == "discrete":
            self.space = spaces.Discrete(n) if self.n_units == 1 else spaces.MultiDiscrete([n] * self.n_units)
        else:
            self.static_index = 0
            self.space = spaces.Box(-1.0, 1.0, shape=(self.n_units, len(self.params)), dtype=np.float32)

    # ------------------------------------------------------------------ construction
    def _params(self) -> list[str]:
        field = "env.action.params"
        tunable = [n for n, s in self.spec.items() if s.kind in ("int", "float")]
        given = self.cfg.params
        if given is None and self.policy not in aqm_policies.ACTION_PARAMS:
            raise ConfigError(field, f"{self.policy} names no parameters an action tunes by default; name them "
                                     f"(numeric ones: {', '.join(tunable)})")
        names = list(given if given is not None else aqm_policies.ACTION_PARAMS[self.policy])
        if not names or len(set(names)) != len(names):
            raise ConfigError(field, f"expected distinct parameter names of {self.policy}, got {names!r}")
        for n in names:
            if n not in self.spec:
                raise ConfigError(field, f"{self.policy} has no parameter {n!r}; numeric ones: {', '.join(tunable)}")
            if self.cfg.type == "continuous" and n not in tunable:
                raise ConfigError(field, f"{self.policy}.{n} is a {self.spec[n].kind}, which a continuous action "
                                         f"cannot set; numeric ones: {', '.join(tunable)} (or action.type=discrete)")
        return names

    def _setting(self, field: str, entry: object) -> tuple[Any, ...]:
        """One template: a value per tuned parameter (a list in :attr:`params` order, or a mapping).

        Raises:
            ConfigError: Naming ``field`` (``field.<param>`` for a value) if the entry is malformed,
                a value is outside its checker's range, or the policy rejects the setting.
        """
        if isinstance(entry, Mapping):
            if sorted(entry) != sorted(self.params):
                raise ConfigError(field, f"expected the keys {self.params}, got {sorted(entry)!r}")
            values = [entry[p] for p in self.params]
        elif isinstance(entry, (list, tuple)) and len(entry) == len(self.params):
            values = list(entry)
        else:
            raise ConfigError(field, f"expected {len(self.params)} value(s) for {self.params}, got {entry!r}")
        t = tuple(self.spec[p].convert(v, f"{field}.{p}") for p, v in zip(self.params, values, strict=True))
        aqm_policies.check_setting(self.policy, {**self.base, **dict(zip(self.params, t, strict=True))}, field)
        return t

    def _templates(self) -> tuple[list[tuple[Any, ...]], int]:
        """The discrete templates, then the static setting if it is none of them.

        Returns:
            The templates, and the index of the static setting (``env.action.static_default``, else
            the configured one).
        """
        given = self.cfg.static_default
        static = (self._setting("env.action.static_default", given) if given is not None
                  else tuple(self.base[p] for p in self.params))
        entries = self.cfg.templates
        if entries is None:
            entries = DEFAULT_TEMPLATES.get(self.policy) if tuple(self.params) == aqm_policies.ACTION_PARAMS.get(
                self.policy) else None
            if entries is None:
                return self._default_templates(static), 0
        out: list[tuple[Any, ...]] = []
        for i, entry in enumerate(entries):
            field = f"env.action.templates[{i}]"
            t = self._setting(field, entry)
            if t in out:  # two indices of one setting: the space would list it twice
                raise ConfigError(field, f"repeats env.action.templates[{out.index(t)}] ({list(t)!r}); give each "
                                         "setting once")
            out.append(t)
        if static not in out:
            out.append(static)
        return out, out.index(static)

    def _default_templates(self, static: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """[OURS] each numeric parameter at {1/2, 1, 2} x its static value (those allowed), the static first."""
        choices = []
        for p, v in zip(self.params, static, strict=True):
            s = self.spec[p]
            if s.kind not in ("int", "float"):
                choices.append([v])
                continue
            vals = []
            for f in DEFAULT_TEMPLATE_FACTORS:
                x = v * f if s.kind == "float" else int(round(v * f))
                if s.low <= x <= s.high and x not in vals:
                    vals.append(x)
            choices.append(vals)
        out = [static]
        for t in itertools.product(*choices):
            setting = {**self.base, **dict(zip(self.params, t, strict=True))}
            if t not in out and not aqm_policies.setting_error(self.policy, setting):
                out.append(t)
        return out

    def _ranges(self) -> tuple[np.ndarray, np.ndarray, tuple[tuple[int, int], ...]]:
        """Each tuned numeric parameter's continuous range (NaN for the others) and the relative ones.

        Returns:
            ``(low, high, relative)``; ``relative`` holds (column, column of its base) of each
            parameter whose range is relative (low / high are then the offset's).
        """
        given = dict(self.cfg.ranges or {})
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            raise ConfigError(f"env.action.ranges.{unknown[0]}",
                              f"not a tuned parameter; env.action.params is {self.params}")
        defaults = DEFAULT_RANGES.get(self.policy, {})
        m = len(self.params)
        low, high = np.full(m, np.nan), np.full(m, np.nan)
        relative = []
        for j, p in enumerate(self.params):
            s, field = self.spec[p], f"env.action.ranges.{p}"
            if s.kind not in ("int", "float"):
                if p in given:
                    raise ConfigError(field, f"{self.policy}.{p} is a {s.kind}: only a number has a range")
                continue
            entry = given.get(p, defaults.get(p))
            if p not in given and isinstance(entry, Mapping) and entry["relative_to"] not in self.params:
                entry = None  # a default relative to a parameter the action does not tune
            if entry is None:  # the checker's range, in internal units already
                low[j], high[j] = s.low, s.high
                continue
            if isinstance(entry, Mapping):
                if sorted(entry) != sorted(RELATIVE_KEYS):
                    raise ConfigError(field, "expected [low, high] or {relative_to: parameter, offset: [low, high]}, "
                                             f"got {dict(entry)!r}")
                to = entry["relative_to"]
                if to == p or to not in self.params or self.spec[to].kind not in ("int", "float"):
                    raise ConfigError(f"{field}.relative_to", f"got {to!r}; allowed: another tuned numeric parameter "
                                                              f"of {self.params}")
                relative.append((j, self.params.index(to)))
                field, entry = f"{field}.offset", entry["offset"]
            if not isinstance(entry, (list, tuple)) or len(entry) != 2:
                raise ConfigError(field, f"expected [low, high], got {entry!r}")
            lo, hi = s.convert(entry[0], field), s.convert(entry[1], field)
            if lo > hi:
                raise ConfigError(field, f"low {lo} > high {hi}")
            low[j], high[j] = lo, hi
        bases = {b for _, b in relative}
        for j, _ in relative:
            if j in bases:  # one step: a base's own range is absolute
                raise ConfigError(f"env.action.ranges.{self.params[j]}", "is relative and the base of another "
                                  "relative range; give one of them an absolute range")
        return low, high, tuple(relative)

    # ------------------------------------------------------------------ mapping
    def static_action(self) -> np.ndarray | int:
        """The action that applies the static setting everywhere (discrete spaces)."""
        if self.cfg.type == "discrete":
            return self.static_index if self.n_units == 1 else np.full(self.n_units, self.static_index)
        raise InvalidAction("a continuous action space has no designated static action")

    def port_values(self, action: object) -> np.ndarray:
        """Validate ``action`` and return one row of the tuned parameters per controlled port.

        A discrete action's rows are remembered by its exact identity (dtype, shape, bytes), so an
        action seen before costs a lookup (up to :data:`SETTINGS_MEMO_SIZE` of them).

        Returns:
            A read-only ``(ports, len(params))`` array: ``float64`` (whole-number parameters
            rounded, booleans 0 / 1; exact below 2^53), what ``Fabric.set_aqm_values`` takes; an
            ``object`` array when an enumeration is among the parameters.

        Raises:
            InvalidAction: If the action is not in the action space (never clamped).
        """
        key = action_key(action) if self.cfg.type == "discrete" else None
        if key is not None:
            known = self._memo.get(key)
            if known is not None:
                return known
        values = self._port_values(action)
        values.setflags(write=False)  # shared by every later lookup of this action
        if key is not None:
            if len(self._memo) >= SETTINGS_MEMO_SIZE:
                self._memo.clear()
            self._memo[key] = values
        return values

    def _port_values(self, action: object) -> np.ndarray:
        if self.cfg.type == "discrete":
            values = self._template_rows[template_indices(action, len(self.templates), self.space)[self.groups]]
            if not self._scaled:
                return values
        else:
            unit = self.low + (box_values(action, self.space.shape) + 1.0) / 2.0 * (self.high - self.low)
            for j, base in self._relative:
                unit[:, j] += unit[:, base]
            values = unit[self.groups]
        if self._scaled:
            values[:, self._bytes] = values[:, self._bytes].astype(np.float64) * self.rate_scale[:, None]
        if self._whole:
            values[:, self._whole] = np.round(values[:, self._whole].astype(np.float64))
        return values

    def encode(self, *args: Any, **values: Any) -> np.ndarray | int:
        """The action that sets the tuned parameters to these values on every unit (inverse of :meth:`port_values`).

        Args:
            *args: Values in :attr:`params` order (RED: ``encode(kmin_bytes, kmax_bytes, pmax)``).
            **values: Or by name. Each value in internal units (bytes, ns) at the ports' own rates:
                a scalar for every unit or one per unit, in unit order. With ``scale_with_rate``
                each unit's ports must share one rate.

        Raises:
            InvalidAction: If a parameter is missing or unknown, a value is not a number or has
                another count than the units (:func:`unit_values`), or is not expressible (not a
                template; outside a continuous range; not kept by float32 encoding; the module's
                tolerances). Nothing is clamped.
        """
        if len(args) > len(self.params) or set(self.params[:len(args)]) & set(values):
            raise InvalidAction(f"expected one value each for {self.params}, got {len(args)} by position and "
                                f"{sorted(values)} by name")
        values = {**dict(zip(self.params, args, strict=False)), **values}
        if sorted(values) != sorted(self.params):
            raise InvalidAction(f"expected values for {self.params}, got {sorted(values)}")
        n = self.n_units
        want = np.column_stack([unit_values(p, values[p], n) for p in self.params])  # (units, params)
        ref = want.copy()
        if self._scaled:
            mixed = np.flatnonzero(np.isnan(self._unit_scale))
            if len(mixed):
                raise InvalidAction(f"unit {self.group_names[mixed[0]]!r} mixes port rates; with scale_with_rate "
                                    "its ports take different byte values for one action")
            ref[:, self._bytes] /= self._unit_scale[:, None]
        return self._encode_discrete(want, ref) if self.cfg.type == "discrete" else self._encode_box(want, ref)

    def _encode_discrete(self, want: np.ndarray, ref: np.ndarray) -> np.ndarray | int:
        hits = np.ones((self.n_units, len(self.templates)), dtype=bool)  # (units, templates)
        for j, p in enumerate(self.params):
            if self.spec[p].kind == "enum":  # (a name: unit_values has refused it already)
                hits[:] = False
                continue
            t = self._template_rows[:, j].astype(np.float64)
            tol = 0.5 if j in self._whole else MATCH_ACCURACY * np.maximum(1.0, np.abs(t))
            hits &= np.abs(t - ref[:, j, None]) <= tol
        missing = np.flatnonzero(~hits.any(axis=1))
        if len(missing):
            u, more = first_offending(missing)
            setting = dict(zip(self.params, (float(v) for v in want[u]), strict=True))
            raise InvalidAction(f"{setting} on unit {self.group_names[u]!r}{more} is not one of the env's "
                                f"{self.policy} templates; add it via env.action.static_default or "
                                "env.action.templates, or use action.type=continuous")
        idx = hits.argmax(axis=1).astype(np.int64)  # the first matching template
        return int(idx[0]) if self.n_units == 1 else idx

    def _encode_box(self, want: np.ndarray, ref: np.ndarray) -> np.ndarray:
        action = np.empty(ref.shape, dtype=np.float32)
        offsets = ref.copy()
        for j, base in self._relative:
            offsets[:, j] -= ref[:, base]
        for j, p in enumerate(self.params):
            v, lo, hi = offsets[:, j], self.low[j], self.high[j]
            bad = np.flatnonzero((v < lo - RANGE_SLACK) | (v > hi + RANGE_SLACK))
            if len(bad):
                u, more = first_offending(bad)
                base = dict(self._relative).get(j)
                name = p if base is None else f"{p} - {self.params[base]}"
                at = ", at the reference rate" if self._scaled and j in self._bytes else ""
                raise InvalidAction(f"{name} {v[u]:g} (unit {self.group_names[u]!r}{at}){more} outside the "
                                    f"continuous action range [{lo:g}, {hi:g}]")
            action[:, j] = 0.0 if hi == lo else np.clip(2 * (v - lo) / (hi - lo) - 1, -1.0, 1.0)
        got = self._port_values(action)
        port_want = want[self.groups]
        for j, p in enumerate(self.params):
            span = self.high[j] - self.low[j]
            tol = max(ENCODE_ACCURACY * max(1.0, span), 1.0 if j in self._whole else 0.0)
            off = np.flatnonzero(np.abs(got[:, j] - port_want[:, j]) > tol)
            if len(off):
                i, more = first_offending(off)
                raise InvalidAction(f"{p} {port_want[i, j]:g} (unit {self.group_names[self.groups[i]]!r}, port "
                                    f"{self.ports[i]}){more} does not survive float32 encoding over "
                                    f"[{self.low[j]:g}, {self.high[j]:g}] to within {tol:g}")
        return action

    def param_bounds(self) -> dict[str, tuple[float, float]]:
        """Each tuned numeric parameter's (low, high): the continuous range, or the templates' span.

        A relative range's bounds are its base's plus its offset's.
        """
        out = {}
        relative = dict(self._relative)
        for j, p in enumerate(self.params):
            if self.spec[p].kind not in ("int", "float"):
                continue
            if self.cfg.type == "continuous":
                b = relative.get(j)
                lo, hi = (self.low[j], self.high[j]) if b is None else (self.low[b] + self.low[j],
                                                                         self.high[b] + self.high[j])
                out[p] = (float(lo), float(hi))
            else:
                column = [float(t[j]) for t in self.templates]
                out[p] = (min(column), max(column))
        return out

    @property
    def sets_red_curve(self) -> bool:
        """Whether the action sets RED's (Kmin, Kmax, Pmax), what a RED-threshold controller encodes."""
        return self.policy == "red" and tuple(self.params) == RED_CURVE

    @property
    def kmax_bound_bytes(self) -> float:
        """Largest Kmax the ports can run under this action, at their rates (the ``kmin`` / ``kmax`` features' scale).

        1 where the ports do not run RED (those features are refused there).
        """
        if self.policy != "red":
            return 1.0
        bounds = self.param_bounds()
        top = bounds["kmax_bytes"][1] if "kmax_bytes" in bounds else self.base["kmax_bytes"]
        return float(top * self.rate_scale.max())


def unit_values(name: str, value: Any, n_units: int) -> np.ndarray:
    """One argument of an action's ``encode`` as float64 values, one per action unit.

    The one check of the values given to :meth:`ActionMapper.encode`: a real number (for every unit) or a
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


def red_setting(field: str, entry: object) -> EcnSetting:
    """Parse one RED ``[kmin, kmax, pmax]`` outside an env (bytes or size strings, a probability).

    Raises:
        ConfigError: Naming ``field`` if the entry is malformed or out of range, or kmax < kmin.
    """
    if isinstance(entry, (str, bytes)) or not hasattr(entry, "__len__") or len(entry) != 3:
        raise ConfigError(field, f"expected [kmin, kmax, pmax], got {entry!r}")
    kmin, kmax = parse_bytes(entry[0], field + ".kmin"), parse_bytes(entry[1], field + ".kmax")
    pmax = check(field + ".pmax", entry[2], Real(0, 1))  # a number: not '0.5', not true
    if kmax < kmin:
        raise ConfigError(field, f"kmax {kmax} B < kmin {kmin} B")
    return EcnSetting(kmin, kmax, pmax)
