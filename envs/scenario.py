"""The simulation side of an environment: one fabric per episode, its trace, its controlled ports."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from ecngym.envs.action import EcnActionMapper, EcnSetting
from ecngym.envs.config import EnvConfig
from ecngym.envs.observation import FeatureBuilder
from ecngym.envs.reward import RewardFunction
from ecngym.envs.summary import episode_summary
from ecngym.error import ConfigError, check_range
from ecngym.sim_backend import Fabric, FabricConfig, Topology
from ecngym.units import parse_bytes, parse_time_ns
from ecngym.workloads import Trace, generate_trace


def port_table(topology: Topology) -> dict[str, np.ndarray]:
    """Ports of a topology as the fabric numbers them: link l has ports 2l (at link_a) and 2l+1."""
    node = np.empty(2 * len(topology.link_a), dtype=np.int64)
    node[0::2], node[1::2] = topology.link_a, topology.link_b
    peer = np.empty_like(node)
    peer[0::2], peer[1::2] = topology.link_b, topology.link_a
    rate = np.repeat(topology.rate_bps, 2)
    is_switch = node >= topology.num_hosts
    layers = np.array(topology.switch_layers + ["host"], dtype=object)
    layer = layers[np.where(is_switch, node - topology.num_hosts, len(topology.switch_layers))]
    return {"node": node, "peer": peer, "rate_bps": rate, "is_switch": is_switch, "layer": layer}


def max_base_rtt_ns(topology: Topology, mtu_payload_bytes: int = 1000) -> int:
    """Largest host-to-host base RTT (2 x propagation + per-hop MTU serialisation), by BFS."""
    adj: dict[int, list[tuple[int, int, float]]] = {}
    for a, b, d, r in zip(topology.link_a, topology.link_b, topology.delay_ns, topology.rate_bps, strict=True):
        adj.setdefault(int(a), []).append((int(b), int(d), float(r)))
        adj.setdefault(int(b), []).append((int(a), int(d), float(r)))
    worst = 0.0
    for src in range(topology.num_hosts):
        best = {src: 0.0}
        frontier = [src]
        while frontier:
            nxt = []
            for u in frontier:
                if u != src and u < topology.num_hosts:
                    continue  # hosts do not forward
                for v, d, r in adj.get(u, []):
                    if v not in best:
                        best[v] = best[u] + 2 * d + mtu_payload_bytes * 8e9 / r
                        nxt.append(v)
            frontier = nxt
        worst = max(worst, max(t for v, t in best.items() if v < topology.num_hosts))
    return int(round(worst))


class EcnScenario:
    """Builds and drives the fabric for an ECN-tuning environment.

    Args:
        cfg: The environment configuration.

    Raises:
        ConfigError: On any invalid field (checked once, at construction).
    """

    def __init__(self, cfg: EnvConfig) -> None:
        self.cfg = cfg
        self.topology = Topology.from_config(cfg.topology)
        self.fabric_config = FabricConfig.from_dict(cfg.fabric, "env.fabric")
        cpp = self.fabric_config.to_cpp()  # validates every fabric field now
        self.base_rtt_ns = max_base_rtt_ns(self.topology, cpp.mtu_payload_bytes)
        self.interval_ns = self._interval(cfg.interval)
        self.episode_steps = int(check_range("env.episode_steps", int(cfg.episode_steps), 1, 10**7))
        self.episode_ns = self.interval_ns * self.episode_steps
        ports = port_table(self.topology)
        layers = cfg.action.layers
        mask = ports["is_switch"].copy()
        if layers is not None:
            unknown = sorted(set(layers) - set(self.topology.switch_layers))
            if unknown:
                raise ConfigError("env.action.layers", f"unknown {unknown}; this topology has "
                                                       f"{sorted(set(self.topology.switch_layers))}")
            mask &= np.isin(ports["layer"], list(layers))
        self.ports = np.flatnonzero(mask).astype(np.uint32)
        self.port_layers = ports["layer"][self.ports]
        self.port_nodes = ports["node"][self.ports]
        rates = ports["rate_bps"][self.ports]
        default = EcnSetting(parse_bytes(self.fabric_config.ecn.kmin), parse_bytes(self.fabric_config.ecn.kmax),
                             float(self.fabric_config.ecn.pmax))
        self.actions = EcnActionMapper(cfg.action, self.ports, self.port_layers, rates, default)
        bdp = rates * self.base_rtt_ns / 8e9
        self.features = FeatureBuilder(cfg.observation, self.ports, bdp, self.actions.kmax_bound_bytes,
                                       self.fabric_config.ecn.mark_at == "dequeue")
        self.reward = RewardFunction(cfg.reward, self.features.step_map)
        self._fixed_trace = Trace.load(cfg.trace) if cfg.trace and str(cfg.trace).endswith(".parquet") else (
            Trace.from_hpcc_flow_file(cfg.trace) if cfg.trace else None)
        self.make_trace(0)  # validate the workload now, not at the first reset
        self.fabric: Fabric | None = None
        self.trace: Trace | None = None
        self.step_count = 0
        self.sim_wall_s = 0.0
        self._stats: dict[str, Any] = {}

    def _interval(self, value: Any) -> int:
        if isinstance(value, str) and value.strip().lower().endswith("rtt"):
            try:
                n = float(value.strip()[:-3])
            except ValueError:
                raise ConfigError("env.interval", f"cannot parse {value!r}; use e.g. '5rtt' or '20us'") from None
            check_range("env.interval", n, 0, None, low_inclusive=False)
            return max(1, int(round(n * self.base_rtt_ns)))
        ns = parse_time_ns(value, "env.interval")
        if ns <= 0:
            raise ConfigError("env.interval", f"must be > 0, got {value!r}")
        return ns

    # ------------------------------------------------------------------ episode
    def make_trace(self, seed: int) -> Trace:
        """The episode's trace: the fixed one, or a fresh one from the workload config and seed."""
        if self._fixed_trace is not None:
            return self._fixed_trace
        wl = dict(self.cfg.workload)
        name = wl.pop("workload", "websearch")
        return generate_trace(name, hosts=self.topology.num_hosts, link_rate=float(self.topology.rate_bps.min()),
                              duration=self.episode_ns, seed=seed, **wl)

    def start_episode(self, seed: int) -> np.ndarray:
        """Build a fresh fabric for a new episode; return the first observation."""
        self.close()
        self.trace = self.make_trace(seed)
        self.fabric = Fabric(self.topology, self.trace, self.fabric_config, seed=seed)
        self.step_count = 0
        self.sim_wall_s = 0.0
        self._stats = {"queue": [], "util": [], "paused_ns": 0.0, "marked": 0, "packets": 0}
        # time 0: empty queues, the fabric's static ECN setting (mirrored here: only apply() sets it)
        self.red = {k: v[self.ports] for k, v in self.fabric.get_red().items()}
        first = self.features.frame(self.features.controlled(self.fabric.read_telemetry()), self.red, 1)
        return self.features.reset(first)

    def apply(self, action: object) -> None:
        """Validate ``action`` and set the ECN curve of the controlled ports (if it changed)."""
        kmin, kmax, pmax = self.actions.to_settings(action)
        red = self.red  # the controlled ports' current setting
        if (np.array_equal(kmin, red["kmin_bytes"]) and np.array_equal(kmax, red["kmax_bytes"])
                and np.array_equal(pmax, red["pmax"])):
            return  # unchanged: skip the call (a held action is the common case)
        self.fabric.set_red(self.ports, kmin, kmax, pmax)
        self.red = {"kmin_bytes": kmin, "kmax_bytes": kmax, "pmax": pmax}

    def advance(self) -> tuple[np.ndarray, dict[str, Any], np.ndarray]:
        """Run one interval; return (observation, telemetry, per-port reward)."""
        start = time.perf_counter()
        self.fabric.advance(self.interval_ns)
        self.sim_wall_s += time.perf_counter() - start
        self.step_count += 1
        tel = self.fabric.read_telemetry()
        pt = self.features.controlled(tel)
        obs = self.features.push(self.features.frame(pt, self.red, self.interval_ns))
        self._stats["queue"].append(pt["mean_queue_bytes"])
        self._stats["util"].append(np.minimum(pt["utilization"], 1.0))
        self._stats["paused_ns"] += float(pt["paused_ns"].sum())
        self._stats["marked"] += int(pt["ecn_marked_packets"].sum())
        self._stats["packets"] += int(pt[self.features.count_key].sum())
        reward = self.reward.per_port(pt["utilization"], pt["mean_queue_bytes"])
        return obs, tel, reward

    @property
    def done(self) -> bool:
        """Whether the episode's simulated time is used up."""
        return self.step_count >= self.episode_steps

    def finish(self) -> tuple[pd.DataFrame, dict[str, Any]]:
        """Flow records and the episode summary."""
        records = self.fabric.flow_records()
        s = self._stats
        summary = episode_summary(records, np.array(s["queue"]), np.array(s["util"]), s["paused_ns"],
                                  s["marked"], s["packets"], self.episode_ns, len(self.ports))
        summary["trace_hash"] = self.trace.hash
        return records, summary

    def close(self) -> None:
        """Destroy the fabric (safe to call twice)."""
        if self.fabric is not None:
            self.fabric.close()
            self.fabric = None
