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
(:data:`NORMALISER_KINDS`): ``share:<key>`` min(x / max(y, 1), 1) with y the port's telemetry
``<key>``; ``saturate:<scale>`` x / (x + scale); ``fraction_of:<scale>`` min(x / scale, 1);
``queue_time`` a time as the bytes the port sends in it, on the queue mapping; ``flag`` min(x, 1). The
[AQM policy reference](../aqm-policies.md) lists every policy's.

| feature | meaning |
|---|---|
| aqm.<parameter> | a tuned parameter's value v: (v − low) / (high − low), action range or templates' span, in [0, 1] |

Every feature has one definition: the C++ ``PortFeatureKernel``
(``envs/kernel/port-feature-kernel.h``). :class:`FeatureBuilder` checks the observation config
and compiles it into the kernel's feature columns, which :class:`~ecngym.envs.step_kernel.StepKernel`
runs every step. The tests hold a NumPy transcription of the same arithmetic
(``tests/envs/reference_step.py``) and compare whole episodes with it to the bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ecngym.envs.config import AQM_PARAM_FEATURE, FEATURES, ObservationConfig, aqm_features, number
from ecngym.error import ConfigError, check_range
from ecngym.sim_backend.aqm import telemetry_specs
from ecngym.units import parse_bytes

FEATURE_HIGH = {"utilization": 2.0}
#: The marking-curve features: each reads the controlled ports' RED curve (``Fabric.get_red``, and
#: the action's values of the policy's curve, ``PortAqmPolicy::DescribeMarkingCurve``); refused on
#: ports whose policy declares no curve.
CURVE_FEATURES = ("kmin", "kmax", "pmax")

#: How a policy feature is mapped into [0, 1], by its C++ declaration's normaliser kind
#: (``AqmTelemetryInfo::normaliser``): ``share`` (a count over the packets it could have counted),
#: ``saturate``, ``fraction_of``, ``queue_time`` (a time as the bytes the port sends in it, on the
#: queue features' mapping), ``flag`` (the 0 / 1 states).
NORMALISER_KINDS = ("share", "saturate", "fraction_of", "queue_time", "flag")


