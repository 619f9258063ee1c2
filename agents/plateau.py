"""Wall time for ACC to reach its reward plateau (``ecngym bench train --plateau``).

ACC (SB3 Double DQN, ``configs/agent/acc.yaml`` as ``ecngym train agent=acc`` runs it) trains on
the default incast scenario, the bursty scenario of :mod:`ecngym.agents.learning`
(``RoceIncast-v0``, Δt = 15 base RTTs, training seed 7). Every ``eval_every`` env steps the
training pauses and the greedy policy plays the held-out traces (seeds 1001 - 1003, as the
learning tests); the figure is its reward there, :func:`ecngym.agents.learning.evaluate`'s
``mean_reward``. The traces are fixed, so an evaluation changes only when the policy does.

The plateau rule ([OURS]; the issue names the figure, not the rule). One evaluation is noisy: the
greedy policy flips between templates whose rewards lie close together, so the rule reads the
trailing mean of the last ``window`` evaluations (:func:`smoothed`):

* **stop**: once exploration has reached its final ε, training ends when ``patience``
  evaluations in a row lift the smoothed reward no more than ``tol`` above its best before them
  (:func:`plateaued`), or at ``max_steps`` / ``max_train_s``;
* **plateau level**: the mean reward of the last ``patience`` evaluations (they gained nothing);
* **plateau point**: the first evaluation whose smoothed reward is within ``tol`` of that level
  (:func:`plateau_index`); its training wall time is the figure (evaluations excluded: they are
  the measurement, not the training).

A run stopped by ``max_steps`` or ``max_train_s`` has not shown a plateau: ``plateau_reached`` is
false then, and the figure says only where the curve stood.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ecngym.agents.learning import EVAL_SEEDS, TRAIN_SEED, check_seeds
from ecngym.error import ConfigError
from ecngym.validation import Real, Whole, check, check_whole


@dataclass(frozen=True)
class PlateauRule:
    """When an ACC training run has plateaued (module docstring).

    Attributes:
        eval_every: Env steps (control intervals) between evaluations.
        window: Evaluations in the trailing mean the rule reads.
        patience: Evaluations in a row without a gain above ``tol`` that end the run.
        tol: Reward gain that counts as an improvement (the reward lies in [0, 1]).
        max_steps: Env steps at most.
        max_train_s: Training wall seconds at most (evaluations not counted).
    """

    eval_every: int = field(default=250, metadata={"help": "env steps between evaluations"})
    window: int = field(default=5, metadata={"help": "evaluations in the trailing mean"})
    patience: int = field(default=8, metadata={"help": "evaluations without a gain that end the run"})
    tol: float = field(default=0.002, metadata={"help": "reward gain that counts as one"})
    max_steps: int = field(default=100_000, metadata={"help": "env steps at most"})
    max_train_s: float = field(default=1800.0, metadata={"help": "training seconds at most"})

    def __post_init__(self) -> None:
        """Check every field and keep it as its type (``10.0`` steps as 10; a bool is no number)."""
        for name, option, kind in (("eval_every", "--eval-every", Whole(1)), ("window", "--window", Whole(1)),
                                   ("patience", "--patience", Whole(1)), ("tol", "--tol", Real(0.0, 1.0)),
                                   ("max_steps", "--max-steps", Whole(1)),
                                   ("max_train_s", "--max-train-s", Real(0.0, low_open=True))):
            object.__setattr__(self, name, check(option, getattr(self, name), kind))  # (a frozen dataclass)
        if self.max_steps < self.eval_every:
            raise ConfigError("--max-steps", f"got {self.max_steps}, below --eval-every {self.eval_every}: "
                                             "nothing would be evaluated")


def smoothed(rewards: Sequence[float], window: int) -> np.ndarray:
    """Trailing mean of the last ``window`` rewards at each evaluation (fewer at the start)."""
    r = np.asarray(rewards, dtype=np.float64)
    total = np.concatenate(([0.0], np.cumsum(r)))
    i = np.arange(1, len(r) + 1)
    first = np.maximum(i - window, 0)
    return (total[i] - total[first]) / (i - first)


def plateaued(rewards: Sequence[float], window: int, patience: int, tol: float) -> bool:
    """Whether the last ``patience`` smoothed rewards rise no more than ``tol`` above the best before them."""
    if len(rewards) <= patience:
        return False
    s = smoothed(rewards, window)
    return bool(s[-patience:].max() <= s[:-patience].max() + tol)


def plateau_index(rewards: Sequence[float], window: int, patience: int, tol: float) -> int:
    """Index of the first evaluation whose smoothed reward is within ``tol`` of the plateau level.

    The level is the mean of the last ``patience`` rewards (all of them when there are fewer).

    Raises:
        ValueError: On an empty sequence.
    """
    if not len(rewards):
        raise ValueError("no evaluations")
    level = float(np.mean(rewards[-patience:]))
    return int(np.flatnonzero(smoothed(rewards, window) >= level - tol)[0])


def measure_plateau(rule: PlateauRule, *, seed: int = TRAIN_SEED, eval_seeds: Sequence[int] = EVAL_SEEDS,
                    base_env: dict[str, Any] | None = None, out_dir: Path | None = None,
                    progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Train ACC until its held-out reward plateaus; the learning curve and the time to the plateau.

    Args:
        rule: The evaluation period and plateau rule.
        seed: Seed of the learner and of the training traces.
        eval_seeds: Held-out trace seeds of the evaluations.
        base_env: The scenario (default: the learning experiment's bursty one).
        out_dir: Run directory (default: a temporary one, removed after).
        progress: Called with a one-line status after each evaluation.

    Returns:
        ``curve`` (per evaluation: env steps, training wall s, reward, exploration rate), the
        plateau point (``plateau_env_steps``, ``plateau_train_s``) and level (``plateau_level``), whether the
        rule saw it (``plateau_reached``, ``stopped_by``), the static settings' rewards on the same
        traces, and the run's totals.

    Raises:
        ConfigError: Naming ``seed`` or ``eval_seeds`` if one is bad (before anything runs).
    """
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from stable_baselines3.common.callbacks import BaseCallback

    from ecngym.agents.acc import acc_meta, train_acc
    from ecngym.agents.config import agent_config, agent_env_config
    from ecngym.agents.learning import bursty_env
    from ecngym.agents.saved_run import save_agent_meta

    seed = check_whole("seed", seed, 0)
    eval_seeds = check_seeds("eval_seeds", eval_seeds)
    base = bursty_env() if base_env is None else base_env
    agent = agent_config("acc")
    # the evaluations run in one child process: a process holds one fabric, and training's is open
    evaluator = ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn"))
    curve: list[dict[str, Any]] = []
    state = {"stopped_by": "max_steps", "eval_s": 0.0}

    class Evaluation(BaseCallback):
        """Every ``eval_every`` env steps: snapshot the model, play the held-out traces greedily."""

        def _on_training_start(self) -> None:
            self._start = time.perf_counter()
            self._agents = self.training_env.num_envs
            self._snapshot = run_dir / "eval_snapshot"
            self._snapshot.mkdir(exist_ok=True)
            self._evaluate(0, 0.0)  # the untrained network: where the curve starts

        def _evaluate(self, steps: int, train_s: float) -> float:
            began = time.perf_counter()
            self.model.save(str(self._snapshot / "model.zip"))
            save_agent_meta(self._snapshot, acc_meta(agent, env_cfg, self.training_env, seed))
            reward = evaluator.submit(_evaluate, "acc", str(self._snapshot), base, eval_seeds).result()
            # (SB3 sets exploration_rate from the first step on; before it, the schedule's start)
            eps = self.model.exploration_rate if steps else self.model.exploration_schedule(1.0)
            curve.append({"env_steps": steps, "train_s": train_s, "reward": reward, "exploration": float(eps)})
            state["eval_s"] += time.perf_counter() - began
            return reward

        def _on_step(self) -> bool:
            steps = self.model.num_timesteps // self._agents
            train_s = time.perf_counter() - self._start - state["eval_s"]
            if steps % rule.eval_every and train_s < rule.max_train_s:
                return True
            reward = self._evaluate(steps, train_s)
            if progress is not None:
                mean = smoothed([c["reward"] for c in curve], rule.window)[-1]
                progress(f"ACC plateau: {steps} env steps, {train_s:.0f} s training, held-out reward "
                         f"{reward:.4f} (trailing mean {mean:.4f})")
            settled = self.model.exploration_rate <= self.model.exploration_final_eps  # ε schedule done
            if settled and plateaued([c["reward"] for c in curve], rule.window, rule.patience, rule.tol):
                state["stopped_by"] = "plateau"
                return False
            if train_s >= rule.max_train_s:
                state["stopped_by"] = "max_train_s"
                return False
            return True

    env_cfg = agent_env_config({**base, "seed": seed}, agent["env"])
    with evaluator, tempfile.TemporaryDirectory(prefix="ecngym-plateau-") as tmp:
        statics = {name: evaluator.submit(_evaluate, "static", setting, base, eval_seeds).result()
                   for name, setting in (("static_default", "env_default"), ("static_dcqcn", "dcqcn"))}
        run_dir = Path(out_dir) if out_dir is not None else Path(tmp)
        start = time.perf_counter()
        train_acc(base, agent, run_dir, timesteps=rule.max_steps, seed=seed, progress_bar=False,
                  callbacks=[Evaluation()])
        wall = time.perf_counter() - start
    if not curve:
        raise RuntimeError("the training ended before its first evaluation")
    rewards = [c["reward"] for c in curve]
    for c, mean in zip(curve, smoothed(rewards, rule.window), strict=True):
        c["smoothed"] = float(mean)
    at = curve[plateau_index(rewards, rule.window, rule.patience, rule.tol)]
    scenario = "RoceIncast-v0 (bursty, 15 RTT)" if base_env is None else "the given env"
    return {"scenario": scenario, "seed": seed, "eval_seeds": eval_seeds,
            "rule": asdict(rule), "curve": curve, "stopped_by": state["stopped_by"],
            "plateau_reached": state["stopped_by"] == "plateau", "plateau_env_steps": at["env_steps"],
            "plateau_train_s": at["train_s"], "plateau_level": float(np.mean(rewards[-rule.patience:])),
            "static_rewards": statics, "train_s": curve[-1]["train_s"], "eval_s": state["eval_s"],
            "wall_s": wall}


def _evaluate(kind: str, what: str, base_env: dict[str, Any], seeds: list[int]) -> float:
    """Mean held-out reward of a static setting (``kind="static"``) or an ACC snapshot directory."""
    from ecngym.agents.learning import evaluate

    if kind == "static":
        from ecngym.baselines import StaticEcnController

        controller: Any = StaticEcnController(what)
    else:
        from ecngym.agents.acc import AccController

        controller = AccController(what)
    return float(evaluate(controller, base_env, seeds)["mean_reward"])
