"""The command line end to end: run, train -> eval, multirun, bench commands' JSON lines."""

import json
import re

import pytest

from ecngym import cli


def test_train_writes_a_model_that_eval_loads(tmp_path):
    train_dir, eval_dir = tmp_path / "train", tmp_path / "eval"
    assert cli.main(["train", "algorithm=ppo", "total_timesteps=64", "progress_bar=false",
                     "+hyperparams.n_steps=32", "+hyperparams.batch_size=32",
                     "env.kwargs.episode_steps=16", f"results.dir={tmp_path / 'store'}",
                     f"hydra.run.dir={train_dir}"]) == 0
    model = train_dir / "model.zip"
    assert model.exists()
    # its row sums the curve up as an agent's does: 64 steps / 16 per episode = 4 points
    from ecngym.results import ResultStore

    store = ResultStore(tmp_path / "store")
    (run,) = store.episodes().itertuples()
    curve = store.frame(run.curve_path)
    assert (run.controller, run.timesteps, run.curve_points) == ("sb3_ppo", 64, 4) and len(curve) == 4
    assert run.reward_last10_mean == pytest.approx(curve["episode_return"].mean())
    assert cli.main(["eval", "controller=sb3", f"controller.path={model}", "controller.algorithm=ppo",
                     "env.kwargs.episode_steps=16", f"hydra.run.dir={eval_dir}"]) == 0
    result = json.loads((eval_dir / "eval.json").read_text())
    assert result["episodes"][0]["controller"] == "sb3_ppo"
    assert result["episodes"][0]["flows_total"] > 0
    # inference accounting: one decision and one actor evaluation per step (SB3's default 64 x 64 MLP)
    import gymnasium as gym

    env = gym.make("ecngym/RoceIncast-v0")
    obs_dim, actions = env.observation_space.shape[0], env.action_space.n
    env.close()
    episode = result["episodes"][0]
    assert episode["decisions"] == episode["forward_passes"] == 16
    assert episode["flops"] == 16 * 2 * (obs_dim * 64 + 64 * 64 + 64 * actions)
    # each run records what it ran: resolved config, trace hash, version, seed
    trained = json.loads((train_dir / "train.json").read_text())
    assert trained["seed"] == 1 and trained["version"] and trained["env_config"]["episode_steps"] == 16
    assert result["version"] and result["env_config"]["topology"]["kind"] == "incast_star"
    assert len(result["episodes"][0]["trace_hash"]) >= 12 and result["episodes"][0]["seed"] == 1
    assert (eval_dir / ".hydra" / "config.yaml").exists()


def test_dqn_whose_warm_up_outlasts_the_run_is_refused(tmp_path, capsys):
    # SB3's default learning_starts is 100: 40 steps took no gradient step and saved the initial weights
    assert cli.main(["train", "algorithm=dqn", "total_timesteps=40", "progress_bar=false",
                     "env.kwargs.episode_steps=10", f"hydra.run.dir={tmp_path}"]) == 2
    assert "hyperparams.learning_starts: got 100, allowed range is [0, 39]" in capsys.readouterr().err
    assert not (tmp_path / "model.zip").exists()


def test_dqn_trains_with_checkpoints_and_a_learning_curve(tmp_path):
    assert cli.main(["train", "algorithm=dqn", "total_timesteps=40", "progress_bar=false", "checkpoint_every=20",
                     "+hyperparams.learning_starts=10", "env.kwargs.episode_steps=10",
                     f"hydra.run.dir={tmp_path}"]) == 0
    assert (tmp_path / "model.zip").exists()
    assert sorted(p.name for p in (tmp_path / "checkpoints").glob("*.zip")) == ["model_20_steps.zip",
                                                                                  "model_40_steps.zip"]
    import pandas as pd

    (monitor,) = (tmp_path / "monitor").glob("*.monitor.csv")
    curve = pd.read_csv(monitor, skiprows=1)  # Monitor's first line is a JSON header
    assert list(curve["l"]) == [10, 10, 10, 10]  # four finished 10-step episodes, one row each


