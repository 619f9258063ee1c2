"""Static settings evaluated per traffic phase, and the phase oracle that switches between them.

The ``oracle_phase`` reference of the benchmark (the suite's adaptivity headroom): for each test
trace, in hindsight, the best static ECN setting *per traffic phase*, found by running every
candidate setting on the whole trace and scoring each run on the flows that start in each phase;
then :class:`PhaseScheduleController` applies those settings, switching at the phase boundaries,
in a real run. The premise it measures is every seed paper's: one static setting cannot fit
changing traffic (ACC, Yan et al., SIGCOMM'21 §2; PRED, Li et al., NSDI'25 §2.2).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ecngym.envs.summary import episode_summary
from ecngym.error import ConfigError
from ecngym.units import parse_bytes, parse_time_ns

Setting = tuple[int, int, float]


def as_setting(value: Any, field: str = "setting") -> Setting:
    """A ``[kmin, kmax, pmax]`` (bytes or size strings) as ``(kmin_bytes, kmax_bytes, pmax)``.

    Raises:
        ConfigError: Naming ``field`` if it is no list of three or a value is bad.
    """
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 3:
        raise ConfigError(field, f"expected [kmin, kmax, pmax], got {value!r}")
    return parse_bytes(value[0], f"{field}[0]"), parse_bytes(value[1], f"{field}[1]"), float(value[2])


def make_env(env_overrides: Mapping[str, Any], episode_steps: int | None = None) -> Any:
    """An :class:`~ecngym.envs.ecn_env.EcnTuningEnv` of a scenario's env overrides.

    Args:
        env_overrides: The scenario's ``env`` mapping (EnvConfig overrides).
        episode_steps: A shorter (or longer) episode than the scenario's, or ``None``.
    """
    from ecngym.envs.ecn_env import EcnTuningEnv

    cfg = dict(env_overrides)
    if episode_steps is not None:
        cfg["episode_steps"] = episode_steps
    return EcnTuningEnv(config=cfg)


def phase_metric(flows: pd.DataFrame, starts_ns: Sequence[int], metric: str) -> list[float]:
    """An episode-summary slowdown metric over the flows that start in each phase.

    Args:
        flows: The episode's flow records (``start_ns``, ``finished``, ``size_bytes``, ``slowdown``).
        starts_ns: The phases' start times, rising, the first 0.
        metric: A ``slowdown_<stat>_<bucket>`` key of :func:`~ecngym.envs.summary.episode_summary`.

    Returns:
        The metric per phase (NaN where a phase has no finished flow of the bucket).

    Raises:
        ConfigError: Naming ``protocol.score`` if ``metric`` is not a flow metric.
    """
    if not metric.startswith("slowdown_"):
        raise ConfigError("protocol.score", f"got {metric!r}; the phase oracle scores flow metrics "
                                            "(slowdown_<stat>_<bucket>) per phase")
    start = flows["start_ns"].to_numpy()
    bounds = [*starts_ns, np.inf]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        part = flows[(start >= a) & (start < b)]
        out.append(float(episode_summary(part, np.zeros(0), np.zeros(0), 0.0, 0, 0, 1, 1)[metric]))
    return out


def run_controller(env_overrides: Mapping[str, Any], controller: Any, seed: int) -> tuple[dict[str, Any],
                                                                                           pd.DataFrame, float]:
    """Run one episode of ``controller`` on a fresh env of ``env_overrides``.

    Returns:
        (episode summary, flow records, wall seconds of the episode).
    """
    from ecngym.envs.for_controller import make_for_controller
    from ecngym.envs.rollout import run_episode

    env = make_for_controller(lambda extra: make_env({**env_overrides, **extra}), controller)
    try:
        t0 = time.perf_counter()
        summary, flows, _ = run_episode(env, controller, seed=seed)
        return summary, flows, time.perf_counter() - t0
    finally:
        env.close()


def run_static(env_overrides: Mapping[str, Any], setting: Sequence[Any], seed: int) -> tuple[dict[str, Any],
                                                                                              pd.DataFrame, float]:
    """One episode with one static setting on every controlled port (see :func:`run_controller`)."""
    from ecngym.baselines.static import StaticEcnController

    return run_controller(env_overrides, StaticEcnController(setting=list(as_setting(setting))), seed)


class PhaseScheduleController:
    """Apply a static ECN setting per traffic phase, switching at the phases' start times.

    The ``oracle_phase`` reference's controller: its settings come from a hindsight search per
    test trace (:mod:`ecngym.benchmark.references`), so it holds one schedule per trace, keyed by
    the trace's content hash (``info["trace_hash"]`` at reset), and refuses a trace it has none
    for. The decision at the start of the step that begins at time t uses the setting of the
    phase containing t.

    Args:
        starts: The phases' start times (``"20ms"`` or ns), rising, the first 0.
        per_trace: Trace hash -> one ``[kmin, kmax, pmax]`` per phase.
        settings: One schedule for any trace (instead of, or as the fallback of, ``per_trace``).
        name: Name in tables.

    Raises:
        ConfigError: Naming ``controller.starts`` / ``controller.per_trace`` / ``controller.settings``
            on a bad or mismatched value.
    """

    def __init__(self, starts: Sequence[Any], per_trace: Mapping[str, Sequence[Sequence[Any]]] | None = None,
                 settings: Sequence[Sequence[Any]] | None = None, name: str = "oracle_phase") -> None:
        if not isinstance(starts, Sequence) or isinstance(starts, str) or not starts:
            raise ConfigError("controller.starts", f"expected a non-empty list of phase start times, got {starts!r}")
        self.starts_ns = [parse_time_ns(s, f"controller.starts[{i}]") for i, s in enumerate(starts)]
        if self.starts_ns[0] != 0 or any(b <= a for a, b in zip(self.starts_ns, self.starts_ns[1:], strict=False)):
            raise ConfigError("controller.starts", f"got {list(starts)!r}; the first phase starts at 0 and "
                                                   "starts rise strictly")
        if per_trace is None and settings is None:
            raise ConfigError("controller.per_trace", "give per_trace (trace hash -> settings) or settings")
        self.per_trace = {str(h): self._schedule(f"controller.per_trace.{h}", v)
                          for h, v in dict(per_trace or {}).items()}
        self.settings = None if settings is None else self._schedule("controller.settings", settings)
        self.name = name
        self.interval_steps = 1
        self.log: list[dict[str, Any]] = []
        self._actions: dict[Setting, Any] = {}
        self._schedule_now: list[Setting] | None = None

    def _schedule(self, field: str, value: Any) -> list[Setting]:
        if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != len(self.starts_ns):
            raise ConfigError(field, f"expected one [kmin, kmax, pmax] per phase ({len(self.starts_ns)}), "
                                     f"got {value!r}")
        return [as_setting(s, f"{field}[{i}]") for i, s in enumerate(value)]

    def _every_setting(self) -> list[Setting]:
        return sorted({s for sched in [*self.per_trace.values(), self.settings or []] for s in sched})

    def env_overrides(self, env: Any) -> dict[str, Any]:
        """Add the settings of its schedules that are not templates of ``env`` to them.

        A references file's grid may reach beyond the scenario's templates (its extension,
        :mod:`ecngym.benchmark.references`); the traffic stays the scenario's
        (:func:`~ecngym.baselines.static.templates_overrides`).
        """
        from ecngym.baselines.static import templates_overrides

        return templates_overrides(env, self._every_setting())

    def reset(self, env: Any) -> None:
        """Encode every setting the schedules use as an action of ``env``.

        Raises:
            InvalidAction: If a setting is not one of the env's discrete templates (an env made
                without :meth:`env_overrides`).
        """
        from ecngym.envs.view import EnvView

        view = EnvView(env)
        self._actions = {s: view.encode(*s) for s in self._every_setting()}
        self._schedule_now = None
        self.log = []

    def phase_at(self, time_ns: int) -> int:
        """The index of the phase containing ``time_ns``."""
        return int(np.searchsorted(self.starts_ns, time_ns, side="right")) - 1

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """The action of the phase the coming step starts in.

        Raises:
            ConfigError: Naming ``controller.per_trace`` on a trace it holds no schedule for.
        """
        if self._schedule_now is None:
            trace = info.get("trace_hash")
            schedule = self.per_trace.get(str(trace), self.settings)
            if schedule is None:
                raise ConfigError("controller.per_trace", f"no schedule for trace {trace}: the phase oracle is "
                                                          "fitted per test trace (ecngym benchmark references)")
            self._schedule_now = schedule
        t = int(info["time_ns"])
        i = self.phase_at(t)
        if not self.log or self.log[-1]["phase"] != i:
            kmin, kmax, pmax = self._schedule_now[i]
            self.log.append({"step": len(self.log), "time_ns": t, "phase": i, "kmin_bytes": kmin,
                             "kmax_bytes": kmax, "pmax": pmax})
        return self._actions[self._schedule_now[i]]
