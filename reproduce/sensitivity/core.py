"""The sweep record, the grid runner (at most 2 processes, nice 10) and the report of ``--sensitivity``."""

from __future__ import annotations

import json
import math
import os
import resource
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any

from ecngym.error import ConfigError

#: the most worker processes a sweep may use (the machine's 2 cores are shared)
MAX_JOBS = 2
#: the niceness of the worker processes
WORKER_NICE = 10


@dataclass
class Sweep:
    """One claim swept over a grid of settings the paper leaves open.

    Attributes:
        id: Short id, unique within the paper (``"incast_queue"``).
        claim: The paper's claim, in one line, with its figure.
        setting: What stays fixed, in one line.
        grid: The names of the swept settings (the first columns of each row).
        figures: The names of the claim's figures in each row (with units).
        rows: One dict per grid point: the grid values, the figures, ``holds`` (the claim's
            direction) and ``near_paper`` (within the reproduction's bar of the paper's figure).
        summary: Where the claim holds, in one line.
        note: What to know when reading it.
    """

    id: str
    claim: str
    setting: str
    grid: list[str]
    figures: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    summary: str = ""
    note: str = ""

    def holds_at(self) -> int:
        """How many grid points the claim holds at."""
        return sum(bool(r["holds"]) for r in self.rows)

    def as_json(self) -> dict[str, Any]:
        """The sweep's entry in the JSON line (floats rounded to 4 significant digits)."""
        def clean(v: Any) -> Any:
            if isinstance(v, float):
                return None if math.isnan(v) else float(f"{v:.4g}")
            return v
        return {"id": self.id, "claim": self.claim, "grid": self.grid, "points": len(self.rows),
                "holds_at": self.holds_at(), "near_paper_at": sum(bool(r["near_paper"]) for r in self.rows),
                "summary": self.summary, "rows": [{k: clean(v) for k, v in r.items()} for r in self.rows]}


def check_jobs(jobs: Any) -> int:
    """``--jobs`` as an int in 1..:data:`MAX_JOBS`.

    Raises:
        ConfigError: Naming ``--jobs`` otherwise.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS:
        raise ConfigError("--jobs", f"got {jobs!r}; allowed: a whole number from 1 to {MAX_JOBS} "
                                    "(the machine's cores are shared)")
    return jobs


def _call(job: tuple[Callable[..., Any], dict[str, Any]]) -> Any:
    fn, kwargs = job
    return fn(**kwargs)


def run_points(fn: Callable[..., Any], points: Sequence[dict[str, Any]], jobs: int = 1) -> list[Any]:
    """``[fn(**p) for p in points]``, in ``jobs`` worker processes at nice 10 when ``jobs`` > 1.

    ``fn`` must be a module-level function (it is pickled to the workers); each worker runs one
    simulation at a time (ns-3's simulator is one per process).
    """
    jobs = check_jobs(jobs)
    if jobs == 1 or len(points) <= 1:
        return [fn(**p) for p in points]
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn"), initializer=os.nice,
                             initargs=(WORKER_NICE,)) as pool:
        return list(pool.map(_call, [(fn, dict(p)) for p in points]))


class Timer:
    """Wall and CPU seconds of a sweep, the worker processes' CPU included."""

    def __init__(self) -> None:
        self.wall0 = time.perf_counter()
        self.cpu0 = self._cpu()

    @staticmethod
    def _cpu() -> float:
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    def seconds(self) -> tuple[float, float]:
        """(wall s, CPU s) since the timer started."""
        return time.perf_counter() - self.wall0, self._cpu() - self.cpu0


def fmt(value: Any) -> str:
    """A table cell: floats to 3 significant digits, booleans as yes / no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.3g}"
    return str(value)


def report(paper: str, title: str, sweeps: list[Sweep], wall_s: float, cpu_s: float, *, json_only: bool = False,
           console: Any = None) -> dict[str, Any]:
    """Print one table per sweep (a row per grid point), its summary, then one JSON line; return it.

    Args:
        paper: The paper's id.
        title: The sensitivity module's title.
        sweeps: Its sweeps.
        wall_s: Wall seconds the sweeps took.
        cpu_s: CPU seconds they took (worker processes included).
        json_only: Print only the JSON line (the tables still go to ``console``'s page, if any).
        console: A rich console (e.g. one that also writes a page); ``None``: a new 160-column one.
    """
    summary = {"paper": paper, "sensitivity": [s.as_json() for s in sweeps], "wall_s": round(wall_s, 1),
               "cpu_s": round(cpu_s, 1)}
    if not json_only or console is not None:
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        console = console if console is not None else Console(width=160)
        for s in sweeps:
            table = Table(title=f"{paper} / {s.id}: {s.claim}", show_lines=False)
            for col in (*s.grid, *s.figures, "holds", "near paper"):
                table.add_column(col, overflow="fold", justify="left" if col in s.grid else "right")
            for r in s.rows:
                cells = [fmt(r[c]) for c in (*s.grid, *s.figures)]
                table.add_row(*map(escape, cells), "[green]yes[/]" if r["holds"] else "[red]no[/]",
                              "[green]yes[/]" if r["near_paper"] else "no")
            console.print(table)
            console.print(f"[b]{s.id}[/b] setting: {escape(s.setting)}")
            console.print(f"[b]{s.id}[/b] holds at {s.holds_at()} of {len(s.rows)} points: {escape(s.summary)}")
            if s.note:
                console.print(f"[b]{s.id}[/b] note: {escape(s.note)}")
        console.print(f"{paper}: {wall_s:.0f} s wall, {cpu_s:.0f} s CPU (worker processes included)")
    print(json.dumps(summary))
    return summary


def mean(values: Sequence[float]) -> float:
    """The mean, NaN for no values."""
    return float(sum(values) / len(values)) if values else float("nan")


def ratio(a: float, b: float) -> float:
    """A / b, NaN where b is 0."""
    return a / b if b else float("nan")


def where_holds(sweep: Sweep, *keys: str) -> str:
    """The grid points (their ``keys``) where the sweep's claim holds, as one line."""
    held = [", ".join(f"{k}={r[k]:g}" if isinstance(r[k], float) else f"{k}={r[k]}" for k in keys)
            for r in sweep.rows if r["holds"]]
    if not held:
        return "nowhere on the grid"
    if len(held) == len(sweep.rows):
        return "everywhere on the grid"
    return "at " + "; ".join(held)