def test_train_rejects_bad_counts_and_hyperparameters(tmp_path, capsys):
    for i, (override, field) in enumerate([("total_timesteps=0", "total_timesteps"), ("n_envs=0", "n_envs"),
                                           ("checkpoint_every=-1", "checkpoint_every"),
                                           ("+hyperparams.n_stepz=8", "hyperparams.n_stepz"),
                                           ("+hyperparams.n_steps=-8", "hyperparams.n_steps: got -8"),
                                           # trained on, as SB3 checks no discount (nor most values)
                                           ("+hyperparams.gamma=2", "hyperparams.gamma: got 2, allowed range")]):
        assert cli.main(["train", override, "progress_bar=false", f"hydra.run.dir={tmp_path}/{i}"]) == 2, override
        assert f"error: {field}" in capsys.readouterr().err
        assert not (tmp_path / str(i) / "model.zip").exists()


@pytest.mark.parametrize(("overrides", "message"), [
    # each was ignored: a fresh PPO on the CPU, or the agent's own algorithm and hyperparameters
    (["resume=/some/model.zip"], "resume: got '/some/model.zip', but it applies to a learning agent's training"),
    (["device=cuda"], "device: got 'cuda', but it applies to a learning agent's training"),
    (["framework=rllib"], "framework: got 'rllib', but it applies to a learning agent's training"),
    (["ray.address=auto"], "ray.address: got 'auto', but it applies to a learning agent's training"),
    (["agent=acc", "+hyperparams.learning_rate=0.1"],
     "hyperparams: got {'learning_rate': 0.1}, but it applies to the generic SB3 training (without agent=...); "
     "agent=acc trains its own algorithm; set the agent's as agent.hyperparams.<key>"),
    (["agent=laecn", "algorithm=dqn"], "algorithm: got 'dqn', but it applies to the generic SB3 training"),
    (["agent=acc", "n_envs=2"], "n_envs: got 2, but it applies to the generic SB3 training"),
    (["agent=acc", "ray.address=auto"], "ray.address: got 'auto', but only framework=rllib uses Ray"),
])
def test_train_refuses_a_field_its_mode_does_not_read(tmp_path, capsys, overrides, message):
    assert cli.main(["train", *overrides, "total_timesteps=4", "progress_bar=false",
                     f"hydra.run.dir={tmp_path}"]) == 2
    assert f"ecngym train: error: {message}" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.zip")) and not (tmp_path / "agent.json").exists()


def test_eval_multirun_over_static_controllers(tmp_path):
    assert cli.main(["eval", "-m", "controller=static_default,static_dcqcn,static_dctcp",
                     "env.kwargs.episode_steps=10", f"hydra.sweep.dir={tmp_path}"]) == 0
    runs = sorted(tmp_path.glob("*/eval.json"))
    names = {json.loads(r.read_text())["episodes"][0]["controller"] for r in runs}
    assert names == {"static_default", "static_dcqcn", "static_dctcp"}


def test_eval_rejects_a_missing_model(tmp_path, capsys):
    assert cli.main(["eval", "controller=sb3", f"controller.path={tmp_path}/nope.zip",
                     f"hydra.run.dir={tmp_path}"]) != 0
    assert "controller.path" in capsys.readouterr().err


def test_unknown_command(capsys):
    assert cli.main(["fly"]) == 2
    assert "unknown command" in capsys.readouterr().err
    assert cli.main(["bench"]) == 2  # a command group without its subcommand names the choices
    assert "needs one of: fabric, fabric-ab, env" in capsys.readouterr().err
    assert cli.main(["trace", "--help"]) == 0  # asked for: the group's commands, on stdout
    assert capsys.readouterr().out.startswith("usage: ecngym trace {generate,inspect} [args]")


def test_help_lists_every_command_and_version(capsys):
    from ecngym import __version__

    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for words in cli._COMMANDS:
        assert " ".join(words) in out
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"ecngym {__version__}"


