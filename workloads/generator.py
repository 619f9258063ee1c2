"""Compose arrival patterns into one hashed :class:`~ecngym.workloads.trace.Trace`.

Randomness: the seed feeds one ``numpy.random.SeedSequence``, spawned into one child per
component (background, incast, permutation, long-lived; the background's child is spawned again
per load phase), each driving its own PCG64 generator. So adding a component (say, incast) never
changes the flows of another (the background), and the same parameters and seed give the same
table, and hash, on any machine. (NumPy guarantees PCG64's bit stream across versions, not its
distribution algorithms, e.g. ``Generator.exponential``; so traces are recorded with the NumPy
version, ``params["rng"]``, and a trace's Parquet file, not its recipe, is the durable artefact.)
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ecngym.error import ConfigError, check_range
from ecngym.units import MAX_TIME_NS, parse_bytes, parse_rate_bps, parse_time_ns
from ecngym.validation import MAX_SIMULATION_SEED, Flag, check, check_whole
from ecngym.workloads import arrivals
from ecngym.workloads.distributions import NO_BACKGROUND, FlowSizeDistribution, check_workload, get_distribution
from ecngym.workloads.trace import DEFAULT_PRIORITY, Trace

# Child index of each component's random stream: never reorder (it would change every trace).
_STREAMS = {"background": 0, "incast": 1, "permutation": 2, "long_lived": 3}
#: Above this many expected flows, generation shows a progress bar (on stderr).
PROGRESS_MIN_FLOWS = 100_000
#: The most flows a trace may be expected to have. Generating one takes ~300 B of peak memory per
#: flow (measured at 2-8 million flows: the arrival draws, the 51 B/flow table, its sorted canonical
#: copy and the hash), so 5 x 10^7 flows take ~15 GB, within a 24 GiB machine, and 10^8 would not;
#: beyond the bound, generation would fail allocating (or swap) after minutes of work.
MAX_TRACE_FLOWS = 50_000_000
#: Peak bytes per generated flow, for the bound's message.
_PEAK_BYTES_PER_FLOW = 300

# The keys each arrival-pattern section accepts, with their defaults.
SECTION_DEFAULTS: dict[str, dict[str, Any]] = {
    "incast": {"degree": 0, "size": "64KB", "interval": None, "load": None, "arrival": "poisson",
               "receiver": None, "at": "0ns"},
    "permutation": {"size": 0, "at": "0ns"},
    "all_to_all": {"size": 0, "at": "0ns"},
    "long_lived": {"flows": 0, "size": "1GB", "receiver": None, "at": "0ns"},
}
_DEFAULT_INCAST_INTERVAL = "1ms"
#: The field that turns each pattern on (0 = the pattern is off and its other fields unused): a
#: count, or a size. Read by :func:`_switch` only.
_SECTION_SWITCH = {"incast": "degree", "permutation": "size", "all_to_all": "size", "long_lived": "flows"}


def _section_keys(name: str, given: Any, field: str | None = None) -> dict[str, Any]:
    """The keys given for pattern ``name`` as a dict, checked to be a mapping of the section's keys.

    Args:
        name: The pattern (``incast``, ``permutation``, ``all_to_all``, ``long_lived``).
        given: Its section as given.
        field: The field named in errors (default ``trace.<name>``; a mix's is ``workload.<name>``).

    Raises:
        ConfigError: Naming ``field`` if ``given`` is no mapping, or ``field.<key>`` for a key the
            section does not have (listing the known ones).
    """
    field = field or f"trace.{name}"
    defaults = SECTION_DEFAULTS[name]
    if not isinstance(given, Mapping):
        raise ConfigError(field, f"expected a mapping of {sorted(defaults)}, got {given!r}")
    unknown = sorted(set(given) - set(defaults), key=str)  # (key=str: a key may be no string)
    if unknown:
        raise ConfigError(f"{field}.{unknown[0]}", f"unknown key; {name} has {sorted(defaults)}")
    return dict(given)


def _section(name: str, given: Mapping[str, Any] | None) -> dict[str, Any]:
    """A pattern section with defaults filled in (``None`` values mean "default").

    Raises:
        ConfigError: As :func:`_section_keys`.
    """
    defaults = SECTION_DEFAULTS[name]
    if given is None:
        return dict(defaults)
    given = _section_keys(name, given)
    return {k: (given.get(k) if given.get(k) is not None else d) for k, d in defaults.items()}


def _switch(name: str, section: Mapping[str, Any], high: int | None = None) -> int:
    """The value of the field that turns pattern ``name`` on (0: off), a whole count or a size in bytes.

    The one reading of a pattern's on/off switch, for :func:`generate_trace` (:func:`_pattern`) and
    for :func:`without_fields_of_patterns_off`.

    Args:
        name: The pattern (``incast``, ``permutation``, ``all_to_all``, ``long_lived``).
        section: Its section, defaults filled in (:func:`_section`).
        high: The largest count allowed (it depends on the host count), or ``None``.

    Returns:
        The count, or the size in bytes.

    Raises:
        ConfigError: Naming ``trace.<name>.<switch>`` if it is no whole count (in [0, ``high``]) or
            no size.
    """
    key = _SECTION_SWITCH[name]
    field = f"trace.{name}.{key}"
    if key == "size":
        return parse_bytes(section[key], field)
    return check_whole(field, section[key], 0, high)


def _pattern(name: str, given: Any, high: int | None = None) -> tuple[dict[str, Any], int]:
    """Pattern ``name``'s section, defaults filled in (:func:`_section`), and its switch (:func:`_switch`).

    A pattern that is off (switch 0 or not given) reads none of its other fields, so one given
    (not ``None``) is refused: it would be ignored.

    Args:
        name: The pattern (``incast``, ``permutation``, ``all_to_all``, ``long_lived``).
        given: Its section as given to :func:`generate_trace` (``None``: not given).
        high: The largest count the switch may be, or ``None``.

    Returns:
        The section and the switch's value (0: off).

    Raises:
        ConfigError: As :func:`_section` and :func:`_switch`; naming ``trace.<name>.<field>`` for a
            field of a pattern that is off.
    """
    section = _section(name, given)
    on = _switch(name, section, high)
    switch = _SECTION_SWITCH[name]
    unused = [] if on or given is None else [k for k, v in given.items() if k != switch and v is not None]
    if unused:
        raise ConfigError(f"trace.{name}.{unused[0]}", f"got {given[unused[0]]!r}, but {name}.{switch} is "
                                                       f"{given.get(switch) or 0} (no {name}), so it would be ignored; "
                                                       f"set {name}.{switch} (> 0) or leave {name}.{unused[0]} out")
    return section, on


def without_fields_of_patterns_off(workload: Mapping[str, Any]) -> dict[str, Any]:
    """``workload`` (:func:`generate_trace` arguments) with only the switch of each pattern that is off.

    For a workload merged key by key over a base that turns a pattern on (an env's scenario, a
    config's mix, e.g. ``incast: {degree: 8, size: 64KB, interval: 200us}``): an override that turns
    it off (``incast.degree: 0``) leaves the base's other fields in the merge; they are the base's,
    unused, and :func:`generate_trace` would refuse them as given.

    Raises:
        ConfigError: As :func:`_section` and :func:`_switch` (a section that is a mapping).
    """
    out = dict(workload)
    for name, switch in _SECTION_SWITCH.items():
        if isinstance(out.get(name), Mapping) and not _switch(name, _section(name, out[name])):
            out[name] = {switch: out[name].get(switch)}
    return out


#: The keys a traffic phase (``trace.phases[i]``) takes; ``at`` is required.
PHASE_KEYS = ("at", "load", "workload", "incast")


def _phase_distribution(i: int, name: Any) -> FlowSizeDistribution:
    """Phase ``i``'s background flow-size distribution: a built-in workload name.

    Raises:
        ConfigError: Naming ``trace.phases[i].workload`` if ``name`` is no built-in workload
            (``fixed``, ``custom`` and ``none`` take arguments or have no distribution).
    """
    from ecngym.workloads.distributions import BUILTIN_CDFS

    if not isinstance(name, str) or name not in BUILTIN_CDFS:
        raise ConfigError(f"trace.phases[{i}].workload", f"got {name!r}; a phase's workload is a built-in name: "
                                                         f"{sorted(BUILTIN_CDFS)} (an idle phase: load 0)")
    return get_distribution(name)


def _incast_segment(field: str, section: Mapping[str, Any], degree: int, hosts: int, rate: float) -> dict[str, Any]:
    """An incast section's values with units resolved (size in bytes, interval in ns).

    Args:
        field: The section's field in errors (``trace.incast`` or ``trace.phases[i].incast``).
        section: Its fields, defaults filled in.
        degree: The degree (> 0, checked).
        hosts: Number of hosts.
        rate: Host link rate, bit/s.

    Returns:
        ``{degree, size_bytes, interval_ns, load, arrival, receiver}``.

    Raises:
        ConfigError: Naming ``<field>.<key>`` on a bad size, arrival, load or interval (both given),
            receiver.
    """
    size_b = parse_bytes(section["size"], f"{field}.size")
    if size_b <= 0:
        raise ConfigError(f"{field}.size", f"must be > 0, got {section['size']!r}")
    if section["arrival"] not in ("poisson", "periodic"):
        raise ConfigError(f"{field}.arrival", f"got {section['arrival']!r}, allowed: 'poisson', 'periodic'")
    if section["load"] is not None and section["interval"] is not None:
        raise ConfigError(f"{field}.load", "give incast.interval or incast.load, not both")
    if section["load"] is not None:
        inc_load = _load(f"{field}.load", section["load"])
        exact_ns = degree * size_b * 8e9 / (inc_load * hosts * rate)
        if not 1 <= exact_ns <= MAX_TIME_NS:  # (below 1 ns it was clamped to 1: another load than asked)
            raise ConfigError(f"{field}.load", f"got {section['load']!r}, which implies {exact_ns:.3g} ns between "
                              f"bursts (degree x size x 8 / (load x hosts x link rate) = {degree} x {size_b} B "
                              f"x 8 / ({inc_load:g} x {hosts} x {rate:g} bit/s)); allowed range is [1, 2^62] "
                              f"ns, as incast.interval's")
        interval_ns = round(exact_ns)
    else:
        interval = section["interval"] if section["interval"] is not None else _DEFAULT_INCAST_INTERVAL
        interval_ns = _positive_ns(f"{field}.interval", interval)
    receiver = None if section["receiver"] is None else check_whole(f"{field}.receiver", section["receiver"],
                                                                    0, hosts - 1)
    return {"degree": degree, "size_bytes": size_b, "interval_ns": interval_ns, "load": section["load"],
            "arrival": section["arrival"], "receiver": receiver}


def _incast_flows(rng: np.random.Generator, hosts: int, seg: Mapping[str, Any], start_ns: int,
                  end_ns: int) -> pd.DataFrame:
    """The incast bursts of one resolved section (:func:`_incast_segment`) in [start_ns, end_ns)."""
    periodic = seg["arrival"] == "periodic"
    return arrivals.incast(rng, hosts, seg["degree"], seg["size_bytes"], start_ns, end_ns,
                           period_ns=seg["interval_ns"] if periodic else None,
                           mean_interval_ns=None if periodic else seg["interval_ns"], receiver=seg["receiver"])


def _positive_ns(field: str, value: Any) -> int:
    ns = parse_time_ns(value, field)
    if ns <= 0:
        raise ConfigError(field, f"must be > 0, got {value!r}")
    return ns


def _load(field: str, value: Any, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ConfigError(field, f"expected a number in {'[' if allow_zero else '('}0, 1), got {value!r}")
    return float(check_range(field, float(value), 0.0, 1.0, low_inclusive=allow_zero, high_inclusive=False,
                             given=value))


def _check_flow_count(counts: dict[str, float], fields: dict[str, tuple[str, str]]) -> None:
    """Refuse a trace expected to have more than :data:`MAX_TRACE_FLOWS` flows, before any is drawn.

    Args:
        counts: The expected flows of each pattern that is on.
        fields: Each pattern's field to name and what drives its count (as a formula with values).

    Raises:
        ConfigError: Naming the field that drives the largest count, with every pattern's count.
    """
    expected = sum(counts.values())
    if expected <= MAX_TRACE_FLOWS:
        return
    top = max(counts, key=counts.__getitem__)
    field, drivers = fields[top]
    shares = f" (of {', '.join(f'{name} ~{n:.3g}' for name, n in counts.items())})" if len(counts) > 1 else ""
    raise ConfigError(field, f"the trace would have ~{expected:.3g} flows, more than the {MAX_TRACE_FLOWS:.0e} a "
                             f"trace may have (~{_PEAK_BYTES_PER_FLOW} B of memory per flow to generate: "
                             f"~{expected * _PEAK_BYTES_PER_FLOW / 1e9:.3g} GB); {top} ~{counts[top]:.3g} = "
                             f"{drivers}{shares}")


def generate_trace(
    workload: str = "websearch",
    *,
    load: float = 0.5,
    hosts: int = 16,
    link_rate: str | float = "100Gbps",
    duration: str | int = "10ms",
    start: str | int = "0ns",
    seed: int = 1,
    size: str | int | None = None,
    cdf_file: str | Path | None = None,
    phases: list[Mapping[str, Any]] | None = None,
    incast: Mapping[str, Any] | None = None,
    permutation: Mapping[str, Any] | None = None,
    all_to_all: Mapping[str, Any] | None = None,
    long_lived: Mapping[str, Any] | None = None,
    priority: int = DEFAULT_PRIORITY,
    progress: bool | None = None,
) -> Trace:
    """Generate a trace: Poisson background flows plus any of the other arrival patterns.

    Sizes accept human units (``"64KB"`` = 64 000 B, ``"1MiB"``), times too (``"10ms"``, or an
    integer in ns), rates too (``"100Gbps"``, or a number in bit/s); see :mod:`ecngym.units`.

    Args:
        workload: Flow-size distribution of the Poisson background: a built-in name
            (``websearch``, ``datamining``, ``fb_hadoop``, ``alibaba_storage``, ``google_rpc``,
            ``pred_workload1``, ``pred_workload2``), ``fixed`` (with ``size``), ``custom`` (with
            ``cdf_file``), or ``none`` for no background (then ``load`` is ignored, and another
            pattern must be on).
        load: Target offered load of every host link by the background, in (0, 1): offered
            bytes x 8 / (hosts x link rate x duration).
        hosts: Number of hosts (indices 0 .. hosts-1), at least 2.
        link_rate: Host link rate.
        duration: Length of the arrival window (> 0). Flows start in [start, start + duration).
        start: Start of the window.
        seed: Seed of every random draw, in [0, 2^64 - 1]
            (:data:`ecngym.validation.MAX_SIMULATION_SEED`, as an env's episode seed, which seeds
            its trace).
        size: Flow size of the ``fixed`` workload (refused with another workload: unused).
        cdf_file: CDF file of the ``custom`` workload (HPCC ``size cdf_percent`` or
            TrafficGenerator ``size cdf_fraction`` lines; refused with another workload: unused).
        phases: Traffic phases, e.g. ``[{"at": "100ms", "load": 0.7}]``: from ``at`` (relative
            to ``start``, increasing, inside the window) the traffic changes as the phase says;
            what it leaves out carries over from the previous phase. ``load``: the background's
            load, in [0, 1) (0 = an idle phase); ``workload``: the background's flow sizes, a
            built-in name; ``incast``: incast fields (degree, size, interval or load, arrival,
            receiver) merged over the previous phase's (``{"degree": 0}``: no incast in the
            phase; an incast may start in a phase). The top-level arguments apply before the
            first phase. Each phase's background and incast draw from their own random streams;
            a trace without incast phases draws its incast exactly as without phases.
            ``params["phases"]`` records each phase's ``at_ns`` and its resolved changes.
        incast: ``{"degree": N, "size": "64KB", "interval": "1ms" | "load": 0.02, "arrival":
            "poisson" | "periodic", "receiver": None, "at": "0ns"}``: bursts of N distinct
            senders each sending ``size`` to one receiver (never a sender): every ``interval``
            (periodic) or at Poisson times with that mean. Instead of ``interval``, ``load``
            sets the mean interval so that the incasts offer that load of the host links
            (HPCC's recipe: 60 x 500 KB at 2 %), rounded to whole ns; a load that implies an
            interval below 1 ns (or above 2^62 ns) is refused. ``receiver`` None = random per
            burst. Bursts start at ``start + at``. Degree 0 (default) = no incast.
        permutation: ``{"size": "1MB", "at": "0ns"}``: every host sends one flow to another,
            every host receiving one (a random derangement). Size 0 = none.
        all_to_all: ``{"size": "100KB", "at": "0ns"}``: one flow per ordered host pair (a
            shuffle). Size 0 = none.
        long_lived: ``{"flows": 2, "size": "1GB", "receiver": 0, "at": "0ns"}``: flows from
            distinct senders to ``receiver`` (None = a random other host each) for steady-state
            tests. Flows 0 = none.

            A pattern that is off (degree, size or flows 0 or not given) takes no other field
            (not ``None``): it would be unused.
        priority: Priority (queue) of every flow, 1..7 (3 as in the HPCC simulator).
        progress: Show a progress bar (true or false); default (``None``): only when over
            :data:`PROGRESS_MIN_FLOWS` flows are expected.

    At most :data:`MAX_TRACE_FLOWS` flows may be expected (the patterns' expected counts: the
    background's from its load, hosts, link rate, duration and mean flow size).

    Returns:
        The trace; its ``params`` hold every parameter with units resolved (bytes, ns, bit/s).

    Raises:
        ConfigError: Naming the first bad parameter: load >= 1 or <= 0, fewer than two hosts, a
            duration <= 0, a workload name that is no string or unknown (with the closest name
            suggested), a size or CDF file the workload does not read, a bad CDF file (with its
            line), workload 'none' with no pattern on, an incast degree >= hosts, an incast load
            implying an interval below 1 ns, an unknown section key, a field of a pattern that is
            off, phases that are not a list, a progress that is no boolean, more than
            :data:`MAX_TRACE_FLOWS` flows expected (naming the field that drives the largest count:
            ``trace.duration`` for the background, ``trace.incast.interval`` or ``.load``,
            ``trace.hosts`` for all-to-all), ...
    """
    workload = check_workload(workload, size=size, cdf_file=cdf_file)  # (an argument 'none' does not read too)
    hosts_n = check_whole("trace.hosts", hosts, 2, 10**7)
    rate = parse_rate_bps(link_rate, "trace.link_rate")
    duration_ns = _positive_ns("trace.duration", duration)
    start_ns = parse_time_ns(start, "trace.start")
    end_ns = start_ns + duration_ns
    prio = check_whole("trace.priority", priority, 1, 7)
    show_progress = None if progress is None else check("trace.progress", progress, Flag)  # ('yes' is no flag)
    seed_i = check_whole("trace.seed", seed, 0, MAX_SIMULATION_SEED)
    if phases is not None and not isinstance(phases, (list, tuple)):  # (0 or "" would read as no phases)
        raise ConfigError("trace.phases", f"expected a list of {{at: <time>, load: <0..1>}}, got {phases!r}")
    background = workload != NO_BACKGROUND
    dist: FlowSizeDistribution | None = None
    if background:
        if isinstance(load, (int, float)) and not isinstance(load, bool) and load == 0:
            raise ConfigError("trace.load", "got 0, allowed range is (0, 1); for a trace without background "
                                            "flows use workload=none")
        load_f = _load("trace.load", load)
        size_b = parse_bytes(size, "workload.size") if size is not None else None
        dist = get_distribution(workload, cdf_file=cdf_file, size_bytes=size_b)

    # traffic phases: [start, at_1) as configured, [at_1, at_2) with phase 1's changes, ...
    bounds, loads, dists = [start_ns], [load_f] if background else [], [dist]
    phase_params: list[dict[str, Any]] = []
    phase_incasts: list[Mapping[str, Any] | None] = []
    for i, ph in enumerate(phases or []):
        if not isinstance(ph, Mapping) or "at" not in ph or not set(ph) <= set(PHASE_KEYS):
            raise ConfigError(f"trace.phases[{i}]", f"expected {{at: <time>, and any of load: <0..1>, workload: "
                                                    f"<name>, incast: <incast fields>}}, got {ph!r}")
        at = start_ns + parse_time_ns(ph["at"], f"trace.phases[{i}].at")
        if not bounds[-1] < at < end_ns:
            raise ConfigError(f"trace.phases[{i}].at", f"got {ph['at']!r}: phase starts must increase and lie "
                                                       f"inside the window (0, {duration_ns} ns)")
        bounds.append(at)
        entry: dict[str, Any] = {"at_ns": int(at - start_ns)}
        for key in ("load", "workload"):
            if key in ph and not background:
                raise ConfigError(f"trace.phases[{i}].{key}", f"got {ph[key]!r}, but background phases need a "
                                                              f"background workload (workload is 'none')")
        if background:
            loads.append(_load(f"trace.phases[{i}].load", ph["load"], allow_zero=True) if "load" in ph
                         else loads[-1])
            entry["load"] = loads[-1]
            dists.append(_phase_distribution(i, ph["workload"]) if "workload" in ph else dists[-1])
            if "workload" in ph:
                entry["workload"] = dists[-1].name
        phase_incasts.append(ph.get("incast"))
        phase_params.append(entry)
    bounds.append(end_ns)

    inc, degree = _pattern("incast", incast, hosts_n - 1)
    if degree:
        inc_segment = _incast_segment("trace.incast", inc, degree, hosts_n, rate)
        inc_at = start_ns + parse_time_ns(inc["at"], "trace.incast.at")
    # incast phases: each phase's incast fields merge over the previous phase's (degree 0: none then)
    incast_phased = any(p is not None for p in phase_incasts)
    segments: list[tuple[int, int, dict[str, Any] | None]] = []
    if incast_phased:
        section = dict(inc)
        current = inc_segment if degree else None
        seg_start = start_ns + (parse_time_ns(inc["at"], "trace.incast.at") if degree else 0)
        for i, (given, a, b) in enumerate(zip([None, *phase_incasts], bounds[:-1], bounds[1:], strict=True)):
            if given is not None:
                field = f"trace.phases[{i - 1}].incast"
                given = _section_keys("incast", given, field)
                if "at" in given:
                    raise ConfigError(f"{field}.at", "a phase's incast starts at the phase's start (phases[].at)")
                if given.get("load") is not None:
                    section["interval"] = None
                if given.get("interval") is not None:
                    section["load"] = None
                section.update({k: v for k, v in given.items() if v is not None})
                deg = check_whole(f"{field}.degree", section["degree"], 0, hosts_n - 1)
                current = _incast_segment(field, section, deg, hosts_n, rate) if deg else None
                phase_params[i - 1]["incast"] = None if current is None else {
                    k: current[k] for k in ("degree", "size_bytes", "interval_ns", "load", "arrival", "receiver")}
            segments.append((max(a, seg_start), b, current))
    perm, perm_size = _pattern("permutation", permutation)
    a2a, a2a_size = _pattern("all_to_all", all_to_all)
    ll, n_long = _pattern("long_lived", long_lived)  # (its bound depends on the receiver: checked below)
    if n_long:
        ll_receiver = None if ll["receiver"] is None else check_whole("trace.long_lived.receiver", ll["receiver"],
                                                                 0, hosts_n - 1)
        n_long = _switch("long_lived", ll, hosts_n - (ll_receiver is not None))
        ll_size = parse_bytes(ll["size"], "trace.long_lived.size")
        if ll_size <= 0:
            raise ConfigError("trace.long_lived.size", f"must be > 0, got {ll['size']!r}")

    # expected flows of each pattern, and what drives each count: bound before anything is allocated
    counts: dict[str, float] = {}
    fields: dict[str, tuple[str, str]] = {}
    if dist is not None:
        counts["background"] = sum(ld * hosts_n * rate / (8 * d.mean_bytes) * (b - a) / 1e9
                                   for ld, d, a, b in zip(loads, dists, bounds[:-1], bounds[1:], strict=True))
        fields["background"] = ("trace.duration", f"load x hosts x link rate x duration / (8 x mean flow size) = "
                                                  f"{load_f:g}{' (and phases)' if len(loads) > 1 else ''} x "
                                                  f"{hosts_n} x {rate:g} bit/s x {duration_ns} ns / (8 x "
                                                  f"{dist.mean_bytes:.6g} B)")
    if incast_phased:
        counts["incast"] = sum(g["degree"] * max(0, b - a) / g["interval_ns"] for a, b, g in segments if g)
        fields["incast"] = ("trace.phases", "the sum over phases of degree x phase length / interval")
        if not counts["incast"]:
            del counts["incast"]
    elif degree:
        counts["incast"] = degree * max(0, end_ns - inc_at) / inc_segment["interval_ns"]
        fields["incast"] = ("trace.incast.load" if inc["load"] is not None else "trace.incast.interval",
                            f"degree x duration / interval = {degree} x {max(0, end_ns - inc_at)} ns / "
                            f"{inc_segment['interval_ns']} ns")
    if perm_size:
        counts["permutation"] = hosts_n
        fields["permutation"] = ("trace.hosts", f"one flow per host = {hosts_n}")
    if a2a_size:
        counts["all_to_all"] = hosts_n * (hosts_n - 1)
        fields["all_to_all"] = ("trace.hosts", f"hosts x (hosts - 1) = {hosts_n} x {hosts_n - 1}")
    if n_long:
        counts["long_lived"] = n_long
        fields["long_lived"] = ("trace.long_lived.flows", f"{n_long} flows")
    if not counts:  # (a trace without flows is refused where it is replayed: refuse it where it is made)
        raise ConfigError("workload.name", "got 'none' (no background flows) and no other arrival pattern, so the "
                                           "trace could have no flow; give a background workload (e.g. websearch) "
                                           "or turn a pattern on (incast.degree, permutation.size, all_to_all.size "
                                           "or long_lived.flows > 0)")
    _check_flow_count(counts, fields)
    expected = sum(counts.values())
    show = show_progress if show_progress is not None else expected > PROGRESS_MIN_FLOWS

    children = np.random.SeedSequence(seed_i).spawn(len(_STREAMS))
    rngs = {name: np.random.default_rng(children[i]) for name, i in _STREAMS.items()}
    parts: list[pd.DataFrame] = []
    params: dict[str, Any] = {
        "workload": dist.name if dist is not None else NO_BACKGROUND,
        "load": load_f if background else None,
        "hosts": hosts_n, "link_rate_bps": rate, "duration_ns": duration_ns, "start_ns": start_ns,
        "mean_flow_bytes": dist.mean_bytes if dist is not None else None,
        "phases": phase_params,
        "incast": None, "permutation": None, "all_to_all": None, "long_lived": None, "priority": prio,
        "rng": f"numpy {np.__version__} PCG64, SeedSequence({seed_i}).spawn({len(_STREAMS)})",
    }
    with _Progress(show, len(loads) + 5) as bar:
        if dist is not None:
            phase_rngs = [np.random.default_rng(s) for s in children[_STREAMS["background"]].spawn(len(loads))]
            for i, (ld, d, a, b, prng) in enumerate(zip(loads, dists, bounds[:-1], bounds[1:], phase_rngs,
                                                        strict=True)):
                bar.start(f"background (phase {i + 1}/{len(loads)}, ~{expected:,.0f} flows in all)")
                parts.append(arrivals.poisson_background(prng, d, hosts_n, rate, ld, a, b))
        bar.start("incast")
        if incast_phased:  # one stream per phase (a trace without incast phases keeps its single stream)
            seg_rngs = [np.random.default_rng(s) for s in children[_STREAMS["incast"]].spawn(len(segments))]
            for (a, b, g), srng in zip(segments, seg_rngs, strict=True):
                if g is not None and a < b:
                    parts.append(_incast_flows(srng, hosts_n, g, a, b))
        elif degree:
            parts.append(_incast_flows(rngs["incast"], hosts_n, inc_segment, inc_at, end_ns))
        if degree:
            params["incast"] = {**{k: inc_segment[k] for k in ("degree", "size_bytes", "interval_ns", "load",
                                                               "arrival", "receiver")}, "at_ns": inc_at - start_ns}
        bar.start("permutation")
        if perm_size:
            at = parse_time_ns(perm["at"], "trace.permutation.at")
            parts.append(arrivals.permutation(rngs["permutation"], hosts_n, perm_size, start_ns + at))
            params["permutation"] = {"size_bytes": perm_size, "at_ns": at}
        bar.start("all-to-all")
        if a2a_size:
            at = parse_time_ns(a2a["at"], "trace.all_to_all.at")
            parts.append(arrivals.all_to_all(hosts_n, a2a_size, start_ns + at))
            params["all_to_all"] = {"size_bytes": a2a_size, "at_ns": at}
        bar.start("long-lived")
        if n_long:
            at = parse_time_ns(ll["at"], "trace.long_lived.at")
            parts.append(arrivals.long_lived(rngs["long_lived"], hosts_n, n_long, ll_size, start_ns + at, ll_receiver))
            params["long_lived"] = {"flows": n_long, "size_bytes": ll_size, "receiver": ll_receiver, "at_ns": at}
        bar.start("sorting and hashing")
        nonempty = [p for p in parts if len(p)]
        flows = pd.concat(nonempty, ignore_index=True) if nonempty else arrivals.no_flows()
        flows["priority"] = prio
        trace = Trace(flows, params=params, seed=seed_i)
    return trace


#: Keys of a workload mapping that describe its flow sizes (the rest are arrival patterns: a mix).
_SIZE_KEYS = ("name", "size", "cdf_file", "description")
_MIX_KEYS = ("phases", *SECTION_DEFAULTS)


def generate_trace_from_config(cfg: Mapping[str, Any]) -> Trace:
    """Generate from a (Hydra) mapping of :func:`generate_trace` arguments.

    ``workload`` is a name or a mapping ``{name, size?, cdf_file?, description?}``. A workload
    mapping may also carry arrival-pattern sections (``incast``, ``permutation``, ``all_to_all``,
    ``long_lived``, ``phases``): a *mix*. They are the base for the top-level sections: a
    top-level field that is set (not ``None``) overrides the mix's field, so
    ``workload=hpcc_incast incast.degree=16`` keeps the mix's incast size and load. An ``output``
    key is ignored (the CLI's).

    Args:
        cfg: The mapping (an ``OmegaConf.to_container`` of ``configs/trace.yaml``).

    Returns:
        The trace.

    Raises:
        ConfigError: Naming ``trace`` if ``cfg`` is no mapping; on an unknown key or a bad value
            (a pattern section that is no mapping, the mix's named ``workload.<pattern>``), or a
            top-level field of a pattern that stays off (``incast.size`` while ``incast.degree`` is
            0 or unset: it would be ignored; a mix's fields of a pattern that a top-level field
            turns off are left out, :func:`without_fields_of_patterns_off`).
    """
    if not isinstance(cfg, Mapping):
        raise ConfigError("trace", f"expected a mapping of generate_trace arguments, got {cfg!r}")
    cfg = dict(cfg)
    workload = cfg.pop("workload", "websearch")
    cfg.pop("output", None)
    if isinstance(workload, Mapping):
        wl = dict(workload)
        unknown = sorted(set(wl) - set(_SIZE_KEYS) - set(_MIX_KEYS), key=str)  # (key=str: a key may be no string)
        if unknown:
            raise ConfigError(f"workload.{unknown[0]}", f"unknown key; a workload has {[*_SIZE_KEYS, *_MIX_KEYS]}")
        for key in ("size", "cdf_file"):
            if cfg.get(key) is None and wl.get(key) is not None:
                cfg[key] = wl[key]
        for key in SECTION_DEFAULTS:
            if wl.get(key) is not None:
                mix = _section_keys(key, wl[key], f"workload.{key}")
                top = {} if cfg.get(key) is None else _section_keys(key, cfg[key])
                top = {k: v for k, v in top.items() if v is not None}  # the top-level fields set
                # a pattern left off keeps none of the mix's fields (unused), but the user's (refused)
                cfg[key] = {**without_fields_of_patterns_off({key: {**mix, **top}})[key], **top}
        if wl.get("phases") and not cfg.get("phases"):
            cfg["phases"] = wl["phases"]
        if "name" not in wl or wl["name"] is None:
            raise ConfigError("workload.name", "missing: the workload's name (e.g. websearch)")
        name = wl["name"]
    else:
        name = workload
    known = set(inspect.signature(generate_trace).parameters) - {"workload"}
    unknown = sorted(set(cfg) - known, key=str)
    if unknown:
        raise ConfigError(f"trace.{unknown[0]}", f"unknown field; known: {sorted(known)}")
    cfg = {k: v for k, v in cfg.items() if v is not None}  # None = the generator's default
    return generate_trace(name, **cfg)  # (which refuses a field of a pattern left off)


class _Progress:
    """A rich progress bar (on stderr) over the generation steps, or nothing."""

    def __init__(self, show: bool, total: int) -> None:
        self._show, self._total = show, total
        self._progress: Any = None
        self._started = False

    def __enter__(self) -> _Progress:
        if self._show:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                      TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self._progress.start()
            self._task = self._progress.add_task("generating trace", total=self._total)
        return self

    def start(self, step: str) -> None:
        """Mark the running step (if any) done and show ``step`` as running."""
        if self._progress is not None:
            self._progress.update(self._task, advance=1 if self._started else 0,
                                  description=f"generating trace: {step}")
            self._started = True

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
