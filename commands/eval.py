"""``ecngym eval``: run one controller on one scenario over several seeds, print the summary.

Each episode is a row of the results store (:mod:`ecngym.results`) as soon as it ends; ``-m``
sweeps (joblib, Ray, Optuna via ``sweep=...``) end with :class:`EvalSweepComparison`.
:func:`evaluate` is also how ``ecngym run`` plays each controller.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import hydra
import hydra.experimental.callback
import hydra.types
import pandas as pd
from omegaconf import DictConfig, OmegaConf
from rich.console import Console
from rich.table import Table

from ecngym import __version__
from ecngym.commands.checks import check_metric_name, check_outputs, user_errors
from ecngym.commands.factories import env_for, logger_config, make_controller, results_store, scenario_name
from ecngym.error import ConfigError
from ecngym.files import write_atomically, write_text_atomically
from ecngym.results.store import MAX_SEED
from ecngym.validation import check_whole

#: Most episodes one ``ecngym eval`` plays (its seeds and row ids are listed up front).
MAX_EPISODES = 100_000


def summary_table(rows: list[dict[str, Any]], title: str, width: int | None = None) -> Table:
    """The episode summaries of ``ecngym eval`` as a rich table (one column per episode, plus the mean).

    Args:
        rows: One summary per episode.
        title: The table's title.
        width: The console's width: where the compact layout (``avg/p50/p99`` in one cell) does not
            fit, each of those values gets a row of its own. None: the compact layout.
    """
    from ecngym.results.terminal import table_width
    from ecngym.sim_backend.metrics import SIZE_BUCKETS

    def fmt(x: Any) -> str:
        return f"{x:.3g}" if isinstance(x, float) else str(x)

    def mean(key: str) -> float:  # pandas skips nan without numpy's "Mean of empty slice" warning
        return float(pd.Series([r[key] for r in rows], dtype=float).mean())

    # (label prefix, [(part label, key, format)]): one cell "a/b/c" in the compact layout, one row per part else
    kilo = lambda x: f"{x / 1e3:.3g}"  # noqa: E731
    entries: list[tuple[str, list[tuple[str, str, Any]]]] = [
        ("return", [("", "return", fmt)]),
        ("flows", [("finished", "flows_finished", fmt), ("total", "flows_total", fmt)]),
        *[(f"slowdown {b}", [(s, f"slowdown_{s}_{b}", fmt) for s in ("avg", "p50", "p99")])
          for b in [*SIZE_BUCKETS, "all"]],
        ("queue, KB", [("mean", "queue_mean_bytes", kilo), ("p99", "queue_p99_bytes", kilo)]),
        *[(key, [("", key, fmt)]) for key in ("utilization", "pfc_paused_fraction", "marked_fraction")]]
    if "decisions_per_sim_s" in rows[0]:  # inference accounting (envs.rollout.run_episode)
        entries.append(("per sim s", [("decisions", "decisions_per_sim_s", fmt),
                                      ("forward passes", "forward_passes_per_sim_s", fmt),
                                      ("act s", "act_wall_s_per_sim_s", fmt),
                                      ("actuation s", "actuation_wall_s_per_sim_s", fmt)]))

    def build(compact: bool) -> Table:
        table = Table(title=title)
        table.add_column("metric", no_wrap=not compact, overflow="fold")
        for r in rows:
            table.add_column(f"episode {r['episode']}", justify="right", overflow="fold")
        if len(rows) > 1:
            table.add_column("mean", justify="right", overflow="fold")
        for prefix, parts in entries:
            groups = [parts] if compact else [[p] for p in parts]
            for group in groups:
                label = " ".join(filter(None, [prefix, "/".join(p[0] for p in group)]))
                cells = ["/".join(f(r[k]) for _, k, f in group) for r in rows]
                if len(rows) > 1:
                    cells.append("/".join(f(mean(k)) for _, k, f in group))
                table.add_row(label, *cells)
        seeds = [f"{r['seed']}/{str(r['trace_hash'])[:12]}" for r in rows]
        if compact:
            table.add_row("seed/trace hash", *seeds, *([""] if len(rows) > 1 else []))
        else:
            table.add_row("seed", *[str(r["seed"]) for r in rows], *([""] if len(rows) > 1 else []))
            table.add_row("trace hash", *[str(r["trace_hash"])[:12] for r in rows], *([""] if len(rows) > 1 else []))
        return table

    table = build(compact=True)
    if width is not None and table_width(table, Console(width=width)) > width:
        return build(compact=False)
    return table


def _save_controller_log(controller: Any, episode: int, logs: list[pd.DataFrame], out: Path) -> None:
    """Append the controller's ``log`` of one episode to ``controller_log.csv`` (rewritten whole)."""
    log = getattr(controller, "log", None)
    if not log:
        return
    logs.append(pd.DataFrame(log).assign(episode=episode))
    pd.concat(logs, ignore_index=True).to_csv(out / "controller_log.csv", index=False)


