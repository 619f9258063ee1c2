"""The window oracle in the references and the headroom table: its arguments, its shortfalls' reasons, old files."""

import copy
import hashlib

import pytest

from ecngym.benchmark.headroom import (
    add_table,
    mean_ci,
    scenario_headroom,
    shown_beams,
    window_headroom,
    window_shortfall_reason,
)
from ecngym.benchmark.references import REFERENCE_DIR, compute_references
from ecngym.error import ConfigError
from ecngym.markdown_page import MarkdownPage

A, B, C = [20_000, 40_000, 0.05], [80_000, 320_000, 0.2], [400_000, 1_600_000, 0.2]


def test_the_window_oracle_cases_pass_in_a_process_of_their_own(run_cases):  # noqa: D103 - they branch
    run_cases("benchmark/references_window_cases.py")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"oracle_window": "abc"}, r"^oracle_window: cannot parse 'abc' as a duration"),
    ({"oracle_window": "0ms"}, r"^oracle_window: got '0ms'; expected a positive duration"),
    ({"oracle_window": "2ms", "beams": [0]}, r"^beam: got \[0\]; expected beam widths >= 1"),
    ({"oracle_window": "2ms", "beams": "1,x"}, r"^beam: got '1,x'"),
    ({"oracle_window": "2ms", "beams": "2,2"}, r"^beam: got '2,2'; give each beam width once"),
])
def test_bad_window_arguments_are_refused_naming_them_before_anything_runs(kwargs, message):
    with pytest.raises(ConfigError, match=message):  # (no such scenario: refused before it is read)
        compute_references("nowhere", **kwargs)


def test_the_references_command_refuses_bad_window_arguments_naming_them(capsys):
    from ecngym.cli import main

    for args, message in ((["oracle_window=abc"], "oracle_window: cannot parse 'abc' as a duration"),
                          (["oracle_window=2ms", "beam=0"], "beam: got '0'; expected beam widths >= 1"),
                          (["beam=2"], "beam: got '2' without oracle_window")):
        assert main(["benchmark", "references", "scenario=nowhere", *args]) == 2
        err = capsys.readouterr().err
        assert message in err and "scenarios.nowhere" not in err  # refused before the scenario is read


def _doc(window_scores, tuned, phase, phase_settings, on_branch=None, lower=True, starts=(0, 1_000_000),
         window_steps=34, templates=(A, B, C)):
    """A references document in the file's shape (made-up scores) with a window oracle at beams 1 and 2."""
    seeds = [str(s) for s in range(len(tuned))]
    interval_ns = 20_800
    return {
        "lower_is_better": lower,
        "static_tuned": {"setting": A, "test": {"score": dict(zip(seeds, tuned, strict=True))}},
        "oracle_phase": {"phase_starts_ns": list(starts), "test": {"score": dict(zip(seeds, phase, strict=True))},
                         "per_test_seed": {s: {"trace_hash": f"h{s}", "settings": p}
                                           for s, p in zip(seeds, phase_settings, strict=True)}},
        "oracle_window": {
            "window": "0.7ms", "window_ns": window_steps * interval_ns, "window_steps": window_steps, "windows": 3,
            "beams": [1, 2], "templates": [list(t) for t in templates], "static_tuned_action": [0],
            "per_test_seed": {s: {"trace_hash": f"h{s}",
                                  "static_tuned_on_branch": t if on_branch is None else on_branch[i],
                                  "beams": {"1": {"score": w[0], "schedule": [[0]] * 3, "cpu_s": 1.0},
                                            "2": {"score": w[1], "schedule": [[0]] * 3, "cpu_s": 2.0}}}
                              for i, (s, t, w) in enumerate(zip(seeds, tuned, window_scores, strict=True))},
            "cost": {"1": {"cpu_s_per_trace_median": 1.0}, "2": {"cpu_s_per_trace_median": 2.0}}},
    }


