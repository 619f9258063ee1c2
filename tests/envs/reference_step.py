"""The env's per-step features, history, reward and statistics in NumPy: the test oracle of the C++ kernel.

The package computes them in one place, the C++ ``PortFeatureKernel``
(``envs/kernel/port-feature-kernel.h``, run by ``ecngym.envs.step_kernel``). This module writes
the same arithmetic a second time, in NumPy's array operations (each rounding as NumPy rounds, NaN
as NumPy treats it), so that tests can play whole episodes and compare every frame, observation,
reward and statistics row with it to the bit (``test_step_kernel.py``). Its constants come from
the scenario's config and facts (line rates, base RTT), not from the compiled program, so the
compilation is checked too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ecngym.envs.config import AQM_PARAM_FEATURE
from ecngym.sim_backend.aqm import telemetry_specs
from ecngym.sim_backend.fabric import Telemetry
from ecngym.units import bdp_bytes, parse_bytes

FEATURE_HIGH = {"utilization": 2.0}


class ReferenceStep:
    """The features, history, rewards and statistics rows of an env's controlled ports, in NumPy.

    Args:
        scenario: The env's :class:`~ecngym.envs.scenario.EcnScenario` (its config and facts).
    """

    def __init__(self, scenario: Any) -> None:
        sc = scenario
        cfg = sc.features.cfg  # (the features after the scenario's policy check)
        self.features = list(cfg.features)
        self.linear = cfg.queue_mapping == "linear"
        self.ports = np.asarray(sc.ports)
        rates = np.asarray(sc.topology.port_table()["rate_bps"][self.ports], dtype=np.float64)
        self.queue_scale = float(parse_bytes(cfg.queue_scale))
        self.flow_scale = cfg.flow_scale
        self.breakpoints = np.outer(bdp_bytes(rates, sc.base_rtt_ns),
                                    np.asarray(cfg.step_breakpoints_bdp, dtype=np.float64))
        self.levels = np.append(np.asarray(cfg.step_values, dtype=np.float64), 0.0)
        same = len(self.ports) > 0 and bool(np.all(self.breakpoints == self.breakpoints[0]))
        self.shared_breakpoints = self.breakpoints[0].copy() if same else None
        self.kmax_bound = max(sc.actions.kmax_bound_bytes, 1.0)
        self.count_key = sc.features.count_key
        self.bytes_per_ns = rates / 8e9
        self.policy_setting = sc.actions.base
        self.history = int(cfg.history)
        specs = telemetry_specs()
        self.normalisers = {f: specs[f].normaliser.partition(":")[::2] for f in self.features if f in specs}
        bounds = sc.features._param_bounds
        names = list(bounds)
        self.param_cols = [(i, names.index(f.removeprefix(AQM_PARAM_FEATURE)),
                            float(bounds[f.removeprefix(AQM_PARAM_FEATURE)][0]),
                            float(bounds[f.removeprefix(AQM_PARAM_FEATURE)][1])
                            - float(bounds[f.removeprefix(AQM_PARAM_FEATURE)][0]))
                           for i, f in enumerate(self.features) if f.startswith(AQM_PARAM_FEATURE)]
        reward = sc.reward
        self.omega, self.beta = reward.omega, reward.beta
        self.q_left, self.q_max = reward.q_left, reward.q_max
        self.goodput_per_byte = 8e9 / (rates * sc.interval_ns)
        self.frame = np.zeros((len(self.ports), len(self.features)))
        self.hist = np.zeros((len(self.ports), self.history, len(self.features)), dtype=np.float32)
        self.stats_keys = ("mean_queue_bytes", "utilization", "paused_ns", "ecn_marked_packets", self.count_key)
        self.stats: list[dict[str, np.ndarray]] = []

    # ------------------------------------------------------------------ features
    def step_map(self, queue_bytes: np.ndarray) -> np.ndarray:
        """ACC's step mapping: 1 for an (almost) empty queue, down to 0 past the last breakpoint."""
        if self.shared_breakpoints is not None:
            return self.levels[self.shared_breakpoints.searchsorted(queue_bytes, side="left")]
        return self.levels[(queue_bytes[:, None] > self.breakpoints).sum(axis=1)]

    def map_queue(self, queue_bytes: np.ndarray) -> np.ndarray:
        """Queue bytes on the queue features' mapping: linear (q / scale, at most 1) or the step mapping."""
        if self.linear:
            return np.minimum(queue_bytes / self.queue_scale, 1.0)
        return self.step_map(queue_bytes)

    def scale(self, arg: str) -> float:
        """A normaliser's scale: a setting by name, or a number."""
        if arg == "flow_scale":
            return self.flow_scale
        if arg in self.policy_setting:
            return float(self.policy_setting[arg])
        return float(arg)

    def policy_feature(self, name: str, pt: dict[str, np.ndarray]) -> np.ndarray:
        """A policy-telemetry feature by its declared normaliser (NaN reads 0)."""
        x = np.nan_to_num(np.asarray(pt[name], dtype=np.float64), nan=0.0)
        kind, arg = self.normalisers[name]
        if kind == "share":
            return np.minimum(x / np.maximum(pt[arg], 1.0), 1.0)
        if kind == "saturate":
            return x / (x + self.scale(arg))
        if kind == "fraction_of":
            return np.minimum(x / self.scale(arg), 1.0)
        if kind == "queue_time":
            return self.map_queue(x * self.bytes_per_ns)
        assert kind == "flag", kind
        return np.minimum(x, 1.0)

    def controlled(self, tel: Telemetry) -> dict[str, np.ndarray]:
        """Every block row and per-policy array, of the controlled ports."""
        keys = ("mean_queue_bytes", "max_queue_bytes", "utilization", "ecn_marked_packets", "tx_data_packets",
                "enqueued_data_packets", "paused_ns", "distinct_flows", "tx_data_bytes")
        pt = tel.rows(keys, self.ports)
        for k, v in tel.aqm.items():
            pt[k] = v[self.ports]
        return pt

    def compute_frame(self, pt: dict[str, np.ndarray], red: dict, aqm_values: np.ndarray | None,
                      span_ns: int) -> np.ndarray:
        """The features of one interval, (ports, features) float64."""
        out = self.frame
        for i, name in enumerate(self.features):
            col = out[:, i]
            if name in ("queue", "max_queue"):
                q = pt["mean_queue_bytes" if name == "queue" else "max_queue_bytes"]
                if self.linear:
                    np.multiply(q, 1.0 / self.queue_scale, out=col)
                    np.minimum(col, 1.0, out=col)
                else:
                    col[:] = self.step_map(q)
            elif name == "utilization":
                np.minimum(pt["utilization"], FEATURE_HIGH["utilization"], out=col)
            elif name == "marked_rate":
                np.minimum(pt["ecn_marked_packets"] / np.maximum(pt[self.count_key], 1.0), 1.0, out=col)
            elif name == "paused_fraction":
                np.multiply(pt["paused_ns"], 1.0 / max(span_ns, 1), out=col)
                np.minimum(col, 1.0, out=col)
            elif name == "flows":
                f = pt["distinct_flows"]
                np.divide(f, f + self.flow_scale, out=col)
            elif name in ("kmin", "kmax"):
                out[:, i] = np.minimum(red[f"{name}_bytes"] / self.kmax_bound, 1.0)
            elif name == "pmax":
                out[:, i] = red["pmax"]
            elif name in self.normalisers:
                col[:] = self.policy_feature(name, pt)
        for i, j, low, span in self.param_cols:  # clipped: a configured value may lie outside the range
            if span > 0:
                np.clip((aqm_values[:, j] - low) / span, 0.0, 1.0, out=out[:, i])
            else:
                out[:, i] = 0.0
        return out

    def reset(self, tel: Telemetry, red: dict, aqm_values: np.ndarray | None) -> None:
        """A new history, filled with the frame of the episode's start (a span of 1 ns)."""
        first = self.compute_frame(self.controlled(tel), red, aqm_values, 1)
        self.hist[:] = first[:, None, :]
        self.stats = []

    def observation(self) -> np.ndarray:
        """The stacked history, (ports, history x features)."""
        return self.hist.reshape(len(self.ports), -1).copy()

    # ------------------------------------------------------------------ rewards
    def pred_phi(self, queue_bytes: np.ndarray, q_left: float, q_max: float) -> np.ndarray:
        """PRED's Φ: 1 up to q_left, linear down to 0 at q_max."""
        return np.clip((q_max - np.asarray(queue_bytes, dtype=np.float64)) / (q_max - q_left), 0.0, 1.0)

    def reward(self, name: str, pt: dict[str, np.ndarray], span_fraction: float) -> np.ndarray:
        """Each controlled port's step reward ``name``."""
        if name == "acc":
            r = np.minimum(pt["utilization"], 1.0)
            r *= self.omega
            r += (1 - self.omega) * self.step_map(pt["mean_queue_bytes"])
            return r
        if name == "pred":
            r = np.minimum(pt["tx_data_bytes"] * (self.goodput_per_byte / span_fraction), 1.0)
            return self.beta * r + (1 - self.beta) * self.pred_phi(pt["mean_queue_bytes"], self.q_left, self.q_max)
        assert name in ("fct", "score_dense"), name  # (their flow-level terms are outside the kernel)
        return np.zeros(len(pt["utilization"]))

    # ------------------------------------------------------------------ one step
    def step(self, tel: Telemetry, span_ns: int, span_fraction: float, red: dict,
             aqm_values: np.ndarray | None) -> dict[str, np.ndarray]:
        """One step: the frame pushed onto the history, a statistics row kept; each reward's per-port values.

        Returns:
            Each reward name's per-port reward (``acc``, ``pred``, ``fct``, ``score_dense``).
        """
        pt = self.controlled(tel)
        frame = self.compute_frame(pt, red, aqm_values, span_ns)
        if self.history > 1:
            self.hist[:, :-1] = self.hist[:, 1:]
        self.hist[:, -1] = frame
        self.stats.append({k: np.array(pt[k]) for k in self.stats_keys})
        return {name: self.reward(name, pt, span_fraction) for name in ("acc", "pred", "fct", "score_dense")}
