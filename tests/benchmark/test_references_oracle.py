"""The references: the phase oracle's switching, the search on a tiny scenario, the file round trip, errors."""

import copy
from pathlib import Path

import gymnasium as gym
import pytest
import yaml

import ecngym.envs  # noqa: F401
from ecngym.baselines.registry import build_controller
from ecngym.benchmark.headroom import mean_ci, scenario_headroom
from ecngym.benchmark.oracle import PhaseScheduleController, phase_metric
from ecngym.benchmark.references import (
    compute_references,
    read_references,
    reference_controllers,
    write_references,
)
from ecngym.benchmark.scoring import OPTIONAL_REFERENCES, REFERENCES
from ecngym.envs.rollout import run_episode
from ecngym.error import ConfigError

#: A tiny scenario: the 16-host RoCE star, 2 ms, a phase of heavy incast from 1 ms, two settings.
TINY = yaml.safe_load((Path(__file__).resolve().parent / "scenarios" / "tiny_phases.yaml").read_text())


def _env(steps=10):
    return gym.make("ecngym/RoceIncast-v0", episode_steps=steps).unwrapped


def test_the_oracle_switches_exactly_at_the_phase_boundaries():
    env = _env()
    interval = env.scenario.interval_ns
    a, b = [20_000, 40_000, 0.05], [80_000, 320_000, 0.2]
    ctl = PhaseScheduleController(starts=[0, 4 * interval, 7 * interval], settings=[a, b, a])
    run_episode(env, ctl, seed=3)
    assert [(row["step"], row["phase"], row["kmin_bytes"]) for row in ctl.log] == [
        (0, 0, 20_000), (1, 1, 80_000), (2, 2, 20_000)]
    assert [row["time_ns"] for row in ctl.log] == [0, 4 * interval, 7 * interval]
    env.close()


def test_the_oracle_keys_its_schedule_by_trace_and_refuses_another_trace():
    env = _env(3)
    h = env.reset(seed=5)[1]["trace_hash"]
    a, b = [20_000, 40_000, 0.05], [80_000, 320_000, 0.2]
    ctl = PhaseScheduleController(starts=[0, 10**9], per_trace={h: [b, a]})
    run_episode(env, ctl, seed=5)
    assert ctl.log[0]["kmin_bytes"] == 80_000
    with pytest.raises(ConfigError, match=r"^controller\.per_trace: no schedule for trace"):
        run_episode(env, ctl, seed=6)
    with pytest.raises(ConfigError, match=r"^controller\.starts"):
        PhaseScheduleController(starts=[5, 10], settings=[a, b])
    with pytest.raises(ConfigError, match=r"^controller\.settings"):
        PhaseScheduleController(starts=[0, 10], settings=[a])
    env.close()


def test_phase_metric_scores_the_flows_that_start_in_each_phase():
    import pandas as pd

    flows = pd.DataFrame({"start_ns": [0, 10, 20, 30], "finished": [True, True, True, False],
                          "size_bytes": [1000] * 4, "slowdown": [1.0, 3.0, 5.0, 9.0]})
    assert phase_metric(flows, [0, 15], "slowdown_avg_all") == [2.0, 5.0]
    with pytest.raises(ConfigError, match="protocol.score"):
        phase_metric(flows, [0], "utilization")


def test_references_search_round_trip_and_controllers(tmp_path):
    scen, refs = tmp_path / "scenarios", tmp_path / "references"
    scen.mkdir()
    (scen / "tiny_phases.yaml").write_text(yaml.safe_dump(TINY))
    doc = compute_references("tiny_phases", processes=1, scenario_dir=scen)
    # static_tuned is the grid's best on the train seeds
    scores = doc["search"]["train_scores"]
    assert doc["static_tuned"]["train_score"] == min(scores.values())
    # the oracle picks, per test seed and phase, the grid setting with the best phase score
    for seed, choice in doc["oracle_phase"]["per_test_seed"].items():
        for i, setting in enumerate(choice["settings"]):
            per_phase = {k: v[seed][i] for k, v in doc["search"]["test_phase_scores"].items()}
            assert f"{setting[0]}/{setting[1]}/{setting[2]:g}" == min(per_phase, key=per_phase.get)
    path = write_references(doc, refs)
    back = read_references("tiny_phases", refs, scen)
    assert back == yaml.safe_load(yaml.safe_dump(doc))
    ctls = reference_controllers("tiny_phases", refs, scen)
    # the one home of the reference names (one switch layer: static_tuned is the per-role setting, not played again;
    # two phases: phase_tuned is searched and played)
    assert set(ctls) == set(REFERENCES) - set(OPTIONAL_REFERENCES) | {"phase_tuned"}
    assert doc["phase_tuned"]["searched"] is True
    assert doc["static_tuned_per_role"]["searched"] is False
    assert ctls["static_tuned"]["setting"] == doc["static_tuned"]["setting"]
    for cfg in ctls.values():
        assert "_target_" in cfg
        build_controller(copy.deepcopy(cfg))
    # the oracle's config replays its recorded score on a test seed (same trace, same schedule)
    from ecngym.benchmark.oracle import run_controller

    seed = TINY["protocol"]["test_seeds"][0]
    summary, _, _ = run_controller(TINY["env"], build_controller(ctls["oracle_phase"]), seed)
    assert summary["slowdown_avg_all"] == doc["oracle_phase"]["test"]["score"][str(seed)]
    row = scenario_headroom("tiny_phases", refs, scen)
    assert row["S_tuned"] == pytest.approx(sum(doc["static_tuned"]["test"]["score"].values()) / 2)
    assert row["S_tuned_per_role"] == row["S_tuned"]
    assert path.read_text().startswith("# Written by the command below")


