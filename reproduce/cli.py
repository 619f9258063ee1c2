"""``ecngym reproduce <paper> | --all | --list``: print a paper's claims beside our measurements."""

from __future__ import annotations

import argparse
import sys
import time

from ecngym.error import ConfigError
from ecngym.markdown_page import MarkdownPage, add_markdown_option, check_markdown_path, page_console
from ecngym.reproduce.core import Claim, holding_text, papers, report
from ecngym.reproduce.sensitivity import SWEEPS, sweep_module

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
    parser.add_argument("--sensitivity", action="store_true",
                        help="sweep the settings the paper leaves open instead (ecngym.reproduce.sensitivity)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="--sensitivity: worker processes for the grid points, 1 or 2 (at nice 10)")
    parser.add_argument("--before", metavar="JSONL",
                        help="a file of an earlier run's JSON lines: print its count of the claims that hold "
                             "beside each paper's")
    add_markdown_option(parser)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    before = _read_before(args.before) if args.before else {}
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
    if args.sensitivity:
        return sensitivity_main(args, [args.paper] if args.paper is not None else list(SWEEPS),
                                ["ecngym", "reproduce", *(sys.argv[1:] if argv is None else argv)])
    if args.jobs != 1:
        raise ConfigError("--jobs", f"got {args.jobs}: only --sensitivity runs grid points in parallel")
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
        if pid in before and not (args.json_only and console is None):
            text = f"Before ({args.before}): " + holding_text(before[pid])
            (console.print(text) if console is not None else print(text))
    if page is not None:
        page.write(markdown)
    return 0


SENSITIVITY_INTRO = ("Each table sweeps one paper claim over settings the paper leaves open (buffer, query count, "
                     "load; initial window, window floor, senders; lambda unit, connections, T_QLA): one row per "
                     "grid point with the claim's figures, whether the claim holds there (its direction) and "
                     "whether it is near the paper's figure (the reproduction's bar). Each paper's section gives "
                     "the wall and CPU time of its sweep. The scenarios are the reproductions' own "
                     "(docs: reproductions.md); nothing is tuned to make a claim hold.")


def sensitivity_main(args: argparse.Namespace, paper_ids: list[str], command: list[str]) -> int:
    """``--sensitivity``: run each paper's sweeps, print their tables and JSON lines (and the page).

    Raises:
        ConfigError: Naming ``paper`` if a paper has no sweep, ``--jobs`` if it is not 1 or 2.
    """
    from ecngym.reproduce.sensitivity.core import Timer, check_jobs
    from ecngym.reproduce.sensitivity.core import report as sweep_report

    modules = {pid: sweep_module(pid) for pid in paper_ids}
    jobs = check_jobs(args.jobs)
    markdown = check_markdown_path(args.markdown)
    page = MarkdownPage("Reproductions: sensitivity", command, SENSITIVITY_INTRO) if markdown else None
    console = page_console(page, width=160, quiet=args.json_only) if page else None
    for pid, module in modules.items():
        timer = Timer()
        sweeps = _with_progress(module, args.quick, jobs)
        wall_s, cpu_s = timer.seconds()
        if page is not None:
            page.heading(pid)
            page.add(f"`ecngym reproduce {pid} --sensitivity{' --quick' if args.quick else ''} --jobs {jobs}`: "
                     f"{wall_s:.0f} s wall time, {cpu_s:.0f} s CPU time. {module.__doc__.split(chr(10))[0]}")
        sweep_report(pid, module.TITLE, sweeps, wall_s, cpu_s, json_only=args.json_only, console=console)
        if page is not None:  # after each paper: a long --all run that is stopped keeps the papers it finished
            page.write(markdown)
    return 0


def _with_progress(module: object, quick: bool, jobs: int | None = None) -> object:
    """``module.run(quick)`` under a spinner with the elapsed time, on stderr (these runs take 10 s to minutes)."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        progress.add_task(f"{getattr(module, 'PAPER_ID', module.__name__)}: running its simulations", total=None)
        return module.run(quick=quick) if jobs is None else module.run(quick=quick, jobs=jobs)


def _read_before(path: str) -> dict[str, list[Claim]]:
    """``{paper id: claims}`` from a file of an earlier run's JSON lines (``ecngym reproduce --all``'s output).

    Raises:
        ConfigError: If the file cannot be read or holds no paper's JSON line.
    """
    import json
    from pathlib import Path

    try:
        lines = Path(path).read_text().splitlines()
    except OSError as e:
        raise ConfigError("--before", f"cannot read {path!r}: {e.strerror}") from e
    out: dict[str, list[Claim]] = {}
    for line in lines:
        if line.startswith('{"paper"'):
            d = json.loads(line)
            out[d["paper"]] = [Claim(c["id"], c.get("claim", ""), c.get("setting", ""), c["metric"], c["paper"],
                                     c["ours"], c["direction_holds"], c["within_bar"]) for c in d["claims"]]
    if not out:
        raise ConfigError("--before", f"{path!r} holds no JSON line of `ecngym reproduce`")
    return out
