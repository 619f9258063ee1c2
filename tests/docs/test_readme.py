"""The README is a front page: one screen-full, and every file it links or shows exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
MAX_LINES = 200
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def test_the_readme_is_at_most_200_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; the front page keeps to {MAX_LINES}"


def test_every_relative_link_and_image_of_the_readme_exists() -> None:
    targets = [t for t in LINK.findall(README.read_text(encoding="utf-8")) if "://" not in t]
    assert any(t.endswith((".svg", ".png")) for t in targets), "the README shows no picture"
    missing = [t for t in targets if not (REPO / t).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"
