"""Suite v2's scenario files: -v2 ids, from the headroom map's points or re-issued from v1, Linux-like DCTCP."""

import json

import gymnasium as gym
import pytest

import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.benchmark.headroom_map import load_family, point_env
from ecngym.benchmark.references import SCENARIO_DIR, phase_starts_ns, read_scenario
from ecngym.benchmark.scenario_docs import timing
from ecngym.envs.registration import scenario_config
from ecngym.sim_backend import FabricConfig
from ecngym.sim_backend.tcp_hosts import LINUX_HOST_DCTCP
from ecngym.units import parse_time_ns

#: v2 scenario -> (its headroom-map family, the point's label on the family's first axis)
FROM_MAP = {"dctcp_elephants_incasts": ("elephants_incasts", "300KB"),
            "dctcp_elephants_incasts_600kb": ("elephants_incasts", "600KB"),
            "dctcp_elephants_incasts_200kb": ("elephants_incasts", "200KB")}
#: v2 scenario re-issued from a v1 one -> (the v1 scenario, what its env changes: None = nothing)
FROM_V1 = {"roce_storage_incast_v2": ("roce_storage_incast", None),
           "dctcp_pred_regimes_v2": ("dctcp_pred_regimes", "the Linux-like host")}


def _plain(data):
    return json.loads(json.dumps(data, sort_keys=True, default=str))


def test_the_v2_files_register_v2_ids():
    v2 = sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml") if read_scenario(p.stem)["id"].endswith("-v2"))
    assert v2 == sorted({*FROM_MAP, *FROM_V1})
    for name in v2:
        sc = read_scenario(name)
        assert sc["id"] in gym.registry and scenario_config(sc["id"]) == sc["env"]


@pytest.mark.parametrize("name", sorted(FROM_MAP))
def test_a_v2_scenario_is_its_map_point(name):
    """The scenario plays exactly the traffic and fabric the map measured (one home: the family file)."""
    family_name, label = FROM_MAP[name]
    family = load_family(family_name)
    point = next(v for v in family["axes"][0]["values"] if v["label"] == label)
    env, score = point_env(family, read_scenario(family["base"]), [point])
    assert _plain(env) == _plain(read_scenario(name)["env"]) and score == read_scenario(name)["protocol"]["score"]


@pytest.mark.parametrize("name", sorted(FROM_V1))
def test_a_re_issued_v2_scenario_plays_its_v1_traffic(name):
    """The same traffic, topology and templates as the v1 file; only the stated change (the DCTCP host) differs."""
    v1_name, change = FROM_V1[name]
    v1, v2 = read_scenario(v1_name), read_scenario(name)
    assert v2["id"].rsplit("-", 1)[0] == v1["id"].rsplit("-", 1)[0] and v2["id"].endswith("-v2")
    assert _plain({k: v for k, v in v2["env"].items() if k != "fabric"}) == _plain(
        {k: v for k, v in v1["env"].items() if k != "fabric"})
    assert v2["protocol"]["test_seeds"] == v1["protocol"]["test_seeds"]
    if change is None:
        assert _plain(v2["env"]["fabric"]) == _plain(v1["env"]["fabric"])
    else:
        host, lean = (FabricConfig.from_dict(sc["env"]["fabric"]).dctcp for sc in (v2, v1))
        assert host.slow_start and host.cwnd_limited_growth and not lean.slow_start


@pytest.mark.parametrize("name", sorted({*FROM_MAP, *FROM_V1}))
def test_a_v2_scenario_states_its_validation_seeds_and_training(name):
    sc = read_scenario(name)
    proto = sc["protocol"]
    others = {*proto["train_seeds"], *proto["test_seeds"]}
    assert proto["validation_seeds"] and not set(proto["validation_seeds"]) & others
    assert sc["training"]["budget_steps"] > 0 and sc["held_out"]["test_seeds"]


@pytest.mark.parametrize("name", sorted(n for n in {*FROM_MAP, *FROM_V1} if n.startswith("dctcp")))
def test_v2_protocol_phases_and_host(name):
    sc = read_scenario(name)
    proto = sc["protocol"]
    assert len(proto["test_seeds"]) >= 10 and not set(proto["train_seeds"]) & set(proto["test_seeds"])
    traffic = [parse_time_ns(p["at"], "at") for p in sc["env"]["workload"].get("phases", [])]
    assert phase_starts_ns(sc) == [0, *traffic]
    cfg = FabricConfig.from_dict(sc["env"]["fabric"])
    # the Linux-like host of the TCP issue's decision (docs/concepts/tcp-hosts.md): every option its one home
    # (LINUX_HOST_DCTCP) turns on is spelt out the same in the file, beside the timers it sets
    assert cfg.cc == "dctcp" and cfg.dctcp.slow_start and cfg.dctcp.cwnd_limited_growth
    host = sc["env"]["fabric"]["dctcp"]
    assert {k: host.get(k) for k in LINUX_HOST_DCTCP} == dict(LINUX_HOST_DCTCP)
    t = timing(name)
    assert t["bytetuning_steps"] <= t["episode_steps"] and t["pred_decisions"] >= 20, t
