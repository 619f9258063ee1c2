"""The static references' searches: the grid extended past its edges, the per-role coordinate descent, old files."""

import copy
import math
from pathlib import Path

import pytest
import yaml

from ecngym.baselines.registry import build_controller
from ecngym.benchmark.headroom import add_table, scenario_headroom
from ecngym.benchmark.oracle import run_controller
from ecngym.benchmark.reference_search import (
    EXTENSION_STOPS,
    GRID_EXTENSION_FACTOR,
    MAX_GRID_EXTENSIONS,
    MAX_ROLE_ROUNDS,
    coordinate_descent,
    extend_grid,
    grid_edges,
)
from ecngym.benchmark.references import (
    compute_references,
    reference_controllers,
    write_references,
)
from ecngym.benchmark.scoring import OPTIONAL_REFERENCES, REFERENCES

#: A tiny star whose preset and templates sit at 4.4 / 8.8 KB. (A fixture: its score's direction is reversed, so the
#: search prefers small thresholds and walks down past the grid's low edge, 4.4 -> 2.2 -> 1.1 KB, to the packet floor:
#: the next halving, 550 B, is below one full data packet, 1052 B. Measured: slowdown_avg_all 1.12 / 1.20 / 1.25.)
FLOOR = yaml.safe_load((Path(__file__).resolve().parent / "scenarios" / "tiny_floor.yaml").read_text())
#: A tiny two-layer fabric (4 leaves, 1 spine, 2 hosts per leaf, 100 Gbps) with incasts across the spine, so both
#: layers queue and their best settings differ (measured: uniform 70.4 KB 1.643; leaf 17.6 KB + spine 400 KB 1.516).
ROLES = {
    "name": "tiny_roles", "id": "ecngym/TinyRoles-v1", "version": 1,
    "env": {"episode_steps": 40,
            "topology": {"kind": "leaf_spine", "leaves": 4, "spines": 1, "hosts_per_leaf": 2},
            "workload": {"load": 0.6, "incast": {"degree": 6}},
            "action": {"templates": [[8800, 17600, 0.2], [17600, 35200, 0.2], [70400, 140800, 0.2]]}},
    "protocol": {"train_seeds": [101], "test_seeds": [1002], "score": "slowdown_avg_all",
                 "lower_is_better": True, "second_axis": "slowdown_avg_>1MB"},
}


def _key(s):
    return f"{int(s[0])}/{int(s[1])}/{float(s[2]):g}"


def _search(grid, score, lower=True, floor=1, ceiling=10**9, **kw):
    """extend_grid on a made-up score of the setting; also returns every setting it evaluated."""
    asked = []

    def evaluate(settings):
        asked.extend(settings)
        return [score(s) for s in settings]

    out = extend_grid(grid, {_key(g): score(g) for g in grid}, evaluate, lower, floor, ceiling, **kw)
    return out, asked


GRID = [(8000, 16000, 0.2), (16000, 32000, 0.2)]


def test_the_grid_extends_past_the_low_edge_and_stops_at_the_packet_floor():
    out, asked = _search(GRID, score=lambda s: s[0], floor=1500)  # smaller is better all the way down
    assert asked == [(4000, 8000, 0.2), (2000, 4000, 0.2)]  # halved Kmin and Kmax, Pmax kept
    assert out.stopped == "kmin_floor"  # the next one, 1000 B, is below the floor
    assert out.settings == [*GRID, *asked] and [a["edge"] for a in out.added] == ["low", "low"]
    assert out.added[1]["from"] == [4000, 8000, 0.2] and out.added[1]["train_score"] == 2000


def test_the_grid_extends_past_the_high_edge_and_stops_at_the_buffer():
    out, asked = _search(GRID, score=lambda s: -s[0], ceiling=100_000)
    assert asked == [(32000, 64000, 0.2)] and out.stopped == "kmax_ceiling"  # next: Kmax 128 KB > 100 KB
    out, asked = _search(GRID, score=lambda s: s[0], lower=False, ceiling=128_000)  # higher is better: the same walk
    assert asked == [(32000, 64000, 0.2), (64000, 128000, 0.2)] and out.stopped == "kmax_ceiling"


