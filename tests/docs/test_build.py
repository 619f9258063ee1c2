"""The documentation site builds in strict mode.

Any warning (a broken link or anchor, a page missing from the navigation, a reference target that
does not exist, a page or generator that fails) fails the build, and so this test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_site_builds_in_strict_mode_with_no_warning(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = dict(os.environ, DISABLE_MKDOCS_2_WARNING="true", NO_MKDOCS_2_WARNING="1", NO_COLOR="1")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean",
         "-f", str(REPO / "mkdocs.yml"), "-d", str(site)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    warnings = [line for line in log.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert not warnings, "\n".join(warnings)
    for page in ("index.html", "getting-started/index.html", "concepts/env-contract/index.html",
                 "algorithms/pred/index.html"):
        html = (site / page).read_text(encoding="utf-8")
        assert "md-nav" in html, f"{page} has no navigation"
    assert (site / "search" / "search_index.json").is_file()
