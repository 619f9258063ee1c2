"""``ecngym benchmark headroom-map``: where adapting the marking setting can pay, over a parametric scenario family.

A family file (``configs/suite/families/<name>.yaml``, or a file of yours anywhere: ``family=PATH``)
names a base scenario (a suite scenario's name, or the path of a scenario file of yours relative to
the family file: its env and score), train seeds, a control window, optionally ``env`` overrides every
point shares, and one or two **axes**; each axis value is a label and the env overrides (and optionally
the score) it applies on top. For every
point of the axes' product and every seed, the window oracle (:mod:`ecngym.benchmark.oracle_window`)
is searched on branches of the running simulation; its first window scores every template held
throughout, so the point's ``static_tuned`` (the template with the best mean over the seeds) comes
with it at no extra cost. Per point:

* **headroom** = S_tuned - S_oracle_window per seed (paired), mean and 95% Student-t CI, and
  relative to S_tuned (a lower-is-better score; the other way round otherwise);
* **hindsight** = S_tuned - S_best_constant_of_that_seed: how much of the headroom a single
  setting chosen with hindsight already takes; the rest is what switching adds.

Everything runs on train seeds: the map chooses scenarios, and test seeds stay untouched for the
board. The page gives one table per axis pair (rows: first axis, columns: second), the cells the
relative headroom with its CI, and the family's ``notes`` (the mechanism of each region, written
after reading the map; the page says so). The last printed line is the points as JSON.
"""

from __future__ import annotations

import copy
import itertools
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ecngym.error import ConfigError
from ecngym.validation import ConfigModel, Text, Whole

#: The package's family files.
FAMILY_DIR = Path(__file__).resolve().parent.parent / "configs" / "suite" / "families"


