"""The plateau rule of ``ecngym bench train --plateau`` (ecngym.agents.plateau), and a short real run."""

import json

import numpy as np
import pytest

from ecngym import cli
from ecngym.agents.plateau import PlateauRule, plateau_index, plateaued, smoothed
from ecngym.error import ConfigError


def test_smoothed_is_the_trailing_mean_of_the_last_window_rewards():
    r = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert np.allclose(smoothed(r, 3), [1.0, 1.5, 2.0, 3.0, 4.0])
    assert np.allclose(smoothed(r, 1), r)


def test_a_rising_curve_has_not_plateaued_a_flat_one_has():
    rising = [0.50 + 0.01 * i for i in range(20)]
    assert not plateaued(rising, window=3, patience=5, tol=0.002)
    flat = rising[:10] + [rising[9]] * 10
    assert plateaued(flat, window=3, patience=5, tol=0.002)
    assert not plateaued(flat[:5], window=3, patience=5, tol=0.002)  # too few evaluations to tell


def test_one_lucky_evaluation_does_not_set_the_plateau():
    # noise around 0.61 with one spike: the level is the mean of the last 4 (0.61), not the spike's
    # trailing means (0.637 - 0.64), so the plateau point is early, where the curve first reached 0.61
    curve = [0.60, 0.61, 0.62, 0.60, 0.61, 0.70, 0.61, 0.60, 0.61, 0.62, 0.60, 0.61, 0.61]
    assert plateau_index(curve, window=1, patience=4, tol=0.002) == 1
    assert plateau_index(curve, window=3, patience=4, tol=0.002) == 2  # trailing means 0.600, 0.605, 0.610
    assert plateaued(curve, window=3, patience=4, tol=0.002)


def test_a_late_rise_moves_the_plateau_point_to_it():
    curve = [0.60] * 6 + [0.65] * 6
    assert plateau_index(curve, window=2, patience=4, tol=0.002) == 7  # the first mean of two at 0.65
    assert not plateaued(curve[:9], window=2, patience=4, tol=0.002)  # still rising against the flat start


@pytest.mark.parametrize("kwargs,field", [
    ({"eval_every": 0}, "--eval-every"), ({"window": 0}, "--window"), ({"patience": 0}, "--patience"),
    ({"tol": -0.1}, "--tol"), ({"max_steps": 10, "eval_every": 20}, "--max-steps"),
    ({"max_train_s": 0}, "--max-train-s"),
])
def test_a_bad_rule_is_refused_naming_the_option(kwargs, field):
    with pytest.raises(ConfigError) as err:
        PlateauRule(**kwargs)
    assert err.value.field == field


def test_bench_train_plateau_trains_evaluates_and_reports(capsys):
    # a real, short run: 3 evaluations after the untrained one, on the held-out traces
    assert cli.main(["bench", "train", "--algorithms", "", "--plateau", "--eval-every", "40",
                     "--max-steps", "120", "--patience", "50"]) == 0
    out = capsys.readouterr().out
    p = json.loads(out.strip().splitlines()[-1])["plateau"]
    assert [c["env_steps"] for c in p["curve"]] == [0, 40, 80, 120]
    assert p["curve"][0]["train_s"] == 0 and p["curve"][-1]["train_s"] > 0
    assert all(0 < c["reward"] < 1 for c in p["curve"])
    assert p["stopped_by"] == "max_steps" and not p["plateau_reached"] and "no plateau within the run" in out
    assert p["eval_seeds"] == [1001, 1002, 1003] and set(p["static_rewards"]) == {"static_default", "static_dcqcn"}
    assert p["curve"][0]["exploration"] == 1.0 > p["curve"][-1]["exploration"]


def test_bench_train_plateau_refuses_a_bad_option(capsys):
    assert cli.main(["bench", "train", "--plateau", "--patience", "0"]) == 2
    assert "--patience" in capsys.readouterr().err


@pytest.mark.parametrize(("kwargs", "message"), [
    # a string or None was a TypeError from a comparison; True was taken as 1
    ({"tol": "a"}, r"^--tol: expected a finite number, got 'a'"),
    ({"tol": True}, r"^--tol: expected a finite number, got True"),
    ({"max_train_s": None}, r"^--max-train-s: expected a finite number, got None"),
    ({"max_train_s": True}, r"^--max-train-s: expected a finite number, got True"),
    ({"eval_every": 2.5}, r"^--eval-every: expected a whole number, got 2.5"),
])
def test_a_rule_of_the_wrong_type_is_refused_naming_the_option(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        PlateauRule(**kwargs)


def test_a_rules_whole_numbers_are_ints():
    rule = PlateauRule(eval_every=10.0, window=np.int64(3))
    assert type(rule.eval_every) is int and type(rule.window) is int and (rule.eval_every, rule.window) == (10, 3)


@pytest.mark.parametrize(("kwargs", "message"), [
    # an empty list was an IndexError after the static settings' evaluations; -1 ran them first too
    ({"eval_seeds": []}, r"^eval_seeds: got \[\]: list should have at least 1 item"),
    ({"eval_seeds": [1001, -5]}, r"^eval_seeds\[1\]: got -5, allowed range is \[0, 9223372036854775807\]"),
    ({"eval_seeds": 1001}, r"^eval_seeds: got 1001: input should be a valid list"),
    ({"seed": -1}, r"^seed: got -1, allowed range is \[0, inf\)"),
])
def test_measure_plateau_checks_its_seeds_before_anything_runs(kwargs, message):
    from ecngym.agents.plateau import measure_plateau

    with pytest.raises(ConfigError, match=message):
        measure_plateau(PlateauRule(), **kwargs)


def test_learning_experiment_checks_its_seeds_and_agents_before_any_training(tmp_path):
    from ecngym.agents.learning import evaluate, run
    from ecngym.baselines import StaticEcnController

    with pytest.raises(ConfigError, match=r"^seeds: got \[\]: list should have at least 1 item"):  # an IndexError
        evaluate(StaticEcnController("dcqcn"), {}, [])
    with pytest.raises(ConfigError, match=r"^eval_seeds\[0\]: expected a whole number, got 1.5"):
        run(tmp_path, eval_seeds=(1.5,), agents=())
    with pytest.raises(ConfigError, match=r"^agent: got 'lacen', allowed"):  # (was after training acc)
        run(tmp_path, agents=("acc", "lacen"), timesteps=4)
    assert not list(tmp_path.iterdir())  # nothing trained
