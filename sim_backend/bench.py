"""``ecngym bench fabric``: the fabric's speed and fidelity against the HPCC reference runs.

Replays reference scenarios A (16 hosts, one switch) and C (4 x 4 leaf-spine) with the ``hpcc``
preset and prints, per scenario: data packet-hops per wall second (one data packet crossing one
link; control packets separately), simulated seconds per wall second, ns-3 events per second, peak
RSS, flows completed, and the FCT-slowdown table (median / p99 per size bucket) beside the
reference's; plus this machine's bare ns-3 event-loop rate, the ceiling the fabric is read
against. Each scenario runs in a fresh subprocess so that its peak RSS is its own.

Speed is measured on the fabric's scheduler (``fabric.scheduler``, default ours, the timing wheel)
and, in the same process and interleaved with it, on ns-3's ``PriorityQueueScheduler``
(``--stock-scheduler``); the bare loop runs on both too. The machine is shared, so the ratios within
one run (ours vs stock, fabric vs bare loop) are the figures to compare across runs.

Whole process: ``--whole-process`` runs (default 3) of a fresh interpreter that imports ecngym,
loads scenario A's topology and flows, builds the fabric, runs it to completion and reads the flow
records, timed from the parent (interpreter start-up included): the figure to set beside the HPCC
model's run time, which is a whole process too.

Slowdown = max(1, fct / standalone fct) on both sides (the reference's FCT file carries its
standalone FCT; ours is the same formula, equal to within 1 ns). Percentiles are given by two
estimators, the same on both sides: numpy's linear interpolation (the headline), and the HPCC
model's ``fct_analysis.py`` (``sorted(x)[int(n * p)]``), which reproduces the reference README's
table but, in the 94-flow 100KB-1MB bucket, makes "p99" the bucket's single largest slowdown.

ECN marking is random, so one replay is one sample: ``--seeds N`` replays each scenario with seeds
1..N (the reference is one run of its own random stream) and compares the median over seeds, with
the range shown. Speed figures come from the seed-1 replays (``--repeats`` of them).

The last line printed is one JSON object (keys documented in :func:`summarize`).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any

import numpy as np

from ecngym.sim_backend.metrics import SIZE_BUCKETS, slowdown_table

BARE_EVENTS = 5_000_000
DEFAULT_SEEDS = 5
#: percentile estimators: key suffix in the results -> metrics method
ESTIMATORS = {"": "linear", "_hpcc": "hpcc"}


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _stats(records: Any, method: str) -> dict[str, dict[str, float]]:
    return slowdown_table(records, method=method)[["median", "p99"]].to_dict(orient="index")


def run_scenario(name: str, repeats: int = 1, seeds: int = 1, aqm: str = "red", scheduler: str = "timing_wheel",
                 stock: str = "") -> dict[str, Any]:
    """Replay one reference scenario in this process and return its figures.

    Seed 1 (the preset's) runs ``repeats`` times for the speed figures (median wall time), each
    followed by one run on the ``stock`` scheduler if given (its median wall time is
    ``wall_s_stock``; its results must be identical); seeds 2..``seeds`` run once each, for the
    slowdown statistics only.
    """
    from ecngym.sim_backend import Fabric, FabricConfig
    from ecngym.sim_backend.hpcc_reference import scenario

    sc = scenario(name)
    topo, flows = sc.topology(), sc.flows()
    walls: list[float] = []
    walls_stock: list[float] = []
    per_seed: list[dict[str, Any]] = []
    for seed in range(1, seeds + 1):
        for _ in range(repeats if seed == 1 else 1):
            aqm_override = {} if aqm == "red" else {"aqm": {"all": aqm}}
            for sched in (scheduler, stock) if seed == 1 and stock else (scheduler,):
                start = time.perf_counter()
                cfg = FabricConfig.preset("hpcc", seed=seed, scheduler=sched, **aqm_override)
                with Fabric(topo, flows, cfg) as fab:
                    fab.run("1s")
                    wall = time.perf_counter() - start
                    run_records = fab.flow_records()
                    if sched != scheduler:
                        if not run_records.equals(records) or fab.counters() != counters:
                            raise RuntimeError(f"scheduler {sched!r} changed the results of scenario {name}")
                        walls_stock.append(wall)
                        continue
                    records = run_records
                    if seed == 1:
                        walls.append(wall)
                        counters, end_ns = fab.counters(), fab.now_ns
                        first_records = records
        per_seed.append({suffix: _stats(records, method) for suffix, method in ESTIMATORS.items()})
    ref_fct = sc.reference_fct()
    out: dict[str, Any] = {
        "scenario": sc.name,
        "description": sc.description,
        "seeds": seeds,
        "wall_s": float(np.median(walls)),
        "wall_s_all": walls,
        "scheduler": scheduler,
        "stock_scheduler": stock,
        "wall_s_stock": float(np.median(walls_stock)) if walls_stock else None,
        "data_packet_hops": counters["data_packet_hops"],
        "control_packet_hops": counters["control_packet_hops"],
        "events": counters["events"],
        "simulated_span_s": (end_ns - int(flows["start_ns"].min())) / 1e9,
        "flows_completed": int(first_records["finished"].sum()),
        "flows_total": len(first_records),
        "drops": counters["drops"],
        "peak_rss_mb": _peak_rss_mb(),
        "bucket_flows": {b: int(((ref_fct["size_bytes"] >= lo) & (ref_fct["size_bytes"] < hi)).sum())
                         for b, (lo, hi) in SIZE_BUCKETS.items()},
        "reference": {
            "data_packet_hops": sc.data_packet_hops, "events": sc.events, "wall_s": sc.wall_s,
            "simulated_span_s": sc.simulated_span_s, "peak_rss_mb": sc.peak_rss_mb,
        },
    }
    for suffix, method in ESTIMATORS.items():
        out["reference_slowdown" + suffix] = _stats(ref_fct, method)
        for key, agg in (("slowdown", np.median), ("slowdown_min", np.min), ("slowdown_max", np.max)):
            out[key + suffix] = {
                b: {stat: float(agg([s[suffix][b][stat] for s in per_seed])) for stat in ("median", "p99")}
                for b in SIZE_BUCKETS
            }
    return out


def bare_event_rate(events: int = BARE_EVENTS, scheduler: str = "timing_wheel",
                    stock: str = "priority_queue") -> dict[str, Any]:
    """Events per second of a bare ns-3 event loop on this machine, on ``scheduler`` and ``stock``."""
    from ecngym.sim_backend import _fabric
    from ecngym.sim_backend.config import SCHEDULERS

    out: dict[str, Any] = {"bare_events_per_s": _fabric.bare_event_loop_rate(events, SCHEDULERS[scheduler]),
                           "events": events, "scheduler": scheduler}
    if stock:
        out["bare_events_per_s_stock"] = _fabric.bare_event_loop_rate(events, SCHEDULERS[stock])
        out["stock_scheduler"] = stock
    return out


#: The whole-process run: what a user's script does to replay a scenario and read its records.
WHOLE_PROCESS_SCRIPT = """
import sys, time
t0 = time.perf_counter()
from ecngym.sim_backend import Fabric, FabricConfig
from ecngym.sim_backend.hpcc_reference import scenario
t1 = time.perf_counter()
sc = scenario(sys.argv[1])
with Fabric(sc.topology(), sc.flows(), FabricConfig.preset("hpcc")) as fab:
    t2 = time.perf_counter()
    fab.run("1s")
    t3 = time.perf_counter()
    records = fab.flow_records()
print(int(records["finished"].sum()), t1 - t0, t2 - t1, t3 - t2, time.perf_counter() - t3)
"""


def whole_process(name: str, runs: int) -> dict[str, Any]:
    """Time ``runs`` fresh interpreters replaying scenario ``name`` (median, and its phases).

    Returns:
        ``whole_process_s`` (median wall time of the process, from the parent), ``whole_process_s_all``,
        and the median phases measured inside: ``import_s`` (ecngym.sim_backend), ``load_build_s``
        (topology and flow files, fabric build), ``run_s``, ``records_s``; ``startup_s`` is the rest
        (interpreter start and exit).
    """
    totals, phases = [], []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", WHOLE_PROCESS_SCRIPT, name], capture_output=True, text=True,
                              check=False)
        totals.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise RuntimeError(f"whole-process run of scenario {name} failed:\n{proc.stderr}")
        phases.append([float(x) for x in proc.stdout.split()])
    from ecngym.sim_backend.hpcc_reference import scenario

    med = [float(np.median([p[i] for p in phases])) for i in range(5)]
    total = float(np.median(totals))
    return {"whole_process_scenario": name, "reference_wall_s": scenario(name).wall_s, "whole_process_s": total, "whole_process_s_all": totals,
            "flows_completed": int(med[0]), "import_s": med[1], "load_build_s": med[2], "run_s": med[3],
            "records_s": med[4], "startup_s": total - sum(med[1:])}


def _in_subprocess(args: list[str], module: str = "ecngym.sim_backend.bench") -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", module, "--worker", *args],
        capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark worker {args} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The final JSON line.

    Keys: ``data_packet_hops_per_s`` (scenario A), ``data_packet_hops_per_s_c`` (C),
    ``sim_s_per_wall_s`` and ``events_per_s`` (A), ``peak_rss_mb`` (largest over scenarios),
    ``flows_completed`` / ``flows_total`` (summed over scenarios, seed-1 replays),
    ``slowdown_rel_err_median`` and ``slowdown_rel_err_p99`` (largest relative difference of a
    size bucket's median / p99, median over seeds, from the reference's, over all scenarios;
    linear-interpolation percentiles on both sides), ``slowdown_rel_err_median_hpcc`` and
    ``slowdown_rel_err_p99_hpcc`` (the same with the HPCC model's ``fct_analysis.py`` estimator on
    both sides), ``seeds``, ``bare_events_per_s``; with a stock scheduler:
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
    first = a or c
    if first is not None:
        out["sim_s_per_wall_s"] = first["simulated_span_s"] / first["wall_s"]
        out["events_per_s"] = first["events"] / first["wall_s"]
    scen = list(by_name.values())
    out["peak_rss_mb"] = max(r["peak_rss_mb"] for r in scen)
    out["flows_completed"] = sum(r["flows_completed"] for r in scen)
    out["flows_total"] = sum(r["flows_total"] for r in scen)
    for suffix in ESTIMATORS:
        for stat in ("median", "p99"):
            errs = [abs(r["slowdown" + suffix][b][stat] / r["reference_slowdown" + suffix][b][stat] - 1)
                    for r in scen for b in SIZE_BUCKETS]
            out[f"slowdown_rel_err_{stat}{suffix}"] = max(errs)
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


def _print_tables(results: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    scen = [r for r in results if "scenario" in r]
    speed = Table(title="Fabric speed on one core: ecngym (HPCC model's figure in brackets)")
    speed.add_column("figure")
    for r in scen:
        speed.add_column(f"scenario {r['scenario']}", justify="right")

    def row(label: str, fmt: Any) -> None:
        speed.add_row(label, *[fmt(r, r["reference"]) for r in scen])

    row("data packet-hops / s", lambda r, f: f"{r['data_packet_hops'] / r['wall_s']:.3g} "
        f"({f['data_packet_hops'] / f['wall_s']:.2g})")
    row("data packet-hops", lambda r, f: f"{r['data_packet_hops']:,} ({f['data_packet_hops']:,})")
    row("control packet-hops", lambda r, f: f"{r['control_packet_hops']:,}")
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
    for r in results:
        if "bare_events_per_s" in r:
            stock = (f", {r['bare_events_per_s_stock']:.3g} on {r['stock_scheduler']}"
                     if "bare_events_per_s_stock" in r else "")
            console.print(f"bare ns-3 event loop on this machine (self-rescheduling no-op events): "
                          f"{r['bare_events_per_s']:.3g} events/s on {r['scheduler']}{stock}")
        if "whole_process_s" in r:
            console.print(f"scenario {r['whole_process_scenario']} as a whole process (fresh interpreter: import, "
                          f"load, build, run, records): {r['whole_process_s']:.2f} s median of "
                          f"{len(r['whole_process_s_all'])} (HPCC model: {r['reference_wall_s']:.2f} s); "
                          f"import {r['import_s']:.2f} s, load + build {r['load_build_s']:.2f} s, run {r['run_s']:.2f} s, "
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
            for b in SIZE_BUCKETS:
                for stat in ("median", "p99"):
                    o, f = r["slowdown" + suffix][b][stat], r["reference_slowdown" + suffix][b][stat]
                    case = f"{r['scenario']} {b} ({r['bucket_flows'][b]})" if stat == "median" else ""
                    cells = [case, stat, f"{o:.2f}", f"{f:.2f}", f"{o / f - 1:+.0%}"]
                    if n_seeds > 1:
                        cells.append(f"{r['slowdown_min' + suffix][b][stat]:.2f}-"
                                     f"{r['slowdown_max' + suffix][b][stat]:.2f}")
                    fid.add_row(*cells, end_section=stat == "p99")
        console.print(fid)
    console.print(escape("fct_analysis.py takes sorted(x)[int(n * p)]: in a bucket of fewer than 100 flows "
                         "its p99 is the bucket's largest slowdown (one flow)."))


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``ecngym bench fabric``."""
    parser = argparse.ArgumentParser(prog="ecngym bench fabric", description=__doc__.split("\n")[0])
    parser.add_argument("--scenarios", default="A,C", help="comma-separated: A, C (default A,C)")
    parser.add_argument("--repeats", type=int, default=1, help="seed-1 runs per scenario; median wall time")
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS,
                        help=f"ECN seeds per scenario for the slowdown statistics (default {DEFAULT_SEEDS})")
    parser.add_argument("--aqm", default="red",
                        help="AQM policy of every switch port with its defaults (default red: the preset's "
                             "ECN; the fidelity figures only compare for red)")
    parser.add_argument("--stock-scheduler", default="priority_queue",
                        help="ns-3 scheduler to time beside ours in the same process ('' = none; "
                             "default priority_queue)")
    parser.add_argument("--whole-process", type=int, default=3,
                        help="fresh-interpreter runs of scenario A, timed whole (default 3; 0 = none)")
    parser.add_argument("--json-only", action="store_true", help="print only the JSON line")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.worker:
        kind = args.worker[0]
        if kind == "bare":  # bare [stock]
            result = bare_event_rate(stock=args.worker[1] if len(args.worker) > 1 else "")
        else:  # scenario repeats seeds aqm [stock]
            result = run_scenario(kind, int(args.worker[1]), int(args.worker[2]), args.worker[3],
                                  stock=args.worker[4] if len(args.worker) > 4 else "")
        print(json.dumps(result))
        return 0
    from ecngym.sim_backend.config import SCHEDULERS

    if args.stock_scheduler and args.stock_scheduler not in SCHEDULERS:
        parser.error(f"--stock-scheduler: got {args.stock_scheduler!r}, allowed: '', {', '.join(SCHEDULERS)}")
    if args.whole_process < 0:
        parser.error("--whole-process must be >= 0")
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    if args.seeds < 1:
        parser.error("--seeds must be >= 1")
    names = [s.strip().upper() for s in args.scenarios.split(",") if s.strip()]
    bad = [n for n in names if n not in ("A", "C")]
    if bad or not names:
        parser.error(f"--scenarios: unknown {bad}; allowed A, C")
    from rich.console import Console

    results = []
    with Console(stderr=True).status("measuring ...") as status:
        status.update("bare ns-3 event loop ...")
        stock = [args.stock_scheduler] if args.stock_scheduler else []
        results.append(_in_subprocess(["bare", *stock]))
        for name in names:
            status.update(f"replaying scenario {name} ({args.repeats}x for speed, {args.seeds} seed(s)) ...")
            results.append(_in_subprocess([name, str(args.repeats), str(args.seeds), args.aqm, *stock]))
        if args.whole_process:
            status.update(f"scenario A as a whole process ({args.whole_process}x) ...")
            results.append(whole_process("A", args.whole_process))
    if not args.json_only:
        _print_tables(results)
    print(json.dumps(summarize(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
