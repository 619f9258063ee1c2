"""Compose arrival patterns into one hashed :class:`~ecngym.workloads.trace.Trace`."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ecngym.error import ConfigError, check_range
from ecngym.units import parse_bytes, parse_rate_bps, parse_time_ns
from ecngym.workloads import arrivals
from ecngym.workloads.distributions import get_distribution
from ecngym.workloads.trace import Trace

# Each component draws from its own child of the seed, so adding one (say, incast) never changes
# the flows of another (the background).
_STREAMS = {"background": 0, "incast": 1, "permutation": 2, "long_lived": 3}
_PROGRESS_MIN_FLOWS = 200_000


def _opt(section: Mapping[str, Any] | None, key: str, default: Any = None) -> Any:
    if not section:
        return default
    value = section.get(key, default)
    return default if value is None else value


def generate_trace(
    workload: str = "websearch",
    *,
    load: float = 0.5,
    hosts: int = 16,
    link_rate: Any = "100Gbps",
    duration: Any = "10ms",
    start: Any = "0ns",
    seed: int = 1,
    size: Any = None,
    cdf_file: str | None = None,
    phases: list[Mapping[str, Any]] | None = None,
    incast: Mapping[str, Any] | None = None,
    permutation: Mapping[str, Any] | None = None,
    all_to_all: Mapping[str, Any] | None = None,
    long_lived: Mapping[str, Any] | None = None,
    priority: int = 3,
    progress: bool | None = None,
) -> Trace:
    """Generate a trace.

    Args:
        workload: Flow-size distribution of the Poisson background: a built-in name
            (``websearch``, ``datamining``, ``fb_hadoop``, ``alibaba_storage``, ``google_rpc``,
            ``pred_workload1``, ``pred_workload2``), ``fixed`` (with ``size``) or ``custom``
            (with ``cdf_file``).
        load: Target offered load of the host links by the background, in [0, 1).
        hosts: Number of hosts (indices 0 .. hosts-1).
        link_rate: Host link rate ("100Gbps").
        duration: Length of the arrival window ("10ms").
        start: Time of the window's start ("0ns").
        seed: Seed of every random draw.
        size: Flow size of the ``fixed`` workload ("64KB").
        cdf_file: CDF file of the ``custom`` workload.
        phases: Load changes: ``[{"at": "100ms", "load": 0.7}, ...]`` (``at`` relative to start).
        incast: ``{"degree": N, "size": "64KB", "interval": "1ms", "arrival": "poisson" |
            "periodic", "receiver": None, "at": "0ns"}``: bursts of N senders to one receiver,
            at Poisson times with that mean interval or every interval; degree 0 disables it.
        permutation: ``{"size": "1MB", "at": "0ns"}``: one flow per host to a derangement.
        all_to_all: ``{"size": "100KB", "at": "0ns"}``: one flow per ordered host pair.
        long_lived: ``{"flows": 2, "size": "1GB", "receiver": 0, "at": "0ns"}`` for steady state.
        priority: Priority (queue) of every flow, 1..7.
        progress: Show a progress bar (default: only for traces over 200 000 flows).

    Returns:
        The trace, its parameters and hash.

    Raises:
        ConfigError: Naming the first bad parameter (load >= 1, zero hosts, negative duration,
            unknown workload, bad CDF file, ...).
    """
    hosts_n = int(check_range("trace.hosts", int(hosts), 2, 1_000_000))
    load_f = float(check_range("trace.load", float(load), 0.0, 1.0, high_inclusive=False))
    rate = parse_rate_bps(link_rate, "trace.link_rate")
    duration_ns = parse_time_ns(duration, "trace.duration")
    if duration_ns <= 0:
        raise ConfigError("trace.duration", f"must be > 0, got {duration!r}")
    start_ns = parse_time_ns(start, "trace.start")
    end_ns = start_ns + duration_ns
    prio = int(check_range("trace.priority", int(priority), 1, 7))
    size_b = parse_bytes(size, "workload.size") if size is not None else None
    dist = get_distribution(workload, cdf_file=cdf_file, size_bytes=size_b)
    children = np.random.SeedSequence(int(check_range("trace.seed", int(seed), 0, None))).spawn(len(_STREAMS))
    rngs = {name: np.random.default_rng(children[i]) for name, i in _STREAMS.items()}

    # background load phases: [start, at_1) at `load`, [at_1, at_2) at phase 1's load, ...
    bounds, loads = [start_ns], [load_f]
    for i, ph in enumerate(phases or []):
        at = start_ns + parse_time_ns(ph.get("at"), f"trace.phases[{i}].at")
        if not bounds[-1] < at < end_ns:
            raise ConfigError(f"trace.phases[{i}].at", "phase starts must increase and lie inside the window")
        bounds.append(at)
        loads.append(float(check_range(f"trace.phases[{i}].load", float(ph.get("load")), 0.0, 1.0,
                                       high_inclusive=False)))
    bounds.append(end_ns)
    expected = sum(ld * hosts_n * rate / (8 * dist.mean_bytes) * (b - a) / 1e9
                   for ld, a, b in zip(loads, bounds[:-1], bounds[1:], strict=True))
    show = progress if progress is not None else expected > _PROGRESS_MIN_FLOWS
    parts: list[pd.DataFrame] = []
    with _Progress(show, len(loads) + 4) as bar:
        phase_rngs = [np.random.default_rng(s) for s in children[_STREAMS["background"]].spawn(len(loads))]
        for ld, a, b, prng in zip(loads, bounds[:-1], bounds[1:], phase_rngs, strict=True):
            parts.append(arrivals.poisson_background(prng, dist, hosts_n, rate, ld, a, b))
            bar.advance("background")
        degree = int(_opt(incast, "degree", 0))
        if degree:
            check_range("trace.incast.degree", degree, 1, hosts_n - 1)
            arrival = _opt(incast, "arrival", "poisson")
            if arrival not in ("poisson", "periodic"):
                raise ConfigError("trace.incast.arrival", f"got {arrival!r}, allowed: 'poisson', 'periodic'")
            interval_ns = parse_time_ns(_opt(incast, "interval", "1ms"), "trace.incast.interval")
            if interval_ns <= 0:
                raise ConfigError("trace.incast.interval", "must be > 0")
            receiver = _opt(incast, "receiver")
            if receiver is not None:
                check_range("trace.incast.receiver", int(receiver), 0, hosts_n - 1)
            parts.append(arrivals.incast(
                rngs["incast"], hosts_n, degree, parse_bytes(_opt(incast, "size", "64KB"), "trace.incast.size"),
                start_ns + parse_time_ns(_opt(incast, "at", 0), "trace.incast.at"), end_ns,
                period_ns=interval_ns if arrival == "periodic" else None,
                mean_interval_ns=interval_ns if arrival == "poisson" else None,
                receiver=None if receiver is None else int(receiver),
            ))
        bar.advance("incast")
        if _opt(permutation, "size"):
            parts.append(arrivals.permutation(
                rngs["permutation"], hosts_n, parse_bytes(permutation["size"], "trace.permutation.size"),
                start_ns + parse_time_ns(_opt(permutation, "at", 0), "trace.permutation.at")))
        bar.advance("permutation")
        if _opt(all_to_all, "size"):
            parts.append(arrivals.all_to_all(
                hosts_n, parse_bytes(all_to_all["size"], "trace.all_to_all.size"),
                start_ns + parse_time_ns(_opt(all_to_all, "at", 0), "trace.all_to_all.at")))
        bar.advance("all_to_all")
        n_long = int(_opt(long_lived, "flows", 0))
        if n_long:
            receiver = _opt(long_lived, "receiver")
            check_range("trace.long_lived.flows", n_long, 1, hosts_n - 1 if receiver is not None else 10**6)
            parts.append(arrivals.long_lived(
                rngs["long_lived"], hosts_n, n_long,
                parse_bytes(_opt(long_lived, "size", "1GB"), "trace.long_lived.size"),
                start_ns + parse_time_ns(_opt(long_lived, "at", 0), "trace.long_lived.at"),
                None if receiver is None else int(receiver)))
        bar.advance("long_lived")
        flows = pd.concat([p for p in parts if len(p)] or [parts[0]], ignore_index=True)
        flows["priority"] = prio
    params = {
        "workload": dist.name, "load": load_f, "hosts": hosts_n, "link_rate_bps": rate,
        "duration_ns": duration_ns, "start_ns": start_ns, "mean_flow_bytes": dist.mean_bytes,
        "phases": [{"at_ns": int(b - start_ns), "load": ld} for b, ld in zip(bounds[1:-1], loads[1:], strict=True)],
        "incast": dict(incast) if degree else None,
        "permutation": dict(permutation) if _opt(permutation, "size") else None,
        "all_to_all": dict(all_to_all) if _opt(all_to_all, "size") else None,
        "long_lived": dict(long_lived) if n_long else None,
        "priority": prio,
    }
    return Trace(flows, params=params, seed=int(seed))


def generate_trace_from_config(cfg: Mapping[str, Any]) -> Trace:
    """Generate from a (Hydra) mapping: ``workload`` is ``{name, size?, cdf_file?}`` or a name.

    Raises:
        ConfigError: On an unknown key or a bad value.
    """
    cfg = dict(cfg)
    workload = cfg.pop("workload", "websearch")
    cfg.pop("output", None)
    if isinstance(workload, Mapping):
        wl = dict(workload)
        cfg.setdefault("size", wl.pop("size", None))
        cfg.setdefault("cdf_file", wl.pop("cdf_file", None))
        name = wl.pop("name", None)
        wl.pop("description", None)
        if wl:
            raise ConfigError("workload", f"unknown key(s) {sorted(wl)}")
    else:
        name = workload
    known = set(inspect.signature(generate_trace).parameters) - {"workload"}
    unknown = sorted(set(cfg) - known)
    if unknown:
        raise ConfigError(f"trace.{unknown[0]}", f"unknown field; known: {sorted(known)}")
    return generate_trace(name, **cfg)


class _Progress:
    """A rich progress bar over generation steps, or nothing."""

    def __init__(self, show: bool, total: int) -> None:
        self._show, self._total = show, total
        self._progress: Any = None

    def __enter__(self) -> _Progress:
        if self._show:
            from rich.progress import Progress

            self._progress = Progress(transient=True)
            self._progress.start()
            self._task = self._progress.add_task("generating trace", total=self._total)
        return self

    def advance(self, what: str) -> None:
        if self._progress is not None:
            self._progress.update(self._task, advance=1, description=f"generating trace: {what}")

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
