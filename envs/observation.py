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

Features of the controlled ports' AQM policy (``env.aqm``; each needs its policy on the controlled
ports) are the quantities each policy declares in C++ (``PortAqmPolicy::DescribeTelemetry``: name,
unit, normaliser; :func:`ecngym.sim_backend.aqm.telemetry`), mapped into [0, 1] by their normaliser
(:data:`_NORMALISERS`): ``share:<key>`` min(x / max(y, 1), 1) with y the port's telemetry ``<key>``;
``saturate:<scale>`` x / (x + scale); ``fraction_of:<scale>`` min(x / scale, 1); ``queue_time`` a
time as the bytes the port sends in it, on the queue mapping; ``flag`` min(x, 1). The
[AQM policy reference](../aqm-policies.md) lists every policy's.

| feature | meaning |
|---|---|
| aqm.<parameter> | a tuned parameter's value v: (v − low) / (high − low), action range or templates' span, in [0, 1] |
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ecngym.envs.config import AQM_PARAM_FEATURE, FEATURES, ObservationConfig, aqm_features, number
from ecngym.error import ConfigError, check_range
from ecngym.sim_backend.aqm import telemetry_specs
from ecngym.units import parse_bytes

if TYPE_CHECKING:
    from ecngym.sim_backend.fabric import Telemetry

FEATURE_HIGH = {"utilization": 2.0}


