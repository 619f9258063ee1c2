"""``controllers: all`` leaves out what ``controllers_not_in_all`` names; a bad name or beam width is refused."""

import pytest
from omegaconf import OmegaConf

from ecngym.benchmark.oracle_window_cli import beam_widths as _beams
from ecngym.commands.factories import benchmark_controllers
from ecngym.error import ConfigError


def test_all_leaves_out_the_costly_ones_and_refuses_an_unknown_name():
    every = benchmark_controllers(OmegaConf.create({"controllers": "all"}))
    main_job = benchmark_controllers(OmegaConf.create({"controllers": "all",
                                                       "controllers_not_in_all": ["mpc_forecast"]}))
    assert "mpc_forecast" in every and "mpc_forecast" not in main_job
    assert set(every) - set(main_job) == {"mpc_forecast"}
    with pytest.raises(ConfigError, match=r"^controllers_not_in_all: unknown controller\(s\) \['mpc_forcast'\]"):
        benchmark_controllers(OmegaConf.create({"controllers": "all", "controllers_not_in_all": ["mpc_forcast"]}))


@pytest.mark.parametrize("text", ["0", "1,x", "", "-2"])
def test_a_bad_beam_width_is_refused_naming_beam(text):
    with pytest.raises(ConfigError, match=r"^beam: got"):
        _beams(text)
    assert _beams("1,2") == [1, 2]
