"""The Linux-like DCTCP host's options: one home for what "Linux-like" turns on (docs/concepts/tcp-hosts.md).

The options themselves (their ranges and defaults) are the C++ ``TcpHostOptions`` attributes,
read by :func:`ecngym.sim_backend.knobs.tcp_host_knobs`; this module names the combination.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

#: The Linux-like DCTCP host at Linux's defaults (docs/concepts/tcp-hosts.md): the ``fabric.dctcp``
#: options that turn it on, beside the options' own defaults (Linux's: 200 ms minimum RTO, 40 ms
#: delayed-ACK timer). IW 10 (RFC 6928), DCTCP's floor of 2 segments (``dctcp_ssthresh``) and the
#: window grown only while it limits the sender (``tcp_is_cwnd_limited``). The ``dctcp_linux`` fabric
#: config, the reproductions' Linux-like hosts and ``ecngym bench tcp``'s ``linux`` variant start here.
LINUX_HOST_DCTCP: Mapping[str, Any] = MappingProxyType({
    "slow_start": True, "initial_cwnd_packets": 10, "handshake": True, "rto_estimate": True,
    "delayed_ack": True, "min_window": "2000B", "cwnd_limited_growth": True,
})


def linux_host_dctcp(**overrides: Any) -> dict[str, Any]:
    """The ``fabric.dctcp`` options of the Linux-like host (:data:`LINUX_HOST_DCTCP`) with ``overrides``.

    Args:
        **overrides: ``fabric.dctcp`` keys to set (e.g. ``min_rto_ns="5ms"``); a key given as ``None``
            is left out, so the option keeps its own default (e.g. ``delayed_ack=None``: an ACK per packet).

    Returns:
        A new dict, to pass as ``FabricConfig.preset("dctcp", dctcp=...)``.
    """
    merged = {**LINUX_HOST_DCTCP, **overrides}
    return {key: value for key, value in merged.items() if value is not None}
