"""``ecngym bench fabric``: the fabric's speed and fidelity against the HPCC reference runs.

Replays reference scenarios A (16 hosts, one switch) and C (4 x 4 leaf-spine) with the ``hpcc``
preset and prints, per scenario: data packet-hops per wall second (one data packet crossing one
link; control packets separately), simulated seconds per wall second, ns-3 events per second, peak
RSS, flows completed, and the FCT-slowdown table (median / p99 per size bucket) beside the
reference's; plus this machine's bare ns-3 event-loop rate, the ceiling the fabric is read
against. Each scenario runs in a fresh subprocess so that its peak RSS is its own.

Speed is measured on the fabric's scheduler (``fabric.scheduler``, default ours, the timing wheel)
and, in the same process and interleaved with it, on ns-3's ``PriorityQueueScheduler``
(``--stock-scheduler``); the bare loop runs on both too. With the timing wheel the fabric runs on
its own simulator core (FabricSimulatorImpl), with a stock scheduler on ns-3's DefaultSimulatorImpl,
so ``scheduler_speedup`` is ours (core and scheduler) against stock ns-3. The machine is shared, so
the ratios within one run (ours vs stock, fabric vs bare loop) are the figures to compare across runs.

Whole process: ``--whole-process`` runs (default 3) of a fresh interpreter that imports ecngym,
loads scenario A's topology and flows, builds the fabric, runs it to completion and reads the flow
records, timed from the parent (interpreter start-up included): the figure to set beside the HPCC
model's run time, which is a whole process too. It reads flows and records as NumPy arrays
(``ReferenceScenario.flow_arrays``, ``Fabric.flow_columns``), so it never imports pandas, as a
replay script or a worker need not.

Slowdown = max(1, fct / standalone fct) on both sides (the reference's FCT file carries its
standalone FCT; ours is the same formula, equal to within 1 ns). Percentiles are given by two
estimators, the same on both sides: numpy's linear interpolation (the headline), and the HPCC
model's ``fct_analysis.py`` (``sorted(x)[int(n * p)]``), which reproduces the reference README's
table but, in the 94-flow 100KB-1MB bucket, makes "p99" the bucket's single largest slowdown.

ECN marking is random, so one replay is one sample: ``--seeds N`` replays each scenario with seeds
1..N (the reference is one run of its own random stream) and compares the median over seeds, with
the range shown. Speed figures come from the seed-1 replays (``--repeats`` of them).

Other congestion controls: ``--cc dcqcn_vwin,dctcp,timely,hp`` (or ``all``) replays the reference's
runs of them, each from its own config (``config_<A|C>_<cc>.txt``, shipped, read by
``load_hpcc_experiment``), beside their FCT outputs; with both ``dcqcn_vwin`` and ``hp`` it says what
HPCC's INT costs (events, wall time, wire bytes: the same window and pacing without INT against
with it), and with ``hp`` it runs HPCC's 16-to-1 incast headline (:func:`hpcc_incast`).
``--hpcc-config PATH`` replays any HPCC-simulator experiment instead (:func:`run_hpcc_config`).

The last line printed is one JSON object (keys documented in
:func:`ecngym.perf.fabric_report.summarize`; that module prints the tables too).
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

from ecngym.markdown_page import add_markdown_option
from ecngym.perf.fabric_report import ESTIMATORS, print_tables, summarize
from ecngym.sim_backend.metrics import SIZE_BUCKETS, slowdown_table

BARE_EVENTS = 5_000_000
#: the reference's other congestion controls (their run.py names), each replayed from its own config
OTHER_CCS = ("dcqcn_vwin", "dctcp", "timely", "hp")
CCS = ("dcqcn", *OTHER_CCS)
#: the reference's measurements of those runs (shared/reference/hpcc-model README: median wall of 4
#: runs, events, simulated span); its README has no peak RSS for them
REFERENCE_CC_SPEED = {
    ("A", "timely"): (4.71, 8.04e6, 12.03e-3), ("A", "dctcp"): (4.24, 7.89e6, 11.60e-3),
    ("A", "dcqcn_vwin"): (4.12, 7.89e6, 11.60e-3), ("A", "hp"): (5.75, 9.16e6, 11.81e-3),
    ("C", "timely"): (8.14, 13.76e6, 13.66e-3), ("C", "dctcp"): (7.46, 13.53e6, 11.87e-3),
    ("C", "dcqcn_vwin"): (7.62, 13.50e6, 11.90e-3), ("C", "hp"): (9.00, 14.86e6, 12.91e-3),
}
DEFAULT_SEEDS = 5


def wide_console(min_columns: int) -> Any:
    """A rich console at least ``min_columns`` wide, for the bench tables.

    Without a terminal (a log, ``nohup``, CI) rich assumes 80 columns and cuts wide tables' cells to
    "…"; the JSON line carries every figure, but the table should be readable too.

    Args:
        min_columns: the width the table needs.

    Returns:
        The console (the terminal's width where that is wider).
    """
    from rich.console import Console

    return Console(width=max(Console().width, min_columns))


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _stats(records: Any, method: str) -> dict[str, dict[str, float]]:
    return slowdown_table(records, method=method)[["median", "p99"]].to_dict(orient="index")


def _reference_config(name: str, cc: str) -> Any:
    """The fabric config of reference run ``name`` / ``cc``.

    The ``hpcc`` preset for DCQCN, else the reference's own config of that congestion control
    (``config_<name>_<cc>.txt``, shipped).
    """
    from ecngym.sim_backend import FabricConfig
    from ecngym.sim_backend.data import hpcc_reference_path
    from ecngym.sim_backend.hpcc_config import load_hpcc_experiment

    if cc == "dcqcn":
        return FabricConfig.preset("hpcc")
    return load_hpcc_experiment(hpcc_reference_path(f"config_{name}_{cc}.txt")).config


def run_scenario(name: str, repeats: int = 1, seeds: int = 1, aqm: str = "red", scheduler: str = "timing_wheel",
                 stock: str = "", cc: str = "dcqcn") -> dict[str, Any]:
    """Replay one reference scenario in this process and return its figures.

    ``cc`` other than ``"dcqcn"`` replays the reference's run of that congestion control (its own
    config, :data:`OTHER_CCS`) beside its FCT output; the result's ``scenario`` is then ``A/hp`` etc.
    See :func:`replay` for the runs.
    """
    import dataclasses

    from ecngym.sim_backend.hpcc_reference import scenario

    sc = scenario(name)
    reference = {"data_packet_hops": sc.data_packet_hops, "events": sc.events, "wall_s": sc.wall_s,
                 "simulated_span_s": sc.simulated_span_s, "peak_rss_mb": sc.peak_rss_mb}
    if cc != "dcqcn":
        sc = dataclasses.replace(sc, fct_file=f"{sc.name}_{cc}_fct.txt")
        wall, events, span = REFERENCE_CC_SPEED[(sc.name, cc)]
        reference.update(wall_s=wall, events=events, simulated_span_s=span, peak_rss_mb=float("nan"))
    base = _reference_config(sc.name, cc)
    if aqm != "red":
        base = base.updated({"aqm": {"all": aqm}})
    out = replay(sc.name if cc == "dcqcn" else f"{sc.name}/{cc}", sc.description, sc.topology(), sc.flows(), base,
                 sc.reference_fct(), repeats, seeds, scheduler=scheduler, stock=stock)
    out["cc"] = cc
    out["reference"] = reference
    return out


def _but_events(counters: dict[str, int]) -> dict[str, int]:
    """The fabric's counters without its event count."""
    return {k: v for k, v in counters.items() if k != "events"}


