"""``ecngym run``: the benchmark.

By default a suite (:mod:`ecngym.benchmark.runner`: every scenario of ``suite=core`` x every
controller that needs no training and the references); with ``suite=null`` every such controller
on one scenario over several seeds. Each episode is a row in the results store
(:mod:`ecngym.results`) as soon as it ends, then the leaderboard is printed and its HTML page
written.
"""

from __future__ import annotations

import time
from pathlib import Path

import hydra
import hydra.utils
import pandas as pd
from omegaconf import DictConfig
from rich.console import Console

from ecngym import __version__
from ecngym.benchmark.runner import suite_main
from ecngym.commands.checks import check_metric_name, check_outputs, user_errors
from ecngym.commands.eval import evaluate
from ecngym.commands.factories import benchmark_controllers, distinct_items, make_env, results_store, scenario_name
from ecngym.error import ConfigError, EcnGymError
from ecngym.files import check_output_path
from ecngym.results.page import check_page_target
from ecngym.results.store import MAX_SEED
from ecngym.validation import Flag, check, check_whole


@hydra.main(version_base="1.3", config_path="../configs", config_name="run")
@user_errors
def run_main(cfg: DictConfig) -> None:
    """``ecngym run``: the benchmark: a suite (:mod:`ecngym.benchmark.runner`), or with ``suite=null`` one scenario."""
    from ecngym.results.leaderboard import leaderboard_from_store

    out = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    if cfg.get("suite") is not None or (cfg.get("benchmark") or {}).get("scenario_file") is not None:
        return suite_main(cfg, out, Console())  # (a scenario file with suite=null is refused there)
    if check("train", cfg.get("train", False), Flag):
        raise ConfigError("train", "got true, but train=true trains the learners of a suite (each scenario's training "
                                   "protocol): give suite=core or suite=full, or leave train out with suite=null")
    console = Console()  # (the tables fit its width: ecngym.results.terminal)
    seeds = [check_whole(f"seeds[{i}]", s, 0, MAX_SEED)
             for i, s in enumerate(distinct_items("seeds", cfg.seeds, "[1,2,3]"))]
    controllers = benchmark_controllers(cfg)
    score = check_metric_name("leaderboard.score", cfg.leaderboard.score, controllers)  # before the run, not after
    # a page of its own per scenario: never the suite board's outputs/leaderboard.html
    default_page = f"outputs/leaderboard-{scenario_name(cfg)}.html"
    html = check_output_path("leaderboard.html", cfg.leaderboard.html or default_page)
    page_kind = f"scenario {scenario_name(cfg)} board of store {results_store(cfg).root}"
    check_page_target("leaderboard.html", Path(hydra.utils.to_absolute_path(str(html))), page_kind)
    check_outputs(cfg)  # not at each controller's first row
    make_env(cfg).close()  # a bad scenario fails here, once, not once per controller (opens no fabric)
    console.print(f"[bold]ecngym {__version__}[/] benchmark: {len(controllers)} controllers x {len(seeds)} seeds "
                  f"on {scenario_name(cfg)} ({cfg.env.id}); store {results_store(cfg).root}")
    failed, scenario_hash = {}, None
    start = time.perf_counter()
    for name, ccfg in controllers.items():
        try:
            rows, _ = evaluate(cfg, ccfg, seeds, "run", console, out)
        except EcnGymError as exc:  # one controller's bad config must not stop the others
            failed[name] = str(exc)
            console.print(f"[yellow]{name}: not run on this scenario: {exc}[/]")
            continue
        scenario_hash = scenario_hash or results_store(cfg).query(
            "SELECT scenario_hash FROM episodes WHERE row_id = ?", [rows[0]["row_id"]])["scenario_hash"][0]
        console.print(f"{name}: {len(rows)} episodes, p99 slowdown <100KB "
                      f"{pd.Series([r['slowdown_p99_<100KB'] for r in rows], dtype=float).mean():.2f}")
    console.print(f"simulated {len(controllers) - len(failed)} controllers in {time.perf_counter() - start:.0f} s")
    if scenario_hash is not None:
        try:
            leaderboard_from_store(results_store(cfg), console, score=score,
                                   html=hydra.utils.to_absolute_path(str(html)), html_field="leaderboard.html",
                                   scenario_hashes=[scenario_hash], page_kind=page_kind)
        except ConfigError as exc:  # a count a controller declared (check_metric_name) but no stored row has
            if exc.field != "score":
                raise
            raise ConfigError("leaderboard.score", f"{exc.message}; the episodes are stored: rank them with "
                                                   f"ecngym leaderboard --store {results_store(cfg).root} "
                                                   "--score <metric>") from None
    if failed and (cfg.controllers != "all" or scenario_hash is None):
        # named controllers must all run; with "all", one that does not fit the scenario (e.g. a
        # DCTCP-only policy on a RoCE fabric) is reported above and left out of the ranking
        raise ConfigError("controllers", "; ".join(f"{k}: {v}" for k, v in failed.items()))
    if failed:
        console.print(f"[yellow]left out ({len(failed)}): {', '.join(failed)} (see above)[/]")
