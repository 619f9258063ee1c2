"""``ecngym bench env`` prints its figures with one JSON object as the last line (format only, no timing)."""

import json

from ecngym import cli


def test_bench_env_last_line_is_json(capsys):
    assert cli.main(["bench", "env", "--steps", "10", "--rounds", "1", "--json-only"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert {"steps_per_s_1", "steps_per_s_2", "overhead_fraction", "peak_rss_mb", "reset_s",
            "speedup_2_same_seed", "speedup_2_free", "outside_us_per_step_changing"} <= set(result)
    assert result["steps_per_s_1"] > 0 and result["steps_per_s_2"] > 0
    assert 0 <= result["overhead_fraction"] < 1 and result["peak_rss_mb"] > 0


def test_bench_env_splits_the_time_outside_the_simulator():
    from ecngym.perf.env import ENV_ID, in_process, outside_parts

    single = in_process(ENV_ID, 110)  # one episode (100 steps) ends inside
    assert single["outside_us_per_step"] > 0 and single["episode_end_us"] is not None
    parts, warm = outside_parts(ENV_ID, 100, repeats=5)  # the last step ends the episode
    assert list(parts) == ["telemetry_read", "step_kernel", "action", "episode_end", "rest"]
    assert all(parts[p] > 0 for p in parts if p != "rest")
    # every part but the episode end and the rest is repeated warm (telemetry_read: both its calls)
    assert list(warm) == ["telemetry_read", "step_kernel", "action"]
    assert all(v > 0 for v in warm.values())


def test_bench_env_changing_actions_really_change_the_setting(monkeypatch):
    from ecngym.perf.env import ENV_ID, in_process
    from ecngym.sim_backend.fabric import Fabric

    calls = []
    set_values = Fabric.set_aqm_values
    monkeypatch.setattr(Fabric, "set_aqm_values", lambda self, *a: calls.append(1) or set_values(self, *a))
    in_process(ENV_ID, 20)
    assert calls == []  # the static action is the fabric's own setting
    in_process(ENV_ID, 20, changing=True)
    assert len(calls) > 10
