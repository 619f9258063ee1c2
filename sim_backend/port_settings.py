"""Per-port switch settings derived from each port's link, as the HPCC model's program sets them.

The HPCC reference program (``scratch/third.cc``, its switch set-up loop) configures every switch
port from its own link, so that a mixed-rate fabric gets rate-appropriate settings:

- ECN: ``KMIN_MAP`` / ``KMAX_MAP`` / ``PMAX_MAP`` give the thresholds per link rate (a
  ``FabricConfig.aqm`` setting's ``by_rate``: any policy's parameters per link rate,
  :func:`ports_by_rate`);
- PFC headroom: ``3 x rate x delay`` of the port's link, in integer bytes
  (``buffer.headroom_rule = "rate_delay"``; the factor is ``buffer.headroom_delays``);
- PFC alpha: 1/8 by default, doubled once per halving of the port's rate until it is no faster
  than the NICs' (``buffer.pfc_alpha_rule = "by_rate"``, at most 1).

Port ids follow the fabric's build order: link ``l`` gives ports ``2l`` (its ``link_a`` end) and
``2l + 1`` (its ``link_b`` end).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ecngym.error import ConfigError, first_offending

if TYPE_CHECKING:
    from ecngym.sim_backend.config import FabricConfig
    from ecngym.sim_backend.topology import Topology


def port_delay_ns(topology: Topology) -> np.ndarray:
    """One-way delay of each port's link, by fabric-wide port id."""
    return np.repeat(np.asarray(topology.delay_ns, dtype=np.int64), 2)


def nic_rate_bps(topology: Topology) -> float:
    """The NIC rate the HPCC program compares switch ports with: host 0's link rate."""
    at_host0 = (topology.link_a == 0) | (topology.link_b == 0)
    return float(topology.rate_bps[np.flatnonzero(at_host0)[0]])


def ports_by_rate(by_rate: dict[float, dict[str, Any]], ports: np.ndarray, rate_bps: np.ndarray, field: str
                  ) -> list[tuple[np.ndarray, dict[str, Any]]]:
    """The ports of each rate of an AQM setting's ``by_rate`` entries, with the entry's parameters.

    Args:
        by_rate: Link rate (bit/s) -> parameters (:attr:`ecngym.sim_backend.config.AqmSetting.by_rate`).
        ports: The setting's switch port ids.
        rate_bps: Their link rates (one per port).
        field: The ``by_rate`` field, named in the error.

    Returns:
        ``(port ids, parameters)`` per entry that has ports, in ``by_rate``'s order; empty when
        ``by_rate`` is.

    Raises:
        ConfigError: If a port's rate has no entry (naming the rate and the rates given): every
            port of a setting with ``by_rate`` takes its rate's entry, as in the reference program.
    """
    if not by_rate:
        return []
    rates = np.asarray(rate_bps, dtype=np.float64)
    missing = [rate for rate in rates.tolist() if rate not in by_rate]  # (the first in port order is named)
    if missing:
        raise ConfigError(field, f"no entry for the {missing[0]:.6g} bit/s links of the topology; given: "
                                 f"{sorted(by_rate)} (every switch port's rate needs one)")
    groups = [(ports[rates == rate], params) for rate, params in by_rate.items()]
    return [(group, params) for group, params in groups if len(group)]


def pfc_by_port(config: FabricConfig, topology: Topology, rate_bps: np.ndarray, is_switch: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Each switch port's PFC alpha and headroom by the buffer rules, or None if both are fixed.

    Returns:
        ``(port_ids, alpha, headroom_bytes)`` over the switch ports.

    Raises:
        ConfigError: Naming ``fabric.buffer.headroom_rule`` if ``"rate_delay"`` gives a port more
            headroom than the whole buffer (as a fixed ``fabric.buffer.headroom`` is refused).
    """
    from ecngym.units import parse_bytes

    b = config.buffer
    if b.headroom_rule == "fixed" and b.pfc_alpha_rule == "fixed":
        return None
    ports = np.flatnonzero(is_switch).astype(np.uint32)
    rates = rate_bps[ports]
    if b.headroom_rule == "rate_delay":
        delay = port_delay_ns(topology)[ports]
        # integer arithmetic as the reference: rate * delay / 8 / 1e9 * factor, in Python ints (a
        # 100 Gbps link of 200 ms overflowed uint64's product and wrapped to a small headroom)
        factor = int(b.headroom_delays)
        exact = [int(r) * int(d) // 8 // 1_000_000_000 * factor for r, d in zip(rates, delay, strict=True)]
        buffer_bytes = parse_bytes(b.buffer, "fabric.buffer.buffer")
        over = [i for i, h in enumerate(exact) if h > buffer_bytes]
        if over:
            i, more = first_offending(np.array(over))
            raise ConfigError("fabric.buffer.headroom_rule", f"'rate_delay' gives switch port {int(ports[i])} "
                              f"({rates[i]:.4g} bps x {int(delay[i])} ns x {factor}) {exact[i]} B of headroom{more}, "
                              f"more than the whole buffer (fabric.buffer.buffer = {buffer_bytes} B); lower "
                              "fabric.buffer.headroom_delays, use headroom_rule 'fixed' or raise the buffer")
        headroom = np.array(exact, dtype=np.uint64)
    else:
        headroom = np.full(len(ports), parse_bytes(b.headroom, "fabric.buffer.headroom"), dtype=np.uint64)
    alpha = np.full(len(ports), float(b.pfc_alpha))
    if b.pfc_alpha_rule == "by_rate":
        nic = nic_rate_bps(topology)
        for i, rate in enumerate(rates):
            while rate > nic and alpha[i] < 1.0:
                alpha[i] = min(1.0, alpha[i] * 2)
                rate /= 2
    return ports, alpha, headroom.astype(np.uint64)
