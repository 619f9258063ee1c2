"""The columns of a flow table and their defaults.

The one home of the fabric's (:mod:`ecngym.sim_backend.flows`) and a trace's
(:mod:`ecngym.workloads.trace`) column names; it imports nothing, so a trace need not load the
fabric's modules.
"""

#: Columns every flow table has
REQUIRED_COLUMNS = ("src", "dst", "size_bytes", "start_ns")
#: Columns the fabric reads when a table has them (defaults otherwise)
OPTIONAL_COLUMNS = ("priority", "dport", "extra_delay_ns")
#: Columns a trace carries that the fabric does not read: a flow table may have them
DESCRIPTIVE_COLUMNS = ("flow_id", "tag")
#: Priority of flows whose table gives none: the HPCC simulator's data priority group
DEFAULT_PRIORITY = 3
#: Destination port of flows whose table gives none: the HPCC traffic generator's (its incast
#: flows use 200). The HPCC ECMP hash (``FabricConfig.ecmp_hash="hpcc"``) hashes it.
DEFAULT_DPORT = 100
