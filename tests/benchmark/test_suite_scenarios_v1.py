"""The v1 scenario files: registration, protocol, phases that match the traffic, tuners that fit the episode."""

import gymnasium as gym
import pytest
import yaml
from gymnasium.utils.env_checker import check_env

import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.benchmark.references import SCENARIO_DIR, phase_starts_ns, read_scenario
from ecngym.benchmark.references import suite_scenarios as suite_names
from ecngym.benchmark.scenario_docs import ORDER, timing
from ecngym.envs.registration import SCENARIOS, SUITE_SCENARIOS, scenario_config, suite_scenarios
from ecngym.error import ConfigError
from ecngym.units import parse_time_ns

NAMES = list(suite_names("full-v1"))
CORE = list(suite_names("core-v1"))


def test_the_seven_scenario_files_are_there_and_register_v1_ids():
    v1_files = [p.stem for p in SCENARIO_DIR.glob("*.yaml") if read_scenario(p.stem)["id"].endswith("-v1")]
    assert sorted(v1_files) == sorted(NAMES)
    ids = {read_scenario(n)["id"] for n in NAMES}
    assert ids == {i for i in SUITE_SCENARIOS if i.endswith("-v1")}
    assert not ids & set(SCENARIOS)  # the v0 toy ids stay as they were
    for name in NAMES:
        sc = read_scenario(name)
        assert sc["id"] in gym.registry
        assert scenario_config(sc["id"]) == sc["env"]


@pytest.mark.parametrize("name", NAMES)
def test_protocol_seeds_are_disjoint_and_phases_match_the_traffic(name):
    sc = read_scenario(name)
    proto = sc["protocol"]
    assert len(proto["test_seeds"]) >= 10
    assert not set(proto["train_seeds"]) & set(proto["test_seeds"])
    starts = phase_starts_ns(sc)
    traffic = [parse_time_ns(p["at"], "at") for p in sc["env"]["workload"].get("phases", [])]
    assert starts == [0, *traffic]  # the oracle's boundaries are the trace's phase changes
    assert proto["score"].startswith("slowdown_") and proto["lower_is_better"] is True


@pytest.mark.parametrize("name", NAMES)
def test_every_tuner_completes_its_schedule_within_the_episode(name):
    t = timing(name)
    assert t["bytetuning_steps"] <= t["episode_steps"], t
    assert t["pred_decisions"] >= 20, t  # PRED's QLA decides many times per phase


@pytest.mark.parametrize("name", NAMES)
def test_v1_envs_pass_the_gymnasium_checker_on_a_short_episode(name):
    env_id = read_scenario(name)["id"]
    # a short episode: the phases (which start later) are left out of the shorter trace
    env = gym.make(env_id, episode_steps=4, workload={"phases": []})
    try:
        check_env(env.unwrapped, skip_render_check=True)
        env.reset(seed=1)
        for _ in range(4):
            *_, truncated, _info = env.step(env.action_space.sample())
        assert truncated
    finally:
        env.close()


def test_a_scenario_file_without_an_id_is_refused_naming_it(tmp_path):
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({"name": "bad", "env": {}}))
    with pytest.raises(ConfigError, match=r"^scenarios\.bad\.id"):
        suite_scenarios(tmp_path)
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({"name": "bad", "id": "ecngym/RoceIncast-v0", "env": {}}))
    with pytest.raises(ConfigError, match=r"^scenarios\.bad\.id: ecngym/RoceIncast-v0 is already registered"):
        suite_scenarios(tmp_path)


def test_overlapping_seeds_are_refused(tmp_path):
    sc = yaml.safe_load((SCENARIO_DIR / "roce_storage_incast.yaml").read_text())
    sc["protocol"]["test_seeds"] = [101, 2001]
    (tmp_path / "roce_storage_incast.yaml").write_text(yaml.safe_dump(sc))
    with pytest.raises(ConfigError,
                       match=r"^scenarios\.roce_storage_incast\.protocol\.test_seeds.*\[101\] are also train_seeds"):
        read_scenario("roce_storage_incast", tmp_path)


def test_the_scenario_table_in_the_docs_is_the_generated_one():
    from pathlib import Path

    from ecngym.benchmark.scenario_docs import markdown, scenario_rows

    page = markdown(scenario_rows(ORDER))  # suite v2's scenarios, then v1's
    for name in ORDER:
        assert f"`{name}`" in page
    docs = Path(__file__).resolve().parents[2] / "docs" / "benchmarks" / "scenarios.md"
    assert docs.read_text() == page, "regenerate: ecngym benchmark scenarios markdown=docs/benchmarks/scenarios.md"


@pytest.mark.parametrize("name", NAMES)
def test_the_committed_references_match_their_scenario_file(name):
    from ecngym.benchmark.references import read_references

    sc, ref = read_scenario(name), read_references(name)
    proto = sc["protocol"]
    assert ref["scenario_version"] == sc["version"] and ref["score"] == proto["score"]
    assert ref["search"]["train_seeds"] == proto["train_seeds"]
    assert sorted(int(s) for s in ref["oracle_phase"]["per_test_seed"]) == sorted(proto["test_seeds"])
    assert ref["phase_starts_ns"] == phase_starts_ns(sc)
    assert ref["static_tuned"]["setting"] in ref["search"]["settings"]
    assert ref["episode"]["flows_total_mean"] >= 1000
