"""The documentation site builds in strict mode, and navigates from disk.

Any warning (a broken link or anchor, a page missing from the navigation, a reference target that
does not exist, a page or generator that fails) fails the build, and so this test. The built site
is also opened the way a reader opens ``site/`` from disk: every link between its pages must end at
a file (a link to a folder shows a folder listing there, with no server to map it to its
``index.html``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

REPO = Path(__file__).resolve().parents[2]
#: href and src attributes of the built pages
LINK = re.compile(r"""\b(?:href|src)=["']([^"']*)["']""")


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, int]:
    """The site built from this checkout: its folder, the build's log and its exit status."""
    site = tmp_path_factory.mktemp("docs") / "site"
    env = dict(os.environ, DISABLE_MKDOCS_2_WARNING="true", NO_MKDOCS_2_WARNING="1", NO_COLOR="1")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean",
         "-f", str(REPO / "mkdocs.yml"), "-d", str(site)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )
    return site, done.stdout + done.stderr, done.returncode


def test_the_site_builds_in_strict_mode_with_no_warning(build: tuple[Path, str, int]) -> None:
    site, log, returncode = build
    assert returncode == 0, log
    warnings = [line for line in log.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert not warnings, "\n".join(warnings)
    for page in ("index.html", "getting-started.html", "concepts/env-contract.html", "algorithms/pred.html"):
        html = (site / page).read_text(encoding="utf-8")
        assert "md-nav" in html, f"{page} has no navigation"
    assert (site / "search" / "search_index.js").is_file(), "no search index a page opened from disk can load"


def _local_targets(page: Path) -> list[tuple[str, str]]:
    """(link as written, its path) for each link of ``page`` to a file of the site itself."""
    out = []
    for link in LINK.findall(page.read_text(encoding="utf-8")):
        parts = urlsplit(link)
        if parts.scheme or parts.netloc or not parts.path:  # other sites, data: URIs, same-page anchors
            continue
        out.append((link, unquote(parts.path)))
    return out


def test_every_link_of_the_site_opened_from_disk_ends_at_a_file(build: tuple[Path, str, int]) -> None:
    site, log, returncode = build
    assert returncode == 0, log
    # (404.html is the page a web server shows for a missing path, at any depth: its links are absolute)
    pages = sorted(p for p in site.rglob("*.html") if p.name != "404.html")
    assert len(pages) > 30, f"only {len(pages)} pages built"
    broken, checked = [], 0
    for page in pages:
        for link, path in _local_targets(page):
            target = (page.parent / path).resolve()
            checked += 1
            if path.startswith("/") or not target.is_file():
                kind = "a folder" if target.is_dir() else "an absolute path" if path.startswith("/") else "nothing"
                broken.append(f"{page.relative_to(site)}: {link!r} is {kind}")
    assert checked > 1000, f"only {checked} links checked"
    assert not broken, f"{len(broken)} link(s) do not open from disk:\n" + "\n".join(broken[:20])
    assert "getting-started.html" in {p for _, p in _local_targets(site / "index.html")}, \
        "the home page does not link getting-started.html"
