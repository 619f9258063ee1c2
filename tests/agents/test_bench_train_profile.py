"""``ecngym bench train --profile``: the phase clock's accounting, its hooks, one real profiled run.

No timing is asserted: counts, which phase a piece of work is charged to, and that the parts add up.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from ecngym import cli
from ecngym.perf.train_profile import GROUPS, PhaseClock


def _spin(cpu_s: float) -> None:
    end = time.thread_time() + cpu_s
    while time.thread_time() < end:
        pass


def test_the_clock_charges_the_innermost_phase_and_the_parts_add_up():
    clock = PhaseClock()

    class Sim:
        def advance(self) -> None:
            _spin(0.02)

    class Env:
        def step(self) -> None:
            _spin(0.002)
            Sim.advance(sim)

    sim = Sim()
    Sim.advance = clock.wrap("sim", Sim.advance, counts_step=False)
    Env.step = clock.wrap("env_glue", Env.step, counts_step=True)
    _spin(0.05)  # before the first step: outside the window
    for _ in range(5):
        Env().step()
        _spin(0.004)  # the learner's loop between steps
    out = clock.per_step_ms()
    assert out["steps"] == 5 and set(out["ms"]) == set(GROUPS)
    ms = out["ms"]
    assert ms["sim"] >= 20 and 2 <= ms["env_glue"] < ms["sim"]  # advance's 20 ms are not the env's
    # 4 ms after each step but the last (after the last phase: outside the window) = 3.2 ms per step;
    # the 50 ms before the first step would add 10 ms per step
    assert 2.5 <= ms["loop"] < 5
    assert abs(sum(ms.values()) - out["total_ms"]) < 0.05 * out["total_ms"]


def test_every_hook_names_a_method_that_exists():
    # a renamed method would silently move its time into the phase that calls it: the table says so,
    # and this fails
    code = ("from ecngym.perf.train_profile import PhaseClock\nc = PhaseClock()\nc.install()\n"
            "import json; print(json.dumps(c.missing))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.strip().splitlines()[-1]) == []


def test_a_profiled_ppo_run_splits_its_steps_and_counts_its_update(tmp_path):
    from ecngym.benchmark.suite import load_suite
    from ecngym.benchmark.train_cost import scaled_scenario_dir
    from ecngym.perf.train_profile import profile_in_fresh_process

    scaled = scaled_scenario_dir(load_suite("core-v1").scenarios, 12, tmp_path)
    r = profile_in_fresh_process("dctcp_pred_regimes", "ppo", 1, 12, str(scaled))
    assert "error" not in r, r.get("error")
    assert r["steps"] == 12 and r["missing_hooks"] == []
    ms = r["ms"]
    for group in ("sim", "telemetry", "kernel", "env_glue", "inference", "updates"):
        assert ms[group] > 0, group  # (PPO's one update follows its 12-step rollout: inside the window)
    assert abs(sum(ms.values()) - r["total_ms"]) < 0.05 * r["total_ms"]


@pytest.mark.parametrize("args,message", [
    (["--profile-steps", "100"], "--profile-steps: only used with --profile"),
    (["--profile", "--profile-steps", "4"], "--profile-steps: got 4; give at least 8 env steps"),
])
def test_bench_train_profile_options_are_checked(args, message, capsys):
    assert cli.main(["bench", "train", "--algorithms", "", *args]) == 2
    assert message in capsys.readouterr().err


def test_tier_cost_multiplies_each_profiled_step_by_the_tier_budget_and_seeds():
    from ecngym.benchmark.suite import load_suite
    from ecngym.benchmark.tiers import resolve_tier
    from ecngym.perf.train_profile import tier_cost

    suite = load_suite("core")
    results = [{"scenario": "dctcp_elephants_incasts", "agent": "acc", "total_ms": 4.0},
               {"scenario": "roce_storage_incast_v2", "agent": "dqn", "total_ms": 1.5},
               {"scenario": "roce_storage_incast_v2", "agent": "ppo", "error": "BrokenProcessPool"}]
    results.append({"scenario": "dctcp_pred_regimes_v2", "agent": "acc", "total_ms": 9.0})  # not in core
    cost = tier_cost("core", results)
    seeds = suite.spec.training_seeds
    for tier, t in cost["tiers"].items():
        acc = resolve_tier(suite.scenarios["dctcp_elephants_incasts"], "acc", tier).budget_steps
        dqn = resolve_tier(suite.scenarios["roce_storage_incast_v2"], "dqn", tier).budget_steps
        assert t["per_learner_cpu_h"]["acc"] == pytest.approx(seeds * acc * 4e-3 / 3600)
        assert t["per_learner_cpu_h"]["dqn"] == pytest.approx(seeds * dqn * 1.5e-3 / 3600)
        assert "ppo" not in t["per_learner_cpu_h"] and t["runs"] == 2 * seeds
        assert t["cpu_h"] == pytest.approx(sum(t["per_scenario_cpu_h"].values()))
    assert cost["tiers"]["converged"]["cpu_h"] > cost["tiers"]["100k"]["cpu_h"]