def replay(label: str, description: str, topo: Any, flows: Any, base: Any, ref_fct: Any, repeats: int = 1,
           seeds: int = 1, *, scheduler: str = "timing_wheel", stock: str = "", limit_ns: int | None = None,
           fct_out: str | None = None, pfc_out: str | None = None) -> dict[str, Any]:
    """Replay ``flows`` on ``topo`` with fabric config ``base`` and return the figures.

    Seed 1 runs ``repeats`` times for the speed figures (median wall time), each followed by one
    run on the ``stock`` scheduler if given (its median wall time is ``wall_s_stock``; its results
    must be identical); seeds 2..``seeds`` run once each, for the slowdown statistics only.

    Args:
        label: The result's ``scenario`` (``A``, ``A/hp``, ``hpcc_config``).
        description: One line on what is replayed.
        topo: The topology.
        flows: The flow table.
        base: The fabric config (``seed`` and ``scheduler`` are set per run).
        ref_fct: The reference's FCT records (``size_bytes``, ``slowdown``), or None: no reference
            figures.
        repeats: Seed-1 runs for the speed figures.
        seeds: Seeds for the slowdown statistics.
        scheduler: The fabric's scheduler.
        stock: A scheduler to time beside it ('' = none).
        limit_ns: Run until every flow finished or this absolute time (default: 1 s after the last
            flow's start).
        fct_out: Write the seed-1 records there in the HPCC model's FCT format.
        pfc_out: Write the seed-1 PFC frames there in the HPCC model's PFC format.
    """
    from ecngym.sim_backend import Fabric
    from ecngym.sim_backend.hpcc_config import write_hpcc_fct, write_hpcc_pfc

    limit = limit_ns if limit_ns is not None else int(flows["start_ns"].max()) + 1_000_000_000
    walls: list[float] = []
    walls_stock: list[float] = []
    per_seed: list[dict[str, Any]] = []
    records: Any = None  # the latest run on ``scheduler``; a stock run right after it must match it
    counters: dict[str, int] = {}
    for seed in range(1, seeds + 1):
        for _ in range(repeats if seed == 1 else 1):
            for sched in (scheduler, stock) if seed == 1 and stock else (scheduler,):
                start = time.perf_counter()
                with Fabric(topo, flows, base.updated({"seed": seed, "scheduler": sched})) as fab:
                    if pfc_out and seed == 1 and not walls:
                        fab.log_pfc_events()
                    fab.run(limit)
                    wall = time.perf_counter() - start
                    run_records = fab.flow_records()
                    if sched != scheduler:
                        # (ns-3's own core schedules every port's end of serialisation; ours
                        # only those that send a packet: the event counts differ, nothing else)
                        if not run_records.equals(records) or _but_events(fab.counters()) != _but_events(counters):
                            raise RuntimeError(f"scheduler {sched!r} changed the results of {label}")
                        walls_stock.append(wall)
                        continue
                    records = run_records
                    if seed == 1:
                        walls.append(wall)
                        counters, end_ns = fab.counters(), fab.now_ns
                        # every byte put on a wire (headers, INT and ACKs included), since the start
                        tel = fab.read_telemetry()
                        wire_bytes, pauses = int(tel["tx_bytes"].sum()), int(tel["pfc_pause_received"].sum())
                        first_records = records
                        if fct_out:
                            write_hpcc_fct(records, fab.flows, fct_out, topo)
                        if pfc_out and len(walls) == 1:
                            write_hpcc_pfc(fab.pfc_events(), fab.ports, topo, pfc_out)
        per_seed.append({suffix: _stats(records, method) for suffix, method in ESTIMATORS.items()})
    out: dict[str, Any] = {
        "scenario": label,
        "description": description,
        "seeds": seeds,
        "wall_s": float(np.median(walls)),
        "wall_s_all": walls,
        "scheduler": scheduler,
        "stock_scheduler": stock,
        "wall_s_stock": float(np.median(walls_stock)) if walls_stock else None,
        "data_packet_hops": counters["data_packet_hops"],
        "control_packet_hops": counters["control_packet_hops"],
        "events": counters["events"],
        "wire_bytes": wire_bytes,
        "pfc_pauses": pauses,
        "simulated_span_s": (end_ns - int(flows["start_ns"].min())) / 1e9,
        "flows_completed": int(first_records["finished"].sum()),
        "flows_total": len(first_records),
        "drops": counters["drops"],
        "peak_rss_mb": _peak_rss_mb(),
        "bucket_flows": {b: int(((flows["size_bytes"] >= lo) & (flows["size_bytes"] < hi)).sum())
                         for b, (lo, hi) in SIZE_BUCKETS.items()},
        "reference": None,
    }
    for suffix, method in ESTIMATORS.items():
        if ref_fct is not None:
            out["reference_slowdown" + suffix] = _stats(ref_fct, method)
        for key, agg in (("slowdown", np.median), ("slowdown_min", np.min), ("slowdown_max", np.max)):
            out[key + suffix] = {
                b: {stat: float(agg([s[suffix][b][stat] for s in per_seed])) for stat in ("median", "p99")}
                for b in SIZE_BUCKETS
            }
    return out


