"""``ecngym reproduce <paper> --sensitivity``: the flag, a quick sweep's rows and JSON line, bad input."""

import json

import pytest

from ecngym.cli import main
from ecngym.reproduce.sensitivity import SWEEPS, sweep_module


def _json_last_line(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_quick_sweep_prints_a_row_per_grid_point_then_one_json_line(capsys, jobs):
    assert main(["reproduce", "r-aqm", "--sensitivity", "--quick", "--jobs", jobs]) == 0
    out = capsys.readouterr().out
    assert "collapse_onset" in out and "holds at" in out
    summary = _json_last_line(out)
    assert summary["paper"] == "r-aqm" and summary["wall_s"] >= 0 and summary["cpu_s"] >= 0
    onset, points = summary["sensitivity"]
    assert onset["grid"] == ["initial window", "floor"] and onset["points"] == len(onset["rows"]) == 2
    assert {(r["initial window"], r["floor"]) for r in onset["rows"]} == {(1, 2), (10, 2)}
    assert points["points"] == 2 * 2 * 2  # IW x N x scheme
    for sweep in summary["sensitivity"]:
        assert sweep["holds_at"] == sum(r["holds"] for r in sweep["rows"])
        assert all(isinstance(r["holds"], bool) and isinstance(r["near_paper"], bool) for r in sweep["rows"])
    runs = {(r["initial window"], r["N"], r["scheme"]): r for r in points["rows"]}
    assert runs[(1, 320, "ECN")]["RTOs"] > 0  # 320 x 2 packets of floor overflow the 300-packet buffer


def test_sweep_writes_its_page(tmp_path, capsys):
    page = tmp_path / "sens.md"
    assert main(["reproduce", "r-aqm", "--sensitivity", "--quick", "--json-only", "--markdown", str(page)]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 1  # --json-only: the JSON line alone
    text = page.read_text()
    assert text.startswith("# Reproductions: sensitivity") and "## r-aqm" in text and "s CPU time" in text
    assert "| initial window" in text


def test_every_registered_sweep_has_a_title_and_run():
    for pid in SWEEPS:
        module = sweep_module(pid)
        assert module.TITLE and callable(module.run)


@pytest.mark.parametrize("paper", ["laecn", "nope"])
def test_a_paper_without_a_sweep_is_refused_naming_the_field(capsys, paper):
    assert main(["reproduce", paper, "--sensitivity"]) == 2
    err = capsys.readouterr().err
    assert "paper" in err and repr(paper) in err and ("ecn-sharp" in err or "pred-fcs" in err)


@pytest.mark.parametrize("argv", [["r-aqm", "--sensitivity", "--jobs", "3"], ["r-aqm", "--sensitivity", "--jobs", "0"],
                                  ["r-aqm", "--jobs", "2"]])
def test_bad_jobs_are_refused_naming_the_field(capsys, argv):
    assert main(["reproduce", *argv]) == 2
    assert "--jobs" in capsys.readouterr().err


def test_sweep_module_refuses_an_unknown_paper():
    from ecngym.error import ConfigError

    with pytest.raises(ConfigError, match="paper"):
        sweep_module("pred-fcs")
