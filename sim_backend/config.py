"""Fabric configuration: typed, validated, in human units, converted once to the C++ config.

Every field accepts human units ("100Gbps", "5KB", "10us") or plain numbers in the internal units
(bits/s, bytes, ns). Validation raises :class:`ecngym.error.ConfigError` naming the field and the
allowed range; nothing is clamped.

Presets (``FabricConfig.preset(name)``):

``hpcc``
    The HPCC RDMA model's settings used by the reference runs in ``shared/reference/hpcc-model``:
    Mellanox-style DCQCN (1 / 4 / 300 us timers, F = 1, AI / HAI 20 / 200 Mbps, Rmin 1 Gbps, no
    cut on the first CNP), CE echoed on every ACK (no CNP packets), one 60 B ACK per 1052 B data
    packet, ECN 400 KB / 1600 KB / 0.2 marked at dequeue, 32 MiB buffer, PFC alpha 1/8, 37.5 KB
    headroom, 4 KiB reserve, resume 3 KiB below the threshold; and four behaviours of that model
    (checked against its source and its FCT output): its NIC's pacing wake-up rule
    (``nic_pacing_wake="hpcc"``), switches queueing ACKs behind data in the flow's queue
    (``switch_ack_queue="flow"``), its ECMP hash (``ecmp_hash="hpcc"``) and ns-3.36's
    whole-ns serialisation times (``tx_time_rounding="truncate"``).
``dcqcn_paper``
    DCQCN as published (Zhu et al. 2015; ByteTuning Tab. 4; docs: algorithms/bytetuning.md §2.1): cut on every CNP,
    alpha decay 55 us, rate-increase timer 55 us, 10 MB byte counter, F = 5, AI 40 Mbps, CNPs paced at 50 us
    per flow, ECN 5 KB / 200 KB / 1% at enqueue. HAI 100 Mbps is ours (the paper's table omits it).
``dctcp``
    Hardware-style DCTCP on the same NIC (g = 1/16, per-packet ECN echo, line-rate start, window =
    path BDP) with step marking K = 65 packets' worth of bytes at enqueue.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import Field

from ecngym.error import ConfigError, check_range
from ecngym.units import parse_bytes, parse_rate_bps
from ecngym.validation import MAX_SIMULATION_SEED, Bytes, Duration, Flag, OneOf, Real, Whole, check

NUM_QUEUES_MAX = 8

#: Per-flow extra base delays to draw from (``flows.with_delay_classes``, ``env.delay_classes``): a
#: list of at least one delay, each ns or a duration string ("20us") in [0, 2^62] ns.
DelayClasses = Annotated[list[Duration()], Field(min_length=1)]

#: ``FabricConfig.scheduler`` choices -> the ns-3 event scheduler (TypeId). All run events in the
#: same order (timestamp, then insertion), so the choice changes speed, never results.
SCHEDULERS = {
    "timing_wheel": "ns3::ecngym::TimingWheelScheduler",  # ours: ns buckets over 16 us + a heap
    "priority_queue": "ns3::PriorityQueueScheduler",
    "map": "ns3::MapScheduler",
    "heap": "ns3::HeapScheduler",
    "calendar": "ns3::CalendarScheduler",
    "list": "ns3::ListScheduler",
}


@dataclass
class DcqcnParams:
    """DCQCN reaction-point parameters (see ``dcqcn-rate-control.h``)."""

    g: float = 1.0 / 256
    initial_alpha: float = 1.0
    alpha_interval: Any = "1us"
    decrease_interval: Any = "4us"
    increase_timer: Any = "300us"
    byte_counter: Any = "0B"
    fast_recovery_steps: int = 1
    ai_rate: Any = "20Mbps"
    hai_rate: Any = "200Mbps"
    min_rate: Any = "1Gbps"
    rate_on_first_cnp: float = 1.0
    clamp_target_rate: bool = False
    cut_on_cnp: bool = False


@dataclass
class DctcpParams:
    """DCTCP host parameters (see ``dctcp-window-control.h``; docs/concepts/tcp-hosts.md).

    The first fields are the NIC-style model's; ``min_window`` is the window floor of both models
    (one or two MSS: ``"1000B"`` / ``"2000B"``). The Linux-like options (all off by default: the
    NIC-style model, bit-identical) are the C++ ``TcpHostOptions`` attributes, whose checkers
    hold their ranges (:func:`tcp_host_spec`): ``slow_start`` from ``initial_cwnd_packets`` MSS
    up to ``ssthresh_bytes`` (0 = unbounded); ``handshake`` (SYN / SYN-ACK / ACK through the
    switches before the data); ``rto_estimate`` (RFC 6298 from SRTT / RTTVAR within
    [``min_rto_ns``, ``max_rto_ns``], ``initial_rto_ns`` before the first sample and for the SYN,
    doubled per timeout; off: the fixed ``fabric.retransmit_timeout``); ``delayed_ack`` (an ACK
    every second packet or after ``delayed_ack_timeout_ns``, with DCTCP's CE-state rule, RFC 8257
    §3.2). Times accept durations ("200ms"), sizes byte strings ("64KB").
    """

    g: float = 1.0 / 16
    initial_alpha: float = 1.0
    initial_window: Any = "0B"  # 0 = the path's bandwidth-delay product
    min_window: Any = "1000B"
    # Flows of one host pair share a pool of persistent connections that keep their window and
    # alpha between flows (the HKUST-SING TrafficGenerator's client; README "Persistent
    # connections"); False = every flow is a fresh connection.
    persistent_connections: bool = False
    # The Linux-like options: defaults = TcpHostOptions' attribute defaults (a test checks them)
    slow_start: bool = False
    initial_cwnd_packets: int = 10
    ssthresh_bytes: Any = 0
    handshake: bool = False
    rto_estimate: bool = False
    min_rto_ns: Any = 200_000_000
    initial_rto_ns: Any = 1_000_000_000
    max_rto_ns: Any = 120_000_000_000
    delayed_ack: bool = False
    delayed_ack_timeout_ns: Any = 40_000_000


#: The fields of :class:`DctcpParams` that are ``TcpHostOptions`` attributes (the Linux-like options)
TCP_HOST_FIELDS = ("slow_start", "initial_cwnd_packets", "ssthresh_bytes", "handshake", "rto_estimate",
                   "min_rto_ns", "initial_rto_ns", "max_rto_ns", "delayed_ack", "delayed_ack_timeout_ns")


@functools.cache
def tcp_host_spec() -> dict[str, Any]:
    """Return the Linux-like DCTCP host options as the C++ ``TcpHostOptions`` TypeId declares them.

    Returns:
        Field name -> :class:`ecngym.sim_backend.aqm.ParamSpec` (range, default, help), read from
        the attributes' checkers: the one home of each option's allowed range.
    """
    from ecngym.sim_backend import _fabric
    from ecngym.sim_backend.aqm import spec_of_attribute

    return {s.name: s for s in map(spec_of_attribute, _fabric.describe_tcp_host())}


@dataclass
class DctcpRateParams:
    """DCTCP as the HPCC model runs it (``CC_MODE 8``, rate-based; see ``dctcp-rate-control.h``)."""

    g: float = 1.0 / 16
    initial_alpha: float = 1.0
    ai_rate: Any = "615Mbps"  # run.py: one 1 KB MTU per 13 us RTT
    min_rate: Any = "1Gbps"


@dataclass
class TimelyParams:
    """TIMELY as the HPCC model runs it (``CC_MODE 7``; see ``timely-rate-control.h``).

    ``alpha``, ``beta``, ``t_low``, ``t_high`` and ``min_rtt`` are the model's attribute defaults
    (not config keys there); the rates are run.py's at 100 Gbps.
    """

    alpha: float = 0.875
    beta: float = 0.8
    t_low: Any = "50us"
    t_high: Any = "500us"
    min_rtt: Any = "20us"
    ai_rate: Any = "100Mbps"
    hai_rate: Any = "500Mbps"
    hai_after: int = 5
    min_rate: Any = "1Gbps"


@dataclass
class HpccParams:
    """HPCC (Li et al., SIGCOMM 2019) as the HPCC model runs it (``CC_MODE 3``).

    One rate per queue pair (``MULTI_RATE 0``); see ``hpcc-rate-control.h``.
    """

    target_util: float = 0.95
    ai_rate: Any = "40Mbps"  # run.py at 100 Gbps: 10 Mbps x bw / 25G
    mi_thresh: int = 0
    fast_react: bool = True
    sample_feedback: bool = False
    int_multi: int = 1
    min_rate: Any = "1Gbps"


@dataclass
class WindowParams:
    """The HPCC model's NIC window (``HAS_WIN`` / ``VAR_WIN`` / ``GLOBAL_T``), for any rate-based CC.

    With ``enabled``, a queue pair may have at most W bytes unacknowledged, W = the base-RTT BDP
    (``scope="global"``: the largest over all host pairs, as ``GLOBAL_T 1``; ``"pair"``: its own
    pair's); ``variable`` scales it by rate / line rate (``VAR_WIN 1``). Sending stays paced.
    """

    enabled: bool = False
    variable: bool = True
    scope: str = "global"


@dataclass
class BufferParams:
    """Shared-buffer MMU and PFC (see ``shared-buffer-mmu.h``).

    ``headroom_rule`` and ``pfc_alpha_rule`` choose how each switch ingress port gets its headroom
    and its dynamic-threshold alpha: ``"fixed"`` gives every port ``headroom`` and ``pfc_alpha``;
    the HPCC model's rules (``sim_backend/port_settings.py``) set them per port, as its reference
    program does on mixed-rate fabrics: ``"rate_delay"`` headroom = ``headroom_delays`` x link
    rate x link delay (3 x 12.5 KB = 37.5 KB at 100 Gbps, 1 us), ``"by_rate"`` doubles alpha from
    ``pfc_alpha`` once per halving of the port's rate down to the NIC rate (at most 1).
    """

    buffer: Any = "32MiB"
    reserve: Any = "4KiB"
    headroom: Any = "37.5KB"
    resume_offset: Any = "3KiB"
    pfc_alpha: float = 0.125
    pfc_enabled: bool = True
    pause_quanta: int = 65535
    headroom_rule: str = "fixed"
    headroom_delays: int = 3
    pfc_alpha_rule: str = "fixed"


@dataclass
class EcnParams:
    """Initial RED / ECN setting of every switch egress port.

    ``by_rate`` maps a link rate to its own ``{kmin, kmax, pmax}`` (the HPCC model's
    ``KMIN_MAP`` / ``KMAX_MAP`` / ``PMAX_MAP``): when it is not empty, every switch port takes the
    entry of its rate, and a port whose rate has no entry is an error (as in the reference program).
    """

    kmin: Any = "5KB"
    kmax: Any = "200KB"
    pmax: float = 0.01
    mark_at: str = "enqueue"  # "enqueue" or "dequeue"
    by_rate: dict = field(default_factory=dict)


#: The keys of a fabric mapping that choose its base (:meth:`FabricConfig.from_dict`): a preset or
#: an HPCC config file. A mapping names one at most; an override naming one replaces the other.
BASE_KEYS = ("preset", "hpcc_config")


@dataclass
class FabricConfig:
    """Everything about a fabric except its topology and its flows.

    Attributes:
        cc: Host congestion control: ``"dcqcn"``, ``"dctcp"`` (window-based), ``"dctcp_rate"``
            (the HPCC model's rate-based DCTCP), ``"timely"`` or ``"hpcc"``. DCQCN with a BDP
            window (the HPCC model's ``dcqcn_vwin``) is ``"dcqcn"`` with ``window.enabled``.
        window: The NIC window of any rate-based CC (:class:`WindowParams`).
        ecn_feedback: ``"cnp"`` (notification point sends CNPs) or ``"ack_echo"`` (every ACK
            echoes CE, as the HPCC model does). DCTCP always reads the echo on ACKs.
        seed: Seed of every random decision inside the fabric (ECMP salt, RED draws).
        num_queues: Queues per port including the strict-priority control queue 0 (2..8).
        mtu_payload: Payload bytes per data packet.
        data_header: Wire overhead per data packet (RoCEv2 headers).
        ack_size, cnp_size, pfc_frame_size: Wire sizes of control packets.
        ack_interval_packets: One ACK per this many in-order data packets (and for the last one).
        cnp_interval: Minimum gap between two CNPs of one flow (CNP mode).
        retransmit_timeout: Go-back-N timeout without progress.
        nic_pacing_wake: ``"exact"`` (the NIC wakes at the earliest pacing time of its queue pairs)
            or ``"hpcc"`` (as the HPCC model's ns-3.36 port: no wake-up is scheduled while a
            queue pair has sent everything and awaits ACKs; paced queue pairs then wait for the
            next ACK or completion). The ``hpcc`` preset uses ``"hpcc"`` to match the reference runs.
        switch_ack_queue: Where switches queue ACKs / NACKs: ``"control"`` (the strict-priority
            queue 0, with CNPs and PFC frames) or ``"flow"`` (the data queue of the flow's
            priority, FIFO behind data and charged to the shared buffer, as the HPCC model's
            switch does: its ``AckHighPrio`` attribute defaults to 0 and its reference driver
            never sets it; ACK_HIGH_PRIO there only raises the NIC's ACK queue). Hosts always send
            ACKs first.
        ecmp_hash: ``"salted"`` (a per-flow hash mixed with a per-switch salt from ``seed``) or
            ``"hpcc"`` (the HPCC model's MurmurHash3 of (source IP, destination IP, ports) seeded
            by the switch's node id, with its addressing: host IP 11.0.x.1 from the node id,
            source ports 10000, 10001, ... per host pair in flow-table order, destination port
            100; next hops in node order). ``"hpcc"`` reproduces the reference runs' paths; it
            does not depend on ``seed``.
        aqm: Port AQM policy per switch layer, installed at build time: ``{"all" | layer:
            {"policy": name, **parameters}}`` ("all" first, then named layers), e.g.
            ``{"leaf": {"policy": "pred", "lambda_qla": 0.1}}``. Ports not named run RED with the
            ``ecn`` setting. Policies and parameters: :mod:`ecngym.sim_backend.aqm`.
        tx_time_rounding: ``"carry"`` (a packet's serialisation time is rounded to the ns clock
            and the remainder carried to the next packet: the exact line rate on average) or
            ``"truncate"`` (each serialisation and pacing time is truncated to whole ns, as
            ns-3.36's ``DataRate::CalculateBytesTxTime`` does in the HPCC model: 1052 B take
            84 ns at 100 Gbps instead of 84.16, so links run ~0.2% fast).
        scheduler: ns-3's event scheduler: ``"timing_wheel"`` (ours, the default: a nanosecond
            timing wheel over 16 us plus a heap for later events, ``timing-wheel-scheduler.h``)
            or one of ns-3's own, ``"priority_queue"``, ``"map"``, ``"heap"``, ``"calendar"``,
            ``"list"``. Every scheduler runs events in the same order, so results are
            bit-identical; only the speed differs.
    """

    cc: str = "dcqcn"
    ecn_feedback: str = "cnp"
    seed: int = 1
    num_queues: int = 8
    mtu_payload: Any = "1000B"
    data_header: Any = "52B"
    ack_size: Any = "60B"
    cnp_size: Any = "64B"
    pfc_frame_size: Any = "64B"
    ack_interval_packets: int = 1
    cnp_interval: Any = "50us"
    retransmit_timeout: Any = "1ms"
    nic_pacing_wake: str = "exact"
    switch_ack_queue: str = "control"
    ecmp_hash: str = "salted"
    tx_time_rounding: str = "carry"
    scheduler: str = "timing_wheel"
    dcqcn: DcqcnParams = field(default_factory=DcqcnParams)
    dctcp: DctcpParams = field(default_factory=DctcpParams)
    dctcp_rate: DctcpRateParams = field(default_factory=DctcpRateParams)
    timely: TimelyParams = field(default_factory=TimelyParams)
    hpcc: HpccParams = field(default_factory=HpccParams)
    window: WindowParams = field(default_factory=WindowParams)
    buffer: BufferParams = field(default_factory=BufferParams)
    ecn: EcnParams = field(default_factory=EcnParams)
    aqm: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A section given as a mapping, FabricConfig(dctcp={"persistent_connections": True}),
        # overrides that section's defaults, as preset() and updated() do; anything else is refused.
        for f in dataclasses.fields(self):
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else None
            value = getattr(self, f.name)
            if not dataclasses.is_dataclass(default) or isinstance(value, type(default)):
                continue
            try:
                value = dict(value)
            except (TypeError, ValueError):
                raise ConfigError(f"fabric.{f.name}", f"expected a mapping of its fields or a "
                                  f"{type(default).__name__}, got {value!r}") from None
            setattr(self, f.name, merge_dataclass(default, value, f"fabric.{f.name}"))

    # ------------------------------------------------------------------ construction
    @classmethod
    def preset(cls, name: str, **overrides: Any) -> FabricConfig:
        """Return a named preset (``hpcc``, ``dcqcn_paper``, ``dctcp``) with overrides applied.

        Args:
            name: Preset name.
            **overrides: Top-level fields, or nested ones as dicts (``ecn={"kmin": "10KB"}``).

        Raises:
            ConfigError: If the preset is unknown or an override names an unknown field.
        """
        if not isinstance(name, str) or name not in _PRESETS:
            raise ConfigError("fabric.preset", f"unknown preset {name!r}; known: {sorted(_PRESETS)}")
        cfg = cls.from_dict(_PRESETS[name])
        return cfg.updated(overrides) if overrides else cfg

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, field_prefix: str = "fabric") -> FabricConfig:
        """Build from a (possibly nested, possibly partial) mapping such as a Hydra config.

        A ``preset`` key selects the base preset, or an ``hpcc_config`` key the path of an HPCC
        simulator config file (:meth:`from_hpcc_config`); the other keys override it.

        Raises:
            ConfigError: If ``data`` is not a mapping, or on an unknown key (with the known ones listed).
        """
        if data is not None and not isinstance(data, Mapping):
            raise ConfigError(field_prefix, f"expected a mapping of fields, got {data!r}")
        data = dict(data or {})
        preset = data.pop("preset", None)
        hpcc_config = data.pop("hpcc_config", None)
        if preset is not None and (not isinstance(preset, str) or preset not in _PRESETS):
            raise ConfigError(f"{field_prefix}.preset", f"unknown preset {preset!r}; known: {sorted(_PRESETS)}")
        if preset is not None and hpcc_config is not None:
            raise ConfigError(f"{field_prefix}.hpcc_config", "give either a preset or an HPCC config file, not both")
        if hpcc_config is not None:
            base = cls.from_hpcc_config(hpcc_config)
        else:
            base = cls.from_dict(_PRESETS[preset]) if preset is not None else cls()
        return base.updated(data, field_prefix)

    @classmethod
    def from_hpcc_config(cls, path: Any) -> FabricConfig:
        """Read the HPCC simulator's key / value ``config.txt`` (its ``mix/config_doc.txt`` keys).

        The fabric settings only; :func:`ecngym.sim_backend.hpcc_config.load_hpcc_experiment`
        also returns the topology, flows and output files the config names.

        Raises:
            ConfigError: Naming every key the fabric does not support, or a bad value.
        """
        from ecngym.sim_backend.hpcc_config import fabric_config_from_keys, read_hpcc_keys

        return fabric_config_from_keys(read_hpcc_keys(path), str(path))

    def updated(self, overrides: dict[str, Any], field_prefix: str = "fabric") -> FabricConfig:
        """Return a copy with (nested) overrides applied.

        Raises:
            ConfigError: If ``overrides`` is not a mapping, or on an unknown key.
        """
        return merge_dataclass(self, overrides, field_prefix)

    # ------------------------------------------------------------------ validation
    def to_cpp(self) -> Any:
        """Validate every field and return the C++ ``FabricConfig`` (internal units).

        Raises:
            ConfigError: Naming the first invalid field and its allowed range.
        """
        try:
            return self._build_cpp()
        except ConfigError as exc:
            # the half-built C++ structs in the builder's locals would live as long as the error's
            # traceback: an error kept to interpreter exit (a notebook's last error, a test's
            # ExceptionInfo cycle) makes nanobind report them as leaked
            traceback.clear_frames(exc.__traceback__)
            raise

    def _build_cpp(self) -> Any:
        from ecngym.sim_backend import _fabric

        c = _fabric.FabricConfig()
        c.cc = getattr(_fabric.CcKind, _choice("fabric.cc", self.cc, CC_NAMES).upper())
        if self.ecn_feedback not in ("cnp", "ack_echo"):
            raise ConfigError(
                "fabric.ecn_feedback", f"got {self.ecn_feedback!r}, allowed: 'cnp', 'ack_echo'"
            )
        c.ecn_feedback = (
            _fabric.EcnFeedback.CNP if self.ecn_feedback == "cnp" else _fabric.EcnFeedback.ACK_ECHO
        )
        c.seed = _int_in("fabric.seed", self.seed, 0, MAX_SIMULATION_SEED)
        c.num_queues = _int_in("fabric.num_queues", self.num_queues, 2, NUM_QUEUES_MAX)
        c.mtu_payload_bytes = _bytes_in("fabric.mtu_payload", self.mtu_payload, 64, 9000)
        c.data_header_bytes = _bytes_in("fabric.data_header", self.data_header, 0, 512)
        c.ack_bytes = _bytes_in("fabric.ack_size", self.ack_size, 1, 1500)
        c.cnp_bytes = _bytes_in("fabric.cnp_size", self.cnp_size, 1, 1500)
        c.pfc_frame_bytes = _bytes_in("fabric.pfc_frame_size", self.pfc_frame_size, 1, 1500)
        c.ack_interval_packets = _int_in("fabric.ack_interval_packets", self.ack_interval_packets, 1, 1 << 20)
        c.cnp_interval_ns = _ns_in("fabric.cnp_interval", self.cnp_interval, 0, None)
        c.retransmit_timeout_ns = _ns_in("fabric.retransmit_timeout", self.retransmit_timeout, 1, None)
        if self.nic_pacing_wake not in ("exact", "hpcc"):
            raise ConfigError("fabric.nic_pacing_wake", f"got {self.nic_pacing_wake!r}, allowed: 'exact', 'hpcc'")
        c.hpcc_nic_wake = self.nic_pacing_wake == "hpcc"
        c.ack_in_flow_queue = _choice("fabric.switch_ack_queue", self.switch_ack_queue, ("control", "flow")) == "flow"
        hpcc_hash = _choice("fabric.ecmp_hash", self.ecmp_hash, ("salted", "hpcc")) == "hpcc"
        c.ecmp_hash = _fabric.EcmpHash.HPCC if hpcc_hash else _fabric.EcmpHash.SALTED
        c.truncate_tx_time = _choice(
            "fabric.tx_time_rounding", self.tx_time_rounding, ("carry", "truncate")) == "truncate"
        c.scheduler_type_id = SCHEDULERS[_choice("fabric.scheduler", self.scheduler, tuple(SCHEDULERS))]

        d, dp = self.dcqcn, c.dcqcn
        dp.g = _real("fabric.dcqcn.g", d.g, 0, 1, low_open=True)
        dp.initial_alpha = _real("fabric.dcqcn.initial_alpha", d.initial_alpha, 0, 1)
        dp.alpha_interval_ns = _ns_in("fabric.dcqcn.alpha_interval", d.alpha_interval, 1, None)
        dp.decrease_interval_ns = _ns_in(
            "fabric.dcqcn.decrease_interval", d.decrease_interval, 1, None
        )
        dp.increase_timer_ns = _ns_in("fabric.dcqcn.increase_timer", d.increase_timer, 1, None)
        dp.byte_counter_bytes = parse_bytes(d.byte_counter, "fabric.dcqcn.byte_counter")
        dp.fast_recovery_steps = _int_in("fabric.dcqcn.fast_recovery_steps", d.fast_recovery_steps, 0, 1000)
        dp.ai_rate_bps = parse_rate_bps(d.ai_rate, "fabric.dcqcn.ai_rate")
        dp.hai_rate_bps = parse_rate_bps(d.hai_rate, "fabric.dcqcn.hai_rate")
        dp.min_rate_bps = parse_rate_bps(d.min_rate, "fabric.dcqcn.min_rate")
        dp.rate_on_first_cnp = _real("fabric.dcqcn.rate_on_first_cnp", d.rate_on_first_cnp, 0, 1, low_open=True)
        dp.clamp_target_rate = _bool("fabric.dcqcn.clamp_target_rate", d.clamp_target_rate)
        dp.cut_on_cnp = _bool("fabric.dcqcn.cut_on_cnp", d.cut_on_cnp)

        t, tp = self.dctcp, c.dctcp
        tp.g = _real("fabric.dctcp.g", t.g, 0, 1, low_open=True)
        tp.initial_alpha = _real("fabric.dctcp.initial_alpha", t.initial_alpha, 0, 1)
        tp.initial_window_bytes = parse_bytes(t.initial_window, "fabric.dctcp.initial_window")
        tp.min_window_bytes = _bytes_in("fabric.dctcp.min_window", t.min_window, 1, None)
        tp.mss_bytes = c.mtu_payload_bytes
        tp.persistent_connections = _bool("fabric.dctcp.persistent_connections", t.persistent_connections)
        if tp.persistent_connections and self.cc != "dctcp":
            raise ConfigError("fabric.dctcp.persistent_connections", "persistent connections are a feature of "
                              f"the window-based 'dctcp' host model; got cc={self.cc!r}")
        tp.tcp = self._tcp_host_options(c)

        r, rp = self.dctcp_rate, c.dctcp_rate
        rp.g = _real("fabric.dctcp_rate.g", r.g, 0, 1, low_open=True)
        rp.initial_alpha = _real("fabric.dctcp_rate.initial_alpha", r.initial_alpha, 0, 1)
        rp.ai_rate_bps = parse_rate_bps(r.ai_rate, "fabric.dctcp_rate.ai_rate")
        rp.min_rate_bps = _positive_rate("fabric.dctcp_rate.min_rate", r.min_rate)
        rp.mtu_bytes = c.mtu_payload_bytes

        m, mt = self.timely, c.timely
        mt.alpha = _real("fabric.timely.alpha", m.alpha, 0, 1)
        mt.beta = _real("fabric.timely.beta", m.beta, 0, 1)
        mt.t_low_ns = _ns_in("fabric.timely.t_low", m.t_low, 0, None)
        mt.t_high_ns = _ns_in("fabric.timely.t_high", m.t_high, mt.t_low_ns, None)
        mt.min_rtt_ns = _ns_in("fabric.timely.min_rtt", m.min_rtt, 1, None)
        mt.ai_rate_bps = parse_rate_bps(m.ai_rate, "fabric.timely.ai_rate")
        mt.hai_rate_bps = parse_rate_bps(m.hai_rate, "fabric.timely.hai_rate")
        mt.hai_after = _int_in("fabric.timely.hai_after", m.hai_after, 0, 1 << 20)
        mt.min_rate_bps = _positive_rate("fabric.timely.min_rate", m.min_rate)

        hp, hc = self.hpcc, c.hpcc
        hc.target_util = _real("fabric.hpcc.target_util", hp.target_util, 0, 1, low_open=True)
        hc.ai_rate_bps = parse_rate_bps(hp.ai_rate, "fabric.hpcc.ai_rate")
        hc.mi_thresh = _int_in("fabric.hpcc.mi_thresh", hp.mi_thresh, 0, 1 << 20)
        hc.fast_react = _bool("fabric.hpcc.fast_react", hp.fast_react)
        hc.sample_feedback = _bool("fabric.hpcc.sample_feedback", hp.sample_feedback)
        hc.int_multi = _int_in("fabric.hpcc.int_multi", hp.int_multi, 1, 1 << 10)
        hc.min_rate_bps = _positive_rate("fabric.hpcc.min_rate", hp.min_rate)

        w = self.window
        c.nic_window = _bool("fabric.window.enabled", w.enabled)
        c.var_window = _bool("fabric.window.variable", w.variable)
        c.window_global = _choice("fabric.window.scope", w.scope, ("global", "pair")) == "global"
        if self.cc == "hpcc" and not c.nic_window:
            raise ConfigError("fabric.window.enabled", "HPCC needs the NIC window (its utilisation "
                              "estimate divides the queue by it): set it to true")
        if self.cc == "dctcp" and c.nic_window:
            raise ConfigError("fabric.window.enabled", "the window-based 'dctcp' keeps its own window; "
                              "the NIC window is for the rate-based controls (e.g. 'dctcp_rate')")

        b, mp = self.buffer, c.mmu
        mp.buffer_bytes = _bytes_in("fabric.buffer.buffer", b.buffer, 1, None)
        mp.reserve_bytes = _part_of_buffer("fabric.buffer.reserve", b.reserve, mp.buffer_bytes)
        mp.headroom_bytes = _part_of_buffer("fabric.buffer.headroom", b.headroom, mp.buffer_bytes)
        mp.resume_offset_bytes = _part_of_buffer("fabric.buffer.resume_offset", b.resume_offset, mp.buffer_bytes)
        mp.alpha = _real("fabric.buffer.pfc_alpha", b.pfc_alpha, 0, 64, low_open=True)
        mp.pfc_enabled = _bool("fabric.buffer.pfc_enabled", b.pfc_enabled)
        c.pause_quanta = _int_in("fabric.buffer.pause_quanta", b.pause_quanta, 1, 65535)
        _choice("fabric.buffer.headroom_rule", b.headroom_rule, ("fixed", "rate_delay"))
        _int_in("fabric.buffer.headroom_delays", b.headroom_delays, 0, 1000)
        _choice("fabric.buffer.pfc_alpha_rule", b.pfc_alpha_rule, ("fixed", "by_rate"))

        e = self.ecn
        kmin = parse_bytes(e.kmin, "fabric.ecn.kmin")
        kmax = parse_bytes(e.kmax, "fabric.ecn.kmax")
        if kmax < kmin:
            raise ConfigError("fabric.ecn.kmax", f"got {kmax} B, must be >= kmin ({kmin} B)")
        pmax = _real("fabric.ecn.pmax", e.pmax, 0, 1)
        if e.mark_at not in ("enqueue", "dequeue"):
            raise ConfigError("fabric.ecn.mark_at", f"got {e.mark_at!r}, allowed: 'enqueue', 'dequeue'")
        c.aqm_type_id, c.aqm_attribute_names, c.aqm_attribute_values = _red_birth(
            kmin, kmax, pmax, e.mark_at == "dequeue")
        self._check_aqm()
        self.ecn_by_rate()  # validated here, applied per port by the Fabric
        return c

    def _tcp_host_options(self, c: Any) -> Any:
        """Validate the Linux-like DCTCP host options and return the C++ ``TcpHostConfig``.

        Args:
            c: The C++ config built so far (``ack_interval_packets`` is read from it).

        Raises:
            ConfigError: Naming the ``fabric.dctcp`` field whose value its attribute's checker
                refuses, an option turned on under another congestion control, or a combination
                that cannot hold (see the messages).
        """
        from ecngym.sim_backend import _fabric

        spec = tcp_host_spec()
        t = self.dctcp
        values = {name: spec[name].convert(getattr(t, name), f"fabric.dctcp.{name}") for name in TCP_HOST_FIELDS}
        on = [name for name in ("slow_start", "handshake", "rto_estimate", "delayed_ack") if values[name]]
        if on and self.cc != "dctcp":
            raise ConfigError(f"fabric.dctcp.{on[0]}", "the Linux-like options are features of the window-based "
                                                      f"'dctcp' host model; got cc={self.cc!r}")
        if values["slow_start"] and parse_bytes(t.initial_window, "fabric.dctcp.initial_window") != 0:
            raise ConfigError("fabric.dctcp.initial_window", "with slow_start the window starts at "
                              "initial_cwnd_packets; leave initial_window at 0 (it is the NIC-style start)")
        if values["delayed_ack"] and c.ack_interval_packets != 1:
            raise ConfigError("fabric.dctcp.delayed_ack", "delayed ACKs decide when the receiver acknowledges; "
                              f"leave fabric.ack_interval_packets at 1 (got {c.ack_interval_packets})")
        names = [spec[n].attribute for n in TCP_HOST_FIELDS]
        strings = [spec[n].serialise(values[n]) for n in TCP_HOST_FIELDS]
        try:
            return _fabric.make_tcp_host_config(names, strings)
        except ValueError as exc:  # the consistency rule, naming attributes
            text = str(exc).removeprefix("tcp host options: ")
            named = [n for n in TCP_HOST_FIELDS if re.search(rf"\b{spec[n].attribute}\b", text)]
            for n in TCP_HOST_FIELDS:
                text = re.sub(rf"\b{spec[n].attribute}\b", n, text)
            raise ConfigError(f"fabric.dctcp.{named[0] if named else 'tcp'}", text) from None

    def _check_aqm(self) -> None:
        """Validate ``aqm`` (policy names and parameters; layer names are checked at build)."""
        from ecngym.sim_backend import aqm

        if self.aqm is not None and not isinstance(self.aqm, Mapping):  # (0 or [] is no empty mapping)
            raise ConfigError("fabric.aqm", f"expected a mapping of layer -> policy, got {self.aqm!r}")
        settings = dict(self.aqm or {})
        for layer, setting in settings.items():
            name, params = aqm.split_setting(setting, f"fabric.aqm.{layer}")
            aqm.validate_params(name, params, f"fabric.aqm.{layer}")

    def ecn_by_rate(self) -> dict[float, tuple[int, int, float]]:
        """The validated ``ecn.by_rate`` map: rate (bit/s) -> (kmin bytes, kmax bytes, pmax).

        Raises:
            ConfigError: Naming ``fabric.ecn.by_rate.<rate>.<field>`` of a bad entry, or the second
                of two keys that name the same rate (``"100Gbps"`` and ``1e11``).
        """
        out: dict[float, tuple[int, int, float]] = {}
        if self.ecn.by_rate is not None and not isinstance(self.ecn.by_rate, Mapping):  # (0 or [] is no mapping)
            raise ConfigError("fabric.ecn.by_rate", f"expected a mapping of rate -> {{kmin, kmax, pmax}}, got "
                                                    f"{self.ecn.by_rate!r}")
        items = dict(self.ecn.by_rate or {}).items()
        for rate, entry in items:
            name = f"fabric.ecn.by_rate.{rate}"
            rate_bps = parse_rate_bps(rate, name)
            try:
                entry = dict(entry)
            except (TypeError, ValueError):
                raise ConfigError(name, f"expected a mapping with kmin, kmax, pmax, got {entry!r}") from None
            unknown = set(entry) - {"kmin", "kmax", "pmax"}
            if unknown or len(entry) != 3:
                raise ConfigError(name, f"expected exactly the keys kmin, kmax, pmax, got {sorted(entry, key=str)}")
            kmin = parse_bytes(entry["kmin"], f"{name}.kmin")
            kmax = parse_bytes(entry["kmax"], f"{name}.kmax")
            if kmax < kmin:
                raise ConfigError(f"{name}.kmax", f"got {kmax} B, must be >= kmin ({kmin} B)")
            pmax = _real(f"{name}.pmax", entry["pmax"], 0, 1)
            if rate_bps in out:
                first = next(r for r, _ in items if r != rate and parse_rate_bps(r, name) == rate_bps)
                raise ConfigError(name, f"the same rate ({rate_bps:.6g} bit/s) as key {first!r}; give each rate once")
            out[rate_bps] = (kmin, kmax, pmax)
        return out

    def as_dict(self) -> dict[str, Any]:
        """Return the configuration as a plain nested dict (for logging and results)."""
        return dataclasses.asdict(self)


#: Congestion controls (``FabricConfig.cc``), in the order of the C++ ``CcKind``
CC_NAMES = ("dcqcn", "dctcp", "dctcp_rate", "timely", "hpcc")


def _positive_rate(name: str, value: Any) -> float:
    rate = parse_rate_bps(value, name)
    return check_range(name, rate, 0, None, low_inclusive=False)


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    """Return a string field that must be one of ``allowed`` (ConfigError naming the field)."""
    return check(name, value, OneOf(*allowed))


def _red_birth(kmin_bytes: int, kmax_bytes: int, pmax: float, at_dequeue: bool) -> tuple[str, list[str], list[str]]:
    """The birth policy of every switch port (``FabricConfig.aqm_type_id`` and attributes): RED with this curve."""
    from ecngym.sim_backend import aqm

    params = {"kmin_bytes": kmin_bytes, "kmax_bytes": kmax_bytes, "pmax": float(pmax), "mark_at_dequeue": at_dequeue}
    names, values = aqm.to_attributes("red", params)
    return aqm.resolve("red")[1], names, values


def _real(name: str, value: Any, low: float | None = None, high: float | None = None, *,
          low_open: bool = False) -> float:
    """Return a finite real-number field in the range as a float; strings and booleans are refused."""
    return check(name, value, Real(low, high, low_open=low_open))


def _int_in(name: str, value: Any, low: int, high: int) -> int:
    """Return an integer field checked against [low, high]; 4.0 is 4, but 2.5 and "4" are refused."""
    return check(name, value, Whole(low, high))


def _bool(name: str, value: Any) -> bool:
    """Return a boolean field; strings such as "false" and numbers are refused rather than read as truth values."""
    return check(name, value, Flag)


def _bytes_in(name: str, value: Any, low: int | None, high: int | None) -> int:
    return check(name, value, Bytes(low, high))


def _part_of_buffer(name: str, value: Any, buffer_bytes: int) -> int:
    """A part of a port's share of the buffer (reserve, headroom, resume offset) in bytes, checked.

    Args:
        name: The part's field (``fabric.buffer.reserve``).
        value: The part as given (bytes or a size string).
        buffer_bytes: ``fabric.buffer.buffer`` in bytes (already checked).

    Returns:
        The part in bytes.

    Raises:
        ConfigError: Naming ``name`` if it is no size >= 0, or if it is larger than the buffer:
            then the message names ``fabric.buffer.buffer`` and its value too, since either of the
            two may be the one set wrong (``fabric.buffer.buffer=1B`` was reported as "reserve:
            got 4096, allowed range is [0, 1]", about a field the user had not set).
    """
    v = _bytes_in(name, value, 0, None)
    if v > buffer_bytes:
        raise ConfigError(name, f"got {v} B, more than the whole buffer (fabric.buffer.buffer = {buffer_bytes} B); "
                                f"lower {name} or raise fabric.buffer.buffer")
    return v


def _ns_in(name: str, value: Any, low: int | None, high: int | None) -> int:
    return check(name, value, Duration(low, high))


def merge_dataclass(obj: Any, overrides: dict[str, Any], prefix: str,
                    merge_dict_fields: frozenset[str] = frozenset()) -> Any:
    """Return a copy of dataclass ``obj`` with (nested) ``overrides`` applied.

    Nested dataclass fields merge recursively; plain dict fields named in ``merge_dict_fields``
    merge key by key, other fields are replaced.

    Raises:
        ConfigError: On an unknown key (listing the known ones), or if ``overrides`` or the value
            for a section is not a mapping.
    """
    if not isinstance(overrides, Mapping):
        raise ConfigError(prefix, f"expected a mapping of fields, got {overrides!r}")
    known = {f.name for f in dataclasses.fields(obj)}
    changes: dict[str, Any] = {}
    for key, value in overrides.items():
        if key not in known:
            raise ConfigError(f"{prefix}.{key}", f"unknown field; known fields: {sorted(known)}")
        current = getattr(obj, key)
        if dataclasses.is_dataclass(current) or (key in merge_dict_fields and isinstance(current, dict)):
            if not isinstance(value, dict):
                try:  # an OmegaConf DictConfig or another mapping
                    value = dict(value or {})
                except (TypeError, ValueError):
                    raise ConfigError(f"{prefix}.{key}", f"expected a mapping, got {value!r}") from None
            changes[key] = (merge_dataclass(current, value, f"{prefix}.{key}") if dataclasses.is_dataclass(current)
                            else {**current, **value})
        else:
            changes[key] = value
    return dataclasses.replace(obj, **changes)


_PRESETS: dict[str, dict[str, Any]] = {
    "hpcc": {
        "cc": "dcqcn",
        "ecn_feedback": "ack_echo",
        "ack_interval_packets": 1,
        "nic_pacing_wake": "hpcc",
        "switch_ack_queue": "flow",
        "ecmp_hash": "hpcc",
        "tx_time_rounding": "truncate",
        "mtu_payload": "1000B",
        "data_header": "52B",
        "ack_size": "60B",
        "dcqcn": {
            "alpha_interval": "1us", "decrease_interval": "4us", "increase_timer": "300us",
            "byte_counter": "0B", "fast_recovery_steps": 1, "ai_rate": "20Mbps",
            "hai_rate": "200Mbps", "min_rate": "1Gbps", "rate_on_first_cnp": 1.0,
            "clamp_target_rate": False, "cut_on_cnp": False,
        },
        "buffer": {
            "buffer": "32MiB", "reserve": "4KiB", "headroom": "37.5KB", "resume_offset": "3KiB",
            "pfc_alpha": 0.125, "pfc_enabled": True,
        },
        "ecn": {"kmin": "400KB", "kmax": "1600KB", "pmax": 0.2, "mark_at": "dequeue"},
    },
    "dcqcn_paper": {
        "cc": "dcqcn",
        "ecn_feedback": "cnp",
        "cnp_interval": "50us",
        "dcqcn": {
            "alpha_interval": "55us", "decrease_interval": "50us", "increase_timer": "55us",
            "byte_counter": "10MB", "fast_recovery_steps": 5, "ai_rate": "40Mbps",
            "hai_rate": "100Mbps", "min_rate": "100Mbps", "rate_on_first_cnp": 1.0,
            "clamp_target_rate": True, "cut_on_cnp": True,
        },
        "ecn": {"kmin": "5KB", "kmax": "200KB", "pmax": 0.01, "mark_at": "enqueue"},
    },
    "dctcp": {
        "cc": "dctcp",
        "ecn_feedback": "ack_echo",
        "ecn": {"kmin": "65KB", "kmax": "65KB", "pmax": 1.0, "mark_at": "enqueue"},
    },
}


def preset_names() -> list[str]:
    """Return the names of the fabric presets."""
    return sorted(_PRESETS)