def run_hpcc_config(path: str, repeats: int = 1, seeds: int = 1, reference_fct: str | None = None,
                    fct_out: str | None = None, scheduler: str = "timing_wheel", stock: str = "",
                    pfc_out: str | None = None) -> dict[str, Any]:
    """Replay any HPCC-simulator experiment (its ``config.txt`` and the files it names).

    The reference's FCT file is ``reference_fct``, else the config's ``FCT_OUTPUT_FILE`` if it
    exists (beside the config, or in ``outputs/`` beside it); our seed-1 records are written in the
    same format to ``fct_out`` (default ``ecngym_<FCT_OUTPUT_FILE name>`` in the working directory),
    our seed-1 PFC frames in its ``PFC_OUTPUT_FILE`` format to ``pfc_out`` (default
    ``ecngym_<PFC_OUTPUT_FILE name>``); the reference's PFC file, found like its FCT file, is counted.

    Raises:
        ConfigError: On an unsupported config key, a missing input or an unreadable FCT file.
    """
    from pathlib import Path

    from ecngym.error import ConfigError
    from ecngym.sim_backend.hpcc_config import load_hpcc_experiment, read_hpcc_fct

    exp = load_hpcc_experiment(path)
    if reference_fct:
        ref_path: Path | None = Path(reference_fct)
        if not ref_path.exists():
            raise ConfigError("--reference-fct", f"file not found: {ref_path}")
    else:
        ref_path = _beside(exp, exp.fct_output)
    ref = read_hpcc_fct(ref_path) if ref_path else None
    out_path = Path(fct_out) if fct_out else Path.cwd() / f"ecngym_{exp.fct_output.name}"
    pfc_path = Path(pfc_out) if pfc_out else Path.cwd() / f"ecngym_{exp.pfc_output.name}"
    ref_pfc = _beside(exp, exp.pfc_output)
    for option, ours, theirs in (("--fct-out", out_path, ref_path), ("--pfc-out", pfc_path, ref_pfc)):
        if theirs is not None and ours.resolve() == theirs.resolve():
            raise ConfigError(option, f"{ours} is the reference's output file; name another")
    out = replay("hpcc_config", f"{exp.path.name}: {exp.topology.name}, {len(exp.flows)} flows, cc {exp.config.cc}",
                 exp.topology, exp.flows, exp.config, ref, repeats, seeds, scheduler=scheduler, stock=stock,
                 limit_ns=exp.stop_ns, fct_out=str(out_path), pfc_out=str(pfc_path))
    out["cc"] = exp.config.cc
    out["fct_written"], out["pfc_written"] = str(out_path), str(pfc_path)
    out["pfc_frames"] = len(pfc_path.read_text().splitlines())
    out["reference_fct"] = str(ref_path) if ref_path else None
    out["reference_pfc_frames"] = len(ref_pfc.read_text().splitlines()) if ref_pfc else None
    return out


