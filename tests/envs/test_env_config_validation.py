"""Env configs and overrides go through the typed validation layer: strict, named, nothing reinterpreted.

Regression tests for issue 7's env cases (truthiness, NaN breakpoints, wrong types in
``gym.make`` overrides, the seed checked only at the first reset, huge intervals and episodes).
"""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.envs import EcnTuningEnv, EnvConfig
from ecngym.envs.scenario import EcnScenario
from ecngym.error import ConfigError

SHORT = {"episode_steps": 4}


@pytest.mark.parametrize("overrides,field", [
    # truthiness: "no" used to flatten / scale
    ({"observation": {"flatten": "no"}}, r"env\.observation\.flatten: expected true or false, got 'no'"),
    ({"observation": {"flatten": 0}}, r"env\.observation\.flatten"),
    ({"action": {"scale_with_rate": "no"}}, r"env\.action\.scale_with_rate: expected true or false"),
    # NaN passed the sorted-breakpoints check
    ({"observation": {"step_breakpoints_bdp": [0.25, float("nan"), 1.0, 2.0, 4.0]}},
     r"env\.observation\.step_breakpoints_bdp\[1\]: expected a finite number, got nan"),
    ({"observation": {"step_breakpoints_bdp": [4.0, 2.0, 1.0, 0.5, 0.25]}}, r"env\.observation\.step_breakpoints_bdp"),
    # wrong types in gym.make overrides: a ConfigError naming the field, not a traceback
    ({"topology": None}, r"env\.topology: got None"),
    ({"reward": {"name": ["acc"]}}, r"env\.reward\.name: got \['acc'\], allowed: 'acc', 'pred', 'fct'"),
    ({"action": {"templates": 5}}, r"env\.action\.templates: got 5"),
    ({"action": {"templates": [[1000, 2000, "0.5"]]}},
     r"env\.action\.templates\[0\]\.pmax: expected a number, got '0.5'"),
    ({"action": {"templates": [[1000, 2000, True]]}}, r"env\.action\.templates\[0\]\.pmax"),
    # a part of a list entry is named in the dotted field (it read "templates[0]: pmax: got 3 ...")
    ({"action": {"templates": [[1000, 2000, 0.1], [1000, 2000, 3]]}},
     r"^env\.action\.templates\[1\]\.pmax: got 3, allowed range is \[0\.0, 1\.0\]$"),
    ({"action": {"templates": [["5XB", 2000, 0.1]]}}, r"^env\.action\.templates\[0\]\.kmin_bytes: cannot parse '5XB'"),
    ({"action": {"templates": [[3000, 2000, 0.1]]}},
     r"^env\.action\.templates\[0\]: kmax_bytes \(2000\) must be >= kmin_bytes \(3000\)$"),
    ({"action": {"static_default": [1000, 2000, 3]}}, r"^env\.action\.static_default\.pmax: got 3, allowed range"),
    ({"action": {"type": "continuous", "ranges": {"pmax": [0, 2]}}}, r"^env\.action\.ranges\.pmax: got 2, allowed"),
    ({"action": {"type": "continuous", "ranges": {"kmax_bytes": {"relative_to": "kmax_bytes", "offset": [0, 1]}}}},
     r"^env\.action\.ranges\.kmax_bytes\.relative_to: got 'kmax_bytes'; allowed: another tuned numeric parameter"),
    ({"action": {"type": "continuous", "params": ["kmax_bytes", "pmax"]}}, None),  # RED's Kmax default: absolute
    ({"action": {"type": "continuous", "params": ["kmax_bytes"],
                 "ranges": {"kmax_bytes": {"relative_to": "kmin_bytes", "offset": [0, 1]}}}},
     r"^env\.action\.ranges\.kmax_bytes\.relative_to: got 'kmin_bytes'; allowed: another tuned numeric parameter "
     r"of \['kmax_bytes'\]$"),
    ({"action": {"type": "continuous", "ranges": {"kmax_bytes": {"relative_to": "kmin_bytes", "offset": [0, -1]}}}},
     r"^env\.action\.ranges\.kmax_bytes\.offset: "),
    ({"action": {"type": "continuous", "ranges": {"kmax_bytes": {"relative_to": "kmin_bytes"}}}},
     r"^env\.action\.ranges\.kmax_bytes: expected \[low, high\] or \{relative_to: parameter, offset: \[low, high\]\}"),
    ({"action": {"type": "continuous", "ranges": {"kmin_bytes": {"relative_to": "kmax_bytes", "offset": [0, 1]}}}},
     r"^env\.action\.ranges\.kmin_bytes: is relative and the base of another relative range"),
    ({"action": {"templates": []}}, r"env\.action\.templates"),
    ({"action": {"ports": [1.5]}}, r"env\.action\.ports\[0\]: expected a whole number"),
    ({"action": {"ports": ["3"]}}, r"env\.action\.ports\[0\]"),
    ({"action": 5}, r"env\.action: got 5"),
    ({"observation": {"history": True}}, r"env\.observation\.history"),
    ({"reward": {"omega": "0.5"}}, r"env\.reward\.omega"),
    ({"trace": 5}, r"env\.trace: expected a string"),
    # an interval of 1e400 RTTs, a huge episode
    # the interval's own cap (it said (0, 2^62] first, then (0, 1e+06] for 2e6rtt)
    ({"interval": "1e400rtt"}, r"env\.interval: got '1e400rtt', allowed: a number of base RTTs in \(0, 1e\+06\], or a"),
    ({"interval": "nanrtt"}, r"env\.interval"),
    ({"interval": "1e30s"}, r"env\.interval"),
    ({"interval": "1e-9rtt"}, r"env\.interval: got '1e-9rtt' = .* ns with a base RTT of .*allowed range is \[1, "),
    ({"episode_steps": 10**7}, r"env\.episode_steps: got 10000000, allowed range is \[1, 1000000\]"),
    # the seed is checked when the env is made, not at the first reset
    ({"seed": -1}, r"env\.seed: got -1, allowed range"),
    ({"seed": 1.5}, r"env\.seed: expected a whole number"),
    ({"seed": "1"}, r"env\.seed"),
    # workload keys: an unknown one was a TypeError from generate_trace, one the scenario sets "multiple values"
    ({"workload": {"lod": 0.5}}, r"env\.workload\.lod: unknown key; allowed keys: workload, load, .*Did you mean"),
    ({"workload": {"hosts": 4}}, r"env\.workload\.hosts: is set by the scenario"),
    ({"workload": {"duration": "1ms"}}, r"env\.workload\.duration: is set by the scenario"),
    ({"workload": {"seed": 3}}, r"env\.workload\.seed: is set by the scenario"),
    # workload none with the scenario's incast turned off ran every episode without a flow
    ({"workload": {"workload": "none", "incast": {"degree": 0}}},
     r"^workload\.name: got 'none' \(no background flows\) and no other arrival pattern, so the trace could have no "),
    # the episode's seed seeds its fabric: a fabric seed was silently ignored
    ({"fabric": {"seed": 3}}, r"env\.fabric\.seed: got 3; each episode's fabric is seeded from the episode's seed"),
    # a field of the other action type was silently ignored
    ({"action": {"type": "continuous", "templates": [[1000, 2000, 0.1]]}},
     r"env\.action\.templates: only a discrete action reads it, and this env's action\.type is 'continuous'"),
    ({"action": {"ranges": {"kmin_bytes": ["1KB", "2KB"]}}}, r"env\.action\.ranges: only a continuous action reads it"),
    ({"action": {"static_default": [1000, 2000, 0.1], "type": "continuous"}}, r"env\.action\.static_default"),
    # with env.aqm the action tunes that policy's parameters: a RED setting is refused, not ignored
    ({"aqm": "codel", "action": {"templates": [[1, 2, 0.3]]}},
     r"^env\.action\.templates\[0\]: expected 2 value\(s\) for \['target_ns', 'interval_ns'\], got \[1, 2, 0\.3\]$"),
    ({"aqm": {"policy": "red"}, "action": {"params": ["pmax"], "static_default": [1, 2, 0.3]}},
     r"^env\.action\.static_default: expected 1 value\(s\) for \['pmax'\]"),
    ({"aqm": "pred", "action": {"type": "continuous", "ranges": {"kmin_bytes": ["1KB", "2KB"]}}},
     r"^env\.action\.ranges\.kmin_bytes: not a tuned parameter; env\.action\.params is \['lambda_qla'\]$"),
    # the spellings from before one mapper served every policy: refused by name, saying the new one
    ({"action": {"aqm_params": ["pmax"]}}, r"^env\.action\.aqm_params: was renamed: give it as env\.action\.params$"),
    ({"action": {"aqm_templates": [[0.1]]}},
     r"^env\.action\.aqm_templates: was renamed: give it as env\.action\.templates$"),
    ({"action": {"aqm_ranges": {}}}, r"^env\.action\.aqm_ranges: was renamed: give it as env\.action\.ranges$"),
    ({"action": {"kmin_range": ["1KB", "2KB"]}},
     r"^env\.action\.kmin_range: was renamed: give it as env\.action\.ranges\.kmin_bytes \(\[low, high\]\)$"),
    ({"action": {"kmax_span_range": ["0B", "2MB"]}},
     r"^env\.action\.kmax_span_range: was renamed: give it as env\.action\.ranges\.kmax_bytes \(\{relative_to: "
     r"kmin_bytes, offset: \[low, high\]\}\)$"),
    ({"action": {"pmax_range": [0.1, 1]}},
     r"^env\.action\.pmax_range: was renamed: give it as env\.action\.ranges\.pmax \(\[low, high\]\)$"),
    # two indices of one setting: the space silently had one index fewer
    ({"action": {"templates": [[1000, 2000, 0.1], ["1KB", "2KB", 0.1]]}},
     r"^env\.action\.templates\[1\]: repeats env\.action\.templates\[0\] \(\[1000, 2000, 0\.1\]\); give each "
     r"setting once$"),
])
def test_make_refuses_bad_overrides_naming_the_field(overrides, field):
    if field is None:  # the good neighbour of a refused case
        gym.make("ecngym/RoceIncast-v0", **{**SHORT, **overrides}).close()
        return
    with pytest.raises(ConfigError, match=field):
        gym.make("ecngym/RoceIncast-v0", **{**SHORT, **overrides})


