"""The suite board as one self-contained HTML page (plotly; no server, no network).

The suite overview (normalized scores, the rliable aggregates, the performance profile, the
adaptivity headroom), then one section per scenario (its verdict, scores, Pareto view and ranking).
The page's head, its styles and the per-ranking tables and plots are the store leaderboard's
(:mod:`ecngym.results.page`); :func:`ecngym.results.page.check_page_target` guards both.
"""

from __future__ import annotations

import html
import math
from pathlib import Path

import numpy as np

from ecngym.files import write_atomically
from ecngym.results.page import (
    RANKINGS_INTRO,
    check_page_target,
    fmt_cell,
    page_head,
    provenance_html,
    ranking_figures,
    ranking_sections,
    table_html,
)
from ecngym.results.ranking import Ranking
from ecngym.results.store import ResultStore

#: Controllers drawn in the performance profile when the page opens (the best by IQM, and the
#: references); the others are one click on their legend entry away.
PROFILE_SHOWN = 5


def _plot(fig: object) -> str:
    """A figure's ``<div>`` without plotly.js (the suite page embeds it once, in its head)."""
    return fig.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False})


def _ci_text(mean: float, ci: tuple[float, float], digits: int = 2, spec: str = "f") -> str:
    from ecngym.benchmark.board import fmt_ci

    return html.escape(fmt_ci(mean, ci, digits, spec))


