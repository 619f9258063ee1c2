"""``ecngym bench train`` prints its figures with one JSON object as the last line (format only, no timing)."""

import json

from ecngym import cli


def test_bench_train_last_line_is_json(capsys):
    assert cli.main(["bench", "train", "--steps", "8", "--algorithms", "acc"]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    (acc,) = last["results"]
    assert acc["algorithm"] == "acc" and acc["threads"] == 1 and acc["torch_threads"] == 1
    assert acc["train_env_steps"] == 8 and acc["env_steps_per_s"] > 0 and acc["share"] > 0


def test_bench_train_refuses_an_unknown_algorithm(capsys):
    assert cli.main(["bench", "train", "--algorithms", "a2c"]) == 2
