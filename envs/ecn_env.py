"""The single-agent ECN-tuning environment."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ecngym.envs.config import EnvConfig, check_episode_seed, merge, reset_options_error
from ecngym.envs.scenario import EcnScenario


class EcnTuningEnv(gym.Env):
    """Tune switch ECN marking (Kmin, Kmax, Pmax) of a packet-level ns-3 datacenter fabric.

    ## Description
    Each step is one control interval Δt of simulated time on a RoCEv2 (DCQCN + PFC) or DCTCP
    fabric replaying a traffic trace. The agent sets the RED/ECN curve of the controlled switch
    egress ports (marking probability 0 below Kmin, rising linearly to Pmax at Kmax, 1 above);
    the fabric runs Δt; the agent observes per-port telemetry of that interval. Identical seeds
    and actions give identical traces and bit-identical telemetry.

    Registered scenarios (``import ecngym.envs`` registers them; Gymnasium ≥ 1.0 has no plug-in
    entry points, so ``gymnasium.make("ecngym.envs:ecngym/RoceIncast-v0")`` is the import-free
    spelling):

    | id | fabric | topology (100 Gbps, 1 µs links) | Δt | ports | action |
    |---|---|---|---|---|---|
    | ``RoceIncast-v0`` | RoCEv2, DCQCN + PFC | 16 hosts, 1 switch | 20.8 µs | 16 | ``Discrete(13)`` |
    | ``RoceLeafSpine-v0`` | RoCEv2, DCQCN + PFC | 4 x 4 leaf-spine | 41.6 µs | 48 | ``MultiDiscrete([13, 13])`` |
    | ``DctcpLeafSpine-v0`` | DCTCP, step marking | 4 x 4 leaf-spine | 41.6 µs | 48 | ``MultiDiscrete([7, 7])`` |
    | ``DctcpRttVariation-v0`` | DCTCP, 10 Gbps | 4 x 4 leaf-spine, RTT var. | 100 µs | 48 | ``MultiDiscrete([6, 6])`` |
    | ``DctcpLargeIncast-v0`` | DCTCP, 10 Gbps, lossy | 49 hosts, 1 switch | 50 µs | 49 | ``Discrete(6)`` |

    (ids prefixed with ``ecngym/``; RoCEv2 with the HPCC fabric preset; Δt = 5 base RTTs; "ports"
    are the controlled switch egress ports; the leaf-spine has 4 hosts per leaf (16 hosts) and
    takes one action per layer, leaf then spine; the DCTCP templates are step marking, Kmin =
    Kmax = K ∈ {10, 20, 40, 65, 100, 200, 400} KB, Pmax = 1. ``DctcpRttVariation-v0`` is ECN♯'s
    setting (ECN#; docs: algorithms/ecn-sharp.md §5.2, scaled down): every flow's base RTT gets one of the delay
    classes {1, 20, 50, 80, 160} µs. ``DctcpLargeIncast-v0`` is R-AQM's (R-AQM §VI-A; docs: algorithms/r-aqm.md
    §5.1): 48-to-1 incasts of 64 KB every 500 µs over WebSearch 20 %, lossy.)

    Every scenario runs 100 steps per episode on a fresh trace. The RoCEv2 and the DCTCP
    leaf-spine scenarios run WebSearch background traffic (30 % load on the star, 40 % on the
    leaf-spine) plus Poisson 64 KB incasts (8-way on the star, 6-way on the leaf-spine, one every
    200 µs on average); ``DctcpRttVariation-v0`` and ``DctcpLargeIncast-v0`` run the workloads
    named above.

    ## Action Space
    A *unit* is what one action entry sets: all controlled ports (``action.scope="all"``), the
    ports of one switch layer (``"layer"``, units in sorted layer order) or one port
    (``"port"``, units in :attr:`ports` order). ``action.ports`` / ``action.layers`` choose the
    controlled ports (e.g. ``action.ports=[p]`` for a single port).

    The action sets parameters of the controlled ports' AQM policy, the same way for every policy
    (:mod:`ecngym.envs.action`): RED's (Kmin, Kmax, Pmax) unless ``aqm`` names another policy
    (``"ecn_sharp"``, ``"pred"``, ``"codel"``, ``"r_aqm"``, or ``{"policy": name, param: value,
    ...}``; :mod:`ecngym.sim_backend.aqm`), installed at every reset. ``action.params`` names the
    parameters (default: RED's ``kmin_bytes``, ``kmax_bytes``, ``pmax``; ECN♯'s ``ins_target_ns``,
    ``pst_target_ns``; PRED's ``lambda_qla``; CoDel's ``target_ns``, ``interval_ns``; R-AQM's
    ``kmin_bytes``, ``kmax_bytes``).

    ``action.type="discrete"``: ``Discrete(T)`` for one unit, else ``MultiDiscrete([T] * units)``;
    each entry indexes the settings of ``action.templates`` (one value per parameter), which always
    include the static setting (:meth:`static_action`: ``action.static_default``, else the ports'
    configured one). Default grid [OURS]: RED's Kmin ∈ {20, 80, 320} KB x Kmax ∈ {2, 4} x Kmin x
    Pmax ∈ {0.05, 0.2} (bytes at 100 Gbps, LAECN §III-C; docs: algorithms/laecn.md §3.3), plus
    the HPCC preset's 400 KB / 1600 KB / 0.2; another policy's: every combination of {1/2, 1, 2} x
    each configured value the policy accepts.

    ``action.type="continuous"``: ``Box(-1, 1, (units, parameters), float32)``; each entry
    a ∈ [-1, 1] maps linearly (u = (a + 1) / 2) onto its parameter's range in ``action.ranges``,
    absolute or relative to another tuned parameter. RED's defaults:

    | index | quantity | unit | at a = -1 | at a = +1 |
    |---|---|---|---|---|
    | 0 | Kmin | bytes | 1 KB | 1 MB |
    | 1 | Kmax, relative to Kmin | bytes | Kmin + 0 B | Kmin + 2 MB |
    | 2 | Pmax | probability | 0.01 | 1.0 |

    Another policy's parameter spans its whole C++ checker range by default. Whole-number values
    (bytes, ns) are rounded and, with ``action.scale_with_rate``, byte values multiplied by
    (port rate / 100 Gbps). Values and ranges are checked against the policy's TypeId checkers,
    and templates against its consistency rule (Kmin ≤ Kmax): a bad template or range is a
    ConfigError naming ``env.action.templates[i].<param>`` / ``env.action.ranges.<param>``. An
    action outside the space (wrong shape, index out of range, non-integer index, value outside
    [-1, 1], NaN), or one whose setting the policy rejects, raises
    :class:`ecngym.error.InvalidAction` naming the expected space or the rule; nothing is clamped
    or applied. With another policy than RED the RED-curve features ``kmin``, ``kmax``, ``pmax``
    leave the default observation; the policy's telemetry features (``ecn_sharp.sojourn_mean_ns``,
    ``pred.flow_count``, ``r_aqm.viq_packets`` ..., table in :mod:`ecngym.envs.observation`) and
    the tuned parameters' current values (``aqm.<parameter>``, in [0, 1] over the action's range)
    can join it.

    ## Observation Space
    ``Box(0, high, (ports x k x F,), float32)`` (``observation.flatten=True``, the default;
    ``obs.reshape(ports, k, F)`` gives the table) or ``(ports, k x F)`` with ``flatten=False``.
    For each controlled port (rows in :attr:`ports` order), the last k intervals (oldest first,
    ``observation.history``, default 3) of the F features of ``observation.features`` (default
    all but ``max_queue``, in this order):

    | feature | quantity | unit | min | max |
    |---|---|---|---|---|
    | queue | time-averaged data-queue bytes q̄ / queue_scale (1 MB), ≤ 1; or ACC's step map (*) | bytes/bytes | 0 | 1 |
    | max_queue | largest occupancy in the interval, same mapping | bytes / bytes | 0 | 1 |
    | utilization | bytes sent (all frames) x 8 / (line rate x Δt), at most 2 | bits / bits | 0 | 2 |
    | marked_rate | CE-marked / data packets seen by the marking decision | packets / packets | 0 | 1 |
    | kmin, kmax | current threshold / largest Kmax the action space can set | bytes / bytes | 0 | 1 |
    | pmax | current Pmax | probability | 0 | 1 |
    | paused_fraction | time a data priority was PFC-paused / Δt | ns / ns | 0 | 1 |
    | flows | distinct flows f seen in the interval, as f / (f + flow_scale) (16) | flows | 0 | 1 |

    (*) ``observation.queue_mapping="step"``: 1 for q̄ ≤ 0.25 BDP, 0.8 ≤ 0.5, 0.6 ≤ 1, 0.4 ≤ 2, 0.2 ≤ 4 BDP,
    else 0 (the port's BDP at the largest base RTT). At reset the history is filled with the frame
    of t = 0 (empty queues, static ECN setting).

    ## Rewards
    Chosen by ``reward.name``; per-port values averaged over the controlled ports
    (:mod:`ecngym.envs.reward` has the details):

    * ``acc`` (default; ACC / LAECN, LAECN eq. 2; docs: algorithms/laecn.md §3.4): r = ω·U + (1 − ω)·Q_step(q̄),
      U = min(util, 1), ω = 0.5. In [0, 1].
    * ``pred`` (PRED's utility, PRED §IV-B; docs: algorithms/pred.md §3.3): r = β·R/C + (1 − β)·Φ(q̄),
      R/C = data bytes x 8 / (rate x Δt) at most 1, Φ = 1 up to q_left (15 KB), linear to 0 at q_max (500 KB), β = 0.4.
      In [0, 1].
    * ``fct`` (episode level): 0 per step; at the last step −(mean FCT slowdown of all flows of
      the episode, unfinished ones at their slowdown so far). At most −1.
    * ``score_dense`` (flow level, every step): −(V_t − V_{t−1}), V_t the mean FCT slowdown so far
      of the flows of the score's size range started by the step's end (running ones at their
      slowdown so far; at the last step the finished ones only). The undiscounted return is
      exactly −score (``reward.score``, default ``slowdown_avg_all``: the mean slowdown of the
      flows that finished); :mod:`ecngym.envs.score_reward`.

    ## Starting State
    A new trace (from ``workload`` and a seed drawn from ``np_random``; or the window
    ``trace_window`` of the fixed ``trace``), a fresh fabric at t = 0 with the fabric's static ECN
    setting on every port, empty queues.

    ## Episode End
    * Truncation: after ``episode_steps`` intervals (the trace's arrivals cover exactly that
      much simulated time; flows still running are reported unfinished).
    * Termination: none.

    Every step's ``info`` holds ``telemetry`` (the fabric's raw per-port arrays for the interval,
    every port; ``info["ports"]`` are the rows of the controlled ones; the per-policy arrays
    ``"<policy>.<name>"`` of :mod:`ecngym.sim_backend.aqm` are masked arrays, masked where the
    fabric reports NaN: a port running another policy, or a sojourn statistic of an interval
    that sent nothing) and ``time_ns``. The last
    step's ``info`` also holds ``summary`` (flows finished / total; average, p50, p99 FCT slowdown
    for < 100 KB, 100 KB - 1 MB, > 1 MB and all flows; mean and p99 queue bytes; utilisation;
    PFC-paused fraction; marked fraction; trace hash) and ``flow_records`` (a DataFrame: one row
    per flow with ``fct_ns``, ``ideal_fct_ns``, ``slowdown``, ``finished`` ...). ``reset`` returns
    ``info`` with ``episode_seed``, ``trace_hash``, the t = 0 ``telemetry`` / ``ports`` / ``time_ns``
    and, for a window of a fixed trace, ``source_trace_hash`` and ``trace_offset_ns``.

    ## Arguments
    ``gymnasium.make(id, **overrides)``: the overrides merge into the scenario's preset (nested
    mappings key by key; ``topology`` and ``trace`` are replaced whole). ``config=`` replaces the
    preset.

    | argument | default (``RoceIncast-v0``) | unit | meaning |
    |---|---|---|---|
    | config | the scenario preset | | an :class:`EnvConfig` or mapping to start from |
    | topology | incast star, 16 hosts, 100 Gbps, 1 µs | | ``{"kind": ..., ...}``, see ``Topology.from_config`` |
    | fabric | ``{"preset": "hpcc"}`` | | fabric preset plus field overrides |
    | workload | WebSearch, load 0.3, incasts (†) | | :func:`ecngym.workloads.generate_trace` arguments |
    | trace | ``None`` | path | a fixed Parquet trace or HPCC flow file, replayed every episode |
    | trace_window | ``"start"`` | | window of a fixed trace: ``"start"``, ``"random"`` or an offset ("2ms") |
    | interval | ``"5rtt"`` | µs / RTTs | Δt: a duration ("20us") or a multiple of the largest base RTT |
    | episode_steps | 100 | steps | intervals per episode |
    | observation | see above | | :class:`~ecngym.envs.config.ObservationConfig` |
    | action | see above | | :class:`~ecngym.envs.config.ActionConfig` |
    | reward | ``{"name": "acc"}`` | | :class:`~ecngym.envs.config.RewardConfig` |
    | seed | ``None`` | | seed of the first ``reset()`` called without one |
    | aqm | ``None`` | | policy of the controlled ports (see "Tuning a port AQM policy") |

    (†) 8-way 64 KB incasts, Poisson, one every 200 µs on average; the hosts, link rate, arrival
    window (``interval x episode_steps``) and seed of the trace come from the scenario. A bad value
    raises :class:`ecngym.error.ConfigError` naming the field (``env.action.scope``).

    ## Version History
    * v0: initial release.
    """

    metadata = {"render_modes": []}

    def __init__(self, config: EnvConfig | dict[str, Any] | None = None, **overrides: Any) -> None:
        base = config if isinstance(config, EnvConfig) else EnvConfig.from_dict(config)
        cfg = merge(base, overrides, "env") if overrides else base
        self.config = cfg
        self.scenario = EcnScenario(cfg)
        f = self.scenario.features
        self._flatten = bool(cfg.observation.flatten)
        low, high = (f.low.reshape(-1), f.high.reshape(-1)) if self._flatten else (f.low, f.high)
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self.action_space = self.scenario.actions.space

    @property
    def ports(self) -> np.ndarray:
        """Fabric-wide ids of the controlled ports (rows of the observation table)."""
        return self.scenario.ports

    def static_action(self) -> Any:
        """The action that keeps the fabric's static ECN setting (discrete action spaces)."""
        return self.scenario.actions.static_action()

    def _obs(self, obs: np.ndarray) -> np.ndarray:
        return obs.reshape(-1) if self._flatten else obs

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode on a new trace; the simulator seed derives from ``np_random``.

        Args:
            seed: Seeds ``np_random``, from which the episode's trace and simulator seed derive.
            options: ``None`` or ``{}``: this env defines no reset options (Gymnasium's env checker
                passes ``{}``).

        Raises:
            ConfigError: If ``seed`` is not a whole number in [0, 2^64 - 1], or ``options`` holds
                anything (naming ``options``; the running episode is kept).
        """
        seed = check_episode_seed(seed)
        error = reset_options_error(options)
        if error is not None:
            raise error
        if seed is None and self.config.seed is not None and self._np_random is None:
            seed = int(self.config.seed)  # the config's default seed, on the first reset only
        super().reset(seed=seed)
        episode_seed = int(self.np_random.integers(0, 2**31 - 1))
        obs = self.scenario.start_episode(episode_seed)
        sc = self.scenario
        tel = _masked_policy_telemetry(sc.first_telemetry)
        info = {"episode_seed": episode_seed, "trace_hash": sc.trace.hash,
                "telemetry": tel, "ports": sc.ports, "time_ns": tel["interval_end_ns"]}
        if sc.source_trace is not None:  # a window of a fixed trace
            info.update(source_trace_hash=sc.source_trace.hash, trace_offset_ns=sc.trace_offset_ns)
        return self._obs(obs), info

    def step(self, action: Any):
        """Apply ``action`` for one interval.

        Raises:
            InvalidAction: If ``action`` is not in :attr:`action_space`.
        """
        if self.scenario.fabric is None:
            raise RuntimeError("call reset() before step()")
        if self.scenario.done:
            raise RuntimeError("the episode is over (truncated); call reset()")
        self.scenario.apply(action)
        obs, tel, per_port = self.scenario.advance()
        tel = _masked_policy_telemetry(tel)
        # (ndarray.mean runs Python-level code); plus score_dense's flow-level term (0 for the other rewards)
        reward = float(per_port.sum()) / len(per_port) + self.scenario.flow_term
        # raw telemetry of every port (index with info["ports"] for the controlled ones)
        info: dict[str, Any] = {"telemetry": tel, "ports": self.scenario.ports, "time_ns": tel["interval_end_ns"],
                                "interval_ns": int(tel["interval_end_ns"] - tel["interval_start_ns"])}
        if self.scenario.interval_short_ns is not None:
            info["long_flow"] = self.scenario.long_flow  # decides the next step's length
        truncated = self.scenario.done
        if truncated:
            records, summary = self.scenario.finish()
            reward += self.scenario.end_reward(records)
            info["summary"] = summary
            info["flow_records"] = records
        return self._obs(obs), reward, False, truncated, info

    def close(self) -> None:
        """Destroy the fabric (safe to call twice)."""
        self.scenario.close()


def _masked_policy_telemetry(tel: dict[str, Any]) -> dict[str, Any]:
    """``tel`` with each per-policy array (``"<policy>.<name>"``) as a masked array, NaN masked.

    The fabric reports NaN where a port runs another policy (or, for a sojourn statistic, sent
    nothing); masking says "not available" in a form that compares equal across identical runs
    (Gymnasium's determinism checks compare infos with ``np.allclose``, for which NaN != NaN).
    """
    keys = [k for k in tel if "." in k]
    if not keys:
        return tel
    out = dict(tel)
    for k in keys:
        out[k] = np.ma.masked_invalid(tel[k])
    return out
