"""Static ECN settings from the literature (ByteTuning Tab. 2, PRED §VI-A, LAECN).

See docs: algorithms/bytetuning.md §1.5, algorithms/pred.md §4.2, algorithms/laecn.md.

Two kinds of rule:

* **per-link-speed maps** (:class:`StaticEcnSetting`): (Kmin, Kmax, Pmax) given at one link speed
  in the source and scaled linearly with the port rate, as the HPCC simulator's ``KMIN_MAP`` /
  ``KMAX_MAP`` / ``PMAX_MAP`` do (its ``run.py`` writes them for ``bw`` and ``4·bw`` as
  ``100·bw/25`` KB etc., i.e. linear in the rate);
* **formulas** of the port rate and the base RTT: DCTCP's K = C·RTT·λ (:func:`dctcp_k_bytes`) and
  ECN*'s K = BDP = C·RTT (:func:`ecn_star_k_bytes`), both step marking (Kmin = Kmax, Pmax = 1).

``StaticEcnController`` applies one of them to every controlled port, every step; with a discrete
action space the setting must be one of the env's templates (``ecngym eval`` adds it as
``env.action.static_default``), with a continuous one it is encoded exactly when it lies inside
the box. ``StaticPerLayerEcnController`` applies one explicit setting per switch layer of the
controlled ports (the ``static_tuned_per_role`` reference's controller): its env acts per layer
(``env.action.scope = "layer"``) and lists its settings among the templates
(:func:`templates_overrides`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ecngym.baselines import params
from ecngym.envs.view import EnvView
from ecngym.error import ConfigError, InvalidAction
from ecngym.units import bdp_bytes


@dataclass(frozen=True)
class StaticEcnSetting:
    """A named static (Kmin, Kmax, Pmax) rule given at one link speed, scaled with the rate.

    Attributes:
        name: Key used in configs.
        source: Where the values come from.
        kmin_bytes_per_gbps, kmax_bytes_per_gbps: Thresholds per Gbps of port rate (scaled).
        pmax: Marking probability at Kmax.
    """

    name: str
    source: str
    kmin_bytes_per_gbps: float
    kmax_bytes_per_gbps: float
    pmax: float

    def at_rate(self, rate_bps: float) -> tuple[int, int, float]:
        """(kmin_bytes, kmax_bytes, pmax) for a port of ``rate_bps``."""
        g = rate_bps / 1e9
        return int(round(self.kmin_bytes_per_gbps * g)), int(round(self.kmax_bytes_per_gbps * g)), self.pmax


def dctcp_k_bytes(rate_bps: float, rtt_ns: float, lam: float = 1 / 7) -> int:
    """DCTCP's rule K = C x RTT x λ (λ = 1/7: Alizadeh et al. 2010, K > C·RTT/7; Tab. 2 row 1)."""
    return int(round(bdp_bytes(rate_bps, rtt_ns) * lam))


def ecn_star_k_bytes(rate_bps: float, rtt_ns: float) -> int:
    """ECN*'s rule K = BDP = T x C (Wu et al. 2012; ByteTuning Tab. 2 row 2, Eq. 3 in bytes).

    See docs: algorithms/bytetuning.md §1.5.
    """
    return dctcp_k_bytes(rate_bps, rtt_ns, 1.0)


def _per_gbps(name: str, source: str, kmin: float, kmax: float, pmax: float, gbps: float) -> StaticEcnSetting:
    return StaticEcnSetting(name, source, kmin / gbps, kmax / gbps, pmax)


#: Static per-link-speed settings by name (values in bytes at the speed the source gives).
STATIC_SETTINGS: dict[str, StaticEcnSetting] = {s.name: s for s in (
    # DCQCN paper (Zhu et al. 2015) Tab. 2/3, = ByteTuning Tab. 2 "DCQCN" row: 5 KB / 200 KB / 1 % at 40 GbE.
    _per_gbps("dcqcn", "DCQCN (SIGCOMM 2015) at 40 GbE; ByteTuning Tab. 2", 5e3, 200e3, 0.01, 40),
    # HPCC simulator run.py (cc = dcqcn / hp / timely): KMIN_MAP 100·bw/25 KB, KMAX_MAP 400·bw/25 KB, PMAX 0.2;
    # = ByteTuning Tab. 2 "HPCC" row ("refer to DCQCN": 100 KB / 400 KB at 25 GbE).
    _per_gbps("hpcc", "HPCC simulator run.py KMIN/KMAX/PMAX_MAP (per 25 Gbps)", 100e3, 400e3, 0.2, 25),
    # HPCC simulator run.py (cc = dctcp): Kmin = Kmax = 30·bw/10 KB, Pmax 1;
    # = ByteTuning Tab. 2 "HPCC, refer to DCTCP": 30 KB at 10 GbE.
    _per_gbps("hpcc_dctcp", "HPCC simulator run.py dctcp maps (30 KB per 10 Gbps, step)", 30e3, 30e3, 1.0, 10),
    # ByteTuning Tab. 2 "DCTCP (2010)" row: K = 58.5 KB at 10 GbE (50 packets), Pmax 100 %.
    _per_gbps("dctcp_tab2", "ByteTuning Tab. 2 DCTCP row (58.5 KB at 10 GbE, step)", 58.5e3, 58.5e3, 1.0, 10),
    # ByteTuning Tab. 2 "DCTCP-DEMT (2018)" row: Kmax = 10.8 KB at 10 GbE, Pmax 100 % (the value the table
    # lists; DEMT's own rule moves K with the flow count N, K = 2·C·D − 2N between C·D/2 and C·D packets).
    _per_gbps("dctcp_demt", "ByteTuning Tab. 2 DCTCP-DEMT row (10.8 KB at 10 GbE, step)", 10.8e3, 10.8e3, 1.0, 10),
    # P-PFC / vendor-style: 40 KB / 200 KB / 100 % (ByteTuning Tab. 2, P-PFC row; its speed is 40 GbE, §1.5).
    _per_gbps("vendor", "vendor-style (ByteTuning Tab. 2, P-PFC row) at 40 GbE", 40e3, 200e3, 1.0, 40),
    # PRED §VI-A (docs: algorithms/pred.md §4.2): ECN with K = 70 packets of 1400 B (the ECN# repo's packet size),
    # at 10 Gbps.
    _per_gbps("pred_ecn_k70", "PRED §VI-A ECN K = 70 packets x 1400 B at 10 Gbps", 98e3, 98e3, 1.0, 10),
)}

