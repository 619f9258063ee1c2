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
        seeds: The seeds of the runs behind ``ours`` (empty: one deterministic run, no CI).
        ci: The 95 % confidence interval of the quantity the claim judges, over ``seeds``
            (:func:`mean_ci` or :func:`paired_ci`); ``None`` where fewer than two seeds ran.
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
    seeds: tuple[int, ...] = ()
    ci: tuple[float, float] | None = None

    def seeds_ci_text(self) -> str:
        """The table's "seeds / CI" cell: ``"3: 1,2,3; [0.61, 0.93]"``, ``"1: 1; no CI"`` or ``"none"``."""
        if not self.seeds:
            return "none (one deterministic run)"
        ci = f"[{_fmt(self.ci[0])}, {_fmt(self.ci[1])}]" if self.ci is not None else "no CI"
        return f"{len(self.seeds)}: {','.join(map(str, self.seeds))}; {ci}"

    def as_json(self) -> dict[str, Any]:
        """The claim's entry in the JSON line."""
        d = asdict(self)
        for key in ("paper", "ours"):
            if isinstance(d[key], float):
                d[key] = round(d[key], 4)
        d["seeds"] = list(self.seeds)
        d["ci"] = None if self.ci is None else [round(float(x), 4) for x in self.ci]
        return d


def mean_ci(values: Any, level: float = 0.95) -> tuple[float, tuple[float, float] | None]:
    """Mean of per-seed values and its Student-t confidence interval.

    Args:
        values: One value per seed.
        level: Confidence level of the interval.

    Returns:
        ``(mean, (low, high))``; the interval is ``None`` for fewer than two values.
    """
    import numpy as np
    from scipy import stats

    x = np.asarray(values, dtype=float)
    mean = float(x.mean())
    if len(x) < 2:
        return mean, None
    half = float(stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)))
    return mean, (mean - half, mean + half)


def paired_ci(a: Any, b: Any, level: float = 0.95) -> tuple[float, tuple[float, float] | None]:
    """Mean and confidence interval of the per-seed differences ``a - b`` (same seeds, same traces).

    Args:
        a: One value per seed of the first scheme.
        b: The second scheme's, seed for seed.
        level: Confidence level of the interval.

    Returns:
        ``(mean difference, (low, high))``; the interval is ``None`` for fewer than two seeds.
    """
    import numpy as np

    return mean_ci(np.asarray(a, dtype=float) - np.asarray(b, dtype=float), level)


def excludes_zero(ci: tuple[float, float] | None) -> bool:
    """Whether a confidence interval lies wholly on one side of zero (``False`` without one)."""
    return ci is not None and (ci[0] > 0 or ci[1] < 0)


def direction_with_min_effect(effect: float, paper_effect: float, ci: tuple[float, float] | None,
                              min_share: float = 0.2) -> bool:
    """A direction claim's test: the paper's sign, with a minimum effect or a CI excluding zero.

    Our effect must have the paper's sign and either reach ``min_share`` of the paper's effect, or
    its paired CI over seeds must exclude zero on the paper's side.

    Args:
        effect: Our effect (e.g. a relative change, ECN# vs RED-Tail).
        paper_effect: The paper's effect, same sign convention (non-zero).
        ci: The paired CI of our effect over seeds, or ``None``.
        min_share: The minimum share of the paper's effect (the issue's 20 %).

    Returns:
        Whether the direction holds with that margin.
    """
    same_sign = effect * paper_effect > 0
    big_enough = abs(effect) >= min_share * abs(paper_effect)
    return same_sign and (big_enough or (excludes_zero(ci) and (ci[0] + ci[1]) * paper_effect > 0))


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


def holding_text(claims: list[Claim]) -> str:
    """One line counting the claims whose direction holds and those within their bar."""
    direction = sum(c.direction_holds for c in claims)
    bar = sum(c.within_bar for c in claims)
    return f"Claims: direction holds {direction} of {len(claims)}, within bar {bar} of {len(claims)}."


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
        for col in ("claim", "setting", "metric", "paper", "ours", "seeds / 95% CI", "direction", "within bar"):
            table.add_column(col, overflow="fold")
        for c in claims:
            # claims and notes are plain text: "[sensitivity]" is a label, not rich markup
            table.add_row(f"[b]{c.id}[/b] {escape(c.claim)}", escape(c.setting), escape(c.metric),
                          escape(_fmt(c.paper)), escape(_fmt(c.ours)), escape(c.seeds_ci_text()),
                          "[green]holds[/]" if c.direction_holds else "[red]does not hold[/]",
                          "[green]yes[/]" if c.within_bar else "[red]no[/]")
        console = console if console is not None else Console(width=160)
        console.print(table)
        console.print(holding_text(claims))
        for c in claims:
            if c.note:
                console.print(f"[b]{c.id}[/b]: {escape(c.note)}")
    print(json.dumps(summary))
    return summary
