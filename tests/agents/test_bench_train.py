"""``ecngym bench train`` prints its figures with one JSON object as the last line (format only, no timing)."""

import json

import pytest

from ecngym import cli


def test_bench_train_last_line_is_json(capsys):
    assert cli.main(["bench", "train", "--steps", "8", "--algorithms", "acc"]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    (acc,) = last["results"]
    assert acc["algorithm"] == "acc" and acc["threads"] == 1 and acc["torch_threads"] == 1
    assert acc["train_env_steps"] == 8 and acc["env_steps_per_s"] > 0 and acc["share"] > 0
    # the breakdown of a training env step adds up to its wall time (8 steps: still before learning_starts)
    assert acc["update_ms"] == 0 and acc["env_ms"] > 0
    assert abs(acc["env_ms"] + acc["update_ms"] + acc["other_ms"] - 1e3 / acc["train_steps_per_s"]) < 1e-6


def test_bench_train_refuses_an_unknown_algorithm(capsys):
    assert cli.main(["bench", "train", "--algorithms", "a2c"]) == 2


@pytest.mark.parametrize("args,named", [
    (["--eval-every", "0"], "--eval-every"),  # was ignored (and never checked) without --plateau
    (["--patience", "3", "--seed", "1"], "--patience, --seed"),
])
def test_bench_train_refuses_plateau_options_without_plateau(args, named, capsys):
    assert cli.main(["bench", "train", "--algorithms", "acc", *args]) == 2
    assert f"{named}: only used with --plateau" in capsys.readouterr().err


def test_bench_train_names_a_bad_thread_count_by_its_option(capsys, monkeypatch):
    # the message named the config key 'threads', which this command has no such option as
    assert cli.main(["bench", "train", "--threads", "-1"]) == 2
    assert "error: --threads: expected a whole number of threads in [0, 4096]" in capsys.readouterr().err
    monkeypatch.setenv("ECNGYM_THREADS", "x")
    assert cli.main(["bench", "train"]) == 2
    assert "error: ECNGYM_THREADS: expected a whole number of threads" in capsys.readouterr().err


def test_a_failing_measuring_process_is_reported_not_waited_for():
    # the child raises (no such algorithm in ALGORITHMS): before, the parent waited on its queue forever
    from ecngym.perf.train import BenchChildError, in_fresh_process

    with pytest.raises(BenchChildError, match=r"no-such-algorithm: the measuring process failed:\n.*Traceback"):
        in_fresh_process("no-such-algorithm", 8, 1)


def test_bench_train_measures_acc_with_overlapped_updates(capsys):
    # 80 env steps x 16 port agents passes learning_starts (1000 transitions): gradient steps run
    assert cli.main(["bench", "train", "--steps", "80", "--algorithms", "acc_overlap"]) == 0
    (row,) = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["results"]
    assert row["algorithm"] == "acc_overlap" and row["train_env_steps"] == 80
    assert row["update_ms"] > 0  # timed inside the deferred updates, not the (deferring) train call


def test_bench_train_quick_prints_each_learners_scaling_and_the_suites_cpu_hours_per_tier(tmp_path, capsys):
    from pathlib import Path

    import yaml

    fixture = Path(__file__).resolve().parents[1] / "benchmark" / "learners"
    data = yaml.safe_load((fixture / "tiny_learn.yaml").read_text())
    data["protocol"]["validation_seeds"] = [301, 302]  # (the tiers read them)
    (tmp_path / "tiny_learn.yaml").write_text(yaml.safe_dump(data))
    suite = tmp_path / "suite.yaml"
    suite.write_text((fixture / "tiny_learn_suite.yaml").read_text())
    assert cli.main(["bench", "train", "--quick", "--learners", "dqn,acc", "--scaling-suite", str(suite),
                     "--scenario-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "steps/s 2 proc." in out and "CPU-hours" in out
    result = json.loads(out.strip().splitlines()[-1])["learners"]
    dqn, acc = result["learners"]
    assert dqn["learner"] == "dqn" and dqn["steps_per_s_1"] > 0 and dqn["steps_per_s_2"] > 0
    assert dqn["ratio"] == pytest.approx(dqn["steps_per_s_2"] / dqn["steps_per_s_1"])
    assert acc["steps_per_s_2"] is None and "one process" in acc["why_no_2"] and acc["cpu_min_per_100k"] > 0
    # the steady cost per step comes from two run lengths; what does not grow with them is the fixed cost
    assert acc["cpu_min_per_100k"] == pytest.approx(acc["cpu_s_per_step"] * 100_000 / 60)
    for tier, budget in (("100k", 100_000), ("converged", 500_000)):  # 1 scenario x 1 training seed
        t = result["tiers"][tier]
        expected = {a["learner"]: (a["fixed_cpu_s"] + budget * a["cpu_s_per_step"]) / 3600 for a in (dqn, acc)}
        assert t["per_learner_cpu_h"] == pytest.approx(expected) and t["runs"] == 2


def test_bench_train_refuses_an_unknown_learner(capsys):
    assert cli.main(["bench", "train", "--learners", "a2c"]) == 2
    assert "--learners: unknown ['a2c']" in capsys.readouterr().err


def test_steady_cost_takes_the_difference_of_two_run_lengths_and_falls_back_to_the_longer_mean():
    from ecngym.benchmark.train_cost import steady_cost

    # 2 s of set-up, 1 ms per step; the steady CPU (from the first step) may be given apart from the whole
    assert steady_cost(2.5, 500, 3.0, 1000) == pytest.approx((1e-3, 2.0, True))
    assert steady_cost(4.0, 500, 4.3, 1000, 0.5, 1.0) == pytest.approx((1e-3, 3.5, True))
    # the longer run cost no more: its mean per step, no fixed cost, and it says so
    assert steady_cost(3.0, 500, 2.9, 1000) == pytest.approx((2.9e-3, 0.0, False))
