"""ByteTuning: online watermark tuning of ECN and PFC by simulated annealing.

ByteTuning §5.3–5.4; docs: algorithms/bytetuning.md §3.

Tan et al., "ByteTuning: Watermark Tuning for RoCEv2" (IEEE TCC). The tuner pushes a watermark
vector to the switches, waits one telemetry period, scores the period with the objective of
Eq. 14 and moves on, on the live network. Here the live network is the running fabric: one
*measurement* is ``settle_steps`` env steps to let the new setting take hold plus
``window_steps`` steps whose telemetry is scored.

**The tuned vector** (§1.2): x = (Kmin, Kmax, Pmax, headroom, α) per switch layer (§1.4 rule (c):
one watermark for all ports of all switches of a layer) or, with ``per_switch``, per switch
(the uncompressed space). PFC knobs are tuned only on ``pfc_layers`` (industry practice, §1.4:
the spine runs without PFC, so its vector is ECN only).

**Objective** (Eq. 14, §3.1), maximised::

    f = Σ_switches [ β · T_now / T_max + (1 − β) · (Q_min + 1) / (Q_now + 1) ]

T_now = data throughput of the switch's controlled ports over the window (bit/s); Q_now = the
switch's queue over the window (time-averaged bytes summed over its controlled ports, in cells of
``queue_unit_bytes`` = 256 B, the paper's unit), with +1 against Q = 0 ([ours], §3.1). T_max and
Q_min are the historical best values, updated by every measurement (so the normaliser moves, which
is why Algorithm 1 re-measures the incumbent every iteration). ``objective_switches`` picks the
switches summed: all, or only receiver-side ones (§1.4 rule (b) [ours]: the switches whose
host-facing ports carried at least 10 % of the busiest switch's host-bound data in the first
window). With ``all``, nearly idle switches add terms that flip between 1 and ~0.5 on a cell of
queue, which drowns the signal of the congested one on a leaf-spine.

**Fairness objective** (Eq. 15, ``objective: eq15``), for fairness-sensitive traffic::

    f = Σ_flows [ β · T_now(i) / T_max(i) + (1 − β) · (Q_min + 1) / (Q_now + 1) ]
        / ( γ · Σ_flows (T_now(i) − mean T_now)² + ε )

The printed denominator, γ · Σ [T_now(flow_i) − T_now(flow_i)]², is identically 0; the spec reads
it as the variance of the flows' throughput (§3.1 [ours]), in Gbps², with ε (``fairness_epsilon``,
Gbps²) against a zero denominator and γ = ``fairness_gamma`` (never given). A "flow" is a sending
host (its NIC port's data rate; in the long-flow scenarios one flow per sender) [ours]: switch
telemetry has no per-flow rates. The queue of a flow is the queue of the objective's switches
(all flows share the receiver-side queue) [ours].

**Only switches on the traffic path** (§1.4 rule (a), ``path_only``): after the first measurement
the switches whose controlled ports carried no data are left at the start vector and out of the
search and of the objective; with ``per_switch`` this drops their coordinates.

**Search** (``variant``):

* ``"sa"`` — Algorithm 1 (§3.2): for each temperature, ``iterations`` times: re-measure x,
  measure x' = perturb(x, s); if f(x') ≥ f(x) accept and halve s, else double s and accept with
  the Metropolis rule exp((f(x') − f(x)) / (tem · temperature_scale)) > U(0, 1); then
  tem ← tem · cooling, until tem ≤ final_temperature. The step s stays in [step_min, step_max]
  ([ours], §3.2). perturb ([ours]): ``coords_per_move`` random coordinates are multiplied by
  (1 ± s) with a random sign; a move that would leave its bound is skipped (as the public tuner
  does), Kmax < Kmin after a move resets the pair to the start values (public tuner).
* ``"greedy"`` — the public tuner's pattern search (§3.2 [repo]): each round re-measures x, then
  probes every coordinate j at x_j·(1 + s) and x_j·(1 − s) (each probe also moving
  ``probe_others`` random other coordinates the same way), and moves to the best probe only if it
  beats x; s doubles after a round without improvement (back to ``step`` above 1) and halves
  after one with (back to ``step`` below 0.01). Its stop rule is ``max_rounds``.

**Temperature scale.** The paper's constants (tem = 100 → 0.01, C = 0.99, I = 10: 9170 iterations)
with f ∈ [0, 2n] accept almost every worse move for the first ~500 coolings (§3.2 caveat). Every
constant is a parameter; ``temperature_scale`` multiplies tem in the Metropolis exponent (1 =
the paper literally). ``configs/controller/bytetuning.yaml`` uses a compressed schedule that fits
a simulated episode and says so.

When the schedule ends the tuner holds the best vector measured (x_best) and keeps measuring it.
Every measurement is one record in :attr:`log` (vector, T, Q, f, temperature, s, accepted).
"""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping, Sequence
from typing import Any

