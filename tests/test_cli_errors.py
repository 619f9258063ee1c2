"""Every CLI error exits 2 with one line naming the field; unknown group options list the available ones.

Regression tests for issue 7's CLI cases: a misspelt config group ran the default scenario with
exit 0; ``controller=sb3`` without a path, an unknown bench env and a SIGFPE link rate gave
tracebacks or crashes. Each runs ``ecngym`` in a subprocess, as a user would.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def ecngym(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ecngym", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


@pytest.mark.parametrize("args,message", [
    (["eval", "fabric=dctpc"],
     "fabric: no option 'dctpc' in group 'fabric'; available options: dcqcn_paper, dctcp, dctcp_linux, hpcc"),
    (["eval", "topology=leaf_spin"], "topology: no option 'leaf_spin' in group 'topology'; available options: "
                                     "dumbbell, fat_tree, incast_star, leaf_spine"),
    (["eval", "workload=websarch"], "workload: no option 'websarch' in group 'workload'; available options:"),
    (["train", "experiment=nope"], "experiment: no option 'nope' in group 'experiment'; available options: incast_dqn"),
    (["eval", "-m", "controller=static_default,nope"], "controller: no option 'nope' in group 'controller'"),
    (["run", "suite=null", "fabric=nope"], "fabric: no option 'nope'"),
    (["eval", "controller=sb3"], "ecngym eval: error: controller.path: "),
    (["eval", "episodes=0"], "episodes: got 0, allowed range is [1, 100000]"),
    (["eval", "episodes=1e9"], "episodes: got 1000000000.0, allowed range is [1, 100000]"),  # was an OOM kill
    # the results store's seed column is a BIGINT (a larger seed made every later ingest fail)
    (["eval", "seed=9223372036854775808"], "seed: got 9223372036854775808, allowed range is [0, 9223372036854775807]"),
    (["eval", "seed=9223372036854775807", "episodes=2"], "episodes: got 2, allowed range is [1, 1]"),
    (["run", "suite=null", "seeds=[1,9223372036854775808]"], "seeds[1]: got 9223372036854775808, allowed range is"),
    (["run", "suite=null", "seeds=5"], "seeds: got 5; give a list, e.g. seeds=[1,2,3]"),  # was a TypeError traceback
    (["run", "suite=null",
      "seeds=[1,2,1]"], "seeds: 1 given more than once; give each once"),  # was the same episode twice
    (["run", "suite=null",
      "controllers=[]"], "controllers: got an empty list; give at least one"),  # was exit 0, nothing run
    (["run", "suite=null", "controllers=[pred,static_dcqcn,pred]"], "controllers: pred given more than once"),
    (["train", "agent=acc", "agent.hyperparams.policy_kwargs.net_arch=[64,-5]"],
     "agent.hyperparams.policy_kwargs.net_arch[1]: got -5"),  # was torch's negative-dimension traceback
    (["train", "agent=acc", "+agent.hyperparams.policy_kwargs.activation=tanh"],
     "agent.hyperparams.policy_kwargs.activation"),
    # the name is the agent's config file: agent.name=acc on laecn's was "agent.trigger_penalty: unknown field"
    (["train", "agent=laecn", "agent.name=acc"], "agent.name: got 'acc', allowed: 'laecn', 'haecn'"),
    (["train", "agent=laecn", "agent.name=haecn"], "agent.name: got 'haecn' for the agent 'laecn'; the name is not "
                                                   "an override: choose the agent with agent=haecn"),
    # a store / logger folder nothing can be written to failed at each controller's first row (run: every
    # controller simulated its first episode first), or after training
    (["eval", "results.dir=/proc/ecngym-store"], "results.dir: cannot write '/proc/ecngym-store': No such file or "
                                                 "directory (creating a file in '/proc')"),
    (["run", "suite=null", "results.dir=/proc/ecngym-store"], "results.dir: cannot write '/proc/ecngym-store'"),
    (["train", "logger=tensorboard", "logger.dir=/proc/ecngym-logs"], "logger.dir: cannot write '/proc/ecngym-logs'"),
    # Hydra's output folder: Hydra makes it before the command runs (a raw FileNotFoundError traceback)
    (["eval", "hydra.run.dir=/proc/ecngym-out"], "ecngym eval: error: hydra.run.dir: cannot write '/proc/ecngym-out': "
                                                 "No such file or directory (creating a file in '/proc')"),
    (["eval", "-m", "seed=1,2", "hydra.sweep.dir=/proc/ecngym-out"], "ecngym eval: error: hydra.sweep.dir: cannot "
                                                                     "write '/proc/ecngym-out'"),
    (["trace", "generate", "hydra.run.dir=/proc/ecngym-out"], "ecngym trace generate: error: hydra.run.dir: cannot "
                                                              "write '/proc/ecngym-out'"),
    (["serve-ns3gym", "hydra.run.dir=/proc/ecngym-out"], "ecngym serve-ns3gym: error: hydra.run.dir: cannot write "
                                                         "'/proc/ecngym-out'"),
    # a group given no option name was Hydra's ValueError traceback (exit 1); a list ran only its last option;
    # a misspelt option of an optional group (sweep) was ignored
    (["eval", "env=null"], "ecngym eval: error: env: got null, expected the name of an option of the group"),
    (["train", "agent=5"], "ecngym train: error: agent: got 5, expected the name of an option of the group (leave "
                           "it out for the command's default); options: acc, haecn, laecn"),
    (["eval", "controller=[static_dcqcn,static_hpcc]"], "controller: got the list ['static_dcqcn', 'static_hpcc']: "
                                                        "one option per run (several: -m controller=static_dcqcn,"
                                                        "static_hpcc, a sweep)"),
    (["eval", "sweep=jobilb"], "sweep: no option 'jobilb' in group 'sweep'; available options: joblib, "
                               "optuna_static, ray. Did you mean 'joblib'?"),
    # its overrides were not composed first: Hydra's raw error with exit 1, and an added key ignored
    (["serve-ns3gym", "fabric=dctpc"], "ecngym serve-ns3gym: error: fabric: no option 'dctpc' in group 'fabric'"),
    (["serve-ns3gym", "+episdoes=2"], "ecngym serve-ns3gym: error: episdoes: unknown key: nothing reads it"),
    (["compare", "hydra.run.dir=/dev/null/out"],
     "ecngym compare: error: hydra.run.dir: got '/dev/null/out', which lies under the file '/dev/null'; expected the "
     "folder of the command's outputs"),
    (["train", "agent=acc", "device=tpu"], "device: got 'tpu', allowed: 'cpu', 'cuda' or 'cuda:<index>'"),
    # helper-17's fuzz: 'maybe' was true; hyperparams=5 a ValueError traceback; n_envs=100000 an OSError one
    # an objective was checked after every episode had run; false, 0 and '' were taken as none
    (["eval", "objective=slowdown_p99_al"], "ecngym eval: error: objective: got 'slowdown_p99_al', not a metric of "
                                            "these controllers' episodes; known: ["),
    (["eval", "objective=false"], "ecngym eval: error: objective: expected a string, got False"),
    # was Hydra's [ERROR] log line and a three-line message
    (["eval", "controller._target_=ecngym.nope.X"], "ecngym eval: error: controller._target_: cannot import "
                                                    "'ecngym.nope.X': Error loading 'ecngym.nope.X': "
                                                    "ModuleNotFoundError(\"No module named 'ecngym.nope'\")"),
    (["train", "agent=laecn", "resume=''"], "ecngym train: error: resume: got ''; give a checkpoint's path"),
    (["train", "progress_bar=maybe"], "ecngym train: error: progress_bar: expected true or false, got 'maybe'"),
    (["train", "hyperparams=5"], "ecngym train: error: hyperparams: got 5, expected a mapping of the SB3 algorithm's "
                                 "keyword arguments"),
    (["train", "n_envs=100000"], "ecngym train: error: n_envs: got 100000, allowed range is [1, 256]"),
    (["train", "seed=-1"], "seed: got -1, allowed range is [0, 9223372036854775807]"),
    # a quoted count is a string, refused as by every whole-number field (was taken as 3)
    (["train", "threads='3'"], "ecngym train: error: threads: expected a whole number of threads in [0, 4096] "
                               "(0 = library defaults), got '3'"),
    # a key the config lacks: its node's keys and the closest (Hydra's own hint was "+key=", read by nothing)
    (["eval", "nosuchkey=1"], "nosuchkey: unknown key: the config has ['controller', 'env', 'episodes', 'logger', "
                              "'objective', 'results', 'scenario', 'seed']."),
    (["eval", "seeds=[1,2]"], "seeds: unknown key: the config has ['controller', 'env', 'episodes', 'logger', "
                              "'objective', 'results', 'scenario', 'seed']. Did you mean 'seed'?"),
    (["run", "suite=null",
      "leaderboard.scroe=mean"], "leaderboard.scroe: unknown key: leaderboard has ['html', 'score']. "
                                        "Did you mean 'score'?"),
    (["eval", "-m", "controller=static_default,bytetuning", "controller.window_intervals=5"],
     "controller.window_intervals: unknown key: controller has ['_target_', 'name', 'setting']."),
    (["eval", "controller=bytetuning", "controller.window_intervals=5"],
     "Did you mean 'window_steps'? (+controller.window_intervals=... adds a key the config does not list"),
    # two unknown keys: the first is named (composing the rest for its node's keys failed too: it crashed)
    (["eval", "controller=bytetuning", "seeds=1", "controller.nosuch=2"], "seeds: unknown key: the config has "
                                                                          "['controller', 'env', 'episodes',"),
    (["compare", "topology.link_rate=0.5bps"], "topology.link_rate: got '0.5bps', allowed range is [1bps, 1e15bps]"),
    (["eval", "+env.kwargs.observation.flatten=no"], "env.observation.flatten: expected true or false, got 'no'"),
    (["bench", "env", "--env", "ecngym/Nope-v0"], "--env: unknown env id 'ecngym/Nope-v0'; registered: ecngym/"),
    # a '+' override adds a key; one that nothing reads was silently ignored (the run went on without it)
    (["eval", "+episdoes=2"], "episdoes: unknown key: nothing reads it ('+' adds a key to the config); the config "
                              "has ['controller', 'env', 'episodes', 'logger', 'objective', 'results', 'scenario', "
                              "'seed']. Did you mean 'episodes'?"),
    (["eval", "-m", "controller=static_default,pred", "+episdoes=2"], "episdoes: unknown key: nothing reads it"),
    (["eval", "+env.episode_steps=5"], "env.episode_steps: unknown key: nothing reads it; the env's settings go "
                                       "under env.kwargs (+env.kwargs.episode_steps=..."),
    (["eval", "env.episode_steps=5"], "env.episode_steps: the env has no key 'episode_steps'; its settings go under "
                                      "env.kwargs: env.kwargs.episode_steps=..."),
    (["run", "suite=null",
      "+leaderboard.bogus=1"], "leaderboard.bogus: unknown key: nothing reads it ('+' adds a key to the "
                                      "config); leaderboard has ['html', 'score']"),
    (["train", "agent=acc", "+ray.adress=auto"], "ray.adress: unknown key: nothing reads it ('+' adds a key to the "
                                                 "config); ray has ['address']. Did you mean 'address'?"),
    (["compare", "+limt=1ms"], "limt: unknown key: nothing reads it"),
    # compare's seed is the fabric's: 'abc' was int()'s ValueError traceback, 2.5 ran as 2, true as 1,
    # and a fabric.seed beside it was silently replaced
    (["compare", "seed=abc"], "ecngym compare: error: seed: expected a whole number, got 'abc'"),
    (["compare", "seed=2.5"], "ecngym compare: error: seed: expected a whole number, got 2.5"),
    (["compare", "seed=-1"], "ecngym compare: error: seed: got -1, allowed range is [0, 18446744073709551615]"),
    (["compare", "+fabric.seed=7"], "fabric.seed: got 7; compare's fabric seed is the top-level seed (now 1): "
                                    "give seed=7 instead"),
    # the env's workload is named as the user gave it (was "trace.load", the generator's own name)
    (["eval", "+env.kwargs.workload.load=1.5"], "env.workload.load: got 1.5, allowed range is (0.0, 1.0)"),
    (["eval", "+env.kwargs.workload.incast.degree=99"], "env.workload.incast.degree: got 99, allowed range is [0, 15]"),
    # an output path that is a directory, or a trace under another suffix, was an IsADirectoryError
    # traceback or a Parquet file named .csv
    (["trace", "generate", "output=/tmp"], "ecngym trace generate: error: output: got '/tmp', which is a directory"),
    (["trace", "generate", "output=''"], "output: got '', expected the path of a file to write"),
    # the trace's seed had no upper bound (seed=1e30 generated a trace); its range is the episode seed's
    (["trace", "generate", "seed=1e30"], "ecngym trace generate: error: trace.seed: got 1e+30, "
                                         "allowed range is [0, 18446744073709551615]"),
    (["trace", "generate", "output=t1.csv"], "output: got 't1.csv', expected a file name ending in '.parquet'"),
    (["leaderboard", "--store", "S", "--html", "/tmp"],
     "ecngym leaderboard: error: --html: got '/tmp', which is a directory"),
    (["run", "suite=null",
      "leaderboard.html=/tmp"], "ecngym run: error: leaderboard.html: got '/tmp', which is a directory"),
    # unknown / scenario-set workload keys were TypeErrors from generate_trace; without a group, a KeyError
    (["eval", "+env.kwargs.workload.lod=0.5"], "env.workload.lod: unknown key; allowed keys: workload, load,"),
    (["eval", "+env.kwargs.workload.hosts=4"], "env.workload.hosts: is set by the scenario"),
    (["eval", "+fabric.seed=7"], "env.fabric.seed: got 7; each episode's fabric is seeded from the episode's seed"),
    (["eval", "workload=websearch", "+workload.bogus=4"], "env.workload.bogus: unknown key"),
    (["eval", "controller=bytetuning", "+controller.name=5"], "controller.name: expected a string, got 5"),
    (["eval", "+workload.lod=0.5"], "env.workload.lod: unknown key; allowed keys: workload, load, start, size, "
                                    "cdf_file, phases, incast, permutation, all_to_all, long_lived, priority, "
                                    "progress. Did you mean 'load'?"),
    # a mandatory value left at ??? went on as the path '???' ("hpcc_config (???): cannot read ..."), in
    # ecngym run once per controller
    (["eval", "fabric=hpcc_file"], "fabric.hpcc_config: required but not given (set fabric.hpcc_config=...)"),
    (["run", "suite=null", "fabric=hpcc_file"], "ecngym run: error: fabric.hpcc_config: required but not given"),
    (["trace", "generate", "workload=custom"], "workload.cdf_file: required but not given"),
    # compare's limit was read by the first run (limit=0 ran every setting to a table of NaN)
    (["compare", "limit=0"], "limit: got 0 ns, allowed range is [1, "),
    # named fabric.aqm.all.by_rate, and only when that setting's run built its fabric (after the others ran)
    (["compare", "+ecn_settings.x={by_rate:{10Gbps:{kmin_bytes:1KB,kmax_bytes:2KB,pmax:0.1}}}"],
     "ecngym compare: error: ecn_settings.x.by_rate: no entry for the 1e+11 bit/s links of the topology"),
    # fabric.ecn's spellings, folded into fabric.aqm: refused by name, saying the new one
    (["compare", "+ecn_settings.x={kmin:1KB}"], "ecngym compare: error: ecn_settings.x.kmin: renamed kmin_bytes"),
    (["eval", "+fabric.ecn.kmin=10KB"], "ecngym eval: error: env.fabric.ecn: removed: fabric.aqm sets every "
                                         "switch port's initial policy, RED's curve included; write fabric.aqm.all = "
                                         "{'policy': 'red', 'kmin_bytes': '10KB'}"),
    (["eval", "+fabric.aqm.all.kmin_bytes=300KB", "+fabric.aqm.all.kmax_bytes=200KB"],
     "fabric.aqm.all: kmax_bytes (200000) must be >= kmin_bytes (300000)"),
    (["compare", "topology=dumbbell"], "trace: HPCC reference WebSearch 50% (605 flows) does not fit the topology "
                                       "dumbbell(4x1) (5 hosts): flows.src: row 0 (and 428 more): 13 must be < 5"),
    (["trace", "inspect", "/"], "trace: got '/', which is a directory; expected a Parquet trace or an HPCC flow file"),
    # helper-17's fuzz: '' read as '.', a directory; --list ignored the paper
    (["trace", "inspect", ""], "ecngym trace inspect: error: trace: got '', expected the path of a Parquet trace"),
    (["reproduce", "--list", "pred"], "ecngym reproduce: error: --list: names the papers and runs none; got the "
                                      "paper 'pred' too"),
    # episode k plays seed + k: the last episode's seed was refused by reset after the agent connected
    (["serve-ns3gym", "seed=18446744073709551615", "episodes=2"],
     "ecngym serve-ns3gym: error: seed: got 18446744073709551615, allowed range is [0, 18446744073709551614]"),
    # issue 42: an unwritable out= was a raw NotADirectoryError / FileNotFoundError traceback after the suite loaded
    (["train", "suite=core-v1", "scenario=roce_storage_incast", "agent=acc", "seed=1", "out=/proc/ecngym-ckpt"],
     "ecngym train-suite: error: out: cannot write '/proc/ecngym-ckpt': No such file or directory (creating a "
     "file in '/proc')"),
    (["train", "suite=core-v1", "scenario=roce_storge_incast", "agent=acc", "seed=1"],
     "scenario: got 'roce_storge_incast'; suite core-v1 has: ['roce_storage_incast', 'roce_multilayer_incast', "
     "'dctcp_pred_regimes']. Did you mean 'roce_storage_incast'?"),
    # issue 42: a misspelt filter trained nothing and exited 0 ("0 training runs")
    (["benchmark", "train-learners", "agent=acx"], "ecngym benchmark train-learners: error: agent: got 'acx'; the "
                                                   "learners: ['acc', 'haecn', 'laecn', 'dqn', 'ppo']. Did you mean "
                                                   "'acc'?"),
    (["benchmark", "train-learners", "scenario=roce_storge_incast"],
     "ecngym benchmark train-learners: error: scenario: got 'roce_storge_incast'; the scenarios suite core trains "
     "on: ['dctcp_elephants_incasts', 'dctcp_elephants_incasts_600kb', 'roce_storage_incast_v2']. Did you mean "
     "'roce_storage_incast_v2'?"),
    (["benchmark", "train-learners", "seed=9"], "seed: got 9; suite core's training seeds: [1, 2, 3]"),
    (["benchmark", "train-learners", "dest=/proc/ecngym-ckpt"], "dest: cannot write '/proc/ecngym-ckpt'"),
    # issue 42: a fabric value that every setting overrides was never checked (exit 0)
    (["compare", "+fabric.aqm.all.pmax=7"], "ecngym compare: error: fabric.aqm.all.pmax: got 7, allowed range is "
                                            "[0.0, 1.0]"),
])
def test_cli_errors_exit_2_with_one_line_naming_the_field(args, message):
    proc = ecngym(*args)
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("usage:")]
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_debug_shows_the_traceback():
    for proc in (ecngym("eval", "fabric=dctpc", "--debug"),
                 ecngym("eval", "episodes=0", env={"HYDRA_FULL_ERROR": "1"})):
        assert proc.returncode == 2 and "Traceback" in proc.stderr
        assert proc.stderr.strip().splitlines()[-1].startswith("ecngym eval: error: ")


def test_a_valid_group_choice_still_runs(tmp_path):
    proc = ecngym("eval", "fabric=dctcp", "env.kwargs.episode_steps=4", f"hydra.run.dir={tmp_path}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "eval.json").exists() and (tmp_path / "eval.csv").exists()
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes leave no temporary files


def test_workload_keys_without_a_workload_group_set_the_scenarios_workload():
    from omegaconf import OmegaConf

    from ecngym.commands.factories import env_kwargs

    cfg = OmegaConf.create({"env": {"kwargs": {"episode_steps": 2}}, "workload": {"load": 0.5}})
    assert env_kwargs(cfg)["workload"] == {"load": 0.5}  # was a KeyError on the group's missing 'name'
    cfg = OmegaConf.create({"env": {"kwargs": {}}, "workload": {"name": "datamining", "load": 0.5}})
    assert env_kwargs(cfg)["workload"] == {"workload": "datamining", "load": 0.5}


def test_run_refuses_an_unknown_score_before_it_simulates_anything(tmp_path):
    store = tmp_path / "store"
    proc = ecngym("run", "suite=null", "controllers=[static_default]", "seeds=[1]", "env.kwargs.episode_steps=4",
                  "leaderboard.score=slowdown_p99", f"results.dir={store}", f"hydra.run.dir={tmp_path / 'run'}")
    assert proc.returncode == 2, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    # was refused only after every episode had run (the metric names came from the stored rows)
    assert last.startswith("ecngym run: error: leaderboard.score: got 'slowdown_p99', not a metric of these "
                           "controllers' episodes; known: ['act_wall_s', "), last
    assert "'slowdown_p99_<100KB'" in last and "'inference_us_mean'" in last and "'flops_per_sim_s'" in last
    assert not store.exists()  # nothing simulated, nothing stored


def test_run_checks_a_score_against_every_rows_metrics_and_the_controllers_declared_counts():
    from omegaconf import OmegaConf

    from ecngym.commands.checks import check_metric_name
    from ecngym.error import ConfigError
    from ecngym.results.record import episode_metric_names

    static = {"static_default": OmegaConf.create({"_target_": "ecngym.baselines.StaticEcnController"})}
    laecn = {**static, "laecn": OmegaConf.create({"_target_": "ecngym.agents.laecn.LaecnController", "path": "x"})}
    assert check_metric_name("leaderboard.score", "slowdown_p99_<100KB", static) == "slowdown_p99_<100KB"
    assert check_metric_name("leaderboard.score", "policy_forward_passes", laecn) == "policy_forward_passes"
    for score, controllers in (("policy_forward_passes", static), ("slowdown", laecn), (5, static)):
        with pytest.raises(ConfigError, match=r"^leaderboard\.score: "):
            check_metric_name("leaderboard.score", score, controllers)
    from ecngym.baselines import StaticEcnController
    from ecngym.envs import EcnTuningEnv
    from ecngym.results import measure_episode

    env = EcnTuningEnv(episode_steps=3)
    try:
        episode = measure_episode(env, StaticEcnController(), seed=1)
    finally:
        env.close()
    assert sorted(episode.metrics()) == episode_metric_names()  # what a row of any controller stores


def test_compare_names_a_bad_flow_table_as_such_not_as_a_topology_misfit(tmp_path):
    # a flow from a host to itself read "does not fit the topology incast_star(4)"
    trace = tmp_path / "same.txt"
    trace.write_text("1\n0 0 3 100 1000 0.000001\n")
    done = ecngym("compare", f"trace={trace}", "topology.hosts=4", f"hydra.run.dir={tmp_path / 'c'}")
    assert done.returncode == 2
    assert f"error: trace: {trace} is not a valid flow table: flows.dst: row 0: 0 equals src" in done.stderr


def test_trace_inspect_refuses_an_empty_link_rate(tmp_path):
    # it was taken as not given (the trace's own rate)
    trace = tmp_path / "flows.txt"
    trace.write_text("1\n0 1 3 100 1000 0.000001\n")
    assert ecngym("trace", "inspect", str(trace)).returncode == 0
    done = ecngym("trace", "inspect", str(trace), "--link-rate", "")
    assert done.returncode == 2 and "error: --link-rate: " in done.stderr, done.stderr


def test_key_value_arguments_type_by_the_model_and_name_the_bad_argument(capsys):
    from ecngym.benchmark.headroom import HeadroomArgs
    from ecngym.benchmark.references import ReferencesArgs
    from ecngym.cli import key_value_arguments
    from ecngym.error import ConfigError

    args = key_value_arguments(ReferencesArgs, ["scenario=a,b", "processes=3", "out="], "usage")
    assert (args.scenario, args.processes, args.out, args.test_seeds) == ("a,b", 3, None, None)
    assert key_value_arguments(HeadroomArgs, ["scenario=2"], "usage").scenario == "2"  # text stays text
    for argv, message in ((["processes"], r"^processes: expected key=value; usage: usage$"),
                          (["=3"], r"^=3: expected key=value"),
                          (["procs=3"], r"^procs: unknown argument; known: \['beam', 'extend_grid', 'oracle_window', "
                                        r"'out', 'per_role', 'phase_tuned', 'processes', "),
                          (["out=a", "out=b"], r"^out: given twice \(out='a' and 'out=b'\)"),
                          (["processes=0"], r"^processes: got 0, allowed range is \[1, 1024\]"),
                          (["processes=two"], r"^processes: expected a whole number, got 'two'"),
                          (["test_seeds=0"], r"^test_seeds: got 0, allowed range is \[1, ")):
        with pytest.raises(ConfigError, match=message):
            key_value_arguments(ReferencesArgs, argv, "usage")
    with pytest.raises(SystemExit):
        key_value_arguments(ReferencesArgs, ["--help"], "usage line", "the doc")
    assert capsys.readouterr().out == "usage: usage line\n\nthe doc\n"


@pytest.mark.parametrize("args,message", [
    (["benchmark", "headroom", "suite=full", "markdown=page.txt"], "markdown: got"),
    (["benchmark", "scenarios", "markdown=page.txt"], "markdown: got"),
    # the suite table's options: a store reads a suite's episodes, and it shows at least one controller
    (["benchmark", "headroom", "scenario=roce_storage_incast_v2", "store=somewhere"],
     "store: got 'somewhere' with scenario='roce_storage_incast_v2': the suite table reads a suite's episodes"),
    (["benchmark", "headroom", "suite=core", "store=somewhere", "controllers=,"],
     "controllers: got ','; name at least one controller"),
    (["benchmark", "headroom", "suite"], "suite: expected key=value"),
])
def test_the_benchmark_commands_name_a_bad_argument(args, message, tmp_path):
    result = ecngym(*[a.replace("page.txt", str(tmp_path / "page.txt")) for a in args])
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert not (tmp_path / "page.txt").exists()