def _overview_html(board: object) -> str:
    """The suite overview table: the columns that order the ranking first, then one per scenario.

    (At 1,400 px the ranking columns are in view without scrolling; the controller column stays in
    view when the table scrolls sideways.)
    """
    from ecngym.benchmark.board import AGGREGATE_COLUMNS, beats_text, overview_rows

    scenarios = [s.scenario for s in board.scores]
    tips = {"IQM": "interquartile mean of the normalized scores over (scenario, test seed), 95% stratified-bootstrap "
                   "CI; the ranking's order",
            "P(>tuned)": "probability that this controller beats static_tuned on a random (scenario, test seed)",
            "opt. gap": "optimality gap: mean shortfall below 1 (static_tuned); lower is better"}
    head = ('<th class="name">controller</th>' + "".join(
        f'<th class="key" title="{html.escape(tips.get(label, label))}">{html.escape(label)} [95% CI]</th>'
        for label in AGGREGATE_COLUMNS)
        + '<th class="key" title="scenarios where the paired 95% CI of S_tuned − S_c over the test seeds lies '
          'above 0 (the verdict: ▲ in the scenario\'s cell; ▼: below 0)">beats tuned (paired)</th>'
        + "".join(f'<th title="normalized score on {html.escape(s)}, mean [95% CI] over its test seeds">'
                  f"{html.escape(s)}</th>" for s in scenarios) + "<th>scenarios</th>")
    body = []
    for e in overview_rows(board):
        agg = e["aggregate"]
        label = e["controller"] + (" (reference)" if e["reference"] else "")
        cells = [f'<td class="name">{html.escape(label)}</td>']
        cells += [f'<td class="key">{_ci_text(*getter(agg)) if agg is not None else "—"}</td>'
                  for getter in AGGREGATE_COLUMNS.values()]
        cells.append(f'<td class="key">{beats_text(e)}</td>')
        cells += [f"<td>{_ci_text(*e['per_scenario'][s])}{e['paired_mark'][s]}</td>" for s in scenarios]
        cells.append(f"<td>{len(agg.scenarios) if agg is not None else 0}</td>")
        kind = "reference" if e["reference"] else "competitor"
        body.append(f'<tr class="suite-row {kind}" data-controller="{html.escape(e["controller"])}" '
                    f'data-kind="{kind}">{"".join(cells)}</tr>')
    return (f'<div class="table-wrap"><table class="suite" id="suite-overview"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _profile_figure(board: object) -> object:
    """The performance profile, readable with many controllers.

    The :data:`PROFILE_SHOWN` best controllers by IQM and the references are drawn; the others are
    listed in the legend (a click draws one).
    """
    import plotly.graph_objects as go

    from ecngym.benchmark.board import overview_rows
    from ecngym.benchmark.stats import PROFILE_TAUS

    fig = go.Figure()
    order = [e for e in overview_rows(board) if e["aggregate"] is not None]  # competitors by IQM, then references
    shown = {e["controller"] for e in order if e["reference"]}
    shown |= {e["controller"] for e in order if not e["reference"]}.intersection(
        [e["controller"] for e in order if not e["reference"]][:PROFILE_SHOWN])
    for i, e in enumerate(order):
        name, agg, reference = e["controller"], e["aggregate"], e["reference"]
        color = f"hsl({int(360 * i / max(len(order), 1))}, 65%, 45%)"
        visible = True if name in shown else "legendonly"
        fig.add_trace(go.Scatter(x=PROFILE_TAUS, y=agg.profile, mode="lines", visible=visible,
                                 name=name + (" (ref)" if reference else ""), legendgroup=name,
                                 line={"color": color, "dash": "dash" if reference else "solid",
                                       "width": 1.5 if reference else 2.5}))
        if agg.profile_ci.shape == (2, len(PROFILE_TAUS)):
            fig.add_trace(go.Scatter(x=np.concatenate([PROFILE_TAUS, PROFILE_TAUS[::-1]]),
                                     y=np.concatenate([agg.profile_ci[1], agg.profile_ci[0][::-1]]), fill="toself",
                                     line={"width": 0}, fillcolor=color, opacity=0.15, legendgroup=name,
                                     showlegend=False, hoverinfo="skip", visible=visible))
    hidden = len(order) - len(shown)
    fig.update_layout(title="Performance profile: fraction of (scenario, test seed) normalized scores above τ, "
                            "95% bootstrap band"
                            + (f"<br><sup>the {PROFILE_SHOWN} best by IQM and the references drawn; {hidden} more "
                               "in the legend: click a name to draw it</sup>" if hidden > 0 else ""),
                      xaxis_title="τ (normalized score)", yaxis_title="fraction > τ", height=480)
    return fig


def _headroom_html(board: object) -> str:
    from ecngym.benchmark.board import headroom_rows

    head = "".join(f"<th>{html.escape(h)}</th>" for h in
                   ["scenario", "score", "S_default", "S_tuned", "S_tuned_per_role", "S_oracle_phase",
                    "headroom [95% CI]", "flag"])
    body = []
    for r in headroom_rows(board):
        flags = ((["no_reference_gap (raw units)"] if r["no_reference_gap"] else [])
                 + (["no headroom (sanity check)"] if r["no_headroom"] else []))
        body.append(f'<tr class="headroom-row" data-scenario="{html.escape(r["scenario"])}">'
                    f'<td class="name">{html.escape(r["scenario"])}</td><td>{html.escape(r["score"])}</td>'
                    + "".join(f"<td>{html.escape(r[k])}</td>" for k in ("S_default", "S_tuned", "S_tuned_per_role",
                                                                         "S_oracle_phase", "headroom"))
                    + f'<td class="flag">{html.escape(", ".join(flags))}</td></tr>')
    return (f'<div class="table-wrap"><table class="suite" id="headroom"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _scores_html(scores: object) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in
                   ["controller", f"{scores.score} [95% CI]", "normalized [95% CI]",
                    "paired S_tuned − S [95% CI]", scores.second_axis, "seeds"])
    body = []
    for c in scores.controllers:
        kind = "reference" if c.reference else "competitor"
        label = c.controller + (" (reference)" if c.reference else "")
        body.append(f'<tr class="score-row {kind}" data-controller="{html.escape(c.controller)}">'
                    f'<td class="name">{html.escape(label)}</td><td>{_ci_text(c.raw_mean, c.raw_ci, 4, "g")}</td>'
                    f"<td>{_ci_text(c.normalized_mean, c.normalized_ci)}</td>"
                    f"<td>{_ci_text(c.delta_tuned_mean, c.delta_tuned_ci, 3, 'g')}</td>"
                    f"<td>{fmt_cell(c.second_mean, 3)}</td><td>{c.seeds}</td></tr>")
    return (f'<div class="table-wrap"><table class="suite scores"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _pareto_figure(scores: object) -> object:
    import plotly.graph_objects as go

    points = [c for c in scores.controllers if math.isfinite(c.raw_mean) and math.isfinite(c.second_mean)]
    sign = 1.0 if scores.lower_is_better else -1.0
    front = [c for c in points if not any(
        sign * o.raw_mean <= sign * c.raw_mean and o.second_mean <= c.second_mean
        and (sign * o.raw_mean < sign * c.raw_mean or o.second_mean < c.second_mean) for o in points)]
    front.sort(key=lambda c: c.second_mean)
    fig = go.Figure()
    # labels only where they say most and cannot pile up: the Pareto front and the references (the
    # front is monotone, so alternating sides keeps neighbours apart); every point names itself on hover
    labelled = {c.controller for c in front} | {c.controller for c in points if c.reference}
    sides = {c.controller: ("top right" if i % 2 else "bottom left") for i, c in enumerate(front)}
    for reference in (False, True):
        group = [c for c in points if c.reference == reference]
        fig.add_trace(go.Scatter(x=[c.second_mean for c in group], y=[c.raw_mean for c in group], mode="markers+text",
                                 text=[c.controller if c.controller in labelled else "" for c in group],
                                 textposition=[sides.get(c.controller, "top center") for c in group],
                                 hovertext=[f"{c.controller}: {c.raw_mean:.4g}, {c.second_mean:.4g}" for c in group],
                                 hoverinfo="text", textfont={"size": 11},
                                 marker={"symbol": "diamond" if reference else "circle", "size": 10},
                                 name="references" if reference else "controllers (unlabelled: hover)"))
    fig.add_trace(go.Scatter(x=[c.second_mean for c in front], y=[c.raw_mean for c in front], mode="lines",
                             line={"dash": "dot", "color": "#888"}, name="Pareto front"))
    direction = "lower" if scores.lower_is_better else "higher"
    fig.update_layout(title=f"Pareto view: {scores.score} ({direction} is better) vs {scores.second_axis} (large "
                            "flows, lower is better), means over test seeds", xaxis_title=scores.second_axis,
                      yaxis_title=scores.score, height=480)
    return fig


def suite_page_kind(suite: str, store: ResultStore) -> str:
    """What a suite page is (:func:`check_page_target`): the board of suite ``suite`` (its name) of one store."""
    return f"suite {suite} board of store {store.root}"


def write_suite_page(board: object, store: ResultStore, path: Path, field: str = "html", kind: str | None = None,
                     others: list[Ranking] | None = None, others_refused: list[str] | None = None) -> Path:
    """Write the suite's leaderboard page to ``path`` (atomically) and return it.

    The suite overview first (normalized score per scenario and controller, the rliable aggregates
    with CIs, the performance profile, the adaptivity headroom per scenario), then one section
    per scenario: its verdict sentence, its scores (raw, normalized, second axis), the Pareto view
    and the scenario's ranking with its plots and provenance. References are labelled as such.
    plotly.js is embedded once, in the page's head.

    Args:
        board: The suite board (:class:`ecngym.benchmark.board.SuiteBoard`).
        store: The store its rows come from (per-flow and per-step files).
        path: The page to write.
        field: The option that gave ``path``, named in the error.
        kind: What the page is (:func:`check_page_target`); default :func:`suite_page_kind`.
        others: Rankings of the store's other scenarios (not the suite's), in a section after it.
        others_refused: Rows kept out of those rankings, one sentence each.

    Raises:
        ConfigError: Naming ``field`` if the page cannot be written there, or if another kind of
            page is there.
    """
    import plotly.offline

    from ecngym.benchmark.scoring import REFERENCES

    kind = kind or suite_page_kind(board.suite.name, store)
    check_page_target(field, path, kind)
    suite = board.suite
    sections = []
    for s in board.scores:
        scenario = suite.scenarios[s.scenario]
        flag = ('<p class="flag">no_reference_gap: static_tuned does not beat static_default with a paired 95% CI '
                "above 0 (or a reference is missing), so the normalized ratio would be noise; this scenario is "
                f"scored on raw {html.escape(s.score)} only and left out of the aggregates.</p>"
                if s.no_reference_gap else "")
        rankings = board.rankings.get(s.scenario, [])
        ranking_html = "".join(table_html(r, 1000 * len(sections) + i)
                               + "".join(_plot(f) for f in ranking_figures(r, store))
                               + f"<h4>Provenance</h4>{provenance_html(r)}" for i, r in enumerate(rankings))
        sections.append(
            f'<section class="scenario" id="scenario-{html.escape(s.scenario)}"><h2>{html.escape(s.scenario)} '
            f"<small>({html.escape(scenario.id)} v{scenario.version})</small></h2>"
            f"<p>{html.escape(scenario.description)} <i>{html.escape(scenario.paper)}</i></p>"
            f'<p class="verdict" data-scenario="{html.escape(s.scenario)}">{html.escape(board.sentence(s))}</p>{flag}'
            f"<p>Test seeds {', '.join(map(str, s.seeds))}; score {html.escape(s.score)}; reference gap "
            f"(S_default − S_tuned) {_ci_text(s.reference_gap[0], s.reference_gap[1:], 4, 'g')}.</p>"
            + _scores_html(s) + _plot(_pareto_figure(s))
            + f"<h3>Ranking on raw {html.escape(s.score)} (references labelled at their place, not ranked)</h3>"
            + ranking_html
            + "</section>")
    refusals = "".join(f'<li class="refused">{html.escape(m)}</li>' for m in board.refused)
    profile = (_plot(_profile_figure(board)) if board.aggregates
               else "<p>No scenario has a reference gap: no aggregate.</p>")
    refusals += "".join(f'<li class="refused">{html.escape(m)}</li>' for m in others_refused or [])
    other = ("<h2>Other scenarios of the store</h2><p>Not scenarios of suite "
             f"{html.escape(suite.name)}: ranked on raw scores, without normalization. {html.escape(RANKINGS_INTRO)}"
             "</p>" + ranking_sections(others, store, embed_plotlyjs=False, heading="h3") if others else "")
    page = ("<!DOCTYPE html><html>" + page_head(f"ecngym suite {suite.name}", kind)
            + f"<script>{plotly.offline.get_plotlyjs()}</script></head><body>"
            f"<h1>ecngym benchmark: suite {html.escape(suite.name)} v{suite.spec.version}</h1>"
            f"<p>Store {html.escape(str(store.root))}. Normalized score per (controller, scenario, test seed): "
            "(S_default − S) / (S_default − S_tuned) for a lower-is-better score, paired per seed: 0 = static_default "
            "(the fabric preset), 1 = static_tuned (the best single static setting found on the train seeds); "
            "above 1 beats one well-tuned static setting. Scenarios where static_tuned does not beat "
            "static_default with a paired 95% CI above 0 are flagged no_reference_gap and scored on raw values "
            "only. Aggregates (rliable): interquartile mean (IQM), optimality gap to 1, probability of "
            "improvement over static_tuned, stratified-bootstrap 95% CIs. References "
            f"({html.escape(', '.join(REFERENCES))}) are labelled and never ranked as competitors.</p>"
            "<h2>Suite overview</h2>" + _overview_html(board) + profile
            + "<h3>Adaptivity headroom: oracle_phase − static_tuned</h3>" + _headroom_html(board)
            + "".join(sections) + other
            + (f"<h2>Rows left out</h2><ul>{refusals}</ul>" if refusals else "") + "</body></html>")
    write_atomically(path, lambda tmp: tmp.write_bytes(page.encode()), field)
    return path.resolve()