def test_the_grid_extension_stops_inside_or_at_its_limit():
    # best at 4 KB: one step past the edge finds it, the next (2 KB) is worse, so 4 KB is inside
    out, asked = _search(GRID, score=lambda s: abs(math.log(s[0] / 4000)))
    assert asked == [(4000, 8000, 0.2), (2000, 4000, 0.2)] and out.stopped == "interior"
    assert grid_edges((4000, 8000, 0.2), out.settings) == []
    out, asked = _search(GRID, score=lambda s: s[0], max_extensions=1)
    assert asked == [(4000, 8000, 0.2)] and out.stopped == "max_extensions"
    out, asked = _search(GRID, score=lambda s: s[0])
    assert len(asked) == MAX_GRID_EXTENSIONS and out.stopped == "max_extensions"
    assert asked[-1][0] == GRID[0][0] // GRID_EXTENSION_FACTOR ** MAX_GRID_EXTENSIONS
    # a tie is no win: the template stays best and is inside once its neighbour is searched
    out, asked = _search(GRID, score=lambda s: max(s[0], 8000))
    assert asked == [(4000, 8000, 0.2)] and out.stopped == "interior"
    # a best setting inside the templates extends nothing
    out, asked = _search([*GRID, (32000, 64000, 0.2)], score=lambda s: abs(s[0] - 16000))
    assert asked == [] and out.stopped == "interior" and out.added == []
    assert set(EXTENSION_STOPS) >= {"interior", "kmin_floor", "kmax_ceiling", "max_extensions", "disabled"}


def test_a_grid_of_one_kmin_is_on_both_edges_and_extends_both_ways():
    out, asked = _search([(8000, 16000, 0.05), (8000, 32000, 0.2)], score=lambda s: abs(math.log(s[0] / 8000)))
    assert asked == [(4000, 8000, 0.05), (16000, 32000, 0.05)] and out.stopped == "interior"
    assert grid_edges((8000, 16000, 0.05), [(8000, 16000, 0.05)]) == ["low", "high"]


ROLE_GRID = [(1000, 2000, 0.2), (2000, 4000, 0.2), (4000, 8000, 0.2)]


def test_the_per_role_descent_finds_each_roles_best_and_never_scores_a_setting_twice():
    want = {"leaf": ROLE_GRID[0], "spine": ROLE_GRID[2]}
    asked = []

    def evaluate(assignments):  # separable: each role's distance to its best setting
        asked.extend(tuple(a[r] for r in ("leaf", "spine")) for a in assignments)
        return [sum(abs(a[r][0] - want[r][0]) for r in want) for a in assignments]

    start = ROLE_GRID[1]
    out = coordinate_descent(["leaf", "spine"], ROLE_GRID, start, 3000.0, evaluate, True)
    assert out.setting == want and out.train_score == 0 and out.stopped == "converged" and out.rounds == 2
    assert [m["role"] for m in out.moves] == ["leaf", "spine"]
    assert len(asked) == len(set(asked)) == out.evaluated  # each per-role setting scored once


def test_the_per_role_descent_never_leaves_its_start_without_a_strictly_better_score():
    out = coordinate_descent(["leaf", "spine"], ROLE_GRID, ROLE_GRID[1], 5.0, lambda a: [5.0] * len(a), True)
    assert out.setting == {"leaf": ROLE_GRID[1], "spine": ROLE_GRID[1]} and out.train_score == 5.0
    assert out.moves == [] and out.stopped == "converged" and out.rounds == 1

    def keeps_improving(assignments):  # each new setting a little better than the last: stops at the round limit
        keeps_improving.n += len(assignments)
        return [-keeps_improving.n + i for i in range(len(assignments))]

    keeps_improving.n = 0
    out = coordinate_descent(["a", "b"], ROLE_GRID, ROLE_GRID[0], 0.0, keeps_improving, True, max_rounds=2)
    assert out.stopped == "max_rounds" and out.rounds == 2 and MAX_ROLE_ROUNDS >= 2


