"""The adaptivity headroom of each scenario: how much following the traffic phases can gain over one tuned setting.

Per scenario, from its references file (:mod:`ecngym.benchmark.references`), on its test seeds:
``S_default`` (the preset), ``S_tuned`` (the best static setting on the train seeds) and
``S_oracle`` (the best setting per phase in hindsight, switched at the boundaries, a real run).
The **headroom** per test seed is ``S_tuned - S_oracle`` for a lower-is-better score (the other
way round otherwise), in the score's units; its mean has a paired 95% Student-t interval over the
test seeds; normalized, it is divided by the mean ``S_default - S_tuned`` (the normalized score's
unit: the oracle's normalized score minus 1).

The oracle chooses per phase *on the test trace itself*, so part of its margin is hindsight, not
adaptivity: on a trace without phases, picking the best of the grid per trace would still beat a
setting chosen on other seeds. The table therefore also gives the **hindsight control**,
``S_hindsight`` = the best single grid setting per test trace, and the **adaptivity** part
``S_hindsight - S_oracle`` (with its CI): what switching between phases gains beyond choosing one
setting with the same hindsight.

Where the references file holds the window oracle (``ecngym benchmark references ...
oracle_window=2ms beam=1,2``), a second table gives per scenario, greedy and at the widest beam:
``S_oracle_window``, the headroom ``S_tuned - S_oracle_window`` (paired, 95% Student-t CI), the
count of test traces where the window oracle is worse than ``static_tuned`` (target 0: that
setting is one of its constants) and than ``oracle_phase``, with each such trace and its reason in
a note under the table (:func:`window_shortfall_reason`), and the search's median CPU seconds per
trace. A file without it (every suite v1 file) shows the first table alone.

Where the references file holds ``phase_tuned`` (one setting per phase, the same schedule on every
trace, chosen on the train seeds: what a phase-aware controller could follow), another table gives
per scenario its schedule, ``S_phase_tuned`` and the headroom ``S_tuned - S_phase_tuned`` (paired,
95% Student-t CI); a file without it shows no such table.

Beside ``S_tuned`` the table gives ``S_tuned_per_role`` (the best static setting per switch role,
tuned on the train seeds) where the file holds one, and whether the grid ``static_tuned`` was
searched on was extended past its edges (and why the extension stopped). A file written before
those existed (the suite v1's) shows ``—`` for both: its grid was the templates.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ecngym.benchmark.reference_search import grid_edges
from ecngym.benchmark.references import read_references, suite_scenarios
from ecngym.benchmark.scenario_file import ScenarioFileArgs
from ecngym.error import ConfigError
from ecngym.validation import Text

if TYPE_CHECKING:
    from ecngym.markdown_page import MarkdownPage

#: Confidence level of the intervals.
CONFIDENCE = 0.95


def mean_ci(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """Mean and Student-t confidence interval of ``values`` (paired differences over seeds).

    Returns:
        (mean, low, high); low = high = mean for a single value.
    """
    from scipy import stats

    x = np.asarray(values, dtype=np.float64)
    m = float(x.mean())
    if len(x) < 2:
        return m, m, m
    half = float(stats.t.ppf(0.5 + confidence / 2, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)))
    return m, m - half, m + half


def scenario_headroom(name: str, reference_dir: Path | str | None = None,
                      scenario_dir: Path | str | None = None) -> dict[str, Any]:
    """The headroom row of one scenario, from its references file.

    Raises:
        ConfigError: Naming ``references.<name>`` if its file is missing or stale
            (:func:`~ecngym.benchmark.references.read_references`; ``scenario_dir``: the scenario files).
    """
    doc = read_references(name, reference_dir, scenario_dir)
    lower = bool(doc.get("lower_is_better", True))
    sign = 1.0 if lower else -1.0
    seeds = list(doc["static_tuned"]["test"]["score"])
    d = np.array([doc["static_default"]["test"]["score"][s] for s in seeds])
    t = np.array([doc["static_tuned"]["test"]["score"][s] for s in seeds])
    o = np.array([doc["oracle_phase"]["test"]["score"][s] for s in seeds])
    grid = doc["search"]["test_scores"]
    per_seed_grid = np.array([[grid[k][s] for k in grid] for s in seeds])
    h = per_seed_grid.min(axis=1) if lower else per_seed_grid.max(axis=1)
    per_role = doc.get("static_tuned_per_role") or {}
    r = (np.array([per_role["test"]["score"][s] for s in seeds])
         if per_role.get("test") and all(s in per_role["test"]["score"] for s in seeds) else None)
    extension = doc["search"].get("extension")
    headroom = mean_ci(sign * (t - o))
    adaptivity = mean_ci(sign * (h - o))
    gap = mean_ci(sign * (d - t))
    unit = gap[0]
    norm = tuple(x / unit for x in headroom) if abs(unit) > 0 else (float("nan"),) * 3
    return {
        "scenario": name, "score": doc["score"], "lower_is_better": lower, "test_seeds": len(seeds),
        "S_default": float(d.mean()), "S_tuned": float(t.mean()), "tuned_setting": doc["static_tuned"]["setting"],
        "grid_extension": extension["stopped"] if extension else None,
        "grid_extended": bool(extension["extended"]) if extension else None,
        "tuned_on_edge": grid_edges(doc["static_tuned"]["setting"], doc["search"]["settings"]),
        "S_tuned_per_role": float(r.mean()) if r is not None else None,
        "per_role_setting": per_role.get("setting"), "per_role_searched": per_role.get("searched"),
        "S_oracle_phase": float(o.mean()), "S_hindsight_static": float(h.mean()),
        "headroom": headroom[0], "headroom_ci": [headroom[1], headroom[2]],
        "headroom_normalized": norm[0], "headroom_normalized_ci": [norm[1], norm[2]],
        "headroom_relative": headroom[0] / float(t.mean()) if t.mean() else float("nan"),
        "adaptivity": adaptivity[0], "adaptivity_ci": [adaptivity[1], adaptivity[2]],
        "default_minus_tuned": gap[0], "default_minus_tuned_ci": [gap[1], gap[2]],
        "has_headroom": bool(headroom[1] > 0), "has_adaptivity": bool(adaptivity[1] > 0),
        "tuned_within_noise_of_default": bool(gap[1] <= 0 <= gap[2]),
        "oracle_settings": doc["oracle_phase"]["per_test_seed"],
        "oracle_window": window_headroom(doc, seeds),
        "phase_tuned": phase_tuned_headroom(doc, seeds),
        "references_created": doc.get("created", ""),
    }


def phase_tuned_headroom(doc: dict[str, Any], seeds: Sequence[str]) -> dict[str, Any] | None:
    """The ``phase_tuned`` part of a scenario's row; ``None`` where the file holds none (a file written before it).

    ``S_phase_tuned`` (the mean over ``seeds``) and the headroom ``S_tuned - S_phase_tuned`` per test
    seed (paired; mean and 95% Student-t CI; relative: over the mean ``S_tuned``): what a controller
    following one schedule per phase, chosen on the train seeds, gains over one tuned setting.

    Args:
        doc: A references document.
        seeds: Its test seeds (as the file's keys), the pairs' order.

    Returns:
        ``searched``, ``phases``, ``schedule``, ``S_phase_tuned``, ``headroom``, ``headroom_ci``,
        ``headroom_relative``, ``has_headroom`` and the descent's ``rounds`` and ``moves`` (``None``
        where not searched).
    """
    block = doc.get("phase_tuned")
    if not isinstance(block, dict):
        return None
    sign = 1.0 if doc.get("lower_is_better", True) else -1.0
    tuned = np.array([doc["static_tuned"]["test"]["score"][s] for s in seeds], dtype=float)
    phased = np.array([block["test"]["score"][s] for s in seeds], dtype=float)
    head = mean_ci(sign * (tuned - phased))
    return {"searched": bool(block["searched"]), "phases": list(block["phases"]), "schedule": block["schedule"],
            "S_phase_tuned": float(phased.mean()), "headroom": head[0], "headroom_ci": [head[1], head[2]],
            "headroom_relative": head[0] / float(tuned.mean()) if tuned.mean() else float("nan"),
            "has_headroom": bool(head[1] > 0), "rounds": block.get("rounds"),
            "moves": len(block["moves"]) if "moves" in block else None}


def window_headroom(doc: dict[str, Any], seeds: Sequence[str]) -> dict[str, Any] | None:
    """The window oracle's part of a scenario's row, per beam width; ``None`` where the file holds none.

    Per beam width: ``S_oracle_window`` (the mean over ``seeds``), the headroom ``S_tuned -
    S_oracle_window`` per test seed (paired; mean and 95% Student-t CI; relative: over the mean
    ``S_tuned``), the test seeds where the window oracle scores worse than ``static_tuned`` and
    than ``oracle_phase``, each with its reason (:func:`window_shortfall_reason`), and the median
    CPU seconds of a trace's search.

    Args:
        doc: A references document.
        seeds: Its test seeds (as the file's keys), the pairs' order.

    Returns:
        ``window``, ``window_steps``, ``beams`` and ``per_beam`` (beam width as text -> the figures).
    """
    block = doc.get("oracle_window")
    if not isinstance(block, dict):
        return None
    sign = 1.0 if doc.get("lower_is_better", True) else -1.0
    tuned = np.array([doc["static_tuned"]["test"]["score"][s] for s in seeds], dtype=float)
    phase = np.array([doc["oracle_phase"]["test"]["score"][s] for s in seeds], dtype=float)
    out: dict[str, Any] = {"window": block["window"], "window_steps": block["window_steps"],
                           "beams": [int(b) for b in block["beams"]], "per_beam": {}}
    for b in out["beams"]:
        w = np.array([block["per_test_seed"][s]["beams"][str(b)]["score"] for s in seeds], dtype=float)
        head = mean_ci(sign * (tuned - w))
        worse = {ref: [{"seed": s, "reason": window_shortfall_reason(doc, s, b, ref)}
                       for s, x, y in zip(seeds, w, against, strict=True) if sign * (x - y) > 0]
                 for ref, against in (("static_tuned", tuned), ("oracle_phase", phase))}
        cost = (block.get("cost") or {}).get(str(b), {})
        out["per_beam"][str(b)] = {
            "S_oracle_window": float(w.mean()), "headroom": head[0], "headroom_ci": [head[1], head[2]],
            "headroom_relative": head[0] / float(tuned.mean()) if tuned.mean() else float("nan"),
            "has_headroom": bool(head[1] > 0),
            "worse_than_tuned": worse["static_tuned"], "worse_than_phase": worse["oracle_phase"],
            "cpu_s_per_trace_median": cost.get("cpu_s_per_trace_median")}
    return out


def window_shortfall_reason(doc: dict[str, Any], seed: str, beam: int, reference: str) -> str:
    """Why the window oracle (``beam``) scores worse than ``reference`` on test seed ``seed``, in one sentence.

    Against ``static_tuned``: its setting is one of the search's constants, so only a setting missing
    from the candidates or a branch that did not replay the references' fresh run can explain it
    (else the search has a bug). Against ``oracle_phase``: the phase schedule is a window schedule
    only if it plays candidates and switches on window boundaries; if it is one, the beam dropped its
    prefix (a wider beam may keep it), unless it is a constant (then the branch differs).

    Args:
        doc: A references document with an ``oracle_window`` block.
        seed: The test seed (as the file's key).
        beam: The beam width.
        reference: ``"static_tuned"`` or ``"oracle_phase"``.

    Returns:
        The reason, one sentence without its full stop.
    """
    block = doc["oracle_window"]
    row = block["per_test_seed"][seed]
    score = row["beams"][str(beam)]["score"]
    if reference == "static_tuned":
        fresh = doc["static_tuned"]["test"]["score"][seed]
        branch = row.get("static_tuned_on_branch")
        if branch is None:
            return "static_tuned's setting was not among the search's candidates"
        if branch != fresh:
            return (f"static_tuned scored {branch:.6g} on the search's branch but {fresh:.6g} in the references' "
                    f"fresh run: the branch did not replay that run")
        return f"a bug: the search evaluated static_tuned's constant ({branch:.6g}) and returned worse ({score:.6g})"
    settings = [tuple(float(x) for x in s) for s in doc["oracle_phase"]["per_test_seed"][seed]["settings"]]
    templates = [tuple(float(x) for x in t) for t in block["templates"]]
    missing = [s for s in settings if s not in templates]
    if missing:
        return f"oracle_phase plays {_fmt_setting(missing[0])}, which is not among the window oracle's candidates"
    interval_ns = block["window_ns"] / block["window_steps"]
    starts = doc["oracle_phase"]["phase_starts_ns"]
    switches = [int(math.ceil(starts[i] / interval_ns - 1e-9)) for i in range(1, len(settings))
                if settings[i] != settings[i - 1]]
    off = [k for k in switches if k % block["window_steps"]]
    if off:
        return (f"oracle_phase switches at step {off[0]} ({off[0] * interval_ns / 1e6:g} ms), not on a window "
                f"boundary (every {block['window_steps']} steps, {block['window']}): its schedule is not a window "
                f"schedule")
    if not switches:
        return "oracle_phase holds one setting, a constant the search evaluated: its branch did not replay the run"
    return f"the beam (width {beam}) dropped the phase schedule's prefix; a wider beam may keep it"


def headroom_table(names: Sequence[str], reference_dir: Path | str | None = None,
                   scenario_dir: Path | str | None = None) -> list[dict[str, Any]]:
    """:func:`scenario_headroom` of every scenario in ``names`` (files in ``scenario_dir``, default the package's)."""
    return [scenario_headroom(n, reference_dir, scenario_dir) for n in names]


def _fmt_setting(s: Sequence[Any]) -> str:
    return f"{int(s[0]) / 1e3:g}/{int(s[1]) / 1e3:g} KB, {float(s[2]):g}"


def _ci(c: Sequence[float]) -> str:
    return f"[{c[0]:+.3f}, {c[1]:+.3f}]"


#: What the page's figures are (the paragraphs under its stamp).
INTRO = (
    "Every figure comes from the scenarios' references files (`configs/suite/references/<name>.yaml`, written by "
    "`ecngym benchmark references`): all the test seeds each file holds, the grid's runs and the phase oracle's "
    "real runs.\n\n"
    "Scores are the scenario's score metric (lower is better). **Headroom** = S_tuned - S_oracle_phase per test "
    "seed (paired), mean and 95% Student-t CI; normalized = divided by the mean S_default - S_tuned (the unit "
    "of the suite's normalized score). **Hindsight control**: S_hindsight = the best single grid setting per "
    "test trace (the same hindsight as the oracle, without switching); **adaptivity** = S_hindsight - S_oracle "
    "per seed: what switching at the phase boundaries gains beyond hindsight alone. **S_tuned_per_role**: the "
    "best static setting per switch role (layer), tuned on the train seeds by coordinate descent from static_tuned "
    "(equal to S_tuned where the controlled ports are of one layer; — where the file holds none). **grid**: "
    "whether the grid static_tuned was searched on was extended past its edges and why the extension stopped "
    "(no extension: the file predates it, its grid was the templates), and whether static_tuned has the searched "
    "grid's lowest or highest Kmin (on an edge: it may be clipped there).\n\n"
    "**The window oracle** (a second table, where a references file holds it: `ecngym benchmark references ... "
    "oracle_window=2ms beam=1,2`): the best schedule of settings per control window on each test trace, searched "
    "in hindsight on branches of the running simulation with state carried (greedy, and the widest beam "
    "searched). Its headroom = S_tuned - S_oracle_window per test seed (paired), mean and 95% Student-t CI; rel. = "
    "over S_tuned. **worse than tuned / phase**: the test traces where it scores worse than static_tuned (target "
    "0: static_tuned's setting is among its constants) and than oracle_phase, each listed under the table with "
    "its reason. CPU s / trace: the median CPU seconds of one trace's search.")


def add_table(page: MarkdownPage, rows: list[dict[str, Any]]) -> None:
    """Add the headroom table and its count of scenarios with headroom to ``page``."""
    from rich.markup import escape
    from rich.table import Table

    table = Table()
    for column in ("scenario", "score", "S_default", "S_tuned (setting)", "grid", "S_tuned_per_role",
                   "S_oracle_phase", "headroom [95% CI]", "normalized [95% CI]", "S_hindsight", "adaptivity [95% CI]",
                   "verdict"):
        table.add_column(escape(column))
    for r in rows:
        verdict = ("headroom" if r["has_headroom"] else "no headroom (CI includes 0)")
        if r["has_headroom"] and not r["has_adaptivity"]:
            verdict += "; not beyond hindsight"
        if r["tuned_within_noise_of_default"]:
            verdict += "; tuned within noise of default"
        norm = r["headroom_normalized_ci"]
        grid = (f"{'extended' if r['grid_extended'] else 'templates'} ({r['grid_extension'] or 'no extension'}); "
                + (f"tuned on its {' and '.join(r['tuned_on_edge'])} edge" if r["tuned_on_edge"] else "tuned inside"))
        per_role = "—" if r["S_tuned_per_role"] is None else f"{r['S_tuned_per_role']:.3f}"
        if r["per_role_searched"] is False:
            per_role += " (one role)"
        elif r["per_role_setting"]:
            per_role += " (" + "; ".join(f"{k} {_fmt_setting(v)}" for k, v in r["per_role_setting"].items()) + ")"
        cells = [r["scenario"], r["score"], f"{r['S_default']:.3f}",
                 f"{r['S_tuned']:.3f} ({_fmt_setting(r['tuned_setting'])})", grid, per_role,
                 f"{r['S_oracle_phase']:.3f}",
                 f"{r['headroom']:+.3f} {_ci(r['headroom_ci'])}",
                 f"{r['headroom_normalized']:+.2f} [{norm[0]:+.2f}, {norm[1]:+.2f}]", f"{r['S_hindsight_static']:.3f}",
                 f"{r['adaptivity']:+.3f} {_ci(r['adaptivity_ci'])}", verdict]
        table.add_row(*(escape(c) for c in cells))
    page.add(table)
    n = sum(r["has_headroom"] for r in rows)
    page.add(f"{n} of {len(rows)} scenarios have a headroom whose 95% CI excludes 0 "
             f"({sum(r['has_adaptivity'] for r in rows)} beyond the hindsight control).")
    add_phase_tuned_table(page, rows)
    add_window_table(page, rows)


def add_phase_tuned_table(page: MarkdownPage, rows: list[dict[str, Any]]) -> None:
    """Add the ``phase_tuned`` table (a second table, so the first keeps its width) to ``page``.

    One row per scenario whose references file holds ``phase_tuned``: its schedule, ``S_tuned``,
    ``S_phase_tuned`` and the paired headroom ``S_tuned - S_phase_tuned`` with its 95% CI. Nothing
    where no file holds it (files written before it, such as the suite v1's).
    """
    from rich.markup import escape
    from rich.table import Table

    with_phase = [r for r in rows if r.get("phase_tuned")]
    if not with_phase:
        return
    table = Table(title="The phase-tuned schedule")
    for column in ("scenario", "schedule (per phase)", "S_tuned", "S_phase_tuned", "headroom [95% CI]", "rel.",
                   "moves / rounds"):
        table.add_column(escape(column))
    for r in with_phase:
        p = r["phase_tuned"]
        schedule = ("one phase: static_tuned" if not p["searched"] else
                    "; ".join(f"{n} {_fmt_setting(s)}" for n, s in zip(p["phases"], p["schedule"], strict=True)))
        search = "—" if p["rounds"] is None else f"{p['moves']} / {p['rounds']}"
        cells = [r["scenario"], schedule, f"{r['S_tuned']:.3f}", f"{p['S_phase_tuned']:.3f}",
                 f"{p['headroom']:+.3f} {_ci(p['headroom_ci'])}", f"{100 * p['headroom_relative']:+.1f} %", search]
        table.add_row(*(escape(c) for c in cells))
    page.add(table)
    n = sum(r["phase_tuned"]["has_headroom"] for r in with_phase)
    page.add(f"phase_tuned: one setting per traffic phase, chosen on the train seeds only, the same schedule on every "
             f"trace (what a phase-aware controller could follow); headroom = S_tuned - S_phase_tuned per test seed "
             f"(paired), mean and 95% Student-t CI, rel. = over S_tuned; moves / rounds: the coordinate descent's "
             f"accepted changes and rounds. {n} of {len(with_phase)} scenarios with it have a phase-tuned headroom "
             f"whose 95% CI excludes 0.")


def shown_beams(window: dict[str, Any]) -> list[int]:
    """The beam widths the window table shows: greedy (1) where searched, and the widest."""
    beams = sorted(window["beams"])
    return sorted({b for b in beams if b == 1} | {beams[-1]})


def add_window_table(page: MarkdownPage, rows: list[dict[str, Any]]) -> None:
    """Add the window oracle's table (a second table, so the first keeps its width) and its notes to ``page``.

    One row per scenario whose references file holds the window oracle and per beam width shown
    (:func:`shown_beams`); the test traces where it is worse than ``static_tuned`` or ``oracle_phase``
    are listed under the table with their reasons. Without any such file, one line says how to add it.
    """
    from rich.markup import escape
    from rich.table import Table

    with_window = [r for r in rows if r.get("oracle_window")]
    if not with_window:
        page.add("None of these references files holds the window oracle (`ecngym benchmark references ... "
                 "oracle_window=2ms beam=1,2` searches it).")
        return
    table = Table(title="The window oracle")
    for column in ("scenario", "window", "beam", "S_oracle_window", "headroom [95% CI]", "rel.",
                   "worse than tuned / phase", "CPU s / trace"):
        table.add_column(escape(column))
    notes: list[str] = []
    for r in with_window:
        w = r["oracle_window"]
        for b in shown_beams(w):
            x = w["per_beam"][str(b)]
            name = "greedy" if b == 1 else str(b)
            label = "greedy" if b == 1 else f"beam {b}"
            cpu = x["cpu_s_per_trace_median"]
            cells = [r["scenario"], str(w["window"]), name, f"{x['S_oracle_window']:.3f}",
                     f"{x['headroom']:+.3f} {_ci(x['headroom_ci'])}", f"{100 * x['headroom_relative']:+.1f} %",
                     f"{len(x['worse_than_tuned'])} / {len(x['worse_than_phase'])}",
                     "—" if cpu is None else f"{cpu:.3g}"]
            table.add_row(*(escape(c) for c in cells))
            for ref, key in (("static_tuned", "worse_than_tuned"), ("oracle_phase", "worse_than_phase")):
                notes += [f"{r['scenario']} ({label}): worse than {ref} on test seed {e['seed']}: {e['reason']}."
                          for e in x[key]]
    page.add(table)
    shown = [(r, max(r["oracle_window"]["beams"])) for r in with_window]
    n = sum(r["oracle_window"]["per_beam"][str(b)]["has_headroom"] for r, b in shown)
    page.add(f"{n} of {len(with_window)} scenarios with a window oracle have a window headroom whose 95% CI "
             f"excludes 0 (at the widest beam searched).")
    for note in notes:
        page.add(note)


class HeadroomArgs(ScenarioFileArgs):
    """The arguments of ``ecngym benchmark headroom`` (``key=value``).

    Args:
        suite: Every scenario of this suite (or ``scenario``, or ``scenario_file``).
        scenario: Scenario names, comma-separated.
        markdown: Also write the page there.
        reference_dir: The folder of references files (default: the package's; with ``scenario_file``,
            ``references/`` beside the file).
        store: A results store: the page opens with the suite table (:mod:`ecngym.benchmark.suite_table`),
            the references beside the stored scores of ``controllers`` (with ``suite`` or ``scenario_file``).
        controllers: The controllers the suite table shows, comma-separated.
    """

    suite: Text | None = None
    scenario: Text | None = None
    markdown: Text | None = None
    reference_dir: Text | None = None
    store: Text | None = None
    controllers: Text = "mpc_forecast"


def main(argv: Sequence[str] | None = None) -> int:
    """``ecngym benchmark headroom suite=<core|full> | scenario=<name>[,...] | scenario_file=<path> [...]``.

    Prints the page and, as its last line, the rows as JSON.

    Raises:
        ConfigError: On a bad argument (naming it), none or more than one of ``suite``, ``scenario``
            and ``scenario_file``, or a missing references file.
    """
    from ecngym.cli import key_value_arguments
    from ecngym.markdown_page import MarkdownPage, open_page

    argv = list(sys.argv[1:] if argv is None else argv)
    usage = ("ecngym benchmark headroom suite=<core|full> | scenario=<name>[,...] | scenario_file=<path> "
             "[markdown=<path>] [reference_dir=<dir>] [store=<dir> [controllers=mpc_forecast,...]]")
    args = key_value_arguments(HeadroomArgs, argv, usage, __doc__)
    reference_dir, scenario_dir, suite = args.reference_dir, None, None
    if args.scenario_file is not None:  # (with suite or scenario: refused by the model)
        from ecngym.benchmark.scenario_file import scenario_file_suite

        suite = scenario_file_suite(args.scenario_file, reference_dir=args.reference_dir)
        names, reference_dir, scenario_dir = list(suite.scenarios), suite.reference_dir, suite.scenario_dir
    elif bool(args.suite) == bool(args.scenario):
        raise ConfigError("suite", "give suite=<core|full>, scenario=<name> or scenario_file=<path> (one of them)")
    else:
        names = args.scenario.split(",") if args.scenario else suite_scenarios(args.suite)
    controllers = [c for c in args.controllers.split(",") if c]
    if args.store is not None:
        if args.scenario is not None:
            raise ConfigError("store", f"got {args.store!r} with scenario={args.scenario!r}: the suite table reads a "
                                       "suite's episodes; give suite=<name> or scenario_file=<path>")
        if not controllers:
            raise ConfigError("controllers", f"got {args.controllers!r}; name at least one controller")
        if suite is None:
            from ecngym.benchmark.suite import load_suite

            suite = load_suite(args.suite)
    # (the page names the command without reference_dir, or a store given as an absolute path: folders of the
    # machine it ran on; a relative store, such as ecngym run's outputs/results, stays)
    stamped = [a for a in argv if not a.startswith("reference_dir=")
               and not (a.startswith("store=") and Path(a.split("=", 1)[1]).is_absolute())]
    title, prog = "Adaptivity headroom per scenario", "ecngym benchmark headroom"
    page = (open_page(args.markdown, title, prog, stamped, INTRO, field="markdown")
            or MarkdownPage(title, [*prog.split(), *stamped], INTRO))
    if args.store is not None:
        from ecngym.benchmark.suite_table import add_suite_table, suite_table

        add_suite_table(page, suite_table(names, args.store, suite, controllers, reference_dir, scenario_dir),
                        controllers)
    rows = headroom_table(names, reference_dir, scenario_dir)
    add_table(page, rows)
    print(page.render())
    if args.markdown:
        page.write()
    print(json.dumps([{k: v for k, v in r.items() if k != "oracle_settings"} for r in rows]))
    return 0
