"""What ``ecngym bench fabric`` reports: the final JSON line (:func:`summarize`) and the tables.

The measurements come from :mod:`ecngym.perf.fabric` as one dict per replay or probe; this module
only reads them: the speed tables (a column per replay, the HPCC model's figure beside ours), what
HPCC's INT costs, the bare event loop and whole-process figures, and the FCT-slowdown tables under
both percentile estimators.
"""

from __future__ import annotations

from typing import Any

from ecngym.sim_backend.metrics import SIZE_BUCKETS

#: percentile estimators: key suffix in the results -> metrics method
ESTIMATORS = {"": "linear", "_hpcc": "hpcc"}


def _rel_err(r: dict[str, Any], stat: str, suffix: str = "") -> float:
    """Largest relative difference of a size bucket's ``stat`` from the reference's."""
    return max(abs(r["slowdown" + suffix][b][stat] / r["reference_slowdown" + suffix][b][stat] - 1)
               for b in SIZE_BUCKETS)


def _int_cost(scen: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """What HPCC's INT costs, per scenario: relative extra events, wall time and wire bytes.

    ``hp`` against ``dcqcn_vwin`` of the same bench run: the same window and pacing without INT.
    """
    by_name = {r["scenario"]: r for r in scen}
    out = {}
    for name in ("A", "C"):
        hp, vwin = by_name.get(f"{name}/hp"), by_name.get(f"{name}/dcqcn_vwin")
        if hp and vwin:
            out[name] = {key: round(hp[key] / vwin[key] - 1, 4) for key in ("events", "wall_s", "wire_bytes")}
    return out


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The final JSON line.

    Keys: ``data_packet_hops_per_s`` (scenario A), ``data_packet_hops_per_s_c`` (C),
    ``sim_s_per_wall_s`` and ``events_per_s`` (A), ``peak_rss_mb`` (largest over scenarios),
    ``flows_completed`` / ``flows_total`` (summed over scenarios, seed-1 replays),
    ``slowdown_rel_err_median`` and ``slowdown_rel_err_p99`` (largest relative difference of a
    size bucket's median / p99, median over seeds, from the reference's, over all replays;
    linear-interpolation percentiles on both sides), ``slowdown_rel_err_median_hpcc`` and
    ``slowdown_rel_err_p99_hpcc`` (the same with the HPCC model's ``fct_analysis.py`` estimator on
    both sides), ``seeds``, ``bare_events_per_s``; ``runs`` (per replay: ``A``, ``A/hp``,
    ``hpcc_config`` ...: its cc, events, data packet-hops/s, wall s, wire bytes, flows completed,
    the reference's events and wall s, and its own two largest relative errors); ``int_cost``
    (per scenario where both ran: ``hp`` over ``dcqcn_vwin`` - 1 in events, wall s, wire bytes,
    and ``wall_s_interleaved``, the same in one process, alternated: :func:`~ecngym.perf.fabric.int_cost_interleaved`);
    ``hpcc_incast`` (with ``hp``: :func:`~ecngym.perf.fabric.hpcc_incast`);
    with a stock scheduler:
    ``scheduler_speedup`` and ``scheduler_speedup_c`` (its wall time / ours, same process, A and C),
    ``bare_events_per_s_stock``; with whole-process runs: ``whole_process_s`` (median, scenario A)
    and ``import_s`` (its ``import ecngym.sim_backend`` phase).
    """
    by_name = {r["scenario"]: r for r in results if "scenario" in r}
    out: dict[str, Any] = {}
    a, c = by_name.get("A"), by_name.get("C")
    if a is not None:
        out["data_packet_hops_per_s"] = a["data_packet_hops"] / a["wall_s"]
    if c is not None:
        out["data_packet_hops_per_s_c"] = c["data_packet_hops"] / c["wall_s"]
    for key, r in (("scheduler_speedup", a), ("scheduler_speedup_c", c)):
        if r is not None and r.get("wall_s_stock"):
            out[key] = r["wall_s_stock"] / r["wall_s"]
    first = a or c or next((r for r in results if "scenario" in r), None)
    if first is not None:
        out["sim_s_per_wall_s"] = first["simulated_span_s"] / first["wall_s"]
        out["events_per_s"] = first["events"] / first["wall_s"]
    scen = list(by_name.values())
    out["peak_rss_mb"] = max(r["peak_rss_mb"] for r in scen)
    out["flows_completed"] = sum(r["flows_completed"] for r in scen)
    out["flows_total"] = sum(r["flows_total"] for r in scen)
    compared = [r for r in scen if "reference_slowdown" in r]
    for suffix in ESTIMATORS:
        for stat in ("median", "p99"):
            if compared:
                out[f"slowdown_rel_err_{stat}{suffix}"] = max(_rel_err(r, stat, suffix) for r in compared)
    out["runs"] = {
        r["scenario"]: {
            "cc": r.get("cc"),
            "events": r["events"],
            "events_per_data_hop": round(r["events"] / r["data_packet_hops"], 3),
            "data_packet_hops_per_s": round(r["data_packet_hops"] / r["wall_s"]),
            "wall_s": round(r["wall_s"], 3),
            "wire_bytes": r["wire_bytes"],
            "pfc_pauses": r["pfc_pauses"],
            **({"pfc_frames": r["pfc_frames"], "reference_pfc_frames": r["reference_pfc_frames"]}
               if "pfc_frames" in r else {}),
            "flows_completed": r["flows_completed"], "flows_total": r["flows_total"],
            **({"reference_events": r["reference"]["events"], "reference_wall_s": r["reference"]["wall_s"]}
               if r["reference"] else {}),
            **({"slowdown_rel_err_median": round(_rel_err(r, "median"), 4),
                "slowdown_rel_err_p99": round(_rel_err(r, "p99"), 4)} if "reference_slowdown" in r else {}),
        }
        for r in scen
    }
    int_cost = _int_cost(scen)
    for r in results:
        if "int_wall_ratio" in r:
            int_cost.setdefault(r["int_cost_scenario"], {})["wall_s_interleaved"] = round(r["int_wall_ratio"] - 1, 4)
    if int_cost:
        out["int_cost"] = int_cost
    incast = [r["hpcc_incast"] for r in results if "hpcc_incast" in r]
    if incast:
        out["hpcc_incast"] = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in incast[0].items()}
    out["seeds"] = scen[0]["seeds"]
    bare = [r for r in results if "bare_events_per_s" in r]
    if bare:
        out["bare_events_per_s"] = bare[0]["bare_events_per_s"]
        if "bare_events_per_s_stock" in bare[0]:
            out["bare_events_per_s_stock"] = bare[0]["bare_events_per_s_stock"]
    whole = [r for r in results if "whole_process_s" in r]
    if whole:
        out["whole_process_s"] = whole[0]["whole_process_s"]
        out["import_s"] = whole[0]["import_s"]
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items()}


def _print_speed(console: Any, scen: list[dict[str, Any]], no_ref: dict[str, float]) -> None:
    """One speed table: a column per replay, the HPCC model's figure in brackets."""
    from rich.table import Table

    speed = Table(title="Fabric speed on one core: ecngym (HPCC model's figure in brackets)")
    speed.add_column("figure")
    for r in scen:
        speed.add_column(r["scenario"], justify="right")

    def row(label: str, fmt: Any) -> None:
        speed.add_row(label, *[fmt(r, r["reference"] or no_ref) for r in scen])

    row("data packet-hops / s", lambda r, f: f"{r['data_packet_hops'] / r['wall_s']:.3g} "
        f"({f['data_packet_hops'] / f['wall_s']:.2g})")
    row("data packet-hops", lambda r, f: f"{r['data_packet_hops']:,} ({f['data_packet_hops']:,})")
    row("control packet-hops", lambda r, f: f"{r['control_packet_hops']:,}")
    row("PFC pauses received", lambda r, f: f"{r['pfc_pauses']:,}")
    row("events", lambda r, f: f"{r['events'] / 1e6:.2f} M ({f['events'] / 1e6:.2f} M)")
    row("events / data packet-hop", lambda r, f: f"{r['events'] / r['data_packet_hops']:.2f} "
        f"({f['events'] / f['data_packet_hops'] if f['data_packet_hops'] else float('nan'):.2f})")
    row("wire bytes (headers, INT, ACKs)", lambda r, f: f"{r['wire_bytes'] / 1e6:,.1f} MB")
    row("events / s", lambda r, f: f"{r['events'] / r['wall_s']:.3g} ({f['events'] / f['wall_s']:.2g})")
    row("simulated s / wall s", lambda r, f: f"{r['simulated_span_s'] / r['wall_s']:.4f} "
        f"({f['simulated_span_s'] / f['wall_s']:.4f})")
    row("wall s", lambda r, f: f"{r['wall_s']:.2f} ({f['wall_s']:.2f})")
    if all(r.get("wall_s_stock") for r in scen):
        row(f"wall s on ns-3's {scen[0]['stock_scheduler']} (/ ours)",
            lambda r, f: f"{r['wall_s_stock']:.2f} ({r['wall_s_stock'] / r['wall_s']:.2f}x)")
    row("peak RSS MB", lambda r, f: f"{r['peak_rss_mb']:.0f} ({f['peak_rss_mb']:.0f})")
    row("flows completed", lambda r, f: f"{r['flows_completed']}/{r['flows_total']}")
    console.print(speed)


def print_tables(results: list[dict[str, Any]], console: Any) -> None:
    """Print every table and line of the report: speed, INT cost, HPCC incast, bare loop, whole process, FCT.

    Args:
        results: The measurements, one dict per replay or probe.
        console: The rich console (or the Markdown page's) to print on.
    """
    from rich.markup import escape
    from rich.table import Table

    scen = [r for r in results if "scenario" in r]
    nan = float("nan")
    no_ref = {"data_packet_hops": 0, "events": nan, "wall_s": nan, "simulated_span_s": nan, "peak_rss_mb": nan}
    # at most four replays per table, so that --cc all stays readable in an 80-column terminal
    for first in range(0, len(scen), 4):
        _print_speed(console, scen[first : first + 4], no_ref)
    interleaved = {r["int_cost_scenario"]: r for r in results if "int_wall_ratio" in r}
    for name, cost in _int_cost(scen).items():
        both = interleaved.get(name)
        console.print(f"HPCC's INT on {name} (hp vs dcqcn_vwin, the same window and pacing without INT): "
                      f"events {cost['events']:+.1%}, wall time {cost['wall_s']:+.1%} (separate processes)"
                      + (f", {both['int_wall_ratio'] - 1:+.1%} (alternated in one process, median of "
                         f"{len(both['walls']['hp'])})" if both else "")
                      + f", wire bytes {cost['wire_bytes']:+.1%}")
    for r in results:
        if "hpcc_incast" in r:
            i = r["hpcc_incast"]
            console.print(f"HPCC (the reference's hp settings), {i['senders']}-to-1 incast, "
                          f"{i['window_ns'][0] / 1e3:.0f}-{i['window_ns'][1] / 1e3:.0f} us: queue median "
                          f"{i['queue_median_bytes'] / 1e3:.1f} KB, max {i['queue_max_bytes'] / 1e3:.1f} KB; "
                          f"utilisation {i['utilisation']:.1%} (tx bits incl. headers and INT / B t, HPCC's "
                          f"txRate / B), wire busy {i['busy']:.1%} (whole-ns serialisation), payload goodput "
                          f"{i['goodput']:.1%}; the senders' own U {i['u_estimate']:.2%} (its fixed point "
                          f"eta + N R_AI / B = {i['u_fixed_point']:.2%}), of which the queue term "
                          f"{i['queue_term']:.2%}")
        if "bare_events_per_s" in r:
            stock = (f", {r['bare_events_per_s_stock']:.3g} on {r['stock_scheduler']}"
                     if "bare_events_per_s_stock" in r else "")
            console.print(f"bare ns-3 event loop on this machine (self-rescheduling no-op events): "
                          f"{r['bare_events_per_s']:.3g} events/s on {r['scheduler']}{stock}")
        if "whole_process_s" in r:
            console.print(f"scenario {r['whole_process_scenario']} as a whole process (fresh interpreter: import, "
                          f"load, build, run, records): {r['whole_process_s']:.2f} s median of "
                          f"{len(r['whole_process_s_all'])} (HPCC model: {r['reference_wall_s']:.2f} s); "
                          f"import {r['import_s']:.2f} s, load + build {r['load_build_s']:.2f} s, "
                          f"run {r['run_s']:.2f} s, "
                          f"records {r['records_s']:.2f} s, interpreter start / exit {r['startup_s']:.2f} s")
    n_seeds = scen[0]["seeds"]
    for suffix, label in (("", "linear-interpolation percentiles"),
                          ("_hpcc", "the HPCC model's fct_analysis.py percentiles")):
        fid = Table(title=f"FCT slowdown, {label}: ecngym "
                          f"({f'median of {n_seeds} seeds' if n_seeds > 1 else 'seed 1'}) vs the HPCC model")
        for col in ("scenario size (flows)", "stat", "ecngym", "HPCC", "diff"):
            fid.add_column(col, justify="left" if col in ("scenario size (flows)", "stat") else "right")
        if n_seeds > 1:
            fid.add_column("seed range", justify="right")
        for r in scen:
            ref = r.get("reference_slowdown" + suffix)
            for b in SIZE_BUCKETS:
                for stat in ("median", "p99"):
                    o, f = r["slowdown" + suffix][b][stat], (ref[b][stat] if ref else nan)
                    case = f"{r['scenario']} {b} ({r['bucket_flows'][b]})" if stat == "median" else ""
                    cells = [case, stat, f"{o:.2f}", f"{f:.2f}", f"{o / f - 1:+.0%}"]
                    if n_seeds > 1:
                        cells.append(f"{r['slowdown_min' + suffix][b][stat]:.2f}-"
                                     f"{r['slowdown_max' + suffix][b][stat]:.2f}")
                    fid.add_row(*cells, end_section=stat == "p99")
        console.print(fid)
    console.print(escape("fct_analysis.py takes sorted(x)[int(n * p)]: in a bucket of fewer than 100 flows "
                         "its p99 is the bucket's largest slowdown (one flow)."))
