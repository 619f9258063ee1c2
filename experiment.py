"""``ecngym run``: the main job on a small default scenario.

It replays one trace on one fabric once per static ECN setting and prints the FCT-slowdown
comparison; identical traffic for every setting, so the differences come from ECN alone. The
resolved config (``run.json``), each setting's per-flow records (``flows_<setting>.parquet``) and
the summary (``summary.csv``) land in the Hydra run directory; both are written as each setting
finishes, so a failure in a later simulation keeps the results of the earlier ones.
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
import numpy as np
import pandas as pd
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException
from rich.console import Console
from rich.table import Table

from ecngym import __version__
from ecngym.error import ConfigError, EcnGymError, check_whole
from ecngym.files import write_atomically, write_text_atomically
from ecngym.sim_backend import Fabric, FabricConfig, Topology, slowdown_table
from ecngym.sim_backend.data import hpcc_reference_path
from ecngym.sim_backend.flows import as_flow_table, read_hpcc_flow_file


def load_trace(spec: str) -> tuple[Any, str]:
    """Return (flow table or Trace, description) for the ``trace`` config field."""
    if spec == "hpcc_reference":
        flows = read_hpcc_flow_file(hpcc_reference_path("flow_ws50_16h_100g_10ms.txt"))
        flows["start_ns"] -= flows["start_ns"].min()  # the file starts at t = 2 s
        return flows, "HPCC reference WebSearch 50% (605 flows)"
    if not Path(spec).is_file():
        raise ConfigError("trace", f"no such file {spec!r}; give 'hpcc_reference', a Parquet trace "
                                   "('ecngym trace generate') or an HPCC flow file")
    return spec, spec


def _ecn_setting(fabric_cfg: FabricConfig, name: str, ecn: dict[str, Any], seed: int) -> FabricConfig:
    """The fabric config of one named ECN setting, validated; errors name ``ecn_settings.<name>.<field>``."""
    try:
        setting = fabric_cfg.updated({"ecn": ecn, "seed": seed})
        setting.to_cpp()
    except ConfigError as exc:
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
        ConfigError: On a bad fabric, topology, trace or ECN setting (naming the field).
    """
    fabric_cfg = FabricConfig.from_dict(OmegaConf.to_container(cfg.fabric, resolve=True))
    topo = Topology.from_config(OmegaConf.to_container(cfg.topology, resolve=True))
    ecn_settings = cfg.get("ecn_settings")  # None once deleted with ~ecn_settings
    if not ecn_settings:
        raise ConfigError("ecn_settings", "got no setting; give at least one name: {kmin, kmax, pmax}")
    settings = {}
    for name, ecn in ecn_settings.items():
        if not isinstance(ecn, Mapping):
            raise ConfigError(f"ecn_settings.{name}", f"got {ecn!r}, expected a mapping {{kmin, kmax, pmax}}")
        settings[str(name)] = _ecn_setting(fabric_cfg, str(name), dict(ecn), int(cfg.seed))
    flows, description = load_trace(str(cfg.trace))
    flows = as_flow_table(flows, num_hosts=topo.num_hosts)  # read and checked once, before any run
    if flows.empty:
        raise ConfigError("trace", f"{description} has no flows: nothing to compare")
    console.print(f"[bold]ecngym {__version__}[/] · {topo.name} · {description} · fabric preset "
                  f"{cfg.fabric.get('preset', 'custom')}")
    rows = []
    for name, setting in settings.items():
        start = time.perf_counter()
        with console.status(f"simulating {name} ..."), Fabric(topo, flows, setting) as fab:
            all_done = fab.run(cfg.limit)
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


