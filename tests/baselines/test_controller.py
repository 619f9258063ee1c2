"""The Controller interface as the episode runner drives it: own interval, raw telemetry."""

import numpy as np

from ecngym.baselines import Controller, StaticEcnController
from ecngym.envs import EcnTuningEnv
from ecngym.envs.rollout import run_episode


class QueueThresholdController:
    """A toy tuner on raw telemetry: low thresholds when the hottest controlled queue is long."""

    name = "queue_threshold"

    def __init__(self, interval_steps: int) -> None:
        self.interval_steps = interval_steps
        self.calls: list[int] = []

    def reset(self, env) -> None:
        """Find the lowest-threshold template and the static one."""
        templates = env.unwrapped.scenario.actions.templates
        self.low = min(range(len(templates)), key=lambda i: templates[i].kmax_bytes)
        self.default = env.unwrapped.static_action()

    def act(self, observation, info):
        """Low thresholds while the hottest controlled queue exceeds 50 KB."""
        self.calls.append(int(info["time_ns"]))
        queues = info["telemetry"]["mean_queue_bytes"][info["ports"]]
        return self.low if queues.max() > 50_000 else self.default


def test_controllers_implement_the_protocol():
    assert isinstance(StaticEcnController("env_default"), Controller)
    assert isinstance(QueueThresholdController(1), Controller)


def test_runner_calls_the_controller_at_its_own_interval_with_telemetry():
    env = EcnTuningEnv(episode_steps=12)
    controller = QueueThresholdController(interval_steps=4)
    summary, records, _ = run_episode(env, controller, seed=1)
    interval = env.scenario.interval_ns
    env.close()
    assert controller.calls == [0, 4 * interval, 8 * interval]  # t = 0 (reset info), then every 4 steps
    assert summary["flows_total"] == len(records) > 0
    assert np.isfinite(summary["queue_mean_bytes"])
