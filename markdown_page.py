"""Markdown pages written by the commands that make them (``--markdown PATH``, ``markdown=PATH``).

``ecngym bench fabric|env|train|scale|tcp``, ``ecngym reproduce`` and ``ecngym benchmark
board|rewards|learners|headroom|scenarios`` write their tables as a Markdown page of the docs site,
stamped with the exact command, and for a page of measurements also with the ecngym version, the
date and the machine (CPU model, cores, load), so every figure on the site names the command that
produced it (``make docs-results`` reruns them). A page generated from committed files only
(``measured=False``: the scenario table) carries the command alone, so that it is the same bytes
whenever its files are the same.

One :class:`MarkdownPage` per command: a :func:`page_console` prints as a rich ``Console`` does and
also appends each table (rendered by pandas' ``to_markdown``) and each line of text to the page;
:meth:`MarkdownPage.add` appends tables and text without printing them, and
:meth:`MarkdownPage.add_markdown` a block the command wrote in Markdown (prose with its own emphasis).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import shlex
from pathlib import Path
from typing import Any

__all__ = ["MarkdownPage", "add_markdown_option", "check_markdown_path", "machine", "open_page", "page_console",
           "table_markdown"]


def add_markdown_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--markdown PATH`` to a command's parser (the same help text for every command)."""
    parser.add_argument("--markdown", metavar="PATH", default=None,
                        help="also write the tables as a Markdown page there (stamped with the version, date, "
                             "machine and this command; the docs' benchmark pages are made this way)")


def machine() -> str:
    """The machine in one line: CPU model, logical cores and the 1-minute load average.

    The load is part of it because these pages are measured on shared machines: a load above the
    core count means other work competed for the CPUs during the run.
    """
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), model)
    except OSError:  # not Linux: platform's answer
        pass
    load = f", load average {os.getloadavg()[0]:.1f} at the start" if hasattr(os, "getloadavg") else ""
    return f"{model}, {os.cpu_count()} logical cores{load} ({platform.system()} {platform.release()})"


def _plain(text: str) -> str:
    """``text`` without rich markup (``[b]T6[/b]`` -> ``T6``)."""
    from rich.text import Text

    return Text.from_markup(text).plain if "[" in text else text


def _markdown_text(text: str) -> str:
    """Plain text made safe inside Markdown: HTML's ``<``/``&``, emphasis stars and brackets escaped.

    (A bracketed word, ``[ours]``, would read as a cross-reference to the docs site's autorefs.)
    """
    import html

    text = html.escape(text, quote=False).replace("*", "\\*")
    return text.replace("[", "\\[").replace("]", "\\]")


def _cell(value: Any) -> str:
    """A table cell as Markdown text: rich markup removed, pipes escaped, one line."""
    from rich.text import Text

    text = value.plain if isinstance(value, Text) else _plain(str(value))
    return _markdown_text(text).replace("|", "\\|").replace("\n", " ").strip()


def table_markdown(table: Any) -> str:
    """A rich ``Table`` as a Markdown (GitHub pipe) table, its title as a heading above it.

    Args:
        table: A ``rich.table.Table``.

    Returns:
        The Markdown text, ending in a newline.
    """
    import pandas as pd

    columns = [_cell(c.header) for c in table.columns]
    rows = [[_cell(cell) for cell in c.cells] for c in table.columns]
    frame = pd.DataFrame({i: col for i, col in enumerate(rows)})
    frame.columns = columns
    aligns = ["right" if c.justify == "right" else "left" for c in table.columns]
    title = f"### {_cell(table.title)}\n\n" if table.title else ""
    body = frame.to_markdown(index=False, tablefmt="pipe", colalign=aligns, disable_numparse=True)
    return f"{title}{body}\n"


