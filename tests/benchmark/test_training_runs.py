"""``ecngym run suite=... train=true``: the plan of training runs, their resumability, and the options it refuses.

The trainer is a stand-in that writes a file (the machinery around it is what is tested here; real
training on a two-node Ray cluster is the slow test ``test_train_cluster.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from ecngym import cli
from ecngym.benchmark.runner import BenchmarkOptions
from ecngym.benchmark.training_runs import (
    DONE_FILE,
    TrainingRun,
    finished_record,
    plan_training,
    run_training,
    run_trainings,
)
from ecngym.error import ConfigError

HERE = Path(__file__).resolve().parent
LEARNERS = ["acc", "laecn", "haecn", "ppo", "dqn"]


def _suite(training_seeds: int = 2, *, untrained: bool = False) -> SimpleNamespace:
    """A suite of two scenarios with a training protocol (and one without, if ``untrained``)."""
    def scenario(budget: int) -> SimpleNamespace:
        return SimpleNamespace(training=SimpleNamespace(budget_steps=budget, seeds=[7, 8, 9],
                                                        agents={a: {} for a in LEARNERS},
                                                        learners=lambda: list(LEARNERS)))

    scenarios = {"a": scenario(100), "b": scenario(200)}
    if untrained:
        scenarios["c"] = SimpleNamespace(training=None)
    return SimpleNamespace(name="s", scenarios=scenarios, spec=SimpleNamespace(training_seeds=training_seeds))


def _options(**kwargs) -> BenchmarkOptions:
    return BenchmarkOptions.parse(kwargs, "benchmark")


class FakeTrainer:
    """Writes ``weights.bin`` (a checkpoint) into the run's folder; counts its calls; may fail."""

    def __init__(self, fail: BaseException | None = None) -> None:
        self.calls: list[tuple[str, str, int, int]] = []
        self.fail = fail

    def __call__(self, scenario, agent, seed, out_dir, *, budget_steps, progress):  # noqa: D102 (train_run's)
        self.calls.append((scenario, agent, seed, budget_steps))
        out_dir.mkdir(parents=True)
        (out_dir / "weights.bin").write_bytes(b"w" * 16)
        if self.fail is not None:
            raise self.fail
        return out_dir / "weights.bin"


def test_the_plan_is_every_scenario_learner_and_first_training_seeds(tmp_path):
    runs = plan_training(_suite(untrained=True), _options(), tmp_path)
    assert len(runs) == 2 * len(LEARNERS) * 2  # scenario c trains nothing
    assert {(r.scenario, r.agent, r.seed) for r in runs} == {(s, a, k) for s in "ab" for a in LEARNERS for k in (7, 8)}
    assert {r.budget_steps for r in runs if r.scenario == "a"} == {100}
    assert {r.budget_steps for r in runs if r.scenario == "b"} == {200}
    assert runs[0].folder == tmp_path / "a" / "acc" / "seed7"
    assert len({r.folder for r in runs}) == len(runs)


def test_the_filters_pick_one_run_and_the_budget_can_be_scaled_down(tmp_path):
    runs = plan_training(_suite(), _options(scenario="b", agent="dqn", train_seed=8, budget_steps=5), tmp_path)
    assert [(r.scenario, r.agent, r.seed, r.budget_steps) for r in runs] == [("b", "dqn", 8, 5)]


@pytest.mark.parametrize(("options", "field"), [({"agent": "a2c"}, "benchmark.agent"),
                                                ({"train_seed": 9}, "benchmark.train_seed"),  # not among the first 2
                                                ({"scenario": "z"}, "benchmark.scenario")])
def test_a_filter_no_run_has_is_refused_naming_it(tmp_path, options, field):
    with pytest.raises(ConfigError) as err:
        plan_training(_suite(), _options(**options), tmp_path)
    assert err.value.field == field and repr(next(iter(options.values()))) in err.value.message


def test_more_training_seeds_than_a_scenario_has_are_refused(tmp_path):
    with pytest.raises(ConfigError) as err:
        plan_training(_suite(training_seeds=4), _options(), tmp_path)
    assert err.value.field == "suite.training_seeds" and "only 3" in err.value.message


def test_a_finished_run_leaves_a_complete_folder_and_is_not_trained_again(tmp_path):
    run = TrainingRun("a", "dqn", 7, 100, str(tmp_path))
    trainer = FakeTrainer()
    first = run_training(run, trainer)
    assert first.trained and first.failure is None and Path(first.checkpoint) == run.folder / "weights.bin"
    record = json.loads((run.folder / DONE_FILE).read_text())
    assert record["checkpoint"] == "weights.bin" and record["budget_steps"] == 100 and record["cpu_s"] >= 0
    assert sorted(p.name for p in run.folder.parent.iterdir()) == ["seed7"]  # no partial folder left
    again = run_training(run, trainer)
    assert not again.trained and again.checkpoint == first.checkpoint and len(trainer.calls) == 1