#: Formula rules (need the base RTT) and the env's own setting.
FORMULA_SETTINGS = ("dctcp", "ecn_star", "env_default")


class StaticEcnController:
    """Apply one static ECN setting on every step.

    Args:
        setting: A name from :data:`STATIC_SETTINGS`; ``"dctcp"`` (K = C·RTT·λ, step marking);
            ``"ecn_star"`` (K = C·RTT, step); ``"env_default"`` (the fabric preset's own setting);
            or an explicit ``[kmin, kmax, pmax]`` (bytes or size strings).
        dctcp_lambda: λ of the DCTCP rule, in (0, 10].
        interval_steps: Act every this many steps (≥ 1).
        name: Name in tables (default ``static_<setting>``).

    Raises:
        ConfigError: On an unknown setting name or a bad parameter (naming ``controller.<field>``).
    """

    def __init__(self, setting: str | list[Any] = "env_default", dctcp_lambda: float = 1 / 7,
                 interval_steps: int = 1, name: str | None = None) -> None:
        known = [*STATIC_SETTINGS, *FORMULA_SETTINGS]
        if isinstance(setting, str):
            if setting not in known:
                raise ConfigError("controller.setting", f"unknown static setting {setting!r}; known: {known}")
        elif isinstance(setting, (list, tuple)) and len(setting) == 3:
            from ecngym.envs.action import red_setting

            s = red_setting("controller.setting", list(setting))
            setting = [s.kmin_bytes, s.kmax_bytes, s.pmax]
        else:
            raise ConfigError("controller.setting", f"expected a name from {known} or [kmin, kmax, pmax], "
                                                    f"got {setting!r}")
        self.setting = setting
        self.dctcp_lambda = params.real("dctcp_lambda", dctcp_lambda, 0, 10, low_inclusive=False)
        self.interval_steps = params.whole("interval_steps", interval_steps, 1)
        self.name = name or (f"static_{setting}" if isinstance(setting, str) else "static_custom")
        self.log: list[dict[str, Any]] = []
        self._action: Any = None

    def target(self, env: Any) -> tuple[int, int, float]:
        """The (kmin_bytes, kmax_bytes, pmax) this controller wants on ``env``'s ports (slowest port's rate)."""
        view = EnvView(env)  # before reset too: the view needs the scenario only, not a fabric
        rate = float(np.min(view.port_rates_bps))
        if isinstance(self.setting, list):
            kmin, kmax, pmax = self.setting
            return int(kmin), int(kmax), float(pmax)
        if self.setting == "env_default":  # the fabric preset's own static setting
            s = view.static_setting
            return s.kmin_bytes, s.kmax_bytes, s.pmax
        if self.setting in ("dctcp", "ecn_star"):
            k = (dctcp_k_bytes(rate, view.base_rtt_ns, self.dctcp_lambda) if self.setting == "dctcp"
                 else ecn_star_k_bytes(rate, view.base_rtt_ns))
            return k, k, 1.0
        return STATIC_SETTINGS[self.setting].at_rate(rate)

    def env_overrides(self, env: Any) -> dict[str, Any]:
        """With a discrete action space, add the setting as the env's static template if it is not one."""
        view = EnvView(env)
        setting = self.target(env)
        if view.action_type != "discrete" or tuple(setting) in view.action_templates:
            return {}
        return {"action": {**env.unwrapped.config.action.as_dict(), "static_default": list(setting)}}

    def reset(self, env: Any) -> None:
        """Encode the target setting as an action of ``env``'s action space.

        Raises:
            InvalidAction: If the setting is not one of the env's discrete templates, or lies
                outside its continuous ranges.
        """
        view = EnvView(env)
        kmin, kmax, pmax = self.target(env)
        self._action = view.encode(kmin, kmax, pmax)
        self.log = [{"step": 0, "kmin_bytes": kmin, "kmax_bytes": kmax, "pmax": pmax}]

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """The same action every step."""
        return self._action


