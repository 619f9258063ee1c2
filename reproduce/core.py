"""The claim record, paper discovery and the report format of ``ecngym reproduce``."""

from __future__ import annotations

import importlib
import json
import pkgutil
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any


@dataclass
class Claim:
    """One claim of a paper beside our measurement.

    Attributes:
        id: Short id (``"T6"``, ``"fcs_flat"``), unique within the paper.
        claim: What the paper says, in one line.
        setting: Our scenario, in one line.
        metric: What the numbers measure (with units).
        paper: The paper's figure (a number, or text such as ``"<= 1.3x"``).
        ours: Our figure.
        direction_holds: Whether our result goes the way the paper's does.
        within_bar: Whether it is within the issue's bar (e.g. ratio within +-30%).
        note: Why it does not hold, or what to know when reading it.
    """

    id: str
    claim: str
    setting: str
    metric: str
    paper: Any
    ours: Any
    direction_holds: bool
    within_bar: bool
    note: str = ""

    def as_json(self) -> dict[str, Any]:
        """The claim's entry in the JSON line."""
        d = asdict(self)
        for key in ("paper", "ours"):
            if isinstance(d[key], float):
                d[key] = round(d[key], 4)
        return d


def papers() -> dict[str, ModuleType]:
    """Return ``{paper id: module}`` for every paper module in this package."""
    found: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name in ("core", "cli") or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"ecngym.reproduce.{info.name}")
        if hasattr(module, "PAPER_ID") and hasattr(module, "run"):
            found[module.PAPER_ID] = module
    return dict(sorted(found.items()))


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x)


def report(paper_id: str, title: str, claims: list[Claim], *, json_only: bool = False,
           console: Any = None) -> dict[str, Any]:
    """Print the claims as a rich table, then one JSON line; return the JSON object.

    Args:
        paper_id: The paper's id (``"pred-fcs"``).
        title: Its one-line title.
        claims: Its claims beside our figures.
        json_only: Print only the JSON line (the table still goes to ``console``'s page, if any).
        console: The rich console to print the table on (e.g. one that also writes a Markdown page,
            :func:`ecngym.markdown_page.page_console`); ``None``: a new 160-column console.
    """
    summary = {"paper": paper_id, "claims": [c.as_json() for c in claims]}
    if not json_only or console is not None:
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        table = Table(title=f"{paper_id}: {title}", show_lines=True)
        for col in ("claim", "setting", "metric", "paper", "ours", "direction", "within bar"):
            table.add_column(col, overflow="fold")
        for c in claims:
            # claims and notes are plain text: "[sensitivity]" is a label, not rich markup
            table.add_row(f"[b]{c.id}[/b] {escape(c.claim)}", escape(c.setting), escape(c.metric),
                          escape(_fmt(c.paper)), escape(_fmt(c.ours)),
                          "[green]holds[/]" if c.direction_holds else "[red]does not hold[/]",
                          "[green]yes[/]" if c.within_bar else "[red]no[/]")
        console = console if console is not None else Console(width=160)
        console.print(table)
        for c in claims:
            if c.note:
                console.print(f"[b]{c.id}[/b]: {escape(c.note)}")
    print(json.dumps(summary))
    return summary
