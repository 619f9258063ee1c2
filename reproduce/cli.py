"""``ecngym reproduce <paper> | --list``: print a paper's claims beside our measurements."""

from __future__ import annotations

import argparse

from ecngym.error import ConfigError
from ecngym.reproduce.core import papers, report


def main(argv: list[str] | None = None) -> int:
    """Run one paper's reproduction (or list them); return the exit code.

    Raises:
        ConfigError: If the paper id is unknown (naming the known ones).
    """
    parser = argparse.ArgumentParser(prog="ecngym reproduce", description=__doc__)
    parser.add_argument("paper", nargs="?", help="paper id (see --list)")
    parser.add_argument("--list", action="store_true", help="name the papers and exit")
    parser.add_argument("--quick", action="store_true", help="smaller runs (for tests), same claims")
    parser.add_argument("--json-only", action="store_true", help="print only the JSON line")
    args = parser.parse_args(argv)
    found = papers()
    if args.list and args.paper is not None:  # --list runs nothing, so a paper beside it would go unread
        raise ConfigError("--list", f"names the papers and runs none; got the paper {args.paper!r} too: give one "
                                    "or the other")
    if args.list or args.paper is None:
        for pid, module in found.items():
            print(f"{pid:<14} {module.TITLE}")
        return 0
    if args.paper not in found:
        raise ConfigError("paper", f"unknown paper {args.paper!r}; known: {', '.join(found)}")
    module = found[args.paper]
    report(module.PAPER_ID, module.TITLE, _with_progress(module, args.quick), json_only=args.json_only)
    return 0


def _with_progress(module: object, quick: bool) -> object:
    """``module.run(quick)`` under a spinner with the elapsed time, on stderr (these runs take 10 s to minutes)."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        progress.add_task(f"{module.PAPER_ID}: running its simulations", total=None)
        return module.run(quick=quick)
