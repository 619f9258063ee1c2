"""The packet-level fabric: ns-3 C++ (``_fabric``) and its Python API.

Example:
    >>> from ecngym.sim_backend import Fabric, FabricConfig, topology
    >>> fab = Fabric(topology.incast_star(hosts=4), flows_df, FabricConfig.preset("hpcc"))
    >>> fab.advance("100us"); tel = fab.read_telemetry()
"""

from ecngym.sim_backend import topology
from ecngym.sim_backend.config import FabricConfig, preset_names
from ecngym.sim_backend.fabric import Fabric, PortTable
from ecngym.sim_backend.flows import as_flow_table, read_hpcc_flow_file
from ecngym.sim_backend.metrics import SIZE_BUCKETS, slowdown_table
from ecngym.sim_backend.topology import Topology

__all__ = [
    "SIZE_BUCKETS",
    "Fabric",
    "FabricConfig",
    "PortTable",
    "Topology",
    "as_flow_table",
    "preset_names",
    "read_hpcc_flow_file",
    "slowdown_table",
    "topology",
]
