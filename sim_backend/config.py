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

import functools
import re
import traceback
from collections.abc import Mapping
from typing import Annotated, Any, NamedTuple

from pydantic import BeforeValidator, Field, ValidationError, create_model, field_validator, model_validator

from ecngym.error import ConfigError
from ecngym.sim_backend import knobs
from ecngym.sim_backend.topology import ALL_LAYERS
from ecngym.units import parse_rate_bps
from ecngym.validation import (
    MAX_SIMULATION_SEED,
    ConfigModel,
    Duration,
    OneOf,
    Whole,
    _config_error,
    check,
    field_error,
    plain,
)

#: Queues a device has, fabric.num_queues' upper bound: the simulator's ``kMaxQueues``
#: (``_fabric.MAX_QUEUES``, which tests/sim_backend/test_knobs.py holds this to). Written here
#: because the config model is built when this module is imported, which must not load the compiled
#: fabric and ns-3's libraries (a process that only checks a config needs neither).
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

#: The keys of a fabric mapping that choose its base (:meth:`FabricConfig.from_dict`): a preset or
#: an HPCC config file. A mapping names one at most; an override naming one replaces the other.
BASE_KEYS = ("preset", "hpcc_config")

#: What each knob section is, for its generated model's docstring (the knobs themselves, their
#: defaults and ranges are the C++ attributes': :mod:`ecngym.sim_backend.knobs`)
_SECTION_DOCS = {
    "dcqcn": "DCQCN reaction-point parameters (Zhu et al., SIGCOMM 2015; ``DcqcnParameters``).",
    "dctcp": """DCTCP host parameters (``DctcpParameters`` and ``TcpHostOptions``; docs/concepts/tcp-hosts.md).

    The first fields are the NIC-style model's; ``min_window`` is the window floor of both models
    (one or two MSS: ``"1000B"`` / ``"2000B"``); ``persistent_connections``: flows of one host pair
    share a pool of connections that keep their window and alpha between flows (the HKUST-SING
    TrafficGenerator's client). The Linux-like options (all off by default: the NIC-style model)
    are the C++ ``TcpHostOptions`` attributes: ``slow_start`` from ``initial_cwnd_packets`` MSS up
    to ``ssthresh_bytes`` (0 = unbounded); ``handshake`` (SYN / SYN-ACK / ACK through the switches
    before the data); ``rto_estimate`` (RFC 6298 from SRTT / RTTVAR within [``min_rto_ns``,
    ``max_rto_ns``], ``initial_rto_ns`` before the first sample and for the SYN, doubled per
    timeout; off: the fixed ``fabric.retransmit_timeout``); ``delayed_ack`` (an ACK every second
    packet or after ``delayed_ack_timeout_ns``, with DCTCP's CE-state rule, RFC 8257 §3.2);
    ``cwnd_limited_growth`` (the window grows only while it limits the sender, as Linux's
    ``tcp_is_cwnd_limited``; off, a flow paced at line rate grows an unused window).
    """,
    "dctcp_rate": "DCTCP as the HPCC model runs it (``CC_MODE 8``, rate-based; ``DctcpRateParameters``).",
    "timely": "TIMELY (Mittal et al., SIGCOMM 2015) as the HPCC model runs it (``CC_MODE 7``; ``TimelyParameters``).",
    "hpcc": "HPCC (Li et al., SIGCOMM 2019) as the HPCC model runs it (``CC_MODE 3``, ``MULTI_RATE 0``; "
            "``HpccParameters``).",
    "window": """The HPCC model's NIC window (``HAS_WIN`` / ``VAR_WIN`` / ``GLOBAL_T``), for any rate-based CC
    (``WindowParameters``).

    With ``enabled``, a queue pair may have at most W bytes unacknowledged, W = the base-RTT BDP
    (``scope="global"``: the largest over all host pairs, as ``GLOBAL_T 1``; ``"pair"``: its own
    pair's); ``variable`` scales it by rate / line rate (``VAR_WIN 1``). Sending stays paced.
    """,
    "buffer": """Shared-buffer MMU and PFC (``BufferParameters``; ``shared-buffer-mmu.h``).

    ``headroom_rule`` and ``pfc_alpha_rule`` choose how each switch ingress port gets its headroom
    and its dynamic-threshold alpha: ``"fixed"`` gives every port ``headroom`` and ``pfc_alpha``;
    the HPCC model's rules (``sim_backend/port_settings.py``) set them per port, as its reference
    program does on mixed-rate fabrics: ``"rate_delay"`` headroom = ``headroom_delays`` x link
    rate x link delay (3 x 12.5 KB = 37.5 KB at 100 Gbps, 1 us), ``"by_rate"`` doubles alpha from
    ``pfc_alpha`` once per halving of the port's rate down to the NIC rate (at most 1).
    """,
}

