"""Controllers are built from configs/controller/*.yaml by their _target_; the env view; the action encoder."""

import json
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

import ecngym
from ecngym import cli
from ecngym.baselines import StaticEcnController, build_controller
from ecngym.envs import EcnTuningEnv
from ecngym.envs.view import EnvView
from ecngym.error import ConfigError, InvalidAction

CONFIG_DIR = Path(ecngym.__file__).parent / "configs" / "controller"
CONTROLLER_CONFIGS = sorted(CONFIG_DIR.glob("*.yaml"))


@pytest.mark.parametrize("path", CONTROLLER_CONFIGS, ids=lambda p: p.stem)
def test_every_controller_config_builds_or_names_its_missing_field(path):
    cfg = OmegaConf.load(path)
    if "path" in cfg.keys() and OmegaConf.is_missing(cfg, "path"):  # sb3: the model path is mandatory
        with pytest.raises(ConfigError, match="controller.path"):
            build_controller(cfg)
        return
    controller = build_controller(cfg)
    # the name tables, the store and the leaderboard show is the one `controller=<name>` chose
    assert controller.name == path.stem and controller.interval_steps >= 1


@pytest.mark.parametrize("given", ["file", "composed", "mapping"])
def test_a_mandatory_value_left_unset_names_controller_key_at_any_depth(given):
    # the registry had a ??? check of its own, for top-level keys only: a nested one went on as the
    # string '???' (a controller config loaded from a file, a node of a composed config, a mapping)
    cfg = OmegaConf.load(CONFIG_DIR / "ecn_sharp.yaml")
    cfg.params.ins_target_ns = "???"
    node = {"file": cfg, "composed": OmegaConf.create({"env": {}, "controller": cfg}).controller,
            "mapping": OmegaConf.to_container(cfg)}[given]
    with pytest.raises(ConfigError, match=r"^controller\.params\.ins_target_ns: required but not given "
                                          r"\(set controller\.params\.ins_target_ns=\.\.\.\)$"):
        build_controller(node)


def test_unknown_key_bad_value_and_bad_target_name_the_field():
    with pytest.raises(ConfigError, match="controller.settting"):
        build_controller({"_target_": "ecngym.baselines.StaticEcnController", "settting": "dcqcn"})
    with pytest.raises(ConfigError, match="controller.dctcp_lambda"):
        build_controller({"_target_": "ecngym.baselines.StaticEcnController", "dctcp_lambda": -1})
    with pytest.raises(ConfigError, match="controller.setting"):
        build_controller({"_target_": "ecngym.baselines.StaticEcnController", "setting": [1, 2]})
    with pytest.raises(ConfigError, match="controller._target_"):
        build_controller({"_target_": "ecngym.baselines.NoSuchController"})
    with pytest.raises(ConfigError, match="controller._target_"):
        build_controller({"setting": "dcqcn"})


@pytest.mark.parametrize(("target", "what"), [
    ("os.getcwd", "a builtin_function_or_method"),  # was an AttributeError traceback
    ("collections.OrderedDict", "a class without reset or act"),  # was inspect's "no signature found"
    ("ecngym.baselines.registry", "a module"),
])
def test_a_target_that_is_no_controller_class_is_named(target, what):
    with pytest.raises(ConfigError, match=rf"^controller\._target_: '{target}' is {what}; expected a controller "
                                          r"class \(reset\(env\) and act\(obs, info\)"):
        build_controller({"_target_": target})


@pytest.mark.parametrize("name", [5, True, ["a"], "", "  "])
def test_a_controller_name_must_be_a_non_empty_string(name):
    # a number was accepted and failed later in the results code (TypeError); "" silently became the default
    for target in ("ecngym.baselines.bytetuning.ByteTuningController", "ecngym.baselines.StaticEcnController"):
        with pytest.raises(ConfigError, match=r"controller\.name: "):
            build_controller({"_target_": target, "name": name})
    assert build_controller({"_target_": "ecngym.baselines.StaticEcnController", "name": "mine"}).name == "mine"


