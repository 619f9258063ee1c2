"""``ecngym trace generate`` (Hydra) and ``ecngym trace inspect`` (argparse)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import hydra
import numpy as np
from omegaconf import DictConfig, OmegaConf
from rich.console import Console
from rich.table import Table

from ecngym.units import parse_rate_bps
from ecngym.workloads.generator import generate_trace_from_config
from ecngym.workloads.trace import Trace


@hydra.main(version_base="1.3", config_path="../configs", config_name="trace")
def generate_main(cfg: DictConfig) -> None:
    """Generate a trace from Hydra overrides and write it as Parquet.

    Example: ``ecngym trace generate workload=datamining load=0.7 hosts=32 seed=2
    incast.degree=16 incast.size=64KB incast.interval=1ms incast.arrival=periodic``
    """
    trace = generate_trace_from_config(OmegaConf.to_container(cfg, resolve=True))
    out = Path(cfg.output)
    if not out.is_absolute():
        out = Path(hydra.utils.get_original_cwd()) / out
    trace.save(out)
    Console().print(f"{len(trace)} flows -> {out}\nhash {trace.hash}")


def inspect_main(argv: list[str] | None = None) -> int:
    """Print a trace's flows, achieved load, size percentiles and hash."""
    parser = argparse.ArgumentParser(prog="ecngym trace inspect", description=inspect_main.__doc__)
    parser.add_argument("path", help="a Parquet trace (ecngym trace generate) or an HPCC flow file")
    parser.add_argument("--link-rate", default=None, help="host link rate for the load (default: as generated)")
    parser.add_argument("--head", type=int, default=5, help="flows to show (default 5)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    path = Path(args.path)
    trace = Trace.load(path) if path.suffix == ".parquet" else Trace.from_hpcc_flow_file(path)
    console = Console()
    rate = parse_rate_bps(args.link_rate or trace.params.get("link_rate_bps", "100Gbps"), "--link-rate")
    facts = Table(title=f"trace {path.name}", show_header=False)
    facts.add_row("hash", trace.hash)
    facts.add_row("seed / version", f"{trace.seed} / {trace.version}")
    by_tag = ", ".join(f"{k}: {v:,}" for k, v in trace.flows["tag"].value_counts().items())
    facts.add_row("flows", f"{len(trace):,} ({by_tag})")
    facts.add_row("hosts", str(trace.n_hosts))
    facts.add_row("window", f"{trace.duration_ns / 1e6:.3f} ms")
    facts.add_row("bytes", f"{trace.flows['size_bytes'].sum():,}")
    facts.add_row("achieved load", f"{trace.achieved_load(rate):.3f} of {rate / 1e9:g} Gbps host links"
                  + (f" (target {trace.params['load']})" if "load" in trace.params else ""))
    q = np.percentile(trace.flows["size_bytes"], [1, 10, 50, 90, 99, 99.9])
    levels = [1, 10, 50, 90, 99, 99.9]
    facts.add_row("size percentiles", "  ".join(f"p{p}: {v:,.0f}" for p, v in zip(levels, q, strict=True)))
    console.print(facts)
    console.print(trace.flows.head(args.head).to_string(index=False))
    return 0