def _user_errors(task: Callable[[DictConfig], None]) -> Callable[[DictConfig], None]:
    """Report bad input (an :class:`~ecngym.error.EcnGymError`) in one line and exit with status 2.

    Hydra would otherwise print the traceback of any exception and exit with status 1.
    """

    @functools.wraps(task)
    def wrapper(cfg: DictConfig) -> None:
        try:
            task(cfg)
        except (EcnGymError, OmegaConfBaseException) as exc:
            if os.environ.get("HYDRA_FULL_ERROR") == "1":  # --debug
                traceback.print_exc()
            if isinstance(exc, OmegaConfBaseException):  # e.g. a mandatory value left at ??? (controller.path)
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                exc = ConfigError(getattr(exc, "full_key", None) or "config", first)
            print(f"ecngym {task.__name__.removesuffix('_main')}: error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None

    return wrapper


@hydra.main(version_base="1.3", config_path="configs", config_name="run")
@_user_errors
def run_main(cfg: DictConfig) -> None:
    """Entry point of ``ecngym run`` (Hydra overrides accepted, e.g. ``topology=leaf_spine``)."""
    console = Console(width=max(Console().width, 100))  # the comparison table needs ~100 columns
    out = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)
    summary = compare_static_settings(cfg, console, out)
    print_summary(summary, console)
    write_text_atomically(out / "run.json", json.dumps(
        {"version": __version__, "config": OmegaConf.to_container(cfg, resolve=True),
         "summary": summary.to_dict(orient="records")}, indent=2, default=str))
    console.print(f"results: {out}")


# ---------------------------------------------------------------------- eval / train
def make_controller(cfg: DictConfig) -> Any:
    """Build the controller of ``cfg.controller`` (its ``_target_``; see :mod:`ecngym.baselines.registry`).

    Raises:
        ConfigError: On an unknown target or key, or a bad parameter (naming ``controller.<field>``).
    """
    from ecngym.baselines.registry import build_controller

    return build_controller(cfg.controller)


def env_kwargs(cfg: DictConfig) -> dict[str, Any]:
    """EcnTuningEnv overrides: ``env.kwargs`` plus any chosen fabric / topology / workload group.

    ``ecngym eval fabric=dcqcn_paper topology=leaf_spine workload=datamining`` replaces those parts
    of the env's scenario by the group's config.
    """
    kwargs = OmegaConf.to_container(cfg.env.kwargs, resolve=True) if cfg.env.get("kwargs") else {}
    if cfg.get("fabric"):
        kwargs["fabric"] = OmegaConf.to_container(cfg.fabric, resolve=True)
    if cfg.get("topology"):
        kwargs["topology"] = OmegaConf.to_container(cfg.topology, resolve=True)
    if cfg.get("workload"):
        workload = OmegaConf.to_container(cfg.workload, resolve=True)
        kwargs["workload"] = {**kwargs.get("workload", {}), "workload": workload.pop("name"), **workload}
    return kwargs


def make_env(cfg: DictConfig, extra: dict[str, Any] | None = None) -> Any:
    """``gymnasium.make`` the configured env id with its keyword overrides."""
    import gymnasium as gym

    import ecngym.envs  # noqa: F401  (registers the ids)

    return gym.make(cfg.env.id, **{**env_kwargs(cfg), **(extra or {})})


def _env_for(controller: Any, cfg: DictConfig) -> Any:
    """The eval env, rebuilt with the controller's ``env_overrides`` when it needs any.

    (A static setting that is not one of the discrete templates joins them; a tuner that sets
    arbitrary thresholds asks for a continuous action space. Traces do not depend on either.)
    """
    env = make_env(cfg)
    wants = getattr(controller, "env_overrides", None)
    extra = wants(env) if wants is not None else {}
    if not extra:
        return env
    env.close()
    return make_env(cfg, extra)


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
            mean = {k: float(np.nanmean([r[k] for r in rows])) for k in numeric or []}
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
        keys = ["decisions_per_sim_s", "forward_passes_per_sim_s", "act_wall_s_per_sim_s"]
        add("per sim s: decisions/forward/wall s", lambda r: "/".join(fmt(r[k]) for k in keys), keys)
    add("seed/trace hash", lambda r: f"{r['seed']}/{str(r['trace_hash'])[:12]}")
    return table


def _save_controller_log(controller: Any, episode: int, logs: list[pd.DataFrame], out: Path) -> None:
    """Append the controller's ``log`` of one episode to ``controller_log.csv`` (rewritten whole)."""
    log = getattr(controller, "log", None)
    if not log:
        return
    logs.append(pd.DataFrame(log).assign(episode=episode))
    pd.concat(logs, ignore_index=True).to_csv(out / "controller_log.csv", index=False)


