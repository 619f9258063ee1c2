"""The scenario table of the docs (``docs/benchmarks/scenarios.md``), generated from the scenario files.

One row per scenario: paper, fabric, traffic and phases, simulated episode, flows per episode per
size bucket and wall time per episode (from its references file, measured by the references
command), train and test seeds, score and second axis, and each tuner's time to settle. Generated,
so it cannot drift from the YAML: ``ecngym benchmark scenarios [markdown=<path>]``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from ecngym.benchmark.references import SCENARIO_DIR, read_references, read_scenario, suite_scenarios
from ecngym.configs import CONFIG_DIR
from ecngym.error import ConfigError
from ecngym.validation import ConfigModel, Text

#: Default order: suite v2's full suite (which lists its core scenarios first), then suite v1's.
ORDER = (*suite_scenarios("full"), *suite_scenarios("full-v1"))


def _controller(name: str, overrides: dict[str, Any]) -> dict[str, Any]:
    cfg = yaml.safe_load((CONFIG_DIR / "controller" / f"{name}.yaml").read_text())
    return {**cfg, **overrides.get(name, {})}


def timing(name: str, scenario_dir: Path | str | None = None) -> dict[str, Any]:
    """A scenario's simulated timing: interval, steps, duration, base RTT and each tuner's time to settle (ns).

    ByteTuning's search: iterations per temperature x coolings (from 100 to 0.01) x (window_steps
    + settle_steps) steps; PRED's QLA: one A/B decision per 4 slots of T_QLA; DEMT: every step.
    """
    import math

    from ecngym.benchmark.oracle import make_env
    from ecngym.envs.view import EnvView
    from ecngym.units import parse_time_ns

    sc = read_scenario(scenario_dir=scenario_dir, name=name)
    env = make_env(sc["env"])
    try:
        view = EnvView(env)
        interval_ns, rtt_ns, steps = view.interval_ns, view.base_rtt_ns, view.episode_steps
    finally:
        env.close()
    over = sc.get("controllers") or {}
    bt = _controller("bytetuning", over)
    coolings = math.ceil(math.log(bt["final_temperature"] / bt["initial_temperature"]) / math.log(bt["cooling"]))
    bt_steps = int(bt["iterations"]) * coolings * (int(bt["window_steps"]) + int(bt["settle_steps"]))
    pred = _controller("pred", over)
    t_qla = pred["t_qla"]
    t_qla_ns = (float(str(t_qla)[:-3]) * rtt_ns if str(t_qla).endswith("rtt") else parse_time_ns(t_qla, "t_qla"))
    return {"interval_ns": interval_ns, "episode_steps": steps, "duration_ns": interval_ns * steps,
            "base_rtt_ns": rtt_ns, "bytetuning_steps": bt_steps, "bytetuning_ns": bt_steps * interval_ns,
            "pred_decision_ns": int(4 * t_qla_ns), "pred_decisions": int(interval_ns * steps // (4 * t_qla_ns)),
            "demt_ns": interval_ns}


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.4g} ms" if ns >= 1e6 else f"{ns / 1e3:.4g} µs"


def scenario_rows(names: Sequence[str] = ORDER, scenario_dir: Path | str | None = None,
                  reference_dir: Path | str | None = None) -> list[dict[str, str]]:
    """One row (column -> text) per scenario; measured columns say so when the references are missing."""
    rows = []
    for name in names:
        sc = read_scenario(name, scenario_dir)
        t = timing(name, scenario_dir)
        env, proto = sc["env"], sc["protocol"]
        topo, fabric = env.get("topology", {}), env.get("fabric", {})
        try:
            ref = read_references(name, reference_dir, scenario_dir)
            ep = ref["episode"]
            flows = f"{ep['flows_total_mean']:.0f} (finished, mean [min] per bucket: " + ", ".join(
                f"{b} {ep['finished_per_bucket_mean'][b]:.0f} [{ep['finished_per_bucket_min'][b]}]"
                for b in ep["finished_per_bucket_mean"]) + ")"
            wall = f"{ep['cpu_s_median']:.2f} s CPU (median; wall {ep['wall_s_median']:.2f} s under load)"
        except ConfigError:
            flows = wall = f"(run `ecngym benchmark references scenario={name}`)"
        phases = "; ".join(f"{p['name']} from {p['start']}" for p in proto.get("phases", []))
        rows.append({
            "scenario": f"`{name}` (`{sc['id']}`)", "paper": sc.get("paper", ""),
            "fabric": f"{topo.get('kind', 'incast_star')}, {fabric.get('preset', 'hpcc')}",
            "traffic and phases": f"{sc.get('description', '')} Phases: {phases}.",
            "episode": f"{_ms(t['duration_ns'])} = {t['episode_steps']} x {_ms(t['interval_ns'])}",
            "flows per episode": flows, "time per episode": wall,
            "seeds (train / test)": f"{proto['train_seeds']} / {proto['test_seeds']}",
            "score / second axis": f"{proto['score']} / {proto['second_axis']}",
            "tuners' time to settle": (f"ByteTuning search {_ms(t['bytetuning_ns'])} ({t['bytetuning_steps']} steps); "
                                       f"PRED QLA decision every {_ms(t['pred_decision_ns'])} "
                                       f"({t['pred_decisions']} per episode); DEMT every step "
                                       f"({_ms(t['demt_ns'])})"),
        })
    return rows


#: The command that writes the docs page (stamped on it).
COMMAND = ["ecngym", "benchmark", "scenarios", "markdown=docs/benchmarks/scenarios.md"]


def markdown(rows: list[dict[str, str]], command: Sequence[str] = COMMAND) -> str:
    """The scenario table page.

    Args:
        rows: :func:`scenario_rows`.
        command: The command as run (stamped on the page).

    Returns:
        The page's Markdown: a function of the scenario and references files only.
    """
    from rich.markup import escape
    from rich.table import Table

    from ecngym.markdown_page import MarkdownPage

    intro = ("Generated from `configs/suite/scenarios/*.yaml` (and the measured columns from "
             "`configs/suite/references/*.yaml`); do not edit by hand. "
             f"Suite v2's `core` (the main job): {', '.join(f'`{n}`' for n in suite_scenarios('core'))}; its "
             f"`full`: {len(suite_scenarios('full'))} scenarios. Suite v1, frozen: `core-v1` "
             f"({', '.join(f'`{n}`' for n in suite_scenarios('core-v1'))}) and `full-v1` "
             f"({len(suite_scenarios('full-v1'))}). The `-v0` ids "
             "(`ecngym/RoceIncast-v0`, ...) remain as the quick toy scenarios (100 steps, no phases).\n\n"
             "Flows per episode: mean over the `static_default` runs on the test seeds; per bucket the finished "
             "flows, mean and [min]. Time per episode: median CPU seconds of one episode (env build, run, flow "
             "records) over the references' grid runs, which approximates the wall time on one idle core; the "
             "wall time was measured on a shared 2-core machine under load. ByteTuning's search length counts "
             "the scenario's `controllers.bytetuning` override.")
    page = MarkdownPage("Benchmark suites v2 and v1: scenarios", list(command), intro, measured=False)
    table = Table()
    for column in rows[0]:
        table.add_column(escape(column))
    for r in rows:
        table.add_row(*(escape(v) for v in r.values()))
    page.add(table)
    return page.render()


class ScenarioDocsArgs(ConfigModel):
    """The arguments of ``ecngym benchmark scenarios`` (``key=value``).

    Args:
        markdown: Also write the page there (``docs/benchmarks/scenarios.md``).
    """

    markdown: Text | None = None


def main(argv: Sequence[str] | None = None) -> int:
    """``ecngym benchmark scenarios [markdown=<path>]``: print (and write) the scenario table.

    Raises:
        ConfigError: On a bad argument (naming it) or a path that cannot be written.
    """
    from ecngym.cli import key_value_arguments
    from ecngym.files import write_text_atomically
    from ecngym.markdown_page import check_markdown_path

    argv = list(sys.argv[1:] if argv is None else argv)
    args = key_value_arguments(ScenarioDocsArgs, argv, "ecngym benchmark scenarios [markdown=<path>]", __doc__)
    path = check_markdown_path(args.markdown, "markdown")
    names = [n for n in ORDER if (SCENARIO_DIR / f"{n}.yaml").is_file()]
    page = markdown(scenario_rows(names), ["ecngym", "benchmark", "scenarios", *argv])
    print(page)
    if path is not None:
        write_text_atomically(path, page, field="markdown")
    return 0