def templates_overrides(env: Any, settings: Iterable[Any], scope: str | None = None) -> dict[str, Any]:
    """The ``EnvConfig`` overrides that make ``settings`` playable on ``env``'s action (``{}`` if they are).

    With a discrete action, the settings that are not templates join the end of the templates (the
    env's own, the preset's static setting among them, keep their indices, so the static action is
    unchanged); ``scope`` (e.g. ``"layer"``) replaces ``env.action.scope`` where it differs. Neither
    changes the traffic, so the trace hash is the env's.

    Args:
        env: The env made without overrides.
        settings: ``(kmin_bytes, kmax_bytes, pmax)`` settings, in bytes.
        scope: The action scope the caller encodes for, or ``None`` to keep the env's.

    Returns:
        ``{"action": {...}}`` with the whole action config, or ``{}``.
    """
    view = EnvView(env)
    action = env.unwrapped.config.action.as_dict()
    changes: dict[str, Any] = {}
    if scope is not None and action["scope"] != scope:
        changes["scope"] = scope
    if view.action_type == "discrete":
        known = [tuple(t) for t in view.action_templates]
        extra = [s for s in dict.fromkeys((int(s[0]), int(s[1]), float(s[2])) for s in settings) if s not in known]
        if extra:
            changes["templates"] = [list(t) for t in [*known, *extra]]
    return {"action": {**action, **changes}} if changes else {}


class StaticPerLayerEcnController:
    """Apply one static ECN setting per switch layer of the controlled ports, on every step.

    Its env acts per layer (``env.action.scope = "layer"``; one action unit per switch layer of the
    controlled ports, :func:`~ecngym.envs.action.action_units`) and lists every setting among its
    discrete templates (:meth:`env_overrides`), so any ``[kmin, kmax, pmax]`` can be played; the
    traffic is the scenario's. The ``static_tuned_per_role`` reference plays it
    (:mod:`ecngym.benchmark.references`).

    Args:
        settings: Switch layer (``"tor"``, ``"leaf"``, ``"spine"`` ...) -> ``[kmin, kmax, pmax]``
            (bytes or size strings), one for every layer of the env's controlled ports.
        name: Name in tables (default ``static_per_layer``).

    Raises:
        ConfigError: Naming ``controller.settings`` (``controller.settings.<layer>`` for a bad
            setting) if it is no non-empty mapping of layer names to settings.
    """

    def __init__(self, settings: Mapping[str, Any], name: str | None = None) -> None:
        from ecngym.envs.action import red_setting

        if not isinstance(settings, Mapping) or not settings:
            raise ConfigError("controller.settings", f"expected a mapping switch layer -> [kmin, kmax, pmax], "
                                                     f"got {settings!r}")
        self.settings: dict[str, tuple[int, int, float]] = {}
        for layer, entry in settings.items():
            if not isinstance(layer, str) or not layer:
                raise ConfigError("controller.settings", f"expected switch layer names as keys, got {layer!r}")
            s = red_setting(f"controller.settings.{layer}", entry)
            self.settings[layer] = (s.kmin_bytes, s.kmax_bytes, s.pmax)
        self.name = name or "static_per_layer"
        self.interval_steps = 1
        self.log: list[dict[str, Any]] = []
        self._action: Any = None

    def env_overrides(self, env: Any) -> dict[str, Any]:
        """Act per layer, with every setting among the discrete templates (:func:`templates_overrides`)."""
        return templates_overrides(env, self.settings.values(), scope="layer")

    def reset(self, env: Any) -> None:
        """Encode the per-layer settings as an action of ``env`` (made with :meth:`env_overrides`).

        Raises:
            ConfigError: Naming ``controller.settings`` if its layers are not those of the env's
                controlled ports.
            InvalidAction: If the env does not act per layer, or cannot express a setting.
        """
        view = EnvView(env)
        layers = sorted({str(x) for x in view.port_layers})
        if sorted(self.settings) != layers:
            raise ConfigError("controller.settings", f"got layers {sorted(self.settings)}; the env's controlled "
                                                     f"ports are in layers {layers}: give one setting for each")
        if view.units != layers:
            raise InvalidAction(f"{self.name} sets one setting per switch layer: the env's action units are "
                                f"{view.units}; make the env with env_overrides (action.scope=layer)")
        rows = [self.settings[u] for u in view.units]
        self._action = view.encode(*([r[j] for r in rows] for j in range(3)))
        self.log = [{"step": 0, "layer": u, "kmin_bytes": r[0], "kmax_bytes": r[1], "pmax": r[2]}
                    for u, r in zip(view.units, rows, strict=True)]

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """The same action every step."""
        return self._action
