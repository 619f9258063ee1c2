"""The Python face of the ns-3 fabric: build, advance, observe, act, read results."""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ecngym.error import ConfigError, first_offending, shown
from ecngym.sim_backend import aqm as aqm_policies
from ecngym.sim_backend.config import FabricConfig, preset_names
from ecngym.sim_backend.fabric_checks import check_int_link_rates, check_min_rate  # noqa: F401  (re-exported)
from ecngym.sim_backend.flows import flow_table_arrays, joined_flow_tables, new_flow_table
from ecngym.sim_backend.knobs import pfc_alpha_bounds
from ecngym.sim_backend.setter_args import broadcast_bytes, broadcast_reals, strictly_increasing, target_ids
from ecngym.sim_backend.telemetry import (  # noqa: F401  (re-exported: part of the fabric's API)
    TELEMETRY_KIND_TYPES,
    Telemetry,
    telemetry_layout,
    telemetry_rows,
)
from ecngym.sim_backend.topology import ALL_LAYERS, HOST_LAYER, Topology
from ecngym.units import MAX_TIME_NS, parse_time_ns
from ecngym.validation import Flag, check, range_text

if TYPE_CHECKING:  # pragma: no cover - annotations only; pandas loads when a table is asked for
    import pandas as pd

_live_fabric: weakref.ref[Fabric] | None = None


@dataclass(frozen=True)
class PortTable:
    """Static facts about every port (index = fabric-wide port id).

    Attributes:
        node: Node the port belongs to.
        peer_node: Node at the other end of its link.
        is_switch: Whether the port is a switch port (only those have ECN settings).
        switch_index: Index among switches (-1 for host ports).
        layer: Layer of its switch ("leaf", "spine", ...) or "host".
        rate_bps: Line rate.
        local_index: The port's index on its node (its links in topology order).
    """

    node: np.ndarray
    peer_node: np.ndarray
    is_switch: np.ndarray
    switch_index: np.ndarray
    layer: np.ndarray
    rate_bps: np.ndarray
    local_index: np.ndarray | None = None

    def switch_ports(self, layer: str | None = None) -> np.ndarray:
        """Return the ids of switch egress ports, optionally of one layer only."""
        mask = self.is_switch if layer is None else (self.layer == layer)
        return np.flatnonzero(mask).astype(np.uint32)

    def __len__(self) -> int:
        return len(self.node)


