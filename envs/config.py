"""The environment's configuration: scenario, observation, action and reward, in one dataclass.

Every field has a default, so ``EnvConfig()`` is a small RoCEv2 incast scenario; the registered
environments are presets of it. Unknown keys raise :class:`ecngym.error.ConfigError`.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ecngym.error import ConfigError
from ecngym.sim_backend.config import merge_dataclass

#: Per-port features an observation can hold (see :mod:`ecngym.envs.observation`).
FEATURES = ("queue", "max_queue", "utilization", "marked_rate", "kmin", "kmax", "pmax",
            "paused_fraction", "flows")


@dataclass
class ObservationConfig:
    """What the agent sees.

    Attributes:
        features: Per-port features, from :data:`FEATURES`.
        history: Number of past intervals stacked (k).
        queue_mapping: ``"linear"`` (queue / queue_scale, clipped at 1) or ``"step"`` (ACC's step
            mapping: 1 for an empty queue down to 0 for a long one, breakpoints in port BDPs).
        queue_scale: Queue normalisation for the linear mapping ("1MB").
        step_breakpoints_bdp: Step-mapping breakpoints in units of the port's BDP.
        step_values: Step-mapping value at or below each breakpoint (0 beyond the last).
        flow_scale: Distinct-flow count f is reported as f / (f + flow_scale).
        flatten: Return the observation as one vector of ports x history x features (row-major:
            ``obs.reshape(ports, history, features)`` recovers the table); ``False`` keeps it
            2-D, ``(ports, history x features)``, which SB3's checker flags as unconventional.
    """

    features: list[str] = field(default_factory=lambda: ["queue", "utilization", "marked_rate",
                                                         "kmin", "kmax", "pmax", "paused_fraction",
                                                         "flows"])
    history: int = 3
    queue_mapping: str = "linear"
    queue_scale: Any = "1MB"
    step_breakpoints_bdp: list[float] = field(default_factory=lambda: [0.25, 0.5, 1.0, 2.0, 4.0])
    step_values: list[float] = field(default_factory=lambda: [1.0, 0.8, 0.6, 0.4, 0.2])
    flow_scale: float = 16.0
    flatten: bool = True


@dataclass
class ActionConfig:
    """How actions map to ECN settings.

    Attributes:
        type: ``"discrete"`` (index into ``templates``) or ``"continuous"`` (a Box in [-1, 1]).
        scope: ``"all"`` (one setting shared by every controlled port), ``"layer"`` (one per
            switch layer) or ``"port"`` (one per controlled port).
        layers: Switch layers under control (``None`` = every switch layer).
        ports: Fabric-wide ids of the switch egress ports under control (``None`` = every port of
            the chosen layers); e.g. ``[p]`` with any scope controls one port.
        templates: Discrete (kmin, kmax, pmax) templates; the static default must be one of them.
        static_default: The fabric's static setting, forced into the template list.
        kmin_range: Continuous Kmin bounds [low, high].
        kmax_span_range: Continuous (Kmax - Kmin) bounds [low, high].
        pmax_range: Continuous Pmax bounds [low, high].
        scale_with_rate: Scale template / range byte values by (port rate / 100 Gbps).
    """

    type: str = "discrete"
    scope: str = "all"
    layers: list[str] | None = None
    ports: list[int] | None = None
    # Kmin in {20, 80, 320} KB x Kmax in {2, 4} x Kmin x Pmax in {5 %, 20 %} (bytes; a LAECN-style
    # grid at 100 Gbps, specs/laecn.md §3.3 [OURS]) plus the fabric's static setting.
    templates: list[list[Any]] = field(default_factory=lambda: [
        [k, f * k, p] for k in (20_000, 80_000, 320_000) for f in (2, 4) for p in (0.05, 0.2)])
    static_default: list[Any] | None = None
    kmin_range: list[Any] = field(default_factory=lambda: ["1KB", "1MB"])
    kmax_span_range: list[Any] = field(default_factory=lambda: ["0B", "2MB"])
    pmax_range: list[float] = field(default_factory=lambda: [0.01, 1.0])
    scale_with_rate: bool = False


@dataclass
class RewardConfig:
    """Reward by name (formulas in :mod:`ecngym.envs.reward`).

    Attributes:
        name: ``"acc"`` (ω·U + (1−ω)·Q_step(q̄)), ``"pred"`` (β·R/C + (1−β)·Φ(q̄)) or ``"fct"``
            (episode-level: −mean FCT slowdown of the episode's flows at the last step).
        omega: ACC/LAECN utilisation weight ω (laecn.md §3.4: [UNSPEC], 0.5 is [OURS]).
        beta: PRED goodput weight β (pred.md §3.3: 0.4).
        q_left: PRED Φ is 1 up to this queue ("15KB": q_left = 15 packets of 1 KB, pred.md §3.3).
        q_max: PRED Φ reaches 0 here ("500KB": PRED's fixed maxK, pred.md §3.3 [OUR CHOICE]).
    """

    name: str = "acc"
    omega: float = 0.5
    beta: float = 0.4
    q_left: Any = "15KB"
    q_max: Any = "500KB"


@dataclass
class EnvConfig:
    """One ECN-tuning scenario.

    Attributes:
        topology: Topology config (``{"kind": "incast_star", ...}``).
        fabric: Fabric config (``{"preset": "hpcc", ...}``).
        workload: Arguments of :func:`ecngym.workloads.generate_trace` except hosts, link rate,
            duration and seed, which come from the scenario.
        trace: Path of a fixed trace (Parquet from ``ecngym trace generate``, or an HPCC flow file)
            to replay instead of generating one per episode.
        trace_window: Which window of a fixed trace an episode replays (flows starting in
            [offset, offset + interval x episode_steps), shifted to start at 0): ``"start"``
            (offset 0), ``"random"`` (a uniform offset per episode, drawn from the episode seed,
            up to the trace's last start minus the episode length) or a duration ("2ms").
        interval: Control interval: a duration ("20us") or base RTTs ("5rtt").
        episode_steps: Intervals per episode (the episode replays that much simulated time).
        seed: Default seed when ``reset`` is called without one.
    """

    topology: dict[str, Any] = field(default_factory=lambda: {
        "kind": "incast_star", "hosts": 16, "link_rate": "100Gbps", "link_delay": "1us"})
    fabric: dict[str, Any] = field(default_factory=lambda: {"preset": "hpcc"})
    workload: dict[str, Any] = field(default_factory=lambda: {
        "workload": "websearch", "load": 0.3,
        "incast": {"degree": 8, "size": "64KB", "interval": "200us", "arrival": "poisson"}})
    trace: str | None = None
    trace_window: Any = "start"
    interval: Any = "5rtt"
    episode_steps: int = 100
    observation: ObservationConfig = field(default_factory=ObservationConfig)
    action: ActionConfig = field(default_factory=ActionConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
    seed: int | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, prefix: str = "env") -> EnvConfig:
        """Build from a nested mapping (e.g. a Hydra config); unknown keys raise ConfigError."""
        return merge(cls(), copy.deepcopy(dict(data or {})), prefix)

    def as_dict(self) -> dict[str, Any]:
        """Plain nested dict (for logging and results)."""
        return dataclasses.asdict(self)


def number(field: str, value: Any, integer: bool = False) -> float | int:
    """``value`` as a float (or an int), or a :class:`ConfigError` naming ``field``.

    Integers must be whole (``3`` or ``3.0``, not ``2.5``); strings and booleans are refused.
    """
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if ok and integer:
        ok = float(value).is_integer()
    if not ok:
        raise ConfigError(field, f"expected {'an integer' if integer else 'a number'}, got {value!r}")
    return int(value) if integer else float(value)


def merge(obj: Any, overrides: dict[str, Any], prefix: str) -> Any:
    """Return a copy of dataclass ``obj`` with nested ``overrides``; unknown keys raise.

    The ``fabric`` and ``workload`` mappings merge key by key (override one field of a preset);
    ``topology`` is replaced whole (another kind takes other arguments).
    """
    return merge_dataclass(obj, overrides, prefix, frozenset({"fabric", "workload"}))
