"""ecngym: a reinforcement-learning gym and benchmark for ECN / AQM tuning in datacenter fabrics.

Subpackages
-----------
``ecngym.sim_backend``  the packet-level ns-3 fabric (C++) and its Python API
``ecngym.workloads``    flow-size distributions, arrival patterns and hashed traces
``ecngym.envs``         Gymnasium / PettingZoo environments over the fabric
``ecngym.baselines``    non-learning controllers
``ecngym.agents``       learning controllers

Importing ``ecngym`` builds nothing and starts no simulation.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ecngym")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = ["__version__"]
