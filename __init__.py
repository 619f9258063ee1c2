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

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # The version is looked up on first use: importlib.metadata scans the installed
    # distributions, which would otherwise cost every `import ecngym...` tens of ms.
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("ecngym")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        value = "0.0.0"
    globals()["__version__"] = value
    return value