#: Fields of a section that are Python's own (how the builder derives per-port settings), not
#: simulator knobs: name -> (type, default)
_SECTION_EXTRAS: dict[str, dict[str, tuple[Any, Any]]] = {
    "buffer": {"headroom_rule": (OneOf("fixed", "rate_delay"), "fixed"),
               "headroom_delays": (Whole(0, 1000), 3),
               "pfc_alpha_rule": (OneOf("fixed", "by_rate"), "fixed")},
}


#: The key of a ``fabric.aqm`` setting that gives its parameters per link rate
BY_RATE = "by_rate"


class AqmSetting(NamedTuple):
    """One validated entry of ``fabric.aqm`` (:meth:`FabricConfigBase.aqm_settings`).

    Attributes:
        policy: The policy's short name (:func:`ecngym.sim_backend.aqm.policies`).
        params: Its parameters as given, in internal units (the others keep the port's values,
            or the policy's defaults on a port that did not run it).
        by_rate: Link rate (bit/s) -> parameters (internal units) that replace ``params`` on the
            ports of that rate. Not empty: every port of the entry's layer needs its rate here.
    """

    policy: str
    params: dict[str, Any]
    by_rate: dict[float, dict[str, Any]]


def _aqm_mapping(value: Any) -> Any:
    """Mapping of switch layer or 'all' -> {policy: name, its parameters, by_rate: {link rate: parameters}}.

    Each setting is checked by :meth:`FabricConfigBase.aqm_settings` (with the policy's own checkers).
    """
    if value is not None and not isinstance(value, Mapping):  # (0 or [] is no empty mapping)
        raise ValueError(f"expected a mapping of layer -> policy, got {value!r}")
    return value


#: ``fabric.aqm``: switch layer (or ``"all"``) -> AQM setting
AqmSettings = Annotated[Any, BeforeValidator(_aqm_mapping)]

#: ``fabric.ecn``'s fields -> the RED parameter of ``fabric.aqm`` each became (for the refusals' messages)
ECN_RENAMED = {"kmin": "kmin_bytes", "kmax": "kmax_bytes", "pmax": "pmax", "mark_at": "mark_at_dequeue",
               "by_rate": BY_RATE}


def _ecn_refusal(ecn: Any) -> str:
    """The message refusing ``fabric.ecn``, with the ``fabric.aqm`` spelling of what it gave."""
    new: dict[str, Any] = {"policy": "red"}
    for key, value in (ecn.items() if isinstance(ecn, Mapping) else ()):
        name = ECN_RENAMED.get(key, key)
        if key == "mark_at":
            value = value == "dequeue"
        elif key == "by_rate" and isinstance(value, Mapping):
            value = {rate: {ECN_RENAMED.get(k, k): v for k, v in entry.items()} if isinstance(entry, Mapping) else entry
                     for rate, entry in value.items()}
        new[name] = value
    return ("removed: fabric.aqm sets every switch port's initial policy, RED's curve included; write "
            f"fabric.aqm.all = {new} (kmin -> kmin_bytes, kmax -> kmax_bytes, mark_at: dequeue -> "
            "mark_at_dequeue: true; per-rate thresholds: by_rate: {rate: {kmin_bytes, kmax_bytes, pmax}})")


def _knob_fields(knob_map: dict[str, knobs.Knob]) -> dict[str, Any]:
    return {name: (k.kind, Field(k.default, description=k.help)) for name, k in knob_map.items()}


def section_fields(section: str) -> dict[str, knobs.Knob]:
    """Return the simulator knobs of a ``fabric`` section (``"dcqcn"``; ``"nic"``: the top-level ones)."""
    return knobs.section_knobs(section)


