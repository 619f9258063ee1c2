"""Actions -> parameters of the controlled ports' AQM policy (ECN♯'s thresholds, PRED's λ, R-AQM's K ...).

An env whose ``env.aqm`` names a port AQM policy other than RED tunes that policy's own parameters
(:mod:`ecngym.sim_backend.aqm`) with the machinery of the RED action (:mod:`ecngym.envs.action`):
the same units (``env.action.scope``), a discrete space indexing templates (one value per tuned
parameter, the policy's configured setting always among them) or a continuous
``Box(-1, 1, (units, parameters))`` mapped linearly onto per-parameter ranges. Every value and
range is checked against the policy's C++ TypeId checker, the one home of its allowed range, and
every template (and every continuous action) against the policy's consistency rule (e.g. R-AQM's
K_min <= K_max), so a bad template fails when the env is built and a bad action raises
:class:`~ecngym.error.InvalidAction` with nothing applied.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from gymnasium import spaces

from ecngym.envs.action import action_units, box_values, template_indices, unit_values
from ecngym.envs.config import ActionConfig
from ecngym.error import ConfigError, InvalidAction, first_offending
from ecngym.sim_backend import aqm as aqm_policies

#: [OURS] default discrete grid: each tuned parameter at these multiples of its configured value
#: (every combination that its checker and the policy's consistency rule allow).
DEFAULT_TEMPLATE_FACTORS = (0.5, 1.0, 2.0)


class AqmActionMapper:
    """Builds the action space over a policy's parameters and turns actions into settings.

    Args:
        cfg: Action configuration (``aqm_params``, ``aqm_templates``, ``aqm_ranges``, ``type``,
            ``scope``).
        ports: Controlled switch egress port ids.
        port_layers: Layer name of each controlled port.
        policy: The controlled ports' policy (short name; :attr:`params` are the tuned ones, the
            columns of :meth:`port_values`).
        setting: The policy's configured parameters (``env.aqm``, converted; the rest default).

    Raises:
        ConfigError: On an unknown or non-numeric parameter, a template or range outside the
            policy's checker ranges, or a template its consistency rule rejects.
    """

    def __init__(self, cfg: ActionConfig, ports: np.ndarray, port_layers: np.ndarray, policy: str,
                 setting: dict[str, Any]) -> None:
        self.cfg = cfg
        self.ports = ports
        self.policy = policy
        self.spec = aqm_policies.policy_spec(policy)
        self.base = {**aqm_policies.policy_defaults(policy), **setting}
        self.groups, self.group_names = action_units(cfg.scope, ports, port_layers)
        self.n_units = len(self.group_names)
        self.params = self._params()
        static = tuple(self.base[p] for p in self.params)
        check_setting(policy, self.base, "env.aqm")
        # the dtype of port_values: set_aqm_values takes numbers (booleans 0 / 1), enumerations are names
        self._dtype = np.float64 if all(self.spec[p].kind != "enum" for p in self.params) else object
        if cfg.type == "discrete":
            self.templates = self._templates(static)
            self._template_rows = np.array(self.templates, dtype=self._dtype).reshape(len(self.templates), -1)
            self.static_index = self.templates.index(static)
            n = len(self.templates)
            self.space = spaces.Discrete(n) if self.n_units == 1 else spaces.MultiDiscrete([n] * self.n_units)
        else:
            self.templates = [static]
            self.static_index = 0
            self.low, self.high = self._ranges()
            self.space = spaces.Box(-1.0, 1.0, shape=(self.n_units, len(self.params)), dtype=np.float32)

    # ------------------------------------------------------------------ construction
    def _params(self) -> list[str]:
        field = "env.action.aqm_params"
        tunable = [n for n, s in self.spec.items() if s.kind in ("int", "float")]
        if self.cfg.aqm_params is None and self.policy not in aqm_policies.ACTION_PARAMS:
            raise ConfigError(field, f"{self.policy} names no parameters an action tunes by default; name them "
                                     f"(numeric ones: {', '.join(tunable)})")
        given = self.cfg.aqm_params
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

    def _templates(self, static: tuple) -> list[tuple]:
        if self.cfg.aqm_templates is None:
            return self._default_templates(static)
        out: list[tuple] = []
        for i, entry in enumerate(self.cfg.aqm_templates):
            field = f"env.action.aqm_templates[{i}]"
            if isinstance(entry, dict):
                unknown = sorted(set(entry) - set(self.params))
                missing = [p for p in self.params if p not in entry]
                if unknown or missing:
                    raise ConfigError(field, f"expected the keys {self.params}, got {sorted(entry)!r}")
                values = [entry[p] for p in self.params]
            elif isinstance(entry, (list, tuple)) and len(entry) == len(self.params):
                values = list(entry)
            else:
                raise ConfigError(field, f"expected {len(self.params)} value(s) for {self.params}, got {entry!r}")
            t = tuple(self.spec[p].convert(v, f"{field}.{p}") for p, v in zip(self.params, values, strict=True))
            check_setting(self.policy, {**self.base, **dict(zip(self.params, t, strict=True))}, field)
            if t not in out:
                out.append(t)
        if static not in out:
            out.append(static)
        return out

    def _default_templates(self, static: tuple) -> list[tuple]:
        """[OURS] each numeric parameter at {1/2, 1, 2} x its configured value (those allowed)."""
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
            if t not in out and not setting_error(self.policy, {**self.base, **dict(zip(self.params, t, strict=True))}):
                out.append(t)
        return out

    def _ranges(self) -> tuple[np.ndarray, np.ndarray]:
        given = dict(self.cfg.aqm_ranges or {})
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            raise ConfigError(f"env.action.aqm_ranges.{unknown[0]}",
                              f"not a tuned parameter; env.action.aqm_params is {self.params}")
        low, high = np.empty(len(self.params)), np.empty(len(self.params))
        for j, p in enumerate(self.params):
            s, field = self.spec[p], f"env.action.aqm_ranges.{p}"
            pair = given.get(p, [s.low, s.high])
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ConfigError(field, f"expected [low, high], got {pair!r}")
            lo, hi = s.convert(pair[0], field), s.convert(pair[1], field)
            if lo > hi:
                raise ConfigError(field, f"low {lo} > high {hi}")
            low[j], high[j] = lo, hi
        return low, high

    # ------------------------------------------------------------------ mapping
    def static_action(self) -> np.ndarray | int:
        """The action that keeps the policy's configured setting everywhere (discrete spaces)."""
        if self.cfg.type == "discrete":
            return self.static_index if self.n_units == 1 else np.full(self.n_units, self.static_index)
        raise InvalidAction("a continuous action space has no designated static action")

    def to_settings(self, action: object) -> list[dict[str, Any]]:
        """Validate ``action`` and return each unit's full parameter setting.

        Raises:
            InvalidAction: If the action is not in the action space, or the setting it maps to
                breaks the policy's consistency rule (never clamped; nothing applied).
        """
        if self.cfg.type == "discrete":
            idx = template_indices(action, len(self.templates), self.space)
            rows = [self.templates[i] for i in idx]
        else:
            values = self.low + (box_values(action, self.space.shape) + 1.0) / 2.0 * (self.high - self.low)
            rows = [tuple(int(round(v)) if self.spec[p].kind == "int" else float(v)
                          for p, v in zip(self.params, row, strict=True)) for row in values]
        out = []
        for u, row in enumerate(rows):
            setting = {**self.base, **dict(zip(self.params, row, strict=True))}
            if self.cfg.type == "continuous":
                bad = setting_error(self.policy, setting)
                if bad:
                    raise InvalidAction(f"action[{u}] sets {self.policy} on unit {self.group_names[u]!r} to "
                                        f"{dict(zip(self.params, row, strict=True))}, which it rejects: "
                                        f"{aqm_policies.consistency_error(self.policy, bad).message}")
            out.append(setting)
        return out

    def port_values(self, action: object) -> np.ndarray:
        """Validate ``action`` and return one row of the tuned parameters per controlled port.

        Returns:
            ``(ports, len(params))``: ``float64`` (booleans 0 / 1), what ``Fabric.set_aqm_values``
            takes; an ``object`` array when an enumeration is among the parameters.

        Raises:
            InvalidAction: As :meth:`to_settings` (nothing applied).
        """
        if self.cfg.type == "discrete":  # the templates' rows, indexed (templates passed the policy's checks)
            return self._template_rows[template_indices(action, len(self.templates), self.space)[self.groups]]
        rows = [[s[p] for p in self.params] for s in self.to_settings(action)]
        return np.array(rows, dtype=self._dtype).reshape(self.n_units, len(self.params))[self.groups]

    def encode(self, **values: Any) -> np.ndarray | int:
        """The action that sets the tuned parameters to ``values`` on every unit (inverse of :meth:`to_settings`).

        Args:
            **values: One entry per tuned parameter (internal units: bytes, ns; a scalar for all
                units or one per unit).

        Raises:
            InvalidAction: If a parameter is missing or unknown, a value is not a number or has
                another count than the units (:func:`~ecngym.envs.action.unit_values`), or is not
                expressible (not a template; outside a continuous range; not exact after float32
                encoding).
        """
        if sorted(values) != sorted(self.params):
            raise InvalidAction(f"expected values for {self.params}, got {sorted(values)}")
        n = self.n_units
        want = {p: unit_values(p, values[p], n) for p in self.params}
        if self.cfg.type == "discrete":
            idx = np.empty(n, dtype=np.int64)
            for u in range(n):
                row = tuple(float(want[p][u]) for p in self.params)
                hits = [i for i, t in enumerate(self.templates)
                        if all(abs(float(x) - y) <= 1e-9 * max(1.0, abs(y)) for x, y in zip(t, row, strict=True))]
                if not hits:
                    raise InvalidAction(f"{dict(zip(self.params, row, strict=True))} on unit {self.group_names[u]!r} "
                                        f"is not one of the env's {self.policy} templates; add it via "
                                        "env.action.aqm_templates, or use action.type=continuous")
                idx[u] = hits[0]
            return int(idx[0]) if n == 1 else idx
        action = np.empty((n, len(self.params)), dtype=np.float32)
        for j, p in enumerate(self.params):
            v, lo, hi = want[p], self.low[j], self.high[j]
            bad = np.flatnonzero((v < lo) | (v > hi))
            if len(bad):
                u, more = first_offending(bad)
                raise InvalidAction(f"{p} {v[u]:g} (unit {self.group_names[u]!r}){more} outside the continuous "
                                    f"action range [{lo:g}, {hi:g}]")
            action[:, j] = 0.0 if hi == lo else np.clip(2 * (v - lo) / (hi - lo) - 1, -1.0, 1.0)
        got = self.to_settings(action)
        for j, p in enumerate(self.params):
            tol = 1e-6 * max(1.0, self.high[j] - self.low[j])
            off = [u for u, (g, w) in enumerate(zip(got, want[p], strict=True)) if abs(g[p] - w) > tol]
            if off:
                u, more = first_offending(off)
                raise InvalidAction(f"{p} {want[p][u]:g} (unit {self.group_names[u]!r}){more} does not survive float32 "
                                    f"encoding over [{self.low[j]:g}, {self.high[j]:g}] to within {tol:g}")
        return action

    def param_bounds(self) -> dict[str, tuple[float, float]]:
        """Each tuned numeric parameter's (low, high): the continuous range, or the templates' span."""
        out = {}
        for j, p in enumerate(self.params):
            if self.cfg.type == "continuous":
                out[p] = (float(self.low[j]), float(self.high[j]))
            elif self.spec[p].kind in ("int", "float"):
                values = [float(t[j]) for t in self.templates]
                out[p] = (min(values), max(values))
        return out

    @property
    def kmax_bound_bytes(self) -> float:
        """1: this action sets no RED curve (the kmin / kmax features are refused for it)."""
        return 1.0


def setting_error(policy: str, setting: dict[str, Any]) -> str:
    """The policy's own verdict on a full setting ("" if good): its checkers and consistency rule.

    Runs the C++ check on a scratch instance, the same one ``Fabric.set_aqm`` runs first.
    """
    from ecngym.sim_backend import _fabric

    names, strings = aqm_policies.to_attributes(policy, setting)
    return _fabric.check_aqm(aqm_policies.POLICIES[policy], names, strings)


def check_setting(policy: str, setting: dict[str, Any], field: str) -> None:
    """Raise :class:`ConfigError` naming ``field`` if the policy rejects the setting."""
    bad = setting_error(policy, setting)
    if bad:
        raise aqm_policies.consistency_error(policy, bad, field)
