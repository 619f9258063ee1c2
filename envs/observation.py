"""Per-port features from fabric telemetry, stacked over the last k intervals.

Every feature lies in [0, 1] (utilisation in [0, 2]: a packet's bytes count when it starts on the
wire, so a busy interval can read slightly above 1), which keeps observations bounded float32.

| feature | meaning |
|---|---|
| queue | time-averaged data-queue bytes: linear (q / queue_scale, at most 1) or ACC step mapping |
| max_queue | the interval's maximum queue, same mapping |
| utilization | bytes sent x 8 / (rate x interval) |
| marked_rate | CE-marked / data packets the marking decision saw |
| kmin, kmax | current thresholds / the largest Kmax the action space can set |
| pmax | current Pmax |
| paused_fraction | share of the interval a data priority was PFC-paused |
| flows | distinct flows f as f / (f + flow_scale) |
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ecngym.envs.config import FEATURES, ObservationConfig
from ecngym.error import ConfigError, check_range
from ecngym.units import parse_bytes

FEATURE_HIGH = {"utilization": 2.0}


class FeatureBuilder:
    """Turns telemetry of the controlled ports into a (ports, history x features) float32 array.

    Args:
        cfg: Observation configuration.
        ports: Controlled port ids.
        bdp_bytes: Bandwidth-delay product of each controlled port (for the step mapping).
        kmax_bound_bytes: Normaliser of kmin / kmax features.
        mark_at_dequeue: Whether marking is decided at dequeue (sets marked_rate's denominator).

    Raises:
        ConfigError: On an unknown feature or a bad mapping.
    """

    def __init__(self, cfg: ObservationConfig, ports: np.ndarray, bdp_bytes: np.ndarray,
                 kmax_bound_bytes: float, mark_at_dequeue: bool) -> None:
        bad = [f for f in cfg.features if f not in FEATURES]
        if bad or not cfg.features:
            raise ConfigError("env.observation.features", f"unknown {bad}; allowed: {list(FEATURES)}")
        if cfg.queue_mapping not in ("linear", "step"):
            raise ConfigError("env.observation.queue_mapping", f"got {cfg.queue_mapping!r}, allowed: 'linear', 'step'")
        self.history = int(check_range("env.observation.history", int(cfg.history), 1, 64))
        if len(cfg.step_breakpoints_bdp) != len(cfg.step_values):
            raise ConfigError("env.observation.step_values", "needs one value per breakpoint")
        self.cfg = cfg
        self.ports = ports
        self.queue_scale = float(parse_bytes(cfg.queue_scale, "env.observation.queue_scale")) or 1.0
        self.breakpoints = np.outer(bdp_bytes, np.asarray(cfg.step_breakpoints_bdp, dtype=np.float64))
        self._step_levels = np.append(np.asarray(cfg.step_values, dtype=np.float64), 0.0)
        self.kmax_bound = max(kmax_bound_bytes, 1.0)
        self.count_key = "tx_data_packets" if mark_at_dequeue else "enqueued_data_packets"
        self.n_features = len(cfg.features)
        self.low = np.zeros((len(ports), self.history * self.n_features), dtype=np.float32)
        per_feature_high = np.array([FEATURE_HIGH.get(f, 1.0) for f in cfg.features], dtype=np.float32)
        self.high = np.tile(per_feature_high, (len(ports), self.history))
        self._frames: deque[np.ndarray] = deque(maxlen=self.history)

    def step_map(self, queue_bytes: np.ndarray) -> np.ndarray:
        """ACC's step mapping of per-port queue bytes.

        1 for an (almost) empty queue, down to 0 past the last breakpoint; breakpoints are in
        units of each port's BDP.
        """
        level = (queue_bytes[:, None] > self.breakpoints).sum(axis=1)  # breakpoints passed
        return self._step_levels[level]

    def map_queue(self, queue_bytes: np.ndarray) -> np.ndarray:
        """Queue feature: linear (q / scale, at most 1) or ACC's step mapping."""
        if self.cfg.queue_mapping == "linear":
            return np.minimum(queue_bytes / self.queue_scale, 1.0)
        return self.step_map(queue_bytes)

    #: Telemetry arrays the features (and the env's reward and summary) read.
    TELEMETRY_KEYS = ("mean_queue_bytes", "max_queue_bytes", "utilization", "ecn_marked_packets",
                      "tx_data_packets", "enqueued_data_packets", "paused_ns", "distinct_flows")

    def controlled(self, tel: dict) -> dict[str, np.ndarray]:
        """The telemetry arrays of the controlled ports only (indexed once per step)."""
        p = self.ports
        return {k: tel[k][p] for k in self.TELEMETRY_KEYS}

    def frame(self, pt: dict, red: dict, span_ns: int) -> np.ndarray:
        """Features of one interval, shape (ports, features).

        Args:
            pt: Telemetry of the controlled ports (:meth:`controlled`).
            red: Current ``kmin_bytes``, ``kmax_bytes``, ``pmax`` of the controlled ports.
            span_ns: Length of the interval.
        """
        cols = []
        for name in self.cfg.features:
            if name == "queue":
                cols.append(self.map_queue(pt["mean_queue_bytes"]))
            elif name == "max_queue":
                cols.append(self.map_queue(pt["max_queue_bytes"].astype(np.float64)))
            elif name == "utilization":
                cols.append(np.minimum(pt["utilization"], FEATURE_HIGH["utilization"]))
            elif name == "marked_rate":
                n = pt[self.count_key].astype(np.float64)
                cols.append(np.minimum(pt["ecn_marked_packets"] / np.maximum(n, 1.0), 1.0))
            elif name == "kmin":
                cols.append(np.minimum(red["kmin_bytes"] / self.kmax_bound, 1.0))
            elif name == "kmax":
                cols.append(np.minimum(red["kmax_bytes"] / self.kmax_bound, 1.0))
            elif name == "pmax":
                cols.append(red["pmax"])
            elif name == "paused_fraction":
                cols.append(np.minimum(pt["paused_ns"] / max(span_ns, 1), 1.0))
            elif name == "flows":
                f = pt["distinct_flows"].astype(np.float64)
                cols.append(f / (f + self.cfg.flow_scale))
        return np.stack(cols, axis=1).astype(np.float32)

    def reset(self, first: np.ndarray) -> np.ndarray:
        """Start a new history filled with ``first``; return the observation."""
        self._frames.clear()
        for _ in range(self.history):
            self._frames.append(first)
        return self.observation()

    def push(self, frame: np.ndarray) -> np.ndarray:
        """Append one interval's frame; return the stacked observation (oldest first)."""
        self._frames.append(frame)
        return self.observation()

    def observation(self) -> np.ndarray:
        """The stacked history, shape (ports, history x features)."""
        return np.clip(np.concatenate(list(self._frames), axis=1), self.low, self.high)
