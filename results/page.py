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
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ecngym.error import ConfigError
from ecngym.files import write_atomically
from ecngym.results.ranking import CONTEXT_METRICS, HIGHER_IS_BETTER, Ranking, paired_text, rank_text
from ecngym.results.store import ResultStore
from ecngym.sim_backend.metrics import SIZE_BUCKETS

#: Points per CDF curve (quantiles of the pooled samples): keeps the page small.
CDF_POINTS = 400
#: The ``<meta>`` name that says which board a page is (:func:`check_page_target`).
PAGE_META = "ecngym-page"

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
.table-wrap { max-width: 100%; overflow-x: auto; margin: 1em 0; }
table.ranking, table.suite { border-collapse: collapse; }
table.suite th, table.suite td { border: 1px solid #ccc; padding: 4px 8px; text-align: right; white-space: nowrap; }
table.suite td.name { text-align: left; font-weight: 600; position: sticky; left: 0; background: #fff; }
table.suite th.name { position: sticky; left: 0; background: #fff; }
table.suite td.key { background: #f4f8ff; }
table.suite tr.reference td.key { background: #f7f7f7; }
tr.reference td, tr.lb-row.reference td { color: #666; font-style: italic; }
.verdict { font-weight: 600; }
.flag { color: #a15c00; }
table.ranking th, table.ranking td { border: 1px solid #ccc; padding: 4px 8px; text-align: right;
  white-space: nowrap; }
table.ranking td.name { text-align: left; font-weight: 600; }
.refused { color: #a15c00; }
details pre { background: #f6f6f6; padding: 0.5em; overflow-x: auto; font-size: 12px; }
"""


def _page_kind(text: str) -> str | None:
    match = re.search(rf'<meta name="{PAGE_META}" content="([^"]*)"', text)
    return html.unescape(match.group(1)) if match else None


def check_page_target(field: str, path: Path, kind: str) -> None:
    """Refuse to write a page of ``kind`` over a file that holds another page (or no page of ours).

    Every page says what it is in a ``<meta name="ecngym-page">``: the suite board of one store,
    the rankings of a store, one scenario's board. A command may replace its own kind of page (the
    same board, rebuilt from the store); it never silently replaces another command's.

    Args:
        field: The option that gave ``path``, named in the error.
        path: Where the page would go.
        kind: What the page is.

    Raises:
        ConfigError: Naming ``field`` when ``path`` holds another kind of page, or a file that is
            not an ecngym page.
    """
    if not path.is_file():
        return
    with open(path, "rb") as handle:
        head = handle.read(1 << 16).decode("utf-8", "replace")
    theirs = _page_kind(head)
    if theirs == kind or (theirs is None and "<title>ecngym" in head):  # ours, or ours from before the marker
        return
    what = f"another page ({theirs})" if theirs else "a file that is no ecngym page"
    raise ConfigError(field, f"{path} holds {what}; this command writes the {kind}: not overwritten. Give "
                             f"{field} another file, or remove that one")


def page_head(title: str, kind: str) -> str:
    """The page's ``<head>`` up to its styles (left open: a page may add plotly.js before closing it).

    Args:
        title: The page's title.
        kind: What the page is (:func:`check_page_target`), in its ``<meta>``.

    Returns:
        The HTML, without ``</head>``.
    """
    return (f'<head><meta charset="utf-8"><meta name="{PAGE_META}" content="{html.escape(kind)}">'
            f"<title>{html.escape(title)}</title><style>{_STYLE}</style>")


def _cdf(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values = np.sort(values[np.isfinite(values)])
    if len(values) == 0:
        return values, values
    q = np.linspace(0, 1, min(CDF_POINTS, len(values)))
    return np.quantile(values, q), q


def fmt_cell(x: object, digits: int = 4) -> str:
    """One table cell's text: a float to ``digits`` significant digits ("—" if not finite), else escaped."""
    if isinstance(x, float) and not math.isfinite(x):
        return "—"
    return f"{x:.{digits}g}" if isinstance(x, float) else html.escape(str(x))


def table_html(ranking: Ranking, index: int) -> str:
    """A ranking's table (references labelled at their place, not ranked).

    Args:
        ranking: The ranking.
        index: Makes the table's ``id`` (``ranking-<index>``) unique in the page.

    Returns:
        The HTML.
    """
    extra = [m for m in CONTEXT_METRICS if m in ranking.table]
    head = "".join(f"<th>{html.escape(h)}</th>" for h in
                   ["#", "controller", ranking.score, "95% CI", "seeds", "Δ vs #1, paired 95% CI", *extra])
    body = []
    competitors = int((~ranking.table["reference"]).sum()) if "reference" in ranking.table else len(ranking.table)
    for r in ranking.table.itertuples():
        reference = bool(getattr(r, "reference", False))
        label = r.controller + (" (reference)" if reference else "")
        cells = [f"<td>{rank_text(r, competitors)}</td>", f'<td class="name">{html.escape(label)}</td>',
                 f"<td>{fmt_cell(r.score_mean)}</td>",
                 f"<td>[{fmt_cell(r.ci95_low, 3)}, {fmt_cell(r.ci95_high, 3)}]</td>",
                 f"<td>{r.seeds}</td>", f"<td>{html.escape(paired_text(r))}</td>",
                 *[f"<td>{fmt_cell(ranking.table.loc[r.Index, m], 3)}</td>" for m in extra]]
        kind = "reference" if reference else "competitor"
        body.append(f'<tr class="lb-row {kind}" data-controller="{html.escape(r.controller)}">{"".join(cells)}</tr>')
    return (f'<div class="table-wrap"><table class="ranking" id="ranking-{index}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def ranking_figures(ranking: Ranking, store: ResultStore) -> list:
    """A ranking's plotly figures: the scores with their CIs, the FCT-slowdown CDFs and the queue CDF.

    Args:
        ranking: The ranking.
        store: The store its rows come from (per-flow and per-step files).

    Returns:
        The figures.
    """
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


def provenance_html(ranking: Ranking) -> str:
    """Every row's provenance (row id, seed, trace hash, version, commit, parameters), one ``<details>`` each."""
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


#: The rankings page's explanation of its numbers.
RANKINGS_INTRO = ("Score per controller: mean over seeds with a 95% confidence interval (Student t); controllers "
                  "are only ranked against rows measured on the same traces. Δ vs #1: the mean over seeds of each "
                  "controller's score minus the leader's on the same trace, with a Student-t 95% interval over "
                  "those paired differences (excluding 0: the two differ). References (static_default, "
                  "static_tuned, the oracles) are shown at their place, labelled, never ranked.")


def ranking_sections(rankings: list[Ranking], store: ResultStore, embed_plotlyjs: bool, heading: str = "h2") -> str:
    """One section per ranking: table, figures, provenance (plotly.js embedded once if ``embed_plotlyjs``)."""
    sections, first = [], embed_plotlyjs
    for i, ranking in enumerate(rankings):
        figures = []
        for fig in ranking_figures(ranking, store):
            figures.append(fig.to_html(full_html=False, include_plotlyjs=first, config={"displaylogo": False}))
            first = False
        seeds = ", ".join(f"{s}: {h[:12]}" for s, h in ranking.traces.items())
        sections.append(
            f'<section class="scenario"><{heading}>{html.escape(ranking.scenario)} <small>('
            f"{html.escape(ranking.env_id)}, scenario {ranking.scenario_hash[:12]})</small></{heading}>"
            f"<p>Traces (seed: hash): {html.escape(seeds)} · trace set {ranking.trace_set}</p>"
            + table_html(ranking, 500 + i) + "".join(figures)
            + f"<h3>Provenance</h3>{provenance_html(ranking)}</section>")
    return "".join(sections)


def write_page(rankings: list[Ranking], refused: list[str], store: ResultStore, path: Path,
               field: str = "html", kind: str | None = None) -> Path:
    """Write the leaderboard page to ``path`` (atomically) and return it.

    Args:
        rankings: The rankings (:func:`~ecngym.results.ranking.rank`).
        refused: The rows kept out of them, one sentence each.
        store: The store they come from (for the per-flow and per-step files).
        path: The page to write.
        field: The option that gave ``path``, named in the error.
        kind: What the page is (:func:`check_page_target`); default: the store's rankings.

    Returns:
        ``path``, resolved.

    Raises:
        ConfigError: Naming ``field`` if the page cannot be written there
            (:func:`~ecngym.files.write_atomically`; a page already there is left as it was), or if
            another kind of page is there.
    """
    kind = kind or f"rankings of store {store.root}"
    check_page_target(field, path, kind)
    refusals = "".join(f'<li class="refused">{html.escape(m)}</li>' for m in refused)
    page = ("<!DOCTYPE html><html>" + page_head("ecngym leaderboard", kind) + "</head><body><h1>ecngym leaderboard</h1>"
            f"<p>Store {html.escape(str(store.root))}. {html.escape(RANKINGS_INTRO)}</p>"
            + ranking_sections(rankings, store, embed_plotlyjs=True)
            + (f"<h2>Refused rows</h2><ul>{refusals}</ul>" if refused else "") + "</body></html>")
    write_atomically(path, lambda tmp: tmp.write_bytes(page.encode()), field)
    return path.resolve()