class FeatureBuilder:
    """Turns telemetry of the controlled ports into a (ports, history x features) float32 array.

    Every feature is built inside its bounds (``low`` / ``high``), so no clipping is needed.

    Args:
        cfg: Observation configuration.
        ports: Controlled port ids.
        bdp_bytes: Bandwidth-delay product of each controlled port (for the step mapping).
        kmax_bound_bytes: Normaliser of kmin / kmax features.
        mark_at_dequeue: Whether marking is decided at dequeue (sets marked_rate's denominator).
        extra_telemetry: Further telemetry keys :meth:`controlled` must extract (for the reward).

    Raises:
        ConfigError: On an unknown feature or a bad mapping.
    """

    def __init__(self, cfg: ObservationConfig, ports: np.ndarray, bdp_bytes: np.ndarray,
                 kmax_bound_bytes: float, mark_at_dequeue: bool, extra_telemetry: tuple[str, ...] = (),
                 port_rates_bps: np.ndarray | None = None, viq_capacity_packets: float = 1.0,
                 aqm_param_bounds: dict[str, tuple[float, float]] | None = None) -> None:
        bounds = aqm_param_bounds or {}
        policy_features = aqm_features()
        bad = [f for f in cfg.features if f not in FEATURES and f not in policy_features
               and f.removeprefix(AQM_PARAM_FEATURE) not in bounds]
        if bad or not cfg.features:
            raise ConfigError("env.observation.features", f"unknown {bad}; allowed: {list(FEATURES + policy_features)}")
        if len(set(cfg.features)) != len(cfg.features):
            raise ConfigError("env.observation.features", f"lists a feature twice: {list(cfg.features)}")
        if cfg.queue_mapping not in ("linear", "step"):
            raise ConfigError("env.observation.queue_mapping", f"got {cfg.queue_mapping!r}, allowed: 'linear', 'step'")
        history = number("env.observation.history", cfg.history, integer=True)
        self.history = int(check_range("env.observation.history", history, 1, 64))
        if len(cfg.step_breakpoints_bdp) != len(cfg.step_values):
            raise ConfigError("env.observation.step_values", "needs one value per breakpoint")
        for i, v in enumerate(cfg.step_values):
            name = f"env.observation.step_values[{i}]"
            check_range(name, number(name, v), 0.0, 1.0)
        if list(cfg.step_breakpoints_bdp) != sorted(cfg.step_breakpoints_bdp):
            raise ConfigError("env.observation.step_breakpoints_bdp", "must be increasing")
        check_range("env.observation.flow_scale", number("env.observation.flow_scale", cfg.flow_scale), 0, None,
                    low_inclusive=False)
        self.cfg = cfg
        self.ports = ports
        self.queue_scale = float(parse_bytes(cfg.queue_scale, "env.observation.queue_scale"))
        if self.queue_scale <= 0:
            raise ConfigError("env.observation.queue_scale", f"must be > 0 bytes, got {cfg.queue_scale!r}")
        self.breakpoints = np.outer(bdp_bytes, np.asarray(cfg.step_breakpoints_bdp, dtype=np.float64))
        self._step_levels = np.append(np.asarray(cfg.step_values, dtype=np.float64), 0.0)
        same = len(bdp_bytes) > 0 and bool(np.all(self.breakpoints == self.breakpoints[0]))
        self._shared_breakpoints = self.breakpoints[0].copy() if same else None
        self.kmax_bound = max(kmax_bound_bytes, 1.0)
        self.count_key = "tx_data_packets" if mark_at_dequeue else "enqueued_data_packets"
        self.n_features = len(cfg.features)
        self.low = np.zeros((len(ports), self.history * self.n_features), dtype=np.float32)
        per_feature_high = np.array([FEATURE_HIGH.get(f, 1.0) for f in cfg.features], dtype=np.float32)
        self.high = np.tile(per_feature_high, (len(ports), self.history))
        # telemetry the features, the rewards and the episode summary read (nothing else is indexed)
        needed = {"mean_queue_bytes", "utilization", "ecn_marked_packets", "paused_ns", self.count_key}
        needed |= {_FEATURE_KEY[f] for f in cfg.features if f in _FEATURE_KEY}
        specs = telemetry_specs()
        #: each policy feature's normaliser: (kind, argument), from its C++ declaration
        self._aqm_norm = {f: _split_normaliser(specs[f].normaliser) for f in cfg.features if f in specs}
        needed |= set(self._aqm_norm) | {arg for kind, arg in self._aqm_norm.values() if kind == "share"}
        rates = np.ones(len(ports)) if port_rates_bps is None else np.asarray(port_rates_bps, dtype=np.float64)
        self._bytes_per_ns = rates / 8e9
        self._viq_capacity = float(viq_capacity_packets)
        # aqm.<parameter> columns: (column, index of the parameter in the setting rows, low, span)
        names = list(bounds)
        self._param_cols = tuple((i, names.index(f.removeprefix(AQM_PARAM_FEATURE)),
                                  *_low_span(*bounds[f.removeprefix(AQM_PARAM_FEATURE)]))
                                 for i, f in enumerate(cfg.features) if f.startswith(AQM_PARAM_FEATURE))
        needed |= set(extra_telemetry)
        self.telemetry_keys = tuple(sorted(needed))
        # history ring: (ports, history, features), oldest first
        self._hist = np.zeros((len(ports), self.history, self.n_features), dtype=np.float32)
        self._frame = np.zeros((len(ports), self.n_features), dtype=np.float64)
        self._ecn_cols: tuple[int, ...] = tuple(i for i, f in enumerate(cfg.features) if f in ("kmin", "kmax", "pmax"))
        self._red_seen: dict | None = None  # the ECN setting the ECN columns of _frame show

    def step_map(self, queue_bytes: np.ndarray) -> np.ndarray:
        """ACC's step mapping of per-port queue bytes.

        1 for an (almost) empty queue, down to 0 past the last breakpoint; breakpoints are in
        units of each port's BDP.
        """
        if self._shared_breakpoints is not None:  # every port has the same BDP: one search
            return self._step_levels[self._shared_breakpoints.searchsorted(queue_bytes, side="left")]
        level = (queue_bytes[:, None] > self.breakpoints).sum(axis=1)  # breakpoints passed
        return self._step_levels[level]

    def map_queue(self, queue_bytes: np.ndarray) -> np.ndarray:
        """Queue feature: linear (q / scale, at most 1) or ACC's step mapping."""
        if self.cfg.queue_mapping == "linear":
            return np.minimum(queue_bytes / self.queue_scale, 1.0)
        return self.step_map(queue_bytes)

    def controlled(self, tel: Telemetry) -> dict[str, np.ndarray]:
        """The telemetry arrays the env reads (only those), for the controlled ports only."""
        return tel.rows(self.telemetry_keys, self.ports)

    def frame(self, pt: dict, red: dict, span_ns: int, aqm_values: np.ndarray | None = None) -> np.ndarray:
        """Features of one interval, shape (ports, features), float64, each inside its bounds.

        The returned array is reused by the next call: copy it to keep it. (Written column by
        column in place: this runs every step, and a handful of small NumPy calls is its cost.)

        Args:
            pt: Telemetry of the controlled ports (:meth:`controlled`).
            red: Current ``kmin_bytes``, ``kmax_bytes``, ``pmax`` of the controlled ports (the
                ECN columns are recomputed only when this mapping is another object).
            span_ns: Length of the interval.
            aqm_values: Current values of the tuned policy parameters, (ports, parameters) in the
                order of ``aqm_param_bounds`` (for the ``aqm.<parameter>`` features).
        """
        out = self._frame
        linear = self.cfg.queue_mapping == "linear"
        for i, name in enumerate(self.cfg.features):
            col = out[:, i]
            if name in ("queue", "max_queue"):
                q = pt["mean_queue_bytes" if name == "queue" else "max_queue_bytes"]
                if linear:
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
                np.divide(f, f + self.cfg.flow_scale, out=col)
            elif name in self._aqm_norm:
                col[:] = self._aqm_feature(name, pt)
        for i, j, low, span in self._param_cols:  # clipped: a configured value may lie outside the range
            if span > 0:
                np.clip((aqm_values[:, j] - low) / span, 0.0, 1.0, out=out[:, i])
            else:
                out[:, i] = 0.0
        self.refresh_ecn_columns(red)
        return out

    def refresh_ecn_columns(self, red: dict) -> None:
        """Write the ``kmin`` / ``kmax`` / ``pmax`` columns of the frame, when ``red`` is another object.

        Args:
            red: Current ``kmin_bytes``, ``kmax_bytes``, ``pmax`` of the controlled ports (a new
                mapping whenever the setting changes).
        """
        if self._ecn_cols and red is not self._red_seen:
            out = self._frame
            for i in self._ecn_cols:
                name = self.cfg.features[i]
                out[:, i] = red["pmax"] if name == "pmax" else np.minimum(red[f"{name}_bytes"] / self.kmax_bound, 1.0)
            self._red_seen = red

    def kernel_program(self) -> dict[str, Any] | None:
        """The frame's arithmetic as a program of :class:`~ecngym.envs.step_kernel.StepKernel`.

        Each column as ``(op, row_a, kind_a, row_b, kind_b, scale, cap, scale_by_span)`` of the
        C++ ``PortFeatureKernel`` (the same operations, in the same order, as :meth:`frame`), the
        step mapping's breakpoints and levels, and the frame and history buffers it writes.

        Returns:
            ``None`` if a feature is one only :meth:`frame` computes (the per-policy telemetry,
            ``aqm.<parameter>``).
        """
        if any(f not in _KERNEL_OPS for f in self.cfg.features):
            return None
        from ecngym.sim_backend._fabric import ColumnOp
        from ecngym.sim_backend.fabric import telemetry_layout  # (the fabric module imports pandas)

        layout = telemetry_layout()
        linear = self.cfg.queue_mapping == "linear"
        columns = []
        for name in self.cfg.features:
            op, key, den = _KERNEL_OPS[name]
            scale, cap, by_span = 1.0, 1.0, False
            if name in ("queue", "max_queue"):
                op, scale = ("SCALE_MIN", 1.0 / self.queue_scale) if linear else ("STEP_MAP", 1.0)
            elif name == "utilization":
                cap = FEATURE_HIGH["utilization"]  # (x * 1.0 is x: np.minimum(x, 2) as frame has it)
            elif name == "marked_rate":
                den = self.count_key
            elif name == "paused_fraction":
                by_span = True
            elif name == "flows":
                scale = float(self.cfg.flow_scale)
            row_a, kind_a = layout[key] if key else (0, "f")
            row_b, kind_b = layout[den] if den else (0, "f")
            columns.append((getattr(ColumnOp, op), row_a, kind_a, row_b, kind_b, scale, cap, by_span))
        shared = self._shared_breakpoints is not None
        breakpoints = self._shared_breakpoints if shared else self.breakpoints
        return {"columns": columns, "breakpoints": [float(b) for b in breakpoints.reshape(-1)],
                "levels": [float(v) for v in self._step_levels], "shared_breakpoints": shared,
                "history": self.history, "frame": self._frame, "hist": self._hist}

    def _aqm_feature(self, name: str, pt: dict) -> np.ndarray:
        """One policy-telemetry feature in [0, 1] by its declared normaliser (NaN reads 0)."""
        x = np.nan_to_num(np.asarray(pt[name], dtype=np.float64), nan=0.0)
        kind, arg = self._aqm_norm[name]
        return _NORMALISERS[kind](self, x, pt, arg)

    def _scale(self, arg: str) -> float:
        """A normaliser's scale: a setting by name, or a number."""
        if arg == "flow_scale":
            return self.cfg.flow_scale
        if arg == "viq_capacity_packets":
            return self._viq_capacity
        return float(arg)

    def reset(self, first: np.ndarray) -> np.ndarray:
        """Start a new history filled with ``first``; return the observation."""
        self._hist[:] = first[:, None, :]
        return self.observation()

    def push(self, frame: np.ndarray) -> np.ndarray:
        """Append one interval's frame; return the stacked observation (oldest first)."""
        h = self._hist
        if self.history > 1:
            h[:, :-1] = h[:, 1:]
        h[:, -1] = frame
        return self.observation()

    def observation(self) -> np.ndarray:
        """The stacked history, shape (ports, history x features): a new array every call."""
        return self._hist.reshape(len(self.ports), -1).copy()


