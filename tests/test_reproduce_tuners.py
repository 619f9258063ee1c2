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
                 "env.kwargs.episode_steps=60", "seed=3",
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


# ---------------------------------------------------------------------- the must-show claims
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["2-to-1", "16-to-1", "leaf_spine"])
def test_bytetuning_lowers_the_queue_at_equal_throughput(kind):
    from ecngym.reproduce.bytetuning import tune_and_compare

    r = tune_and_compare(kind, "sa")
    assert r["f_tuned"] > r["f_dcqcn"]  # Eq. 14 improves over the DCQCN default
    assert r["queue_change_pct"] < 0 and r["throughput_change_pct"] >= -5


@pytest.mark.slow
def test_bytetuning_window_is_quiet_enough():
    from ecngym.reproduce.bytetuning import WINDOW_STEPS, window_noise

    assert window_noise("16-to-1", WINDOW_STEPS["16-to-1"]) <= 0.15 < window_noise("16-to-1", 50)


@pytest.mark.slow
def test_pred_16_to_1_queue_below_the_papers_ecn_k70():
    from ecngym.reproduce.pred import queue_claims

    claims = {c.id: c for c in queue_claims(2500, 3)}
    ecn = claims["queue_pred_vs_ecn"]
    assert ecn.direction_holds and ecn.ci is not None and ecn.ci[1] < 1  # PRED below ECN K = 70 over 3 seeds


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="not within the bar over per-flow connections: PRED / ECN K=70 = 0.20 "
                                       "(12.4 vs 60.2 packets; the paper 15 / 25 = 0.6) and PRED / our static RED "
                                       "0.05 (RED 253 packets, parameters ours)")
def test_pred_16_to_1_queue_ratio_within_the_bar():
    from ecngym.reproduce.pred import queue_claims

    claims = {c.id: c for c in queue_claims(2500, 3)}
    assert claims["queue_pred_vs_ecn"].within_bar  # PRED / ECN within +-30 % of 15 / 25, equal goodput


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="not reproduced (per-flow connections): Only-FCS holds a shorter queue "
                                       "than PRED (10.6 vs 12.4 packets, RED 253, WebSearch 90 %)")
def test_pred_only_fcs_settles_between():
    from ecngym.reproduce.pred import queue_claims

    assert {c.id: c for c in queue_claims(2500, 3)}["only_fcs_between"].direction_holds


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="not reproduced (per-flow connections): lambda 95.4 -> 95.4 per MB under "
                                       "WL1 (WL2 rises to 262, back under WL1 falls to 239): the trials' utility "
                                       "difference is far below slot noise at 5 RTT under WL1")
def test_pred_lambda_follows_the_workload():
    from ecngym.reproduce.pred import workload_claims

    assert all(c.direction_holds for c in workload_claims(200.0))


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="no longer holds since lambda is per packet (0.1 per packet = 95 per MB, "
                                       "tcp-sens): at T_QLA = 20 RTT 3 % up, 60 % down, 36 % keep; not investigated")
def test_pred_ab_test_points_up_on_a_saturated_link_with_long_slots():
    from ecngym.reproduce.pred import T_QLA_LONG, ab_probe

    share = ab_probe(T_QLA_LONG, 2500)
    assert share["up"] > 0.5 > share["down"]


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="at T_QLA = 5 RTT the queue answers a trial ~2 slots late: 5 % up, 62 % down")
def test_pred_ab_test_points_up_on_a_saturated_link_at_the_papers_slot():
    from ecngym.reproduce.pred import T_QLA, ab_probe

    share = ab_probe(T_QLA, 2500)
    assert share["up"] > share["down"]


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="not reproduced: no watermark changes the 39-to-1 bursts of 10 KB messages "
                                       "(one distinct score in 89 measurements): burst FCT unchanged")
def test_bytetuning_39_to_1_lowers_the_burst_fct():
    from ecngym.reproduce.bytetuning import tune_and_compare

    r = tune_and_compare("39-to-1", "sa")
    assert r["tuned_fct_p50_us"] < r["dcqcn_fct_p50_us"] and r["tuned_fct_p99_us"] < r["dcqcn_fct_p99_us"]


def test_pred_linux_like_rows_run_the_linux_host_over_the_seeds():
    from ecngym.reproduce.pred import queue_claims

    linux = {c.id: c for c in queue_claims(100, seeds=2, host="linux")}
    lean = {c.id: c for c in queue_claims(100, seeds=2)}
    assert set(linux) == {"queue_pred_vs_ecn_linux", "queue_pred_vs_red_linux", "only_fcs_between_linux"}
    ecn = linux["queue_pred_vs_ecn_linux"]
    assert ecn.seeds == (1, 2) and ecn.ci is not None and "Linux-like hosts" in ecn.setting
    # the same traces under the other host model: slow start, handshake and delayed ACKs change the queue
    assert ecn.ours != lean["queue_pred_vs_ecn"].ours


def test_pred_workload_rows_run_each_seed_on_its_own_trace():
    from ecngym.reproduce.pred import workload_claims

    one, two = workload_claims(10.0, seeds=(1,)), workload_claims(10.0, seeds=(1, 2))
    assert [c.seeds for c in two] == [(1, 2)] * 3 and all(c.ci is not None for c in two)
    assert all(c.ci is None for c in one) and [c.seeds for c in one] == [(1,)] * 3
    # a direction over several seeds needs the CI of the change on the paper's side of zero
    for c in two:
        if c.direction_holds:
            assert (c.ci[1] < 0) if c.id.startswith("wl1") else (c.ci[0] > 0)
