"""The packet-level fabric: ns-3 C++ (``_fabric``) and its Python API.

Example:
    >>> from ecngym.sim_backend import Fabric, FabricConfig, topology
    >>> fab = Fabric(topology.incast_star(hosts=4), flows_df, FabricConfig.preset("hpcc"))
    >>> fab.advance("100us"); tel = fab.read_telemetry()

Names are imported on first use (PEP 562), so ``import ecngym.sim_backend`` loads neither the C++
module and ns-3's libraries nor pandas until something needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only (the names resolve lazily via _LAZY)
    from ecngym.sim_backend import topology  # noqa: F401
    from ecngym.sim_backend.config import FabricConfig, preset_names  # noqa: F401
    from ecngym.sim_backend.fabric import Fabric, PortTable  # noqa: F401
    from ecngym.sim_backend.flows import as_flow_table  # noqa: F401
    from ecngym.sim_backend.hpcc_flow_file import read_hpcc_flow_file  # noqa: F401
    from ecngym.sim_backend.metrics import SIZE_BUCKETS, slowdown_table  # noqa: F401
    from ecngym.sim_backend.tcp_hosts import LINUX_HOST_DCTCP, linux_host_dctcp  # noqa: F401
    from ecngym.sim_backend.topology import Topology  # noqa: F401

#: public name -> the submodule that defines it (``None``: the name is the submodule)
_LAZY = {
    "topology": None,
    "FabricConfig": "config",
    "preset_names": "config",
    "LINUX_HOST_DCTCP": "tcp_hosts",
    "linux_host_dctcp": "tcp_hosts",
    "Fabric": "fabric",
    "PortTable": "fabric",
    "as_flow_table": "flows",
    "read_hpcc_flow_file": "hpcc_flow_file",
    "SIZE_BUCKETS": "metrics",
    "slowdown_table": "metrics",
    "Topology": "topology",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{_LAZY[name] or name}")
    value = module if _LAZY[name] is None else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
