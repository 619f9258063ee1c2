"""Workloads and traces: the identical, hashed traffic every controller is judged on.

Example::

    from ecngym.workloads import Trace, generate_trace

    trace = generate_trace("websearch", load=0.5, hosts=16, link_rate="100Gbps", duration="10ms", seed=1,
                           incast={"degree": 8, "size": "64KB", "interval": "1ms"})
    trace.flows            # flow_id, src, dst, size_bytes, start_ns, priority, tag
    trace.hash             # sha256 of the table: same parameters + seed -> same hash
    trace.save("t.parquet"); Trace.load("t.parquet")          # hash verified on load
    trace.to_hpcc_flow_file("flows.txt")                      # the HPCC simulator's format

Flow sizes come from the CDFs in ``workloads/cdf/`` (provenance in each file's header), a
fixed size, or a user CDF file; see :mod:`ecngym.workloads.distributions`. Arrival patterns
(Poisson background at a target load, with load phases; incast; permutation; all-to-all;
long-lived flows) are in :mod:`ecngym.workloads.arrivals` and composed by
:func:`generate_trace`. The command line: ``ecngym trace generate`` / ``ecngym trace inspect``.
"""

from ecngym.workloads.distributions import (
    BUILTIN_CDFS,
    NO_BACKGROUND,
    FlowSizeDistribution,
    fixed_size,
    get_distribution,
    known_workloads,
    load_cdf_file,
)
from ecngym.workloads.generator import generate_trace, generate_trace_from_config
from ecngym.workloads.trace import COLUMNS, Trace, content_hash

__all__ = [
    "BUILTIN_CDFS",
    "COLUMNS",
    "NO_BACKGROUND",
    "FlowSizeDistribution",
    "Trace",
    "content_hash",
    "fixed_size",
    "generate_trace",
    "generate_trace_from_config",
    "get_distribution",
    "known_workloads",
    "load_cdf_file",
]
