"""No Python module of the package is over 700 lines (the project's limit: one job per module).

Counted: every Python file of the checkout that git tracks or would track (the package's modules,
``docs/gen``'s generators, ``bench``, ...), tests left out, and protoc's generated module. A module
that grows past the limit is split along a seam (its names re-exported where other code imports
them), not trimmed of its docstrings.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 700
#: written by a tool, not by hand (``make proto``)
GENERATED = {"opengym/messages_pb2.py"}
#: never package code: tests, and what builds, runs and installs leave in a checkout
EXCLUDED_DIRS = {"tests", "build", ".venv", "site", "outputs", "multirun", "wandb", "__pycache__"}


def python_files() -> list[Path]:
    """The checkout's Python files (relative), from git where it is one, else from the folder tree."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard",
                             "*.py"], capture_output=True, text=True, check=False)
    if listed.returncode == 0:
        paths = [Path(line) for line in listed.stdout.splitlines() if line]
    else:
        paths = [p.relative_to(REPO) for p in REPO.rglob("*.py")]
    return sorted(p for p in paths if not EXCLUDED_DIRS & set(p.parts) and p.as_posix() not in GENERATED
                  and (REPO / p).is_file())


def test_the_file_list_sees_the_package() -> None:
    files = {p.as_posix() for p in python_files()}
    assert {"cli.py", "sim_backend/fabric.py", "envs/__init__.py", "benchmark/stats.py"} <= files
    assert not any(f.startswith("tests/") for f in files)


def test_no_module_is_over_700_lines() -> None:
    sizes = {p.as_posix(): len((REPO / p).read_text(encoding="utf-8").splitlines()) for p in python_files()}
    over = {path: lines for path, lines in sizes.items() if lines > MAX_LINES}
    listed = ", ".join(f"{path} ({lines})" for path, lines in sorted(over.items(), key=lambda kv: -kv[1]))
    assert not over, f"over {MAX_LINES} lines (split along a seam): {listed}"
