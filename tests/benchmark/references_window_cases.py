"""The window oracle in the references file: stored per test seed, replayed exactly, never worse than static_tuned.

(These branch the simulation: ``test_references_window.py`` runs them in a process of their own.)
"""

import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from ecngym.benchmark.headroom import add_table, scenario_headroom
from ecngym.benchmark.oracle import run_controller
from ecngym.benchmark.oracle_window import WindowScheduleController
from ecngym.benchmark.oracle_window_cli import schedule_env
from ecngym.benchmark.references import compute_references, read_references, write_references
from ecngym.markdown_page import MarkdownPage

#: The tiny two-phase RoCE star (96 steps of 20.8 us, ~0.05 s an episode).
TINY = yaml.safe_load((Path(__file__).resolve().parent / "scenarios" / "tiny_phases.yaml").read_text())
#: A tiny star whose static_tuned lies past the templates (higher is better: the grid extends down to 1.1 / 2.2 KB,
#: which no template holds).
FLOOR = yaml.safe_load((Path(__file__).resolve().parent / "scenarios" / "tiny_floor.yaml").read_text())

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _folder(tmp_path, scenario):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / f"{scenario['name']}.yaml").write_text(yaml.safe_dump(scenario))
    return folder


def _replayed(scenario, block, seed, beam):
    """The score of the stored schedule played by its controller in a fresh episode of the oracle's env."""
    row = block["per_test_seed"][str(seed)]
    ctl = WindowScheduleController(window_steps=block["window_steps"],
                                   per_trace={row["trace_hash"]: row["beams"][str(beam)]["schedule"]})
    summary, _, _ = run_controller(schedule_env(scenario["env"], block["templates"]), ctl, seed)
    assert [e["window"] for e in ctl.log] == list(range(block["windows"]))  # (one decision per window)
    return float(summary[scenario["protocol"]["score"]])


def test_references_store_the_window_oracle_per_test_seed_and_its_schedules_replay(tmp_path):
    scen = _folder(tmp_path, TINY)
    doc = compute_references("tiny_phases", processes=2, scenario_dir=scen, extend=False, per_role=False,
                             oracle_window="0.7ms", beams="1,2")
    assert doc["command"].endswith("per_role=false oracle_window=0.7ms beam=1,2")
    block = doc["oracle_window"]
    # 0.7 ms of 20.8 us steps: 34 steps (707.2 us), 3 windows (the last one the episode's rest)
    assert (block["window"], block["window_steps"], block["window_ns"], block["windows"]) == ("0.7ms", 34, 707_200, 3)
    assert block["beams"] == [1, 2] and block["processes"] == 2
    tuned = doc["static_tuned"]
    assert tuned["setting"] in block["templates"]
    assert block["templates"][block["static_tuned_action"][0]] == tuned["setting"]
    assert set(block["per_test_seed"]) == {"1001", "1002"}
    for seed, row in block["per_test_seed"].items():
        # static_tuned held throughout, on the search's branch, is the references' own fresh run
        assert row["static_tuned_on_branch"] == tuned["test"]["score"][seed]
        for beam in ("1", "2"):
            found = row["beams"][beam]
            assert len(found["schedule"]) == block["windows"] and found["cpu_s"] > 0 and found["rollouts"] > 0
            assert found["score"] <= tuned["test"]["score"][seed]  # never worse than static_tuned
            assert found["score"] <= row["best_constant"]["score"]
            assert _replayed(TINY, block, int(seed), beam) == found["score"]  # exactly
    # (the replays are of switching schedules: measured, the oracle switches on both traces)
    assert all(len({tuple(a) for a in row["beams"]["1"]["schedule"]}) > 1 for row in block["per_test_seed"].values())
    for beam in ("1", "2"):
        cpu = [row["beams"][beam]["cpu_s"] for row in block["per_test_seed"].values()]
        assert block["cost"][beam]["cpu_s_per_trace_median"] == float(np.median(cpu))
    # the file round trip, and the headroom table's window part
    refs = tmp_path / "references"
    write_references(doc, refs)
    assert read_references("tiny_phases", refs, scen)["oracle_window"] == yaml.safe_load(yaml.safe_dump(block))
    row = scenario_headroom("tiny_phases", refs, scen)
    window = row["oracle_window"]
    assert window["beams"] == [1, 2] and window["window"] == "0.7ms"
    for beam in ("1", "2"):
        x = window["per_beam"][beam]
        scores = [block["per_test_seed"][s]["beams"][beam]["score"] for s in ("1001", "1002")]
        assert x["S_oracle_window"] == pytest.approx(np.mean(scores))
        assert x["headroom"] == pytest.approx(row["S_tuned"] - np.mean(scores))
        assert x["worse_than_tuned"] == []
    page = MarkdownPage("t", ["t"], "")
    add_table(page, [row])
    text = page.render()
    assert "### The window oracle" in text
    assert re.search(r"\| tiny_phases +\| 0\.7ms +\| greedy +\| [0-9.]+ +\| [-+0-9.]+ \\\[.*\| 0 / [0-2] ", text)
    assert re.search(r"\| tiny_phases +\| 0\.7ms +\| 2 +\| ", text)


def test_the_window_oracle_plays_a_static_tuned_past_the_templates(tmp_path):
    scen = _folder(tmp_path, FLOOR)
    doc = compute_references("tiny_floor", processes=1, scenario_dir=scen, per_role=False, oracle_window="300us")
    tuned, block = doc["static_tuned"], doc["oracle_window"]
    assert tuned["setting"] == [1100, 2200, 0.2] and tuned["setting"] not in doc["search"]["templates"]
    assert block["beams"] == [1] and block["window_steps"] == 14 and block["windows"] == 3
    assert block["templates"][:2] == doc["search"]["templates"] and tuned["setting"] in block["templates"]
    row = block["per_test_seed"]["1002"]
    assert row["static_tuned_on_branch"] == tuned["test"]["score"]["1002"]
    assert row["beams"]["1"]["score"] >= tuned["test"]["score"]["1002"]  # (higher is better here)
    assert _replayed(FLOOR, block, 1002, 1) == row["beams"]["1"]["score"]
    # the same search without the window oracle leaves the file as before: no block
    plain = compute_references("tiny_floor", processes=1, scenario_dir=scen, per_role=False)
    assert "oracle_window" not in plain and set(doc) - {"oracle_window"} == set(plain)
    assert plain["command"] == "ecngym benchmark references scenario=tiny_floor per_role=false"