def _beside(exp: Any, output: Any) -> Any:
    """An output file the config names, if it exists: as resolved, or in ``outputs/`` beside the config."""
    found = [p for p in (output, exp.path.parent / "outputs" / output.name) if p.exists()]
    return found[0] if found else None


def int_cost_interleaved(name: str = "A", repeats: int = 3) -> dict[str, Any]:
    """HPCC's INT in wall time, alternating ``hp`` and ``dcqcn_vwin`` in this one process.

    Both replay scenario ``name`` ``repeats`` times, one after the other; ``dcqcn_vwin`` has the
    same window and pacing without INT.

    Returns:
        ``int_wall_ratio`` (median over the pairs of hp wall / dcqcn_vwin wall) and the walls.
    """
    from ecngym.sim_backend import Fabric
    from ecngym.sim_backend.hpcc_reference import scenario

    sc = scenario(name)
    topo, flows = sc.topology(), sc.flows()
    configs = {cc: _reference_config(sc.name, cc) for cc in ("dcqcn_vwin", "hp")}
    walls: dict[str, list[float]] = {cc: [] for cc in configs}
    for _ in range(repeats):
        for cc, cfg in configs.items():
            start = time.perf_counter()
            with Fabric(topo, flows, cfg) as fab:
                fab.run("1s")
            walls[cc].append(time.perf_counter() - start)
    ratios = [h / w for h, w in zip(walls["hp"], walls["dcqcn_vwin"], strict=True)]
    return {"int_cost_scenario": sc.name, "int_wall_ratio": float(np.median(ratios)), "walls": walls}