@pytest.fixture
def scenario_dir(tmp_path):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    for sc in (FLOOR, ROLES):
        (folder / f"{sc['name']}.yaml").write_text(yaml.safe_dump(sc))
    return folder


def test_references_extend_the_grid_on_a_tiny_scenario_until_the_packet_floor(scenario_dir, tmp_path):
    doc = compute_references("tiny_floor", processes=1, scenario_dir=scenario_dir)
    search, ext = doc["search"], doc["search"]["extension"]
    assert search["templates"] == [[4400, 8800, 0.2], [8800, 17600, 0.2]]  # (the preset is one of them)
    assert [a["setting"] for a in ext["added"]] == [[2200, 4400, 0.2], [1100, 2200, 0.2]]
    assert search["settings"] == search["templates"] + [a["setting"] for a in ext["added"]]
    assert ext["enabled"] and ext["extended"] and ext["stopped"] == "kmin_floor"
    assert ext["why"] == EXTENSION_STOPS["kmin_floor"]
    assert ext["kmin_floor_bytes"] == 1052 > 1100 // GRID_EXTENSION_FACTOR  # one full data packet on the wire
    assert ext["kmax_ceiling_bytes"] == 32 * 2**20  # the preset's switch buffer
    assert search["edges"] == {"kmin_low_bytes": 1100, "kmin_high_bytes": 8800, "tuned_on": ["low"]}
    assert doc["static_tuned"]["setting"] == [1100, 2200, 0.2]
    scores = search["train_scores"]
    assert doc["static_tuned"]["train_score"] == max(scores.values()) == scores["1100/2200/0.2"]
    assert set(search["test_scores"]) == set(scores)  # the extensions ran on the test seeds too
    # the extended setting is played as a static setting: its controller replays the recorded test score
    path = write_references(doc, tmp_path / "references")
    ctls = reference_controllers("tiny_floor", path.parent, scenario_dir)
    assert set(ctls) == set(REFERENCES) - set(OPTIONAL_REFERENCES)  # one switch layer: no per-role reference
    assert doc["static_tuned_per_role"]["searched"] is False
    assert doc["static_tuned_per_role"]["setting"] == {"tor": [1100, 2200, 0.2]}
    # one traffic phase: phase_tuned is static_tuned, searched nothing and plays nothing
    assert doc["phase_tuned"]["searched"] is False and doc["phase_tuned"]["schedule"] == [[1100, 2200, 0.2]]
    assert doc["phase_tuned"]["test"] == doc["static_tuned"]["test"]
    for name in ("static_tuned", "oracle_phase"):
        summary, _, _ = run_controller(FLOOR["env"], build_controller(copy.deepcopy(ctls[name])), 1002)
        assert summary["slowdown_avg_all"] == doc[name]["test"]["score"]["1002"]
    row = scenario_headroom("tiny_floor", path.parent, scenario_dir)
    assert row["grid_extension"] == "kmin_floor" and row["grid_extended"] is True and row["tuned_on_edge"] == ["low"]
    assert row["S_tuned_per_role"] == row["S_tuned"] and row["per_role_searched"] is False


def test_references_grid_extension_limit_and_switch(scenario_dir):
    doc = compute_references("tiny_floor", processes=1, scenario_dir=scenario_dir, max_extensions=1, per_role=False)
    ext = doc["search"]["extension"]
    assert ext["stopped"] == "max_extensions" and [a["setting"] for a in ext["added"]] == [[2200, 4400, 0.2]]
    assert doc["static_tuned"]["setting"] == [2200, 4400, 0.2] and "static_tuned_per_role" not in doc
    doc = compute_references("tiny_floor", processes=1, scenario_dir=scenario_dir, extend=False, per_role=False)
    ext = doc["search"]["extension"]
    assert ext == {"enabled": False, "extended": False, "stopped": "disabled", "why": EXTENSION_STOPS["disabled"]}
    assert doc["search"]["settings"] == doc["search"]["templates"]
    assert doc["static_tuned"]["setting"] == [4400, 8800, 0.2]
    assert doc["search"]["edges"]["tuned_on"] == ["low"]  # clipped: the file says the best is on the edge
    assert doc["command"] == "ecngym benchmark references scenario=tiny_floor extend_grid=false per_role=false"