def test_eval_static_setting_keeps_the_env_action_scope(tmp_path):
    # the leaf-spine env acts per layer; adding the DCQCN setting as a template must keep that
    assert cli.main(["eval", "env=roce_leaf_spine", "controller=static_dcqcn", "env.kwargs.episode_steps=5",
                     f"hydra.run.dir={tmp_path}"]) == 0
    result = json.loads((tmp_path / "eval.json").read_text())
    assert result["episodes"][0]["controller"] == "static_dcqcn"


def test_static_setting_added_as_template_keeps_scope():
    from omegaconf import OmegaConf

    from ecngym.baselines import StaticEcnController
    from ecngym.commands.factories import env_for

    cfg = OmegaConf.create({"env": {"id": "ecngym/RoceLeafSpine-v0", "kwargs": {"episode_steps": 5}}})
    env = env_for(StaticEcnController("dcqcn"), cfg)
    try:
        assert env.unwrapped.config.action.scope == "layer"
        assert env.action_space.shape == (2,)  # leaf and spine
        assert (12_500, 500_000, 0.01) in env.unwrapped.scenario.actions.templates  # (Kmin, Kmax, Pmax) each
    finally:
        env.close()


def test_fabric_topology_and_workload_groups_compose_into_the_env(tmp_path):
    assert cli.main(["eval", "fabric=dctcp", "topology=dumbbell", "workload=pred_workload1",
                     "controller=static_dctcp", "env.kwargs.episode_steps=5",
                     "+env.kwargs.workload.incast.degree=2", f"hydra.run.dir={tmp_path}"]) == 0
    cfg = json.loads((tmp_path / "eval.json").read_text())["config"]
    assert cfg["fabric"]["preset"] == "dctcp" and cfg["topology"]["kind"] == "dumbbell"
    assert cfg["workload"]["name"] == "pred_workload1"


def test_train_experiment_preset_with_two_worker_processes(tmp_path):
    # experiment=incast_ppo: PPO with n_envs=2 (SubprocVecEnv, one fabric per process)
    assert cli.main(["train", "experiment=incast_ppo", "total_timesteps=64", "hyperparams.n_steps=32",
                     "hyperparams.batch_size=32", "env.kwargs.episode_steps=10", "progress_bar=false",
                     f"hydra.run.dir={tmp_path}"]) == 0
    record = json.loads((tmp_path / "train.json").read_text())
    assert record["config"]["n_envs"] == 2 and (tmp_path / "model.zip").exists()


def test_an_env_key_a_controller_replaces_is_named_not_dropped_silently(tmp_path, capsys):
    # `ecngym eval controller=bytetuning +env.kwargs.action.scope=layer` ran per port without a word
    def run(scope: str) -> str:
        assert cli.main(["eval", "controller=bytetuning", "env.kwargs.episode_steps=2", "env.kwargs.interval=10us",
                         f"+env.kwargs.action.scope={scope}", f"results.dir={tmp_path}/{scope}",
                         f"hydra.run.dir={tmp_path}/{scope}/run"]) == 0
        return " ".join(capsys.readouterr().out.split())

    assert ("note: bytetuning sets env.action itself: env.kwargs.action.scope='layer' does not apply to it (it "
            "runs with 'port')") in run("layer")
    assert "note:" not in run("port")  # the value it sets itself


@pytest.mark.parametrize(("controller", "builds"), [("static_default", 1), ("bytetuning", 2)])
def test_eval_builds_its_env_once_and_records_the_env_it_ran(tmp_path, monkeypatch, controller, builds):
    # eval built one more env after the run only to record its config in eval.json (a large fabric's
    # size warning came twice or three times); that config lacked the controller's env_overrides.
    # A controller with env_overrides needs the scenario to compute them: one build for that.
    from ecngym.envs.scenario import EcnScenario

    built = []
    init = EcnScenario.__init__

    def counted(self, cfg):
        built.append(cfg)
        init(self, cfg)

    monkeypatch.setattr(EcnScenario, "__init__", counted)
    assert cli.main(["eval", f"controller={controller}", "env.kwargs.episode_steps=2", "env.kwargs.interval=10us",
                     f"results.dir={tmp_path}/store", f"hydra.run.dir={tmp_path}/run"]) == 0
    assert len(built) == builds
    recorded = json.loads((tmp_path / "run" / "eval.json").read_text())["env_config"]
    assert recorded == built[-1].as_dict()  # the env the episode ran on (bytetuning's: a continuous action)


