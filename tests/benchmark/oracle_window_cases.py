"""The window oracle: never worse than a constant, its schedule replays to its score, its errors."""


import gymnasium as gym
import numpy as np
import pytest

import ecngym.envs  # noqa: F401
from ecngym.benchmark.oracle_window import (
    WindowScheduleController,
    all_constants,
    neighbour_actions,
    search_windows,
)
from ecngym.envs.rollout import run_episode
from ecngym.error import ConfigError

STEPS = 40
TEMPLATES = [[20_000, 40_000, 0.05], [80_000, 320_000, 0.2], [400_000, 1_600_000, 0.2]]
SCORE = "slowdown_avg_all"


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _env(**kw):
    return gym.make("ecngym/RoceIncast-v0", episode_steps=STEPS,
                    workload={"load": 0.7, "incast": {"degree": 12, "size": "32KB", "load": 0.1, "interval": None}},
                    action={"templates": TEMPLATES}, **kw).unwrapped


class Constant:
    """Plays one template index throughout."""

    def __init__(self, a):
        self.a, self.interval_steps, self.name = a, 1, f"constant_{a}"

    def reset(self, env):  # noqa: D102
        pass

    def act(self, obs, info):  # noqa: D102
        return self.a


def test_the_window_oracle_is_never_worse_than_a_constant_and_its_schedule_replays_exactly():
    env = _env()
    result = search_windows(env, seed=5, window_steps=10, beam_width=2, score=SCORE, processes=2)
    env.close()
    n = env.action_space.n
    assert set(result.constants) == {(i,) for i in range(n)}
    assert result.score <= min(result.constants.values())
    assert len(result.schedule) == STEPS // 10
    assert result.rollouts > n and result.env_steps > n * STEPS
    # the constants found on branches are what fresh static runs score
    for a, score in result.constants.items():
        fresh = _env()
        summary, _, _ = run_episode(fresh, Constant(a[0]), seed=5)
        fresh.close()
        assert summary[SCORE] == score
    # the schedule, replayed by its controller in a fresh episode, scores exactly what the search measured
    fresh = _env()
    trace = fresh.reset(seed=5)[1]["trace_hash"]
    ctl = WindowScheduleController(window_steps=10, per_trace={trace: [list(a) for a in result.schedule]})
    summary, _, _ = run_episode(fresh, ctl, seed=5)
    fresh.close()
    assert summary[SCORE] == result.score
    assert [row["window"] for row in ctl.log] == sorted({row["window"] for row in ctl.log})


def test_candidates_of_a_per_layer_action():
    space = gym.spaces.MultiDiscrete([3, 3])
    assert neighbour_actions(space, None) == [(0, 0), (1, 1), (2, 2)]
    after = neighbour_actions(space, (1, 1))
    assert set(after) == {(0, 0), (1, 1), (2, 2), (0, 1), (2, 1), (1, 0), (1, 2)}
    assert len(all_constants(space)) == 9 and all_constants(space, limit=8) == []


def test_bad_search_arguments_name_their_field():
    env = _env()
    with pytest.raises(ConfigError, match="oracle.window_steps"):
        search_windows(env, seed=1, window_steps=0, beam_width=1, score=SCORE)
    with pytest.raises(ConfigError, match="oracle.beam_width"):
        search_windows(env, seed=1, window_steps=5, beam_width=0, score=SCORE)
    env.close()
    with pytest.raises(ConfigError, match="controller.window_steps"):
        WindowScheduleController(window_steps=0, per_trace={"x": [0]})
    ctl = WindowScheduleController(window_steps=2, per_trace={"abc": [0, 1]})
    ctl.reset(_env())
    with pytest.raises(ConfigError, match="no schedule for trace zzz"):
        ctl.act(np.zeros(1), {"trace_hash": "zzz"})
