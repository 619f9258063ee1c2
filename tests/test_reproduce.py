"""``ecngym reproduce``: paper discovery, the table + JSON line format, bad input."""

import json

import pytest

from ecngym.cli import main
from ecngym.reproduce import papers


def test_list_names_every_paper_module(capsys):
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    assert "pred-fcs" in papers()
    for pid in papers():
        assert pid in out


def test_a_paper_prints_its_table_then_one_json_line(capsys):
    assert main(["reproduce", "pred-fcs", "--quick"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert any("claim" in line and "within bar" in line for line in lines)
    summary = json.loads(lines[-1])
    assert summary["paper"] == "pred-fcs" and len(summary["claims"]) >= 4
    for claim in summary["claims"]:
        assert {"id", "metric", "paper", "ours", "direction_holds", "within_bar"} <= set(claim)
        assert isinstance(claim["direction_holds"], bool) and isinstance(claim["within_bar"], bool)


def test_unknown_paper_is_a_clear_error(capsys):
    assert main(["reproduce", "nope"]) == 2
    err = capsys.readouterr().err
    assert "paper" in err and "'nope'" in err and "pred-fcs" in err


@pytest.mark.parametrize("pid", ["pred-fcs", "ecn-sharp", "r-aqm"])
def test_paper_modules_declare_id_title_and_run(pid):
    module = papers()[pid]
    assert module.PAPER_ID == pid and module.TITLE and callable(module.run)


def test_brackets_in_a_claim_are_printed_not_taken_as_markup(capsys):
    from ecngym.reproduce.core import Claim, report

    report("x", "t", [Claim("c", "[sensitivity] a claim", "[setting]", "m", 1, 2, True, False, "[note] n")])
    out = capsys.readouterr().out
    assert "[sensitivity] a claim" in out and "[note] n" in out
