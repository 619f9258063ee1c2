"""Static ECN settings from the literature (specs/bytetuning.md §1.5 Tab. 2, laecn.md, pred.md).

Byte thresholds scale linearly with the port rate where the source gives them per link speed.
``StaticEcnController`` applies one setting to every controlled port, every step; with a discrete
action space the setting must be one of the env's templates (add it with
``env.action.static_default`` or ``env.action.templates``), with a continuous one it is encoded
exactly when it lies inside the box.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ecngym.envs.action import EcnSetting
from ecngym.error import ConfigError, InvalidAction
from ecngym.units import parse_bytes


@dataclass(frozen=True)
class StaticEcnSetting:
    """A named static (Kmin, Kmax, Pmax) rule.

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
    """DCTCP's rule K = C x RTT x λ (λ = 1/7: Alizadeh et al. 2010, K > C·RTT/7)."""
    return int(round(rate_bps * rtt_ns / 8e9 * lam))


#: Static settings by name.
STATIC_SETTINGS: dict[str, StaticEcnSetting] = {
    # DCQCN paper (Zhu et al. 2015), Tab. 2/3: 5 KB / 200 KB / 1 % at 40 GbE.
    "dcqcn": StaticEcnSetting("dcqcn", "DCQCN (SIGCOMM 2015) at 40 GbE", 5e3 / 40, 200e3 / 40, 0.01),
    # HPCC's run.py: kmin = 100 KB, kmax = 400 KB per 25 Gbps, pmax = 0.2.
    "hpcc": StaticEcnSetting("hpcc", "HPCC simulator run.py (per 25 Gbps)", 100e3 / 25, 400e3 / 25, 0.2),
    # P-PFC / vendor-style: 40 KB / 200 KB / 100 % (ByteTuning Tab. 2, P-PFC row).
    "vendor": StaticEcnSetting("vendor", "vendor-style (ByteTuning Tab. 2, P-PFC row) at 40 GbE",
                               40e3 / 40, 200e3 / 40, 1.0),
}


class StaticEcnController:
    """Apply one static ECN setting on every step.

    Args:
        setting: A name from :data:`STATIC_SETTINGS`, ``"dctcp"`` (K = C·RTT·λ, step marking),
            ``"env_default"`` (the fabric's own setting: the env's static template), or an
            explicit ``[kmin_bytes, kmax_bytes, pmax]``.
        dctcp_lambda: λ of the DCTCP rule.
        interval_steps: Act every this many steps (a static controller acts once per episode
            in effect; kept for the interface).

    Raises:
        ConfigError: On an unknown setting name.
    """

    def __init__(self, setting: str | list[Any] = "env_default", dctcp_lambda: float = 1 / 7,
                 interval_steps: int = 1) -> None:
        if isinstance(setting, str) and setting not in (*STATIC_SETTINGS, "dctcp", "env_default"):
            raise ConfigError("controller.setting", f"unknown static setting {setting!r}; known: "
                                                    f"{[*STATIC_SETTINGS, 'dctcp', 'env_default']}")
        self.setting = setting
        self.dctcp_lambda = dctcp_lambda
        self.interval_steps = interval_steps
        self.name = f"static_{setting}" if isinstance(setting, str) else "static_custom"
        self._action: Any = None

    def target(self, env: Any) -> tuple[int, int, float]:
        """The (kmin_bytes, kmax_bytes, pmax) this controller wants on ``env``'s ports."""
        scenario = env.unwrapped.scenario
        rate = float(np.min(scenario.topology.rate_bps))
        if isinstance(self.setting, (list, tuple)):
            kmin, kmax, pmax = self.setting
            return parse_bytes(kmin, "controller.setting"), parse_bytes(kmax, "controller.setting"), float(pmax)
        if self.setting == "env_default":  # the fabric preset's own static setting
            ecn = scenario.fabric_config.ecn
            return parse_bytes(ecn.kmin), parse_bytes(ecn.kmax), float(ecn.pmax)
        if self.setting == "dctcp":
            k = dctcp_k_bytes(rate, scenario.base_rtt_ns, self.dctcp_lambda)
            return k, k, 1.0
        return STATIC_SETTINGS[self.setting].at_rate(rate)

    def reset(self, env: Any) -> None:
        """Encode the target setting as an action of ``env``'s action space.

        Raises:
            InvalidAction: If the setting is not one of the env's discrete templates, or lies
                outside its continuous ranges.
        """
        mapper = env.unwrapped.scenario.actions
        kmin, kmax, pmax = self.target(env)
        if mapper.cfg.type == "discrete":
            want = EcnSetting(kmin, kmax, pmax)
            if want not in mapper.templates:
                raise InvalidAction(f"{self.name}: ({kmin} B, {kmax} B, {pmax}) is not one of the env's ECN templates; "
                                    "add it via env.action.static_default or env.action.templates")
            idx = mapper.templates.index(want)
            self._action = idx if mapper.n_units == 1 else np.full(mapper.n_units, idx)
            return
        encoded = []
        for v, lo, hi in ((kmin, mapper.kmin_lo, mapper.kmin_hi), (kmax - kmin, mapper.span_lo, mapper.span_hi),
                          (pmax, mapper.pmax_lo, mapper.pmax_hi)):
            if not lo <= v <= hi:
                raise InvalidAction(f"{self.name}: {v} outside the continuous action range [{lo}, {hi}]")
            encoded.append(0.0 if hi == lo else 2 * (v - lo) / (hi - lo) - 1)
        self._action = np.tile(np.array(encoded, dtype=np.float32), (mapper.n_units, 1))

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """The same action every step."""
        return self._action