def _job_name() -> str:
    """The Hydra job's name in a sweep (``<num>``), or '' in a single run."""
    try:
        hc = hydra.core.hydra_config.HydraConfig.get()
        return str(hc.job.num) if hc.mode == hydra.types.RunMode.MULTIRUN else ""
    except ValueError:
        return ""


def evaluate(cfg: DictConfig, controller_cfg: DictConfig, seeds: list[int], command: str, console: Console,
             out: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run a controller for one episode per seed and commit each episode's row to the store as it ends.

    With ``results.skip_existing``, an episode whose row is already in the store is not simulated
    again; its stored row is returned instead (a rerun of a killed sweep fills in only what is
    missing).

    Returns:
        One dict per seed: ``controller``, ``episode``, ``seed``, ``return``, ``trace_hash``,
        ``row_id`` and the episode summary's metrics; and the resolved config of the env the
        episodes ran on (preset, overrides and the controller's ``env_overrides``), as each row
        records it.
    """
    from ecngym.envs.view import EnvView
    from ecngym.results import episode_row, make_logger, measure_episode, row_id
    from ecngym.results.record import controller_identity, scenario_identity

    store = results_store(cfg)
    controller = make_controller(cfg, controller_cfg)
    env = env_for(controller, cfg, console)
    view = EnvView(env)
    params = OmegaConf.to_container(controller_cfg, resolve=True)
    env_config = env.unwrapped.config.as_dict()  # the resolved scenario (preset + overrides)
    ids = {seed: row_id(command, controller_identity(controller.name, params),
                        scenario_identity(cfg.env.id, env_config), seed) for seed in seeds}
    from ecngym.results.config import parse_results

    skip = parse_results(cfg.get("results")).skip_existing
    todo = [seed for seed in seeds if not (skip and store.has(ids[seed]))]
    if len(todo) < len(seeds):
        console.print(f"{controller.name}: {len(seeds) - len(todo)} of {len(seeds)} episodes already in the "
                      f"store {store.root}, not run again (results.skip_existing=false reruns them)")
    logger = make_logger(logger_config(cfg),
                         run_name="-".join(filter(None, [command, controller.name, _job_name()])), run_dir=out,
                         config=OmegaConf.to_container(cfg, resolve=True))
    rows: dict[int, dict[str, Any]] = {}
    logs: list[pd.DataFrame] = []
    try:
        for seed in todo:
            with _status(console, controller, f"{controller.name} on {cfg.env.id}: seed {seed}"):
                try:
                    episode = measure_episode(env, controller, seed)
                finally:  # the controller's per-step records, also those of an episode that failed
                    _save_controller_log(controller, seeds.index(seed), logs, out)
            metrics = episode.metrics()
            row = episode_row(store, command, controller.name, params, cfg.env.id, scenario_name(cfg), env_config,
                              view.trace_hash, seed, metrics, episode_return=episode.episode_return,
                              wall_s=episode.wall_s, flows=episode.flows, series=episode.series,
                              artifacts_path=str(out))
            store.commit(row)  # atomic: the row is in the store, complete, from here on
            logger.log_metrics(metrics, step=seed)
            rows[seed] = {"controller": controller.name, "env": cfg.env.id, "seed": seed,
                          "return": episode.episode_return, "trace_hash": row["trace_hash"],
                          "row_id": row["row_id"], **episode.summary}
            if hasattr(controller, "trained_traces"):  # checked before the first action: held out
                rows[seed]["held_out"] = row["trace_hash"] not in controller.trained_traces
            if command == "eval":  # the run folder's own record too, rewritten as each episode ends
                done = [{**r, "episode": seeds.index(k)} for k, r in rows.items()]
                write_atomically(out / "eval.csv", lambda tmp, done=done: pd.DataFrame(done).to_csv(tmp, index=False))
    finally:
        env.close()
        logger.close()
    report = store.ingest()
    if report.duplicates:
        console.print(f"[yellow]{report.duplicates} row(s) were already in the store and were replaced[/]")
    missing = [seed for seed in seeds if seed not in rows]
    if missing:
        stored = store.episodes(ingest=False).set_index("row_id")
        for seed in missing:
            r = stored.loc[ids[seed]]
            rows[seed] = {"controller": r["controller"], "env": r["env_id"], "seed": seed, "return": r["return"],
                          "trace_hash": r["trace_hash"], "row_id": ids[seed],
                          **{k: r[k] for k in stored.columns if k.startswith(("slowdown_", "flows_", "queue_"))
                             or k in ("utilization", "pfc_paused_fraction", "marked_fraction")}}
    return [{**rows[seed], "episode": i} for i, seed in enumerate(seeds)], env_config


def _status(console: Console, controller: Any, text: str) -> contextlib.AbstractContextManager[Any]:
    """A spinner while an episode runs, on a terminal only and not for a controller that forks.

    The spinner redraws from a thread of its own; a controller that branches the process
    (``forks = True``, e.g. :class:`~ecngym.baselines.mpc.MpcForecastController`) refuses to
    fork while another thread runs, and a console that is no terminal (a benchmark worker's)
    shows no spinner anyway.
    """
    if console.is_terminal and not getattr(controller, "forks", False):
        return console.status(text)
    return contextlib.nullcontext()


def objective(cfg: DictConfig, rows: list[dict[str, Any]]) -> float | None:
    """The sweep objective ``cfg.objective`` (a metric name): its mean over ``rows``, read from the store."""
    name = cfg.get("objective")
    if name is None:
        return None
    frame = results_store(cfg).query(
        "SELECT avg(metrics[$name]) AS value, count(metrics[$name]) AS n FROM episodes "
        "WHERE list_contains($ids, row_id)", {"name": str(name), "ids": [r["row_id"] for r in rows]})
    if int(frame["n"][0]) == 0:  # (the name was checked before the run: every value was NaN)
        raise ConfigError("objective", f"no episode of this run has a value of {name!r} (NaN in every one, e.g. no "
                                       "flow of that kind finished); the episodes are stored")
    return float(frame["value"][0])


@hydra.main(version_base="1.3", config_path="../configs", config_name="eval")
@user_errors
def eval_main(cfg: DictConfig) -> float | None:
    """``ecngym eval``: run one controller on one scenario, store the episodes, print the summary."""
    console = Console()  # (the summary table takes another layout where it does not fit)
    seed = check_whole("seed", cfg.seed, 0, MAX_SEED)
    episodes = check_whole("episodes", cfg.episodes, 1, min(MAX_EPISODES, MAX_SEED - seed + 1))
    out = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    check_outputs(cfg)
    if cfg.get("scenario") is not None:  # a scenario file anywhere: its env replaces env=
        from ecngym.commands.factories import with_scenario_file

        cfg = with_scenario_file(cfg)
    if cfg.get("objective") is not None:  # (a misspelt name was refused only after every episode had run)
        check_metric_name("objective", cfg.objective, {"controller": cfg.controller})
    # the env evaluate ran is the one recorded: a second env built here only for its config was a
    # second scenario build (seconds on a large fabric) and, for a controller with env_overrides,
    # not the config the episodes ran with
    rows, env_config = evaluate(cfg, cfg.controller, list(range(seed, seed + episodes)), "eval", console, out)
    console.print(summary_table(rows, f"{rows[0]['controller']} on {cfg.env.id}", console.width))
    record = {"version": __version__, "config": OmegaConf.to_container(cfg, resolve=True),
              "env_config": env_config, "store": str(results_store(cfg).root), "episodes": rows}
    write_text_atomically(out / "eval.json", json.dumps(record, indent=2, default=str))
    console.print(f"results: {results_store(cfg).root} (rows {', '.join(r['row_id'][:10] for r in rows)}); {out}")
    return objective(cfg, rows)


class EvalSweepComparison(hydra.experimental.callback.Callback):
    """After an ``ecngym eval -m`` sweep: print every job's episodes side by side and save them.

    Reads each job's ``eval.json`` in the sweep directory, prints one row per (controller,
    episode) with its trace hash and says whether all rows of one seed saw the same trace; writes
    ``comparison.csv`` in the sweep directory.
    """

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """Print and save the comparison (a sweep whose jobs all failed prints nothing)."""
        sweep = Path(config.hydra.sweep.dir)
        rows = [{"job": p.parent.name, **ep} for p in sorted(sweep.glob("*/eval.json"))
                for ep in json.loads(p.read_text())["episodes"]]
        if not rows:
            return
        df = pd.DataFrame(rows)
        df.to_csv(sweep / "comparison.csv", index=False)
        from ecngym.results.terminal import Column, fit_tables, print_tables

        columns = {"seed": "seed", "return": "return", "slowdown_p50_all": "slowdown p50",
                   "slowdown_p99_all": "slowdown p99", "env": "env", "queue_mean_bytes": "queue mean B",
                   "utilization": "utilization", "trace_hash": "trace hash"}
        key = ("seed", "slowdown_p99_all", "return")

        def text(value: Any, column: str) -> str:
            if column == "trace_hash":
                return str(value)[:12]
            return f"{value:.4g}" if isinstance(value, float) else str(value)

        console = Console()
        print_tables(console, fit_tables(
            console, Column("controller", [str(c) for c in df["controller"]], justify="left"),
            [Column(label, [text(v, k) for v in df[k]], key=k in key,
                    justify="left" if k in ("env", "trace_hash") else "right") for k, label in columns.items()],
            title=f"ecngym eval sweep: {len(set(df['job']))} jobs"))
        same = all(g["trace_hash"].nunique() == 1 for _, g in df.groupby(["env", "seed"]))
        console.print("identical traces per (env, seed): " + ("yes" if same else "[red]NO[/]")
                      + f"; saved {sweep / 'comparison.csv'}")
