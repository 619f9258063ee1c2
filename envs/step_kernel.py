"""One env step's per-port arithmetic as one C++ call: features, history, reward, statistics.

Every step, :class:`~ecngym.envs.scenario.EcnScenario` turns the interval's telemetry block into
the controlled ports' features (:meth:`FeatureBuilder.frame
<ecngym.envs.observation.FeatureBuilder.frame>`), pushes them onto the history, computes each
port's reward (:meth:`RewardFunction.per_port <ecngym.envs.reward.RewardFunction.per_port>`) and
keeps a few telemetry rows for the episode summary. In NumPy that is some thirty small array
operations a step, and their cost per call was most of the env's own time per step
(``ecngym bench env``: ``port_gather``, ``features``, ``history`` and ``reward``). NumPy has no
way to fuse them, so :class:`StepKernel` hands the same arithmetic to the C++
``PortFeatureKernel`` (``sim_backend/helper/port-feature-kernel.h``), which runs it element by
element in NumPy's order and precision: observations, rewards and summaries are bit-identical to
the NumPy path (``tests/envs/test_step_kernel.py`` plays whole episodes both ways).

Covered: the features ``queue``, ``max_queue`` (linear or step mapping), ``utilization``,
``marked_rate``, ``paused_fraction``, ``flows`` and ``kmin`` / ``kmax`` / ``pmax`` (columns the
feature builder keeps: they change only with the action), and the rewards ``acc``, ``pred`` and
``fct``. An env with another feature (the per-policy telemetry, ``aqm.<parameter>``) runs the
NumPy path; :attr:`EcnScenario.step_kernel <ecngym.envs.scenario.EcnScenario.step_kernel>` says
which one an env runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ecngym.envs.observation import FeatureBuilder
    from ecngym.envs.reward import RewardFunction
    from ecngym.sim_backend.fabric import Telemetry


class EpisodeStats:
    """Per-step telemetry rows of the controlled ports, kept as the block's 64-bit words.

    The episode summary reduces them once, at the end (:meth:`arrays`); until then a step only
    copies words (in the kernel, or :meth:`append` on the NumPy path).

    Args:
        keys: Telemetry keys kept.
        n_ports: Controlled ports.
    """

    def __init__(self, keys: tuple[str, ...], n_ports: int) -> None:
        from ecngym.sim_backend.fabric import TELEMETRY_KIND_TYPES, telemetry_layout  # (it imports pandas)

        layout = telemetry_layout()
        self.keys = keys
        self.rows = [layout[k][0] for k in keys]
        self._types = [TELEMETRY_KIND_TYPES[layout[k][1]] for k in keys]
        self._words = np.empty((64, len(keys), n_ports), dtype=np.uint64)
        self.steps = 0

    def next_row(self) -> np.ndarray:
        """The (keys, ports) words of the next step, to be written (the buffer grows as needed)."""
        if self.steps == len(self._words):
            self._words = np.concatenate([self._words, np.empty_like(self._words)])
        self.steps += 1
        return self._words[self.steps - 1]

    def append(self, block: np.ndarray, ports: np.ndarray) -> None:
        """Keep one step's rows of ``block`` (a :attr:`Telemetry.block`) for ``ports``."""
        self.next_row()[:] = block[self.rows][:, ports]

    def arrays(self) -> dict[str, np.ndarray]:
        """Each key's (steps, ports) array, of its telemetry type."""
        words = self._words[:self.steps]
        return {k: words[:, j].view(t) for j, (k, t) in enumerate(zip(self.keys, self._types, strict=True))}


class StepKernel:
    """The features, history push, reward and statistics of one step, in one C++ call.

    Built by :meth:`build`, which says whether an env's features and reward are covered.

    Args:
        features: The env's feature builder (its frame and history buffers are written).
        program: ``features.kernel_program()``.
        reward_args: The reward's ``kernel_reward``.
        stat_rows: Telemetry rows of the statistics (:attr:`EpisodeStats.rows`).
        ports: Controlled port ids.
    """

    def __init__(self, features: FeatureBuilder, program: dict[str, Any], reward_args: dict[str, Any],
                 stat_rows: list[int], ports: np.ndarray) -> None:
        from ecngym.sim_backend import _fabric

        self._kernel = _fabric.PortFeatureKernel(program["columns"], program["breakpoints"], program["levels"],
                                                 program["shared_breakpoints"], program["history"])
        self._kernel.set_reward(**reward_args)
        self._kernel.set_stat_rows(stat_rows)
        self._features = features
        self._frame, self._hist = program["frame"], program["hist"]
        self._ports = np.ascontiguousarray(ports, dtype=np.int64)

    @classmethod
    def build(cls, features: FeatureBuilder, reward: RewardFunction, stat_rows: list[int],
              ports: np.ndarray) -> StepKernel | None:
        """A kernel for this env, or ``None`` if its features or reward are not covered."""
        from ecngym.sim_backend.fabric import telemetry_layout  # (the fabric module imports pandas)

        program = features.kernel_program()
        reward_args = reward.kernel_reward(telemetry_layout())
        if program is None or reward_args is None or reward.step_queue_map != features.step_map:
            return None
        return cls(features, program, reward_args, stat_rows, ports)

    def step(self, tel: Telemetry, span_ns: int, span_fraction: float, red: dict,
             stats: EpisodeStats) -> np.ndarray:
        """One step: the frame and history of the controlled ports, and their statistics row.

        Args:
            tel: The interval's telemetry.
            span_ns: Length of the interval.
            span_fraction: The interval's length / the env's interval (the ``pred`` reward).
            red: The controlled ports' current ECN setting (the ``kmin`` / ``kmax`` / ``pmax`` columns).
            stats: The episode's statistics (one row is added).

        Returns:
            Each controlled port's reward (a new array).
        """
        self._features.refresh_ecn_columns(red)
        reward = np.empty(len(self._ports))
        self._kernel.step(tel.block, self._ports, span_ns, span_fraction, self._frame, self._hist, reward,
                          stats.next_row())
        return reward
