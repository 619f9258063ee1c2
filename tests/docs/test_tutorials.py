"""The tutorials' code runs as written (docs/tutorials/*.md).

The convention, in a tutorial's Markdown: an HTML comment right before a fenced code block says what
the test does with it (the comment is invisible on the site).

``<!-- run -->``
    Execute the block in the default test run (it must take seconds: tiny budgets, short episodes).
``<!-- run: slow -->``
    Execute it only in the slow run (``pytest -m slow``): real budgets, a local Ray instance, ...
``<!-- write: NAME -->``
    Write the block to the file ``NAME`` in the tutorial's folder (a module a later block imports).

The marked blocks of one tutorial run in order in one fresh folder (later blocks see earlier blocks'
files: a trained run directory, a results store, a module). A ``python`` block runs as
``python -`` with the installed ecngym (the folder on ``sys.path``, as a user's script would have
it); a ``bash`` block runs under ``bash -euo pipefail`` with the Python environment's ``bin`` first
on ``PATH`` (``ecngym``, ``python``). A block that exits non-zero fails the test with its output.
Blocks without a marker are shown, not run (a C++ class, a cluster command, a third-party client).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

TUTORIALS = Path(__file__).resolve().parents[2] / "docs" / "tutorials"

#: a marker comment, then a fenced block: ```lang [attributes]\n body \n```
_BLOCK = re.compile(r"<!--\s*(?P<marker>run(?::\s*slow)?|write:\s*\S+)\s*-->\s*\n"
                    r"(?P<indent>[ \t]*)```(?P<lang>\w+)[^\n]*\n(?P<body>.*?)\n(?P=indent)```", re.S)


@dataclass
class Block:
    """One marked code block of a tutorial."""

    kind: str  # "run", "slow" or "write"
    lang: str
    body: str
    target: str = ""  # the file name of a "write" block
    line: int = 0

    def label(self, name: str) -> str:
        """``<page>:<line> (<kind> <lang>)``, for messages."""
        return f"{name}:{self.line} ({self.kind} {self.lang})"


def blocks(path: Path) -> list[Block]:
    """The marked blocks of a tutorial, in order."""
    text = path.read_text(encoding="utf-8")
    found = []
    for m in _BLOCK.finditer(text):
        marker = m["marker"].replace(" ", "")
        kind, _, target = marker.partition(":")
        kind = "slow" if marker == "run:slow" else kind
        body = "\n".join(line.removeprefix(m["indent"]) for line in m["body"].splitlines())
        found.append(Block(kind, m["lang"], body, target if kind == "write" else "", text[: m.start()].count("\n") + 1))
    return found


def run_tutorial(path: Path, folder: Path, with_slow: bool) -> list[str]:
    """Run a tutorial's marked blocks in ``folder``; return the label of each block run.

    Raises:
        AssertionError: With the block's label and its output, when one fails.
    """
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=str(folder), HYDRA_FULL_ERROR="1")
    done = []
    for block in blocks(path):
        if block.kind == "write":
            (folder / block.target).write_text(block.body + "\n", encoding="utf-8")
            continue
        if block.kind == "slow" and not with_slow:
            continue
        if block.lang == "python":
            cmd, stdin = [sys.executable, "-"], block.body
        elif block.lang in ("bash", "sh", "shell"):
            cmd, stdin = ["bash", "-euo", "pipefail", "-c", block.body], None
        else:
            raise AssertionError(f"{block.label(path.name)}: cannot run a {block.lang!r} block")
        proc = subprocess.run(cmd, input=stdin, cwd=folder, env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, (f"{block.label(path.name)} exited {proc.returncode}\n--- stdout\n"
                                      f"{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}")
        done.append(block.label(path.name))
    return done


PAGES = sorted(TUTORIALS.glob("*.md"))
FAST = [p for p in PAGES if any(b.kind == "run" for b in blocks(p))]
SLOW = [p for p in PAGES if any(b.kind == "slow" for b in blocks(p))]


def test_every_tutorial_has_code_the_tests_run():
    assert len(PAGES) >= 9, [p.name for p in PAGES]
    silent = [p.name for p in PAGES if not any(b.kind in ("run", "slow") for b in blocks(p))]
    assert not silent, f"tutorials without a <!-- run --> or <!-- run: slow --> block: {silent}"


def test_the_marker_convention_is_parsed_as_documented(tmp_path):
    page = tmp_path / "t.md"
    page.write_text("text\n\n<!-- write: m.py -->\n```python title=\"m.py\"\nX = 41\n```\n\n"
                    "```python\nshown only\n```\n\n<!-- run -->\n```python\nimport m\nassert m.X + 1 == 42\n```\n\n"
                    "1. a list\n\n    <!-- run: slow -->\n    ```bash\n    test -f m.py\n    ```\n")
    found = blocks(page)
    assert [(b.kind, b.lang, b.target) for b in found] == [("write", "python", "m.py"), ("run", "python", ""),
                                                          ("slow", "bash", "")]
    assert found[2].body == "test -f m.py"
    assert len(run_tutorial(page, tmp_path, with_slow=True)) == 2
    page.write_text("<!-- run -->\n```bash\nexit 3\n```\n")
    with pytest.raises(AssertionError, match="exited 3"):
        run_tutorial(page, tmp_path, with_slow=False)


@pytest.mark.parametrize("page", FAST, ids=[p.stem for p in FAST])
def test_tutorial_runs(page, tmp_path):
    assert run_tutorial(page, tmp_path, with_slow=False)


@pytest.mark.slow
@pytest.mark.parametrize("page", SLOW, ids=[p.stem for p in SLOW])
def test_tutorial_runs_with_its_slow_blocks(page, tmp_path):
    assert run_tutorial(page, tmp_path, with_slow=True)