class MarkdownPage:
    """A Markdown page of one command's output: its stamp, then its tables and notes in print order.

    Args:
        title: The page's title (its first heading).
        command: The command as run, one argument per item (``["ecngym", "bench", "env"]``).
        intro: Markdown under the stamp (what the page measures), or ``""``.
        measured: Whether the page holds measurements (the stamp then gives the version, date, wall
            time and machine); ``False`` for a page generated from committed files only, stamped
            with its command alone.
        field: The command's argument that names the page's path (for the messages of :meth:`write`).
    """

    def __init__(self, title: str, command: list[str], intro: str = "", measured: bool = True,
                 field: str = "--markdown") -> None:
        from ecngym import __version__

        self.title = title
        self.command = shlex.join(command)
        self.intro = intro
        self.measured = measured
        self.field = field
        self.version = __version__
        self.started = _dt.datetime.now(_dt.timezone.utc)
        self.machine = machine()
        self.blocks: list[str] = []
        self.path: Path | None = None  # where write() puts it by default (open_page sets it)

    def add(self, *items: Any) -> None:
        """Append rich ``Table`` objects (as Markdown tables) and strings (as paragraphs, markup removed)."""
        from rich.table import Table
        from rich.text import Text

        for item in items:
            if isinstance(item, Table):
                self.blocks.append(table_markdown(item))
            elif isinstance(item, (str, Text)):
                text = item.plain if isinstance(item, Text) else _plain(item)
                if text.strip():
                    self.blocks.append(_markdown_text(text.strip()) + "\n")

    def heading(self, text: str) -> None:
        """Append a section heading (``## text``)."""
        self.blocks.append(f"## {text}\n")

    def add_markdown(self, text: str) -> None:
        """Append a block the command wrote in Markdown (headings, lists, emphasis), as it is."""
        if text.strip():
            self.blocks.append(text.strip() + "\n")

    def render(self) -> str:
        """The page's Markdown text."""
        wall_s = (_dt.datetime.now(_dt.timezone.utc) - self.started).total_seconds()
        stamp = (f"!!! info \"Generated by a command, not written by hand\"\n"
                 f"    `{self.command}`\n")
        if self.measured:
            stamp += (f"\n    ecngym {self.version}, {self.started:%Y-%m-%d %H:%M} UTC, {wall_s:.0f} s wall time; "
                      f"machine: {self.machine}.\n")
        parts = [f"# {self.title}\n", stamp] + ([self.intro.strip() + "\n"] if self.intro.strip() else [])
        return "\n".join(parts + self.blocks)

    def write(self, path: str | Path | None = None) -> Path:
        """Write the page to ``path`` (default: :attr:`path`), atomically, making folders as needed.

        Raises:
            ConfigError: Naming :attr:`field` (``--markdown``) if the file cannot be written.
        """
        from ecngym.files import write_text_atomically

        target = path if path is not None else self.path
        if target is None:
            raise ValueError("MarkdownPage.write: no path given and none set by open_page")
        return write_text_atomically(target, self.render(), field=self.field)


def page_console(page: MarkdownPage | None, width: int | None = None, quiet: bool = False) -> Any:
    """A rich console that also appends what it prints to ``page`` (a plain console when it is ``None``).

    Args:
        page: The page being written, or ``None`` (no ``--markdown``).
        width: At least this many columns (wide tables), or ``None`` for the terminal's width.
        quiet: Print nothing on the terminal (``--json-only``); the page still gets everything.

    Returns:
        A ``rich.console.Console``.
    """
    from rich.console import Console

    class _PageConsole(Console):
        def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: D102 - Console.print's contract
            if page is not None:
                page.add(*objects)
            super().print(*objects, **kwargs)

    return _PageConsole(width=max(Console().width, width) if width else None, quiet=quiet)


def check_markdown_path(path: str | None, field: str = "--markdown") -> Path | None:
    """``--markdown``'s path, checked before the measurement (a bad path fails in a second, not after it).

    Args:
        path: The path given, or ``None``.
        field: The argument that gave it (``--markdown``, or ``markdown`` for ``markdown=PATH``).

    Raises:
        ConfigError: Naming ``field`` if it cannot name a writable ``.md`` file.
    """
    if path is None:
        return None
    from ecngym.files import check_output_path

    return check_output_path(field, path, suffix=".md")


def open_page(path: str | None, title: str, prog: str, argv: list[str], intro: str = "", *,
              measured: bool = True, field: str = "--markdown") -> MarkdownPage | None:
    """The page a command writes for ``--markdown PATH`` (``None`` without it), the path checked first.

    Args:
        path: ``--markdown``'s value, or ``None``.
        title: The page's title.
        prog: The command's name (``"ecngym bench env"``).
        argv: Its arguments as given (stamped on the page as the exact command).
        intro: Markdown under the stamp (what the page measures).
        measured: Whether the page holds measurements (:class:`MarkdownPage`).
        field: The argument that gives the path (``markdown`` for ``markdown=PATH``).

    Raises:
        ConfigError: Naming ``field`` if it cannot name a writable ``.md`` file.
    """
    checked = check_markdown_path(path, field)
    if checked is None:
        return None
    page = MarkdownPage(title, [*prog.split(), *argv], intro, measured=measured, field=field)
    page.path = checked
    return page