def test_the_per_role_reference_on_two_layers_is_a_setting_per_layer_never_worse_on_the_train_seeds(scenario_dir,
                                                                                                     tmp_path):
    doc = compute_references("tiny_roles", processes=1, scenario_dir=scenario_dir)
    per_role, tuned = doc["static_tuned_per_role"], doc["static_tuned"]
    assert doc["search"]["extension"]["stopped"] == "interior"  # (70.4 KB: inside the templates and the preset)
    assert per_role["searched"] is True and per_role["roles"] == ["leaf", "spine"]
    assert set(per_role["setting"]) == {"leaf", "spine"}
    assert all(s in doc["search"]["settings"] for s in per_role["setting"].values())
    assert per_role["train_score"] <= tuned["train_score"]  # by construction: it starts from static_tuned
    assert per_role["train_score"] < tuned["train_score"] and per_role["moves"]  # here the layers want others
    assert per_role["stopped"] in ("converged", "max_rounds") and 1 <= per_role["rounds"] <= per_role["max_rounds"]
    assert "coordinate descent" in per_role["method"]
    path = write_references(doc, tmp_path / "references")
    ctls = reference_controllers("tiny_roles", path.parent, scenario_dir)
    assert set(ctls) == set(REFERENCES) - {"phase_tuned"}  # (one traffic phase: no phase_tuned reference)
    # its controller plays the per-layer setting: it replays the recorded train and test scores
    for seed, want in ((101, per_role["train_score"]), (1002, per_role["test"]["score"]["1002"])):
        summary, _, _ = run_controller(ROLES["env"], build_controller(copy.deepcopy(ctls["static_tuned_per_role"])),
                                       seed)
        assert summary["slowdown_avg_all"] == want
    row = scenario_headroom("tiny_roles", path.parent, scenario_dir)
    assert row["S_tuned_per_role"] == per_role["test"]["score"]["1002"] and row["per_role_searched"] is True


def test_an_old_references_file_without_the_new_keys_reads_as_it_is(tmp_path):
    # the suite v1's files are frozen: written before the grid extension and the per-role reference
    from ecngym.benchmark.references import REFERENCE_DIR, read_references
    from ecngym.markdown_page import MarkdownPage

    doc = read_references("roce_multilayer_incast")
    assert "extension" not in doc["search"] and "static_tuned_per_role" not in doc
    ctls = reference_controllers("roce_multilayer_incast")
    assert set(ctls) == set(REFERENCES) - set(OPTIONAL_REFERENCES)
    row = scenario_headroom("roce_multilayer_incast")
    assert row["S_tuned_per_role"] is None and row["grid_extension"] is None and row["grid_extended"] is None
    assert row["S_tuned"] == pytest.approx(3.314, abs=1e-3)  # as the v1 file holds it
    assert row["tuned_on_edge"] == ["low"]  # 20/80 KB: the templates' lowest Kmin (v1 was clipped there)
    page = MarkdownPage("t", ["t"], "")
    add_table(page, [row])
    text = page.render()
    assert "templates (no extension); tuned on its low edge" in text and "—" in text
    assert (REFERENCE_DIR / "roce_multilayer_incast.yaml").read_text().startswith("# Written by the command below")


def test_the_searches_limits_are_refused_naming_them():
    from ecngym.error import ConfigError

    with pytest.raises(ConfigError, match=r"^references\.max_extensions: got -1; expected a whole number >= 0"):
        _search(GRID, score=lambda s: s[0], max_extensions=-1)
    with pytest.raises(ConfigError, match=r"^references\.max_role_rounds: got 0; expected a whole number >= 1"):
        coordinate_descent(["a"], ROLE_GRID, ROLE_GRID[0], 0.0, lambda a: [0.0] * len(a), True, max_rounds=0)