def test_the_static_default_may_be_one_of_the_templates():
    env = gym.make("ecngym/RoceIncast-v0", **SHORT, action={"templates": [[1000, 2000, 0.1], [3000, 4000, 0.2]],
                                                          "static_default": [3000, 4000, 0.2]})
    assert env.action_space.n == 2 and env.unwrapped.static_action() == 1


def test_a_preset_with_templates_still_takes_a_continuous_action():
    # DctcpLeafSpine's preset sets DCTCP step templates: the user did not, so they are not refused
    env = gym.make("ecngym/DctcpLeafSpine-v0", **SHORT, action={"type": "continuous",
                                                               "ranges": {"kmin_bytes": ["1KB", "2KB"]}})
    assert env.unwrapped.config.action.templates[0][0] == env.unwrapped.config.action.templates[0][1]  # a step
    assert env.action_space.shape[1] == 3
    # a resolved config given back as the base repeats the fields it does not read
    whole = env.unwrapped.config.as_dict()
    again = gym.make("ecngym/DctcpLeafSpine-v0", config=whole)
    assert again.unwrapped.config == env.unwrapped.config


def test_strict_types_keep_valid_values_and_convert_units_once():
    cfg = EnvConfig.from_dict({"episode_steps": 8.0, "seed": 2**64 - 1, "observation": {"queue_scale": "2MB",
                                                                                          "flatten": False},
                               "action": {"templates": [["5KB", "200KB", 0.01]],
                                          "ranges": {"kmin_bytes": ["1KB", 4000]}}})
    assert cfg.episode_steps == 8 and isinstance(cfg.episode_steps, int) and cfg.seed == 2**64 - 1
    assert cfg.observation.queue_scale == 2_000_000 and cfg.observation.flatten is False
    # an action setting's units are its policy parameter's: the mapper converts them, once
    actions = EcnScenario(cfg).actions
    assert actions.templates[0] == (5000, 200_000, 0.01) and isinstance(actions.templates[0][0], int)
    assert (actions.low[0], actions.high[0]) == (1000, 4000)
    # the validated dump re-validates to the same config (what results record can be replayed)
    assert EnvConfig.from_dict(cfg.as_dict()) == cfg


