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