@functools.cache
def section_model(section: str) -> type[ConfigModel]:
    """Return the config model of one section, its fields read from the C++ attributes.

    Args:
        section: ``"dcqcn"``, ``"dctcp"``, ``"dctcp_rate"``, ``"timely"``, ``"hpcc"``, ``"window"`` or ``"buffer"``.

    Returns:
        A :class:`ConfigModel` named ``<Section>Params`` (``DcqcnParams``).
    """
    fields = _knob_fields(knobs.section_knobs(section))
    if section == "dctcp":
        fields |= _knob_fields(knobs.tcp_host_knobs())
    fields |= {name: (kind, Field(default)) for name, (kind, default) in _SECTION_EXTRAS.get(section, {}).items()}
    name = "".join(part.capitalize() for part in section.split("_")) + "Params"
    model = create_model(name, __base__=ConfigModel, __module__=__name__, **fields)
    model.__doc__ = _SECTION_DOCS.get(section, f"The ``{section}`` knobs.")
    return model


def _knob_sections() -> list[str]:
    return [s for s in knobs.sections() if s != knobs.TOP_LEVEL]


def _is_section(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, ConfigModel)


class _ConfigErrorOnCall(type(ConfigModel)):
    """Keyword construction, ``FabricConfig(dctcp={...})``, raises a ConfigError naming ``fabric.<field>``.

    (A metaclass rather than ``__init__``: pydantic runs an overridden ``__init__`` inside
    ``model_validate`` too.)
    """

    def __call__(cls, **data: Any) -> Any:
        try:
            return super().__call__(**{k: plain(v) for k, v in data.items()})
        except ValidationError as exc:
            raise _config_error(exc, "fabric", cls) from None