def deep_merged(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``overrides`` merged mapping by mapping (lists and values replaced whole)."""
    out = copy.deepcopy(dict(base))
    for key, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merged(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_family(path_or_name: str) -> dict[str, Any]:
    """A family file, checked: base, seeds, window, beam, one or two axes of labelled values.

    Args:
        path_or_name: A file path, or the name of a file in :data:`FAMILY_DIR`.

    Returns:
        The family; a ``base`` that is a scenario file's path (``.yaml``) made relative to the
        working directory (it is written relative to the family file).

    Raises:
        ConfigError: Naming ``family`` (missing file) or ``family.<field>`` (a bad field).
    """
    from ecngym.benchmark.suite import read_yaml

    path = Path(path_or_name)
    if not path.suffix:
        path = FAMILY_DIR / f"{path_or_name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in FAMILY_DIR.glob("*.yaml"))
        raise ConfigError("family", f"got {path_or_name!r}: no family file {str(path)!r}; give the path of a family "
                                    f"file (the format of configs/suite/families/<name>.yaml) or one of {known}")
    doc = read_yaml(path, "family")
    if not isinstance(doc, dict):
        raise ConfigError("family", f"{path} holds no mapping")
    unknown = sorted(set(doc) - {"name", "description", "base", "seeds", "window", "beam", "env", "axes", "notes"})
    if unknown:
        raise ConfigError(f"family.{unknown[0]}", "unknown field; known: name, description, base, seeds, window, "
                                                  "beam, env, axes, notes")
    if not isinstance(doc.get("env", {}), dict):
        raise ConfigError("family.env", f"expected a mapping of env overrides for every point, got {doc['env']!r}")
    for key in ("name", "base", "seeds", "axes"):
        if key not in doc:
            raise ConfigError(f"family.{key}", "required field is missing")
    base = doc["base"]
    if not isinstance(base, str) or not base:
        raise ConfigError("family.base", f"got {base!r}; expected a scenario's name or a scenario file's path (.yaml)")
    if base.endswith(".yaml"):  # a scenario file of the user's, relative to the family file
        doc["base"] = str(path.parent / base)
    seeds = doc["seeds"]
    if (not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) and s >= 0 for s in seeds)
            or len(set(seeds)) != len(seeds)):
        raise ConfigError("family.seeds", f"got {seeds!r}; expected distinct whole numbers (train seeds)")
    axes = doc["axes"]
    if not isinstance(axes, list) or not 1 <= len(axes) <= 2:
        raise ConfigError("family.axes", f"expected a list of one or two axes, got {axes!r}")
    for i, axis in enumerate(axes):
        field = f"family.axes[{i}]"
        if not isinstance(axis, dict) or set(axis) != {"name", "values"} or not isinstance(axis["values"], list) \
                or not axis["values"]:
            raise ConfigError(field, "expected {name: ..., values: [{label: ..., env: {...}, score?: ...}, ...]}")
        labels = []
        for j, value in enumerate(axis["values"]):
            vf = f"{field}.values[{j}]"
            if not isinstance(value, dict) or "label" not in value or set(value) - {"label", "env", "score"}:
                raise ConfigError(vf, f"expected {{label, env, score?}}, got {value!r}")
            if not isinstance(value.get("env", {}), dict):
                raise ConfigError(f"{vf}.env", f"expected a mapping of env overrides, got {value['env']!r}")
            if "score" in value:
                from ecngym.benchmark.oracle_window import check_score

                check_score(value["score"], f"{vf}.score")
            labels.append(str(value["label"]))
        if len(set(labels)) != len(labels):
            raise ConfigError(f"{field}.values", f"labels repeat: {labels}")
    beam = doc.get("beam", 1)
    if not isinstance(beam, int) or beam < 1:
        raise ConfigError("family.beam", f"got {beam!r}; expected a beam width >= 1")
    return doc


def family_base(base: str, scenario_dir: str | None = None) -> dict[str, Any]:
    """A family's base scenario, as :func:`~ecngym.benchmark.references.read_scenario` reads it.

    Args:
        base: The family's ``base``: a scenario's name (a file of ``scenario_dir``), or a scenario
            file's path (``.yaml``: checked as a ``scenario_file``,
            :func:`~ecngym.benchmark.scenario_file.scenario_file_suite`).
        scenario_dir: The folder of scenario files (default: the package's).

    Raises:
        ConfigError: Naming ``scenario_dir`` when given with a base that is a file, ``family.base``
            (or ``family.base.<field>``) for a bad scenario file, ``scenarios.<name>`` for a bad named one.
    """
    from ecngym.benchmark.references import read_scenario

    if not base.endswith(".yaml"):
        return read_scenario(base, scenario_dir)
    if scenario_dir is not None:
        raise ConfigError("scenario_dir", f"got {scenario_dir!r}, but the family's base is a scenario file ({base}): "
                                          "its folder is its scenario folder; leave scenario_dir out")
    from ecngym.benchmark.scenario_file import scenario_file_suite

    suite = scenario_file_suite(base, "family.base")
    return read_scenario(next(iter(suite.scenarios)), suite.scenario_dir)


def point_env(family: Mapping[str, Any], base: Mapping[str, Any],
              values: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Any], str]:
    """The env and score of one point of a family: the base's, then the family's ``env``, then each axis value's.

    Args:
        family: The family (:func:`load_family`).
        base: Its base scenario (:func:`family_base`).
        values: One value per axis (``{label, env?, score?}``).

    Returns:
        The point's env overrides and its score metric.
    """
    env_cfg = deep_merged(base["env"], family.get("env", {}))
    score = base["protocol"]["score"]
    for v in values:
        env_cfg = deep_merged(env_cfg, v.get("env", {}))
        score = v.get("score", score)
    return env_cfg, score


def map_point(family: Mapping[str, Any], base: dict[str, Any], values: Sequence[dict[str, Any]],
              seeds: Sequence[int], window: str, beam: int, processes: int) -> dict[str, Any]:
    """Search the window oracle at one point of the map (:func:`point_env`) on every seed; its headroom figures."""
    from ecngym.benchmark.headroom import mean_ci
    from ecngym.benchmark.oracle import make_env
    from ecngym.benchmark.oracle_window import search_windows, window_steps_of

    env_cfg, score = point_env(family, base, values)
    lower = bool(base["protocol"].get("lower_is_better", True))
    sign = 1.0 if lower else -1.0
    windows, consts, cpu = [], [], 0.0
    flows = []
    for seed in seeds:
        env = make_env(env_cfg)
        try:
            steps = window_steps_of(env, window)
            r = search_windows(env, int(seed), steps, beam, score, lower, processes=processes)
        finally:
            env.close()
        windows.append(r.score)
        consts.append(r.constants)
        cpu += r.cpu_s
        flows.append(r.summary.get("flows_finished", float("nan")))
    actions = sorted(consts[0])
    mean_const = {a: float(np.mean([c[a] for c in consts])) for a in actions}
    tuned = min(actions, key=lambda a: sign * mean_const[a])
    s_tuned = np.array([c[tuned] for c in consts])
    s_window = np.array(windows)
    s_best = np.array([min(c.values(), key=lambda x: sign * x) for c in consts])
    head = mean_ci(sign * (s_tuned - s_window))
    hind = mean_ci(sign * (s_tuned - s_best))
    t = float(s_tuned.mean())
    return {"labels": [str(v["label"]) for v in values], "score": score, "seeds": list(seeds),
            "tuned_action": list(tuned), "S_tuned": t, "S_oracle_window": float(s_window.mean()),
            "S_best_constant": float(s_best.mean()),
            "headroom": head[0], "headroom_ci": [head[1], head[2]],
            "headroom_relative": head[0] / t, "headroom_relative_ci": [head[1] / t, head[2] / t],
            "hindsight": hind[0], "hindsight_ci": [hind[1], hind[2]],
            "flows_finished_min": float(np.min(flows)), "cpu_s": cpu,
            "constant_means": {str(list(a)): m for a, m in mean_const.items()}}


class HeadroomMapArgs(ConfigModel):
    """The arguments of ``ecngym benchmark headroom-map`` (``key=value``).

    Args:
        family: A family file's path, or a name in ``configs/suite/families``.
        seeds: Use only the family's first this many seeds (default: all).
        window: The control window (default: the family's, else 2ms).
        processes: Branches simulated at once.
        out: Also write the points as JSON there.
        markdown: Also write the page there.
        scenario_dir: The folder of the family's base scenario file (default: the package's; not
            for a base that is a scenario file's path).
    """

    family: Text
    seeds: Whole(1, 1000) | None = None
    window: Text | None = None
    processes: Whole(1, 1024) = 2
    out: Text | None = None
    markdown: Text | None = None
    scenario_dir: Text | None = None


def _cell(p: dict[str, Any]) -> str:
    lo, hi = p["headroom_relative_ci"]
    star = " *" if lo > 0 else ""
    return f"{100 * p['headroom_relative']:+.1f} % [{100 * lo:+.1f}, {100 * hi:+.1f}]{star}"


def add_maps(page: Any, family: dict[str, Any], points: list[dict[str, Any]]) -> None:
    """The map as a table (one axis: a column; two: rows x columns), then every point's figures."""
    from rich.markup import escape
    from rich.table import Table

    axes = family["axes"]
    labels = [[str(v["label"]) for v in a["values"]] for a in axes]
    by = {tuple(p["labels"]): p for p in points}
    table = Table(title=escape("relative headroom (oracle_window vs static_tuned), 95% CI; * = CI above 0"))
    if len(axes) == 1:
        table.add_column(escape(axes[0]["name"]))
        table.add_column("headroom")
        for a in labels[0]:
            table.add_row(escape(a), escape(_cell(by[(a,)])))
    else:
        table.add_column(escape(f"{axes[0]['name']} \\ {axes[1]['name']}"))
        for b in labels[1]:
            table.add_column(escape(b))
        for a in labels[0]:
            table.add_row(escape(a), *(escape(_cell(by[(a, b)])) for b in labels[1]))
    page.add(table)
    detail = Table(title="every point")
    for column in ("point", "score", "S_tuned (template)", "S_best_const", "S_oracle_window", "headroom [95% CI]",
                   "hindsight [95% CI]", "min flows", "CPU s"):
        detail.add_column(escape(column))
    for p in points:
        detail.add_row(*(escape(str(c)) for c in (
            " / ".join(p["labels"]), p["score"], f"{p['S_tuned']:.3f} ({p['tuned_action']})",
            f"{p['S_best_constant']:.3f}", f"{p['S_oracle_window']:.3f}",
            f"{p['headroom']:+.3f} [{p['headroom_ci'][0]:+.3f}, {p['headroom_ci'][1]:+.3f}]",
            f"{p['hindsight']:+.3f} [{p['hindsight_ci'][0]:+.3f}, {p['hindsight_ci'][1]:+.3f}]",
            f"{p['flows_finished_min']:.0f}", f"{p['cpu_s']:.0f}")))
    page.add(detail)
    n = sum(p["headroom_relative_ci"][0] > 0 for p in points)
    big = sum(p["headroom_relative"] >= 0.10 and p["headroom_relative_ci"][0] > 0 for p in points)
    page.add(f"{n} of {len(points)} points have a headroom whose 95% CI is above 0; {big} reach >= 10 % of S_tuned.")


def main(argv: Sequence[str] | None = None) -> int:
    """``ecngym benchmark headroom-map family=<file|name>``: search every point; print the map; last line JSON.

    Raises:
        ConfigError: On a bad argument or family file (naming the field).
    """
    from tqdm import tqdm

    from ecngym.cli import key_value_arguments
    from ecngym.envs.branch import without_tqdm_monitor
    from ecngym.files import check_output_path, write_atomically
    from ecngym.markdown_page import MarkdownPage, open_page

    argv = list(sys.argv[1:] if argv is None else argv)
    usage = ("ecngym benchmark headroom-map family=<file|name> [seeds=N] [window=2ms] [processes=2] "
             "[out=FILE.json] [markdown=FILE.md] [scenario_dir=DIR]")
    args = key_value_arguments(HeadroomMapArgs, argv, usage, __doc__)
    family = load_family(args.family)
    base = family_base(family["base"], args.scenario_dir)
    seeds = family["seeds"][:args.seeds]
    window = args.window or family.get("window", "2ms")
    out = check_output_path("out", args.out) if args.out else None
    intro = (__doc__.split("\n\n", 1)[1].split("\n\n")[0] + "\n\n"
             f"Family **{family['name']}**: {family.get('description', '')} Base scenario `{base['name']}`, "
             f"train seeds {seeds}, control window {window}, beam width {family.get('beam', 1)}.")
    title, prog = f"Headroom map: {family['name']}", "ecngym benchmark headroom-map"
    stamped = [a for a in argv if not a.startswith(("out=", "scenario_dir="))]  # (paths of the machine it ran on)
    page = (open_page(args.markdown, title, prog, stamped, intro, field="markdown")
            or MarkdownPage(title, [*prog.split(), *stamped], intro))
    without_tqdm_monitor()  # its monitor thread would make every branch (a fork) unsafe
    grid = list(itertools.product(*[a["values"] for a in family["axes"]]))
    points = []
    for values in tqdm(grid, desc=f"headroom map {family['name']}", unit="point", file=sys.stderr):
        points.append(map_point(family, base, values, seeds, window, int(family.get("beam", 1)), args.processes))
        if out is not None:  # written as each point finishes: a stopped map keeps what it measured
            write_atomically(out, lambda p: p.write_text(json.dumps(points, indent=1)), "out")
    add_maps(page, family, points)
    if family.get("notes"):
        page.heading("What the map shows (written after reading it)")
        page.add_markdown(str(family["notes"]))
    print(page.render())
    if args.markdown:
        page.write()
    print(json.dumps(points))
    return 0