def test_the_window_headroom_is_paired_and_counts_the_traces_worse_than_each_reference():
    doc = _doc(window_scores=[(3.0, 2.9), (4.1, 4.0), (5.0, 5.0)], tuned=[3.2, 4.0, 5.1], phase=[3.1, 4.05, 4.9],
               phase_settings=[[A, B], [A, A], [B, B]])
    out = window_headroom(doc, ["0", "1", "2"])
    assert out["beams"] == [1, 2] and out["window"] == "0.7ms"
    greedy, beam = out["per_beam"]["1"], out["per_beam"]["2"]
    assert greedy["S_oracle_window"] == pytest.approx(12.1 / 3)
    assert (greedy["headroom"], *greedy["headroom_ci"]) == pytest.approx(mean_ci([0.2, -0.1, 0.1]))
    assert [e["seed"] for e in greedy["worse_than_tuned"]] == ["1"]
    assert [e["seed"] for e in greedy["worse_than_phase"]] == ["1", "2"]
    assert beam["worse_than_tuned"] == [] and [e["seed"] for e in beam["worse_than_phase"]] == ["2"]
    assert beam["cpu_s_per_trace_median"] == 2.0
    # higher is better: the same scores, the other way round
    doc["lower_is_better"] = False
    out = window_headroom(doc, ["0", "1", "2"])
    assert [e["seed"] for e in out["per_beam"]["1"]["worse_than_tuned"]] == ["0", "2"]
    assert shown_beams({"beams": [1, 2, 4]}) == [1, 4] and shown_beams({"beams": [2, 3]}) == [3]


def test_each_shortfall_names_its_reason():
    def reason(ref, **kw):
        return window_shortfall_reason(_doc(**kw), "0", 1, ref)

    base = {"window_scores": [(3.5, 3.5)], "tuned": [3.2], "phase": [3.1]}
    # against static_tuned: a branch that did not replay the fresh run, a setting not searched, else a bug
    assert "scored 3.3 on the search's branch but 3.2 in the references' fresh run" in reason(
        "static_tuned", phase_settings=[[A, B]], on_branch=[3.3], **base)
    doc = _doc(phase_settings=[[A, B]], **base)
    doc["oracle_window"]["per_test_seed"]["0"]["static_tuned_on_branch"] = None
    assert window_shortfall_reason(doc, "0", 1, "static_tuned") == ("static_tuned's setting was not among the "
                                                                     "search's candidates")
    assert reason("static_tuned", phase_settings=[[A, B]], **base).startswith("a bug: the search evaluated")
    # against oracle_phase: a setting the search lacks, a switch off the windows, a dropped prefix, a constant
    assert "oracle_phase plays 400/1600 KB, 0.2, which is not among" in reason(
        "oracle_phase", phase_settings=[[A, C]], templates=(A, B), **base)
    assert "switches at step 49 (1.0192 ms), not on a window boundary (every 34 steps, 0.7ms)" in reason(
        "oracle_phase", phase_settings=[[A, B]], **base)
    assert reason("oracle_phase", phase_settings=[[A, B]], starts=(0, 34 * 20_800), **base) == (
        "the beam (width 1) dropped the phase schedule's prefix; a wider beam may keep it")
    assert "holds one setting, a constant the search evaluated" in reason(
        "oracle_phase", phase_settings=[[B, B]], **base)


def test_an_old_references_file_prints_without_the_window_table_and_is_left_as_it_is(capsys):
    from ecngym.cli import main

    path = REFERENCE_DIR / "roce_multilayer_incast.yaml"
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    row = scenario_headroom("roce_multilayer_incast")
    assert row["oracle_window"] is None
    page = MarkdownPage("t", ["t"], "")
    add_table(page, [row])
    text = page.render()
    assert "### The window oracle" not in text and "None of these references files holds the window oracle" in text
    assert "roce_multilayer_incast" in text
    assert main(["benchmark", "headroom", "scenario=roce_multilayer_incast,roce_storage_incast"]) == 0
    out = capsys.readouterr().out
    assert "None of these references files holds the window oracle" in out and '"oracle_window": null' in out
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before  # (v1 is frozen: read, never rewritten)


def test_a_scenario_with_the_window_oracle_beside_one_without_prints_both_tables():
    old = scenario_headroom("roce_storage_incast")
    new = copy.deepcopy(old)
    new["scenario"] = "made_up"
    doc = _doc(window_scores=[(3.0, 2.9), (4.1, 4.0)], tuned=[3.2, 4.0], phase=[3.1, 4.05],
               phase_settings=[[A, B], [A, A]])
    new["oracle_window"] = window_headroom(doc, ["0", "1"])
    page = MarkdownPage("t", ["t"], "")
    add_table(page, [old, new])
    text = page.render()
    assert "### The window oracle" in text and "| made_up " in text and "| roce_storage_incast " in text
    assert "made_up (greedy): worse than static_tuned on test seed 1: a bug" in text
    assert "made_up (greedy): worse than oracle_phase on test seed 1: oracle_phase holds one setting" in text
    assert "0 of 1 scenarios with a window oracle have a window headroom whose 95% CI excludes 0" in text
    window_rows = [ln for ln in text.split("### The window oracle")[1].splitlines() if ln.startswith("| made_up")]
    assert len(window_rows) == 2 and "| 1 / 1 " in window_rows[0] and "| 0 / 0 " in window_rows[1]