def _low_span(low: float, high: float) -> tuple[float, float]:
    return float(low), float(high) - float(low)


#: The features the C++ PortFeatureKernel computes: (its ColumnOp, telemetry key of x, key of y);
#: kmin / kmax / pmax are columns it keeps (refresh_ecn_columns writes them when the setting changes).
_KERNEL_OPS = {"queue": ("SCALE_MIN", "mean_queue_bytes", None), "max_queue": ("SCALE_MIN", "max_queue_bytes", None),
               "utilization": ("SCALE_MIN", "utilization", None),
               "marked_rate": ("RATIO_MIN", "ecn_marked_packets", None),  # (over count_key)
               "paused_fraction": ("SCALE_MIN", "paused_ns", None), "flows": ("SATURATE", "distinct_flows", None),
               "kmin": ("KEEP", None, None), "kmax": ("KEEP", None, None), "pmax": ("KEEP", None, None)}

#: Telemetry array each feature reads (beyond those every env reads).
_FEATURE_KEY = {"max_queue": "max_queue_bytes", "flows": "distinct_flows"}
#: How a policy feature is mapped into [0, 1], by its C++ declaration's normaliser kind
#: (``AqmTelemetryInfo::normaliser``): f(builder, x, telemetry, argument).
_NORMALISERS = {
    # a count over the packets it could have counted (marks over the data packets enqueued / sent)
    "share": lambda fb, x, pt, key: np.minimum(x / np.maximum(pt[key], 1.0), 1.0),
    "saturate": lambda fb, x, pt, scale: x / (x + fb._scale(scale)),
    "fraction_of": lambda fb, x, pt, scale: np.minimum(x / fb._scale(scale), 1.0),
    # a time as the bytes the port sends in it, on the queue features' mapping
    "queue_time": lambda fb, x, pt, _: fb.map_queue(x * fb._bytes_per_ns),
    "flag": lambda fb, x, pt, _: np.minimum(x, 1.0),  # the 0 / 1 states
}


def _split_normaliser(text: str) -> tuple[str, str]:
    """``"share:tx_data_packets"`` -> ``("share", "tx_data_packets")``, checked against :data:`_NORMALISERS`."""
    kind, _, arg = text.partition(":")
    if kind not in _NORMALISERS:
        raise RuntimeError(f"a policy declares the unknown telemetry normaliser {text!r}; known: {list(_NORMALISERS)}")
    return kind, arg