def test_a_command_composes_its_config_once_for_its_checks(tmp_path, monkeypatch, capsys):
    # check_output_folder composed the config again for its folder (~60 ms of every command)
    import hydra

    composed = []
    compose = hydra.compose
    monkeypatch.setattr(hydra, "compose", lambda *args, **kwargs: composed.append(args) or compose(*args, **kwargs))
    assert cli.main(["eval", "episodes=0", f"hydra.run.dir={tmp_path}/run"]) == 2  # (refused by eval itself)
    assert "episodes: got 0" in capsys.readouterr().err and len(composed) == 1
    (tmp_path / "file").write_text("")
    assert cli.main(["eval", f"hydra.run.dir={tmp_path}/file/out"]) == 2  # the folder still checked, from that config
    assert "hydra.run.dir: got '" in capsys.readouterr().err and len(composed) == 2


def test_bad_config_fails_with_the_field_named(tmp_path, capsys):
    assert cli.main(["eval", "env.kwargs.reward.name=joy", f"hydra.run.dir={tmp_path}/a"]) == 2
    assert "env.reward.name" in capsys.readouterr().err
    assert cli.main(["train", "algorithm=a2c", "progress_bar=false", f"hydra.run.dir={tmp_path}/b"]) == 2
    assert "algorithm" in capsys.readouterr().err
    assert cli.main(["eval", "+env.kwargs.action.scope=rack", f"hydra.run.dir={tmp_path}/c"]) == 2
    assert "env.action.scope" in capsys.readouterr().err
    assert cli.main(["eval", "episodes=0", f"hydra.run.dir={tmp_path}/e"]) == 2
    assert "episodes" in capsys.readouterr().err and not (tmp_path / "e" / "eval.json").exists()
    assert cli.main(["eval", "seed=-1", f"hydra.run.dir={tmp_path}/f"]) == 2
    assert "seed" in capsys.readouterr().err
    assert cli.main(["train", "algorithm=dqn", "env=roce_leaf_spine", "progress_bar=false",
                     f"hydra.run.dir={tmp_path}/d"]) == 2  # one action per layer: MultiDiscrete
    assert "dqn needs a Discrete action space" in capsys.readouterr().err


def test_every_experiment_preset_composes_into_an_env_and_an_algorithm():
    from pathlib import Path

    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    import ecngym
    from ecngym.agents import algorithm_class
    from ecngym.commands.factories import make_env

    configs = Path(ecngym.__file__).parent / "configs"
    names = sorted(p.stem for p in (configs / "experiment").glob("*.yaml"))
    assert {"incast_dqn", "incast_ppo", "leaf_spine_ppo", "incast_ppo_continuous"} <= set(names)
    with initialize_config_dir(config_dir=str(configs), version_base="1.3"):
        for name in names:
            cfg = compose("train", overrides=[f"experiment={name}"])
            env = make_env(cfg)
            try:
                if name.endswith("continuous"):
                    assert env.action_space.shape == (1, 3)
                hyper = OmegaConf.to_container(cfg.hyperparams, resolve=True)
                algorithm_class(cfg.algorithm)("MlpPolicy", env, device="cpu", **hyper)  # hyperparameters fit
            finally:
                env.close()


def _small_trace(tmp_path):
    from ecngym.workloads import generate_trace

    path = tmp_path / "small.parquet"
    generate_trace("websearch", load=0.3, hosts=4, duration="1ms", seed=2,
                   incast={"degree": 3, "size": "32KB", "interval": "100us", "arrival": "periodic"}).save(path)
    return path


