"""A read-mostly view of an :class:`~ecngym.envs.EcnTuningEnv` for controllers.

Controllers (baselines and learning agents) read what they need here instead of reaching into
``env.unwrapped.scenario``, whose layout is free to change:

| attribute | meaning | unit |
|---|---|---|
| ``ports`` | fabric-wide ids of the controlled switch egress ports (rows of ``info["ports"]``) | |
| ``port_layers`` | switch layer of each controlled port (``"tor"``, ``"leaf"``, ``"spine"`` ...) | |
| ``port_rates_bps`` | line rate of each controlled port | bit/s |
| ``port_switches`` | switch index of each controlled port (for :meth:`set_pfc`) | |
| ``port_to_host`` | whether the port's link goes to a host (the receiver side) | |
| ``port_peers`` | node id at the other end of each controlled port's link (hosts first) | |
| ``host_ports`` | fabric-wide ids of the hosts' NIC ports (telemetry there = what each host sends) | |
| ``units`` / ``unit_of_port`` | what one action entry sets (``"all"``, a layer, a port) and each port's unit | |
| ``interval_ns`` | one env step of simulated time | ns |
| ``base_rtt_ns`` | largest host-to-host base RTT of the topology | ns |
| ``episode_steps`` | steps per episode | |
| ``action_type`` | ``"discrete"`` or ``"continuous"`` | |
| ``action_templates`` | the discrete action's templates by action value (``env.aqm``: the policy's) | B, B, prob. |
| ``static_action_index`` | the template of the fabric preset's static setting (0 if continuous) | |
| ``observation_history`` | intervals k each port's observation row holds | |
| ``packet_bytes`` | a full data packet on the wire (MTU payload + data header) | B |
| ``buffer_bytes`` | each switch's whole shared buffer (``fabric.buffer.buffer``) | B |
| ``red`` | current (``kmin_bytes``, ``kmax_bytes``, ``pmax``) of every controlled port | B, B, prob. |
| ``pfc`` | current PFC ``alpha`` and ``headroom_bytes`` of every switch | , B |
| ``static_setting`` | the fabric preset's static (Kmin, Kmax, Pmax) | B, B, prob. |
| ``trace_hash`` | hash of the episode's traffic trace (``None`` before the first reset) | |
| ``sim_wall_s`` | wall time the fabric has spent simulating this episode so far | s |

Actuation: the ECN curve goes through the env's action (:meth:`encode` turns per-unit byte
settings into an action of the env's space); knobs outside the action space (PFC per switch,
the port AQM policy) are set here, effective from the current simulated time. The time these
setters spend in the fabric is kept apart (:func:`actuation_wall_s`), so a controller that
actuates here is charged for its decisions only, like one that actuates through the action.

Profiling (``ecngym bench env``): :meth:`step_parts` gives the objects a step calls outside the
simulator, for a profiler to wrap their methods with timers.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from ecngym.envs.action import EcnSetting
from ecngym.error import ConfigError, InvalidAction
from ecngym.sim_backend import aqm as aqm_policies
from ecngym.sim_backend.topology import Topology
from ecngym.units import parse_bytes


class EnvView:
    """What a controller may read (and the knobs beyond the action it may set) of one env.

    Build it in ``Controller.reset(env)`` (right after ``env.reset``): ``view = EnvView(env)``.
    It reports the settings of the episode that is running, as the fabric reports them.

    Args:
        env: An :class:`~ecngym.envs.EcnTuningEnv`, possibly wrapped, or an
            :class:`~ecngym.envs.multi_agent.EcnTuningParallelEnv` (its shared scenario).
    """

    def __init__(self, env: Any) -> None:
        self._env = env.unwrapped
        sc = self._env.scenario
        self._scenario = sc
        topo: Topology = sc.topology
        self.ports: np.ndarray = sc.ports
        self.port_layers: np.ndarray = sc.port_layers
        table = topo.port_table()
        self.port_rates_bps: np.ndarray = table["rate_bps"][sc.ports]
        self.port_switches: np.ndarray = (sc.port_nodes - topo.num_hosts).astype(np.int64)
        self.port_peers: np.ndarray = table["peer"][sc.ports]
        self.port_to_host: np.ndarray = self.port_peers < topo.num_hosts
        self.host_ports: np.ndarray = np.flatnonzero(~table["is_switch"])
        self.switch_layers: list[str] = list(topo.switch_layers)
        self.interval_ns: int = int(sc.interval_ns)
        self.base_rtt_ns: int = int(sc.base_rtt_ns)
        self.episode_steps: int = int(sc.episode_steps)
        self.action_space = sc.actions.space  # (the env's: a parallel env's is one per agent)
        self.action_type: str = sc.actions.cfg.type
        self.action_templates: list[Any] = list(sc.actions.templates)
        self.static_action_index: int = int(sc.actions.static_index)
        self.units: list[str] = list(sc.actions.group_names)
        self.unit_of_port: np.ndarray = sc.actions.groups
        self.observation_history: int = int(sc.features.history)
        fabric_cfg = sc.fabric_config
        self.packet_bytes: int = int(parse_bytes(fabric_cfg.mtu_payload) + parse_bytes(fabric_cfg.data_header))
        self.buffer_bytes: int = int(fabric_cfg.buffer.buffer)
        red = fabric_cfg.initial_params("red")
        self.static_setting = EcnSetting(red["kmin_bytes"], red["kmax_bytes"], red["pmax"])
        # each switch's first ingress port (set_pfc sets all of a switch's ports together)
        switch_ports = np.flatnonzero(table["is_switch"])
        first = np.unique(table["node"][switch_ports], return_index=True)[1]  # by node = by switch index
        self._switch_first_port: np.ndarray = switch_ports[first]

    # ------------------------------------------------------------------ read
    @property
    def red(self) -> dict[str, np.ndarray]:
        """Current ``kmin_bytes``, ``kmax_bytes``, ``pmax`` of the controlled ports (copies)."""
        return {k: np.array(v, dtype=np.float64 if k == "pmax" else np.uint64) for k, v in self._scenario.red.items()}

    @property
    def trace_hash(self) -> str | None:
        """Hash of the traffic trace of the episode that is running (``None`` before the first reset)."""
        trace = self._scenario.trace
        return None if trace is None else trace.hash

    @property
    def episode_seed(self) -> int | None:
        """The seed of the episode that is running (``info["episode_seed"]`` of its reset; None before the first)."""
        return self._scenario.episode_seed

    @property
    def sim_wall_s(self) -> float:
        """Wall seconds the fabric has spent simulating this episode so far (0 at each reset)."""
        return float(self._scenario.sim_wall_s)

    def step_parts(self) -> dict[str, Any]:
        """The objects a step calls outside the simulator, by role, for a profiler to wrap (``ecngym bench env``).

        ``fabric`` (telemetry read), ``kernel`` (the C++ step kernel: features, reward and
        statistics), ``scenario`` (action and episode end). A reset builds
        a new fabric: call this again after each. Their methods are the env's internals, free to
        change with it; only profilers should reach them.
        """
        sc = self._scenario
        return {"fabric": sc.fabric, "kernel": sc.step_kernel, "scenario": sc}

    @property
    def pfc(self) -> dict[str, np.ndarray]:
        """Current PFC ``alpha`` and ``headroom_bytes`` of every switch (index = switch), read from the fabric.

        A switch's value is its first ingress port's (:meth:`set_pfc` sets all of its ports; a preset
        whose ``headroom_rule`` or ``pfc_alpha_rule`` goes by port gives each port its own).

        Raises:
            InvalidAction: Before the env's first reset (there is no fabric yet).
        """
        fabric = self._scenario.fabric
        if fabric is None:
            raise InvalidAction("EnvView.pfc: the env has no fabric before its first reset; build the view in "
                                "Controller.reset(env), after env.reset")
        by_port = fabric.get_port_pfc()
        return {"alpha": np.asarray(by_port["alpha"], dtype=np.float64)[self._switch_first_port],
                "headroom_bytes": np.asarray(by_port["headroom_bytes"]).astype(np.int64)[self._switch_first_port]}

    @property
    def time_ns(self) -> int:
        """Simulated time now."""
        return int(self._scenario.fabric.now_ns)

    def agent_rows(self, granularity: str) -> dict[str, np.ndarray]:
        """Agent name -> rows of its ports among :attr:`ports` (``switch_<i>`` or ``port_<id>``).

        The grouping of the parallel env (:func:`~ecngym.envs.multi_agent.agent_port_rows`), so a
        policy trained there sees the same per-agent observations here.

        Args:
            granularity: ``"port"`` (one agent per port) or ``"switch"`` (one per switch).
        """
        from ecngym.envs.multi_agent import agent_port_rows

        return agent_port_rows(self._scenario, granularity)

    def switches_of_layer(self, layer: str) -> np.ndarray:
        """Switch indices of one layer (among those with a controlled port).

        Raises:
            ConfigError: Naming ``layer`` if the topology has no such switch layer (it gave ``[]``).
        """
        if not isinstance(layer, str) or layer not in self.switch_layers:
            layers = sorted(set(self.switch_layers))
            raise ConfigError("layer", f"got {layer!r}; the topology's switch layers are {layers}")
        return np.unique(self.port_switches[self.port_layers == layer])

    def require_per_port_continuous(self, controller: str) -> None:
        """Check that the env's action sets any thresholds on each controlled port separately.

        For controllers that compute one (Kmin, Kmax, Pmax) per port (their ``env_overrides`` ask
        for such an action; ``ecngym eval`` applies them).

        Args:
            controller: The controller's name, for the message.

        Raises:
            ConfigError: Naming ``env.action`` if the action is discrete or has units of several ports.
        """
        if self.action_type != "continuous" or len(self.units) != len(self.ports):
            raise ConfigError("env.action", f"{controller} sets arbitrary per-port thresholds: it needs "
                                            f"action.type=continuous, scope=port, got type={self.action_type!r} "
                                            f"with {len(self.units)} unit(s) for {len(self.ports)} ports (ecngym "
                                            "eval sets it via the controller's env_overrides)")

    # ------------------------------------------------------------------ flows
    def flows_started(self, since_ns: int = 0) -> pd.DataFrame:
        """The flow-table rows of the flows that started in ``[since_ns, now)``: what a controller may know.

        A flow starting exactly now has not started (the fabric starts it when it runs on), and
        no pending flow of the trace is ever among the rows (the look-ahead tuner's forecast reads
        its traffic only here, :mod:`ecngym.baselines.mpc`).

        Args:
            since_ns: Start of the window (0: since the episode began).

        Returns:
            The rows (``src, dst, size_bytes, start_ns, priority, dport`` [, ``extra_delay_ns``]),
            in flow-id order.
        """
        fabric = self._scenario.fabric
        table = fabric.flows
        start = table["start_ns"].to_numpy()
        return table.loc[(start < fabric.now_ns) & (start >= since_ns)]

    def replace_pending_flows(self, flows: Any) -> int:
        """On a branch of the episode (:mod:`ecngym.envs.branch`): play ``flows`` instead of the trace's pending ones.

        ``Fabric.replace_pending_flows``: every flow not yet started is dropped, ``flows`` added.

        Returns:
            How many pending flows were dropped.

        Raises:
            ConfigError: Naming ``flows.<column>`` and the first bad row.
        """
        return self._scenario.fabric.replace_pending_flows(flows)

    def flow_columns(self) -> dict[str, np.ndarray]:
        """The flow records now, by column (``Fabric.flow_columns``).

        Every flow of the fabric's table is a row, pending ones too: those are the trace's future,
        which a causal controller reads only on a branch whose pending flows it replaced
        (:meth:`replace_pending_flows`).
        """
        return self._scenario.fabric.flow_columns()

    # ------------------------------------------------------------------ act
    def encode(self, kmin_bytes: Any, kmax_bytes: Any, pmax: Any) -> Any:
        """The env action that sets these per-unit values (see :meth:`~ecngym.envs.action.ActionMapper.encode`).

        Raises:
            InvalidAction: Naming the argument if a value is not a finite number, or a list of one
                per unit (``encode("20KB", ...)``, ``pmax=True``); if the env's action space cannot
                express them, or sets another AQM policy's parameters (``env.aqm``) than RED's thresholds.
        """
        actions = self._scenario.actions
        if not actions.sets_red_curve:  # its encode takes that policy's parameters
            raise InvalidAction(f"env.aqm: the env's action sets the {actions.policy!r} policy's "
                                f"{list(actions.params)}, but this controller sets RED thresholds (kmin, kmax, "
                                "pmax); leave env.aqm out, or use a controller of that policy")
        return actions.encode(kmin_bytes=kmin_bytes, kmax_bytes=kmax_bytes, pmax=pmax)

    def set_pfc(self, switches: Any, alpha: Any, headroom_bytes: Any) -> None:
        """Set PFC dynamic-threshold alpha and headroom of switches (by index), from now.

        The values go to ``Fabric.set_pfc`` as given (it owns the checks: integer switch ids,
        alpha in the fabric's range, whole-byte sizes or size strings); :attr:`pfc` then reads it back.

        Raises:
            ConfigError: On a bad switch index, alpha or headroom (``Fabric.set_pfc``); nothing
                changes then.
        """
        with self._actuating():
            self._scenario.fabric.set_pfc(switches, alpha, headroom_bytes)

    def hold_action(self) -> Any:
        """The action that keeps the controlled ports' current ECN setting.

        For controllers that act through :meth:`set_pfc` / :meth:`set_aqm` only. Given back to
        ``env.step``, it keeps the setting exactly, also where a continuous action could carry it
        only to float32 rounding.

        Raises:
            InvalidAction: If the action space cannot express the current setting.
        """
        sc = self._scenario
        mapper = sc.actions
        unit_first = [int(np.flatnonzero(mapper.groups == u)[0]) for u in range(mapper.n_units)]
        held = {}
        for j, p in enumerate(mapper.params):  # the current values of the action's parameters
            column = sc.values[:, j]
            if not np.array_equal(column, column[unit_first][mapper.groups]):
                raise InvalidAction(f"the ports of one action unit differ in {p}; no single action keeps them")
            held[p] = column[unit_first]
        action = mapper.encode(**held)
        # a continuous action carries the setting only to float32 rounding: the scenario keeps the
        # setting itself when it is given this action back
        sc.held_action = np.array(action, copy=True)
        return action

    def set_aqm(self, ports: Any, policy: str, **params: Any) -> None:
        """Choose and parameterise the AQM policy of controlled ports (``Fabric.set_aqm``).

        Raises:
            InvalidAction: If this build's fabric has no port-AQM plug-in point, or the env installs
                another policy on its controlled ports (``env.aqm``), which this one would replace.
            ConfigError: On a bad policy or parameter (from the fabric).
        """
        fabric = self._scenario.fabric
        if not hasattr(fabric, "set_aqm"):
            raise InvalidAction("this fabric has no Fabric.set_aqm (the port-AQM plug-in point)")
        env_policy = self._scenario.aqm_policy
        if env_policy is not None and aqm_policies.resolve(policy, "policy")[0] != env_policy:
            raise InvalidAction(f"env.aqm: the env installs {env_policy!r} on its controlled ports, but this "
                                f"controller installs {policy!r} there, which would replace it; leave env.aqm out, "
                                f"or set it to {policy!r}")
        with self._actuating():
            fabric.set_aqm(ports, policy, **params)

    @contextlib.contextmanager
    def _actuating(self) -> Iterator[None]:
        """Add the wall time of the block to the scenario's ``actuation_wall_s`` (see :func:`actuation_wall_s`)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self._scenario.actuation_wall_s += time.perf_counter() - start


def actuation_wall_s(env: Any) -> float:
    """Wall seconds the env's fabric has spent so far on knobs set through an :class:`EnvView`.

    :meth:`EnvView.set_aqm` and :meth:`EnvView.set_pfc` apply a controller's decision to the
    fabric, as ``env.step`` applies the ECN action: the inference accounting
    (:func:`ecngym.envs.rollout.run_episode`) counts neither as the controller's own cost. 0 for
    an env without a scenario (a foreign env).
    """
    scenario = getattr(getattr(env, "unwrapped", env), "scenario", None)
    return float(getattr(scenario, "actuation_wall_s", 0.0))
