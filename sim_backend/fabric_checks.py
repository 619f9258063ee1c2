"""Checks of a fabric that need both its topology and its config (neither can make them alone)."""

from __future__ import annotations

import numpy as np

from ecngym.error import ConfigError
from ecngym.sim_backend.config import FabricConfig
from ecngym.sim_backend.topology import Topology


def check_min_rate(topology: Topology, config: FabricConfig) -> None:
    """Refuse a rate-based congestion control's ``min_rate`` above the slowest host link.

    Every rate cut is floored at ``min_rate``, so a floor above a NIC's line rate puts every cut
    back above line rate: congestion control would be off without a word. (Not a check of
    :class:`FabricConfig` alone: the line rates come from the topology.)

    Args:
        topology: The fabric's topology.
        config: The fabric config.

    Raises:
        ConfigError: Naming ``fabric.<cc>.min_rate``, its value and the slowest host link's rate.
    """
    cc = config.cc
    if cc == "dctcp":  # window-based: no rate floor
        return
    host_links = (topology.link_a < topology.num_hosts) | (topology.link_b < topology.num_hosts)
    if not host_links.any():
        return
    line_bps = float(topology.rate_bps[host_links].min())
    floor_bps = float(getattr(config, cc).min_rate)
    if floor_bps > line_bps:
        raise ConfigError(f"fabric.{cc}.min_rate", f"got {floor_bps:g} bps = {floor_bps / 1e9:g} Gbps, "
                          f"above the slowest host link's {line_bps / 1e9:g} Gbps: every rate cut would land above "
                          f"line rate, which turns {cc} off; allowed: at most {line_bps / 1e9:g} Gbps")


#: Distinct link rates HPCC's INT records can name: a 3-bit index (the C++ builder refuses more too)
MAX_INT_LINK_RATES = 8


def check_int_link_rates(topology: Topology, config: FabricConfig) -> None:
    """Refuse HPCC on a topology of more link rates than its INT records can name.

    Raises:
        ConfigError: Naming ``fabric.cc``, the number of distinct rates and the limit, before the
            builder would refuse the ``links``.
    """
    if config.cc != "hpcc":
        return
    rates = np.unique(topology.rate_bps)
    if len(rates) > MAX_INT_LINK_RATES:
        shown_rates = ", ".join(f"{r / 1e9:g}" for r in rates[:10]) + (", ..." if len(rates) > 10 else "")
        raise ConfigError("fabric.cc", f"got 'hpcc' on a topology of {len(rates)} different link rates ({shown_rates} "
                                       f"Gbps); HPCC's INT records name a link's rate in 3 bits: at most "
                                       f"{MAX_INT_LINK_RATES} rates, or another congestion control")