@hydra.main(version_base="1.3", config_path="configs", config_name="eval")
@_user_errors
def eval_main(cfg: DictConfig) -> None:
    """``ecngym eval``: run one controller on one scenario and print the summary."""
    console = Console(width=max(Console().width, 100))  # the summary table needs ~100 columns
    episodes, seed = check_whole("episodes", cfg.episodes, 1), check_whole("seed", cfg.seed, 0)
    controller = make_controller(cfg)
    env = _env_for(controller, cfg)
    out = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)
    rows: list[dict[str, Any]] = []
    logs: list[pd.DataFrame] = []
    try:
        for episode in range(episodes):
            with console.status(f"{controller.name} on {cfg.env.id}: episode {episode + 1}/{episodes}"):
                from ecngym.envs.rollout import run_episode

                try:
                    summary, _, ret = run_episode(env, controller, seed=seed + episode)
                finally:  # the controller's per-step records, also those of an episode that failed
                    _save_controller_log(controller, episode, logs, out)
            rows.append({"controller": controller.name, "env": cfg.env.id, "episode": episode,
                         "seed": seed + episode, "return": ret, **summary})
            if hasattr(controller, "trained_traces"):  # checked before the first action: held out
                rows[-1]["held_out"] = summary["trace_hash"] not in controller.trained_traces
            # rewritten after every episode, atomically: a later failure or a kill keeps these
            write_atomically(out / "eval.csv", lambda tmp: pd.DataFrame(rows).to_csv(tmp, index=False))
    finally:
        env.close()
    console.print(summary_table(rows, f"{controller.name} on {cfg.env.id}"))
    record = {"version": __version__, "config": OmegaConf.to_container(cfg, resolve=True),
              "env_config": env.unwrapped.config.as_dict(),  # the resolved scenario (preset + overrides)
              "episodes": rows}
    write_text_atomically(out / "eval.json", json.dumps(record, indent=2, default=str))
    console.print(f"results: {out}")


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

    out = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)
    if cfg.get("agent"):
        return _train_agent(cfg, out)
    hyper = OmegaConf.to_container(cfg.hyperparams, resolve=True) if cfg.get("hyperparams") else {}
    probe = make_env(cfg)  # fails fast on a bad env config; records the resolved scenario (opens no fabric)
    env_config = probe.unwrapped.config.as_dict()
    probe.close()
    path = train(partial(make_env, cfg), cfg.algorithm, cfg.total_timesteps, cfg.seed, out,
                 n_envs=cfg.n_envs, hyperparams=hyper, progress_bar=bool(cfg.progress_bar),
                 checkpoint_every=cfg.get("checkpoint_every", 0), threads=cfg.get("threads"))
    write_text_atomically(out / "train.json", json.dumps(
        {"version": __version__, "model": str(path), "seed": int(cfg.seed),
         "config": OmegaConf.to_container(cfg, resolve=True), "env_config": env_config}, indent=2, default=str))
    Console().print(f"model: {path}\nevaluate: ecngym eval env={cfg.env.name} controller=sb3 "
                    f"controller.algorithm={cfg.algorithm} controller.path={path}")


def _train_agent(cfg: DictConfig, out: Path) -> None:
    """``ecngym train agent=acc|laecn|haecn [framework=sb3|rllib]``: train a learning agent, save the run."""
    from ecngym.agents import train_agent
    from ecngym.agents.common import agent_config

    raw = OmegaConf.to_container(cfg.agent, resolve=True)
    agent = agent_config(str(raw.get("name")), raw)  # validated: errors name agent.<field>
    probe = make_env(cfg)  # fails fast on a bad env config (opens no fabric)
    base_env = probe.unwrapped.config.as_dict()
    probe.close()
    path = train_agent(base_env, agent, out, framework=str(cfg.get("framework", "sb3")),
                       timesteps=cfg.total_timesteps, seed=cfg.seed, progress_bar=bool(cfg.progress_bar),
                       checkpoint_every=cfg.get("checkpoint_every", 0), resume=cfg.get("resume"),
                       threads=cfg.get("threads"), device=str(cfg.get("device", "cpu")),
                       ray_address=cfg.get("ray", {}).get("address"))
    write_text_atomically(out / "train.json", json.dumps(
        {"version": __version__, "model": str(path), "seed": int(cfg.seed),
         "config": OmegaConf.to_container(cfg, resolve=True), "env_config": base_env}, indent=2, default=str))
    Console().print(f"model: {path}\nlearning curve: {out / 'curve.csv'}\nevaluate on held-out traces: "
                    f"ecngym eval env={cfg.env.name} controller={agent['name']} controller.path={out} seed=1000")
