"""Tables that fit the terminal: the ranking columns always whole, the rest folded or moved below.

A table is described as columns of text (:class:`Column`); :func:`fit_tables` lays them out for the
console's width, trying in turn:

1. one table, every cell on one line;
2. one table, every interval folded onto a second line under its mean (``1.23`` / ``[0.9, 1.5]``);
3. the key columns (the ones that order the ranking) in a first table, with as many of the
   others as fit; the rest in further tables below, each repeating the row names.

Nothing is cut: no cell is truncated with "…", a label wraps before a value does. ``wide=True``
prints the one-line layout whatever the width (the terminal then wraps long lines). Which columns
exist is the caller's: a new column (another reference, a paired verdict) is one more
:class:`Column`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

#: Width a layout is measured at when ``wide`` (large enough for any of our tables).
UNBOUNDED_WIDTH = 100_000


@dataclass
class Column:
    """One column of a table: its label and one text per row.

    Args:
        label: The header (it may wrap; values never do).
        cells: One text per row; an interval ``mean [low, high]`` may fold at its `` [``.
        key: A column that orders the ranking: always in the first table.
        justify: ``"right"`` (numbers) or ``"left"``.
    """

    label: str
    cells: list[str]
    key: bool = False
    justify: str = "right"


def _folded(text: str) -> str:
    """``1.23 [0.9, 1.5]`` as two lines (the mean above its interval)."""
    return text.replace(" [", "\n[", 1)


def _table(name: Column, columns: list[Column], fold: bool, styles: list[str | None], title: str | None,
           caption: str | None) -> Table:
    table = Table(title=title, caption=caption)
    table.add_column(name.label, justify=name.justify, no_wrap=True)
    for c in columns:
        table.add_column(c.label, justify=c.justify, overflow="fold")
    for i, style in enumerate(styles):
        cells = [_folded(c.cells[i]) if fold else c.cells[i] for c in columns]
        table.add_row(name.cells[i], *cells, style=style, end_section=fold)
    return table


def table_width(table: Table, console: Console) -> int:
    """The width ``table`` takes with every cell on its own lines unwrapped (its natural width)."""
    return Measurement.get(console, console.options.update_width(UNBOUNDED_WIDTH), table).maximum


def fit_tables(console: Console, name: Column, columns: list[Column], styles: list[str | None] | None = None,
               title: str | None = None, caption: str | None = None, wide: bool = False) -> list[Table]:
    """The tables that show ``columns`` (rows named by ``name``) within ``console.width``.

    Args:
        console: Where they will print (its width is the limit).
        name: The row names (never wrapped: each table repeats them).
        columns: The other columns, in order.
        styles: A rich style per row (e.g. ``"dim"`` for references), or None.
        title: The first table's title.
        caption: The last table's caption.
        wide: Lay out one table on one line per row, whatever the width.

    Returns:
        One table, or the key columns' table followed by the rest in as many tables as it takes.
    """
    styles = styles if styles is not None else [None] * len(name.cells)
    for fold in (False, True):
        table = _table(name, columns, fold, styles, title, caption)
        if wide or table_width(table, console) <= console.width:
            return [table]
    key = [c for c in columns if c.key]
    groups: list[list[Column]] = [key]
    for column in (c for c in columns if not c.key):  # in order, into the first table they fit
        trial = _table(name, [*groups[-1], column], True, styles, None, None)
        if groups[-1] and table_width(trial, console) > console.width:
            groups.append([])
        groups[-1].append(column)
    tables = [_table(name, group, True, styles, title if i == 0 else None, None) for i, group in enumerate(groups)]
    tables[-1].caption = caption
    return tables


def print_tables(console: Console, tables: list[Table]) -> None:
    """Print ``tables`` one after the other."""
    for table in tables:
        console.print(table)


def terminal_console(wide: bool = False, **kwargs: object) -> Console:
    """A console at the terminal's width (``COLUMNS`` when set), or unbounded with ``wide``."""
    return Console(width=UNBOUNDED_WIDTH, soft_wrap=True, **kwargs) if wide else Console(**kwargs)
