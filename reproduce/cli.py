"""``ecngym reproduce <paper> | --all | --list``: print a paper's claims beside our measurements."""

from __future__ import annotations

import argparse
import sys
import time

from ecngym.error import ConfigError
from ecngym.markdown_page import MarkdownPage, add_markdown_option, check_markdown_path, page_console
from ecngym.reproduce.core import papers, report

#: the page's paragraph under its stamp
PAGE_INTRO = ("Each table puts a paper's claims beside our measurement on a small real simulation: the paper's "
              "figure, ours, whether our result goes the paper's way (direction) and whether it is within the "
              "bar the reproduction set (e.g. a ratio within +-30 %). A claim that does not hold is reported as "
              "not holding, with the reason in its note; nothing is tuned to make it pass.")


def main(argv: list[str] | None = None) -> int:
    """Run one paper's reproduction, every paper's (``--all``), or list them; return the exit code.

    Raises:
        ConfigError: If the paper id is unknown (naming the known ones), or the options contradict.
    """
    parser = argparse.ArgumentParser(prog="ecngym reproduce", description=__doc__)
    parser.add_argument("paper", nargs="?", help="paper id (see --list)")
    parser.add_argument("--list", action="store_true", help="name the papers and exit")
    parser.add_argument("--all", action="store_true", help="run every paper's reproduction, one after another")
    parser.add_argument("--quick", action="store_true", help="smaller runs (for tests), same claims")
    parser.add_argument("--json-only", action="store_true", help="print only the JSON line(s)")
    add_markdown_option(parser)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    found = papers()
    if args.list and (args.paper is not None or args.all):  # --list runs nothing, so a paper beside it would go unread
        given = f"the paper {args.paper!r}" if args.paper is not None else "--all"
        raise ConfigError("--list", f"names the papers and runs none; got {given} too: give one or the other")
    if args.all and args.paper is not None:
        raise ConfigError("--all", f"runs every paper; got the paper {args.paper!r} too: give one or the other")
    if args.list or (args.paper is None and not args.all):
        for pid, module in found.items():
            print(f"{pid:<14} {module.TITLE}")
        return 0
    if args.paper is not None and args.paper not in found:
        raise ConfigError("paper", f"unknown paper {args.paper!r}; known: {', '.join(found)}")
    markdown = check_markdown_path(args.markdown)
    command = ["ecngym", "reproduce", *(sys.argv[1:] if argv is None else argv)]
    page = MarkdownPage("Reproductions", command, PAGE_INTRO) if markdown else None
    console = page_console(page, width=160, quiet=args.json_only) if page else None
    for pid in found if args.all else [args.paper]:
        module = found[pid]
        started = time.perf_counter()
        claims = _with_progress(module, args.quick)
        if page is not None:
            page.heading(pid)
            page.add(f"`ecngym reproduce {pid}{' --quick' if args.quick else ''}`: "
                     f"{time.perf_counter() - started:.0f} s wall time.")
        report(module.PAPER_ID, module.TITLE, claims, json_only=args.json_only, console=console)
    if page is not None:
        page.write(markdown)
    return 0


def _with_progress(module: object, quick: bool) -> object:
    """``module.run(quick)`` under a spinner with the elapsed time, on stderr (these runs take 10 s to minutes)."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        progress.add_task(f"{module.PAPER_ID}: running its simulations", total=None)
        return module.run(quick=quick)
