"""The suite table: per scenario, every reference beside the adaptive controllers a results store holds.

``ecngym benchmark headroom suite=core store=outputs/results`` adds it at the top of the headroom
page. One row per scenario, on the test seeds its references file and the store both hold:
``S_default``, ``S_tuned``, ``S_tuned_per_role``, ``S_oracle_phase``, ``S_oracle_window`` greedy
and at the widest beam searched (from the references file), the window headroom ``S_tuned -
S_oracle_window`` (paired, 95% Student-t CI, relative to ``S_tuned``), the count of test traces
where the window oracle scores worse than ``static_tuned``, and per named controller (default
``mpc_forecast``, the look-ahead tuner) its mean score and its paired difference ``S_tuned - S_c``
with the 95% CI (positive: better than static_tuned), from the store's ``ecngym run`` episodes
(:func:`ecngym.benchmark.board.select_rows`: the rows of the scenario config static_default ran).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ecngym.benchmark.headroom import mean_ci, shown_beams, window_headroom
from ecngym.benchmark.references import read_references
from ecngym.error import ConfigError

#: [OURS] A scenario whose window headroom (widest beam) is below this share of S_tuned counts as a control.
CONTROL_RELATIVE = 0.05

if TYPE_CHECKING:
    from ecngym.benchmark.suite import Suite
    from ecngym.markdown_page import MarkdownPage


def stored_scores(store_dir: str | Path, suite: Suite,
                  controllers: Sequence[str]) -> dict[str, dict[str, dict[str, float]]]:
    """Per scenario and controller, the stored score per test seed (seed as text, as in a references file).

    Raises:
        StoreError: If the store holds no ``static_default`` episode of any of the suite's scenarios.
    """
    from ecngym.benchmark.board import select_rows
    from ecngym.results import ResultStore

    rows, _ = select_rows(ResultStore(store_dir, "store").episodes(), suite)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, frame in rows.items():
        metric = suite.scenarios[name].protocol.score
        out[name] = {c: {str(int(s)): float(v) for s, v in zip(sub["seed"], sub[metric], strict=True)}
                     for c in controllers if not (sub := frame[frame["controller"] == c]).empty}
    return out


def suite_row(doc: dict[str, Any], scores: dict[str, dict[str, float]], controllers: Sequence[str]) -> dict[str, Any]:
    """One scenario's row of the suite table from its references document and its stored scores."""
    sign = 1.0 if doc.get("lower_is_better", True) else -1.0
    seeds = list(doc["static_tuned"]["test"]["score"])

    def per_seed(block: dict[str, Any] | None, on: Sequence[str]) -> np.ndarray | None:
        if not block or not block.get("test") or not all(s in block["test"]["score"] for s in on):
            return None
        return np.array([block["test"]["score"][s] for s in on], dtype=float)

    row: dict[str, Any] = {"scenario": doc["scenario"], "score": doc["score"], "test_seeds": len(seeds),
                           "S_default": float(per_seed(doc["static_default"], seeds).mean()),
                           "S_tuned": float(per_seed(doc["static_tuned"], seeds).mean())}
    per_role = per_seed(doc.get("static_tuned_per_role"), seeds)
    row["S_tuned_per_role"] = None if per_role is None else float(per_role.mean())
    row["S_oracle_phase"] = float(per_seed(doc["oracle_phase"], seeds).mean())
    # the window oracle's figures as the headroom page computes them, at the beams it shows
    window = window_headroom(doc, seeds)
    row["window"] = None if window is None else window["window"]
    row["oracle_window"] = {} if window is None else {str(b): window["per_beam"][str(b)] for b in shown_beams(window)}
    row["controllers"] = {}
    for c in controllers:
        have = [s for s in seeds if s in scores.get(c, {})]
        if not have:
            continue
        x = np.array([scores[c][s] for s in have], dtype=float)
        t = np.array([doc["static_tuned"]["test"]["score"][s] for s in have], dtype=float)
        delta = mean_ci(sign * (t - x))
        row["controllers"][c] = {"S": float(x.mean()), "seeds": len(have), "delta": delta[0],
                                 "delta_ci": [delta[1], delta[2]], "beats_tuned": bool(delta[1] > 0)}
    return row


