"""The experiment commands: ``ecngym run`` (the benchmark), ``eval``, ``train`` and ``compare``.

``ecngym run`` is the benchmark: by default a suite (:mod:`ecngym.benchmark.runner`: every scenario
of ``suite=core`` x every controller that needs no training and the references); with ``suite=null``
every such controller on one scenario over several seeds. Each episode is a row in the results
store (:mod:`ecngym.results`) as soon as it ends, then the leaderboard is printed and its HTML page
written. ``ecngym eval`` runs one
controller (``-m`` sweeps: joblib, Ray, Optuna via ``sweep=...``); ``ecngym train`` trains an SB3
policy; both write through the store too. ``ecngym compare`` replays one trace on one fabric once
per static ECN setting (no env, no controller) and prints the FCT-slowdown comparison.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import hydra
import hydra.experimental.callback
import hydra.types
import hydra.utils
import pandas as pd
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException
from rich.console import Console
from rich.table import Table

from ecngym import __version__
from ecngym.configs import CONFIG_DIR
from ecngym.error import ConfigError, EcnGymError
from ecngym.files import check_output_path, write_atomically, write_text_atomically
from ecngym.results.store import MAX_SEED
from ecngym.sim_backend import Fabric, FabricConfig, Topology, slowdown_table
from ecngym.sim_backend.data import hpcc_reference_path
from ecngym.sim_backend.flow_checks import check_has_flows
from ecngym.sim_backend.flows import as_flow_table, read_flows
from ecngym.sim_backend.hpcc_flow_file import read_hpcc_flow_file
from ecngym.sim_backend.port_settings import ecn_by_port
from ecngym.validation import Duration, Flag, Text, check, check_whole, config_values, plain

#: Most episodes one ``ecngym eval`` plays (its seeds and row ids are listed up front).
MAX_EPISODES = 100_000


def load_trace(spec: str) -> tuple[Any, str]:
    """Return (flow table or Trace, description) for the ``trace`` config field, read from its file.

    Raises:
        ConfigError: Naming ``trace`` if ``spec`` is neither ``hpcc_reference`` nor a file, else as
            :func:`~ecngym.sim_backend.flows.read_flows` raises for a malformed file.
    """
    if spec == "hpcc_reference":
        flows = read_hpcc_flow_file(hpcc_reference_path("flow_ws50_16h_100g_10ms.txt"))
        flows["start_ns"] -= flows["start_ns"].min()  # the file starts at t = 2 s
        return flows, "HPCC reference WebSearch 50% (605 flows)"
    return read_flows(spec, field="trace", expected="'hpcc_reference', a Parquet trace ('ecngym trace generate') "
                                                    "or an HPCC flow file"), spec


def _ecn_setting(fabric_cfg: FabricConfig, name: str, ecn: dict[str, Any], seed: Any,
                 ports: dict[str, Any]) -> FabricConfig:
    """The fabric config of one named ECN setting, validated (against the ports' rates too).

    ``ports`` is the topology's :meth:`~ecngym.sim_backend.Topology.port_table`.

    Raises:
        ConfigError: Naming ``ecn_settings.<name>.<field>`` for a bad ECN field, ``seed`` for a
            seed the fabric refuses (compare's ``seed`` is the fabric's), else the fabric's field.
    """
    try:
        # a setting applies to every port: it replaces per-rate thresholds (an HPCC config's maps)
        setting = fabric_cfg.updated({"ecn": {"by_rate": {}, **ecn}, "seed": seed})
        setting.to_cpp()
        # (a by_rate map without a port's rate failed when its run built the fabric)
        ecn_by_port(setting, ports["rate_bps"], ports["is_switch"])
    except ConfigError as exc:
        if exc.field == "fabric.seed":
            raise ConfigError("seed", exc.message) from None
        if not exc.field.startswith("fabric.ecn."):
            raise
        field = f"ecn_settings.{name}.{exc.field.removeprefix('fabric.ecn.')}"
        raise ConfigError(field, exc.message) from None
    return setting


def compare_static_settings(cfg: DictConfig, console: Console, out: Path | None = None) -> pd.DataFrame:
    """Run every ``ecn_settings`` entry on the same trace; return one summary row per setting.

    Every setting is validated before the first simulation starts. With ``out``, each setting's
    flow records and the summary so far are written as soon as that setting finishes.

    Raises:
        ConfigError: On a bad fabric, topology, trace, ECN setting or limit (naming the field).
    """
    fabric = config_values(cfg.fabric)
    if "seed" in fabric:  # the top-level seed sets it for every setting
        raise ConfigError("fabric.seed", f"got {fabric['seed']!r}; compare's fabric seed is the top-level seed "
                                         f"(now {cfg.seed!r}): give seed={fabric['seed']!r} instead")
    fabric_cfg = FabricConfig.from_dict(fabric)
    topo = Topology.from_config(config_values(cfg.topology))
    ecn_settings = cfg.get("ecn_settings")  # None once deleted with ~ecn_settings
    if not ecn_settings:
        raise ConfigError("ecn_settings", "got no setting; give at least one name: {kmin, kmax, pmax}")
    settings = {}
    ports = topo.port_table()
    for name, ecn in ecn_settings.items():
        if not isinstance(ecn, Mapping):
            raise ConfigError(f"ecn_settings.{name}", f"got {ecn!r}, expected a mapping {{kmin, kmax, pmax}}")
        settings[str(name)] = _ecn_setting(fabric_cfg, str(name), dict(ecn), cfg.seed, ports)
    limit_ns = check("limit", cfg.limit, Duration(low=1))
    flows, description = load_trace(str(cfg.trace))  # read (a malformed file's error is the reader's)
    try:  # checked once, before any run: the table itself, then its hosts against the topology
        flows = as_flow_table(flows)
    except ConfigError as exc:  # (a size of 0 or src == dst read "does not fit the topology")
        raise ConfigError("trace", f"{description} is not a valid flow table: {exc}") from None
    try:
        flows = as_flow_table(flows, num_hosts=topo.num_hosts)
    except ConfigError as exc:  # (e.g. a 16-host trace on a smaller topology)
        raise ConfigError("trace", f"{description} does not fit the topology {topo.name} "
                                   f"({topo.num_hosts} hosts): {exc}") from None
    check_has_flows("trace", flows, description)
    console.print(f"[bold]ecngym {__version__}[/] · {topo.name} · {description} · fabric preset "
                  f"{cfg.fabric.get('preset', 'custom')}")
    rows = []
    for name, setting in settings.items():
        start = time.perf_counter()
        with console.status(f"simulating {name} ..."), Fabric(topo, flows, setting) as fab:
            all_done = fab.run(limit_ns)
            records = fab.flow_records()
            counters = fab.counters()
        wall = time.perf_counter() - start
        table = slowdown_table(records)
        row = {"setting": name, "flows_done": int(records["finished"].sum()),
               "flows": len(records), "all_finished": all_done, "wall_s": wall,
               "data_packet_hops": counters["data_packet_hops"]}
        for bucket in table.index:
            row[f"{bucket} p50"] = table.loc[bucket, "median"]
            row[f"{bucket} p99"] = table.loc[bucket, "p99"]
        rows.append(row)
        if out is not None:
            write_atomically(out / f"flows_{name}.parquet", lambda tmp, r=records: r.to_parquet(tmp, index=False))
            write_atomically(out / "summary.csv", lambda tmp: pd.DataFrame(rows).to_csv(tmp, index=False))
    return pd.DataFrame(rows)


def print_summary(summary: pd.DataFrame, console: Console) -> None:
    """Print the comparison as a rich table."""
    table = Table(title="FCT slowdown (p50 / p99) per flow size, identical trace")
    table.add_column("ECN setting")
    for bucket in ("<100KB", "100KB-1MB", ">1MB", "all"):
        table.add_column(bucket, justify="right")
    table.add_column("flows done", justify="right")
    table.add_column("wall s", justify="right")
    for _, r in summary.iterrows():
        cells = [f"{r[f'{b} p50']:.2f}/{r[f'{b} p99']:.1f}"
                 for b in ("<100KB", "100KB-1MB", ">1MB", "all")]
        table.add_row(r["setting"], *cells, f"{r['flows_done']}/{r['flows']}", f"{r['wall_s']:.1f}")
    console.print(table)


def _user_errors(task: Callable[[DictConfig], Any]) -> Callable[[DictConfig], Any]:
    """Report bad input (an :class:`~ecngym.error.EcnGymError`) in one line and exit with status 2.

    Hydra would otherwise print the traceback of any exception and exit with status 1. The task's
    return value (a sweep objective) is passed on to Hydra's sweeper.
    """

    @functools.wraps(task)
    def wrapper(cfg: DictConfig) -> Any:
        try:
            return task(cfg)
        except (EcnGymError, OmegaConfBaseException) as exc:
            if os.environ.get("HYDRA_FULL_ERROR") == "1":  # --debug
                traceback.print_exc()
            if isinstance(exc, OmegaConfBaseException):  # e.g. a mandatory value left at ??? (controller.path)
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                exc = ConfigError(getattr(exc, "full_key", None) or "config", first)
            print(f"ecngym {task.__name__.removesuffix('_main').replace('_', '-')}: error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None

    return wrapper


@hydra.main(version_base="1.3", config_path="configs", config_name="compare")
@_user_errors
def compare_main(cfg: DictConfig) -> None:
    """Entry point of ``ecngym compare`` (Hydra overrides accepted, e.g. ``topology=leaf_spine``)."""
    console = Console(width=max(Console().width, 100))  # the comparison table needs ~100 columns
    out = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)
    summary = compare_static_settings(cfg, console, out)
    print_summary(summary, console)
    write_text_atomically(out / "run.json", json.dumps(
        {"version": __version__, "config": OmegaConf.to_container(cfg, resolve=True),
         "summary": summary.to_dict(orient="records")}, indent=2, default=str))
    console.print(f"results: {out}")


# ---------------------------------------------------------------------- eval / train
def make_controller(cfg: DictConfig, controller_cfg: DictConfig | None = None) -> Any:
    """Build the controller of ``controller_cfg`` (default ``cfg.controller``) from its ``_target_``.

    See :mod:`ecngym.baselines.registry`.

    Raises:
        ConfigError: On an unknown target or key, or a bad parameter (naming ``controller.<field>``).
    """
    from ecngym.baselines.registry import build_controller

    return build_controller(cfg.controller if controller_cfg is None else controller_cfg)


def env_kwargs(cfg: DictConfig) -> dict[str, Any]:
    """EcnTuningEnv overrides: ``env.kwargs`` plus any chosen fabric / topology / workload group.

    ``ecngym eval fabric=dcqcn_paper topology=leaf_spine workload=datamining`` replaces those parts
    of the env's scenario by the group's config. ``+workload.<key>=...`` without a workload group
    sets that key of the scenario's own workload (validated as ``env.workload.<key>``).
    """
    kwargs = config_values(cfg.env.kwargs) if cfg.env.get("kwargs") else {}
    if cfg.get("fabric"):
        kwargs["fabric"] = config_values(cfg.fabric)
    if cfg.get("topology"):
        kwargs["topology"] = config_values(cfg.topology)
    if cfg.get("workload"):
        workload = config_values(cfg.workload)
        name = workload.pop("name", None)  # absent when no group was chosen (``+workload.load=0.5`` alone)
        kwargs["workload"] = {**kwargs.get("workload", {}), **({"workload": name} if name is not None else {}),
                              **workload}
    return kwargs


def make_env(cfg: DictConfig, extra: dict[str, Any] | None = None) -> Any:
    """``gymnasium.make`` the configured env id with its keyword overrides."""
    import gymnasium as gym

    import ecngym.envs  # noqa: F401  (registers the ids)

    return gym.make(cfg.env.id, **{**env_kwargs(cfg), **(extra or {})})


def _env_for(controller: Any, cfg: DictConfig, console: Console | None = None) -> Any:
    """The eval env, rebuilt with the controller's ``env_overrides`` when it needs any.

    (A static setting that is not one of the discrete templates joins them; a tuner that sets
    arbitrary thresholds asks for a continuous action space; a trained agent sets the state,
    reward and Δt it was trained with. Traces do not depend on any of them.) Each ``env.kwargs``
    key given on the command line that the controller's settings replace by another value is
    named on ``console``: it does not apply to this controller.
    """
    env = make_env(cfg)
    wants = getattr(controller, "env_overrides", None)
    extra = wants(env) if wants is not None else {}
    if not extra:
        return env
    env.close()
    if console is not None:
        for key, given, used in _replaced_env_keys(cfg, extra):
            console.print(f"[yellow]note: {controller.name} sets env.{key.split('.')[0]} itself: env.kwargs.{key}="
                          f"{given!r} does not apply to it (it runs with {used})[/]")
    try:
        return make_env(cfg, extra)
    except ConfigError as exc:  # the controller's own settings (a trained agent's: its agent.json's "env")
        from ecngym.agents.common import AGENT_FILE

        trained = hasattr(controller, "run_dir")
        source = f"{controller.run_dir / AGENT_FILE}'s env" if trained else f"{controller.name}'s env_overrides"
        raise ConfigError("controller.path" if trained else "controller",
                          f"{source} gives a bad {exc.field}: {exc.message}") from None


def _replaced_env_keys(cfg: DictConfig, extra: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """(key, value given, what the controller uses) of each command-line ``env.kwargs`` key ``extra`` replaces.

    ``extra`` replaces whole top-level keys (``observation``, ``action`` ...); a key given inside one
    of them is reported unless the controller sets the same value.
    """
    from hydra.core.hydra_config import HydraConfig

    from ecngym.cli import key_of_override

    if not HydraConfig.initialized():
        return []
    given = env_kwargs(cfg)
    out = []
    for override in HydraConfig.get().overrides.task:
        full = key_of_override(override)
        key = full.removeprefix("env.kwargs.")
        if not full.startswith("env.kwargs.") or key.split(".")[0] not in extra or override.startswith("~"):
            continue
        value, used = _lookup(given, key), _lookup(extra, key)
        if value != used:
            out.append((key, value, "no such setting" if used is _ABSENT else repr(used)))
    return out


_ABSENT = object()


def _lookup(tree: Any, dotted: str) -> Any:
    """The value at ``dotted`` (``observation.history``) in nested mappings, or ``_ABSENT``."""
    for part in dotted.split("."):
        if not isinstance(tree, dict) or part not in tree:
            return _ABSENT
        tree = tree[part]
    return tree


def summary_table(rows: list[dict[str, Any]], title: str) -> Table:
    """The episode summaries of ``ecngym eval`` as a rich table (one column per episode, plus the mean)."""
    from ecngym.sim_backend.metrics import SIZE_BUCKETS

    def fmt(x: Any) -> str:
        return f"{x:.3g}" if isinstance(x, float) else str(x)

    table = Table(title=title)
    table.add_column("metric")
    for r in rows:
        table.add_column(f"episode {r['episode']}", justify="right")
    if len(rows) > 1:
        table.add_column("mean", justify="right")

    def add(label: str, cell: Any, numeric: list[str] | None = None) -> None:
        cells = [cell(r) for r in rows]
        if len(rows) > 1:
            # pandas skips nan without numpy's "Mean of empty slice" warning (a bucket empty in every episode)
            mean = {k: float(pd.Series([r[k] for r in rows], dtype=float).mean()) for k in numeric or []}
            cells.append(cell(mean) if numeric else "")
        table.add_row(label, *cells)

    add("return", lambda r: fmt(r["return"]), ["return"])
    add("flows finished/total", lambda r: f"{fmt(r['flows_finished'])}/{fmt(r['flows_total'])}",
        ["flows_finished", "flows_total"])
    for bucket in [*SIZE_BUCKETS, "all"]:
        keys = [f"slowdown_{s}_{bucket}" for s in ("avg", "p50", "p99")]
        add(f"slowdown {bucket} avg/p50/p99", lambda r, keys=keys: "/".join(fmt(r[k]) for k in keys), keys)
    add("queue mean/p99, KB", lambda r: f"{r['queue_mean_bytes'] / 1e3:.3g}/{r['queue_p99_bytes'] / 1e3:.3g}",
        ["queue_mean_bytes", "queue_p99_bytes"])
    for key in ("utilization", "pfc_paused_fraction", "marked_fraction"):
        add(key, lambda r, key=key: fmt(r[key]), [key])
    if "decisions_per_sim_s" in rows[0]:  # inference accounting (envs.rollout.run_episode)
        keys = ["decisions_per_sim_s", "forward_passes_per_sim_s", "act_wall_s_per_sim_s",
                "actuation_wall_s_per_sim_s"]
        add("per sim s: decisions/forward/act s/actuation s", lambda r: "/".join(fmt(r[k]) for k in keys), keys)
    add("seed/trace hash", lambda r: f"{r['seed']}/{str(r['trace_hash'])[:12]}")
    return table


def _save_controller_log(controller: Any, episode: int, logs: list[pd.DataFrame], out: Path) -> None:
    """Append the controller's ``log`` of one episode to ``controller_log.csv`` (rewritten whole)."""
    log = getattr(controller, "log", None)
    if not log:
        return
    logs.append(pd.DataFrame(log).assign(episode=episode))
    pd.concat(logs, ignore_index=True).to_csv(out / "controller_log.csv", index=False)


def check_outputs(cfg: DictConfig) -> None:
    """Refuse a results store or logger directory that cannot be written, before any simulation or training.

    Raises:
        ConfigError: Naming ``results.dir`` / ``logger.<field>`` (:func:`~ecngym.files.check_writable_directory`,
            :func:`~ecngym.results.config.parse_logger`), or ``results.dir`` if its database exists but
            cannot be read as a results store.
    """
    from ecngym.files import check_writable_directory
    from ecngym.results.config import parse_logger
    from ecngym.results.store import StoreError

    store = results_store(cfg)
    check_writable_directory("results.dir", store.root, "a results store directory")
    try:  # (a broken database failed at each controller's first row: ecngym run named it 'controllers')
        store.check_readable()
    except StoreError as exc:
        raise ConfigError("results.dir", str(exc)) from None
    logger = parse_logger(_logger_config(cfg))
    if logger.name != "none" and logger.dir is not None:
        check_writable_directory("logger.dir", logger.dir, "the logger's directory")


def _logger_config(cfg: DictConfig) -> dict[str, Any] | None:
    """The job's ``logger`` config as a plain mapping (``None`` when it has none)."""
    return OmegaConf.to_container(cfg.logger, resolve=True) if cfg.get("logger") else None


def results_store(cfg: DictConfig) -> Any:
    """The results store of ``cfg.results.dir`` (relative paths: from the directory the command started in)."""
    from ecngym.results import ResultStore
    from ecngym.results.config import parse_results

    return ResultStore(hydra.utils.to_absolute_path(parse_results(cfg.get("results")).dir))


def scenario_name(cfg: DictConfig) -> str:
    """Display name of the scenario: the env config's name plus any fabric / topology / workload group."""
    name = str(cfg.env.get("name", cfg.env.id))
    for group, key in (("fabric", "preset"), ("topology", "kind"), ("workload", "name")):
        if cfg.get(group):
            name += f"+{group}={cfg[group].get(key, 'custom')}"
    return name


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
    from ecngym.results import episode_row, make_logger, measure_episode, row_id
    from ecngym.results.record import controller_identity, scenario_identity

    store = results_store(cfg)
    controller = make_controller(cfg, controller_cfg)
    env = _env_for(controller, cfg, console)
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
    logger = make_logger(_logger_config(cfg),
                         run_name="-".join(filter(None, [command, controller.name, _job_name()])), run_dir=out,
                         config=OmegaConf.to_container(cfg, resolve=True))
    rows: dict[int, dict[str, Any]] = {}
    logs: list[pd.DataFrame] = []
    try:
        for seed in todo:
            with console.status(f"{controller.name} on {cfg.env.id}: seed {seed}"):
                try:
                    episode = measure_episode(env, controller, seed)
                finally:  # the controller's per-step records, also those of an episode that failed
                    _save_controller_log(controller, seeds.index(seed), logs, out)
            metrics = episode.metrics()
            row = episode_row(store, command, controller.name, params, cfg.env.id, scenario_name(cfg), env_config,
                              env.unwrapped.scenario.trace.hash, seed, metrics, episode_return=episode.episode_return,
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


@hydra.main(version_base="1.3", config_path="configs", config_name="eval")
@_user_errors
def eval_main(cfg: DictConfig) -> float | None:
    """``ecngym eval``: run one controller on one scenario, store the episodes, print the summary."""
    console = Console(width=max(Console().width, 100))  # the summary table needs ~100 columns
    seed = check_whole("seed", cfg.seed, 0, MAX_SEED)
    episodes = check_whole("episodes", cfg.episodes, 1, min(MAX_EPISODES, MAX_SEED - seed + 1))
    out = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    check_outputs(cfg)
    if cfg.get("objective") is not None:  # (a misspelt name was refused only after every episode had run)
        check_metric_name("objective", cfg.objective, {"controller": cfg.controller})
    # the env evaluate ran is the one recorded: a second env built here only for its config was a
    # second scenario build (seconds on a large fabric) and, for a controller with env_overrides,
    # not the config the episodes ran with
    rows, env_config = evaluate(cfg, cfg.controller, list(range(seed, seed + episodes)), "eval", console, out)
    console.print(summary_table(rows, f"{rows[0]['controller']} on {cfg.env.id}"))
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
        table = Table(title=f"ecngym eval sweep: {len(set(df['job']))} jobs")
        columns = {"controller": "controller", "env": "env", "seed": "seed", "return": "return",
                   "slowdown_p50_all": "slowdown p50", "slowdown_p99_all": "slowdown p99",
                   "queue_mean_bytes": "queue mean B", "utilization": "utilization", "trace_hash": "trace hash"}
        for label in columns.values():
            table.add_column(label, justify="left" if label in ("controller", "env", "trace hash") else "right")
        for _, r in df.iterrows():
            table.add_row(*[f"{r[k]:.4g}" if isinstance(r[k], float) else str(r[k])[:12] if k == "trace_hash"
                            else str(r[k]) for k in columns])
        console = Console(width=max(Console().width, 140))
        console.print(table)
        same = all(g["trace_hash"].nunique() == 1 for _, g in df.groupby(["env", "seed"]))
        console.print("identical traces per (env, seed): " + ("yes" if same else "[red]NO[/]")
                      + f"; saved {sweep / 'comparison.csv'}")


@hydra.main(version_base="1.3", config_path="configs", config_name="train")
@_user_errors
def train_main(cfg: DictConfig) -> None:
    """``ecngym train``: train an SB3 algorithm (DQN / PPO) on an env and save the model."""
    from functools import partial

    from ecngym.agents import train
    from ecngym.agents.sb3 import check_hyperparams

    out = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)
    check_whole("seed", cfg.seed, 0, MAX_SEED)  # the run's row in the results store holds it
    check_outputs(cfg)  # before training, not when the finished run is recorded
    check_training_fields(cfg)
    check("progress_bar", cfg.progress_bar, Flag)  # ('maybe' and 1 were taken as true)
    if cfg.get("agent"):
        return _train_agent(cfg, out)
    if not OmegaConf.is_dict(cfg.hyperparams):
        raise ConfigError("hyperparams", f"got {plain(cfg.hyperparams)!r}, expected a mapping of the SB3 algorithm's "
                                         "keyword arguments (e.g. +hyperparams.n_steps=128)")
    hyper = check_hyperparams(cfg.algorithm, config_values(cfg.hyperparams))  # (recorded as SB3 gets them)
    probe = make_env(cfg)  # fails fast on a bad env config; records the resolved scenario (opens no fabric)
    env_config = probe.unwrapped.config.as_dict()
    probe.close()
    path = train(partial(make_env, cfg), cfg.algorithm, cfg.total_timesteps, cfg.seed, out,
                 n_envs=cfg.n_envs, hyperparams=hyper, progress_bar=bool(cfg.progress_bar),
                 checkpoint_every=cfg.get("checkpoint_every", 0), threads=cfg.get("threads"))
    params = {"algorithm": str(cfg.algorithm), "total_timesteps": int(cfg.total_timesteps), "n_envs": int(cfg.n_envs),
              "hyperparams": hyper}
    _finish_training(cfg, out, f"sb3_{cfg.algorithm}", params, path, env_config, training_curve(out / "monitor"),
                     f"evaluate: ecngym eval env={cfg.env.name} controller=sb3 controller.algorithm={cfg.algorithm} "
                     f"controller.path={path}")


#: Fields of ``ecngym train`` that one of its two modes does not read: the generic SB3 algorithm's
#: (without ``agent=``) and a learning agent's (with it; ``ray.address`` with ``framework=rllib`` only)
_GENERIC_TRAINING_FIELDS = ("algorithm", "n_envs", "hyperparams")
_AGENT_TRAINING_FIELDS = ("framework", "resume", "device", "ray.address")


def check_training_fields(cfg: DictConfig) -> None:
    """Refuse a field of ``ecngym train`` that the chosen mode would not read (it was ignored).

    ``resume=`` or ``device=cuda`` without ``agent=`` trained a fresh model on the CPU; ``hyperparams``,
    ``algorithm`` or ``n_envs`` with ``agent=`` trained the agent's own algorithm with its own
    ``agent.hyperparams``; ``ray.address`` without ``framework=rllib`` started no Ray. A field
    counts as given when it differs from ``configs/train.yaml``'s default.

    Raises:
        ConfigError: Naming the field, its value and the mode that reads it.
    """
    defaults = OmegaConf.load(CONFIG_DIR / "train.yaml")

    def given(fields: tuple[str, ...]) -> tuple[str, Any] | None:  # the first that is not the default
        values = ((f, plain(OmegaConf.select(cfg, f))) for f in fields)
        return next(((f, v) for f, v in values if v != plain(OmegaConf.select(defaults, f))), None)

    if cfg.get("agent"):
        unread = given(_GENERIC_TRAINING_FIELDS)
        if unread is not None:
            hint = "; set the agent's as agent.hyperparams.<key>" if unread[0] == "hyperparams" else ""
            raise ConfigError(unread[0], f"got {unread[1]!r}, but it applies to the generic SB3 training (without "
                                         f"agent=...); agent={cfg.agent.get('name')} trains its own algorithm{hint}")
        unread = given(("ray.address",)) if str(cfg.get("framework", "sb3")) != "rllib" else None
        if unread is not None:
            raise ConfigError("ray.address", f"got {unread[1]!r}, but only framework=rllib uses Ray")
        return
    unread = given(_AGENT_TRAINING_FIELDS)
    if unread is not None:
        raise ConfigError(unread[0], f"got {unread[1]!r}, but it applies to a learning agent's training "
                                     "(agent=acc|laecn|haecn); the generic SB3 training (algorithm=...) runs on the "
                                     "CPU, has no resume and no RLlib")


def _group_choice(group: str, default: Any) -> str:
    """The option of config group ``group`` the command line chose (``agent=laecn``: ``"laecn"``).

    ``default`` where Hydra is not running (a direct call) or chose none.
    """
    from hydra.core.hydra_config import HydraConfig

    choice = HydraConfig.get().runtime.choices.get(group) if HydraConfig.initialized() else None
    return str(choice if choice is not None else default)


def _train_agent(cfg: DictConfig, out: Path) -> None:
    """``ecngym train agent=acc|laecn|haecn [framework=sb3|rllib]``: train a learning agent, save the run."""
    from ecngym.agents import train_agent
    from ecngym.agents.common import agent_config

    raw = config_values(cfg.agent)
    agent = agent_config(_group_choice("agent", raw.get("name")), raw)  # validated: errors name agent.<field>
    probe = make_env(cfg)  # fails fast on a bad env config (opens no fabric)
    base_env = probe.unwrapped.config.as_dict()
    probe.close()
    framework = str(cfg.get("framework", "sb3"))
    path = train_agent(base_env, agent, out, framework=framework,
                       timesteps=cfg.total_timesteps, seed=cfg.seed, progress_bar=bool(cfg.progress_bar),
                       checkpoint_every=cfg.get("checkpoint_every", 0), resume=cfg.get("resume"),
                       threads=cfg.get("threads"), device=str(cfg.get("device", "cpu")),
                       ray_address=cfg.get("ray", {}).get("address"))
    curve = pd.read_csv(out / "curve.csv")
    curve.insert(0, "timesteps", curve["env_steps"])
    _finish_training(cfg, out, agent["name"], {**agent, "framework": framework,
                                                "total_timesteps": int(cfg.total_timesteps)}, path, base_env, curve,
                     f"learning curve: {out / 'curve.csv'}\nevaluate on held-out traces: ecngym eval "
                     f"env={cfg.env.name} controller={agent['name']} controller.path={out} seed=1000")


def training_curve(monitor_dir: Path) -> pd.DataFrame:
    """The learning curve of SB3's Monitor files: one row per finished episode, in finishing order.

    Returns:
        Columns ``timesteps`` (env steps so far, over all workers), ``episode_return``,
        ``episode_length`` and ``wall_s``.
    """
    frames = [pd.read_csv(f, skiprows=1) for f in sorted(monitor_dir.glob("*.monitor.csv"))]
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=["timesteps", "episode_return", "episode_length", "wall_s"])
    curve = pd.concat(frames).sort_values("t", kind="stable")
    return pd.DataFrame({"timesteps": curve["l"].cumsum().to_numpy(), "episode_return": curve["r"].to_numpy(),
                         "episode_length": curve["l"].to_numpy(), "wall_s": curve["t"].to_numpy()})


