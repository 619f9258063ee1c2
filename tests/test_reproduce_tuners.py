"""`ecngym reproduce pred` / `bytetuning` and `ecngym eval -m` over the tuners on identical traces."""

import json

import pytest

from ecngym.cli import main
from ecngym.reproduce import papers


@pytest.mark.parametrize("pid", ["pred", "bytetuning"])
def test_tuner_papers_are_discovered(pid):
    module = papers()[pid]
    assert module.PAPER_ID == pid and module.TITLE and callable(module.run)


def test_eval_sweeps_static_pred_and_bytetuning_on_identical_traces(tmp_path, capsys):
    assert main(["eval", "-m", "controller=static_dcqcn,static_hpcc,pred,bytetuning", "env=roce_incast",
                 "env.kwargs.episode_steps=12", "seed=3",
                 f"hydra.sweep.dir={tmp_path}"]) == 0
    runs = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("*/eval.json"))]
    names = {r["episodes"][0]["controller"] for r in runs}
    assert names == {"static_dcqcn", "static_hpcc", "pred", "bytetuning"}
    hashes = {r["episodes"][0]["trace_hash"] for r in runs}
    assert len(hashes) == 1  # every controller saw the same trace
    assert all(r["episodes"][0]["flows_total"] > 0 for r in runs)
    logs = sorted(p.parent.name for p in tmp_path.glob("*/controller_log.csv"))
    assert len(logs) == 4
    out = capsys.readouterr().out
    assert "pred on ecngym/RoceIncast-v0" in out and "identical traces per (env, seed): yes" in out
    assert (tmp_path / "comparison.csv").exists()


@pytest.mark.slow
@pytest.mark.parametrize("pid", ["pred", "bytetuning"])
def test_reproduce_prints_the_table_and_json(pid, capsys):
    assert main(["reproduce", pid]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["paper"] == pid and len(summary["claims"]) >= 4