def test_reference_controllers_without_a_file_names_the_command(tmp_path):
    with pytest.raises(ConfigError, match=r"^references\.nowhere: no references file .*"
                                          r"`ecngym benchmark references scenario=nowhere`"):
        reference_controllers("nowhere", tmp_path)


def test_mean_ci_is_a_student_t_interval():
    m, lo, hi = mean_ci([1.0, 2.0, 3.0])
    assert m == 2.0 and lo == pytest.approx(2.0 - 4.302653 / 3**0.5, rel=1e-5) and hi == pytest.approx(4 - lo)


def test_the_benchmark_commands_refuse_bad_arguments_naming_them(capsys):
    from ecngym.cli import main

    assert main(["benchmark", "references"]) == 2
    assert "give scenario=<name>, suite=<core|full> or scenario_file=<path> (one of them)" in capsys.readouterr().err
    assert main(["benchmark", "references", "scenario=nowhere"]) == 2
    assert "scenarios.nowhere: no scenario file" in capsys.readouterr().err
    assert main(["benchmark", "references", "scenario=nowhere", "extend_grid=maybe"]) == 2
    assert "extend_grid: expected true or false, got 'maybe'" in capsys.readouterr().err
    assert main(["benchmark", "headroom", "suite=core", "bogus=1"]) == 2
    assert "bogus: unknown argument" in capsys.readouterr().err
    assert main(["benchmark", "headroom", "scenario=nowhere"]) == 2
    assert "`ecngym benchmark references scenario=nowhere`" in capsys.readouterr().err


def test_references_of_another_scenario_version_are_refused_naming_both(tmp_path):
    from ecngym.benchmark.references import REFERENCE_DIR
    from ecngym.benchmark.runner import BenchmarkOptions, plan_jobs
    from ecngym.benchmark.suite import SCENARIO_DIR, load_suite

    data = yaml.safe_load((SCENARIO_DIR / "roce_storage_incast.yaml").read_text())
    data["version"] = 2  # the scenario changed; its references file is still version 1's
    (tmp_path / "roce_storage_incast.yaml").write_text(yaml.safe_dump(data))
    suite = load_suite({"name": "t", "version": 1, "test_seeds": 1, "scenarios": ["roce_storage_incast"]}, tmp_path)
    with pytest.raises(ConfigError) as err:  # the suite runner plays static_tuned from the references
        plan_jobs(suite, {}, tmp_path / "store", tmp_path / "out", True,
                  BenchmarkOptions.parse({"controller": "static_tuned"}))
    path = REFERENCE_DIR / "roce_storage_incast.yaml"
    assert str(err.value) == (f"references.roce_storage_incast: {path} was computed for version 1 of scenario "
                              "roce_storage_incast, its file is version 2: the references are stale; recompute them "
                              "with `ecngym benchmark references scenario=roce_storage_incast`")
    with pytest.raises(ConfigError, match="^references.roce_storage_incast: .* version 1 .* version 2"):
        scenario_headroom("roce_storage_incast", scenario_dir=tmp_path)
    assert reference_controllers("roce_storage_incast")["static_tuned"]["setting"]  # the shipped version 1: fine


def test_the_references_refuse_a_phase_past_the_episodes_end(tmp_path):
    from ecngym.benchmark.references import read_scenario

    data = copy.deepcopy(TINY)
    data["protocol"]["phases"][1]["start"] = "1s"
    (tmp_path / "tiny_phases.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as err:  # (before any search runs)
        read_scenario("tiny_phases", tmp_path)
    assert err.value.field == "scenarios.tiny_phases.protocol.phases[1].start"
    assert err.value.message.startswith("phase 'incast' starts at 1000000000 ns, at or past the episode's end ")
