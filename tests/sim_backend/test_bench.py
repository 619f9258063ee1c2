"""``ecngym bench fabric`` / ``bench scale`` print one JSON object as the last line (format, not timing)."""

import json

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
    assert result["cases"][1]["flows"] > result["cases"][0]["flows"]  # 60 % load offers more flows
    assert result["hops_per_s_vs_k4"]["4"] == 1.0 and result["sim_time_s"] == 2e-4
    assert result["bare_events_per_s"] > 0


def test_bench_scale_refuses_bad_arguments(capsys):
    for args in (["--k", "5"], ["--loads", "1.5"], ["--k", "x"], ["--scheduler", "fast"], ["--sim-time", "0us"]):
        assert cli.main(["bench", "scale", *args]) == 2, args
        assert "error" in capsys.readouterr().err


def test_bench_fabric_times_ours_stock_and_the_whole_process(capsys):
    assert cli.main(["bench", "fabric", "--scenarios", "A", "--seeds", "1", "--whole-process", "1",
                     "--json-only"]) == 0
    result = _last_json(capsys)
    assert result["flows_completed"] == result["flows_total"] == 605
    assert result["scheduler_speedup"] > 0 and result["bare_events_per_s_stock"] > 0
    assert result["whole_process_s"] > result["import_s"] > 0