def _finish_training(cfg: DictConfig, out: Path, name: str, params: dict[str, Any], model: Path,
                     env_config: dict[str, Any], curve: pd.DataFrame, next_steps: str) -> None:
    """Record any finished training run, SB3 or agent, the same way.

    Writes ``train.json``, commits the results-store row with the learning curve and its summary
    (``timesteps`` asked for, ``curve_points``, ``reward_last10_mean`` over the trainer's reward
    column), logs the curve, and prints where the model is and what to run next.
    """
    from ecngym.results import curve_reward_column, episode_row, make_logger

    write_text_atomically(out / "train.json", json.dumps(
        {"version": __version__, "model": str(model), "seed": int(cfg.seed),
         "config": OmegaConf.to_container(cfg, resolve=True), "env_config": env_config}, indent=2, default=str))
    last10 = curve[curve_reward_column(curve)].tail(10)  # (a curve without points has its columns: NaN)
    metrics = {"timesteps": float(cfg.total_timesteps), "curve_points": float(len(curve)),
               "reward_last10_mean": float(last10.mean())}
    store = results_store(cfg)
    row = episode_row(store, "train", name, params, cfg.env.id, scenario_name(cfg), env_config,
                      "training: one trace per episode seed", int(cfg.seed), metrics, curve=curve,
                      artifacts_path=str(model))
    store.commit(row)
    store.ingest()
    with make_logger(_logger_config(cfg),
                     run_name=f"train-{name}-seed{cfg.seed}", run_dir=out,
                     config=OmegaConf.to_container(cfg, resolve=True)) as logger:
        logger.log_curve(curve)
        logger.log_metrics(metrics, step=int(cfg.total_timesteps), prefix="train_summary")
    Console().print(f"model: {model}\nresults: {store.root} (row {row['row_id'][:10]})\n{next_steps}")