def test_flatten_false_really_keeps_the_table():
    env = EcnTuningEnv(observation={"flatten": False}, **SHORT)
    try:
        obs, _ = env.reset(seed=1)
        assert obs.ndim == 2
    finally:
        env.close()


def test_reset_with_a_bad_seed_keeps_the_episode():
    env = EcnTuningEnv(**SHORT)
    try:
        env.reset(seed=1)
        env.step(env.action_space.sample())
        for seed in (-1, 1.5, "3", 2**64):
            with pytest.raises(ConfigError, match="seed"):
                env.reset(seed=seed)
        assert env.unwrapped.scenario.fabric is not None and env.unwrapped.scenario.step_count == 1
        env.step(env.action_space.sample())  # the episode goes on
    finally:
        env.close()


def test_reset_refuses_options_it_would_ignore_and_keeps_the_episode():
    # reset(options=...) was not read: any options were silently ignored
    env = gym.make("ecngym/RoceIncast-v0", **SHORT)  # (through Gymnasium's wrappers, which pass options on)
    try:
        env.reset(seed=1, options=None)
        env.reset(seed=1, options={})
        env.step(env.action_space.sample())
        for options in ({"episode_steps": 8}, {"options": 1}, 5, "x"):
            with pytest.raises(ConfigError, match=rf"^options: got {re.escape(repr(options))}, allowed: None or "
                                                  r"\{\}: this env defines no reset options"):
                env.reset(seed=2, options=options)
        assert env.unwrapped.scenario.step_count == 1  # the episode goes on
        env.step(env.action_space.sample())
    finally:
        env.close()


