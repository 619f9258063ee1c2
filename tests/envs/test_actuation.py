"""One actuation path for every policy: the scenario's current setting is the fabric's, read back."""

import numpy as np
import pytest

import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.envs import EcnTuningEnv

SMALL = {
    "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 2, "host_rate": "10Gbps",
                 "fabric_rate": "10Gbps", "host_delay": "2us", "fabric_delay": "2us"},
    "fabric": {"preset": "dctcp"},
    "workload": {"workload": "websearch", "load": 0.5,
                 "incast": {"degree": 3, "size": "64KB", "interval": "100us", "arrival": "periodic"}},
    "interval": "50us",
    "episode_steps": 6,
}

CASES = {
    "red_discrete": {"action": {"scope": "layer"}},
    "red_continuous": {"action": {"type": "continuous", "scope": "port"}},
    "ecn_sharp_discrete": {"aqm": {"policy": "ecn_sharp"}, "action": {"scope": "layer"}},
    "r_aqm_continuous": {"aqm": {"policy": "r_aqm", "kmin_bytes": "20KB", "kmax_bytes": "40KB"},
                         "action": {"type": "continuous", "ranges": {"kmin_bytes": ["10KB", "30KB"],
                                                                         "kmax_bytes": ["40KB", "100KB"]}}},
    "pred_enum_template": {"aqm": {"policy": "pred"},
                           "action": {"params": ["lambda_qla", "scaling"],
                                      "templates": [[0.2, "N"], [0.05, "SqrtN"]]}},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_scenarios_setting_is_the_fabrics_after_every_step(case):
    env = EcnTuningEnv(config={**SMALL, **CASES[case]})
    try:
        env.reset(seed=3)
        sc = env.unwrapped.scenario
        mapper = sc.actions
        rng = np.random.default_rng(0)
        for _ in range(SMALL["episode_steps"]):
            action = env.action_space.sample() if case != "r_aqm_continuous" else (
                np.array([[rng.uniform(-1, 1), rng.uniform(0, 1)]], dtype=np.float32))
            env.step(action)
            # what the scenario (and so the observation) holds is what the fabric runs
            got = [[d[p] for p in mapper.params] for d in sc.fabric.get_aqm(sc.ports)]
            assert [[v.item() if isinstance(v, np.generic) else v for v in row] for row in sc.values.tolist()] == \
                [[float(v) if not isinstance(v, str) else v for v in row] for row in got]
            assert np.array_equal(sc.values, mapper.port_values(action))
            if mapper.policy == "red":
                for j, p in enumerate(mapper.params):  # RED's feature columns read the same values
                    assert np.array_equal(sc.red[p], sc.values[:, j])
    finally:
        env.close()