_TWO_SETTINGS = ["~ecn_settings", "+ecn_settings.low={kmin_bytes:5KB,kmax_bytes:200KB,pmax:0.01}",
                 "+ecn_settings.step={kmin_bytes:100KB,kmax_bytes:100KB,pmax:1.0}"]


def test_compare_compares_settings_on_one_trace_and_writes_every_result(tmp_path):
    import pandas as pd

    out = tmp_path / "run"
    assert cli.main(["compare", f"trace={_small_trace(tmp_path)}", "topology.hosts=4", *_TWO_SETTINGS,
                     f"hydra.run.dir={out}"]) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary["setting"]) == ["low", "step"]
    assert (summary["flows_done"] == summary["flows"]).all() and (summary["flows"] > 0).all()
    for name in ("low", "step"):
        records = pd.read_parquet(out / f"flows_{name}.parquet")
        assert len(records) == summary["flows"][0] and records["finished"].all()
    # identical traffic: the two settings moved exactly the same data
    assert summary["data_packet_hops"].nunique() == 1
    assert json.loads((out / "run.json").read_text())["config"]["topology"]["hosts"] == 4


def test_compare_rejects_a_bad_ecn_setting_before_simulating(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(["compare", "ecn_settings.step_100KB.pmax=1.5", f"hydra.run.dir={out}"]) == 2
    assert "ecn_settings.step_100KB.pmax" in capsys.readouterr().err
    assert not (out / "summary.csv").exists()
    assert cli.main(["compare", f"trace={tmp_path}/missing.parquet", f"hydra.run.dir={out}"]) == 2
    assert "trace: no file at" in capsys.readouterr().err
    from ecngym.workloads import generate_trace

    empty = generate_trace("websearch", load=0.3, hosts=4, duration="200us", seed=2)  # draws no flow
    assert empty.flows.empty
    empty.save(tmp_path / "empty.parquet")
    assert cli.main(["compare", f"trace={tmp_path}/empty.parquet", "topology.hosts=4", f"hydra.run.dir={out}"]) == 2
    assert "has no flows" in capsys.readouterr().err


def test_compare_keeps_finished_results_when_a_later_simulation_fails(tmp_path, monkeypatch):
    import pandas as pd

    from ecngym.commands import compare

    real_run, calls = compare.Fabric.run, []

    def failing_second_run(self, *args, **kwargs):  # fault injection: the real simulation runs first
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("injected failure in the second simulation")
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(compare.Fabric, "run", failing_second_run)
    out = tmp_path / "run"
    assert cli.main(["compare", f"trace={_small_trace(tmp_path)}", "topology.hosts=4", *_TWO_SETTINGS,
                     f"hydra.run.dir={out}"]) != 0
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary["setting"]) == ["low"] and summary["flows_done"][0] == summary["flows"][0]
    assert (out / "flows_low.parquet").exists() and not (out / "flows_step.parquet").exists()


