"""The Controller interface as the episode runner drives it: own interval, raw telemetry."""

import time

import numpy as np
import pytest

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
        self.low = min(range(len(templates)), key=lambda i: templates[i][1])  # (Kmin, Kmax, Pmax): lowest Kmax
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


@pytest.mark.parametrize("period,message", [
    (0, "controller.interval_steps: got 0, allowed range is [1, inf)"),  # was taken as 1
    (2.5, "controller.interval_steps: expected a whole number, got 2.5"),  # was taken as 2
    ("x", "controller.interval_steps: expected a whole number, got 'x'"),  # was a ValueError from int()
])
def test_runner_refuses_a_period_that_is_no_whole_number_of_steps(period, message):
    from ecngym.error import ConfigError

    env = EcnTuningEnv(episode_steps=3)
    with pytest.raises(ConfigError) as err:
        run_episode(env, QueueThresholdController(interval_steps=period), seed=1)
    env.close()
    assert str(err.value) == message


class SlowAqmController:
    """Thinks for ``think_s`` per act, then sets PRED's lambda through the view (an EnvView knob)."""

    name = "slow_aqm"
    interval_steps = 1

    def __init__(self, think_s: float) -> None:
        self.think_s = think_s

    def reset(self, env) -> None:
        """Build the view."""
        from ecngym.envs.view import EnvView

        self.view = EnvView(env)
        self.action = env.unwrapped.static_action()

    def act(self, observation, info):
        """Busy-wait ``think_s``, then set lambda."""
        end = time.perf_counter() + self.think_s
        while time.perf_counter() < end:  # the controller's own work
            pass
        self.view.set_aqm(self.view.ports, "pred", lambda_qla=0.1)
        return self.action


def test_inference_accounting_leaves_out_the_fabric_applying_view_knobs(monkeypatch):
    """act_wall_s is the controller's own work; set_aqm's time in the fabric is actuation_wall_s."""
    from ecngym.sim_backend.fabric import Fabric

    actuation_s, think_s, steps = 0.05, 0.005, 4  # own work ~5 ms per act; ~55 ms if actuation counted
    real = Fabric.set_aqm

    def slow_set_aqm(self, *args, **kwargs):  # the real call, made measurably slow
        end = time.perf_counter() + actuation_s
        real(self, *args, **kwargs)
        while time.perf_counter() < end:
            pass

    monkeypatch.setattr(Fabric, "set_aqm", slow_set_aqm)
    env = EcnTuningEnv(episode_steps=steps)
    times: list[float] = []
    try:
        summary, _, _ = run_episode(env, SlowAqmController(think_s), seed=1, act_times=times)
        policies = {d["policy"] for d in env.scenario.fabric.get_aqm(env.scenario.ports)}
    finally:
        env.close()
    assert policies == {"pred"}  # the knob really reached the fabric
    assert len(times) == summary["decisions"] == steps
    # each act is at least its own work; together far below what one actuation per act would add
    # (a sum, not a bound per act: one act descheduled on a loaded machine does not fail it)
    assert all(t >= think_s for t in times) and sum(times) < steps * (think_s + actuation_s / 2), times
    assert summary["act_wall_s"] == pytest.approx(sum(times))
    assert summary["actuation_wall_s"] >= steps * actuation_s
    sim_s = steps * env.scenario.interval_ns * 1e-9
    assert summary["actuation_wall_s_per_sim_s"] == pytest.approx(summary["actuation_wall_s"] / sim_s)