import numpy as np

from ecngym.baselines import params
from ecngym.baselines.static import STATIC_SETTINGS
from ecngym.envs.view import EnvView
from ecngym.error import ConfigError
from ecngym.sim_backend.knobs import pfc_alpha_bounds
from ecngym.units import parse_bytes
from ecngym.validation import Bytes, Real, Text, check

#: The knobs of one layer's vector, in order (§1.2).
KNOBS = ("kmin_bytes", "kmax_bytes", "pmax", "headroom_bytes", "alpha")
ECN_KNOBS = KNOBS[:3]

#: Default bounds ([ours]: inside the fabric's limits; the public tuner caps Kmax at 3000-4000 cells
#: = 0.77-1 MB, Pmax at 100 %, headroom at 1000 cells = 256 KB).
DEFAULT_BOUNDS: dict[str, list[Any]] = {"kmin_bytes": ["1KB", "1MB"], "kmax_bytes": ["2KB", "2MB"],
                                        "pmax": [0.01, 1.0], "headroom_bytes": ["10KB", "512KB"],
                                        "alpha": [1 / 64, 16.0]}

Vector = dict[str, dict[str, float]]  # unit (layer or switch) -> knob -> value
Search = Generator[Vector, float, None]
Measurement = tuple[np.ndarray, np.ndarray, "np.ndarray | None"]  # (T per switch, Q per switch, flow Gbps)