def test_a_fixed_trace_refuses_workload_overrides(tmp_path):
    # the workload of an env replaying a fixed trace was ignored, its values never even checked
    from ecngym.workloads import generate_trace

    path = str(generate_trace("websearch", load=0.3, hosts=16, duration="1ms", seed=1).save(tmp_path / "t.parquet"))
    for workload in ({"load": 5.0}, {"workload": "datamining"}):
        with pytest.raises(ConfigError, match=r"env\.workload: got .* with env\.trace='.*t\.parquet': the trace "
                                              r"fixes the workload"):
            EcnTuningEnv(trace=path, workload=workload, **SHORT)
    with pytest.raises(ConfigError, match=r"env\.workload: .*the trace fixes the workload"):  # trace in the base
        EcnTuningEnv({"trace": path}, workload={"load": 0.5}, **SHORT)
    # a preset's own workload takes a trace; so does a resolved config given back as the base
    env = gym.make("ecngym/RoceLeafSpine-v0", trace=path, **SHORT)
    whole = env.unwrapped.config.as_dict()
    assert EcnTuningEnv(whole).config == env.unwrapped.config
    env.close()


def test_a_complete_config_given_as_overrides_is_checked_like_any_overrides(tmp_path):
    # every field given was taken for a resolved config passed back in, and not checked: a trace with
    # another workload loaded, the workload silently ignored
    from ecngym.workloads import generate_trace

    path = str(generate_trace("websearch", load=0.3, hosts=16, duration="1ms", seed=1).save(tmp_path / "t.parquet"))
    complete = EcnTuningEnv(trace=path, **SHORT).config.as_dict()
    with pytest.raises(ConfigError, match=r"^env\.workload: got .* with env\.trace='.*t\.parquet': the trace fixes "):
        EcnTuningEnv(**{**complete, "workload": {**complete["workload"], "load": 0.9}})
    continuous = {**complete, "trace": None, "action": {**complete["action"], "type": "continuous"}}
    with pytest.raises(ConfigError, match=r"^env\.action\.templates: only a discrete action reads it"):
        EcnTuningEnv(**{**continuous, "action": {**continuous["action"], "templates": [[1000, 2000, 0.1]]}})


@pytest.mark.parametrize("scenario", sorted(ecngym.envs.SCENARIOS))
def test_a_resolved_config_given_back_as_the_base_loads_as_it_was_on_any_preset(scenario):
    # as overrides of the default scenario (RLlib's env_config), DctcpRttVariation's workload gained
    # the default's 8-way incasts; its DCTCP templates with a continuous action were refused
    env = gym.make(scenario, **SHORT, action={"type": "continuous"})
    whole = env.unwrapped.config.as_dict()
    assert EcnTuningEnv(whole).config == env.unwrapped.config
    assert gym.make("ecngym/RoceIncast-v0", config=whole).unwrapped.config == env.unwrapped.config
    env.close()


def test_a_presets_red_templates_give_way_to_another_policys_defaults():
    # DctcpRttVariation's preset lists RED step templates: they set RED, not ECN#'s targets
    env = gym.make("ecngym/DctcpRttVariation-v0", **SHORT, aqm="ecn_sharp")
    try:
        actions = env.unwrapped.scenario.actions
        assert actions.policy == "ecn_sharp" and actions.params == ["ins_target_ns", "pst_target_ns"]
        assert env.unwrapped.config.action.templates is None and actions.templates[0] == (80_000, 10_000)
    finally:
        env.close()
    # templates given with the policy are that policy's
    env = gym.make("ecngym/DctcpRttVariation-v0", **SHORT, aqm="ecn_sharp", action={"templates": [["40us", "5us"]]})
    try:
        assert env.unwrapped.scenario.actions.templates == [(40_000, 5_000), (80_000, 10_000)]
    finally:
        env.close()
    # the preset's own policy keeps its templates
    env = gym.make("ecngym/DctcpRttVariation-v0", **SHORT, aqm="red")
    try:
        assert env.unwrapped.config.action.templates is not None
    finally:
        env.close()
