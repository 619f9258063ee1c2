"""The simulation side of an environment: one fabric per episode, its trace, its controlled ports."""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import pandas as pd

from ecngym.envs.action import RED_CURVE, ActionMapper, action_key
from ecngym.envs.config import AQM_PARAM_FEATURE, EnvConfig
from ecngym.envs.observation import CURVE_FEATURES, FeatureBuilder
from ecngym.envs.reward import RewardFunction
from ecngym.envs.step_kernel import EpisodeStats, StepKernel
from ecngym.envs.summary import episode_summary
from ecngym.error import ConfigError, InvalidAction
from ecngym.sim_backend import Fabric, FabricConfig, Topology
from ecngym.sim_backend import aqm as aqm_policies
from ecngym.sim_backend.fabric import Telemetry, check_min_rate, flow_frame
from ecngym.sim_backend.flows import with_delay_classes
from ecngym.units import bdp_bytes, duration_ns
from ecngym.workloads import Trace, generate_trace
from ecngym.workloads.generator import without_fields_of_patterns_off

log = logging.getLogger(__name__)

#: Sizes past which building a scenario and playing its episodes takes long: a fat tree of k = 32
#: (8192 hosts) takes ~2 s to build and ~14 s more for its first reset (the fabric's routes), and
#: these grow faster than the host count; an episode of 10^6 steps simulates 10^6 intervals. The
#: scenario logs its sizes first.
LARGE_HOSTS = 1024
LARGE_EPISODE_STEPS = 100_000


