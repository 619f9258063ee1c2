"""Every citation in the code resolves inside the repository.

Docstrings and comments cite the paper and section and the site's page, e.g.
``PRED §IV-A; docs: algorithms/pred.md §3.2``. The design notes the code was first written from
(``specs/*.md``) are not part of the repository, so a citation of them cannot be followed; a page
cited as ``docs: <path>.md`` (and every ``algorithms/...md`` / ``concepts/...md`` path) must exist
under ``docs/``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
SUFFIXES = {".py", ".cc", ".h", ".yaml", ".yml", ".txt", ".proto", ".cfg", ".toml", ".ipynb"}
SKIP_DIRS = {".git", ".venv", "build", "site", "docs", "outputs", "multirun", "__pycache__", "node_modules",
             ".pytest_cache", ".ruff_cache", ".hypothesis", "traces", "wandb"}
# The spec notes' file names, cited bare (``pred.md §3.3``) or under a folder that is not docs/.
SPEC_NAMES = r"(?:pred|ecn_sharp|r_aqm|laecn|bytetuning|prior-art)\.md"
SPEC = re.compile(rf"specs/|(?<![\w/-]){SPEC_NAMES}")
PAGE = re.compile(r"docs: ([\w./-]+\.md)|(?<![\w/])((?:algorithms|concepts)/[\w.-]+\.md)")


def _sources() -> list[Path]:
    found = []
    for root, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
        if Path(root) == REPO / "tests" / "docs":
            continue
        found += [Path(root, f) for f in files if Path(f).suffix in SUFFIXES or f == "CMakeLists.txt"]
    return sorted(found)


def _lines(path: Path):
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return
    for number, line in enumerate(text.splitlines(), 1):
        yield f"{path.relative_to(REPO)}:{number}", line


def test_the_sources_are_found() -> None:
    names = {p.relative_to(REPO).as_posix() for p in _sources()}
    assert {"envs/ecn_env.py", "baselines/pred.py", "sim_backend/model/r-aqm-policy.h"} <= names


def test_no_citation_of_a_file_outside_the_repository() -> None:
    left = [f"{where}: {line.strip()}" for path in _sources() for where, line in _lines(path)
            if SPEC.search(line)]
    assert not left, "cite the paper and the docs page instead:\n" + "\n".join(left)


def test_every_cited_docs_page_exists() -> None:
    cited = 0
    missing = []
    for path in _sources():
        for where, line in _lines(path):
            for match in PAGE.finditer(line):
                page = match.group(1) or match.group(2)
                cited += 1
                if not (DOCS / page).is_file():
                    missing.append(f"{where}: docs/{page}")
    assert not missing, "cited pages that do not exist:\n" + "\n".join(missing)
    assert cited > 0, "no docs citation found: the pattern no longer matches the code's citations"


def test_the_checks_catch_what_they_should() -> None:
    assert SPEC.search("(specs/pred.md §3.3)") and SPEC.search("see pred.md §3.3")
    assert not SPEC.search("docs: algorithms/pred.md §3.3") and not SPEC.search("docs/algorithms/r-aqm.md")
    assert [m.group(1) or m.group(2) for m in PAGE.finditer("docs: algorithms/pred.md, concepts/x.md")] == [
        "algorithms/pred.md", "concepts/x.md"]
