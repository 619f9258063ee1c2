"""``ecngym run``: the main job on a small default scenario.

It replays one trace on one fabric once per static ECN setting and prints the FCT-slowdown
comparison; identical traffic for every setting, so the differences come from ECN alone. The
resolved config, per-flow records and the summary land in the Hydra run directory.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import hydra
import pandas as pd
from omegaconf import DictConfig, OmegaConf
from rich.console import Console
from rich.table import Table

from ecngym import __version__
from ecngym.sim_backend import Fabric, FabricConfig, Topology, slowdown_table
from ecngym.sim_backend.data import hpcc_reference_path
from ecngym.sim_backend.flows import read_hpcc_flow_file



def load_trace(spec: str) -> tuple[Any, str]:
    """Return (flow table or Trace, description) for the ``trace`` config field."""
    if spec == "hpcc_reference":
        flows = read_hpcc_flow_file(hpcc_reference_path("flow_ws50_16h_100g_10ms.txt"))
        flows["start_ns"] -= flows["start_ns"].min()  # the file starts at t = 2 s
        return flows, "HPCC reference WebSearch 50% (605 flows)"
    return spec, spec


def compare_static_settings(cfg: DictConfig, console: Console) -> pd.DataFrame:
    """Run every ``ecn_settings`` entry on the same trace; return one summary row per setting."""
    fabric_cfg = FabricConfig.from_dict(OmegaConf.to_container(cfg.fabric, resolve=True))
    topo = Topology.from_config(OmegaConf.to_container(cfg.topology, resolve=True))
    flows, description = load_trace(str(cfg.trace))
    console.print(f"[bold]ecngym {__version__}[/] · {topo.name} · {description} · fabric preset "
                  f"{cfg.fabric.get('preset', 'custom')}")
    rows = []
    for name, ecn in cfg.ecn_settings.items():
        setting = fabric_cfg.updated({"ecn": dict(ecn), "seed": int(cfg.seed)})
        start = time.perf_counter()
        with console.status(f"simulating {name} ..."), Fabric(topo, flows, setting) as fab:
            all_done = fab.run(cfg.limit)
            records = fab.flow_records()
            counters = fab.counters()
        wall = time.perf_counter() - start
        table = slowdown_table(records)
        row = {"setting": name, "flows_done": int(records["finished"].sum()),
               "flows": len(records), "all_finished": all_done, "wall_s": wall,
               "data_packet_hops": counters["data_packet_hops"]}
        for bucket in table.index:
            row[f"{bucket} p50"] = table.loc[bucket, "median"]
            row[f"{bucket} p99"] = table.loc[bucket, "p99"]
        rows.append(row)
    return pd.DataFrame(rows)


def print_summary(summary: pd.DataFrame, console: Console) -> None:
    """Print the comparison as a rich table."""
    table = Table(title="FCT slowdown (p50 / p99) per flow size, identical trace")
    table.add_column("ECN setting")
    for bucket in ("<100KB", "100KB-1MB", ">1MB", "all"):
        table.add_column(bucket, justify="right")
    table.add_column("flows done", justify="right")
    table.add_column("wall s", justify="right")
    for _, r in summary.iterrows():
        cells = [f"{r[f'{b} p50']:.2f} / {r[f'{b} p99']:.2f}"
                 for b in ("<100KB", "100KB-1MB", ">1MB", "all")]
        table.add_row(r["setting"], *cells, f"{r['flows_done']}/{r['flows']}", f"{r['wall_s']:.1f}")
    console.print(table)


@hydra.main(version_base="1.3", config_path="configs", config_name="run")
def run_main(cfg: DictConfig) -> None:
    """Entry point of ``ecngym run`` (Hydra overrides accepted, e.g. ``topology=leaf_spine``)."""
    console = Console()
    summary = compare_static_settings(cfg, console)
    print_summary(summary, console)
    out = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)
    summary.to_csv(out / "summary.csv", index=False)
    (out / "run.json").write_text(json.dumps(
        {"version": __version__, "config": OmegaConf.to_container(cfg, resolve=True),
         "summary": summary.to_dict(orient="records")}, indent=2, default=str))
    console.print(f"results: {out}")
