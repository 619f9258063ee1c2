"""The ``phase_tuned`` reference: one setting per phase, chosen on the train seeds, the same schedule on every trace."""

import copy
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from ecngym.baselines.registry import build_controller
from ecngym.benchmark.headroom import add_table, scenario_headroom
from ecngym.benchmark.oracle import run_controller
from ecngym.benchmark.reference_search import PHASE_TUNED_DESCRIPTION, phase_tuned_reference
from ecngym.benchmark.references import compute_references, read_references, reference_controllers, write_references
from ecngym.benchmark.scoring import OPTIONAL_REFERENCES, REFERENCES
from ecngym.error import ConfigError
from ecngym.markdown_page import MarkdownPage

#: The tiny two-phase RoCE star (scenarios/tiny_phases.yaml) on train seed 103: bulk, then
#: heavy incast from 1 ms; two templates. On its train seed the phases want different settings (measured: static_tuned
#: 20/40 KB 3.495; bulk 80/320 KB then incast 20/40 KB 3.470).
TINY = yaml.safe_load((Path(__file__).resolve().parent / "scenarios" / "tiny_phases.yaml").read_text())
TINY["protocol"]["train_seeds"] = [103]
GRID = [(1000, 2000, 0.2), (2000, 4000, 0.2), (4000, 8000, 0.2)]


def _made_up(want):
    """A ``run`` callback whose score is each phase's Kmin distance to ``want`` (the same on every seed)."""
    played = []

    def run(configs, seeds):
        played.extend(configs)
        return [{"score": float(sum(abs(s[0] - w[0]) for s, w in zip(c["settings"], want, strict=True))),
                 "second_axis": 0.0} for c in configs for _ in seeds]

    return run, played


def test_the_phase_search_is_the_descent_over_phases_from_static_tuned_on_made_up_scores():
    want = [GRID[0], GRID[2]]
    run, played = _made_up(want)
    start = GRID[1]
    block = phase_tuned_reference(["bulk", "incast"], [0, 1_000_000], GRID, start, 3000.0, {}, run, [1, 2], [7, 8],
                                  True, "scenarios.x")
    assert block["searched"] is True and block["schedule"] == [list(GRID[0]), list(GRID[2])]
    assert block["train_score"] == 0.0 < 3000.0 and block["stopped"] == "converged"
    assert [m["phase"] for m in block["moves"]] == ["bulk", "incast"] and "role" not in block["moves"][0]
    assert block["test"]["score"] == {"7": 0.0, "8": 0.0} and block["description"] == PHASE_TUNED_DESCRIPTION
    assert "train seeds" in block["description"] and "same schedule on every trace" in block["description"]
    # every schedule it played is one schedule for every trace (no per-trace choice), switched at the phases
    assert all(c["name"] == "phase_tuned" and "per_trace" not in c and c["starts"] == [0, 1_000_000] for c in played)
    # a start that no schedule beats is kept: the train score is never worse than static_tuned's
    run, _ = _made_up([start, start])
    block = phase_tuned_reference(["a", "b"], [0, 5], GRID, start, 0.0, {}, run, [1], [7], True, "scenarios.x")
    assert block["schedule"] == [list(start)] * 2 and block["moves"] == [] and block["train_score"] == 0.0


def test_one_phase_searches_nothing_and_repeated_phase_names_are_refused():
    tuned_test = {"score": {"7": 1.5}, "second_axis": {"7": 2.0}}
    block = phase_tuned_reference(["all"], [0], GRID, GRID[1], 1.2, tuned_test, None, [1], [7], True, "scenarios.x")
    assert block["searched"] is False and block["same_as"] == "static_tuned" and "one traffic phase" in block["note"]
    assert block["schedule"] == [list(GRID[1])] and block["train_score"] == 1.2 and block["test"] == tuned_test
    with pytest.raises(ConfigError, match=r"^scenarios\.x\.protocol\.phases: got phase names \['a', 'a'\]"):
        phase_tuned_reference(["a", "a"], [0, 5], GRID, GRID[1], 1.0, {}, None, [1], [7], True, "scenarios.x")