def test_train_agent_laecn_then_eval_on_held_out_traces_only(tmp_path, capsys):
    train_dir = tmp_path / "train"
    tiny = ["env.kwargs.episode_steps=6", "progress_bar=false"]
    assert cli.main(["train", "agent=laecn", "total_timesteps=14", "agent.learning_starts=16", "checkpoint_every=7",
                     *tiny, f"results.dir={tmp_path / 'store'}", "logger=tensorboard",
                     f"hydra.run.dir={train_dir}"]) == 0
    meta = json.loads((train_dir / "agent.json").read_text())
    assert meta["agent"] == "laecn" and meta["env"]["interval_short"] == "5rtt"
    # the training run is a row of the results store, with its learning curve, and logged
    from ecngym.results import ResultStore

    store = ResultStore(tmp_path / "store")
    (run,) = store.episodes().itertuples()
    assert (run.command, run.controller, run.timesteps) == ("train", "laecn", 14)
    curve = store.frame(run.curve_path)
    assert list(curve["timesteps"]) == list(curve["env_steps"]) and curve["mean_reward"].notna().all()
    assert run.curve_points == len(curve)
    assert run.reward_last10_mean == pytest.approx(curve["mean_reward"].tail(10).mean())
    assert list((train_dir / "tensorboard").glob("train-laecn-seed1/events.out.tfevents.*"))
    assert (train_dir / "laecn.pt").is_file() and (train_dir / "checkpoints" / "laecn_14_steps.pt").is_file()
    # resume from a checkpoint continues the step count
    assert cli.main(["train", "agent=laecn", "total_timesteps=21", "agent.learning_starts=16", *tiny,
                     f"resume={train_dir / 'checkpoints' / 'laecn_7_steps.pt'}",
                     f"hydra.run.dir={tmp_path / 'resumed'}"]) == 0
    assert json.loads((tmp_path / "resumed" / "agent.json").read_text())["timesteps"] == 21
    # total_timesteps counts the checkpoint's steps: one it has reached is refused (it trained nothing)
    assert cli.main(["train", "agent=laecn", "total_timesteps=7", "agent.learning_starts=16", *tiny,
                     f"resume={train_dir / 'checkpoints' / 'laecn_7_steps.pt'}",
                     f"hydra.run.dir={tmp_path / 'reached'}"]) == 2
    err = capsys.readouterr().err
    assert "total_timesteps: got 7, but the resumed checkpoint has trained 7 env steps already" in err
    assert not (tmp_path / "reached" / "laecn.pt").exists()
    # the final weights are no checkpoint (they were resumed as 0 steps, no traces), nor is laecn's one of haecn's
    for i, (agent, resume) in enumerate([("laecn", train_dir / "laecn.pt"),
                                         ("haecn", train_dir / "checkpoints" / "laecn_7_steps.pt")]):
        assert cli.main(["train", f"agent={agent}", "total_timesteps=21", "agent.learning_starts=16", *tiny,
                         f"resume={resume}", f"hydra.run.dir={tmp_path / f'wrong{i}'}"]) == 2
    err = capsys.readouterr().err
    assert "laecn.pt' holds a run's final weights, not a checkpoint" in err
    assert "laecn_7_steps.pt' is a checkpoint of laecn, this run trains haecn: resume it with agent=laecn" in err
    # an edited agent.json's env was named as the command line's env.interval
    import shutil

    edited = shutil.copytree(train_dir, tmp_path / "edited")
    meta = json.loads((edited / "agent.json").read_text())
    (edited / "agent.json").write_text(json.dumps({**meta, "env": {**meta["env"], "interval": "abc"}}))
    assert cli.main(["eval", "controller=laecn", f"controller.path={edited}", "seed=1000", *tiny[:1],
                     f"hydra.run.dir={tmp_path / 'edited_eval'}"]) == 2
    assert re.search(r"error: controller.path: .*/edited/agent.json's env gives a bad env.interval: ",
                     capsys.readouterr().err)
    # the training seed's first trace is refused; a held-out seed plays, with inference accounting
    assert cli.main(["eval", "controller=laecn", f"controller.path={train_dir}", "seed=1", *tiny[:1],
                     f"hydra.run.dir={tmp_path / 'refused'}"]) == 2
    assert cli.main(["eval", "controller=laecn", f"controller.path={train_dir}", "seed=1000", *tiny[:1],
                     f"hydra.run.dir={tmp_path / 'eval'}"]) == 0
    row = json.loads((tmp_path / "eval" / "eval.json").read_text())["episodes"][0]
    assert row["held_out"] is True and row["controller"] == "laecn"
    assert row["decisions"] >= 6 * 16 and row["forward_passes"] >= row["decisions"]  # 16 port agents
    assert row["decisions_per_sim_s"] > 0 and row["act_wall_s_per_sim_s"] > 0


def test_train_agent_refuses_rllib_for_laecn_and_an_unknown_framework(tmp_path, capsys):
    assert cli.main(["train", "agent=laecn", "framework=rllib", f"hydra.run.dir={tmp_path}"]) == 2
    assert "framework" in capsys.readouterr().err
    assert cli.main(["train", "agent=acc", "framework=tf", f"hydra.run.dir={tmp_path}"]) == 2
