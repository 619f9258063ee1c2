"""``ecngym compare``: one trace on one fabric, once per static ECN setting (no env, no controller).

Each setting is the RED setting of every switch port (``fabric.aqm.all``'s parameters).

Prints the FCT-slowdown comparison and writes each setting's flow records and the summary.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import hydra
import numpy as np
import pandas as pd
from omegaconf import DictConfig, OmegaConf
from rich.console import Console
from rich.table import Table

from ecngym import __version__
from ecngym.commands.checks import user_errors
from ecngym.error import ConfigError
from ecngym.files import write_atomically, write_text_atomically
from ecngym.sim_backend import Fabric, FabricConfig, Topology, slowdown_table
from ecngym.sim_backend.config import ECN_RENAMED
from ecngym.sim_backend.data import hpcc_reference_path
from ecngym.sim_backend.flow_checks import check_has_flows
from ecngym.sim_backend.flows import as_flow_table, read_flows
from ecngym.sim_backend.hpcc_flow_file import read_hpcc_flow_file
from ecngym.sim_backend.port_settings import ports_by_rate
from ecngym.sim_backend.topology import ALL_LAYERS
from ecngym.validation import Duration, check, config_values


def load_trace(spec: str) -> tuple[Any, str]:
    """Return (flow table or Trace, description) for the ``trace`` config field, read from its file.

    Raises:
        ConfigError: Naming ``trace`` if ``spec`` is neither ``hpcc_reference`` nor a file, else as
            :func:`~ecngym.sim_backend.flows.read_flows` raises for a malformed file.
    """
    if spec == "hpcc_reference":
        flows = read_hpcc_flow_file(hpcc_reference_path("flow_ws50_16h_100g_10ms.txt"))
        flows["start_ns"] -= flows["start_ns"].min()  # the file starts at t = 2 s
        return flows, "HPCC reference WebSearch 50% (605 flows)"
    return read_flows(spec, field="trace", expected="'hpcc_reference', a Parquet trace ('ecngym trace generate') "
                                                    "or an HPCC flow file"), spec


def _ecn_setting(fabric_cfg: FabricConfig, name: str, ecn: dict[str, Any], seed: Any,
                 ports: dict[str, Any]) -> FabricConfig:
    """The fabric config of one named ECN setting, validated (against the ports' rates too).

    The setting is RED's parameters (``kmin_bytes``, ``kmax_bytes``, ``pmax``, ``mark_at_dequeue``,
    ``by_rate``), merged into ``fabric.aqm.all`` as a RED setting. ``ports`` is the topology's
    :meth:`~ecngym.sim_backend.Topology.port_table`.

    Raises:
        ConfigError: Naming ``ecn_settings.<name>.<field>`` for a bad ECN field (an old ``fabric.ecn``
            name with its new one), ``seed`` for a seed the fabric refuses (compare's ``seed`` is
            the fabric's), else the fabric's field.
    """
    for key in ecn:
        if key in ECN_RENAMED and ECN_RENAMED[key] != key:
            raise ConfigError(f"ecn_settings.{name}.{key}", f"renamed {ECN_RENAMED[key]} (RED's parameter names"
                                                            f"{'; true marks at dequeue' if key == 'mark_at' else ''})")
    prefix = f"fabric.aqm.{ALL_LAYERS}"
    try:
        # a setting applies to every port: it replaces per-rate thresholds (an HPCC config's maps)
        setting = fabric_cfg.updated({"aqm": {ALL_LAYERS: {"policy": "red", "by_rate": {}, **ecn}}, "seed": seed})
        setting.to_cpp()
        # (a by_rate map without a port's rate failed when its run built the fabric)
        switch = np.flatnonzero(ports["is_switch"])
        ports_by_rate(setting.aqm_settings()[ALL_LAYERS].by_rate, switch, ports["rate_bps"][switch],
                      f"{prefix}.by_rate")
    except ConfigError as exc:
        if exc.field == "fabric.seed":
            raise ConfigError("seed", exc.message) from None
        if exc.field != prefix and not exc.field.startswith(f"{prefix}."):
            raise
        raise ConfigError(f"ecn_settings.{name}{exc.field.removeprefix(prefix)}", exc.message) from None
    return setting


def compare_static_settings(cfg: DictConfig, console: Console, out: Path | None = None) -> pd.DataFrame:
    """Run every ``ecn_settings`` entry on the same trace; return one summary row per setting.

    Every setting is validated before the first simulation starts. With ``out``, each setting's
    flow records and the summary so far are written as soon as that setting finishes.

    Raises:
        ConfigError: On a bad fabric, topology, trace, ECN setting or limit (naming the field).
    """
    fabric = config_values(cfg.fabric)
    if "seed" in fabric:  # the top-level seed sets it for every setting
        raise ConfigError("fabric.seed", f"got {fabric['seed']!r}; compare's fabric seed is the top-level seed "
                                         f"(now {cfg.seed!r}): give seed={fabric['seed']!r} instead")
    fabric_cfg = FabricConfig.from_dict(fabric)
    # checked whole as given, the values every setting overrides too: a bad one is a mistake, never run
    fabric_cfg.to_cpp()
    topo = Topology.from_config(config_values(cfg.topology))
    ecn_settings = cfg.get("ecn_settings")  # None once deleted with ~ecn_settings
    if not ecn_settings:
        raise ConfigError("ecn_settings", "got no setting; give at least one name: {kmin_bytes, kmax_bytes, pmax}")
    settings = {}
    ports = topo.port_table()
    for name, ecn in ecn_settings.items():
        if not isinstance(ecn, Mapping):
            raise ConfigError(f"ecn_settings.{name}", f"got {ecn!r}, expected a mapping {{kmin_bytes, kmax_bytes, "
                                                      "pmax}")
        settings[str(name)] = _ecn_setting(fabric_cfg, str(name), dict(ecn), cfg.seed, ports)
    limit_ns = check("limit", cfg.limit, Duration(low=1))
    flows, description = load_trace(str(cfg.trace))  # read (a malformed file's error is the reader's)
    try:  # checked once, before any run: the table itself, then its hosts against the topology
        flows = as_flow_table(flows)
    except ConfigError as exc:  # (a size of 0 or src == dst read "does not fit the topology")
        raise ConfigError("trace", f"{description} is not a valid flow table: {exc}") from None
    try:
        flows = as_flow_table(flows, num_hosts=topo.num_hosts)
    except ConfigError as exc:  # (e.g. a 16-host trace on a smaller topology)
        raise ConfigError("trace", f"{description} does not fit the topology {topo.name} "
                                   f"({topo.num_hosts} hosts): {exc}") from None
    check_has_flows("trace", flows, description)
    console.print(f"[bold]ecngym {__version__}[/] · {topo.name} · {description} · fabric preset "
                  f"{cfg.fabric.get('preset', 'custom')}")
    rows = []
    for name, setting in settings.items():
        start = time.perf_counter()
        with console.status(f"simulating {name} ..."), Fabric(topo, flows, setting) as fab:
            all_done = fab.run(limit_ns)
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
        if out is not None:
            write_atomically(out / f"flows_{name}.parquet", lambda tmp, r=records: r.to_parquet(tmp, index=False))
            write_atomically(out / "summary.csv", lambda tmp: pd.DataFrame(rows).to_csv(tmp, index=False))
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
        cells = [f"{r[f'{b} p50']:.2f}/{r[f'{b} p99']:.1f}"
                 for b in ("<100KB", "100KB-1MB", ">1MB", "all")]
        table.add_row(r["setting"], *cells, f"{r['flows_done']}/{r['flows']}", f"{r['wall_s']:.1f}")
    console.print(table)


@hydra.main(version_base="1.3", config_path="../configs", config_name="compare")
@user_errors
def compare_main(cfg: DictConfig) -> None:
    """Entry point of ``ecngym compare`` (Hydra overrides accepted, e.g. ``topology=leaf_spine``)."""
    console = Console(width=max(Console().width, 100))  # the comparison table needs ~100 columns
    out = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)
    summary = compare_static_settings(cfg, console, out)
    print_summary(summary, console)
    write_text_atomically(out / "run.json", json.dumps(
        {"version": __version__, "config": OmegaConf.to_container(cfg, resolve=True),
         "summary": summary.to_dict(orient="records")}, indent=2, default=str))
    console.print(f"results: {out}")