class ByteTuningController:
    """ByteTuning (§5.3–5.4; docs: algorithms/bytetuning.md §3): SA or greedy search over ECN + PFC watermarks, online.

    Args:
        variant: ``"sa"`` (Algorithm 1), ``"greedy"`` (the public tuner's pattern search) or
            ``"hold"`` (no search: apply and measure the start vector, e.g. a ``best_vector``).
        beta: β of Eq. 14, throughput weight in [0, 1] (paper: 0.5).
        window_steps: Env steps of telemetry scored per measurement (≥ 1).
        settle_steps: Env steps after a change before the window starts (≥ 0).
        iterations: I, inner iterations per temperature (paper: 10).
        initial_temperature: tem (paper: 100).
        final_temperature: tem_goal (paper: 0.01).
        cooling: C in (0, 1) (paper: 0.99).
        temperature_scale: Metropolis uses exp(Δf / (tem · temperature_scale)) (1 = paper).
        step: s, the relative step of a move (paper: 0.5; the public tuner's s0 = 0.2).
        step_min: Lower bound of s ([ours]: 0.01).
        step_max: Upper bound of s ([ours]: 1).
        coords_per_move: Coordinates a SA move changes (≥ 1).
        probe_others: Greedy: other coordinates each probe also moves (public tuner: 1).
        max_rounds: Greedy: rounds before it stops and holds x_best.
        start: The start vector's ECN part: a static setting name (``"dcqcn"`` ...), ``"env_default"``
            (the fabric preset's) or ``[kmin, kmax, pmax]``; or a whole vector ``{unit: {knob: value}}``
            (what :attr:`best_vector` returns).
        start_pfc: ``{"alpha": ..., "headroom": ...}`` to start from, or ``None`` (the preset's).
        tune: Knobs under search, a subset of ``kmin_bytes, kmax_bytes, pmax, headroom_bytes, alpha``.
        pfc_layers: List of the layers whose PFC knobs are tuned, each a layer of the env's controlled
            ports (checked at reset); ``None`` = every layer but ``spine`` (§1.4).
        per_switch: One vector per switch instead of per layer (no compression rule (c)).
        objective_switches: ``"all"`` or ``"receiver_side"`` (§1.4 rule (b)).
        objective: ``"eq14"`` (throughput / latency, the paper's runs) or ``"eq15"`` (fairness).
        fairness_gamma: γ of Eq. 15 (> 0; not given by the paper).
        fairness_epsilon: ε of Eq. 15's denominator, Gbps² (> 0) [ours].
        path_only: Tune only the switches on the traffic path (§1.4 rule (a)).
        queue_unit_bytes: Q is counted in these units (paper: 256 B cells).
        bounds: Per-knob ``[low, high]`` (bytes may be size strings); missing knobs use the defaults.
        best_by: How x_best is chosen: ``"single"`` (Algorithm 1: the best single measurement) or
            ``"mean"`` ([ours], default: the vector with the best mean score over its measurements,
            among those measured at least twice; a single lucky window is the winner's curse of a
            noisy network).
        seed: Seed of the moves and of the Metropolis draws.
        name: Name in tables.

    Raises:
        ConfigError: On any bad parameter, naming ``controller.<field>``.
    """

    def __init__(self, variant: str = "sa", beta: float = 0.5, window_steps: int = 4, settle_steps: int = 1,
                 iterations: int = 10, initial_temperature: float = 100.0, final_temperature: float = 0.01,
                 cooling: float = 0.99, temperature_scale: float = 1.0, step: float = 0.5, step_min: float = 0.01,
                 step_max: float = 1.0, coords_per_move: int = 2, probe_others: int = 1, max_rounds: int = 100,
                 start: str | list[Any] = "dcqcn", start_pfc: dict[str, Any] | None = None,
                 tune: Sequence[str] = KNOBS, pfc_layers: Sequence[str] | None = None, per_switch: bool = False,
                 objective_switches: str = "all", objective: str = "eq14", fairness_gamma: float = 1.0,
                 fairness_epsilon: float = 1.0, path_only: bool = False, queue_unit_bytes: int = 256,
                 bounds: dict[str, Any] | None = None, best_by: str = "mean", seed: int = 0,
                 name: str | None = None) -> None:
        self.variant = params.choice("variant", variant, ("sa", "greedy", "hold"))
        self.beta = params.real("beta", beta, 0, 1)
        self.window_steps = params.whole("window_steps", window_steps, 1)
        self.settle_steps = params.whole("settle_steps", settle_steps, 0)
        self.iterations = params.whole("iterations", iterations, 1)
        self.initial_temperature = params.real("initial_temperature", initial_temperature, 0, low_inclusive=False)
        self.final_temperature = params.real("final_temperature", final_temperature, 0, self.initial_temperature,
                                             low_inclusive=False)
        self.cooling = params.real("cooling", cooling, 0, 1, low_inclusive=False, high_inclusive=False)
        self.temperature_scale = params.real("temperature_scale", temperature_scale, 0, low_inclusive=False)
        self.step_min = params.real("step_min", step_min, 0, 1, low_inclusive=False)
        self.step_max = params.real("step_max", step_max, self.step_min, 1)
        self.step = params.real("step", step, self.step_min, self.step_max)
        self.coords_per_move = params.whole("coords_per_move", coords_per_move, 1)
        self.probe_others = params.whole("probe_others", probe_others, 0)
        self.max_rounds = params.whole("max_rounds", max_rounds, 1)
        self.start = self._start(start)
        self.start_pfc = self._start_pfc(start_pfc)
        if (isinstance(tune, str) or not isinstance(tune, Sequence) or not tune
                or any(not isinstance(k, str) or k not in KNOBS for k in tune)):
            raise ConfigError("controller.tune", f"got {tune!r}; a non-empty subset of {list(KNOBS)}")
        self.tune = tuple(k for k in KNOBS if k in tune)
        self.pfc_layers = check("controller.pfc_layers", pfc_layers, list[Text] | None)
        self.per_switch = params.flag("per_switch", per_switch)
        self.objective_switches = params.choice("objective_switches", objective_switches, ("all", "receiver_side"))
        self.objective = params.choice("objective", objective, ("eq14", "eq15"))
        self.fairness_gamma = params.real("fairness_gamma", fairness_gamma, 0, low_inclusive=False)
        self.fairness_epsilon = params.real("fairness_epsilon", fairness_epsilon, 0, low_inclusive=False)
        self.path_only = params.flag("path_only", path_only)
        self.queue_unit_bytes = params.whole("queue_unit_bytes", queue_unit_bytes, 1)
        if bounds is not None and not isinstance(bounds, Mapping):  # only None means no bounds (not 0 or '')
            raise ConfigError("controller.bounds", f"expected a mapping of knob -> [low, high], got {bounds!r}")
        self.bounds = self._bounds(bounds or {})
        self.best_by = params.choice("best_by", best_by, ("single", "mean"))
        self.seed = params.whole("seed", seed, 0)
        self.name = name or {"sa": "bytetuning", "greedy": "bytetuning_greedy", "hold": "bytetuning_hold"}[variant]
        self.interval_steps = 1
        self.log: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ parameters
    @staticmethod
    def _knob(field: str, knob: str, value: Any) -> float:
        """One knob value: a size for the ``*_bytes`` knobs ("10KB" or bytes), else a number in its range.

        Raises:
            ConfigError: Naming ``field``.
        """
        kind = Bytes() if knob.endswith("_bytes") else Real(0, 1) if knob == "pmax" else Real(0, 64, low_open=True)
        return float(check(field, value, kind))

    @classmethod
    def _start(cls, start: Any) -> str | list[float] | dict[str, dict[str, float]]:
        """The start vector's config, values parsed (a vector's units are checked against the env at reset).

        A setting name stays as it is; ``[kmin, kmax, pmax]`` and ``{unit: {knob: value}}`` get their sizes
        in bytes and their numbers range-checked.

        Raises:
            ConfigError: Naming ``controller.start`` (or the bad entry in it).
        """
        if isinstance(start, str):
            return params.choice("start", start, [*STATIC_SETTINGS, "env_default"])
        if isinstance(start, dict):
            vector = {}
            for unit, knobs in start.items():
                if not isinstance(knobs, dict) or set(knobs) - set(KNOBS):
                    raise ConfigError(f"controller.start.{unit}", f"expected a mapping of {list(KNOBS)}, got {knobs!r}")
                vector[unit] = {k: cls._knob(f"controller.start.{unit}.{k}", k, v) for k, v in knobs.items()}
            return vector
        if isinstance(start, Sequence) and len(start) == 3:
            return [cls._knob(f"controller.start[{i}]", k, v)
                    for i, (k, v) in enumerate(zip(ECN_KNOBS, start, strict=True))]
        raise ConfigError("controller.start", f"expected a static setting name, [kmin, kmax, pmax] or "
                                              f"{{unit: {{knob: value}}}} (a best_vector), got {start!r}")

    @staticmethod
    def _start_pfc(start_pfc: dict[str, Any] | None) -> dict[str, float] | None:
        if start_pfc is None:
            return None
        if not isinstance(start_pfc, dict) or set(start_pfc) - {"alpha", "headroom"}:
            raise ConfigError("controller.start_pfc", f"expected {{alpha, headroom}}, got {start_pfc!r}")
        out = {}
        if "alpha" in start_pfc:
            low, high, low_open = pfc_alpha_bounds()
            out["alpha"] = params.real("start_pfc.alpha", start_pfc["alpha"], low, high, low_inclusive=not low_open)
        if "headroom" in start_pfc:
            out["headroom_bytes"] = float(parse_bytes(start_pfc["headroom"], "controller.start_pfc.headroom"))
        return out

    @staticmethod
    def _bounds(given: dict[str, Any]) -> dict[str, tuple[float, float]]:
        unknown = sorted(set(given) - set(KNOBS))
        if unknown:
            raise ConfigError(f"controller.bounds.{unknown[0]}", f"unknown knob; knobs are {list(KNOBS)}")
        out = {}
        for knob in KNOBS:
            pair = given.get(knob, DEFAULT_BOUNDS[knob])
            field = f"controller.bounds.{knob}"
            if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
                raise ConfigError(field, f"expected [low, high], got {pair!r}")
            if knob.endswith("_bytes"):
                lo, hi = float(parse_bytes(pair[0], field)), float(parse_bytes(pair[1], field))
            else:
                hi_lim = 1.0 if knob == "pmax" else pfc_alpha_bounds()[1]
                lo, hi = params.interval(f"bounds.{knob}", pair, 0, hi_lim)
                if lo <= 0:
                    raise ConfigError(field, f"low must be > 0 (a multiplicative step cannot leave 0), got {lo}")
            if lo > hi or (knob.endswith("_bytes") and lo < 1):
                raise ConfigError(field, f"expected 1 <= low <= high, got [{lo}, {hi}]")
            out[knob] = (lo, hi)
        return out

    def env_overrides(self, env: Any) -> dict[str, Any]:
        """A continuous per-port action space whose ranges cover the search bounds (traces unchanged)."""
        b = self.bounds
        return {"action": {"type": "continuous", "scope": "port", "scale_with_rate": False,
                           "ranges": {"kmin_bytes": [int(b["kmin_bytes"][0]), int(b["kmin_bytes"][1])],
                                      "kmax_bytes": {"relative_to": "kmin_bytes",
                                                     "offset": [0, int(b["kmax_bytes"][1])]},
                                      "pmax": [b["pmax"][0], b["pmax"][1]]},
                           "layers": None, "ports": None}}

    # ------------------------------------------------------------------ episode
    def reset(self, env: Any) -> None:
        """Start a new search from the start vector on ``env``'s fabric."""
        self.view = view = EnvView(env)
        view.require_per_port_continuous("ByteTuning")
        self.rng = np.random.default_rng(self.seed)
        if self.per_switch:
            self.units = [f"switch{s}" for s in np.unique(view.port_switches)]
            self.unit_ports = [view.port_switches == int(u[6:]) for u in self.units]
            self.unit_switches = [np.array([int(u[6:])]) for u in self.units]
            unit_layer = [str(view.port_layers[m][0]) for m in self.unit_ports]
        else:
            self.units = sorted(set(view.port_layers))
            self.unit_ports = [view.port_layers == u for u in self.units]
            self.unit_switches = [np.unique(view.port_switches[m]) for m in self.unit_ports]
            unit_layer = list(self.units)
        layers = sorted({str(x) for x in view.port_layers})
        unknown = sorted(set(self.pfc_layers or []) - set(layers))
        if unknown:
            raise ConfigError("controller.pfc_layers", f"unknown {unknown}; this env's controlled ports are on "
                                                       f"layers {layers}")
        pfc_layers = self.pfc_layers if self.pfc_layers is not None else [x for x in layers if x != "spine"]
        self.unit_has_pfc = [layer in pfc_layers for layer in unit_layer]
        # the search coordinates: (unit, knob) for the tuned knobs (PFC knobs only where PFC is tuned)
        self.coords = [(u, k) for u, has_pfc in zip(self.units, self.unit_has_pfc, strict=True)
                       for k in self.tune if k in ECN_KNOBS or has_pfc]
        if not self.coords:
            raise ConfigError("controller.tune", f"{list(self.tune)} leaves nothing to tune on layers "
                                                 f"{self.units} (PFC is tuned on {pfc_layers})")
        self.x0 = self._start_vector()
        self._unit_ports_all = list(self.unit_ports)
        self.path_switches: np.ndarray | None = None
        self.flow_t_max = np.zeros(0)
        # receiver_side: chosen from the first window's traffic (see _objective)
        self.switch_ids = np.unique(view.port_switches) if self.objective_switches == "all" else None
        self.t_max = self.q_min = np.zeros(0)
        self.log = []
        searches = {"sa": self._sa, "greedy": self._greedy, "hold": self._hold}
        self._search: Search = searches[self.variant]()
        self._record: dict[str, Any] = {}
        self._current: Vector = {}
        self.best = self.x0
        self._history: dict[tuple[float, ...], tuple[Vector, list[Measurement]]] = {}
        self._best_tq: Measurement | None = None
        self._apply(next(self._search))

    def _start_vector(self) -> Vector:
        view = self.view
        rate = float(view.port_rates_bps.min())
        if isinstance(self.start, dict):
            s = view.static_setting
            kmin, kmax, pmax = s.kmin_bytes, s.kmax_bytes, s.pmax
        elif self.start == "env_default":
            s = view.static_setting
            kmin, kmax, pmax = s.kmin_bytes, s.kmax_bytes, s.pmax
        elif isinstance(self.start, str):
            kmin, kmax, pmax = STATIC_SETTINGS[self.start].at_rate(rate)
        else:
            kmin, kmax, pmax = self.start
        pfc = view.pfc
        x: Vector = {}
        for u, ports, switches in zip(self.units, self.unit_ports, self.unit_switches, strict=True):
            del ports
            alpha = (self.start_pfc or {}).get("alpha", float(pfc["alpha"][switches[0]]))
            head = (self.start_pfc or {}).get("headroom_bytes", float(pfc["headroom_bytes"][switches[0]]))
            x[u] = {"kmin_bytes": float(kmin), "kmax_bytes": float(kmax), "pmax": float(pmax),
                    "headroom_bytes": head, "alpha": alpha}
            if isinstance(self.start, dict):
                if u not in self.start:
                    raise ConfigError("controller.start", f"a vector for {u!r} is missing; units are {self.units}")
                x[u].update(self.start[u])
        if isinstance(self.start, dict) and set(self.start) - set(self.units):
            extra = sorted(set(self.start) - set(self.units))
            raise ConfigError(f"controller.start.{extra[0]}", f"unknown unit; units are {self.units}")
        for u, k in self.coords:
            lo, hi = self.bounds[k]
            if not lo <= x[u][k] <= hi:
                # ECN bounds are also the action's range (env_overrides), so only a PFC knob can stay untuned
                how = ("or set controller.start" if k in ECN_KNOBS
                       else f"set controller.start_pfc or leave {k} out of controller.tune")
                raise ConfigError(f"controller.bounds.{k}", f"the start value {x[u][k]:g} of {u} lies outside "
                                                            f"[{lo:g}, {hi:g}]; widen the bounds, {how}")
        return x

    def _apply(self, x: Vector) -> None:
        """Push vector ``x``: ECN through the action, PFC through the view (only what changed).

        Ports left out of the search (``path_only``) keep the start vector.
        """
        view = self.view
        kmin, kmax, pmax = (np.empty(len(view.ports)) for _ in range(3))
        for u, ports in zip(self.units, self._unit_ports_all, strict=True):
            kmin[ports], kmax[ports], pmax[ports] = (self.x0[u][k] for k in ECN_KNOBS)
        for u, ports, switches, has_pfc in zip(self.units, self.unit_ports, self.unit_switches, self.unit_has_pfc,
                                               strict=True):
            kmin[ports], kmax[ports], pmax[ports] = x[u]["kmin_bytes"], x[u]["kmax_bytes"], x[u]["pmax"]
            old = self._current.get(u)
            if has_pfc and len(switches) and (old is None or old["alpha"] != x[u]["alpha"]
                                              or old["headroom_bytes"] != x[u]["headroom_bytes"]):
                view.set_pfc(switches, x[u]["alpha"], x[u]["headroom_bytes"])
        self._action = view.encode(kmin, kmax, pmax)
        self._current = {u: dict(v) for u, v in x.items()}
        self._steps_in, self._tx, self._queue, self._host_tx = 0, [], [], []

    def _restrict_to_path(self, tx_bytes: np.ndarray) -> None:
        """§1.4 rule (a): drop the switches whose controlled ports carried no data from the search."""
        sw = self.view.port_switches
        on_path = np.unique(sw[tx_bytes > 0])
        self.unit_ports = [m & np.isin(sw, on_path) for m in self._unit_ports_all]
        self.unit_switches = [np.intersect1d(s, on_path) for s in self.unit_switches]
        active = {u for u, m in zip(self.units, self.unit_ports, strict=True) if m.any()}
        self.coords = [c for c in self.coords if c[0] in active] or self.coords
        self.path_switches = on_path

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """The action of the vector under measurement."""
        return self._action

    def observe(self, observation: np.ndarray, info: dict[str, Any]) -> None:
        """Collect the window's telemetry; at its end score it and move the search on."""
        self._steps_in += 1
        if self._steps_in <= self.settle_steps:
            return
        tel, ports = info["telemetry"], info["ports"]
        self._tx.append(tel["tx_data_bytes"][ports].astype(np.float64))
        self._host_tx.append(tel["tx_data_bytes"][self.view.host_ports].astype(np.float64))
        self._queue.append(tel["mean_queue_bytes"][ports].astype(np.float64))
        if len(self._tx) < self.window_steps:
            return
        tx_mean = np.mean(self._tx, axis=0)
        if self.path_only and self.path_switches is None:
            self._restrict_to_path(tx_mean)
        f, t_now, q_now = self._objective(tx_mean, np.mean(self._queue, axis=0), np.mean(self._host_tx, axis=0))
        self._last_tq = (t_now, q_now, getattr(self, "_last_flows", None) if self.objective == "eq15" else None)
        self._history.setdefault(self._key(self._current), (self._current, []))[1].append(self._last_tq)
        flows = self._last_tq[2]
        fair = {} if flows is None or not (flows > 0).any() else {"flow_gbps_std": float(np.std(flows[flows > 0]))}
        self.log.append({"time_ns": int(info["time_ns"]), **self._record, "f": f, **fair,
                         "throughput_gbps": float(t_now.sum() / 1e9), "queue_cells": float(q_now.sum()),
                         **{f"{u}.{k}": v for u, x in self._current.items() for k, v in x.items()
                            if (u, k) in self.coords}})
        self._apply(self._search.send(f))

    def _objective(self, tx_bytes: np.ndarray, queue_bytes: np.ndarray,
                   host_tx_bytes: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """Eq. 14 (or 15) over the objective's switches; updates the historical T_max / Q_min."""
        sw = self.view.port_switches
        if self.switch_ids is None:  # receiver side: host-facing ports carry >= 10 % of the busiest's data
            to_host = np.where(self.view.port_to_host, tx_bytes, 0.0)
            per_switch = np.array([to_host[sw == s].sum() for s in np.unique(sw)])
            busy = per_switch >= 0.1 * per_switch.max() if per_switch.max() > 0 else per_switch >= 0
            self.switch_ids = np.unique(sw)[busy]
        ids = self.switch_ids if self.path_switches is None else np.intersect1d(self.switch_ids, self.path_switches)
        if len(self.t_max) != len(ids):
            self.t_max, self.q_min = np.zeros(len(ids)), np.full(len(ids), np.inf)
        t_now = np.array([tx_bytes[sw == s].sum() * 8e9 / self.view.interval_ns for s in ids])
        q_now = np.array([queue_bytes[sw == s].sum() / self.queue_unit_bytes for s in ids])
        self.t_max = np.maximum(self.t_max, t_now)
        self.q_min = np.minimum(self.q_min, q_now)
        if self.objective == "eq15":
            flow_gbps = host_tx_bytes * 8 / self.view.interval_ns
            if len(self.flow_t_max) != len(flow_gbps):
                self.flow_t_max = np.zeros(len(flow_gbps))
            self.flow_t_max = np.maximum(self.flow_t_max, flow_gbps)
            self._last_flows = flow_gbps
        return self._score(t_now, q_now), t_now, q_now

    def _score(self, t_now: np.ndarray, q_now: np.ndarray, flows_gbps: np.ndarray | None = None) -> float:
        """Eq. 14 (or Eq. 15) of one measurement under the current historical normalisers."""
        q_term = (self.q_min + 1) / (q_now + 1)
        if self.objective == "eq14":
            t_term = np.divide(t_now, self.t_max, out=np.ones_like(t_now), where=self.t_max > 0)
            return float(np.sum(self.beta * t_term + (1 - self.beta) * q_term))
        flows = self._last_flows if flows_gbps is None else flows_gbps
        sending = self.flow_t_max > 0  # hosts that send at all ([ours]: the receiver is not a flow)
        t_flow = flows[sending] / self.flow_t_max[sending]
        numerator = np.sum(self.beta * t_flow + (1 - self.beta) * float(np.sum(q_term)))
        spread = float(np.sum((flows[sending] - flows[sending].mean()) ** 2)) if sending.any() else 0.0
        return float(numerator / (self.fairness_gamma * spread + self.fairness_epsilon))

    def _beats_best(self, tq: Measurement) -> bool:
        """Whether a measurement scores at least x_best's, both under today's normalisers ([ours]).

        The first measurement sets T_max and Q_min and so scores the maximum n; compared by the f
        it got then, nothing measured later could beat it.
        """
        if self._best_tq is None or self._score(*tq) >= self._score(*self._best_tq):
            self._best_tq = tq
            return True
        return False

    # ------------------------------------------------------------------ moves
    def _moved(self, x: Vector, coords: list[tuple[str, str]], signs: list[int], s: float) -> Vector:
        """Vector x with each coordinate times (1 + sign · s); out-of-bound moves skipped, Kmax < Kmin reset."""
        y = {u: dict(v) for u, v in x.items()}
        for (u, k), sign in zip(coords, signs, strict=True):
            value = x[u][k] * (1 + sign * s)
            value = float(round(value)) if k.endswith("_bytes") else round(value, 6)
            lo, hi = self.bounds[k]
            if lo <= value <= hi:
                y[u][k] = value
        for u in y:
            if y[u]["kmax_bytes"] < y[u]["kmin_bytes"]:  # the public tuner resets the pair
                y[u]["kmin_bytes"], y[u]["kmax_bytes"] = self.x0[u]["kmin_bytes"], self.x0[u]["kmax_bytes"]
        return y

    def _perturb(self, x: Vector, s: float) -> Vector:
        picks = self.rng.choice(len(self.coords), size=min(self.coords_per_move, len(self.coords)), replace=False)
        signs = [int(v) for v in self.rng.choice([-1, 1], size=len(picks))]
        return self._moved(x, [self.coords[i] for i in picks], signs, s)

    def _measure(self, x: Vector, **record: Any) -> Generator[Vector, float, float]:
        self._record = record
        f = yield x
        return f

    # ------------------------------------------------------------------ searches
    def _sa(self) -> Search:
        """Algorithm 1 (§3.2) as a generator: yields the vector to measure, receives its f."""
        x = self.x0
        fx = yield from self._measure(x, phase="start", temperature=self.initial_temperature, step=self.step)
        self._beats_best(self._last_tq)
        tem, s = self.initial_temperature, self.step
        while tem > self.final_temperature:
            for _ in range(self.iterations):
                fx = yield from self._measure(x, phase="incumbent", temperature=tem, step=s)
                cand = self._perturb(x, s)
                fc = yield from self._measure(cand, phase="candidate", temperature=tem, step=s)
                if fc - fx >= 0:
                    x, fx, verdict = cand, fc, "better"
                    s = max(s / 2, self.step_min)
                    if self._beats_best(self._last_tq):
                        self.best = cand
                else:
                    s = min(s * 2, self.step_max)
                    exponent = (fc - fx) / (tem * self.temperature_scale)
                    if math.exp(max(exponent, -700.0)) > self.rng.random():
                        x, fx, verdict = cand, fc, "worse_accepted"
                    else:
                        verdict = "rejected"
                self.log[-1]["verdict"] = verdict
            tem *= self.cooling
        yield from self._hold()

    def _greedy(self) -> Search:
        """The public tuner's pattern search (§3.2 [repo]) as a generator."""
        x, s = self.x0, self.step
        for round_ in range(self.max_rounds):
            fx = yield from self._measure(x, phase="incumbent", round=round_, step=s)
            if self._beats_best(self._last_tq):
                self.best = x
            probes = []
            for j, coord in enumerate(self.coords):
                others = [c for i, c in enumerate(self.coords) if i != j]
                for sign in (1, -1):
                    picks = (self.rng.choice(len(others), size=min(self.probe_others, len(others)), replace=False)
                             if others else [])
                    moved = [coord, *[others[i] for i in picks]]
                    probe = self._moved(x, moved, [sign] * len(moved), s)
                    fp = yield from self._measure(probe, phase="probe", round=round_, step=s)
                    probes.append((fp, probe, self._last_tq))
            fp, probe, tq = max(probes, key=lambda t: t[0])
            if fp > fx:
                x = probe
                s = s / 2 if s / 2 >= 0.01 else self.step
                if self._beats_best(tq):
                    self.best = probe
            else:
                s = s * 2 if s * 2 <= 1 else self.step
            self.log[-1]["verdict"] = "moved" if x is probe else "stayed"
        yield from self._hold()

    def _hold(self) -> Search:
        self.best = self.best_vector
        while True:
            yield from self._measure(self.best, phase="hold")

    def _key(self, x: Vector) -> tuple[float, ...]:
        return tuple(x[u][k] for u in self.units for k in KNOBS)

    @property
    def best_vector(self) -> Vector:
        """x_best: the best vector the search has scored so far, per unit and knob (see ``best_by``)."""
        if self.best_by == "single" or not self._history:
            return self.best
        runs = list(self._history.values())
        repeated = [r for r in runs if len(r[1]) >= 2] or runs
        return max(repeated, key=lambda r: np.mean([self._score(*tq) for tq in r[1]]))[0]