def controlled_ports(ports: dict[str, np.ndarray], switch_layers: list[str], layers: list[str] | None,
                     explicit: list[int] | None) -> np.ndarray:
    """Fabric-wide ids of the switch egress ports under control.

    Args:
        ports: :meth:`Topology.port_table` of the topology.
        switch_layers: Layer name of each switch.
        layers: Keep only these layers (``None`` = all).
        explicit: Keep only these port ids (``None`` = all).

    Raises:
        ConfigError: On an unknown layer, a port that is not a switch egress port, or an empty set.
    """
    mask = ports["is_switch"].copy()
    if layers is not None:
        unknown = sorted(set(layers) - set(switch_layers))
        if unknown:
            raise ConfigError("env.action.layers", f"unknown {unknown}; this topology has {sorted(set(switch_layers))}")
        mask &= np.isin(ports["layer"], list(layers))
    if explicit is not None:
        ids = np.asarray(list(explicit))
        if ids.size == 0 or ids.dtype.kind not in "iu" or len(set(ids.tolist())) != ids.size:
            raise ConfigError("env.action.ports", f"expected distinct integer port ids, got {explicit!r}")
        n = len(mask)
        bad = [int(p) for p in ids if not (0 <= p < n and mask[p])]
        if bad:
            switch_ports = np.flatnonzero(mask)
            raise ConfigError("env.action.ports", f"{bad} are not switch egress ports of the chosen layers; "
                                                  f"allowed ids: {switch_ports.min()}..{switch_ports.max()} where "
                                                  f"the port's node is a switch (see Fabric.ports)")
        keep = np.zeros_like(mask)
        keep[ids] = True
        mask &= keep
    if not mask.any():
        raise ConfigError("env.action.layers", "no switch egress port is under control")
    return np.flatnonzero(mask).astype(np.uint32)


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
        if self.topology.num_hosts > LARGE_HOSTS or cfg.episode_steps > LARGE_EPISODE_STEPS:
            interval = f"{cfg.interval} ns" if isinstance(cfg.interval, int) else cfg.interval
            log.warning("a large scenario (hosts: %d, switches: %d, links: %d; an episode: %d steps of %s): building "
                        "it and playing its episodes is slow", self.topology.num_hosts, self.topology.num_switches,
                        len(self.topology.link_a), cfg.episode_steps, interval)
        self.fabric_config = FabricConfig.from_dict(cfg.fabric, "env.fabric")
        self.fabric_config.to_cpp()  # checks the rules between fabric fields now
        check_min_rate(self.topology, self.fabric_config)  # (needs the topology's line rates)
        self.base_rtt_ns = self.topology.max_base_rtt_ns(self.fabric_config.mtu_payload)
        self.interval_ns = self._interval(cfg.interval)
        # LAECN's adaptive monitoring interval (LAECN §III-A; docs: algorithms/laecn.md §3.1): the step lasts
        # interval_short while no active flow has delivered long_flow_bytes, else interval (the long-flow Δt, the
        # default)
        short = cfg.interval_short
        self.interval_short_ns = self._interval(short, "env.interval_short") if short is not None else None
        if self.interval_short_ns is not None and self.interval_short_ns > self.interval_ns:
            raise ConfigError("env.interval_short", f"got {cfg.interval_short!r} ({self.interval_short_ns} ns), "
                                                    f"must not exceed env.interval ({self.interval_ns} ns)")
        self.long_flow_bytes = cfg.long_flow_bytes  # EnvConfig checked both: bytes >= 1, steps in [1, 10^6]
        self.episode_steps = cfg.episode_steps
        self.episode_ns = self.interval_ns * self.episode_steps
        ports = self.topology.port_table()
        self.ports = controlled_ports(ports, self.topology.switch_layers, cfg.action.layers, cfg.action.ports)
        self._ports_u32 = self.ports.astype(np.uint32)  # set_aqm_values's typed form (ids < 2^32)
        self.port_layers = ports["layer"][self.ports]
        self.port_nodes = ports["node"][self.ports]
        rates = ports["rate_bps"][self.ports]
        # the controlled ports' AQM policy (env.aqm, installed at every reset; unset, the policy the
        # simulator's ports are born with): the action tunes its parameters, from its configured
        # setting (the fabric's setting of that policy, env.aqm's over it: Fabric.set_aqm keeps a
        # running policy's parameters)
        self.aqm_policy, self.aqm_setting = self._aqm(cfg)
        policy = self.aqm_policy or aqm_policies.birth_policy()
        configured = {**self.fabric_config.initial_params(policy), **self.aqm_setting}
        self.actions = ActionMapper(cfg.action, self.ports, self.port_layers, rates, policy, configured)
        bdp_bytes_per_port = bdp_bytes(rates, self.base_rtt_ns)
        param_bounds = self.actions.param_bounds()
        # columns of values that aqm_values shows (the tuned numeric parameters), and of the policy's
        # marking curve (the kmin / kmax / pmax features; PortAqmPolicy::DescribeMarkingCurve), by
        # the curve's key in :attr:`red`
        self._feature_columns = [list(self.actions.params).index(p) for p in param_bounds]
        curve = aqm_policies.marking_curve(policy)
        self._red_columns = tuple((RED_CURVE[curve.index(p)], j) for j, p in enumerate(self.actions.params)
                                  if p in curve)
        # a normaliser's scale may name a parameter of the policy (policy_setting): its configured value
        self.features = FeatureBuilder(self._observation(cfg), self.ports, bdp_bytes_per_port,
                                       self.actions.kmax_bound_bytes, self._fabric_red_setting()["mark_at_dequeue"],
                                       rates, self.actions.base, param_bounds)
        self._shows_params = any(f.startswith(AQM_PARAM_FEATURE) for f in self.features.cfg.features)
        # goodput R / C of each controlled port = tx_data_bytes x this (PRED's utility)
        goodput_per_byte = 8e9 / (rates * self.interval_ns)
        self.reward = RewardFunction(cfg.reward, goodput_per_byte)
        #: The reward's per-step flow-level term (score_dense), started with each episode; None for the others
        self.flow_reward = self.reward.flow_reward()
        #: That term's value for the step played last (0 without one), added to every agent's reward
        self.flow_term = 0.0
        # per-step arrays of the controlled ports, reduced once at the end (see finish)
        self._stat_keys = ("mean_queue_bytes", "utilization", "paused_ns", "ecn_marked_packets",
                           self.features.count_key)
        self._stats = EpisodeStats(self._stat_keys, len(self.ports))
        #: The C++ step of the features, history, reward and statistics (envs/step_kernel.py)
        self.step_kernel = StepKernel(self.features, self.reward, self._stats.rows, self.ports)
        self._fixed_trace = self._load_trace(cfg.trace) if cfg.trace else None
        self._window = cfg.trace_window  # "start", "random" or an offset in ns (EnvConfig checked it)
        self.trace_offset_ns = 0
        self.source_trace: Trace | None = None
        self.make_trace(0)  # validate the workload now, not at the first reset
        self.fabric: Fabric | None = None
        #: The controlled ports' values of the action's parameters (``actions.params``), one row per
        #: port: read from the fabric at reset, then what the action set (the only writer of them
        #: besides EnvView.set_aqm, which refuses to replace env.aqm's policy)
        self.values: np.ndarray | None = None
        #: Views of :attr:`values` the features read: RED's curve and the tuned numeric parameters
        self.red: dict[str, np.ndarray] = {}
        self.aqm_values: np.ndarray | None = None
        self.trace: Trace | None = None
        #: The seed of the episode that is running (its trace and simulator; None before the first)
        self.episode_seed: int | None = None
        #: The telemetry of the interval played last (the episode's start after a reset)
        self.telemetry: Telemetry | None = None
        self.step_count = 0
        self.elapsed_ns = 0
        self.long_flow = False
        self.sim_wall_s = 0.0
        # wall seconds in knobs outside the action (EnvView.set_aqm / set_pfc), cumulative: the
        # inference accounting leaves them out of a controller's act time (envs/rollout.py)
        self.actuation_wall_s = 0.0
        self._last_action_key: object = None
        # the action EnvView.hold_action returned for the current setting (see apply)
        self.held_action: Any = None
        self.first_telemetry: dict[str, Any] = {}

    @staticmethod
    def _aqm(cfg: EnvConfig) -> tuple[str | None, dict[str, Any]]:
        """``env.aqm`` as (policy short name, converted parameters); (None, {}) when unset.

        Raises:
            ConfigError: On an unknown policy or parameter, or a value outside its checker range.
        """
        if cfg.aqm is None:
            return None, {}
        name, params = aqm_policies.split_setting(cfg.aqm, "env.aqm")
        return name, aqm_policies.validate_params(name, params, "env.aqm")

    def _fabric_red_setting(self) -> dict[str, Any]:
        """The RED setting every switch port of the fabric starts with (``fabric.aqm``'s; its marking point)."""
        return self.fabric_config.initial_params("red")

    def _observation(self, cfg: EnvConfig) -> Any:
        """The observation config with features checked against the controlled ports' policy.

        A policy without a marking curve (``PortAqmPolicy::DescribeMarkingCurve``) drops the curve
        features (:data:`CURVE_FEATURES`) from the default list, and refuses them (and other
        policies' features) when listed.

        Raises:
            ConfigError: On a feature that the controlled ports' policy cannot give.
        """
        obs = cfg.observation
        policy = self.actions.policy
        has_curve = bool(aqm_policies.marking_curve(policy))
        features = list(obs.features)
        default = type(obs).model_fields["features"].default_factory()
        if not has_curve and features == default:
            features = [f for f in features if f not in CURVE_FEATURES]
        tuned = list(self.actions.param_bounds())
        for f in features:
            if f.startswith(AQM_PARAM_FEATURE):
                if f.removeprefix(AQM_PARAM_FEATURE) not in tuned:
                    raise ConfigError("env.observation.features", f"{f!r} shows a parameter the action tunes; the "
                                      f"action tunes {[AQM_PARAM_FEATURE + p for p in tuned]}")
                continue
            if "." in f:
                owner = f.split(".")[0]
                if owner == policy:
                    continue
            elif f in CURVE_FEATURES and not has_curve:
                owner = " or ".join(aqm_policies.curve_policies())
            else:
                continue
            raise ConfigError("env.observation.features", f"{f!r} needs the {owner} policy on the controlled "
                              f"ports, which run {policy!r} (env.aqm)")
        return obs if features == list(obs.features) else obs.model_copy(update={"features": features})

    def _interval(self, value: Any, field: str = "env.interval") -> int:
        return duration_ns(value, self.base_rtt_ns, field)

    # ------------------------------------------------------------------ episode
    def _load_trace(self, path: str) -> Trace:
        trace = Trace.read(path, "env.trace")  # (refuses a trace without flows)
        top = int(max(trace.flows["src"].max(), trace.flows["dst"].max()))
        if top >= self.topology.num_hosts:
            raise ConfigError("env.trace", f"uses host {top}; the topology has hosts 0..{self.topology.num_hosts - 1}")
        return trace

    def make_trace(self, seed: int) -> Trace:
        """The episode's trace: a window of the fixed one, or a fresh one from the workload config and seed."""
        if self._fixed_trace is not None:
            return self._windowed(self._fixed_trace, seed)
        wl = dict(self.cfg.workload)
        name = wl.pop("workload", "websearch")
        try:
            # the workload is merged key by key over the scenario's: a pattern turned off (incast.degree=0)
            # keeps the scenario's other fields, which are not the user's (generate_trace would refuse them)
            wl = without_fields_of_patterns_off(wl)
            return generate_trace(name, hosts=self.topology.num_hosts, link_rate=float(self.topology.rate_bps.min()),
                                  duration=self.episode_ns, seed=seed, **wl)
        except ConfigError as exc:
            # the generator names its own fields (trace.load); a key the user gave is env.workload.<key>
            key = exc.field.removeprefix("trace.").removeprefix("workload.")
            if key.split(".")[0].split("[")[0] in {*wl, "workload"}:
                raise ConfigError(f"env.workload.{key}", exc.message) from None
            raise

    def _windowed(self, trace: Trace, seed: int) -> Trace:
        """The flows of ``trace`` that start inside this episode's window, shifted to start at 0."""
        starts = trace.flows["start_ns"].to_numpy()
        last = int(starts.max())  # (a fixed trace has flows: _load_trace)
        if self._window == "start":
            offset = 0
        elif self._window == "random":
            offset = int(np.random.default_rng(seed).integers(0, max(last - self.episode_ns, 0) + 1))
        else:
            offset = int(self._window)
        self.trace_offset_ns, self.source_trace = offset, trace
        if offset == 0 and last < self.episode_ns:
            return trace  # the whole trace fits
        inside = (starts >= offset) & (starts < offset + self.episode_ns)
        flows = trace.flows.loc[inside].copy()
        flows["start_ns"] -= offset
        return Trace.from_flows(flows, params={"source": "window", "of_trace": trace.hash, "offset_ns": offset,
                                               "duration_ns": self.episode_ns, "hosts": trace.n_hosts})

    def start_episode(self, seed: int) -> np.ndarray:
        """Build a fresh fabric for a new episode; return the first observation."""
        self.close()
        self.episode_seed = seed
        self.trace = self.make_trace(seed)
        flows = self.trace
        if self.cfg.delay_classes:  # RTT variation: a deterministic function of (trace, classes, seed)
            flows = with_delay_classes(self.trace.flows, self.cfg.delay_classes, seed=seed)
        self.fabric = Fabric(self.topology, flows, self.fabric_config, seed=seed)
        if self.aqm_policy is not None:  # env.aqm on the controlled ports, before any packet
            self.fabric.set_aqm(self.ports, self.aqm_policy, **self.aqm_setting)
        self.step_count = 0
        self.elapsed_ns = 0
        self.long_flow = False  # every flow starts short (LAECN §III-A; docs: algorithms/laecn.md §3.1)
        self.sim_wall_s = 0.0
        self._stats = EpisodeStats(self._stat_keys, len(self.ports))
        self._last_action_key = None
        self.held_action = None
        # time 0: the fabric's own setting (and its RED curve, which an action over env.aqm's
        # parameters leaves as it is)
        self.red = {k: v[self.ports] for k, v in self.fabric.get_red().items()}
        self._set_views(self._values_of_fabric())
        tel = self.telemetry = self.fabric.read_telemetry_block()  # t = 0: empty queues, no traffic yet
        self.first_telemetry = tel.as_dict()
        self.step_kernel.reset(tel, self.red, self.aqm_values)
        self.flow_term = 0.0
        if self.flow_reward is not None:
            self.flow_reward.start(self.fabric)
        return self.features.observation()

    def apply(self, action: object) -> None:
        """Validate ``action`` and set its parameters on the controlled ports (if they changed).

        One path for every policy: the mapper's per-port rows (:attr:`values`' layout) go to
        ``Fabric.set_aqm_values`` (``Fabric.set_aqm`` per changed port where an enumeration is
        among the parameters, which it reads as names).

        Raises:
            InvalidAction: If ``action`` is not in the action space (nothing is applied).
        """
        key = action_key(action)
        if key is not None and key == self._last_action_key:
            return  # the action applied last step (validated then): a held action is the common case
        if self.held_action is not None and np.array_equal(action, self.held_action):
            # EnvView.hold_action's encoding of the current setting keeps it: a continuous action
            # carries a setting only to float32 rounding, and decoding it would move the setting by
            # that rounding (on ports running another policy, where no RED setting may be set)
            if key is None or (isinstance(action, np.ndarray) and action.dtype.kind == "b"):
                # not an int or a number array: checked (to NumPy, [True] == [1]), nothing applied
                self.actions.port_values(action)
            return
        values = self.actions.port_values(action)
        if values is self.values or np.array_equal(values, self.values):
            self._last_action_key = key
            return  # same setting: skip the call
        try:
            if values.dtype == object:  # an enumeration among the parameters: set_aqm_values takes numbers
                for row in np.flatnonzero((values != self.values).any(axis=1)):
                    self.fabric.set_aqm(self.ports[row], self.actions.policy,
                                        **dict(zip(self.actions.params, values[row], strict=True)))
            else:
                self.fabric.set_aqm_values(self._ports_u32, self.actions.policy, self.actions.params, values)
        except ConfigError as exc:  # the policy's checkers or rule (nothing changed: set_aqm_values is atomic)
            raise InvalidAction(f"the action sets {self.actions.policy} to a setting it rejects: {exc.message}; "
                                "nothing changed") from None
        self._last_action_key = key  # (only once taken: a refused action is refused again)
        self._set_views(values)
        self.held_action = None

    def _values_of_fabric(self) -> np.ndarray:
        """The controlled ports' values of the action's parameters, as the fabric has them (0: another policy)."""
        a = self.actions
        spec = aqm_policies.policy_spec(a.policy)
        if any(spec[p].kind == "enum" for p in a.params):  # (get_aqm_values reads numbers only)
            return np.array([[s[p] for p in a.params] for s in self.fabric.get_aqm(self.ports)], dtype=object)
        return np.nan_to_num(self.fabric.get_aqm_values(self._ports_u32, a.policy, tuple(a.params)), nan=0.0)

    def _set_views(self, values: np.ndarray) -> None:
        """Make ``values`` the current setting, and :attr:`red` and :attr:`aqm_values` views of it."""
        self.values = values
        if self._red_columns:
            red = {p: values[:, j] for p, j in self._red_columns}
            self.red = red if len(red) == len(RED_CURVE) else {**self.red, **red}
        if self._shows_params:
            self.aqm_values = values[:, self._feature_columns].astype(np.float64)

    @property
    def next_interval_ns(self) -> int:
        """Length of the next step: ``interval``, or ``interval_short`` while no long flow is active.

        The last step of an episode ends at the episode's end (``interval x episode_steps``).
        """
        span = self.interval_ns if self.interval_short_ns is None or self.long_flow else self.interval_short_ns
        return min(span, self.episode_ns - self.elapsed_ns)

    def _long_flow_active(self) -> bool:
        """Whether some started, unfinished flow has delivered ``long_flow_bytes``.

        LAECN §III-A; docs: algorithms/laecn.md §3.1 [OURS].
        """
        r = self.fabric.sim.flow_records()
        active = (r["start_ns"] <= self.fabric.now_ns) & ~r["finished"].astype(bool)
        return bool(np.any(active & (r["delivered_bytes"] >= self.long_flow_bytes)))

    def advance(self) -> tuple[np.ndarray, dict[str, Any], np.ndarray]:
        """Run one interval; return (observation, telemetry, per-port reward); sets :attr:`flow_term`."""
        span = self.next_interval_ns
        start = time.perf_counter()
        self.fabric.advance(span)
        self.sim_wall_s += time.perf_counter() - start
        self.step_count += 1
        self.elapsed_ns += span
        block = self.telemetry = self.fabric.read_telemetry_block()
        tel = block.as_dict()
        per_port = self.step_kernel.step(block, span, span / self.interval_ns, self.red, self.aqm_values, self._stats)
        if self.flow_reward is not None:
            self.flow_term = self.flow_reward.step(last=self.done)
        obs = self.features.observation()
        if self.interval_short_ns is not None:
            self.long_flow = self._long_flow_active()
        return obs, tel, per_port

    @property
    def done(self) -> bool:
        """Whether the episode's simulated time is used up."""
        return self.elapsed_ns >= self.episode_ns

    def finish(self) -> tuple[pd.DataFrame, dict[str, Any]]:
        """Flow records and the episode summary."""
        columns = self.fabric.flow_columns()
        records = flow_frame(columns)  # (Fabric.flow_records; the summary reads the arrays)
        s = self._stats.arrays()  # (steps, ports)
        summary = episode_summary(columns, s["mean_queue_bytes"], np.minimum(s["utilization"], 1.0),
                                  float(s["paused_ns"].sum()), int(s["ecn_marked_packets"].sum()),
                                  int(s[self.features.count_key].sum()), self.elapsed_ns,
                                  len(self.ports))
        summary["trace_hash"] = self.trace.hash
        return records, summary

    def end_reward(self, records: pd.DataFrame) -> float:
        """The reward's episode-level term (``fct``; 0 for the others)."""
        return self.reward.episode_end(records, self.fabric.now_ns)

    def close(self) -> None:
        """Destroy the fabric (safe to call twice)."""
        if self.fabric is not None:
            self.fabric.close()
            self.fabric = None