def test_phase_tuned_on_a_two_phase_scenario_is_never_worse_on_train_and_replays_its_test_scores(tmp_path):
    scen, refs = tmp_path / "scenarios", tmp_path / "references"
    scen.mkdir()
    (scen / "tiny_phases.yaml").write_text(yaml.safe_dump(TINY))
    doc = compute_references("tiny_phases", processes=1, scenario_dir=scen, extend=False, per_role=False)
    block, tuned = doc["phase_tuned"], doc["static_tuned"]
    assert block["searched"] is True and block["phases"] == ["bulk", "incast"] and block["start"] == "static_tuned"
    assert block["phase_starts_ns"] == doc["phase_starts_ns"] == [0, 1_000_000]
    assert len(block["schedule"]) == 2 and all(s in doc["search"]["settings"] for s in block["schedule"])
    assert block["train_score"] <= tuned["train_score"]  # by construction: it starts from static_tuned
    assert block["train_score"] < tuned["train_score"] and block["moves"]  # here the phases want others
    assert block["schedule"][0] != block["schedule"][1]  # a switching schedule
    assert 1 <= block["rounds"] <= block["max_rounds"] and block["stopped"] in ("converged", "max_rounds")
    assert set(block["test"]["score"]) == {"1001", "1002"}
    write_references(doc, refs)
    assert read_references("tiny_phases", refs, scen)["phase_tuned"] == yaml.safe_load(yaml.safe_dump(block))
    ctls = reference_controllers("tiny_phases", refs, scen)
    assert set(ctls) == set(REFERENCES) - {"static_tuned_per_role"}  # per_role=false: no per-role reference
    cfg = ctls["phase_tuned"]
    assert cfg["settings"] == block["schedule"] and "per_trace" not in cfg  # the same schedule on every trace
    # its controller replays the recorded test scores and the search's train score exactly
    for seed in (1001, 1002):
        summary, _, _ = run_controller(TINY["env"], build_controller(copy.deepcopy(cfg)), seed)
        assert summary["slowdown_avg_all"] == block["test"]["score"][str(seed)]
    summary, _, _ = run_controller(TINY["env"], build_controller(copy.deepcopy(cfg)), 103)
    assert summary["slowdown_avg_all"] == block["train_score"]
    # the headroom: S_phase_tuned and the paired headroom S_tuned - S_phase_tuned, in a second table
    row = scenario_headroom("tiny_phases", refs, scen)
    p = row["phase_tuned"]
    scores = [block["test"]["score"][s] for s in ("1001", "1002")]
    assert p["S_phase_tuned"] == pytest.approx(np.mean(scores))
    assert p["headroom"] == pytest.approx(row["S_tuned"] - np.mean(scores))
    assert p["headroom_ci"][0] <= p["headroom"] <= p["headroom_ci"][1]
    page = MarkdownPage("t", ["t"], "")
    add_table(page, [row])
    text = page.render()
    assert "### The phase-tuned schedule" in text
    assert re.search(r"\| tiny_phases +\| bulk [0-9.]+/[0-9.]+ KB, [0-9.]+; incast [0-9.]+/[0-9.]+ KB, [0-9.]+ +\|",
                     text)
    # phase_tuned=false leaves it out, and says so in the command
    plain = compute_references("tiny_phases", processes=1, scenario_dir=scen, extend=False, per_role=False,
                               phase_tuned=False)
    assert "phase_tuned" not in plain and set(doc) - {"phase_tuned"} == set(plain)
    assert plain["command"].endswith("per_role=false phase_tuned=false")


def test_an_old_file_without_phase_tuned_reads_as_it_is_and_plays_none():
    doc = read_references("roce_multilayer_incast")  # a frozen suite v1 file
    assert "phase_tuned" not in doc
    assert "phase_tuned" not in reference_controllers("roce_multilayer_incast")
    assert "phase_tuned" in OPTIONAL_REFERENCES and "phase_tuned" in REFERENCES
    row = scenario_headroom("roce_multilayer_incast")
    assert row["phase_tuned"] is None
    page = MarkdownPage("t", ["t"], "")
    add_table(page, [row])
    assert "phase-tuned" not in page.render() and "phase_tuned" not in page.render()


def test_the_command_searches_phase_tuned_unless_told_not_to():
    from ecngym.benchmark.references import ReferencesArgs
    from ecngym.cli import key_value_arguments

    assert key_value_arguments(ReferencesArgs, ["scenario=a"], "usage").phase_tuned is True
    assert key_value_arguments(ReferencesArgs, ["scenario=a", "phase_tuned=false"], "usage").phase_tuned is False
    with pytest.raises(ConfigError, match=r"^phase_tuned: "):
        key_value_arguments(ReferencesArgs, ["scenario=a", "phase_tuned=maybe"], "usage")
