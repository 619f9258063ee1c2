"""DCTCP-DEMT's dynamic marking threshold (ByteTuning Tab. 2, "DCTCP-DEMT (2018)" row).

See docs: algorithms/bytetuning.md §1.5.

DEMT moves DCTCP's step-marking threshold K with the number of flows N at the port, in packets,
with C·D the bandwidth-delay product in packets::

    K = C·D            if N ≤ C·D / 2
    K = 2·C·D − 2·N    if C·D / 2 < N < C·D
    K = 0              if N ≥ C·D

(The table's static figure, 10.8 KB at 10 GbE, is the ``static_dctcp_demt`` row of the static
family.) Here, per controlled port and every ``interval_steps`` steps: N = the distinct flows that
sent data through the port in the last step (the fabric's ``distinct_flows`` telemetry), C = the
port's line rate, D = ``delay`` (default: the topology's base RTT [ours]: Tab. 2 names D without
defining it), one packet = the fabric's MTU payload + data header; the port gets
Kmin = Kmax = K · packet bytes, Pmax = 1, through a continuous per-port action
(:meth:`env_overrides`). Each decision is one :attr:`log` record per port with traffic.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ecngym.baselines import params
from ecngym.envs.view import EnvView
from ecngym.error import ConfigError
from ecngym.units import bdp_bytes, parse_bytes, parse_time_ns


def demt_k_packets(flows: np.ndarray, bdp_packets: np.ndarray) -> np.ndarray:
    """DEMT's K (packets) for N = ``flows`` at ports whose C·D is ``bdp_packets`` (Tab. 2)."""
    flows = np.asarray(flows, dtype=np.float64)
    cd = np.asarray(bdp_packets, dtype=np.float64)
    mid = np.clip(2 * cd - 2 * flows, 0.0, None)
    return np.where(flows <= cd / 2, cd, np.where(flows >= cd, 0.0, mid))


class DemtController:
    """DCTCP-DEMT: K = f(N, C·D) per port, re-set every ``interval_steps`` steps.

    Args:
        delay: D of C·D: ``"rtt"`` (the topology's base RTT) or a duration (``"40us"``).
        packet_bytes: Bytes of one packet for K and C·D (``None``: MTU payload + data header).
        interval_steps: Decide every this many env steps (≥ 1).
        name: Name in tables.

    Raises:
        ConfigError: On a bad parameter, naming ``controller.<field>``.
    """

    def __init__(self, delay: Any = "rtt", packet_bytes: Any = None, interval_steps: int = 1,
                 name: str = "dctcp_demt_dynamic") -> None:
        if not (isinstance(delay, str) and delay.strip().lower() == "rtt"):
            if parse_time_ns(delay, "controller.delay") <= 0:
                raise ConfigError("controller.delay", f"must be > 0, got {delay!r}")
        self.delay = delay
        self.packet_bytes = None if packet_bytes is None else parse_bytes(packet_bytes, "controller.packet_bytes")
        if self.packet_bytes is not None and self.packet_bytes < 1:
            raise ConfigError("controller.packet_bytes", f"must be >= 1 B, got {packet_bytes!r}")
        self.interval_steps = params.whole("interval_steps", interval_steps, 1)
        self.name = name
        self.log: list[dict[str, Any]] = []

    def env_overrides(self, env: Any) -> dict[str, Any]:
        """A continuous per-port action space from K = 0 up to C·D of the fastest port (step marking)."""
        view = EnvView(env)
        rate = float(np.max(view.port_rates_bps))
        top = int(np.ceil(bdp_bytes(rate, self._delay_ns(view.base_rtt_ns)))) + 2 * self._packet(view)
        return {"action": {"type": "continuous", "scope": "port", "scale_with_rate": False, "layers": None,
                           "ports": None, "ranges": {"kmin_bytes": [0, top],
                                                     "kmax_bytes": {"relative_to": "kmin_bytes", "offset": [0, 1]},
                                                     "pmax": [0.0, 1.0]}}}

    def _delay_ns(self, base_rtt_ns: int) -> int:
        if isinstance(self.delay, str) and self.delay.strip().lower() == "rtt":
            return int(base_rtt_ns)
        return parse_time_ns(self.delay, "controller.delay")

    def _packet(self, view: EnvView) -> int:
        return int(self.packet_bytes) if self.packet_bytes is not None else view.packet_bytes

    def reset(self, env: Any) -> None:
        """Compute each port's C·D; the first step runs at K = C·D (no flows seen yet).

        Raises:
            ConfigError: Naming ``env.action`` if the env's action cannot set each port's K
                (see :meth:`env_overrides`).
        """
        self.view = view = EnvView(env)
        view.require_per_port_continuous("DCTCP-DEMT")
        self.pkt = self._packet(view)
        self.bdp_packets = bdp_bytes(view.port_rates_bps, self._delay_ns(view.base_rtt_ns)) / self.pkt
        self.flows = np.zeros(len(view.ports))
        self.log = []

    def observe(self, observation: np.ndarray, info: dict[str, Any]) -> None:
        """Keep the last step's flow count N of every controlled port."""
        self.flows = np.asarray(info["telemetry"]["distinct_flows"], dtype=np.float64)[info["ports"]]

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """Kmin = Kmax = K(N) · packet, Pmax = 1 on every controlled port."""
        k_bytes = np.round(demt_k_packets(self.flows, self.bdp_packets) * self.pkt)
        for i in np.flatnonzero(self.flows > 0):
            self.log.append({"time_ns": int(info.get("time_ns", 0)), "port": int(self.view.ports[i]),
                             "flows": float(self.flows[i]), "bdp_packets": float(self.bdp_packets[i]),
                             "k_bytes": float(k_bytes[i])})
        return self.view.encode(k_bytes, k_bytes, np.ones(len(k_bytes)))