def hpcc_incast(senders: int = 16, until_ns: int = 1_000_000, settle_ns: int = 200_000,
                step_ns: int = 10_000) -> dict[str, Any]:
    """HPCC's headline case: a ``senders``-to-1 incast of 20 MB flows, queue and utilisation.

    One 100 Gbps switch with the reference's hp settings (``config_A_hp.txt``), sampled every
    ``step_ns`` from ``settle_ns`` to ``until_ns`` at the port towards the receiver.

    Returns:
        ``queue_median_bytes`` / ``queue_max_bytes`` (the port's queue at the samples) and its
        utilisation three ways: ``utilisation`` = tx bits / (B x t), every byte on the wire (headers,
        INT) at the nominal rate B, which is HPCC's own txRate / B (Li et al. §3.2); ``busy`` = the
        fraction of time the wire is busy, with whole-ns serialisation (ns-3.36's, the reference's:
        a 1094 B packet takes 87 ns, not 87.52); ``goodput`` = payload bits / (B x t). And where
        that utilisation goes: ``u_estimate`` (the senders' own smoothed U, HPCC's txRate / B +
        min(q, q') / (B T) of the most utilised hop, averaged over senders and samples),
        ``u_fixed_point`` (where HPCC's update R = R_c η / U + R_AI rests for ``senders`` equal
        flows and no queue: U = η + senders x R_AI / B, Li et al. Alg. 1; the reference's
        ``RdmaHw::UpdateRateHp``) and ``queue_term`` = ``u_estimate`` - ``utilisation``, the part
        of U that the standing queue takes from the wire.
    """
    import pandas as pd

    from ecngym.sim_backend import Fabric, topology
    from ecngym.sim_backend.data import hpcc_reference_path
    from ecngym.sim_backend.hpcc_config import load_hpcc_experiment
    from ecngym.units import parse_rate_bps

    cfg = load_hpcc_experiment(hpcc_reference_path("config_A_hp.txt")).config
    flows = pd.DataFrame({"src": range(senders), "dst": senders, "size_bytes": 20_000_000, "start_ns": 0})
    queue, tx, packets, u_estimate = [], 0, 0, []
    with Fabric(topology.incast_star(hosts=senders + 1), flows, cfg) as fab:
        port = int(np.flatnonzero(fab.ports.is_switch & (fab.ports.peer_node == senders))[0])
        rate = float(fab.ports.rate_bps[port])
        fab.run_until(settle_ns)
        fab.read_telemetry()
        while fab.now_ns < until_ns:
            fab.run_until(fab.now_ns + step_ns)
            tel = fab.read_telemetry()
            queue.append(int(tel["queue_bytes"][port]))
            tx += int(tel["tx_bytes"][port])
            packets += int(tel["tx_data_packets"][port])
            u_estimate.append(float(np.mean(fab.flow_records()["cc_utilisation"])))
        span_s = (until_ns - settle_ns) * 1e-9
        packet_bytes = tx // packets  # every data packet the same size (only data leaves this port)
        utilisation = tx * 8 / (rate * span_s)
        u_mean = float(np.mean(u_estimate))
        return {
            "senders": senders, "window_ns": [settle_ns, until_ns],
            "queue_median_bytes": float(np.median(queue)), "queue_max_bytes": max(queue),
            "utilisation": utilisation,
            "busy": packets * int(packet_bytes * 8e9 / rate) * 1e-9 / span_s,
            "goodput": packets * cfg.mtu_payload * 8 / (rate * span_s),
            "packet_bytes": packet_bytes,
            "u_estimate": u_mean,
            "u_fixed_point": cfg.hpcc.target_util + senders * parse_rate_bps(cfg.hpcc.ai_rate) / rate,
            "queue_term": u_mean - utilisation,
        }


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
with Fabric(sc.topology(), sc.flow_arrays(), FabricConfig.preset("hpcc")) as fab:
    t2 = time.perf_counter()
    fab.run("1s")
    t3 = time.perf_counter()
    records = fab.flow_columns()
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
    return {"whole_process_scenario": name, "reference_wall_s": scenario(name).wall_s, "whole_process_s": total,
            "whole_process_s_all": totals,
            "flows_completed": int(med[0]), "import_s": med[1], "load_build_s": med[2], "run_s": med[3],
            "records_s": med[4], "startup_s": total - sum(med[1:])}