# ---------------------------------------------------------------------- the benchmark
def _distinct_items(field: str, values: Any, example: str) -> list[Any]:
    """``values`` as a list, checked to be a non-empty list without repeats.

    A repeat would play the same episode again, under the same row id.

    Raises:
        ConfigError: On a non-list, an empty list or a repeated item, naming ``field``.
    """
    if not OmegaConf.is_list(values):
        raise ConfigError(field, f"got {values!r}; give a list, e.g. {field}={example}")
    items = list(values)
    if not items:
        raise ConfigError(field, "got an empty list; give at least one")
    repeated = sorted({str(v) for v in items if items.count(v) > 1})
    if repeated:
        raise ConfigError(field, f"{', '.join(repeated)} given more than once; give each once")
    return items


def benchmark_controllers(cfg: DictConfig) -> dict[str, DictConfig]:
    """The controller configs ``ecngym run`` evaluates, by name.

    ``controllers: all`` takes every config in ``configs/controller/`` that needs no training (no
    mandatory ``???`` field such as a model path); a list names them.

    Raises:
        ConfigError: On an unknown or repeated controller name, or an empty list.
    """
    directory = CONFIG_DIR / "controller"
    known = sorted(p.stem for p in directory.glob("*.yaml"))
    wanted = cfg.controllers
    if wanted == "all":
        chosen = {}
        for name in known:
            ccfg = OmegaConf.load(directory / f"{name}.yaml")
            if not any(OmegaConf.is_missing(ccfg, key) for key in ccfg):
                chosen[name] = ccfg
        return chosen
    if isinstance(wanted, str) or not OmegaConf.is_list(wanted):
        raise ConfigError("controllers", f"got {wanted!r}; give 'all' or a list of names from {known}")
    unknown = [n for n in _distinct_items("controllers", wanted, "[static_dcqcn,pred]") if n not in known]
    if unknown:
        raise ConfigError("controllers", f"unknown controller(s) {unknown}; known: {known}")
    return {str(n): OmegaConf.load(directory / f"{n}.yaml") for n in wanted}


