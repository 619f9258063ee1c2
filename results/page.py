"""The leaderboard as one self-contained HTML page (plotly; no server, no network).

Per ranking: the table, the score with its 95 % CI as bars, FCT-slowdown CDFs per flow-size
bucket and the queue CDF of the controlled ports (each pooled over the ranking's seeds), and every
row's provenance (row id, seed, trace hash, version, commit, controller parameters, scenario config)
in a detail section; the bars' hover shows it too. plotly.js is embedded once.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ecngym.files import write_atomically
from ecngym.results.leaderboard import CONTEXT_METRICS, HIGHER_IS_BETTER, Ranking, paired_text
from ecngym.results.store import ResultStore
from ecngym.sim_backend.metrics import SIZE_BUCKETS

#: Points per CDF curve (quantiles of the pooled samples): keeps the page small.
CDF_POINTS = 400

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table.ranking { border-collapse: collapse; margin: 1em 0; }
table.ranking th, table.ranking td { border: 1px solid #ccc; padding: 4px 8px; text-align: right; }
table.ranking td.name { text-align: left; font-weight: 600; }
.refused { color: #a15c00; }
details pre { background: #f6f6f6; padding: 0.5em; overflow-x: auto; font-size: 12px; }
"""


def _cdf(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values = np.sort(values[np.isfinite(values)])
    if len(values) == 0:
        return values, values
    q = np.linspace(0, 1, min(CDF_POINTS, len(values)))
    return np.quantile(values, q), q


def _fmt(x: object, digits: int = 4) -> str:
    if isinstance(x, float) and not math.isfinite(x):
        return "—"
    return f"{x:.{digits}g}" if isinstance(x, float) else html.escape(str(x))


def _table_html(ranking: Ranking, index: int) -> str:
    extra = [m for m in CONTEXT_METRICS if m in ranking.table]
    head = "".join(f"<th>{html.escape(h)}</th>" for h in
                   ["#", "controller", ranking.score, "95% CI", "seeds", "Δ vs #1, paired 95% CI", *extra])
    body = []
    for r in ranking.table.itertuples():
        cells = [f"<td>{r.rank}</td>", f'<td class="name">{html.escape(r.controller)}</td>',
                 f"<td>{_fmt(r.score_mean)}</td>", f"<td>[{_fmt(r.ci95_low, 3)}, {_fmt(r.ci95_high, 3)}]</td>",
                 f"<td>{r.seeds}</td>", f"<td>{html.escape(paired_text(r))}</td>",
                 *[f"<td>{_fmt(ranking.table.loc[r.Index, m], 3)}</td>" for m in extra]]
        body.append(f'<tr class="lb-row" data-controller="{html.escape(r.controller)}">{"".join(cells)}</tr>')
    return (f'<table class="ranking" id="ranking-{index}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def _figures(ranking: Ranking, store: ResultStore) -> list:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    direction = "higher" if ranking.score in HIGHER_IS_BETTER else "lower"
    table = ranking.table
    hover = []
    for r in table.itertuples():
        rows = ranking.rows[ranking.rows["controller_hash"] == r.controller_hash]
        hover.append("<br>".join([f"<b>{r.controller}</b>", f"params {r.params[:80]}",
                                  *[f"seed {s.seed}: row {s.row_id[:10]} trace {s.trace_hash[:10]} "
                                    f"v{s.ecngym_version} {str(s.git_commit or '')[:8]}" for s in rows.itertuples()]]))
    err_plus = (table["ci95_high"] - table["score_mean"]).fillna(0).to_numpy()
    err_minus = (table["score_mean"] - table["ci95_low"]).fillna(0).to_numpy()
    bars = go.Figure(go.Bar(x=table["controller"], y=table["score_mean"], hovertext=hover, hoverinfo="text+y",
                            error_y={"type": "data", "array": err_plus, "arrayminus": err_minus, "visible": True}))
    bars.update_layout(title=f"{ranking.score}: mean and 95% CI over {len(ranking.traces)} seeds ({direction} is "
                             "better)", yaxis_title=ranking.score, height=420)

    buckets = [*SIZE_BUCKETS, "all"]
    slowdown = make_subplots(rows=1, cols=len(buckets), subplot_titles=[f"flows {b}" for b in buckets])
    queue = go.Figure()
    for i, r in enumerate(table.itertuples()):
        rows = ranking.rows[ranking.rows["controller_hash"] == r.controller_hash]
        flows = [store.frame(p) for p in rows["flows_path"]]
        flows = pd.concat([f for f in flows if f is not None]) if any(f is not None for f in flows) else None
        color = f"hsl({int(360 * i / max(len(table), 1))}, 65%, 45%)"
        if flows is not None:
            done = flows[flows["finished"].astype(bool)]
            for col, bucket in enumerate(buckets, start=1):
                lo, hi = SIZE_BUCKETS.get(bucket, (0, float("inf")))
                in_bucket = (done["size_bytes"] >= lo) & (done["size_bytes"] < hi)
                x, y = _cdf(done.loc[in_bucket, "slowdown"].to_numpy(float))
                slowdown.add_trace(go.Scatter(x=x, y=y, mode="lines", name=r.controller, legendgroup=r.controller,
                                              showlegend=col == 1, line={"color": color}), row=1, col=col)
        series = [store.frame(p) for p in rows["series_path"]]
        series = [s for s in series if s is not None and len(s)]
        if series:
            x, y = _cdf(pd.concat(series)["queue_bytes"].to_numpy(float) / 1e3)
            queue.add_trace(go.Scatter(x=x, y=y, mode="lines", name=r.controller, line={"color": color}))
    slowdown.update_xaxes(type="log", title_text="FCT slowdown")
    slowdown.update_yaxes(title_text="CDF", col=1)
    slowdown.update_layout(title="FCT slowdown CDF per flow size (pooled over seeds)", height=420)
    queue.update_layout(title="Queue CDF of the controlled ports (per-interval mean, pooled over seeds)",
                        xaxis_title="queue (KB)", yaxis_title="CDF", height=420)
    return [bars, slowdown, queue]


def _provenance_html(ranking: Ranking) -> str:
    parts = []
    for r in ranking.rows.sort_values(["controller", "seed"]).itertuples():
        parts.append(f"<details class=\"provenance\"><summary>{html.escape(r.controller)} · seed {r.seed} · row "
                     f"{r.row_id} · trace {r.trace_hash}</summary><pre>"
                     + html.escape(json.dumps({
                         "row_id": r.row_id, "command": r.command, "created_at": str(r.created_at),
                         "ecngym_version": r.ecngym_version, "git_commit": r.git_commit, "seed": r.seed,
                         "trace_hash": r.trace_hash, "scenario_hash": r.scenario_hash,
                         "controller_params": json.loads(r.controller_params),
                         "flows": r.flows_path, "artifacts": r.artifacts_path,
                         "scenario_config": json.loads(r.scenario_config)}, indent=1, default=str))
                     + "</pre></details>")
    return "".join(parts)


def write_page(rankings: list[Ranking], refused: list[str], store: ResultStore, path: Path,
               field: str = "html") -> Path:
    """Write the leaderboard page to ``path`` (atomically) and return it.

    Args:
        rankings: The rankings (:func:`~ecngym.results.leaderboard.rank`).
        refused: The rows kept out of them, one sentence each.
        store: The store they come from (for the per-flow and per-step files).
        path: The page to write.
        field: The option that gave ``path``, named in the error.

    Returns:
        ``path``, resolved.

    Raises:
        ConfigError: Naming ``field`` if the page cannot be written there
            (:func:`~ecngym.files.write_atomically`; a page already there is left as it was).
    """
    sections, first = [], True
    for i, ranking in enumerate(rankings):
        figures = []
        for fig in _figures(ranking, store):
            figures.append(fig.to_html(full_html=False, include_plotlyjs=first, config={"displaylogo": False}))
            first = False
        seeds = ", ".join(f"{s}: {h[:12]}" for s, h in ranking.traces.items())
        sections.append(
            f'<section class="scenario"><h2>{html.escape(ranking.scenario)} <small>({html.escape(ranking.env_id)}, '
            f"scenario {ranking.scenario_hash[:12]})</small></h2>"
            f"<p>Traces (seed: hash): {html.escape(seeds)} · trace set {ranking.trace_set}</p>"
            + _table_html(ranking, i) + "".join(figures)
            + f"<h3>Provenance</h3>{_provenance_html(ranking)}</section>")
    refusals = "".join(f'<li class="refused">{html.escape(m)}</li>' for m in refused)
    page = (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>ecngym leaderboard</title>"
            f"<style>{_STYLE}</style></head><body><h1>ecngym leaderboard</h1>"
            f"<p>Store {html.escape(str(store.root))}. Score per controller: mean over seeds with a 95% confidence "
            "interval (Student t); controllers are only ranked against rows measured on the same traces. "
            "Δ vs #1: the mean over seeds of each controller's score minus the leader's on the same trace, "
            "with a Student-t 95% interval over those paired differences (excluding 0: the two differ).</p>"
            + "".join(sections)
            + (f"<h2>Refused rows</h2><ul>{refusals}</ul>" if refused else "") + "</body></html>")
    write_atomically(path, lambda tmp: tmp.write_bytes(page.encode()), field)
    return path.resolve()