def _in_subprocess(args: list[str], module: str = "ecngym.perf.fabric") -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", module, "--worker", *args],
        capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark worker {args} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


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
    parser.add_argument("--cc", default="dcqcn",
                        help="comma-separated congestion controls of the reference runs to replay: "
                             f"{', '.join(CCS)}, or all (default dcqcn; the others from the reference's "
                             "own configs)")
    parser.add_argument("--hpcc-config", help="replay this HPCC-simulator experiment (its config.txt and the "
                                              "files it names) instead of the reference scenarios")
    parser.add_argument("--reference-fct", help="with --hpcc-config: the reference's FCT file to compare with "
                                                "(default: the config's FCT_OUTPUT_FILE, if it exists)")
    parser.add_argument("--fct-out", help="with --hpcc-config: write our seed-1 FCT records there, in the "
                                          "reference's format (default: ecngym_<FCT_OUTPUT_FILE name> here)")
    parser.add_argument("--pfc-out", help="with --hpcc-config: write our seed-1 PFC frames there, in the "
                                          "reference's PFC_OUTPUT_FILE format (default: ecngym_<its name> here)")
    parser.add_argument("--json-only", action="store_true", help="print only the JSON line")
    add_markdown_option(parser)
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if args.worker:
        kind = args.worker[0]
        if kind == "bare":  # bare [stock]
            result = bare_event_rate(stock=args.worker[1] if len(args.worker) > 1 else "")
        elif kind == "hpcc_incast":
            result = {"hpcc_incast": hpcc_incast()}
        elif kind == "int_cost":  # int_cost scenario repeats
            result = int_cost_interleaved(args.worker[1], int(args.worker[2]))
        elif kind == "hpcc_config":  # hpcc_config path repeats seeds reference_fct fct_out stock pfc_out
            w = args.worker
            result = run_hpcc_config(w[1], int(w[2]), int(w[3]), w[4] or None, w[5] or None, stock=w[6],
                                     pfc_out=w[7] or None)
        else:  # scenario repeats seeds aqm cc [stock]
            result = run_scenario(kind, int(args.worker[1]), int(args.worker[2]), args.worker[3],
                                  stock=args.worker[5] if len(args.worker) > 5 else "", cc=args.worker[4])
        print(json.dumps(result))
        return 0
    from ecngym.error import ConfigError
    from ecngym.sim_backend import aqm
    from ecngym.sim_backend.config import SCHEDULERS

    try:
        aqm.resolve(args.aqm, "--aqm")  # here, not as a worker's traceback
    except ConfigError as exc:
        parser.error(str(exc))
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
    ccs = [c.strip() for c in args.cc.split(",") if c.strip()]
    ccs = list(CCS) if ccs == ["all"] else ccs
    bad = [c for c in ccs if c not in CCS]
    if bad or not ccs:
        parser.error(f"--cc: got {args.cc!r}; allowed a comma-separated list of {', '.join(CCS)}, or all")
    if not args.hpcc_config and (args.reference_fct or args.fct_out or args.pfc_out):
        parser.error("--reference-fct, --fct-out and --pfc-out go with --hpcc-config")
    if args.hpcc_config:
        from ecngym.sim_backend.hpcc_config import load_hpcc_experiment

        load_hpcc_experiment(args.hpcc_config)  # a bad config is a ConfigError here, not a worker's traceback
    from rich.console import Console

    from ecngym.markdown_page import open_page, page_console

    page = open_page(args.markdown, "Fabric speed and fidelity", parser.prog, argv, parser.description)
    results = []
    with Console(stderr=True).status("measuring ...") as status:
        status.update("bare ns-3 event loop ...")
        stock = [args.stock_scheduler] if args.stock_scheduler else []
        results.append(_in_subprocess(["bare", *stock]))
        if args.hpcc_config:
            status.update(f"replaying {args.hpcc_config} ({args.repeats}x for speed, {args.seeds} seed(s)) ...")
            results.append(_in_subprocess(["hpcc_config", args.hpcc_config, str(args.repeats), str(args.seeds),
                                           args.reference_fct or "", args.fct_out or "", args.stock_scheduler,
                                           args.pfc_out or ""]))
        for cc in ccs if not args.hpcc_config else []:
            for name in names:
                status.update(f"replaying scenario {name}, {cc} ({args.repeats}x for speed, {args.seeds} seed(s)) ...")
                results.append(_in_subprocess([name, str(args.repeats), str(args.seeds), args.aqm, cc, *stock]))
        if {"hp", "dcqcn_vwin"} <= set(ccs) and not args.hpcc_config:
            repeats = max(3, args.repeats)
            status.update(f"HPCC's INT: hp and dcqcn_vwin alternated in one process ({repeats}x, {names[0]}) ...")
            results.append(_in_subprocess(["int_cost", names[0], str(repeats)]))
        if "hp" in ccs and not args.hpcc_config:
            status.update("HPCC on a 16-to-1 incast ...")
            results.append(_in_subprocess(["hpcc_incast"]))
        if args.whole_process and not args.hpcc_config:
            status.update(f"scenario A as a whole process ({args.whole_process}x) ...")
            results.append(whole_process("A", args.whole_process))
    if not args.json_only or page is not None:
        print_tables(results, page_console(page, quiet=args.json_only))
    if not args.json_only:
        for r in results:
            if r.get("fct_written"):
                print(f"our FCT records (seed 1, the reference's format): {r['fct_written']}; "
                      f"reference FCT file: {r['reference_fct'] or 'none given or found'}")
                ref_pfc = r["reference_pfc_frames"]
                print(f"our PFC frames (seed 1, the reference's format): {r['pfc_written']}, {r['pfc_frames']} "
                      f"lines; the reference's PFC file: {'not found' if ref_pfc is None else f'{ref_pfc} lines'}")
    print(json.dumps(summarize(results)))
    if page is not None:
        page.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
