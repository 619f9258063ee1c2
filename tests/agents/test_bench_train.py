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
    from ecngym.bench.train import BenchChildError, in_fresh_process

    with pytest.raises(BenchChildError, match=r"no-such-algorithm: the measuring process failed:\n.*Traceback"):
        in_fresh_process("no-such-algorithm", 8, 1)


def test_bench_train_measures_acc_with_overlapped_updates(capsys):
    # 80 env steps x 16 port agents passes learning_starts (1000 transitions): gradient steps run
    assert cli.main(["bench", "train", "--steps", "80", "--algorithms", "acc_overlap"]) == 0
    (row,) = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["results"]
    assert row["algorithm"] == "acc_overlap" and row["train_env_steps"] == 80
    assert row["update_ms"] > 0  # timed inside the deferred updates, not the (deferring) train call
