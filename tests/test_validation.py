"""The typed validation layer (ecngym.validation): strict field types, dotted names, no coercion."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pydantic import Field, model_validator

from ecngym.error import ConfigError
from ecngym.validation import (
    Bytes,
    ConfigModel,
    Duration,
    Flag,
    OneOf,
    Rate,
    Real,
    Text,
    Whole,
    check,
    check_whole,
    field_error,
)


class Inner(ConfigModel):
    """A nested model."""

    weight: Real(0, 1) = 0.5


class Shaper(ConfigModel):
    """A model with one field of every kind."""

    mode: OneOf("off", "token_bucket") = "off"
    burst: Bytes(low=1) = "64KB"
    interval: Duration(low=1) = "10us"
    rate: Rate() = "10Gbps"
    queues: Whole(1, 8) = 2
    enabled: Flag = True
    label: Text = "x"
    weights: list[Real(0, 1)] = Field(default_factory=lambda: [0.1])
    ids: list[Whole(0)] | None = None
    inner: Inner = Field(default_factory=Inner)
    extra: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _rule(self) -> Shaper:
        if self.mode == "token_bucket" and self.burst < 1500:
            raise field_error("burst", f"must hold one MTU (1500 B) with a token bucket, got {self.burst} B")
        return self


def test_defaults_convert_units_once():
    s = Shaper.parse(None, "fabric.shaper")
    assert (s.burst, s.interval, s.rate, s.queues) == (64_000, 10_000, 10e9, 2)


@pytest.mark.parametrize("data,message", [
    ({"mode": "on"}, r"fabric\.shaper\.mode: got 'on', allowed: 'off', 'token_bucket'"),
    ({"burst": "0B"}, r"fabric\.shaper\.burst: got '0B' = 0 B, allowed range is \[1, "),
    ({"burst": "5XB"}, r"fabric\.shaper\.burst: cannot parse '5XB'"),
    ({"queues": 2.5}, r"fabric\.shaper\.queues: expected a whole number, got 2.5"),
    ({"queues": "3"}, r"fabric\.shaper\.queues: expected a whole number, got '3'"),
    ({"queues": True}, r"fabric\.shaper\.queues: expected a whole number, got True"),
    ({"queues": 9}, r"fabric\.shaper\.queues: got 9, allowed range is \[1, 8\]"),
    ({"enabled": "no"}, r"fabric\.shaper\.enabled: expected true or false, got 'no'"),
    ({"enabled": 1}, r"fabric\.shaper\.enabled"),
    ({"label": 5}, r"fabric\.shaper\.label: expected a string"),
    ({"weights": [0.1, float("nan")]}, r"fabric\.shaper\.weights\[1\]: expected a finite number, got nan"),
    ({"weights": 0.1}, r"fabric\.shaper\.weights: got 0.1"),
    ({"ids": [1, "a"]}, r"fabric\.shaper\.ids\[1\]"),
    ({"inner": {"weight": 2}}, r"fabric\.shaper\.inner\.weight: got 2, allowed range is \[0, 1\]"),
    ({"inner": {"wieght": 1}}, r"fabric\.shaper\.inner\.wieght: unknown field; known fields: \['weight'\]"),
    ({"modee": "off"}, r"fabric\.shaper\.modee: unknown field; known fields: \['burst', "),
    ({"extra": None}, r"fabric\.shaper\.extra: got None"),
    ({"rate": "0.5bps"}, r"fabric\.shaper\.rate: got '0.5bps', allowed range is \[1bps, 1e15bps\]"),
    ({"interval": "1e400s"}, r"fabric\.shaper\.interval: expected a finite duration"),
    ({"mode": "token_bucket", "burst": 100}, r"fabric\.shaper\.burst: must hold one MTU"),
])
def test_errors_name_the_dotted_field_what_was_given_and_what_is_allowed(data, message):
    with pytest.raises(ConfigError, match=message):
        Shaper.parse(data, "fabric.shaper")


@pytest.mark.parametrize("kind,value,given", [
    # a number shows as given, not as the float (or int) it was converted to: Real(-1) said "got -1.0"
    (Whole(0, 10), -1, "-1"), (Whole(0, 10), 11.0, "11.0"), (Whole(0, 10), np.int64(11), "11"),
    (Real(0, 1), -1, "-1"), (Real(0, 1), -1.5, "-1.5"), (Real(0, 1), np.float32(2), "2.0"),
    (Real(0, 1, low_open=True), 0, "0"),
    # a size, duration or rate: a number as given with its unit, a string as given and converted
    (Bytes(low=1), 0, "0 B"), (Bytes(low=1), 0.0, "0.0 B"), (Bytes(high=1000), "5KB", "'5KB' = 5000 B"),
    (Duration(low=1), 0, "0 ns"), (Duration(high=100), "1ms", "'1ms' = 1000000 ns"),
    (Rate(low=1e9), 5, "5 bps"), (Rate(low=1e9), "5Mbps", "'5Mbps' = 5000000.0 bps"),
])
def test_range_errors_show_the_value_as_given(kind, value, given):
    with pytest.raises(ConfigError, match=r"^f: got (.*), allowed range is") as exc:
        check("f", value, kind)
    assert exc.value.message.split(", allowed")[0] == f"got {given}"


def test_numpy_scalars_and_whole_floats_are_accepted_exactly():
    s = Shaper.parse({"queues": np.int64(4), "enabled": np.bool_(False), "weights": [np.float32(0.5)],
                      "ids": [3.0, 2**40]})
    assert s.queues == 4 and s.enabled is False and s.weights == [0.5] and s.ids == [3, 2**40]


def test_updated_merges_nested_overrides_and_revalidates():
    s = Shaper.parse({"inner": {"weight": 0.2}, "extra": {"a": 1, "b": {"c": 2}}})
    t = s.updated({"extra": {"b": {"d": 3}}, "queues": 3})
    assert t.inner.weight == 0.2 and t.extra == {"a": 1, "b": {"c": 2, "d": 3}} and t.queues == 3
    with pytest.raises(ConfigError, match=r"cfg\.queues"):
        s.updated({"queues": 0}, "cfg")
    assert s.queues == 2  # the original is untouched


def test_omegaconf_containers_are_plain_input():
    from omegaconf import OmegaConf

    s = Shaper.parse(OmegaConf.create({"weights": [0.3, 0.4], "inner": {"weight": 1}}))
    assert s.weights == [0.3, 0.4] and s.inner.weight == 1.0


def test_check_validates_one_value():
    assert check("episodes", 3.0, Whole(1)) == 3
    with pytest.raises(ConfigError, match=r"episodes: got 0, allowed range is \[1, inf\)"):
        check("episodes", 0, Whole(1))
    assert check_whole("n", 5, 1, 10) == 5
    with pytest.raises(ConfigError, match="n: expected a whole number"):
        check_whole("n", 2.5)


def test_an_int_beyond_the_float_range_is_checked_not_an_overflow_error():
    # math.isfinite(10**400) raised OverflowError: 'ecngym eval episodes=<400 digits>' was a traceback
    huge = 10**400
    with pytest.raises(ConfigError, match=r"^episodes: got 1000+, allowed range is \[1, 100000\]$"):
        check("episodes", huge, Whole(1, 100_000))
    assert check("n", huge, Whole()) == huge  # a whole number, exactly
    with pytest.raises(ConfigError, match=r"^x: expected a finite number, got -1000+$"):
        check("x", -huge, Real())


def test_checking_a_field_again_reuses_its_validator():
    # the factories return one annotation per argument list, so check() finds its cached adapter
    # (before, every call built a new pydantic TypeAdapter: ~470 per env reset)
    from ecngym.validation import _cached_adapter

    assert Real(0, 1, low_open=True) is Real(0, 1, low_open=True) and Whole(1) is Whole(1)
    assert Real(1) is not Real(1.0)  # typed: the message prints the bound as it was written
    check("x", 0.5, Real(0, 1, low_open=True))
    before = _cached_adapter.cache_info()
    for _ in range(5):
        check("x", 0.5, Real(0, 1, low_open=True))
        check("n", 3, Whole(1))
    after = _cached_adapter.cache_info()
    assert after.misses - before.misses <= 1 and after.hits - before.hits >= 9


def _raise_config_error(value: int) -> None:
    check_whole("episodes", value, 1)


def test_a_config_error_crosses_process_boundaries_as_itself():
    # pickle gave ConfigError one argument (the formatted text): unpickling it was a TypeError, so
    # an error raised in a worker process (vector envs, Ray, the plateau evaluator) could not come back
    import multiprocessing as mp
    import pickle

    err = pickle.loads(pickle.dumps(ConfigError("seed", "got -1, allowed range is [0, 10]")))
    assert type(err) is ConfigError and (err.field, err.message) == ("seed", "got -1, allowed range is [0, 10]")
    assert str(err) == "seed: got -1, allowed range is [0, 10]"
    with mp.get_context("spawn").Pool(1) as pool, pytest.raises(ConfigError, match=r"^episodes: .*got 0") as info:
        pool.apply(_raise_config_error, (0,))
    assert info.value.field == "episodes"