def suite_table(names: Sequence[str], store_dir: str | Path, suite: Suite, controllers: Sequence[str],
                reference_dir: Path | str | None = None,
                scenario_dir: Path | str | None = None) -> list[dict[str, Any]]:
    """:func:`suite_row` of every scenario in ``names``.

    Raises:
        ConfigError: Naming ``controllers`` if the store holds none of them on any of the scenarios
            (a misspelt name, or a store the controller never ran into).
    """
    scores = stored_scores(store_dir, suite, controllers)
    found = {c for per in scores.values() for c in per}
    missing = [c for c in controllers if c not in found]
    if missing:
        raise ConfigError("controllers", f"got {list(controllers)}, but the store {store_dir} holds no episode of "
                                         f"{missing} on suite {suite.name}'s test seeds; run them, e.g. `ecngym run "
                                         f"suite={suite.name} controllers=[{missing[0]}]`")
    return [suite_row(read_references(n, reference_dir, scenario_dir), scores.get(n, {}), controllers) for n in names]


def add_suite_table(page: MarkdownPage, rows: list[dict[str, Any]], controllers: Sequence[str]) -> None:
    """Add the suite table and a sentence per controller (how many scenarios it beats static_tuned on) to ``page``."""
    from rich.markup import escape
    from rich.table import Table

    def ci(c: Sequence[float]) -> str:
        return f"[{c[0]:+.3f}, {c[1]:+.3f}]"

    table = Table(title="The suite table")
    columns = ["scenario", "seeds", "S_default", "S_tuned", "S_tuned_per_role", "S_oracle_phase",
               "S_oracle_window greedy", "S_oracle_window beam", "window headroom [95% CI]", "rel.",
               "oracle_window < tuned"]
    for c in controllers:
        columns += [f"{c}", f"{c}: S_tuned - S [95% CI]"]
    for column in columns:
        table.add_column(escape(column))
    for r in rows:
        w = r["oracle_window"]
        greedy, widest = w.get("1"), (w[max(w, key=int)] if w else None)
        beam = "—" if widest is None else f"{widest['S_oracle_window']:.3f} (width {max(w, key=int)})"
        cells = [r["scenario"], str(r["test_seeds"]), f"{r['S_default']:.3f}", f"{r['S_tuned']:.3f}",
                 "—" if r["S_tuned_per_role"] is None else f"{r['S_tuned_per_role']:.3f}", f"{r['S_oracle_phase']:.3f}",
                 "—" if greedy is None else f"{greedy['S_oracle_window']:.3f}", beam,
                 "—" if widest is None else f"{widest['headroom']:+.3f} {ci(widest['headroom_ci'])}",
                 "—" if widest is None else f"{100 * widest['headroom_relative']:+.1f} %",
                 "—" if widest is None else
                 f"{max(len(x['worse_than_tuned']) for x in w.values())} of {r['test_seeds']}"]
        for c in controllers:
            x = r["controllers"].get(c)
            cells += (["—", "—"] if x is None else
                      [f"{x['S']:.3f}", f"{x['delta']:+.3f} {ci(x['delta_ci'])}"
                       + ("" if x["seeds"] == r["test_seeds"] else f" ({x['seeds']} seeds)")])
        table.add_row(*(escape(c) for c in cells))
    page.add(table)
    big = sum(1 for r in rows if r["oracle_window"] and (x := r["oracle_window"][max(r["oracle_window"], key=int)])
              and x["has_headroom"] and x["headroom_relative"] >= 0.10)
    control = sum(1 for r in rows if r["oracle_window"]
                  and r["oracle_window"][max(r["oracle_window"], key=int)]["headroom_relative"] < CONTROL_RELATIVE)
    page.add(f"Window headroom and controllers' differences: S_tuned - S per test seed (paired; positive = better "
             f"than static_tuned), mean and 95% Student-t CI; rel. = over S_tuned; oracle_window < tuned: the test "
             f"traces where the window oracle (greedy or beam) scores worse than static_tuned (the worse of the two "
             f"counts; target 0). {big} of {len(rows)} scenarios have a window headroom >= 10 % of S_tuned with its "
             f"CI above 0; {control} have one under {100 * CONTROL_RELATIVE:g} % (controls: whatever a controller "
             f"gains there over static_tuned is at most that, in hindsight).")
    for c in controllers:
        wins = [r["scenario"] for r in rows if r["controllers"].get(c, {}).get("beats_tuned")]
        page.add(f"{c} beats static_tuned (paired CI above 0) on {len(wins)} of "
                 f"{sum(c in r['controllers'] for r in rows)} scenarios" + (f": {', '.join(wins)}." if wins else "."))
