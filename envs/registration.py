"""Gymnasium registration of the ecngym environments (``ecngym/<Name>-v<N>``)."""

from __future__ import annotations

import copy
from typing import Any

from gymnasium.envs.registration import register, registry

from ecngym.error import ConfigError

#: Registered scenarios: id -> the :class:`~ecngym.envs.EnvConfig` overrides of its preset. The preset is
#: registered as the ``config`` argument, so keywords of ``gymnasium.make`` merge into it key by key
#: (``gymnasium.make("ecngym/DctcpLeafSpine-v0", action={"scope": "port"})`` keeps the DCTCP templates).
#: The env truncates itself after ``episode_steps`` (a keyword of gymnasium.make), so no TimeLimit
#: wrapper is registered (one would cut a longer episode asked for with ``episode_steps``).
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
    # ECN#'s setting (docs: algorithms/ecn-sharp.md §5.2 SIM-L, scaled down): DCTCP leaf-spine at 10 Gbps whose flows'
    # base RTTs are spread by host delay classes (the authors' {1, 20, 50, 80, 160} us), WebSearch 60 %;
    # controlled ports run RED as step marking (Kmin = Kmax, Pmax 1): one step-marking K per layer is the action
    # (set env.aqm=ecn_sharp to run ECN#'s policy there).
    "ecngym/DctcpRttVariation-v0": {
        "topology": {"kind": "leaf_spine", "leaves": 4, "spines": 4, "hosts_per_leaf": 4, "host_rate": "10Gbps",
                     "fabric_rate": "10Gbps"},
        "fabric": {"preset": "dctcp", "retransmit_timeout": "5ms"},
        "workload": {"workload": "websearch", "load": 0.6},
        "delay_classes": ["1us", "20us", "50us", "80us", "160us"],
        "interval": "100us",
        "action": {"scope": "layer", "templates": [[k, k, 1.0] for k in
                                                   ("20KB", "40KB", "65KB", "100KB", "150KB", "250KB")]},
    },
    # R-AQM's setting (R-AQM §VI-A; docs: algorithms/r-aqm.md §5.1, T1): a large fan-in DCTCP incast on one
    # 10 Gbps switch, lossy (PFC off, a 300-packet buffer), 48 senders x 64 KB every 500 us over WebSearch 20 %.
    "ecngym/DctcpLargeIncast-v0": {
        "topology": {"kind": "incast_star", "hosts": 49, "link_rate": "10Gbps", "link_delay": "3us"},
        "fabric": {"preset": "dctcp", "retransmit_timeout": "5ms",
                   "buffer": {"buffer": "315600B", "reserve": "0B", "headroom": "0B", "pfc_enabled": False,
                              "pfc_alpha": 64}},
        "workload": {"workload": "websearch", "load": 0.2,
                     "incast": {"degree": 48, "size": "64KB", "interval": "500us", "arrival": "periodic"}},
        "interval": "50us",
        "action": {"templates": [[k, k, 1.0] for k in ("10KB", "20KB", "40KB", "65KB", "100KB", "200KB")]},
    },
}

ENTRY_POINT = "ecngym.envs.ecn_env:EcnTuningEnv"


def register_envs() -> None:
    """Register every scenario (idempotent)."""
    for env_id, preset in SCENARIOS.items():
        if env_id not in registry:
            register(id=env_id, entry_point=ENTRY_POINT, kwargs={"config": preset})


def scenario_config(name: str) -> dict[str, Any]:
    """The preset of a registered scenario, as a fresh nested dict.

    Args:
        name: Its id (``"ecngym/RoceLeafSpine-v0"``) or short name (``"RoceLeafSpine-v0"``).

    Raises:
        ConfigError: On an unknown scenario (listing the known ones).
    """
    env_id = name if name in SCENARIOS else f"ecngym/{name}"
    if env_id not in SCENARIOS:
        raise ConfigError("env.scenario", f"unknown scenario {name!r}; known: {sorted(SCENARIOS)}")
    return copy.deepcopy(SCENARIOS[env_id])
