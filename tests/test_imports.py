"""``import ecngym`` / ``ecngym.sim_backend`` / ``ecngym.envs`` load only what they use (in fresh interpreters)."""

import json
import subprocess
import sys

import pytest

HEAVY = ("pandas", "pyarrow", "ecngym.sim_backend._fabric", "ecngym.workloads", "hydra", "torch")


def _modules_after(statement: str) -> set[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


@pytest.mark.parametrize("module", ["ecngym", "ecngym.sim_backend", "ecngym.envs"])
def test_package_import_loads_nothing_heavy(module):
    loaded = _modules_after(f"import {module}")
    assert not [m for m in HEAVY if m in loaded]
    assert "importlib.metadata" not in loaded or module == "ecngym.envs"  # gymnasium may use it


def test_lazy_names_resolve_and_envs_are_registered():
    loaded = _modules_after(
        "import gymnasium, ecngym, ecngym.envs, ecngym.sim_backend as sb\n"
        "assert 'ecngym/RoceLeafSpine-v0' in gymnasium.registry\n"
        "assert ecngym.__version__ and ecngym.envs.EcnTuningEnv.__name__ == 'EcnTuningEnv'\n"
        "assert sb.Fabric.__name__ == 'Fabric' and sb.topology.fat_tree and sb.SIZE_BUCKETS\n"
        "from ecngym.sim_backend import FabricConfig, _fabric, slowdown_table\n"
        "from ecngym.envs import EnvConfig, make\n"
        "assert set(ecngym.envs.__all__) <= set(dir(ecngym.envs))")
    assert "pandas" in loaded and "ecngym.sim_backend._fabric" in loaded  # now they are used
    with pytest.raises(subprocess.CalledProcessError):
        _modules_after("import ecngym.sim_backend as sb\nsb.NoSuchName")


#: What a process that only builds and runs a fabric must not load: learners, launchers, configs
#: and tables it does not use (pandas loads when flow records are asked for as a DataFrame).
NOT_FOR_A_FABRIC = ("torch", "ray", "hydra", "omegaconf", "stable_baselines3", "gymnasium", "rich", "pandas",
                    "pyarrow", "duckdb")


def test_a_fabric_only_process_loads_no_learner_launcher_or_table_library():
    loaded = _modules_after(
        "from ecngym.sim_backend import Fabric, FabricConfig, topology\n"
        "flows = {'src': [1, 2, 3], 'dst': [0, 0, 0], 'size_bytes': [20000] * 3, 'start_ns': [0, 1000, 2000]}\n"
        "with Fabric(topology.incast_star(hosts=4), flows, FabricConfig.preset('hpcc')) as fab:\n"
        "    fab.advance('50us'); fab.read_telemetry(); fab.run('1ms')\n"
        "    assert fab.flow_columns()['finished'].all()")
    assert "ecngym.sim_backend._fabric" in loaded  # (it did build one)
    assert [m for m in loaded if m.split(".")[0] in NOT_FOR_A_FABRIC] == []


def _outcome(flows):
    """What flow_table_arrays makes of a table: its columns (dtype and values) or its error message."""
    from ecngym.error import ConfigError
    from ecngym.sim_backend.flows import flow_table_arrays

    try:
        return {c: (a.dtype.str, a.tolist()) for c, a in flow_table_arrays(flows, num_hosts=3).items()}
    except ConfigError as exc:
        return str(exc)


def test_a_mapping_of_columns_gives_what_its_dataframe_gives():
    import numpy as np
    import pandas as pd

    good = {"src": np.array([1, 2], dtype=np.uint16), "dst": [0, 0], "size_bytes": (1000, 2000),
            "start_ns": np.array([0.0, 5.0]), "priority": [3, 4]}
    variants = [good, {**good, "dst": [0, "a"]}, {**good, "dst": 0}, {**good, "start_ns": [0.5, 1.0]},
                {**good, "dst": [1, 0]}, {**good, "priorty": [3, 3]}, {**good, "src": [5, 1]}, {"src": [1]},
                {**good, "extra_delay_ns": np.array([-1, 0], dtype=np.int32)}, {**good, "dport": [True, False]},
                {**good, "size_bytes": [2**63, 1]}, {k: v[:0] if k != "start_ns" else [] for k, v in good.items()}]
    assert isinstance(_outcome(good), dict) and isinstance(_outcome(variants[1]), str)
    for flows in variants:
        assert _outcome(flows) == _outcome(pd.DataFrame(flows)), flows
    for flows in ({**good, "dst": [0]}, {"src": 1, "dst": 0}, {**good, "src": np.zeros((2, 2))}):
        with pytest.raises(ValueError):  # pandas refuses these itself: the mapping's message names flows
            pd.DataFrame(flows)
        assert _outcome(flows).startswith("flows: expected columns of one length")


def test_the_hpcc_reference_replays_without_pandas_and_its_arrays_are_its_table():
    import numpy as np

    from ecngym.sim_backend.hpcc_reference import scenario

    loaded = _modules_after(
        "from ecngym.sim_backend import Fabric, FabricConfig\n"
        "from ecngym.sim_backend.hpcc_reference import scenario\n"
        "sc = scenario('A')\n"
        "with Fabric(sc.topology(), sc.flow_arrays(), FabricConfig.preset('hpcc')) as fab:\n"
        "    fab.run('100us'); assert len(fab.flow_columns()['finished']) == 605")
    assert [m for m in loaded if m.split(".")[0] in NOT_FOR_A_FABRIC] == []  # (bench fabric's whole process)
    table, arrays = scenario("A").flows(), scenario("A").flow_arrays()
    assert list(arrays) == list(table.columns)
    for col, values in arrays.items():
        assert values.dtype == table[col].dtype and np.array_equal(values, table[col].to_numpy()), col