class Fabric:
    """A packet-level RoCEv2 / DCTCP datacenter fabric simulated by ns-3.

    ns-3's simulator is a process-wide singleton, so one ``Fabric`` may be open per process
    (``close()`` it, or drop every reference to it, before building another); run several
    processes for parallelism (vector envs do). :meth:`reset` rebuilds in the same process.

    Args:
        topology: A :class:`Topology` or a topology config mapping (``{"kind": "leaf_spine", ...}``).
        flows: The flow table: an ``ecngym.workloads.Trace``, a DataFrame with ``src, dst,
            size_bytes, start_ns[, priority]``, a mapping of those columns (NumPy arrays or lists
            of ints: a process that passes one never loads pandas), or a path to a Parquet trace /
            HPCC flow file.
        config: A :class:`FabricConfig`, a preset name (``"hpcc"``, ``"dcqcn_paper"``,
            ``"dctcp"``) or a config mapping.
        seed: Overrides ``config.seed`` if given.

    Raises:
        ConfigError: On any invalid topology, flow or config field, or a ``config`` of another type.
        RuntimeError: If another Fabric is still open in this process.
    """

    def __init__(
        self,
        topology: Topology | dict[str, Any],
        flows: Any,
        config: FabricConfig | str | dict[str, Any] | None = None,
        *,
        seed: int | None = None,
    ) -> None:
        self.topology = topology if isinstance(topology, Topology) else Topology.from_config(topology)
        if config is None:
            config = FabricConfig()
        elif isinstance(config, str):
            config = FabricConfig.preset(config)
        elif isinstance(config, Mapping):
            config = FabricConfig.from_dict(config)
        elif not isinstance(config, FabricConfig):
            raise ConfigError("fabric", f"expected a FabricConfig, a preset name ({', '.join(preset_names())}) "
                                        f"or a mapping of fields, got {config!r}")
        if seed is not None:
            config = config.updated({"seed": seed})
        self.config: FabricConfig = config
        self._flows = flow_table_arrays(flows, num_hosts=self.topology.num_hosts, topology=self.topology)
        self._flow_frame: pd.DataFrame | None = None
        self._cpp_config = config.to_cpp()
        top = int(self._flows["priority"].max()) if len(self._flows["src"]) else 0
        if top >= self._cpp_config.num_queues:
            raise ConfigError("fabric.num_queues", f"got {self._cpp_config.num_queues}, but the flows use "
                              f"priority {top} (queue 0 is the control queue): need at least {top + 1}")
        self.topology.check_buildable()
        check_min_rate(self.topology, config)
        check_int_link_rates(self.topology, config)
        self._sim: Any = None
        self._build()

    @property
    def flows(self) -> pd.DataFrame:
        """The validated flow table (:func:`~ecngym.sim_backend.flows.as_flow_table`), made on first use."""
        if self._flow_frame is None:
            self._flow_frame = flow_frame(self._flows)
        return self._flow_frame

    # ------------------------------------------------------------------ lifecycle
    def _build(self) -> None:
        global _live_fabric
        from ecngym.sim_backend import _fabric

        other = _live_fabric() if _live_fabric is not None else None
        if other is not None and other is not self and other._sim is not None:
            raise RuntimeError(
                "another ecngym Fabric is open in this process (ns-3's simulator is a process-wide "
                "singleton): call .close() on it first, or use one process per fabric "
                "(e.g. gymnasium's AsyncVectorEnv)"
            )
        t = self.topology
        sim = _fabric.Fabric(self._cpp_config)
        try:
            sim.set_node_ids(t.node_ids().astype(np.uint32))
            sim.build(t.is_switch(), t.link_a, t.link_b, t.rate_bps, t.delay_ns)
            f = self._flows
            sim.set_flows(
                f["src"].astype(np.uint32),
                f["dst"].astype(np.uint32),
                f["size_bytes"].astype(np.uint64),
                f["start_ns"].astype(np.int64),
                f["priority"].astype(np.uint8),
                f["dport"].astype(np.uint16),
            )
            if "extra_delay_ns" in f and f["extra_delay_ns"].any():
                sim.set_flow_extra_delay(f["extra_delay_ns"].astype(np.int64))
            info = sim.port_info()
            self._apply_port_settings(sim, info)
        except BaseException:
            sim.destroy()
            raise
        self._sim = sim
        _live_fabric = weakref.ref(self)
        sw_index = info["switch_index"].astype(np.int64)
        sw_index[~info["is_switch"].astype(bool)] = -1
        layers = np.array(t.switch_layers + [HOST_LAYER], dtype=object)
        self.ports = PortTable(
            node=info["node"],
            peer_node=info["peer_node"],
            is_switch=info["is_switch"].astype(bool),
            switch_index=sw_index,
            layer=layers[np.where(sw_index >= 0, sw_index, len(t.switch_layers))],
            rate_bps=info["rate_bps"],
            local_index=info["local_index"],
        )
        try:
            self._install_layer_aqm()
        except BaseException:
            self.close()
            raise

    def _install_layer_aqm(self) -> None:
        """Install ``config.aqm`` over the ports' birth policy: the named layers, and every setting's per-rate entries.

        Every port was born with the ``all`` setting (:meth:`FabricConfig.to_cpp`); its per-rate
        entries come first, then each named layer's setting and its per-rate entries.
        """
        from ecngym.sim_backend.port_settings import ports_by_rate

        known = sorted(set(self.topology.switch_layers))
        for layer, setting in self.config.aqm_settings().items():
            field = f"fabric.aqm.{layer}"
            if layer != ALL_LAYERS and layer not in known:
                raise ConfigError(field, f"no switch layer {layer!r} in this topology; layers: {ALL_LAYERS!r}, "
                                  + ", ".join(map(repr, known)))
            ports = self.ports.switch_ports(None if layer == ALL_LAYERS else layer)
            if layer != ALL_LAYERS:
                self._set_aqm_checked(ports, setting.policy, setting.params, field)
            for group, params in ports_by_rate(setting.by_rate, ports, self.ports.rate_bps[ports], f"{field}.by_rate"):
                self._set_aqm_checked(group, setting.policy, params, f"{field}.by_rate")

    def _apply_port_settings(self, sim: Any, info: dict[str, Any]) -> None:
        """Per-port PFC headroom / alpha from each port's link (HPCC's rules)."""
        from ecngym.sim_backend.port_settings import pfc_by_port

        is_switch = info["is_switch"].astype(bool)
        pfc = pfc_by_port(self.config, self.topology, info["rate_bps"], is_switch)
        if pfc is not None:
            sim.set_port_pfc(*pfc)

    def reset(self, seed: int | None = None) -> None:
        """Tear down and rebuild the same fabric (same flows) at time 0, optionally reseeded.

        Raises:
            ConfigError: If ``seed`` is invalid; the running fabric is then left untouched.
        """
        if seed is not None:  # validate before tearing anything down
            config = self.config.updated({"seed": seed})
            cpp_config = config.to_cpp()
        self.close()
        if seed is not None:
            self.config, self._cpp_config = config, cpp_config
        self._build()

    def close(self) -> None:
        """Destroy the simulation (safe to call twice)."""
        if self._sim is not None:
            self._sim.destroy()
            self._sim = None

    def __enter__(self) -> Fabric:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def sim(self) -> Any:
        """The low-level C++ fabric (raises if closed)."""
        if self._sim is None:
            raise RuntimeError("this Fabric is closed")
        return self._sim

    # ------------------------------------------------------------------ time
    @property
    def now_ns(self) -> int:
        """Current simulated time in ns."""
        return int(self.sim.now_ns)

    def run_until(self, t: Any) -> None:
        """Advance simulated time to ``t`` (absolute; ns or a duration string such as "2ms")."""
        t_ns = parse_time_ns(t, "until")
        if t_ns < self.now_ns:
            raise ConfigError("until", f"got {t_ns} ns, must be >= now ({self.now_ns} ns)")
        self.sim.run_until(t_ns)

    def advance(self, dt: Any) -> None:
        """Advance simulated time by ``dt`` (ns or a duration string).

        Raises:
            ConfigError: If ``dt`` is not a duration, or now + ``dt`` lies beyond the fabric's
                clock (2^62 ns, :data:`~ecngym.units.MAX_TIME_NS`).
        """
        dt_ns = parse_time_ns(dt, "dt")
        now = self.now_ns
        if now + dt_ns > MAX_TIME_NS:
            raise ConfigError("dt", f"got {dt!r}: now ({now} ns) + dt = {now + dt_ns} ns, allowed: at most "
                                    f"{MAX_TIME_NS - now} ns, so that the time stays within [0, 2^62] ns")
        self.sim.run_until(now + dt_ns)

    def run(self, limit: Any = "10s") -> bool:
        """Run until every flow has finished or the absolute time ``limit``; return whether all did."""
        return bool(self.sim.run_to_completion(parse_time_ns(limit, "limit")))

    def replace_pending_flows(self, flows: Any) -> int:
        """Drop every flow that has not started yet and add ``flows`` instead.

        For a branch of a running episode that plays a forecast instead of the trace's future
        (docs: concepts/fabric-and-models.md). Started flows keep their ids and state; the new
        ones take the next ids, each set up as a flow loaded at build time; :attr:`flows` becomes
        the table the records describe. Needs a table in start order (a Trace is).

        Args:
            flows: The new flows (columns as :func:`as_flow_table` reads them), every start at or
                after :attr:`now_ns`; may be empty.

        Returns:
            How many pending flows were dropped.

        Raises:
            ConfigError: Naming ``flows.<column>`` and the first bad row.
            RuntimeError: If a started flow has a later row than a pending one.
        """
        table = new_flow_table(flows, self.topology, self.now_ns, self._cpp_config.num_queues)
        extra = table["extra_delay_ns"] if "extra_delay_ns" in table.columns else np.zeros(0, np.int64)
        try:
            dropped = int(self.sim.replace_pending_flows(
                *(table[c].to_numpy(t) for c, t in (("src", np.uint32), ("dst", np.uint32), ("size_bytes", np.uint64),
                                                    ("start_ns", np.int64), ("priority", np.uint8),
                                                    ("dport", np.uint16))), np.asarray(extra, np.int64)))
        except ValueError as exc:  # the C++ row checks (no path from src to dst)
            raise ConfigError("flows", str(exc)) from None
        frame = joined_flow_tables(self.flows.iloc[:len(self.flows) - dropped], table)
        self._flow_frame = frame
        self._flows = {c: frame[c].to_numpy() for c in frame.columns}
        return dropped

    # ------------------------------------------------------------------ observe
    def read_telemetry(self) -> dict[str, Any]:
        """Per-port telemetry since the previous call (one array entry per port id).

        Keys: ``interval_start_ns``, ``interval_end_ns`` and arrays ``tx_bytes``,
        ``tx_data_bytes``, ``tx_data_packets``, ``tx_control_packets``, ``enqueued_data_packets``
        (data packets that joined the port's queues), ``mean_queue_bytes``
        (time-average of data-queue bytes), ``max_queue_bytes``, ``queue_bytes`` (now),
        ``ecn_marked_packets``, ``pfc_pause_sent``, ``pfc_pause_received``, ``paused_ns``,
        ``drops``, ``distinct_flows``, the per-policy arrays ``"<policy>.<name>"`` of ports
        running a non-RED policy (:mod:`ecngym.sim_backend.aqm`), and ``utilization`` (tx bits /
        (rate x interval), 0 for an empty interval).
        """
        return self.read_telemetry_block().as_dict()

    def read_telemetry_block(self) -> Telemetry:
        """:meth:`read_telemetry` as the fabric hands it over: one array for every port and quantity.

        For readers that want a few quantities of a few ports (the envs): no per-key arrays
        are built until asked for (:meth:`Telemetry.rows`).
        """
        return Telemetry(*self.sim.read_telemetry())

    def counters(self) -> dict[str, int]:
        """Cumulative counters: data / control packet-hops, drops, events, flows completed."""
        return dict(self.sim.counters())

    # ------------------------------------------------------------------ act
    def set_red(self, ports: Any, kmin: Any, kmax: Any, pmax: Any) -> None:
        """``set_aqm_per_port(ports, "red", kmin_bytes=kmin, kmax_bytes=kmax, pmax=pmax)``: RED's curve per port."""
        self.set_aqm_per_port(ports, "red", kmin_bytes=kmin, kmax_bytes=kmax, pmax=pmax)

    def set_aqm(self, ports: Any, policy: str, **params: Any) -> None:
        """Install an AQM policy on switch ports, effective from now.

        A port already running ``policy`` keeps its state (flow counts, held ACKs) and takes the
        given parameters; other ports get a fresh instance with defaults for the parameters not
        given. See :mod:`ecngym.sim_backend.aqm` for the policies and their parameters.

        Args:
            ports: Switch port ids (see ``self.ports``).
            policy: Short name (``"red"``, ``"pred"``, ...) or C++ TypeId name.
            **params: The policy's parameters (snake case; human units allowed), one value for
                every port (:meth:`set_aqm_per_port`: one per port).

        Raises:
            ConfigError: On a host or unknown port, an unknown policy or parameter, or a value
                outside its range (naming policy, field and range). Nothing changes then.
        """
        self._set_aqm_checked(self._switch_port_ids(ports), policy, params, None)

    def _set_aqm_checked(self, ports: np.ndarray, policy: str, params: dict[str, Any], prefix: str | None) -> None:
        short, type_name = aqm_policies.resolve(policy, f"{prefix or 'aqm'}.policy")
        values = aqm_policies.validate_params(short, params, prefix)
        names, strings = aqm_policies.to_attributes(short, values)
        try:
            self.sim.set_aqm(ports.tolist(), type_name, names, strings)
        except ValueError as e:
            raise aqm_policies.consistency_error(short, str(e), prefix) from None

    def set_aqm_per_port(self, ports: Any, policy: str, **params: Any) -> None:
        """:meth:`set_aqm` with numeric parameters given one per port (a value may still be one for all).

        Args:
            ports: Switch port ids (see ``self.ports``).
            policy: Short name or C++ TypeId name.
            **params: Numeric or boolean parameters (snake case; human units allowed): one value,
                or one per port.

        Raises:
            ConfigError: On a host or unknown port, an unknown policy or parameter, a value outside
                its range (naming the entry, its port and the count of further bad entries) or a
                port whose setting breaks the policy's consistency rule. Nothing changes then.
        """
        ids = self._switch_port_ids(ports)
        short, type_name = aqm_policies.resolve(policy)
        names, rows = aqm_policies.validate_rows(short, params, ids)
        try:
            self.sim.set_aqm_values(ids, type_name, names, rows)
        except ValueError as e:
            err = aqm_policies.consistency_error(short, str(e))
            row = re.match(r"port_ids\[(\d+)\]: ", err.message)  # the C++ names the row: name its port
            if row is None:
                raise err from None
            raise ConfigError(err.field, f"port {int(ids[int(row[1])])}: {err.message[row.end():]}") from None

    def set_aqm_values(self, ports: np.ndarray, policy: str, params: tuple[str, ...], values: np.ndarray) -> None:
        """Set numeric parameters of ``policy`` per port, one row of ``values`` per port (the envs' actuation).

        The typed form of :meth:`set_aqm_per_port` for a call per control interval: the arrays go to
        C++ as they are, whose checkers (the same ranges) refuse a bad value before any port
        changes; only a refusal goes through :meth:`set_aqm_per_port` for the error naming the field.

        Args:
            ports: Switch port ids, ``uint32``, increasing.
            policy: Short name of the policy.
            params: Parameter names (snake case), one per column of ``values``.
            values: ``float64`` array of shape ``(len(ports), len(params))`` in internal units
                (bytes, ns; booleans 0 / 1).

        Raises:
            ConfigError: As :meth:`set_aqm_per_port`. Nothing changes then.
        """
        type_name, attributes = _typed_columns(policy, tuple(params))
        if (isinstance(ports, np.ndarray) and ports.dtype == np.uint32 and ports.ndim == 1
                and strictly_increasing(ports) and isinstance(values, np.ndarray) and values.dtype == np.float64
                and values.flags.c_contiguous):
            try:
                self.sim.set_aqm_values(ports, type_name, attributes, values)
                return
            except ValueError:
                pass  # named below
        cols = np.asarray(values)
        if cols.ndim != 2 or cols.shape[1] != len(params):
            raise ConfigError("values", f"expected one row per port and one column per parameter ({len(params)}), "
                                        f"got shape {cols.shape}")
        self.set_aqm_per_port(ports, policy, **{name: cols[:, k] for k, name in enumerate(params)})

    def get_aqm_values(self, ports: Any, policy: str, params: tuple[str, ...]) -> np.ndarray:
        """Numeric parameters of ``policy`` per port (the reverse of :meth:`set_aqm_values`).

        Returns:
            ``float64`` array ``(len(ports), len(params))``, NaN in the rows of ports running another
            policy.

        Raises:
            ConfigError: On a host or unknown port, an unknown policy or parameter.
        """
        type_name, attributes = _typed_columns(policy, tuple(params))
        return self.sim.get_aqm_values(self._switch_port_ids(ports), type_name, attributes)

    def get_aqm(self, ports: Any) -> dict[str, Any] | list[dict[str, Any]]:
        """Return ``{"policy": name, param: value, ...}`` of a port (a list for several ports).

        Raises:
            ConfigError: On a host or unknown port.
        """
        ids = self._switch_port_ids(ports)
        out = [aqm_policies.from_attributes(*self.sim.get_aqm(int(p))) for p in ids]
        return out[0] if np.ndim(ports) == 0 else out

    def _switch_port_ids(self, ports: Any) -> np.ndarray:
        ids = target_ids(ports, "ports", len(self.ports))
        if not np.all(self.ports.is_switch[ids]):
            bad = int(ids[~self.ports.is_switch[ids]][0])
            raise ConfigError("ports", f"port {bad} is a host port; only switch ports run AQM policies")
        return ids.astype(np.uint32)

    def get_red(self) -> dict[str, np.ndarray]:
        """Current ``kmin_bytes``, ``kmax_bytes``, ``pmax`` of every port (0 where it runs no RED)."""
        ports = self.ports.switch_ports()
        rows = np.nan_to_num(self.get_aqm_values(ports, "red", _RED_PARAMS), nan=0.0)
        out = {name: np.zeros(len(self.ports), dtype=np.float64 if name == "pmax" else np.uint64)
               for name in _RED_PARAMS}
        for k, name in enumerate(_RED_PARAMS):
            out[name][ports] = rows[:, k]
        return out

    def set_pfc(self, switches: Any, alpha: Any, headroom: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Set the PFC dynamic-threshold alpha and the per-port headroom of switches, from now.

        Args:
            switches: Switch indices (integers; one or a flat list).
            alpha: One alpha, or one per switch, in the simulator's range (``PfcAlpha``: (0, 64]).
            headroom: One size, or one per switch (bytes or size strings).

        Returns:
            What was set: (switch indices int64, alpha float64, headroom bytes uint64), one entry per
            switch.

        Raises:
            ConfigError: If a switch index is not an integer in range, alpha is outside (0, 64] or a
                headroom is not a size or larger than the buffer (nothing changes then).
        """
        sw = target_ids(switches, "switches", self.topology.num_switches)
        n = len(sw)
        alpha_a = broadcast_reals(alpha, n, "alpha")
        low, high, low_open = pfc_alpha_bounds()  # the simulator's PfcAlpha checker
        bad = np.flatnonzero(~(((alpha_a > low) if low_open else (alpha_a >= low)) & (alpha_a <= high)))  # NaN too
        if len(bad):
            i, more = first_offending(bad)
            raise ConfigError(f"alpha[{i}]" if n > 1 else "alpha",
                              f"got {shown(alpha_a[i])}{more}, allowed range is "
                              f"{range_text(low, high, low_open=low_open)}")
        head = broadcast_bytes(headroom, n, "headroom")
        buffer_bytes = self.config.buffer.buffer
        over = np.flatnonzero(head > buffer_bytes)
        if len(over):  # as fabric.buffer.headroom is refused: no port could ever reserve it
            i, more = first_offending(over)
            raise ConfigError(f"headroom[{i}]" if n > 1 else "headroom", f"got {int(head[i])} B{more}, more than "
                              f"the whole buffer (fabric.buffer.buffer = {buffer_bytes} B)")
        self.sim.set_pfc(sw.astype(np.uint32), alpha_a, head)
        return sw, alpha_a, head

    def get_port_pfc(self) -> dict[str, np.ndarray]:
        """Current PFC ``alpha`` and ``headroom_bytes`` of every ingress port (0 for host ports)."""
        return dict(self.sim.get_port_pfc())

    def log_pfc_events(self, on: bool = True) -> None:
        """Record every PFC frame a port receives, from now (:meth:`pfc_events`); ``False`` stops.

        Raises:
            ConfigError: If ``on`` is not a boolean (``"no"`` is not ``False``).
        """
        self.sim.log_pfc_events(check("on", on, Flag))

    # ------------------------------------------------------------------ results
    def pfc_events(self) -> pd.DataFrame:
        """The PFC frames recorded since :meth:`log_pfc_events`, in arrival order.

        Columns: ``time_ns``, ``port`` (the receiving port id: its queue is paused or resumed),
        ``pause`` (True: a pause, False: a resume).
        """
        import pandas as pd

        ev = self.sim.pfc_events()
        return pd.DataFrame({"time_ns": ev["time_ns"], "port": ev["port"], "pause": ev["pause"].astype(bool)})

    def flow_records(self) -> pd.DataFrame:
        """One row per flow: sizes, times, FCT, ideal FCT and slowdown.

        ``fct_ns`` runs from the flow's start to the sender's receipt of the ACK of its last byte;
        ``ideal_fct_ns`` = base RTT + (size + header x packets) x 8 / bottleneck rate (the HPCC
        definition); ``slowdown`` = max(1, fct / ideal), NaN for unfinished flows.
        ``cc_utilisation`` is the congestion control's own estimate of its bottleneck's utilisation
        where it keeps one (HPCC's smoothed U, Li et al. §3.2), NaN otherwise and once finished;
        ``cc_alpha`` likewise DCTCP's alpha. ``rto_ns`` is the flow's retransmission timeout now:
        ``fabric.retransmit_timeout``, or the RFC 6298 estimate with ``fabric.dctcp.rto_estimate``.
        """
        return flow_frame(self.flow_columns())

    def flow_columns(self) -> dict[str, np.ndarray]:
        """:meth:`flow_records` as NumPy arrays by column (new arrays every call)."""
        r = self.sim.flow_records()
        # columns computed on the arrays, one DataFrame built at the end (envs call this at the end
        # of every episode; inserting columns one by one cost ~1 ms)
        cols: dict[str, Any] = {"flow_id": np.arange(len(r["finished"]))}
        cols.update(r)
        finished = cols["finished"] = np.asarray(r["finished"]).astype(bool)
        fct = np.where(finished, r["finish_ns"] - r["start_ns"], np.nan)
        cols["fct_ns"] = fct
        cols["slowdown"] = np.maximum(1.0, fct / np.asarray(r["ideal_fct_ns"]))
        return cols


def flow_frame(columns: dict[str, np.ndarray]) -> pd.DataFrame:
    """:meth:`Fabric.flow_records` of :meth:`Fabric.flow_columns`' arrays (held, not copied: they are new)."""
    import pandas as pd

    return pd.DataFrame(columns, copy=False)




#: RED's curve, as :meth:`Fabric.set_red` / :meth:`Fabric.get_red` name it.
_RED_PARAMS = aqm_policies.ACTION_PARAMS["red"]


@functools.cache
def _typed_columns(policy: str, params: tuple[str, ...]) -> tuple[str, list[str]]:
    """``(TypeId name, attribute names)`` of a policy's parameters (validated once per distinct call)."""
    short, type_name = aqm_policies.resolve(policy)
    spec = aqm_policies.policy_spec(short)
    unknown = [p for p in params if p not in spec]
    if unknown:
        raise ConfigError(f"aqm.{short}.{unknown[0]}",
                          f"{short} has no parameter {unknown[0]!r}; known: {', '.join(spec)}")
    return type_name, [spec[p].attribute for p in params]