def test_view_reports_ports_rates_interval_and_current_settings():
    env = EcnTuningEnv(episode_steps=3, action={"type": "continuous", "scope": "port"})
    env.reset(seed=0)
    view = EnvView(env)
    assert np.array_equal(view.ports, env.ports) and (view.port_rates_bps == 100e9).all()
    assert view.interval_ns == env.scenario.interval_ns and view.base_rtt_ns > 0
    assert (view.red["kmin_bytes"] == 400_000).all()  # the HPCC preset's setting at t = 0
    action = view.encode(np.arange(1, 17) * 10_000, np.arange(1, 17) * 30_000, 0.5)
    env.step(action)
    assert np.abs(view.red["kmin_bytes"].astype(np.int64) - np.arange(1, 17) * 10_000).max() <= 1
    view.set_pfc(view.port_switches[:1], 0.5, 50_000)
    assert view.pfc["alpha"][0] == 0.5 and view.pfc["headroom_bytes"][0] == 50_000
    env.close()


def test_view_set_pfc_leaves_the_checks_to_the_fabric_and_records_what_it_set():
    env = EcnTuningEnv(episode_steps=3, topology={"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 5})
    env.reset(seed=0)
    view = EnvView(env)
    before = view.pfc
    # each was converted by the view first: 1.5 -> switch 1, True -> switch 1, '0' -> switch 0, alpha '1' -> 1.0,
    # headroom 1.5 -> 2 B; '10KB' (a size Fabric.set_pfc takes) and a count mismatch were NumPy ValueErrors
    for args, field in [((1.5, 1.0, 1000), "switches"), ((True, 1.0, 1000), "switches"), (("0", 1.0, 1000), "switches"),
                        ((None, 1.0, 1000), "switches"), ((0, "1", 1000), "alpha"), ((0, 1.0, 1.5), "headroom"),
                        ((0, 1.0, -1), "headroom"), ((0, 1.0, None), "headroom"),
                        (([0, 1], [1.0, 2.0, 3.0], 1000), "alpha"), (([0, 1], 1.0, [1, 2, 3]), "headroom")]:
        with pytest.raises(ConfigError, match=f"^{field}"):
            view.set_pfc(*args)
        for k, v in view.pfc.items():  # nothing recorded
            np.testing.assert_array_equal(v, before[k])
    view.set_pfc([0, 1], 2.0, "10KB")
    assert view.pfc["alpha"][:2].tolist() == [2.0, 2.0] and view.pfc["headroom_bytes"][:2].tolist() == [10_000] * 2
    assert view.pfc["alpha"][2] == before["alpha"][2]
    env.close()


def test_encoder_is_the_decoders_inverse_and_refuses_what_it_cannot_express():
    env = EcnTuningEnv(episode_steps=3, action={"type": "continuous", "ranges": {"kmin_bytes": ["1KB", "100KB"]}})
    mapper = env.scenario.actions
    kmin, kmax, pmax = mapper.port_values(mapper.encode(12_345, 67_890, 0.3))[0]
    assert abs(int(kmin) - 12_345) <= 1 and abs(int(kmax) - 67_890) <= 1 and abs(pmax - 0.3) < 1e-6
    with pytest.raises(InvalidAction, match=r"^kmin_bytes 200000 \(unit 'all'\) outside the continuous action range "
                                            r"\[1000, 100000\]$"):
        mapper.encode(200_000, 300_000, 0.3)  # above the Kmin range: refused, not clamped
    # Kmax is Kmin + [0, 2 MB]: a Kmax below Kmin is outside it
    with pytest.raises(InvalidAction, match=r"^kmax_bytes - kmin_bytes -40000 \(unit 'all'\) outside the continuous "
                                            r"action range \[0, 2e\+06\]$"):
        mapper.encode(50_000, 10_000, 0.3)
    env.close()
    discrete = EcnTuningEnv(episode_steps=3)
    m = discrete.scenario.actions
    assert m.encode(20_000, 40_000, 0.05) == m.templates.index((20_000, 40_000, 0.05))
    with pytest.raises(InvalidAction, match="templates"):
        m.encode(12_500, 500_000, 0.01)
    discrete.close()


def test_encode_takes_one_finite_number_or_one_per_unit_and_names_the_argument():
    # '20KB' and a wrong count were NumPy ValueErrors, True was taken as 1 (pmax 100 %), None as NaN
    leaf_spine = {"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 5}
    env = EcnTuningEnv(episode_steps=3, topology=leaf_spine, action={"type": "continuous", "scope": "layer"})
    env.reset(seed=0)
    view = EnvView(env)
    assert view.units == ["leaf", "spine"]
    expected = r"expected a finite number \(for every unit\) or 2 of them \(one per unit\)"
    for args, match in [(("20KB", 40_000, 0.05), rf"^kmin_bytes: {expected}, got '20KB'$"),
                        (([20_000] * 3, 40_000, 0.05), rf"^kmin_bytes: {expected}, got shape \(3,\)$"),
                        ((20_000, 40_000, True), rf"^pmax: {expected}, got True$"),
                        ((20_000, 40_000, None), rf"^pmax: {expected}, got None$"),
                        ((20_000, [40_000, True], 0.05), r"^kmax_bytes\[1\]: got True, expected a finite number$"),
                        ((20_000, 40_000, [float("nan")] * 2), r"^pmax\[0\]: got nan \(and 1 more\), expected a "),
                        ((np.array([20_000, 20_000]), 40_000, 0.05), None)]:
        if match is None:
            env.step(view.encode(*args))
            continue
        with pytest.raises(InvalidAction, match=match):
            view.encode(*args)
    env.close()
    env = EcnTuningEnv(episode_steps=3, topology=leaf_spine, aqm="ecn_sharp",
                       action={"type": "continuous", "scope": "layer"})
    mapper = env.scenario.actions
    good = {p: mapper.base[p] for p in mapper.params}
    first = mapper.params[0]
    for bad, got in [("x", "'x'"), (True, "True"), ([1, 2, 3], r"shape \(3,\)")]:
        with pytest.raises(InvalidAction, match=rf"^{first}: {expected}, got {got}$"):
            mapper.encode(**{**good, first: bad})
    env.close()


class _FailsInSecondEpisode(StaticEcnController):
    """Static DCQCN that breaks in the middle of its second episode (a controller bug)."""

    def reset(self, env):
        super().reset(env)
        self.episode = getattr(self, "episode", -1) + 1
        self.steps = 0

    def act(self, observation, info):
        self.steps += 1
        self.log.append({"step": self.steps})
        if self.episode == 1 and self.steps == 3:
            raise RuntimeError("controller bug")
        return super().act(observation, info)


def test_a_controller_failing_mid_episode_keeps_finished_episodes_on_disk(tmp_path, monkeypatch, capsys):
    helpers = types.ModuleType("ecngym_test_controllers")
    helpers.FailsInSecondEpisode = _FailsInSecondEpisode
    monkeypatch.setitem(sys.modules, "ecngym_test_controllers", helpers)
    target = "controller._target_=ecngym_test_controllers.FailsInSecondEpisode"
    argv = ["eval", "controller=static_dcqcn", target, "episodes=3", "env.kwargs.episode_steps=5",
            f"hydra.run.dir={tmp_path}"]
    assert cli.main(argv) == 1  # Hydra reports the failed job
    assert "controller bug" in capsys.readouterr().err
    done = pd.read_csv(tmp_path / "eval.csv")
    assert list(done["episode"]) == [0] and done["flows_total"].iloc[0] > 0
    log = pd.read_csv(tmp_path / "controller_log.csv")
    assert set(log["episode"]) == {0, 1}  # the failed episode's records too, up to the failure


def test_eval_saves_the_controller_log_beside_the_results(tmp_path):
    assert cli.main(["eval", "controller=static_ecn_star", "episodes=2", "env.kwargs.episode_steps=4",
                     f"hydra.run.dir={tmp_path}"]) == 0
    log = pd.read_csv(tmp_path / "controller_log.csv")
    assert list(log["episode"]) == [0, 1] and (log["kmin_bytes"] == log["kmax_bytes"]).all()
    assert json.loads((tmp_path / "eval.json").read_text())["episodes"][0]["controller"] == "static_ecn_star"
