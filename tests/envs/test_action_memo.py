"""The discrete action mapper remembers each action's settings; invalid actions are never remembered."""

import gymnasium as gym
import numpy as np
import pytest

import ecngym.envs  # noqa: F401
from ecngym.error import InvalidAction


@pytest.fixture
def mapper():
    env = gym.make("ecngym/RoceLeafSpine-v0")
    yield env.unwrapped.scenario.actions
    env.close()


def test_a_repeated_action_returns_the_remembered_read_only_settings(mapper):
    a = mapper.space.sample()
    first = mapper.to_settings(a)
    again = mapper.to_settings(np.array(a))  # same identity, another object
    assert all(x is y for x, y in zip(first, again, strict=True))
    assert not any(x.flags.writeable for x in first)  # a caller cannot change what later lookups get
    fresh = mapper._to_settings(a)
    assert all(np.array_equal(x, y) for x, y in zip(first, fresh, strict=True))


def test_an_invalid_action_is_refused_every_time(mapper):
    bad = np.full(mapper.space.shape, len(mapper.templates))  # one past the last template
    for _ in range(2):
        with pytest.raises(InvalidAction):
            mapper.to_settings(bad)
    assert len(mapper._memo) == 0


def test_the_memo_stays_bounded(mapper, monkeypatch):
    import ecngym.envs.action as action

    monkeypatch.setattr(action, "SETTINGS_MEMO_SIZE", 5)
    for i in range(20):
        mapper.to_settings(np.array(np.unravel_index(i, mapper.space.nvec)))
        assert len(mapper._memo) <= 5
    assert len(mapper._memo) > 0
