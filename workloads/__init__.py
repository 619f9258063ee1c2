"""Workloads and traces: the identical, hashed traffic every controller is judged on.

>>> from ecngym.workloads import generate_trace
>>> trace = generate_trace("websearch", load=0.5, hosts=16, duration="10ms", seed=1)
>>> trace.hash, len(trace.flows)
"""

from ecngym.workloads.distributions import (
    BUILTIN_CDFS,
    FlowSizeDistribution,
    fixed_size,
    get_distribution,
    load_cdf_file,
)
from ecngym.workloads.generator import generate_trace, generate_trace_from_config
from ecngym.workloads.trace import Trace, content_hash

__all__ = [
    "BUILTIN_CDFS",
    "FlowSizeDistribution",
    "Trace",
    "content_hash",
    "fixed_size",
    "generate_trace",
    "generate_trace_from_config",
    "get_distribution",
    "load_cdf_file",
]
