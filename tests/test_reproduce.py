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


def test_the_laecn_quick_run_trains_within_its_own_budget(capsys):
    """``--quick`` trains 30 steps: the agents' warm-up must fit them (the agents refuse one they cannot reach)."""
    assert main(["reproduce", "laecn", "--quick", "--json-only"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["paper"] == "laecn" and {c["id"] for c in summary["claims"]} == {"R2/R3a", "R2/R3b", "R1", "R10"}
    assert all("acc 30, laecn 30, haecn 30" in c["setting"] for c in summary["claims"])


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


def test_claim_rows_carry_seeds_and_a_ci(capsys):
    from ecngym.reproduce.core import Claim, report

    summary = report("x", "t", [Claim("c", "a claim", "s", "m", 1, 2.0, True, True, "", (1, 2, 3), (1.5, 2.5)),
                                Claim("d", "another", "s", "m", 1, 2.0, False, False)])
    out = capsys.readouterr().out
    assert "seeds / 95% CI" in out and "3: 1,2,3; [1.5, 2.5]" in out and "none (one deterministic run)" in out
    assert "direction holds 1 of 2, within bar 1 of 2" in out
    assert summary["claims"][0]["seeds"] == [1, 2, 3] and summary["claims"][0]["ci"] == [1.5, 2.5]
    assert summary["claims"][1]["seeds"] == [] and summary["claims"][1]["ci"] is None


def test_confidence_intervals_and_the_minimum_effect_rule():
    from ecngym.reproduce.core import direction_with_min_effect, excludes_zero, mean_ci, paired_ci

    mean, ci = mean_ci([1.0, 2.0, 3.0])
    assert mean == 2.0 and ci[0] < 1.0 and ci[1] > 3.0  # t(0.975, 2) = 4.30: wider than the data
    assert mean_ci([5.0]) == (5.0, None)
    diff, ci = paired_ci([10.0, 11.0, 12.0], [8.0, 9.1, 9.9])
    assert abs(diff - 2.0) < 1e-9 and excludes_zero(ci)
    assert not excludes_zero(None) and not excludes_zero((-1.0, 1.0))
    # the paper's -0.372: -0.07 is 19 % of it (too small) unless the CI excludes zero on the paper's side
    assert not direction_with_min_effect(-0.07, -0.372, (-0.2, 0.05))
    assert direction_with_min_effect(-0.07, -0.372, (-0.1, -0.04))
    assert direction_with_min_effect(-0.08, -0.372, None)
    assert not direction_with_min_effect(0.2, -0.372, (0.1, 0.3))  # the wrong way, CI or not


def test_ecn_sharp_incast_queue_sits_where_dctcp_alpha_puts_it():
    """ECN#'s incast standing queue sits where DCTCP's alpha puts it, not at pst_target.

    Each running flow settles near 2/alpha packets (DCTCP cuts a marked window by alpha/2, grows one
    packet per RTT), so the windows' sum is 2 M / alpha, not BDP + pst_target.
    """
    from ecngym.reproduce import ecn_sharp

    at_ns = 4_000_000_000
    r = ecn_sharp.run_incast("ecn_sharp", ecn_sharp.incast_flows(at_ns=at_ns, seed=1), at_ns, diagnose=True,
                             ins_target_ns=220_000, pst_interval_ns=220_000, pst_target_ns=10_000)
    assert r["sojourn_min_us"] > 10  # the persistent rule is on: every sampled minimum above target
    assert r["persistent_marks_per_100us"] > 0 and r["instantaneous_marks_per_100us"] == 0
    settle = 2 * r["running_flows"] / r["alpha_mean"]
    assert abs(r["window_sum_pkts"] / settle - 1) < 0.3
    assert r["standing_queue_pkts"] > 2 * 8.6  # well above pst_target's 8.6 packets (10 us at 10 Gbps)


def test_bytetuning_incast_period_bounds_the_overload():
    from ecngym.reproduce import bytetuning as bt

    for kind, gbps in bt.INCAST_RATES_GBPS.items():
        period_ns = bt.incast_period_steps(kind) * bt._interval_ns(kind)
        qps, message_bytes = bt.INCAST_CASE_OF[kind]
        burst_bits = 8 * bt.INCAST["senders"] * qps * message_bytes
        assert period_ns >= 0.99 * bt.INCAST_PERIOD_NS
        assert burst_bits / gbps <= period_ns / 1.1 + bt._interval_ns(kind)  # load <= ~91 % of the line
    assert bt.incast_period_steps("39-to-1") == 48  # 100 Gbps: the paper's 1 ms, as before


def test_before_counts_print_beside_each_papers(tmp_path, capsys):
    before = tmp_path / "before.jsonl"
    before.write_text('noise\n{"paper": "pred-fcs", "claims": [{"id": "a", "metric": "m", "paper": 1, "ours": 2, '
                      '"direction_holds": true, "within_bar": false}]}\n')
    assert main(["reproduce", "pred-fcs", "--quick", "--before", str(before)]) == 0
    out = capsys.readouterr().out
    assert f"Before ({before}): Claims: direction holds 1 of 1, within bar 0 of 1." in out


@pytest.mark.parametrize("text", [None, "no json here\n"])
def test_a_bad_before_file_is_a_clear_error(tmp_path, capsys, text):
    path = tmp_path / "before.jsonl"
    if text is not None:
        path.write_text(text)
    assert main(["reproduce", "pred-fcs", "--quick", "--before", str(path)]) == 2
    err = capsys.readouterr().err
    assert "--before" in err and str(path) in err


def test_bytetuning_names_the_incast_cases_it_leaves_out_with_their_cost():
    from ecngym.reproduce import bytetuning as bt

    text = bt.incast_cases_left_out(89)
    # the cases run at every paper rate are not listed; the 125 MB burst is, at each of the three rates
    for qps, size in set(bt.INCAST_CASE_OF.values()):
        assert f"{qps} QPs x {size // 1000} KB" not in text
    assert text.count("Gbps:") == 3 * (len(bt.INCAST_CASES) - len(set(bt.INCAST_CASE_OF.values())))
    assert "50 QPs x 64 KB (124.8 MB per burst)" in text
    big, small = bt.incast_case_cost(50, 64_000, 25, 89), bt.incast_case_cost(10, 10_000, 25, 89)
    assert big["drain_ms"] == pytest.approx(8 * 39 * 50 * 64_000 / 25e6)  # bits / (bits per ms)
    assert big["data_gb"] / small["data_gb"] == pytest.approx(32)


def test_bytetuning_39_to_1_cases_send_their_own_bursts():
    from ecngym.reproduce import bytetuning as bt

    for kind in ("39-to-1@25Gbps/10x64KB", "39-to-1@200Gbps/50x10KB"):
        qps, size = bt.INCAST_CASE_OF[kind]
        flows = bt.incast_flows(bt.incast_period_steps(kind) * bt._interval_ns(kind), kind)  # one period
        assert len(flows) == bt.INCAST["senders"] * qps and set(flows["size_bytes"]) == {size}


@pytest.mark.parametrize(("scores", "tuned_us", "holds", "words"), [
    (1, 900.0, False, "not judged"), (5, 1000.0, False, "judged, not reproduced"), (5, 900.0, True, None)])
def test_bytetuning_incast_claim_is_judged_only_past_one_score(scores, tuned_us, holds, words):
    from ecngym.reproduce import bytetuning as bt

    r = {"distinct_scores": scores, "search_measurements": 24, "measurements": 28, "queue_change_pct": -5.0,
         "throughput_change_pct": 0.0, "dcqcn_fct_p50_us": 1000.0, "dcqcn_fct_p99_us": 1100.0,
         "tuned_fct_p50_us": tuned_us, "tuned_fct_p99_us": tuned_us + 100}
    claim = bt._incast_claim("39-to-1@200Gbps/10x64KB", 200, r)
    assert claim.direction_holds is holds and "10 QPs x 64 KB" in claim.setting
    assert claim.paper.startswith("-8.11 / -6.52")  # the paper's figures of this case, not the first case's
    if words:
        assert words in claim.note
