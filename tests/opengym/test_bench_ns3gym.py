"""``ecngym bench env --ns3gym`` prints its figures with one JSON object as the last line (format only, no timing)."""

import json

from ecngym import cli


def test_bench_env_ns3gym_last_line_is_json(capsys):
    assert cli.main(["bench", "env", "--ns3gym", "--env", "ecngym/RoceLeafSpine-v0", "--steps", "12",
                     "--rounds", "1", "--json-only"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["steps_per_round"] == 12  # the agent stops the episode after the steps asked for
    assert result["us_per_step_in_process"] > 0 and result["us_per_step_ns3gym"] > 0
    assert 0 < result["us_per_step_env_in_server"] < result["us_per_step_ns3gym"]
    assert 0 < result["encode_us_per_step"] < result["us_per_step_ns3gym"]
    assert result["state_msg_bytes"] > 1152 * 4  # the leaf-spine's 1152 float32 observations at least
    assert "ns3-gym" in result["ns3gym_reference"]
