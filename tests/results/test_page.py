"""The leaderboard page renders in a real browser (headless Chromium): table rows, plots, not blank.

``make test`` installs Debian's ``chromium`` when it is missing and sets ECNGYM_REQUIRE_BROWSER=1,
so there a missing browser fails this test instead of skipping it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from ecngym import cli


@pytest.fixture(scope="module")
def page(chromium, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("page")
    assert cli.main(["run", "suite=null", "controllers=[static_dcqcn,static_hpcc,static_vendor]", "seeds=[1,2]",
                     "env.kwargs.episode_steps=10", f"results.dir={tmp / 'store'}",
                     f"leaderboard.html={tmp / 'board.html'}", f"hydra.run.dir={tmp / 'run'}"]) == 0
    return tmp / "board.html"


def test_page_table_rows_and_plots_are_in_the_rendered_dom(page, chromium):
    dom = chromium("--dump-dom", page.as_uri()).stdout
    rows = re.findall(r'<tr class="lb-row competitor" data-controller="([^"]+)"', dom)
    assert sorted(rows) == ["static_dcqcn", "static_hpcc", "static_vendor"]
    # the paired difference from the leader: "—" on the leader's row, "+x [low, high]" on the others
    paired = re.findall(r'<tr class="lb-row[^"]*"[^>]*>(?:<td[^>]*>[^<]*</td>){5}<td>([^<]*)</td>', dom)
    assert paired[0] == "—" and all(re.fullmatch(r"[+-][^ ]+ \[[^,]+, [^\]]+\]", p) for p in paired[1:]), paired
    # plotly drew its figures: three per ranking (bars with CIs, slowdown CDFs, queue CDF), as SVG
    assert dom.count('class="plot-container plotly"') == 3
    assert dom.count("<path") > 50 and "errorbar" in dom.replace("error_y", "errorbar")
    assert dom.count('class="provenance"') == 6  # one detail section per row


def test_page_screenshot_is_not_blank(page, chromium, tmp_path):
    from PIL import Image

    shot = tmp_path / "shot.png"
    chromium("--window-size=1280,2400", f"--screenshot={shot}", page.as_uri())
    pixels = np.asarray(Image.open(shot).convert("RGB"), dtype=np.int16)
    not_white = (pixels < 240).any(axis=2)
    assert not_white.mean() > 0.05  # text, table and plots cover the page
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 200  # lines of several colours, not one block
    # the plot area (below the table) is drawn too, not only the table at the top
    assert not_white[900:].mean() > 0.03