def test_a_run_killed_mid_way_leaves_no_finished_folder_and_restarts(tmp_path):
    run = TrainingRun("a", "ppo", 8, 100, str(tmp_path))
    with pytest.raises(KeyboardInterrupt):  # a kill: the trainer never returns
        run_training(run, FakeTrainer(fail=KeyboardInterrupt()))
    assert not run.folder.exists() and finished_record(run) is None
    partial = list(run.folder.parent.iterdir())
    assert len(partial) == 1 and partial[0].name.startswith(".seed8.partial-")
    trainer = FakeTrainer()
    result = run_training(run, trainer)
    assert result.trained and len(trainer.calls) == 1 and finished_record(run) is not None
    assert [p.name for p in run.folder.parent.iterdir()] == ["seed8"]  # the stale partial folder is gone


def test_a_folder_without_its_record_is_not_a_finished_run(tmp_path):
    run = TrainingRun("a", "acc", 7, 100, str(tmp_path))
    run.folder.mkdir(parents=True)
    (run.folder / DONE_FILE).write_text("not json")
    assert finished_record(run) is None


def test_a_run_the_trainer_refuses_is_a_failure_and_the_others_go_on(tmp_path):
    runs = [TrainingRun("a", agent, 7, 100, str(tmp_path)) for agent in ("acc", "dqn")]
    refusing = FakeTrainer(fail=ConfigError("agent.hyperparams.learning_starts", "too long"))
    good = FakeTrainer()
    results = run_trainings(runs, None, __import__("rich.console").console.Console(quiet=True),
                            work=lambda r: run_training(r, refusing if r.agent == "acc" else good))
    by_agent = {r.run.agent: r for r in results}
    assert "learning_starts" in by_agent["acc"].failure and not runs[0].folder.exists()
    assert by_agent["dqn"].trained and finished_record(runs[1]) is not None


def test_run_trainings_counts_finished_runs_without_submitting_them(tmp_path):
    runs = [TrainingRun("a", "dqn", seed, 100, str(tmp_path)) for seed in (7, 8)]
    trainer = FakeTrainer()
    run_training(runs[0], trainer)
    results = run_trainings(runs, None, __import__("rich.console").console.Console(quiet=True),
                            work=lambda r: run_training(r, trainer))
    assert len(results) == 2 and [c[2] for c in trainer.calls] == [7, 8]
    assert sorted(r.trained for r in results) == [False, True]


def _scenario_dir(tmp_path: Path) -> Path:
    """The fixture scenario ``tiny_incast`` with a training protocol."""
    data = yaml.safe_load((HERE / "scenarios" / "tiny_incast.yaml").read_text())
    training = {"budget_steps": 50, "seeds": [1, 2, 3], "agents": {a: {"source": "test"} for a in LEARNERS}}
    folder = tmp_path / "scenarios"
    folder.mkdir(exist_ok=True)
    (folder / "tiny_incast.yaml").write_text(yaml.safe_dump({**data, "training": training}))
    return folder


def _run_cli(tmp_path: Path, *extra: str) -> int:
    # (the fixture's tiny_incast has 4 test seeds; the core suite scores 10)
    return cli.main(["run", "suite.scenarios=[tiny_incast]", "suite.test_seeds=3",
                     f"benchmark.scenario_dir={_scenario_dir(tmp_path)}",
                     f"results.dir={tmp_path / 'store'}", f"leaderboard.html={tmp_path / 'board.html'}",
                     f"hydra.run.dir={tmp_path / 'run'}", *extra])


@pytest.mark.parametrize(("args", "field", "says"), [
    (["train=maybe"], "train", "'maybe'"),
    (["train=[1]"], "train", "[1]"),
    (["benchmark.agent=dqn"], "benchmark.agent", "train=true"),
    (["benchmark.budget_steps=10"], "benchmark.budget_steps", "train=true"),
    (["train=true", "benchmark.budget_steps=0"], "benchmark.budget_steps", "0"),
    (["train=true", "benchmark.agent=a2c"], "benchmark.agent", "'a2c'"),
])
def test_bad_train_options_are_refused_naming_the_field(tmp_path, capsys, args, field, says):
    assert _run_cli(tmp_path, *args) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith(f"ecngym run: error: {field}:") and says in last, last
    assert not (tmp_path / "store").exists() or not any((tmp_path / "store").iterdir())


def test_train_true_without_a_suite_is_refused(tmp_path, capsys):
    assert cli.main(["run", "suite=null", "train=true", "seeds=[1]", f"results.dir={tmp_path / 'store'}",
                     f"hydra.run.dir={tmp_path / 'run'}"]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("ecngym run: error: train: got true") and "suite=core" in last, last


def test_train_true_on_a_suite_without_training_protocols_is_refused(tmp_path, capsys):
    assert cli.main(["run", "suite.scenarios=[tiny_incast]", "suite.test_seeds=3",
                     f"benchmark.scenario_dir={HERE / 'scenarios'}", "train=true", f"results.dir={tmp_path / 'store'}",
                     f"hydra.run.dir={tmp_path / 'run'}"]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("ecngym run: error: suite:") and "training" in last, last
