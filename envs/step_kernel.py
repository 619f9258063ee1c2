"""One env step's per-port arithmetic as one C++ call: features, history, reward, statistics.

Every step, :class:`~ecngym.envs.scenario.EcnScenario` turns the interval's telemetry (the block,
and the per-policy arrays of the controlled ports' AQM policy) into the controlled ports'
features, pushes them onto the history, computes each port's reward and keeps a few telemetry rows
for the episode summary. That arithmetic has one definition, the C++ ``PortFeatureKernel``
(``envs/kernel/port-feature-kernel.h``), and :class:`StepKernel` runs it: the config's
side, what each feature and reward computes from which rows, is compiled by
:meth:`FeatureBuilder.kernel_program <ecngym.envs.observation.FeatureBuilder.kernel_program>` and
:meth:`RewardFunction.kernel_reward <ecngym.envs.reward.RewardFunction.kernel_reward>`. One call a
step replaces some thirty small NumPy operations, whose cost per call was most of the env's own
time per step (``ecngym bench env``).

The kernel covers every feature and reward the env offers: ``queue`` and ``max_queue`` (linear or
step mapping), ``utilization``, ``marked_rate``, ``paused_fraction``, ``flows``, ``kmin`` /
``kmax`` / ``pmax`` and ``aqm.<parameter>`` (from the current setting, handed over when it changes),
every policy's telemetry feature by its declared normaliser, and the rewards ``acc``, ``pred`` and
``fct`` (its per-step part, 0). The tests hold the same arithmetic in NumPy
(``tests/envs/reference_step.py``), element by element in the same order, and compare whole
episodes with it to the bit (``tests/envs/test_step_kernel.py``).
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
    copies words (in the kernel).

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

    def arrays(self) -> dict[str, np.ndarray]:
        """Each key's (steps, ports) array, of its telemetry type."""
        words = self._words[:self.steps]
        return {k: words[:, j].view(t) for j, (k, t) in enumerate(zip(self.keys, self._types, strict=True))}


def _kernel(columns: list[Any], history: int, features: FeatureBuilder, reward: RewardFunction) -> Any:
    """A C++ ``PortFeatureKernel``: ``columns`` (none for a reward alone), ``features``' step mapping, ``reward``."""
    from ecngym.sim_backend import _fabric
    from ecngym.sim_backend.fabric import telemetry_layout  # (the fabric module imports pandas)

    kernel = _fabric.PortFeatureKernel(columns, history=history, **features.step_mapping())
    kernel.set_reward(**reward.kernel_reward(telemetry_layout()))
    return kernel


def reward_kernel(features: FeatureBuilder, reward: RewardFunction) -> Any:
    """A kernel computing ``reward`` alone (its ``reward`` method), with ``features``' step mapping.

    Args:
        features: The env's feature builder (the ``acc`` reward's step mapping).
        reward: The reward.
    """
    return _kernel([], 1, features, reward)


class StepKernel:
    """The features, history push, reward and statistics of one step, in one C++ call.

    Args:
        features: The env's feature builder (its frame and history buffers are written).
        reward: The env's reward.
        stat_rows: Telemetry rows of the statistics (:attr:`EpisodeStats.rows`).
        ports: Controlled port ids.
    """

    def __init__(self, features: FeatureBuilder, reward: RewardFunction, stat_rows: list[int],
                 ports: np.ndarray) -> None:
        from ecngym.sim_backend.fabric import telemetry_layout  # (the fabric module imports pandas)

        program = features.kernel_program(telemetry_layout())
        self._kernel = _kernel(program["columns"], program["history"], features, reward)
        self._kernel.set_stat_rows(stat_rows)
        self._features = features
        self._frame, self._hist = program["frame"], program["hist"]
        self._ports = np.ascontiguousarray(ports, dtype=np.int64)
        self._policy_keys: tuple[str, ...] = program["policy_keys"]
        self._setting_sources: tuple[tuple[str, Any], ...] = program["setting"]
        # the (red, aqm_values) objects the kernel's setting was made of (a new setting is a new object)
        self._red_seen: Any = None
        self._aqm_seen: Any = None

    def _policy(self, tel: Telemetry) -> list[np.ndarray] | tuple:
        """The per-policy arrays the program reads, in its order."""
        keys = self._policy_keys
        return [tel.aqm[k] for k in keys] if keys else ()

    def _set_setting(self, red: dict, aqm_values: np.ndarray | None) -> None:
        """Hand the kernel the controlled ports' current setting (the program's ``'s'`` operands)."""
        if self._setting_sources:
            self._kernel.set_setting(self._features.setting(self._setting_sources, red, aqm_values))
        self._red_seen, self._aqm_seen = red, aqm_values

    def reset(self, tel: Telemetry, red: dict, aqm_values: np.ndarray | None) -> None:
        """Start the history: the frame of ``tel`` (the episode's start) in every slot.

        Args:
            tel: The telemetry at the episode's start.
            red: The controlled ports' current RED curve (the ``kmin`` / ``kmax`` / ``pmax`` features).
            aqm_values: The current values of the tuned policy parameters (``aqm.<parameter>``).
        """
        self._set_setting(red, aqm_values)
        self._kernel.reset(tel.block, self._policy(tel), self._ports, self._frame, self._hist)

    def step(self, tel: Telemetry, span_ns: int, span_fraction: float, red: dict, aqm_values: np.ndarray | None,
             stats: EpisodeStats) -> np.ndarray:
        """One step: the frame and history of the controlled ports, and their statistics row.

        Args:
            tel: The interval's telemetry.
            span_ns: Length of the interval.
            span_fraction: The interval's length / the env's interval (the ``pred`` reward).
            red: The controlled ports' current RED curve (a new mapping whenever it changes).
            aqm_values: The current values of the tuned policy parameters (a new array whenever
                they change).
            stats: The episode's statistics (one row is added).

        Returns:
            Each controlled port's reward (a new array).
        """
        if red is not self._red_seen or aqm_values is not self._aqm_seen:
            self._set_setting(red, aqm_values)
        keys = self._policy_keys  # (inline: this runs every step)
        reward = np.empty(len(self._ports))
        self._kernel.step(tel.block, [tel.aqm[k] for k in keys] if keys else (), self._ports, span_ns, span_fraction,
                          self._frame, self._hist, reward, stats.next_row())
        return reward