class FeatureBuilder:
    """The observation of the controlled ports: its config checked, its bounds, and its program.

    The features are computed by the C++ ``PortFeatureKernel`` (:class:`~ecngym.envs.step_kernel.StepKernel`)
    from :meth:`kernel_program`, into this builder's frame and history buffers; every feature is
    built inside its bounds (``low`` / ``high``), so no clipping is needed.

    Args:
        cfg: Observation configuration.
        ports: Controlled port ids.
        bdp_bytes: Bandwidth-delay product of each controlled port (for the step mapping).
        kmax_bound_bytes: Normaliser of kmin / kmax features.
        mark_at_dequeue: Whether marking is decided at dequeue (sets marked_rate's denominator).
        port_rates_bps: Line rate of each controlled port (the ``queue_time`` normaliser; default 1 bps).
        policy_setting: The controlled ports' policy setting (internal units): a normaliser's
            scale that names one of its parameters is its value there (R-AQM's
            ``viq_capacity_packets``).
        aqm_param_bounds: Each tuned policy parameter's (low, high), in the order of the
            setting's columns (the ``aqm.<parameter>`` features).

    Raises:
        ConfigError: On an unknown feature or a bad mapping.
    """

    def __init__(self, cfg: ObservationConfig, ports: np.ndarray, bdp_bytes: np.ndarray,
                 kmax_bound_bytes: float, mark_at_dequeue: bool, port_rates_bps: np.ndarray | None = None,
                 policy_setting: dict[str, Any] | None = None,
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
        #: ACC's step mapping (LAECN §III-B): each port's breakpoints in bytes (its BDP times
        #: ``step_breakpoints_bdp``) and the levels, one more than the breakpoints (the last 0)
        self.breakpoints = np.outer(bdp_bytes, np.asarray(cfg.step_breakpoints_bdp, dtype=np.float64))
        self.step_levels = np.append(np.asarray(cfg.step_values, dtype=np.float64), 0.0)
        self.kmax_bound = max(kmax_bound_bytes, 1.0)
        self.count_key = "tx_data_packets" if mark_at_dequeue else "enqueued_data_packets"
        self.n_features = len(cfg.features)
        self.low = np.zeros((len(ports), self.history * self.n_features), dtype=np.float32)
        per_feature_high = np.array([FEATURE_HIGH.get(f, 1.0) for f in cfg.features], dtype=np.float32)
        self.high = np.tile(per_feature_high, (len(ports), self.history))
        specs = telemetry_specs()
        #: each policy feature's normaliser: (kind, argument), from its C++ declaration
        self.normalisers = {f: _split_normaliser(specs[f].normaliser) for f in cfg.features if f in specs}
        rates = np.ones(len(ports)) if port_rates_bps is None else np.asarray(port_rates_bps, dtype=np.float64)
        self._bytes_per_ns = rates / 8e9
        self._policy_setting = dict(policy_setting or {})
        self._param_bounds = bounds
        # history ring: (ports, history, features), oldest first; the kernel writes both buffers
        self._hist = np.zeros((len(ports), self.history, self.n_features), dtype=np.float32)
        self._frame = np.zeros((len(ports), self.n_features), dtype=np.float64)

    def kernel_program(self, layout: dict[str, tuple[int, str]]) -> dict[str, Any]:
        """The features as a program of the C++ ``PortFeatureKernel`` (:class:`~ecngym.envs.step_kernel.StepKernel`).

        Args:
            layout: :func:`ecngym.sim_backend.fabric.telemetry_layout`.

        Returns:
            ``columns``: one ``FeatureColumn`` per feature; ``history``; ``frame`` and ``hist``: the
            buffers the kernel writes; ``policy_keys``: the per-policy telemetry arrays the
            columns read (``'p'`` operands, in this order); ``setting``: what each column of the
            setting (``'s'`` operands) holds, ``("red", key)`` or ``("aqm", j)`` (:meth:`setting`).
        """
        from ecngym.sim_backend._fabric import ColumnOp, FeatureColumn

        policy_keys: list[str] = []
        setting: list[tuple[str, Any]] = []

        def operand(key: str) -> dict[str, Any]:
            if key in layout:  # a row of the block
                return {"row_a": layout[key][0], "kind_a": layout[key][1]}
            if key not in policy_keys:
                policy_keys.append(key)
            return {"row_a": policy_keys.index(key), "kind_a": "p"}

        def of_setting(source: tuple[str, Any]) -> dict[str, Any]:
            if source not in setting:
                setting.append(source)
            return {"row_a": setting.index(source), "kind_a": "s"}

        linear = self.cfg.queue_mapping == "linear"
        names = list(self._param_bounds)
        columns = []
        for name in self.cfg.features:
            if name in ("queue", "max_queue"):
                a = operand("mean_queue_bytes" if name == "queue" else "max_queue_bytes")
                column = (FeatureColumn(ColumnOp.SCALE_MIN, **a, scale=1.0 / self.queue_scale) if linear
                          else FeatureColumn(ColumnOp.STEP_MAP, **a))
            elif name == "utilization":  # (x * 1.0 is x)
                column = FeatureColumn(ColumnOp.SCALE_MIN, **operand("utilization"), cap=FEATURE_HIGH["utilization"])
            elif name == "marked_rate":
                b = operand(self.count_key)
                column = FeatureColumn(ColumnOp.RATIO_MIN, **operand("ecn_marked_packets"), row_b=b["row_a"],
                                       kind_b=b["kind_a"])
            elif name == "paused_fraction":
                column = FeatureColumn(ColumnOp.SCALE_MIN, **operand("paused_ns"), scale_by_span=True)
            elif name == "flows":
                column = FeatureColumn(ColumnOp.SATURATE, **operand("distinct_flows"), scale=float(self.cfg.flow_scale))
            elif name in ("kmin", "kmax"):
                column = FeatureColumn(ColumnOp.DIV_MIN, **of_setting(("red", f"{name}_bytes")), scale=self.kmax_bound)
            elif name == "pmax":
                column = FeatureColumn(ColumnOp.COPY, **of_setting(("red", "pmax")))
            elif name.startswith(AQM_PARAM_FEATURE):  # clipped: a configured value may lie outside the range
                parameter = name.removeprefix(AQM_PARAM_FEATURE)
                low, high = (float(v) for v in self._param_bounds[parameter])
                span = high - low
                column = (FeatureColumn(ColumnOp.UNIT, **of_setting(("aqm", names.index(parameter))), offset=low,
                                        scale=span) if span > 0 else FeatureColumn(ColumnOp.ZERO))
            else:
                column = self._policy_column(name, operand, linear)
            columns.append(column)
        return {"columns": columns, "history": self.history, "frame": self._frame, "hist": self._hist,
                "policy_keys": tuple(policy_keys), "setting": tuple(setting)}

    def step_mapping(self) -> dict[str, Any]:
        """ACC's step mapping as the kernel takes it: ``breakpoints``, ``levels``, ``shared_breakpoints``.

        One row of breakpoints when every port has the same (one search), else one row per port.
        """
        shared = len(self.breakpoints) > 0 and bool(np.all(self.breakpoints == self.breakpoints[0]))
        breakpoints = self.breakpoints[0] if shared else self.breakpoints
        return {"breakpoints": [float(b) for b in breakpoints.reshape(-1)],
                "levels": [float(v) for v in self.step_levels], "shared_breakpoints": shared}

    def _policy_column(self, name: str, operand: Any, linear: bool) -> Any:
        """A policy-telemetry feature's column, by its declared normaliser (NaN reads 0)."""
        from ecngym.sim_backend._fabric import ColumnOp, FeatureColumn

        kind, arg = self.normalisers[name]
        x = {**operand(name), "finite_a": True}
        if kind == "share":
            y = operand(arg)
            return FeatureColumn(ColumnOp.RATIO_MIN, **x, row_b=y["row_a"], kind_b=y["kind_a"])
        if kind == "saturate":
            return FeatureColumn(ColumnOp.SATURATE, **x, scale=self._scale(arg))
        if kind == "fraction_of":
            return FeatureColumn(ColumnOp.DIV_MIN, **x, scale=self._scale(arg))
        if kind == "queue_time":  # the bytes the port sends in that time, on the queue mapping
            per_port = [float(b) for b in self._bytes_per_ns]
            return (FeatureColumn(ColumnOp.DIV_MIN, **x, scale=self.queue_scale, port_scale=per_port) if linear
                    else FeatureColumn(ColumnOp.STEP_MAP, **x, port_scale=per_port))
        return FeatureColumn(ColumnOp.SCALE_MIN, **x)  # flag: min(x, 1)

    def setting(self, sources: tuple[tuple[str, Any], ...], red: dict[str, np.ndarray],
                aqm_values: np.ndarray | None) -> np.ndarray:
        """The controlled ports' setting as the kernel's ``'s'`` operands read it.

        Args:
            sources: The program's ``setting`` (:meth:`kernel_program`).
            red: Current ``kmin_bytes``, ``kmax_bytes``, ``pmax`` of the controlled ports.
            aqm_values: Current values of the tuned policy parameters, (ports, parameters) in
                the order of ``aqm_param_bounds``.

        Returns:
            (ports, len(sources)) float64.
        """
        out = np.empty((len(self.ports), len(sources)))
        for j, (source, key) in enumerate(sources):
            out[:, j] = red[key] if source == "red" else aqm_values[:, key]
        return out

    def _scale(self, arg: str) -> float:
        """A normaliser's scale: ``flow_scale``, a parameter of the policy's setting by name, or a number."""
        if arg == "flow_scale":
            return float(self.cfg.flow_scale)
        if arg in self._policy_setting:
            return float(self._policy_setting[arg])
        return float(arg)

    def observation(self) -> np.ndarray:
        """The stacked history, shape (ports, history x features): a new array every call."""
        return self._hist.reshape(len(self.ports), -1).copy()


def _split_normaliser(text: str) -> tuple[str, str]:
    """``"share:tx_data_packets"`` -> ``("share", "tx_data_packets")``, checked against :data:`NORMALISER_KINDS`."""
    kind, _, arg = text.partition(":")
    if kind not in NORMALISER_KINDS:
        raise RuntimeError(f"a policy declares the unknown telemetry normaliser {text!r}; known: "
                           f"{list(NORMALISER_KINDS)}")
    return kind, arg
