"""The discrete action mapper remembers each action's per-port values; invalid actions are never remembered."""

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
    first = mapper.port_values(a)
    again = mapper.port_values(np.array(a))  # same identity, another object
    assert first is again
    assert not first.flags.writeable  # a caller cannot change what later lookups get
    fresh = mapper._port_values(a)
    assert np.array_equal(first, fresh) and first.dtype == fresh.dtype == np.float64


def test_an_invalid_action_is_refused_every_time(mapper):
    bad = np.full(mapper.space.shape, len(mapper.templates))  # one past the last template
    for _ in range(2):
        with pytest.raises(InvalidAction):
            mapper.port_values(bad)
    assert len(mapper._memo) == 0


def test_the_memo_stays_bounded(mapper, monkeypatch):
    import ecngym.envs.action as action

    monkeypatch.setattr(action, "SETTINGS_MEMO_SIZE", 5)
    for i in range(20):
        mapper.port_values(np.array(np.unravel_index(i, mapper.space.nvec)))
        assert len(mapper._memo) <= 5
    assert len(mapper._memo) > 0


def test_encode_addresses_each_unit_at_its_own_rate_and_refuses_a_unit_of_mixed_rates():
    """Encoding inverts port_values per unit; a unit whose ports differ in rate cannot be addressed."""
    from ecngym.envs.action import ActionMapper
    from ecngym.envs.config import ActionConfig
    from ecngym.error import InvalidAction

    ports = np.arange(4)
    rates = np.array([25e9, 25e9, 100e9, 100e9])
    static = {"kmin_bytes": 20_000, "kmax_bytes": 40_000, "pmax": 0.05}
    by_layer = ActionMapper(ActionConfig.parse({"scope": "layer", "scale_with_rate": True}), ports,
                            np.array(["leaf", "leaf", "spine", "spine"]), rates, "red", static)
    rows = np.array(by_layer.templates, dtype=np.float64)
    kmin = rows[:, 0] * np.array([[0.25], [1.0]])  # template 0 at 25 G, template 3 at 100 G
    kmax = rows[:, 1] * np.array([[0.25], [1.0]])
    pmax = rows[:, 2]
    action = by_layer.encode([kmin[0, 0], kmin[1, 3]], [kmax[0, 0], kmax[1, 3]], [pmax[0], pmax[3]])
    assert action.tolist() == [0, 3]
    got = by_layer.port_values(action)
    assert got[:, 0].tolist() == [kmin[0, 0]] * 2 + [kmin[1, 3]] * 2
    with pytest.raises(InvalidAction, match="unit 'leaf' is not one of|on unit 'spine' is not one of"):
        by_layer.encode([kmin[0, 0], 1], [kmax[0, 0], 2], [pmax[0], 0.5])
    mixed = ActionMapper(ActionConfig.parse({"scope": "all", "scale_with_rate": True}), ports,
                         np.array(["leaf"] * 4), rates, "red", static)
    with pytest.raises(InvalidAction, match="unit 'all' mixes port rates"):
        mixed.encode(20_000, 40_000, 0.05)
