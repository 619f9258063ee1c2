"""``ecngym bench fabric`` / ``bench scale`` print one JSON object as the last line (format, not timing)."""

import json

import pytest

from ecngym import cli


def _last_json(capsys):
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_bench_scale_reports_every_case(capsys):
    assert cli.main(["bench", "scale", "--k", "4", "--loads", "0.3,0.6", "--sim-time", "200us", "--json-only"]) == 0
    result = _last_json(capsys)
    assert [(c["k"], c["load"]) for c in result["cases"]] == [(4, 0.3), (4, 0.6)]
    for case in result["cases"]:
        assert case["hosts"] == 16 and case["data_packet_hops_per_s"] > 0 and case["events_per_s"] > 0
        assert case["build_s"] > 0 and case["peak_rss_mb"] > 0 and case["sim_s_per_wall_s"] > 0
        assert case["data_packet_hops_per_cpu_s"] > 0 and 2 < case["events_per_data_packet_hop"] < 8
        # the event list at the end: flow starts and timers wait beyond the wheel's horizon
        assert case["pending_events"] >= case["far_events"] > 0 and case["far_cancelled_events"] >= 0
        assert case["packets_in_flight"] >= 0
        assert 0 < case["fabric_mb"] < case["peak_rss_mb"]  # the fabric's own share of the process's memory
    assert result["cases"][1]["flows"] > result["cases"][0]["flows"]  # 60 % load offers more flows
    assert result["hops_per_s_vs_k4"]["4"] == result["hops_per_cpu_s_vs_k4"]["4"] == 1.0
    assert result["sim_time_s"] == 2e-4
    assert result["bare_events_per_s"] > 0


def test_bench_scale_refuses_bad_arguments(capsys):
    for args in (["--k", "5"], ["--loads", "1.5"], ["--k", "x"], ["--scheduler", "fast"], ["--sim-time", "0us"]):
        assert cli.main(["bench", "scale", *args]) == 2, args
        assert "error" in capsys.readouterr().err
    # beyond topology.fat_tree's bound: was a ConfigError traceback from the case, exit 1
    assert cli.main(["bench", "scale", "--k", "1000"]) == 2
    assert "--k: need even arities in [2, 64], got '1000'" in capsys.readouterr().err


def test_bench_fabric_times_ours_stock_and_the_whole_process(capsys):
    assert cli.main(["bench", "fabric", "--scenarios", "A", "--seeds", "1", "--whole-process", "1",
                     "--json-only"]) == 0
    result = _last_json(capsys)
    assert result["flows_completed"] == result["flows_total"] == 605
    assert result["scheduler_speedup"] > 0 and result["bare_events_per_s_stock"] > 0
    assert result["whole_process_s"] > result["import_s"] > 0


def test_bench_fabric_replays_each_cc_beside_its_reference_run_and_says_what_int_costs(capsys):
    assert cli.main(["bench", "fabric", "--scenarios", "A", "--cc", "dcqcn_vwin,hp", "--seeds", "1",
                     "--stock-scheduler", "", "--whole-process", "0", "--json-only"]) == 0
    result = _last_json(capsys)
    assert set(result["runs"]) == {"A/dcqcn_vwin", "A/hp"}
    for run in result["runs"].values():
        assert run["flows_completed"] == run["flows_total"] == 605
        # the bounds (which the 5-seed bench meets) hold at seed 1 too for these two
        assert run["slowdown_rel_err_median"] < 0.15 and run["slowdown_rel_err_p99"] < 0.30
        assert run["events"] > 0 and run["reference_events"] > 0
        # every packet-hop's arrival, data and ACK (2 per data hop), and only the ends of
        # serialisation that send something: 4.0 (vwin) and 4.2 (hp) when every end was an event
        assert run["events_per_data_hop"] < 3.6
    vwin, hp = result["runs"]["A/dcqcn_vwin"], result["runs"]["A/hp"]
    # INT: 42 B on every data packet and 32 B more on every ACK, the same packets otherwise
    assert hp["wire_bytes"] - vwin["wire_bytes"] == 1_753_650 * 42 + 1_753_650 * 32
    assert result["int_cost"]["A"]["wire_bytes"] == round(hp["wire_bytes"] / vwin["wire_bytes"] - 1, 4)
    assert result["int_cost"]["A"]["events"] > 0 and result["int_cost"]["A"]["wall_s_interleaved"] > -1
    # HPCC's incast headline: a near-empty queue; utilisation counted three ways, in this order
    incast = result["hpcc_incast"]
    assert incast["queue_median_bytes"] < 5_000 and incast["packet_bytes"] == 1094
    assert 0.9 < incast["busy"] < incast["utilisation"] < 1
    assert incast["goodput"] == pytest.approx(incast["utilisation"] * 1000 / 1094, abs=1e-3)
    # and where it goes: the senders' own U at its fixed point, less the queue term
    assert incast["u_fixed_point"] == pytest.approx(0.95 + 16 * 40e6 / 100e9)
    assert incast["utilisation"] < incast["u_estimate"] == pytest.approx(incast["u_fixed_point"], abs=0.002)


