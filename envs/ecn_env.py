"""The single-agent ECN-tuning environment."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ecngym.envs.config import EnvConfig, merge
from ecngym.envs.scenario import EcnScenario


class EcnTuningEnv(gym.Env):
    """Tune switch ECN marking (Kmin, Kmax, Pmax) of a packet-level ns-3 datacenter fabric.

    ## Description
    Each step is one control interval Δt of simulated time on a RoCEv2 (DCQCN + PFC) or DCTCP
    fabric replaying a traffic trace. The agent sets the RED/ECN curve of the controlled switch
    egress ports; the fabric runs Δt; the agent observes per-port telemetry. Identical seeds give
    identical traces and bit-identical telemetry.

    ## Action Space
    ``action.type = "discrete"``: ``Discrete(T)`` (``MultiDiscrete([T] * units)`` for several
    units): an index into the ECN templates (Kmin bytes, Kmax bytes, Pmax) of the config, which
    always include the fabric's static setting. ``action.type = "continuous"``: ``Box(-1, 1,
    (units, 3))`` rescaled to Kmin ∈ kmin_range, Kmax − Kmin ∈ kmax_span_range, Pmax ∈
    pmax_range. Units: 1 (``scope="all"``), one per switch layer (``"layer"``) or one per
    controlled port (``"port"``). An action outside the space raises
    :class:`ecngym.error.InvalidAction` (never clamped).

    ## Observation Space
    ``Box(0, high, (ports, k × F), float32)``: for each controlled port, the last k intervals
    (oldest first) of F features:

    | feature | quantity | unit | min | max |
    |---|---|---|---|---|
    | queue | mean data-queue occupancy (linear: / queue_scale; or ACC step map) | bytes → 1 | 0 | 1 |
    | max_queue | max occupancy in the interval, same mapping | bytes → 1 | 0 | 1 |
    | utilization | bytes sent × 8 / (line rate × Δt) | 1 | 0 | 2 |
    | marked_rate | CE-marked / data packets seen by the marker | 1 | 0 | 1 |
    | kmin, kmax | current threshold / largest settable Kmax | 1 | 0 | 1 |
    | pmax | current Pmax | 1 | 0 | 1 |
    | paused_fraction | share of Δt with a PFC-paused data priority | 1 | 0 | 1 |
    | flows | distinct flows f, reported as f / (f + flow_scale) | 1 | 0 | 1 |

    ## Rewards
    Mean over controlled ports of ``acc``: ω·U + (1−ω)·Q_step(q̄) (ACC/LAECN), or ``pred``:
    β·U + (1−β)·Φ(q̄) (PRED's utility), with U = min(utilisation, 1); or ``fct``: 0 per step and
    −(mean FCT slowdown of finished flows) at the last step. See :mod:`ecngym.envs.reward`.

    ## Starting State
    A new trace (from the workload config and a seed drawn from ``np_random``, unless a fixed
    trace is given), a fresh fabric at t = 0 with the static ECN setting, empty queues.

    ## Episode End
    Truncation after ``episode_steps`` intervals (the trace covers exactly that much time). There
    is no termination. Every step's ``info`` holds ``telemetry`` (the fabric's per-port arrays for
    the interval; rows ``info["ports"]`` are the controlled ports) and ``time_ns``. At the end,
    ``info`` also holds ``summary`` (FCT slowdown avg / p50 / p99 per
    size bucket, mean / p99 queue, utilisation, PFC-paused fraction, marked fraction, trace hash)
    and ``flow_records`` (a DataFrame).

    ## Arguments
    | argument | default | meaning |
    |---|---|---|
    | config | ``EnvConfig()`` | an :class:`EnvConfig` or mapping; keyword overrides merge into it |
    | topology | 16-host star, 100 Gbps, 1 µs | ``{"kind": ..., ...}`` of :mod:`ecngym.sim_backend.topology` |
    | fabric | ``{"preset": "hpcc"}`` | fabric preset and overrides |
    | workload | WebSearch 30 % + 8-way 64 KB incasts | :func:`ecngym.workloads.generate_trace` arguments |
    | interval | ``"5rtt"`` | Δt, a duration ("20us") or base RTTs (LAECN short-flow Δt = 5 RTT) |
    | episode_steps | 100 | intervals per episode |
    | observation / action / reward | see :mod:`ecngym.envs.config` | |

    ## Version History
    * v0: initial release.
    """

    metadata = {"render_modes": []}

    def __init__(self, config: EnvConfig | dict[str, Any] | None = None, **overrides: Any) -> None:
        if isinstance(config, EnvConfig):
            cfg = merge(config, overrides, "env") if overrides else config
        else:
            cfg = EnvConfig.from_dict({**(config or {}), **overrides})
        self.config = cfg
        self.scenario = EcnScenario(cfg)
        f = self.scenario.features
        self.observation_space = spaces.Box(f.low, f.high, dtype=np.float32)
        self.action_space = self.scenario.actions.space

    @property
    def ports(self) -> np.ndarray:
        """Fabric-wide ids of the controlled ports (rows of the observation)."""
        return self.scenario.ports

    def static_action(self) -> Any:
        """The action that keeps the fabric's static ECN setting (discrete action spaces)."""
        return self.scenario.actions.static_action()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode on a new trace; the simulator seed derives from ``np_random``."""
        if seed is None and self.config.seed is not None and self._np_random is None:
            seed = int(self.config.seed)  # the config's default seed, on the first reset only
        super().reset(seed=seed)
        episode_seed = int(self.np_random.integers(0, 2**31 - 1))
        obs = self.scenario.start_episode(episode_seed)
        return obs, {"episode_seed": episode_seed, "trace_hash": self.scenario.trace.hash}

    def step(self, action: Any):
        """Apply ``action`` for one interval."""
        if self.scenario.fabric is None:
            raise RuntimeError("call reset() before step()")
        if self.scenario.done:
            raise RuntimeError("the episode is over (truncated); call reset()")
        self.scenario.apply(action)
        obs, tel, per_port = self.scenario.advance()
        reward = float(per_port.mean())
        # raw telemetry of every port (index with info["ports"] for the controlled ones)
        info: dict[str, Any] = {"telemetry": tel, "ports": self.ports, "time_ns": tel["interval_end_ns"]}
        truncated = self.scenario.done
        if truncated:
            records, summary = self.scenario.finish()
            reward += self.scenario.reward.episode_end(records)
            info["summary"] = summary
            info["flow_records"] = records
        return obs, reward, False, truncated, info

    def close(self) -> None:
        """Destroy the fabric (safe to call twice)."""
        self.scenario.close()
