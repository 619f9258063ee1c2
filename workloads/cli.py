"""``ecngym trace generate`` (Hydra) and ``ecngym trace inspect`` (argparse)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import hydra
import numpy as np
from omegaconf import DictConfig
from rich.console import Console
from rich.table import Table

from ecngym.configs import CONFIG_DIR
from ecngym.error import ConfigError, EcnGymError
from ecngym.files import check_output_path
from ecngym.units import parse_rate_bps
from ecngym.validation import config_values
from ecngym.workloads.distributions import suggest
from ecngym.workloads.generator import generate_trace_from_config
from ecngym.workloads.trace import Trace

_PROG = "ecngym trace generate"


def workload_choices() -> list[str]:
    """The ``workload`` config group's options (``configs/workload/*.yaml``)."""
    return sorted(p.stem for p in (CONFIG_DIR / "workload").glob("*.yaml"))


def _check_workload_overrides(args: list[str]) -> None:
    """Refuse ``workload=<unknown>`` before Hydra composes, suggesting the closest option.

    Plain names and comma lists (``-m workload=a,b``) are checked; other sweep syntax is left to
    Hydra.

    Raises:
        ConfigError: On an unknown option.
    """
    known = workload_choices()
    for arg in args:
        m = re.fullmatch(r"workload=([\w,]+)", arg)
        for name in (m.group(1).split(",") if m else []):
            if name and name not in known:
                raise ConfigError("workload", f"unknown workload {name!r}; options: {known}.{suggest(name, known)}")


@hydra.main(version_base="1.3", config_path="../configs", config_name="trace")
def _generate(cfg: DictConfig) -> None:
    try:
        out = check_output_path("output", cfg.output, ".parquet")  # (Hydra's job.chdir is false)
        trace = generate_trace_from_config(config_values(cfg))
        if not out.is_absolute():
            out = Path(hydra.utils.get_original_cwd()) / out
        trace.save(out)
    except EcnGymError as exc:  # bad input: one line and exit code 2, not Hydra's traceback
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    Console().print(f"{len(trace):,} flows -> {out}\nhash {trace.hash}", highlight=False, soft_wrap=True)


def generate_main() -> None:
    r"""``ecngym trace generate [overrides]``: generate a trace and write it as Parquet.

    The arguments are Hydra overrides of ``configs/trace.yaml`` (``-m`` sweeps), read from
    ``sys.argv``. Prints the output path and the trace's hash. Example::

        ecngym trace generate workload=datamining load=0.7 hosts=32 seed=2 \
            incast.degree=16 incast.size=64KB incast.interval=1ms incast.arrival=periodic

    Raises:
        SystemExit: With code 2 on bad input (the message on stderr names the field).
    """
    try:
        _check_workload_overrides(sys.argv[1:])
    except ConfigError as exc:
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    _generate()


def _count(text: str) -> int:
    """Argparse type of a count >= 0 (``--head -1`` is refused rather than dropping the last flow)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return n


def inspect_main(argv: list[str] | None = None) -> int:
    """``ecngym trace inspect PATH``: print a trace's flows, achieved load, size percentiles and hash.

    Args:
        argv: Arguments (default ``sys.argv[1:]``): ``PATH [--link-rate RATE] [--head N]``.

    Returns:
        0.

    Raises:
        ConfigError: If the file is missing, unreadable, or fails its hash check.
    """
    parser = argparse.ArgumentParser(prog="ecngym trace inspect", description=inspect_main.__doc__.splitlines()[0])
    parser.add_argument("path", help="a Parquet trace (ecngym trace generate) or an HPCC flow file")
    parser.add_argument("--link-rate", default=None, help="host link rate for the load (default: as generated, "
                                                          "else 100Gbps)")
    parser.add_argument("--head", type=_count, default=10, help="flows to show (a whole number >= 0; default 10)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not args.path.strip():  # (Path('') is '.': "got '.', which is a directory")
        raise ConfigError("trace", "got '', expected the path of a Parquet trace or an HPCC flow file")
    path = Path(args.path)
    trace = Trace.read(path, allow_empty=True)  # (an empty trace is refused where it is replayed, not here)
    f = trace.flows
    console = Console(width=max(Console().width, 100))  # the hash row needs ~90 columns
    # only a missing --link-rate falls back to the trace's rate: an empty one is refused as given
    given = args.link_rate if args.link_rate is not None else trace.params.get("link_rate_bps", "100Gbps")
    rate = parse_rate_bps(given, "--link-rate")

    facts = Table(title=f"trace {path.name}", show_header=False, title_justify="left")
    facts.add_column(style="bold")
    facts.add_column(no_wrap=True)
    facts.add_row("hash", trace.hash)
    facts.add_row("seed / version", f"{trace.seed} / {trace.version}")
    by_tag = ", ".join(f"{k}: {v:,}" for k, v in f["tag"].value_counts().items())
    facts.add_row("flows", f"{len(trace):,}" + (f" ({by_tag})" if by_tag else ""))
    facts.add_row("hosts", str(trace.n_hosts))
    facts.add_row("window", f"{trace.duration_ns / 1e6:.3f} ms")
    facts.add_row("bytes", f"{int(f['size_bytes'].sum()):,}")
    try:
        target = trace.params.get("load")
        facts.add_row("achieved load", f"{trace.achieved_load(rate):.4f} of {rate / 1e9:g} Gbps host links"
                      + (f" (background target {target})" if target is not None else ""))
    except ConfigError as exc:
        facts.add_row("achieved load", f"n/a ({exc})")
    console.print(facts)

    if len(f):
        levels = [1, 10, 50, 90, 99, 99.9]
        sizes = Table(title="flow sizes", title_justify="left")
        sizes.add_column("statistic")
        sizes.add_column("bytes", justify="right")
        sizes.add_row("mean", f"{f['size_bytes'].mean():,.0f}")
        for level, value in zip(levels, np.percentile(f["size_bytes"], levels), strict=True):
            sizes.add_row(f"p{level:g}", f"{value:,.0f}")
        sizes.add_row("max", f"{int(f['size_bytes'].max()):,}")
        console.print(sizes)

        head = Table(title=f"first {min(args.head, len(f))} of {len(f):,} flows", title_justify="left")
        for col in f.columns:
            head.add_column(col, justify="left" if col == "tag" else "right")
        for row in f.head(args.head).itertuples(index=False):
            head.add_row(*(f"{v:,}" if isinstance(v, (int, np.integer)) else str(v) for v in row))
        console.print(head)
    return 0
