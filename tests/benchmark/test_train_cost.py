"""``ecngym bench train --suite``: the scaled runs' scenario files and the suite's CPU-hours arithmetic.

The measurements themselves are the benchmark's (they print figures; no timing is asserted here).
"""

from __future__ import annotations

import math

import pytest
import yaml

from ecngym.agents.registry import learner_names
from ecngym.benchmark.suite import load_scenario, load_suite
from ecngym.benchmark.train_cost import N_REFERENCES, _totals, scaled_scenario_dir, suite_cost
from ecngym.error import ConfigError

#: The shipped learners (the agents of configs/agent, then SB3's algorithms).
LEARNERS = tuple(learner_names())


def test_the_scaled_scenarios_cut_warm_ups_and_rollouts_to_the_run_and_still_load(tmp_path):
    suite = load_suite("core-v1")
    folder = scaled_scenario_dir(suite.scenarios, 64, tmp_path)
    for name in suite.scenarios:
        agents = yaml.safe_load((folder / f"{name}.yaml").read_text())["training"]["agents"]
        assert agents["acc"]["hyperparams"]["hyperparams"]["learning_starts"] == 16
        assert agents["laecn"]["hyperparams"]["learning_starts"] == 16
        assert agents["dqn"]["hyperparams"]["learning_starts"] == 16
        assert agents["ppo"]["hyperparams"]["n_steps"] == 64 and agents["ppo"]["hyperparams"]["batch_size"] <= 64
        scaled = load_scenario(name, folder)  # still a valid scenario, the rest unchanged
        assert scaled.training.budget_steps == suite.scenarios[name].training.budget_steps
        assert scaled.env == suite.scenarios[name].env


def test_the_full_suite_costs_every_run_and_every_scored_episode():
    suite = load_suite("full-v1")
    trained = [n for n, s in suite.scenarios.items() if s.training is not None]
    scoring = [{"scenario": n, "episode_cpu_s": 10.0, "episode_steps": 100, "step_cpu_s": 0.1, "reset_cpu_s": 0.0}
               for n in suite.scenarios]
    training = [{"scenario": n, "agent": a, "cpu_ms_per_step": 300.0, "fixed_cpu_s": 5.0, "run_cpu_s": 3600.0}
                for n in trained for a in LEARNERS]
    totals = _totals(suite, training, scoring, n_untrained=19)
    seeds = suite.spec.training_seeds
    assert totals["training_runs"] == len(suite.scenarios) * len(LEARNERS) * seeds == 7 * 5 * 5
    budget = max(suite.scenarios[n].training.budget_steps for n in trained)
    # an untrained scenario: fixed + budget x (its env step + the learner's overhead over its env step)
    estimated = (len(suite.scenarios) - len(trained)) * len(LEARNERS) * seeds * (5.0 + budget * (0.1 + 0.2))
    assert math.isclose(totals["training_estimated_cpu_h"], estimated / 3600)
    assert math.isclose(totals["training_cpu_h"], len(trained) * len(LEARNERS) * seeds + estimated / 3600)
    competitors = 19 + N_REFERENCES + len(LEARNERS) * seeds
    held_out = sum(s.held_out is not None for s in suite.scenarios.values())
    assert totals["episodes"] == suite.spec.test_seeds * competitors * (len(suite.scenarios) + held_out)
    assert math.isclose(totals["scoring_cpu_h"], totals["episodes"] * 10.0 / 3600)
    assert math.isclose(totals["total_cpu_h"], totals["training_cpu_h"] + totals["scoring_cpu_h"])


def test_too_few_steps_are_refused_naming_the_option():
    with pytest.raises(ConfigError) as err:
        suite_cost("core", 4)
    assert err.value.field == "--steps" and "got 4" in err.value.message