def test_bench_fabric_replays_an_hpcc_config_and_writes_the_reference_fct_format(capsys, tmp_path):
    from ecngym.sim_backend.data import hpcc_reference_path

    config = hpcc_reference_path("config_A_hp.txt")
    ours = tmp_path / "ours.txt"
    assert cli.main(["bench", "fabric", "--hpcc-config", str(config), "--seeds", "1", "--stock-scheduler", "",
                     "--fct-out", str(ours), "--pfc-out", str(tmp_path / "pfc.txt"), "--json-only"]) == 0
    run = _last_json(capsys)["runs"]["hpcc_config"]
    # the config's FCT_OUTPUT_FILE is found in outputs/ beside it and compared
    assert run["flows_completed"] == 605 and run["slowdown_rel_err_median"] < 0.15
    # no PFC pause, as in the reference run (its PFC_OUTPUT_FILE is empty)
    assert run["pfc_frames"] == run["reference_pfc_frames"] == run["pfc_pauses"] == 0
    assert (tmp_path / "pfc.txt").read_text() == ""
    lines = ours.read_text().splitlines()
    assert len(lines) == 605 and all(len(line.split()) == 8 for line in lines)
    # our own file as the reference: the same table (up to its standalone FCTs truncated to whole ns)
    assert cli.main(["bench", "fabric", "--hpcc-config", str(config), "--seeds", "1", "--stock-scheduler", "",
                     "--reference-fct", str(ours), "--fct-out", str(tmp_path / "again.txt"),
                     "--pfc-out", str(tmp_path / "pfc2.txt"), "--json-only"]) == 0
    again = _last_json(capsys)["runs"]["hpcc_config"]
    assert again["slowdown_rel_err_median"] <= 1e-3 and again["slowdown_rel_err_p99"] <= 1e-3
    assert (tmp_path / "again.txt").read_text() == ours.read_text()


def test_bench_fabric_refuses_bad_cc_and_hpcc_options(capsys, tmp_path):
    for args in (["--cc", "bbr"], ["--cc", ""], ["--fct-out", "x.txt"], ["--reference-fct", "x.txt"],
                 ["--pfc-out", "x.txt"]):
        assert cli.main(["bench", "fabric", *args]) == 2, args
        assert "error" in capsys.readouterr().err
    bad = tmp_path / "config.txt"
    bad.write_text("CC_MODE 10\n")
    assert cli.main(["bench", "fabric", "--hpcc-config", str(bad)]) == 2
    assert "CC_MODE 10" in capsys.readouterr().err
    # an unknown AQM policy failed in the worker ("benchmark worker ... failed" and its traceback)
    assert cli.main(["bench", "fabric", "--aqm", "foo"]) == 2
    assert "--aqm: unknown AQM policy 'foo'; known: " in capsys.readouterr().err
    binary = tmp_path / "config.bin"
    binary.write_bytes(b"\xff\xfe\x00\x81binary")
    assert cli.main(["bench", "fabric", "--hpcc-config", str(binary)]) == 2  # was a UnicodeDecodeError
    assert "cannot read as an HPCC config" in capsys.readouterr().err


def test_bench_fabric_ab_alternates_sides_and_compares_their_fidelity(capsys):
    import sys

    # this install against itself: the same flows and slowdowns, the same events per hop
    assert cli.main(["bench", "fabric-ab", "--baseline", sys.executable, "--rounds", "2", "--repeats", "1"]) == 0
    result = _last_json(capsys)
    assert result["rounds"] == 2 and result["fidelity_equal"] is True
    for case in ("A", "C"):
        s = result[case]
        assert s["baseline_hops_per_s"] > 0 and s["ratio_min"] <= s["ratio_median"] <= s["ratio_max"]
        assert s["baseline_events_per_data_hop"] == s["this_events_per_data_hop"] < 3.6


@pytest.mark.parametrize("args, message", [
    (["--baseline", "", "--rounds", "1"], "--baseline: got an empty command"),
    (["--baseline", "python", "--rounds", "0"], "--rounds: got 0"),
])
def test_bench_fabric_ab_refuses_bad_arguments(capsys, args, message):
    assert cli.main(["bench", "fabric-ab", *args]) == 2  # argparse's usage error
    assert message in capsys.readouterr().err


def test_bench_fabric_ab_names_a_baseline_that_cannot_run(capsys):
    assert cli.main(["bench", "fabric-ab", "--baseline", "/no/such/python", "--rounds", "1"]) == 2
    assert "--baseline: cannot run /no/such/python" in capsys.readouterr().err