class FabricConfigBase(ConfigModel, metaclass=_ConfigErrorOnCall):
    """The fabric's settings that are Python's own; :class:`FabricConfig` adds the simulator knobs."""

    seed: Whole(0, MAX_SIMULATION_SEED) = 1
    num_queues: Whole(2, NUM_QUEUES_MAX) = 8
    scheduler: OneOf(*SCHEDULERS) = "timing_wheel"
    aqm: AqmSettings = Field(default_factory=dict, description=(
        "Every switch port's initial AQM policy and its parameters, per switch layer ('all' first: the "
        "policy ports are born with; without it, RED at its defaults), e.g. {all: {policy: red, "
        "kmin_bytes: 400KB, kmax_bytes: 1600KB, pmax: 0.2, mark_at_dequeue: true}, leaf: pred}; by_rate "
        "gives parameters per link rate. Policies, parameters and ranges: the AQM policies reference."))

    @model_validator(mode="before")
    @classmethod
    def _no_ecn_section(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "ecn" in data:
            raise field_error("ecn", _ecn_refusal(data["ecn"]))
        return data

    @field_validator("*", mode="before")
    @classmethod
    def _section_is_a_mapping(cls, value: Any, info: Any) -> Any:
        annotation = cls.model_fields[info.field_name].annotation
        if _is_section(annotation) and not isinstance(value, (Mapping, annotation)):
            raise ValueError(f"expected a mapping of its fields or a {annotation.__name__}, got {value!r}")
        return value

    # ------------------------------------------------------------------ construction
    @classmethod
    def preset(cls, name: str, **overrides: Any) -> Any:
        """Return a named preset (``hpcc``, ``dcqcn_paper``, ``dctcp``) with overrides applied.

        Args:
            name: Preset name.
            **overrides: Top-level fields, or nested ones as dicts (``buffer={"buffer": "16MB"}``,
                ``aqm={"all": {"kmin_bytes": "10KB"}}``), merged as :meth:`updated` merges them.

        Raises:
            ConfigError: If the preset is unknown or an override names an unknown field.
        """
        if not isinstance(name, str) or name not in _PRESETS:
            raise ConfigError("fabric.preset", f"unknown preset {name!r}; known: {sorted(_PRESETS)}")
        cfg = cls.from_dict(_PRESETS[name])
        return cfg.updated(overrides) if overrides else cfg

    @classmethod
    def from_dict(cls, data: Any = None, field_prefix: str = "fabric") -> Any:
        """Build from a (possibly nested, possibly partial) mapping such as a Hydra config.

        A ``preset`` key selects the base preset, or an ``hpcc_config`` key the path of an HPCC
        simulator config file (:meth:`from_hpcc_config`); the other keys override it.

        Raises:
            ConfigError: If ``data`` is not a mapping, or on an unknown key (with the known ones listed).
        """
        data = plain(data)
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
            base = cls.parse(_PRESETS[preset], field_prefix) if preset is not None else cls.parse({}, field_prefix)
        return base.updated(data, field_prefix)

    @classmethod
    def from_hpcc_config(cls, path: Any) -> Any:
        """Read the HPCC simulator's key / value ``config.txt`` (its ``mix/config_doc.txt`` keys).

        The fabric settings only; :func:`ecngym.sim_backend.hpcc_config.load_hpcc_experiment`
        also returns the topology, flows and output files the config names.

        Raises:
            ConfigError: Naming every key the fabric does not support, or a bad value.
        """
        from ecngym.sim_backend.hpcc_keys import read_hpcc_keys

        return cls.from_hpcc_keys(read_hpcc_keys(path), str(path))

    @classmethod
    def from_hpcc_keys(cls, keys: dict[str, list[str]], source: str = "hpcc_config") -> Any:
        """The fabric settings of an HPCC config's keys (:func:`~ecngym.sim_backend.hpcc_keys.read_hpcc_keys`).

        Raises:
            ConfigError: Naming every unsupported key at once, or the key of a bad value.
        """
        from ecngym.sim_backend.hpcc_keys import fabric_overrides_from_keys, key_of_field

        overrides = fabric_overrides_from_keys(keys, source)
        try:
            config = cls.preset("hpcc").updated(overrides)
            config.to_cpp()  # every range check, here, so that an error names the file's key
        except ConfigError as exc:
            key = key_of_field(exc.field)
            if key is None:
                raise
            raise ConfigError(f"hpcc_config.{key}", f"{exc.message} (as {exc.field}; {source})") from None
        return config

    def updated(self, overrides: Any, prefix: str = "fabric") -> Any:
        """Return a validated copy with (nested) overrides applied.

        A section given as a mapping merges into the current section field by field; ``aqm``
        given as a mapping merges layer by layer (:func:`_merged_aqm`); any other field is replaced.

        Raises:
            ConfigError: If ``overrides`` is not a mapping, or on an unknown key or a bad value.
        """
        overrides = plain(overrides)
        if not isinstance(overrides, Mapping):
            raise ConfigError(prefix, f"expected a mapping of fields, got {overrides!r}")
        # the sections not overridden pass as validated instances: pydantic does not validate them again
        data = {name: getattr(self, name) for name in type(self).model_fields}
        for key, value in overrides.items():
            field = type(self).model_fields.get(key)
            if field is not None and _is_section(field.annotation) and isinstance(value, Mapping):
                data[key] = {**data[key].as_dict(), **value}
            elif key == "aqm" and isinstance(value, Mapping) and isinstance(data[key], Mapping):
                data[key] = _merged_aqm(data[key], value)
            else:
                data[key] = value
        return type(self).parse(data, prefix)

    # ------------------------------------------------------------------ conversion
    def to_cpp(self) -> Any:
        """Check the rules between fields and return the C++ ``FabricConfig`` (internal units).

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

    def _check_rules(self) -> None:
        """The rules between fields (each field's own range was checked when the config was built)."""
        check("fabric.timely.t_high", self.timely.t_high, Duration(self.timely.t_low, None))
        b = self.buffer
        for part in ("reserve", "headroom", "resume_offset"):
            value = getattr(b, part)
            if value > b.buffer:
                name = f"fabric.buffer.{part}"
                raise ConfigError(name, f"got {value} B, more than the whole buffer (fabric.buffer.buffer = "
                                        f"{b.buffer} B); lower {name} or raise fabric.buffer.buffer")
        if self.dctcp.persistent_connections and self.cc != "dctcp":
            raise ConfigError("fabric.dctcp.persistent_connections", "persistent connections are a feature of "
                              f"the window-based 'dctcp' host model; got cc={self.cc!r}")
        if self.cc == "hpcc" and not self.window.enabled:
            raise ConfigError("fabric.window.enabled", "HPCC needs the NIC window (its utilisation "
                              "estimate divides the queue by it): set it to true")
        if self.cc == "dctcp" and self.window.enabled:
            raise ConfigError("fabric.window.enabled", "the window-based 'dctcp' keeps its own window; "
                              "the NIC window is for the rate-based controls (e.g. 'dctcp_rate')")

    def _build_cpp(self) -> Any:
        from ecngym.sim_backend import _fabric

        self._check_rules()
        given = []
        for section in knobs.sections():
            node = self if section == knobs.TOP_LEVEL else getattr(self, section)
            spec = knobs.section_knobs(section)
            given.append((knobs.sections()[section],
                          *knobs.attribute_strings(spec, {name: getattr(node, name) for name in spec})))
        try:
            c = _fabric.make_fabric_config(given)
        except ValueError as exc:  # a checker refusing what the typed layer let through: a bug, named
            raise ConfigError("fabric", str(exc)) from None
        c.seed = self.seed
        c.num_queues = self.num_queues
        c.scheduler_type_id = SCHEDULERS[self.scheduler]
        c.tcp_host = self._tcp_host_options()
        # every switch port is born with the 'all' setting (without one: the C++ default, RED at
        # its defaults); the Fabric installs the named layers and the per-rate entries at build
        born = self.aqm_settings().get(ALL_LAYERS)
        if born is not None:
            from ecngym.sim_backend import aqm

            c.aqm_type_id = aqm.resolve(born.policy)[1]
            c.aqm_attribute_names, c.aqm_attribute_values = aqm.to_attributes(born.policy, born.params)
        return c

    def _tcp_host_options(self) -> Any:
        """Check the Linux-like DCTCP host options and return the C++ ``TcpHostConfig``.

        Raises:
            ConfigError: Naming the ``fabric.dctcp`` field of an option turned on under another
                congestion control, or of a combination that cannot hold (see the messages).
        """
        from ecngym.sim_backend import _fabric

        spec = knobs.tcp_host_knobs()
        t = self.dctcp
        values = {name: getattr(t, name) for name in spec}
        on = [name for name in ("slow_start", "handshake", "rto_estimate", "delayed_ack", "cwnd_limited_growth")
              if values[name]]
        if on and self.cc != "dctcp":
            raise ConfigError(f"fabric.dctcp.{on[0]}", "the Linux-like options are features of the window-based "
                                                      f"'dctcp' host model; got cc={self.cc!r}")
        if values["slow_start"] and t.initial_window != 0:
            raise ConfigError("fabric.dctcp.initial_window", "with slow_start the window starts at "
                              "initial_cwnd_packets; leave initial_window at 0 (it is the NIC-style start)")
        if values["delayed_ack"] and self.ack_interval_packets != 1:
            raise ConfigError("fabric.dctcp.delayed_ack", "delayed ACKs decide when the receiver acknowledges; "
                              f"leave fabric.ack_interval_packets at 1 (got {self.ack_interval_packets})")
        names, strings = knobs.attribute_strings(spec, values)
        try:
            return _fabric.make_tcp_host_config(names, strings)
        except ValueError as exc:  # the consistency rule, naming attributes
            text = str(exc).removeprefix("tcp host options: ")
            named = [n for n, k in spec.items() if re.search(rf"\b{k.attribute}\b", text)]
            for n, k in spec.items():
                text = re.sub(rf"\b{k.attribute}\b", n, text)
            raise ConfigError(f"fabric.dctcp.{named[0] if named else 'tcp'}", text) from None

    def aqm_settings(self) -> dict[str, AqmSetting]:
        """The validated ``aqm``: layer -> setting, :data:`ALL_LAYERS` first (the order of installing them).

        Each setting is checked whole by its policy (:func:`ecngym.sim_backend.aqm.validate_setting`:
        the C++ attribute checkers, then the policy's consistency rule), as the ports get it: a
        named layer's setting over the ``all`` one where both run the same policy (a port keeps
        the parameters a setting of its own policy leaves out), each per-rate entry over its
        layer's. Layer names and the rates of per-rate entries are checked against the topology
        when a fabric is built.

        Raises:
            ConfigError: Naming ``fabric.aqm.<layer>`` (``.policy``, ``.<parameter>``,
                ``.by_rate.<rate>[.<parameter>]``) with the value and what is allowed, or the
                second of two ``by_rate`` keys that name the same rate (``"100Gbps"`` and ``1e11``).
        """
        from ecngym.sim_backend import aqm

        given = dict(self.aqm or {})
        out: dict[str, AqmSetting] = {}
        for layer in sorted(given, key=lambda k: k != ALL_LAYERS):
            field = f"fabric.aqm.{layer}"
            name, params = aqm.split_setting(given[layer], field)
            by_rate = params.pop(BY_RATE, None)
            below = out.get(ALL_LAYERS)
            base = below.params if below is not None and below.policy == name else {}
            params = aqm.validate_setting(name, params, field, base)
            out[layer] = AqmSetting(name, params, _by_rate(name, by_rate, f"{field}.{BY_RATE}", {**base, **params}))
        return out

    def initial_aqm(self) -> tuple[str, dict[str, Any]]:
        """The policy every switch port is born with, and all its parameters (internal units).

        ``aqm``'s ``all`` setting over its policy's defaults; without one, the simulator's birth
        policy (the C++ ``FabricConfig::aqmTypeId``: RED) at its defaults. Named layers and
        per-rate entries are installed over it at build.
        """
        from ecngym.sim_backend import aqm

        born = self.aqm_settings().get(ALL_LAYERS)
        if born is None:
            name = aqm.birth_policy()
            return name, aqm.policy_defaults(name)
        return born.policy, {**aqm.policy_defaults(born.policy), **born.params}

    def initial_params(self, policy: str) -> dict[str, Any]:
        """Every parameter of ``policy`` as switch ports are born with it (:meth:`initial_aqm`).

        Ports born with another policy: ``policy``'s defaults (what installing it gives them).
        """
        from ecngym.sim_backend import aqm

        born, params = self.initial_aqm()
        return params if born == aqm.resolve(policy)[0] else aqm.policy_defaults(policy)


def _merged_aqm(current: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``fabric.aqm`` with ``overrides`` merged in layer by layer (:meth:`FabricConfigBase.updated`).

    A layer's setting that names no policy, or its current one, merges into its current setting
    parameter by parameter (``by_rate`` replaced whole); a setting naming another policy, or a
    layer not set yet, is taken as given; ``None`` removes the layer's setting.
    """
    from ecngym.sim_backend import aqm

    def as_mapping(setting: Any) -> Any:
        return {"policy": setting} if isinstance(setting, str) else setting

    def policy_of(setting: Any) -> Any:
        try:
            return aqm.resolve(setting["policy"])[0]
        except ConfigError:
            return setting["policy"]

    out = dict(current)
    for layer, setting in overrides.items():
        now = as_mapping(out.get(layer))
        new = as_mapping(setting)
        if setting is None:
            out.pop(layer, None)
        elif (isinstance(now, Mapping) and "policy" in now and isinstance(new, Mapping)
              and ("policy" not in new or policy_of(new) == policy_of(now))):
            out[layer] = {**now, **new}
        else:
            out[layer] = setting
    return out


def _by_rate(policy: str, value: Any, field: str, base: dict[str, Any]) -> dict[float, dict[str, Any]]:
    """A setting's validated ``by_rate``: link rate (bit/s) -> parameters (internal units).

    Args:
        policy: The setting's policy.
        value: ``by_rate`` as given (``None``: none).
        field: Its field (``fabric.aqm.all.by_rate``).
        base: The setting's own parameters, which each entry overrides.

    Raises:
        ConfigError: Naming ``field`` if it is no mapping, ``field.<rate>`` for a bad rate, an
            entry that is no mapping, a rate given twice or a setting the policy refuses.
    """
    from ecngym.sim_backend import aqm

    if value is not None and not isinstance(value, Mapping):  # (0 or [] is no mapping)
        raise ConfigError(field, f"expected a mapping of link rate -> {{{policy} parameters}}, got {value!r}")
    out: dict[float, dict[str, Any]] = {}
    keys: dict[float, Any] = {}
    for rate, entry in dict(value or {}).items():
        name = f"{field}.{rate}"
        rate_bps = parse_rate_bps(rate, name)
        if rate_bps in out:
            raise ConfigError(name, f"the same rate ({rate_bps:.6g} bit/s) as key {keys[rate_bps]!r}; give each "
                                    "rate once")
        if not isinstance(entry, Mapping):
            raise ConfigError(name, f"expected a mapping of {policy} parameters, got {entry!r}")
        out[rate_bps] = aqm.validate_setting(policy, dict(entry), name, base)
        keys[rate_bps] = rate
    return out


@functools.cache
def fabric_config_class() -> type[FabricConfigBase]:
    """Return :class:`FabricConfig`: :class:`FabricConfigBase` plus the simulator's knobs as fields.

    Built on first use: its fields, defaults and ranges are read from the C++ attributes, which
    loads the compiled fabric.
    """
    fields = _knob_fields(knobs.section_knobs(knobs.TOP_LEVEL))
    for section in _knob_sections():
        model = section_model(section)
        fields[section] = (model, Field(default_factory=model))
    cls = create_model("FabricConfig", __base__=FabricConfigBase, __module__=__name__, **fields)
    cls.__doc__ = _FABRIC_DOC
    cls.__qualname__ = "FabricConfig"
    return cls


def __getattr__(name: str) -> Any:
    # FabricConfig and the section models are built from the compiled fabric's attributes, on first
    # use, so that importing this module (for DelayClasses, SCHEDULERS ...) loads no simulator
    if name == "FabricConfig":
        return fabric_config_class()
    models = {"DcqcnParams": "dcqcn", "DctcpParams": "dctcp", "DctcpRateParams": "dctcp_rate",
              "TimelyParams": "timely", "HpccParams": "hpcc", "WindowParams": "window", "BufferParams": "buffer"}
    if name in models:
        return section_model(models[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_FABRIC_DOC = """Everything about a fabric except its topology and its flows.

    Attributes:
        seed: Seed of every random decision inside the fabric (ECMP salt, RED draws).
        num_queues: Queues per port including the strict-priority control queue 0 (2..8).
        aqm: The AQM policy every switch egress port starts with, per switch layer: ``{"all" |
            layer: {"policy": name, **parameters, "by_rate": {link rate: parameters}}}`` (a
            bare name: the policy at its defaults). Every port is born with the ``"all"``
            setting (without one: RED at its defaults); a named layer's setting is installed
            over it at build (over the ``"all"`` parameters where it names the same policy).
            ``by_rate`` gives parameters per link rate, over the setting's own, on the ports of
            that rate (the HPCC model's ``KMIN_MAP`` / ``KMAX_MAP`` / ``PMAX_MAP``); when given,
            every port of the layer needs its rate's entry. E.g. ``{"all": {"policy": "red",
            "kmin_bytes": "400KB", "kmax_bytes": "1600KB", "pmax": 0.2, "mark_at_dequeue":
            True}, "leaf": {"policy": "pred", "lambda_qla": 0.1}}``. Overrides merge layer by
            layer (:meth:`updated`). Policies, parameters, ranges and defaults: the C++
            attributes (:mod:`ecngym.sim_backend.aqm`, [AQM policies](aqm-policies.md)).
        scheduler: ns-3's event scheduler: ``"timing_wheel"`` (ours, the default: a nanosecond
            timing wheel over 16 us plus a heap for later events, ``timing-wheel-scheduler.h``)
            or one of ns-3's own, ``"priority_queue"``, ``"map"``, ``"heap"``, ``"calendar"``,
            ``"list"``. Every scheduler runs events in the same order, so results are
            bit-identical; only the speed differs.

    The simulator's knobs (at the top level the NIC's sizes and timers and the choices ``cc``,
    ``ecn_feedback``, ``nic_pacing_wake``, ``switch_ack_queue``, ``ecmp_hash``,
    ``tx_time_rounding``; the sections ``dcqcn``, ``dctcp``, ``dctcp_rate``, ``timely``, ``hpcc``,
    ``window`` (the NIC window of any rate-based CC), ``buffer``) are fields read from the C++
    attributes (:mod:`ecngym.sim_backend.knobs`): their one home of name, default, allowed values
    and description.
    """


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
        "aqm": {ALL_LAYERS: {"policy": "red", "kmin_bytes": "400KB", "kmax_bytes": "1600KB", "pmax": 0.2,
                             "mark_at_dequeue": True}},
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
        "aqm": {ALL_LAYERS: {"policy": "red", "kmin_bytes": "5KB", "kmax_bytes": "200KB", "pmax": 0.01,
                             "mark_at_dequeue": False}},
    },
    "dctcp": {
        "cc": "dctcp",
        "ecn_feedback": "ack_echo",
        "aqm": {ALL_LAYERS: {"policy": "red", "kmin_bytes": "65KB", "kmax_bytes": "65KB", "pmax": 1.0,
                             "mark_at_dequeue": False}},
    },
}


def preset_names() -> list[str]:
    """Return the names of the fabric presets."""
    return sorted(_PRESETS)
