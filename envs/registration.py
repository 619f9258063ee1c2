"""Gymnasium registration of the ecngym environments (``ecngym/<Name>-v<N>``).

The ``-v0`` ids are the quick toy scenarios (100 steps, no traffic phases). The ``-v1`` ids are the
benchmark suite's scenarios: each is one file, ``configs/suite/scenarios/<name>.yaml`` (its env
overrides, protocol and phases), read here so that a scenario has one home.
"""

from __future__ import annotations

import copy
import warnings
from pathlib import Path
from typing import Any

from gymnasium.envs.registration import register, registry

from ecngym.configs import CONFIG_DIR
from ecngym.error import ConfigError
from ecngym.yaml_files import read_yaml

#: The benchmark suite's scenario files (each registers its ``id`` with its ``env`` overrides).
SUITE_SCENARIO_DIR = CONFIG_DIR / "suite" / "scenarios"

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


def suite_scenarios(folder: Path | str | None = None) -> dict[str, dict[str, Any]]:
    """The suite's scenarios by env id: id -> the ``env`` overrides of its scenario file.

    Args:
        folder: The scenario files' folder (default :data:`SUITE_SCENARIO_DIR`).

    Raises:
        ConfigError: Naming ``scenarios.<name>`` for a file that cannot be read as a mapping
            (:func:`ecngym.yaml_files.read_yaml`), ``scenarios.<name>.id`` / ``.env`` for a file
            without an id or env mapping, or whose id repeats another file's or a ``-v0`` id.
    """
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(Path(folder or SUITE_SCENARIO_DIR).glob("*.yaml")):
        prefix = f"scenarios.{path.stem}"
        data = read_yaml(path, prefix) or {}
        if not isinstance(data, dict):
            raise ConfigError(prefix, f"{path} holds {type(data).__name__}, expected a mapping of a scenario's fields")
        env_id, env = data.get("id"), data.get("env")
        if not isinstance(env_id, str) or not env_id.startswith("ecngym/"):
            raise ConfigError(f"{prefix}.id", f"got {env_id!r}; expected an id such as ecngym/Name-v1")
        if not isinstance(env, dict):
            raise ConfigError(f"{prefix}.env", f"expected a mapping of EnvConfig overrides, got {env!r}")
        if env_id in out or env_id in SCENARIOS:
            raise ConfigError(f"{prefix}.id", f"{env_id} is already registered by another scenario")
        out[env_id] = env
    return out


#: Registered suite scenarios (``-v1``, ``-v2``; id -> EnvConfig overrides), read from the suite's scenario files.
SUITE_SCENARIOS: dict[str, dict[str, Any]] = suite_scenarios()


def register_envs() -> None:
    """Register every scenario, the toy ``-v0`` ones and the suite's ``-v1`` / ``-v2`` ones (idempotent)."""
    # Suite v1's scenarios stay frozen and runnable beside the v2 ones of the same name (suite=core-v1), so
    # Gymnasium's "is out of date, consider upgrading to v2" would mislead whoever reruns v1 on purpose.
    warnings.filterwarnings("ignore", message=r".*The environment ecngym/\S+ is out of date",
                            category=DeprecationWarning)
    for env_id, preset in {**SCENARIOS, **SUITE_SCENARIOS}.items():
        if env_id not in registry:
            register(id=env_id, entry_point=ENTRY_POINT, kwargs={"config": preset})


def scenario_config(name: str) -> dict[str, Any]:
    """The preset of a registered scenario, as a fresh nested dict.

    Args:
        name: Its id (``"ecngym/RoceLeafSpine-v0"``) or short name (``"RoceLeafSpine-v0"``).

    Raises:
        ConfigError: On an unknown scenario (listing the known ones).
    """
    every = {**SCENARIOS, **SUITE_SCENARIOS}
    env_id = name if name in every else f"ecngym/{name}"
    if env_id not in every:
        raise ConfigError("env.scenario", f"unknown scenario {name!r}; known: {sorted(every)}")
    return copy.deepcopy(every[env_id])
