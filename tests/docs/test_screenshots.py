"""The built docs site renders in a real browser (headless Chromium): home, a tutorial, a reference page.

Builds the site with ``mkdocs build --strict`` from this checkout (the reference pages generated from
the installed package), then screenshots three pages at 1280 x 900 and checks each is not blank and
shows the site's navigation. The screenshots go to ``$ECNGYM_SCREENSHOT_DIR`` when it is set (to
look at them), else to the test's temporary folder.

``make test`` installs Debian's ``chromium`` when it is missing and sets ECNGYM_REQUIRE_BROWSER=1,
so there a missing browser fails this test instead of skipping it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]

#: (screenshot name, page of the built site): the home page, one tutorial, one generated reference page
PAGES = {"home": "index.html", "tutorial": "tutorials/train-acc.html", "reference": "reference/envs.html"}


@pytest.fixture(scope="module")
def site(chromium, tmp_path_factory):
    out = tmp_path_factory.mktemp("site") / "site"
    env = dict(os.environ, DISABLE_MKDOCS_2_WARNING="true", NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def shots(site, chromium, tmp_path_factory):
    folder = Path(os.environ.get("ECNGYM_SCREENSHOT_DIR") or tmp_path_factory.mktemp("shots"))
    folder.mkdir(parents=True, exist_ok=True)
    taken = {}
    for name, page in PAGES.items():
        shot = folder / f"docs-{name}.png"
        shot.unlink(missing_ok=True)
        proc = chromium("--window-size=1280,900", f"--screenshot={shot}", (site / page).as_uri(), budget_ms=10000)
        assert shot.is_file(), f"no screenshot of {page}: {proc.stderr[-2000:]}"
        taken[name] = shot
    return taken


def _pixels(path: Path) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(path).convert("L"), dtype=np.float64)


@pytest.mark.parametrize("name", list(PAGES))
def test_page_has_the_site_navigation(site, name):
    html = (site / PAGES[name]).read_text(encoding="utf-8")
    start = html.find('<nav class="md-nav md-nav--primary"')
    assert start >= 0, f"{PAGES[name]}: no primary navigation"
    nav = html[start : html.index('class="md-content"', start)]  # (nested navs: up to the page's content)
    for section in ("Tutorials", "Reference", "Python API"):
        assert re.search(rf">\s*{section}\s*<", nav), f"{PAGES[name]}: the navigation lacks {section!r}"
    assert 'href="' in nav and nav.count("md-nav__link") > 20, f"{PAGES[name]}: a navigation without links"


@pytest.mark.parametrize("name", list(PAGES))
def test_screenshot_is_not_blank_and_shows_the_navigation(shots, name):
    px = _pixels(shots[name])
    assert px.shape == (900, 1280), px.shape
    assert px.std() > 10, f"{name}: the page looks blank (pixel s.d. {px.std():.1f})"
    header = px[:40]  # Material's coloured header bar
    assert header.mean() < 200, f"{name}: no header bar (mean grey level {header.mean():.0f})"
    sidebar = px[80:, :300]  # the navigation column on a 1280-pixel-wide window
    assert sidebar.std() > 5, f"{name}: the navigation column is uniform (s.d. {sidebar.std():.1f})"
    assert (sidebar < 128).mean() > 0.002, f"{name}: no text in the navigation column"
