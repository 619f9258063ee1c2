"""Gymnasium registration of the ecngym environments (``ecngym/<Name>-v<N>``)."""

from __future__ import annotations

from typing import Any

from gymnasium.envs.registration import register, registry

#: Registered scenarios: id -> constructor kwargs. The env truncates itself after
#: ``episode_steps`` (a keyword of gymnasium.make), so no TimeLimit wrapper is registered.
SCENARIOS: dict[str, dict[str, Any]] = {
    # 16 hosts on one 100 Gbps switch, DCQCN + PFC (HPCC settings), WebSearch 30 % + incasts.
    "ecngym/RoceIncast-v0": {},
    # 4 leaves x 4 spines x 4 hosts, 100 Gbps, DCQCN + PFC; one ECN setting per layer.
    "ecngym/RoceLeafSpine-v0": {
        "topology": {"kind": "leaf_spine", "leaves": 4, "spines": 4, "hosts_per_leaf": 4},
        "workload": {"workload": "websearch", "load": 0.4,
                     "incast": {"degree": 6, "size": "64KB", "interval": "200us", "arrival": "poisson"}},
        "action": {"scope": "layer"},
    },
    # The same leaf-spine with hardware-style DCTCP and step marking (Kmin = Kmax = K).
    "ecngym/DctcpLeafSpine-v0": {
        "topology": {"kind": "leaf_spine", "leaves": 4, "spines": 4, "hosts_per_leaf": 4},
        "fabric": {"preset": "dctcp"},
        "workload": {"workload": "websearch", "load": 0.4,
                     "incast": {"degree": 6, "size": "64KB", "interval": "200us", "arrival": "poisson"}},
        "action": {"scope": "layer", "templates": [[k, k, 1.0] for k in
                                                   ("10KB", "20KB", "40KB", "65KB", "100KB", "200KB", "400KB")]},
    },
}

ENTRY_POINT = "ecngym.envs.ecn_env:EcnTuningEnv"


def register_envs() -> None:
    """Register every scenario (idempotent)."""
    for env_id, kwargs in SCENARIOS.items():
        if env_id not in registry:
            register(id=env_id, entry_point=ENTRY_POINT, kwargs=kwargs)
