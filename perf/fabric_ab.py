"""``ecngym bench fabric-ab``: this install's fabric against another's, in turn, on the HPCC reference runs.

Each round runs ``ecngym bench fabric`` (scenarios A and C, seed 1, ``--repeats`` timed runs each,
no stock scheduler, no whole-process runs) once with the baseline's command and once with this
interpreter, alternating which goes first, each in a fresh process; the machine's drift then
touches both sides alike. Per side and case: data packet-hops per wall second of simulation (the
median of the runs), events per data packet-hop; per round the ratio this / baseline, and their
median, minimum and maximum. The fidelity figures of both sides (every ``slowdown_rel_err_*`` and
the flows completed) must be equal: the last JSON line says whether they were.

Wall figures depend on the machine's load: measure on an idle machine (``load_avg_before`` is
printed) and read the ratios, not single figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
from typing import Any

#: ``ecngym bench fabric``'s arguments for one side of a round: speed only, seed 1
BENCH_ARGS = ("bench", "fabric", "--json-only", "--seeds", "1", "--stock-scheduler", "", "--whole-process", "0")
CASES = {"A": "data_packet_hops_per_s", "C": "data_packet_hops_per_s_c"}


def run_side(command: list[str], repeats: int) -> dict[str, Any]:
    """One ``bench fabric`` run of ``command`` (an interpreter and its arguments); its JSON line.

    Raises:
        RuntimeError: If the command fails or prints no JSON line.
    """
    try:
        proc = subprocess.run([*command, "-m", "ecngym", *BENCH_ARGS, "--repeats", str(repeats)],
                              capture_output=True, text=True, check=False)
    except OSError as exc:
        raise RuntimeError(f"--baseline: cannot run {shlex.join(command)}: {exc}") from None
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{shlex.join(command)} -m ecngym bench fabric failed (exit {proc.returncode}):\n"
                           f"{proc.stderr[-2000:]}")
    return json.loads(lines[-1])


def fidelity(result: dict[str, Any]) -> dict[str, Any]:
    """The figures of a ``bench fabric`` result that a speed change must leave equal."""
    return {k: v for k, v in result.items() if k.startswith("slowdown_rel_err") or k.startswith("flows_")}


def summarize(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Median figures per side and case, the per-round ratios' median / min / max, fidelity equality."""
    out: dict[str, Any] = {"rounds": len(rounds), "fidelity_equal": all(r["fidelity_equal"] for r in rounds)}
    for case in CASES:
        ratios = [r["this"][case] / r["baseline"][case] for r in rounds]
        out[case] = {
            "baseline_hops_per_s": statistics.median(r["baseline"][case] for r in rounds),
            "this_hops_per_s": statistics.median(r["this"][case] for r in rounds),
            "ratio_median": round(statistics.median(ratios), 4), "ratio_min": round(min(ratios), 4),
            "ratio_max": round(max(ratios), 4),
            "baseline_events_per_data_hop": rounds[0]["baseline"][f"events_per_data_hop_{case}"],
            "this_events_per_data_hop": rounds[0]["this"][f"events_per_data_hop_{case}"],
        }
    return out


def _side_figures(result: dict[str, Any]) -> dict[str, Any]:
    figures: dict[str, Any] = {case: result[key] for case, key in CASES.items()}
    for case in CASES:
        run = result["runs"][case]
        # (an older install's JSON has no events_per_data_hop: the hop count is its rate x wall time)
        hops = run["data_packet_hops_per_s"] * run["wall_s"]
        figures[f"events_per_data_hop_{case}"] = round(run.get("events_per_data_hop", run["events"] / hops), 2)
    return figures


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``ecngym bench fabric-ab``: a table of rounds, then one JSON line."""
    parser = argparse.ArgumentParser(prog="ecngym bench fabric-ab", description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True,
                        help="the baseline's interpreter command, split as a shell splits words, e.g. "
                             "'/path/to/other/.venv/bin/python' or 'env PYTHONPATH=/src/old python'")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per case and side (default 3)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    for name in ("rounds", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name}: got {getattr(args, name)}; expected >= 1")
    baseline = shlex.split(args.baseline)
    if not baseline:
        parser.error("--baseline: got an empty command; give the baseline's interpreter")
    load = os.getloadavg()[0]
    rounds = []
    for i in range(args.rounds):
        sides = {"baseline": baseline, "this": [sys.executable]}
        order = ("baseline", "this") if i % 2 == 0 else ("this", "baseline")
        try:
            results = {side: run_side(sides[side], args.repeats) for side in order}
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        row = {side: _side_figures(results[side]) for side in sides}
        row["fidelity_equal"] = fidelity(results["baseline"]) == fidelity(results["this"])
        rounds.append(row)
        print(f"round {i + 1}: " + "; ".join(
            f"{case} {row['baseline'][case]:.3g} -> {row['this'][case]:.3g} hops/s "
            f"(x{row['this'][case] / row['baseline'][case]:.3f})" for case in CASES)
            + ("" if row["fidelity_equal"] else "; FIDELITY FIGURES DIFFER"), flush=True)
    summary = summarize(rounds)
    for case in CASES:
        s = summary[case]
        print(f"{case}: median {s['baseline_hops_per_s']:.3g} -> {s['this_hops_per_s']:.3g} data packet-hops/s, "
              f"ratio median {s['ratio_median']:.3f} (min {s['ratio_min']:.3f}, max {s['ratio_max']:.3f}); "
              f"events / data hop {s['baseline_events_per_data_hop']} -> {s['this_events_per_data_hop']}")
    print(json.dumps({"load_avg_before": load, "cpus": os.cpu_count(), **summary, "per_round": rounds}))
    return 0 if summary["fidelity_equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
