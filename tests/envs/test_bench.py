"""``ecngym bench env`` prints its figures with one JSON object as the last line (format only, no timing)."""

import json

from ecngym import cli


def test_bench_env_last_line_is_json(capsys):
    assert cli.main(["bench", "env", "--steps", "10", "--rounds", "1", "--json-only"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert {"steps_per_s_1", "steps_per_s_2", "overhead_fraction", "peak_rss_mb", "reset_s",
            "speedup_2_same_seed", "speedup_2_free"} <= set(result)
    assert result["steps_per_s_1"] > 0 and result["steps_per_s_2"] > 0
    assert 0 <= result["overhead_fraction"] < 1 and result["peak_rss_mb"] > 0
