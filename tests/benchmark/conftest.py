"""The benchmark tests' fixture suite, scenario folder and references (independent of the v1 scenarios' files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

HERE = Path(__file__).resolve().parent
SCENARIO_DIR = HERE / "scenarios"
REFERENCE_DIR = HERE / "references"
SUITE_FILE = HERE / "tiny_suite.yaml"


def fixture_references(scenario: str, scenario_dir: Any = None, reference_dir: Any = None) -> dict[str, dict[str, Any]]:
    """The fixture's references as controller configs (static settings, oracle_phase a static stand-in; random).

    ``static_tuned_per_role`` (per switch layer) and ``phase_tuned`` (per phase) where the fixture file has one,
    as the package's files do.

    (``scenario_dir``, ``reference_dir``: the runner's arguments, unused: the fixture's references are made
    up, never stale.)
    """
    refs = yaml.safe_load((REFERENCE_DIR / f"{scenario}.yaml").read_text())
    out = {"static_default": {"_target_": "ecngym.baselines.StaticEcnController", "setting": "env_default",
                              "name": "static_default"}}
    for name in ("static_tuned", "oracle_phase"):
        out[name] = {"_target_": "ecngym.baselines.StaticEcnController", "setting": refs[name]["setting"],
                     "name": name}
    if "static_tuned_per_role" in refs:
        from ecngym.benchmark.reference_search import per_role_controller
        from ecngym.units import parse_bytes

        out["static_tuned_per_role"] = per_role_controller(
            {layer: [parse_bytes(s[0]), parse_bytes(s[1]), s[2]]
             for layer, s in refs["static_tuned_per_role"]["setting"].items()})
    if "phase_tuned" in refs:
        from ecngym.benchmark.reference_search import phase_tuned_controller
        from ecngym.units import parse_bytes

        out["phase_tuned"] = phase_tuned_controller(
            refs["phase_tuned"]["phase_starts_ns"],
            [[parse_bytes(s[0]), parse_bytes(s[1]), s[2]] for s in refs["phase_tuned"]["schedule"]])
    out["random"] = {"_target_": "ecngym.baselines.random_templates.RandomTemplateController", "name": "random"}
    return out


@pytest.fixture(scope="session")
def reference_reader():
    """:func:`fixture_references` (test modules cannot import this conftest under importlib mode)."""
    return fixture_references