def check_metric_name(field: str, score: Any, controllers: dict[str, DictConfig]) -> str:
    """A metric to rank or optimise by, checked before anything is simulated.

    ``run``'s ``leaderboard.score`` and ``eval``'s ``objective`` (a sweep's).

    Allowed: a metric every episode row stores (:func:`~ecngym.results.record.episode_metric_names`)
    or a count a chosen controller's class says it adds (its ``extra_metrics``, see
    :class:`~ecngym.baselines.controller.Controller`).

    Args:
        field: The option, named in the error.
        score: The metric name as configured.
        controllers: The chosen controller configs (:func:`benchmark_controllers`).

    Returns:
        The name.

    Raises:
        ConfigError: Naming ``field``, what was given and the allowed names.
    """
    from ecngym.baselines.registry import controller_class
    from ecngym.results.record import episode_metric_names

    name = check(field, score, Text)
    allowed = set(episode_metric_names())
    for ccfg in controllers.values():
        try:
            allowed.update(getattr(controller_class(ccfg), "extra_metrics", ()))
        except ConfigError:  # a bad _target_: evaluate() reports it, for that controller only
            continue
    if name not in allowed:
        raise ConfigError(field, f"got {score!r}, not a metric of these controllers' episodes; "
                                 f"known: {sorted(allowed)}")
    return name


@hydra.main(version_base="1.3", config_path="configs", config_name="run")
@_user_errors
def run_main(cfg: DictConfig) -> None:
    """``ecngym run``: the benchmark: a suite (:mod:`ecngym.benchmark.runner`), or with ``suite=null`` one scenario."""
    from ecngym.results.leaderboard import leaderboard_from_store

    out = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    if cfg.get("suite") is not None:
        from ecngym.benchmark.runner import suite_main

        return suite_main(cfg, out, Console())
    console = Console(width=max(Console().width, 130))  # the leaderboard needs ~130 columns
    seeds = [check_whole(f"seeds[{i}]", s, 0, MAX_SEED)
             for i, s in enumerate(_distinct_items("seeds", cfg.seeds, "[1,2,3]"))]
    controllers = benchmark_controllers(cfg)
    score = check_metric_name("leaderboard.score", cfg.leaderboard.score, controllers)  # before the run, not after
    html = check_output_path("leaderboard.html", cfg.leaderboard.html)
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
                                   scenario_hashes=[scenario_hash])
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
