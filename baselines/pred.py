"""PRED's Queue Length Adjuster on top of its data-plane Flow Concurrent Stabilizer.

PRED §III-B; docs: algorithms/pred.md §3.

Li et al., "Revisiting Random Early Detection Tuning for High-Performance Datacenter Networks"
(IEEE/ACM ToN 2025; NSDI'25 "PRED"). PRED marks with the RED slope λ_eff = f(N) · λ_QLA above minK
(p = λ_eff · (q − minK), maxK = 500 KB a safety limit only). Two loops set it:

* **FCS** (§3.2, data plane, per packet): counts the distinct flows N of every port per T_FCS and
  scales λ by f(N) = N. It is the fabric's ``pred`` port-AQM policy (``Fabric.set_aqm``); this
  controller installs it on the controlled ports with T_FCS = ``t_fcs`` (1.25 RTT).
* **QLA** (§3.3, control plane, per T_QLA slot, here): per port, the utility
  U = β · R/C + (1 − β) · Φ(q̄) (R = data goodput over the slot, C = line rate, q̄ = time-averaged
  queue) scores four slots run at λ_QLA + Δλ, − Δλ, − Δλ, + Δλ (slot order of the Tofino code,
  Fig. 12); λ_QLA moves by +Δλ only if U1 > U2 and U4 > U3, by −Δλ only if U1 < U2 and U4 < U3,
  else stays (AIAD, one decision per 4 slots). Below λ_min it pins λ_QLA = λ_min and tunes minK by
  ΔminK with the same A/B test instead ("minK mode"): "lower λ better" raises minK, "higher λ
  better" lowers it, and back at the initial minK a "higher λ better" verdict leaves minK mode
  (PRED §IV-B; docs: algorithms/pred.md §3.3 [OURS]: the paper does not say how minK mode ends). λ_QLA stays in
  [λ_min, λ_max] (§3.4 [OUR CHOICE], λ_max = 2).

Units: λ in marking probability per packet of queue above minK (``lambda_unit="packet"``, the
default; a packet is ``packet_bytes`` on the wire) or per MB (``"mb"``). Only per packet does the
paper's Eq. 1, (q − minK)²(q + C·d) = 2N/λ², give its simulated queues (PRED §II-B, Fig. 19: 15
packets at λ = 0.1, N = 16); its one worked example (§II-A) reads as per MB (docs:
algorithms/pred.md §1.2, where the sensitivity run that decided it is shown). q_left, minK, ΔminK
in bytes (the paper's packets at our 1000 B payload: 15 / 10 / 5 packets = 15 / 10 / 5 KB).
Φ (§3.3 [AMBIG]): ``"linear"`` (1 up to q_left, linear to 0 at maxK; the env's ``pred`` reward
uses the same) or ``"inverse"`` (min(1, q_left / q̄)).

Utility (``utility``): ``"paper"`` is U above; ``"t2"`` is the Tofino-2 data-plane reward (§3.3,
Fig. 12), which has no division: reward = qdepth_left + out_pkts, the remaining queue
(``t2_max_queue`` − q̄, in packets) plus the data packets sent in the slot. The paper's cap ("above
5000 it is capped at 6000") is inconsistent [AMBIG]; only differences between slots matter, so the
constant cancels and the reward compares packets sent against packets queued one for one. The T2
code steps Pmax by Pmax_step at fixed minK / maxK, which is a λ step of Pmax_step / (maxK − minK):
the λ machinery here with Δλ = Pmax_step / (maxK − minK) (Pmax_step is not given).

Modes (the paper's ablations, §4.2 / Fig. 18):

* ``"pred"``: FCS + QLA.
* ``"only_fcs"``: FCS with λ_QLA fixed at ``lambda_init`` (no QLA).
* ``"only_qla"``: plain RED (no flow counting) whose slope λ_QLA the QLA tunes, p = min(1, λ_QLA ·
  (q − minK)) below maxK: Kmin = minK, Kmax = min(maxK, minK + 1/λ_QLA), Pmax = λ_QLA · (Kmax −
  minK), set through the env's (continuous, per-port) action.

T_QLA = ``t_qla`` (5 RTT, §3.4) must be a whole number of env steps (Only-FCS has no slots, so any
T_QLA goes there); the controller acts once per slot and averages the telemetry of the slot's
steps (``observe``). Every slot and port with traffic is one record of :attr:`log` (trial λ,
λ_QLA, minK, mode, U, R/C, q̄, the 4-slot verdict, and FCS's flow count N where the policy
reports it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ecngym.baselines import params
from ecngym.envs.reward import pred_phi
from ecngym.envs.view import EnvView
from ecngym.error import ConfigError
from ecngym.sim_backend.aqm import policy_spec
from ecngym.units import duration_ns, parse_bytes

#: Trial sign of the four slots of one A/B cycle (+, −, −, +), PRED §IV-B; docs: algorithms/pred.md §3.3.
SLOT_SIGNS = np.array([1, -1, -1, 1])
BYTES_PER_MB = 1e6
#: What one unit of queue in λ's "probability per unit above minK" is (``lambda_unit``).
LAMBDA_UNITS = ("packet", "mb")


def _duration_ns(field: str, value: Any, rtt_ns: float | None) -> int | None:
    """``controller.<field>``: a time ("400us") or RTTs ("5rtt") as ns (:func:`ecngym.units.duration_ns`)."""
    return duration_ns(value, rtt_ns, f"controller.{field}")


class PredController:
    """PRED (§III-B; docs: algorithms/pred.md §3): QLA on the data-plane FCS, per controlled port; or one ablation.

    Args:
        mode: ``"pred"``, ``"only_fcs"`` or ``"only_qla"``.
        beta: β of the utility (§3.4: 0.4).
        q_left: Φ is 1 up to this queue (§3.4: 15 packets; "15KB").
        phi: Φ's shape, ``"linear"`` or ``"inverse"`` (§3.3 [AMBIG]).
        lambda_init: Initial λ_QLA (§3.4: 0.1 for FCS(N) / PRED), in ``lambda_unit``.
        delta_lambda: Δλ (§3.4: 0.025); must be below λ_min so a trial λ stays positive.
        lambda_min: λ_min (§3.4: 0.05).
        lambda_max: λ_max (§3.4 [OUR CHOICE]: 2).
        lambda_unit: What the four λ values are per: ``"packet"`` (marking probability per packet
            of ``packet_bytes`` above minK, the default: the unit in which the paper's Eq. 1 gives its
            queues, §II-B) or ``"mb"`` (per MB: the reading of the §II-A worked example).
        mink: Initial minK (§3.4: 10 packets; "10KB").
        delta_mink: ΔminK (§3.4: 5 packets; "5KB").
        maxk: maxK, fixed (§3.4: "500KB").
        mink_mode: Tune minK below λ_min (§3.3); ``False`` pins λ_QLA at λ_min instead.
        t_qla: Slot length: ``"<x>rtt"`` (§3.4: "5rtt") or a duration.
        t_fcs: FCS period (§3.2: "1.25rtt").
        rtt: What one RTT of ``t_qla`` / ``t_fcs`` is: ``"base"`` (the topology's largest base RTT)
            or a duration (the paper states "RTT is 0.08 ms" for its simulations, Fig. 25: "80us").
        scaling: FCS's f(N): ``"N"`` (the paper's), ``"SqrtN"``, ``"NSquared"``.
        fcs_params: Further parameters of the fabric's ``pred`` policy (e.g. hashed counting).
        utility: ``"paper"`` (β · R/C + (1 − β) · Φ(q̄)) or ``"t2"`` (the Tofino-2 reward, above).
        t2_max_queue: The T2 reward's maximum queue (§3.3 Fig. 12: 6000 packets; "6000pkt" is
            6000 of ``packet_bytes``); it cancels in the A/B comparisons.
        packet_bytes: Bytes of one packet, for the T2 reward's queue and for λ per packet (our
            1000 B payload + 48 B).
        adjust: ``False`` runs the four-slot trials and records each cycle's verdict but never moves
            λ_QLA or minK ([ours]: a probe of the A/B test itself, e.g. whether its verdicts point
            the right way on a scenario whose better direction is known).
        name: Name in tables (default: the mode, ``"pred"`` / ``"pred_only_fcs"`` / ``"pred_only_qla"``).

    Raises:
        ConfigError: On any bad parameter, naming ``controller.<field>``.
    """

    def __init__(self, mode: str = "pred", beta: float = 0.4, q_left: Any = "15KB", phi: str = "linear",
                 lambda_init: float = 0.1, delta_lambda: float = 0.025,
                 lambda_min: float = 0.05, lambda_max: float = 2.0, lambda_unit: str = "packet", mink: Any = "10KB",
                 delta_mink: Any = "5KB", maxk: Any = "500KB", mink_mode: bool = True, t_qla: Any = "5rtt",
                 t_fcs: Any = "1.25rtt", rtt: Any = "base", scaling: str = "N",
                 fcs_params: dict[str, Any] | None = None,
                 utility: str = "paper", t2_max_queue: float = 6000, packet_bytes: Any = "1048B",
                 adjust: bool = True, name: str | None = None) -> None:
        self.mode = params.choice("mode", mode, ("pred", "only_fcs", "only_qla"))
        self.beta = params.real("beta", beta, 0, 1)
        self.q_left_bytes = parse_bytes(q_left, "controller.q_left")
        self.phi = params.choice("phi", phi, ("linear", "inverse"))
        self.lambda_min = params.real("lambda_min", lambda_min, 0, low_inclusive=False)
        self.lambda_max = params.real("lambda_max", lambda_max, self.lambda_min)
        self.lambda_init = params.real("lambda_init", lambda_init, self.lambda_min, self.lambda_max)
        self.delta_lambda = params.real("delta_lambda", delta_lambda, 0, self.lambda_min,
                                        low_inclusive=False, high_inclusive=False)
        self.lambda_unit = params.choice("lambda_unit", lambda_unit, LAMBDA_UNITS)
        fcs = policy_spec("pred")  # maxK and minK become the FCS policy's kmax / kmin: its ranges
        self.maxk_bytes = fcs["kmax_bytes"].convert(maxk, "controller.maxk")
        self.mink_bytes = fcs["kmin_bytes"].convert(mink, "controller.mink")
        self.delta_mink_bytes = parse_bytes(delta_mink, "controller.delta_mink")
        # mink against maxk before the checks that involve q_left: the message names the pair the user set
        if not self.delta_mink_bytes <= self.mink_bytes < self.maxk_bytes - self.delta_mink_bytes:
            raise ConfigError("controller.mink", f"need delta_mink <= mink < maxk - delta_mink "
                                                 f"({self.delta_mink_bytes} <= {self.mink_bytes} < "
                                                 f"{self.maxk_bytes - self.delta_mink_bytes} B)")
        if not self.q_left_bytes < self.maxk_bytes:
            raise ConfigError("controller.q_left",
                              f"must be below maxk ({self.maxk_bytes} B), got {self.q_left_bytes} B")
        self.mink_mode = params.flag("mink_mode", mink_mode)
        self.t_qla, self.t_fcs = t_qla, t_fcs
        if not (isinstance(rtt, str) and rtt.strip().lower() == "base"):
            _duration_ns("rtt", rtt, None)  # a duration > 0
        self.rtt = rtt
        _duration_ns("t_qla", t_qla, None)  # checked now; resolved against the env's RTT at reset
        _duration_ns("t_fcs", t_fcs, None)
        self.scaling = params.choice("scaling", scaling, ("N", "SqrtN", "NSquared"))
        if fcs_params is not None and not isinstance(fcs_params, dict):
            raise ConfigError("controller.fcs_params", f"expected a mapping, got {fcs_params!r}")
        reserved = {"lambda_qla", "kmin_bytes", "kmax_bytes", "fcs_period_ns", "scaling"} & set(fcs_params or {})
        if reserved:
            raise ConfigError(f"controller.fcs_params.{sorted(reserved)[0]}", "set by the controller's own parameters")
        self.fcs_params = dict(fcs_params or {})
        self.adjust = params.flag("adjust", adjust)
        self.utility_kind = params.choice("utility", utility, ("paper", "t2"))
        self.t2_max_queue = params.real("t2_max_queue", t2_max_queue, 0, low_inclusive=False)
        self.packet_bytes = parse_bytes(packet_bytes, "controller.packet_bytes")
        if self.packet_bytes < 1:
            raise ConfigError("controller.packet_bytes", f"must be >= 1 B, got {packet_bytes!r}")
        #: λ in ``lambda_unit`` times this is λ per MB (the fabric's ``pred`` policy's unit)
        self.per_mb = BYTES_PER_MB / self.packet_bytes if self.lambda_unit == "packet" else 1.0
        if self.lambda_max * self.per_mb > policy_spec("pred")["lambda_qla"].high:
            raise ConfigError("controller.lambda_max", f"{self.lambda_max} per {self.lambda_unit} is "
                                                       f"{self.lambda_max * self.per_mb:g} per MB, above the FCS "
                                                       f"policy's {policy_spec('pred')['lambda_qla'].high:g}")
        self.name = name or ("pred" if mode == "pred" else f"pred_{mode}")
        self.interval_steps = 1
        self.log: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ env
    def env_overrides(self, env: Any) -> dict[str, Any]:
        """Only-QLA sets RED per port through the action: a continuous per-port space covering it."""
        if self.mode != "only_qla":
            return {}
        return {"action": {"type": "continuous", "scope": "port", "scale_with_rate": False, "layers": None,
                           "ports": None, "ranges": {
                               "kmin_bytes": [0, self.maxk_bytes],
                               "kmax_bytes": {"relative_to": "kmin_bytes", "offset": [0, self.maxk_bytes]},
                               "pmax": [0.0, 1.0]}}}

    def reset(self, env: Any) -> None:
        """Install the FCS policy (or RED) on the controlled ports and start the first A/B cycle.

        Raises:
            ConfigError: If T_QLA is not a whole number of env steps (modes with QLA), or (Only-QLA)
                the env's action cannot set each port's RED curve (see :meth:`env_overrides`).
            InvalidAction: If the fabric has no ``pred`` policy (FCS modes) or the action space
                cannot express Only-QLA's RED curves.
        """
        self.view = view = EnvView(env)
        if self.mode == "only_qla":  # RED per port through the action (env_overrides)
            view.require_per_port_continuous("PRED only_qla")
        base = isinstance(self.rtt, str) and self.rtt.strip().lower() == "base"
        self.rtt_ns = view.base_rtt_ns if base else _duration_ns("rtt", self.rtt, 1)
        t_qla_ns = _duration_ns("t_qla", self.t_qla, self.rtt_ns)
        steps = t_qla_ns / view.interval_ns
        if self.mode == "only_fcs":  # no QLA slots: T_QLA need not fit the env's steps
            self.interval_steps = view.episode_steps + 1
        elif abs(steps - round(steps)) > 1e-6 * steps or round(steps) < 1:
            fit = max(1, round(steps)) * view.interval_ns
            raise ConfigError("controller.t_qla", f"T_QLA = {t_qla_ns} ns is not a whole number of env steps of "
                                                  f"{view.interval_ns} ns; allowed: a multiple of the step, e.g. "
                                                  f"controller.t_qla={fit}ns, or an env step that divides T_QLA, "
                                                  f"e.g. env.kwargs.interval={t_qla_ns}ns (longer episodes)")
        else:
            self.interval_steps = int(round(steps))
        self.t_fcs_ns = _duration_ns("t_fcs", self.t_fcs, self.rtt_ns)
        n = len(view.ports)
        self.lam = np.full(n, self.lambda_init)
        self.mink = np.full(n, float(self.mink_bytes))
        self.in_mink_mode = np.zeros(n, dtype=bool)
        self.utility = np.zeros((4, n))
        self.slot = -1  # the first act starts slot 0
        self._tx, self._queue_ns, self._span_ns, self._flows = np.zeros(n), np.zeros(n), 0, np.zeros(n)
        self._pkts = np.zeros(n)
        self.log = []
        self._pushed: dict[int, tuple[float, float]] = {}
        if self.mode == "only_qla":
            self._action = None
        else:
            self._action = view.hold_action()
            view.set_aqm(view.ports, "pred", lambda_qla=self.lambda_init * self.per_mb,
                         kmin_bytes=int(self.mink_bytes),
                         kmax_bytes=int(self.maxk_bytes), fcs_period_ns=self.t_fcs_ns, scaling=self.scaling,
                         **self.fcs_params)
            self._pushed = {i: (self.lambda_init, float(self.mink_bytes)) for i in range(n)}

    # ------------------------------------------------------------------ loop
    def observe(self, observation: np.ndarray, info: dict[str, Any]) -> None:
        """Accumulate the slot's goodput and time-weighted queue of the controlled ports."""
        tel, ports = info["telemetry"], info["ports"]
        span = int(tel["interval_end_ns"] - tel["interval_start_ns"])
        self._tx += tel["tx_data_bytes"][ports]
        self._pkts += tel["tx_data_packets"][ports]
        self._queue_ns += tel["mean_queue_bytes"][ports] * span
        self._span_ns += span
        count = tel.get("pred.flow_count")
        if count is not None:
            self._flows = np.nan_to_num(np.asarray(count, dtype=np.float64)[ports])

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """Close the slot that ended (score it; after slot 4 decide), start the next slot's trial."""
        if self.mode == "only_fcs":
            return self._action
        if self.slot >= 0 and self._span_ns > 0:
            self._score_slot(int(info["time_ns"]))
        self.slot = (self.slot + 1) % 4
        self._tx[:], self._queue_ns[:], self._span_ns, self._pkts[:] = 0, 0, 0, 0
        self._push_trial()
        return self._action

    def utility_of(self, goodput_fraction: np.ndarray, queue_bytes: np.ndarray) -> np.ndarray:
        """U = β · R/C + (1 − β) · Φ(q̄) (PRED §IV-B; docs: algorithms/pred.md §3.3)."""
        if self.phi == "linear":
            phi = pred_phi(queue_bytes, self.q_left_bytes, self.maxk_bytes)
        else:
            phi = np.minimum(1.0, self.q_left_bytes / np.maximum(queue_bytes, 1e-9))
        return self.beta * np.minimum(goodput_fraction, 1.0) + (1 - self.beta) * phi

    def _score_slot(self, time_ns: int) -> None:
        view = self.view
        trial = self._trial()  # what ran in the slot that ended (before the decision moves λ)
        r_over_c = self._tx * 8e9 / (view.port_rates_bps * self._span_ns)
        q_bar = self._queue_ns / self._span_ns
        if self.utility_kind == "t2":
            u = (self.t2_max_queue - q_bar / self.packet_bytes) + self._pkts
        else:
            u = self.utility_of(r_over_c, q_bar)
        self.utility[self.slot] = u
        verdict = np.full(len(u), "", dtype=object)
        if self.slot == 3:
            verdict = self._decide()
        busy = np.flatnonzero(self._tx > 0)
        for i in busy:
            self.log.append({"time_ns": time_ns, "port": int(view.ports[i]), "slot": self.slot + 1,
                             "trial_lambda_per_mb": float(trial[0][i] * self.per_mb),
                             "trial_mink_bytes": float(trial[1][i]), "lambda_qla": float(self.lam[i]),
                             "lambda_qla_per_mb": float(self.lam[i] * self.per_mb), "mink_bytes": float(self.mink[i]),
                             "mink_mode": bool(self.in_mink_mode[i]), "utility": float(u[i]),
                             "goodput_fraction": float(r_over_c[i]), "queue_bytes": float(q_bar[i]),
                             "packets_sent": float(self._pkts[i]),
                             "flow_count": float(self._flows[i]), "verdict": verdict[i]})

    def _decide(self) -> np.ndarray:
        """The AIAD step after a 4-slot cycle (PRED §IV-B; docs: algorithms/pred.md §3.3), per port; the verdicts."""
        u1, u2, u3, u4 = self.utility
        up = (u1 > u2) & (u4 > u3)      # higher λ consistently better
        down = (u1 < u2) & (u4 < u3)    # lower λ consistently better
        verdicts = np.where(up, "up", np.where(down, "down", "keep"))
        if not self.adjust:
            return verdicts
        lam_mode = ~self.in_mink_mode
        # λ mode: ±Δλ; falling below λ_min pins λ at λ_min and enters minK mode
        self.lam = np.where(lam_mode & up, np.minimum(self.lam + self.delta_lambda, self.lambda_max), self.lam)
        new_lam = self.lam - self.delta_lambda
        fall = lam_mode & down
        below = fall & (new_lam < self.lambda_min - 1e-12)
        self.lam = np.where(fall & ~below, new_lam, self.lam)
        self.lam = np.where(below, self.lambda_min, self.lam)
        # minK mode: "lower λ better" raises minK, "higher λ better" lowers it; leave at the initial minK
        mk = self.in_mink_mode
        top = self.maxk_bytes - self.delta_mink_bytes
        self.mink = np.where(mk & down, np.minimum(self.mink + self.delta_mink_bytes, top), self.mink)
        at_start = self.mink <= self.mink_bytes + 1e-9
        leave = mk & up & at_start
        self.mink = np.where(mk & up & ~at_start, np.maximum(self.mink - self.delta_mink_bytes, self.mink_bytes),
                             self.mink)
        self.lam = np.where(leave, np.minimum(self.lambda_min + self.delta_lambda, self.lambda_max), self.lam)
        self.in_mink_mode = (mk & ~leave) | (below & self.mink_mode)
        return verdicts

    def _trial(self) -> tuple[np.ndarray, np.ndarray]:
        """(λ, minK) each port runs in the current slot."""
        sign = SLOT_SIGNS[self.slot]
        lam = np.where(self.in_mink_mode, self.lam, self.lam + sign * self.delta_lambda)
        # minK mode: the "higher λ" trial is a lower minK (more marking); PRED §IV-B; docs: algorithms/pred.md §3.3
        # [OURS]
        mink = np.where(self.in_mink_mode, np.maximum(self.mink - sign * self.delta_mink_bytes, 0.0), self.mink)
        return lam, mink

    def _push_trial(self) -> None:
        view = self.view
        lam, mink = self._trial()
        if self.mode == "only_qla":
            # p = min(1, λ (q − minK)): the RED line reaches 1 at minK + 1/λ when that is below maxK
            lam_mb = lam * self.per_mb
            kmax = np.minimum(float(self.maxk_bytes), mink + BYTES_PER_MB / lam_mb)
            pmax = np.minimum(lam_mb * (kmax - mink) / BYTES_PER_MB, 1.0)
            self._action = view.encode(mink, kmax, pmax)
            return
        groups: dict[tuple[float, float], list[int]] = {}
        for i, key in enumerate(zip(lam.tolist(), mink.tolist(), strict=True)):
            if self._pushed.get(i) != key:
                groups.setdefault(key, []).append(i)
        for (lam_i, mink_i), idx in groups.items():
            view.set_aqm(view.ports[idx], "pred", lambda_qla=lam_i * self.per_mb, kmin_bytes=int(round(mink_i)))
            for i in idx:
                self._pushed[i] = (lam_i, mink_i)
