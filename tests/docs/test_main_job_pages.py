"""The pages that say what the main job runs (`make demo`, `ecngym run`) say what it runs.

The facts come from where the run takes them: ``configs/run.yaml`` (the default suite and
controllers), the suite files, the controller configs, the shipped checkpoints and the env registry,
and the jobs from :func:`ecngym.benchmark.runner.plan_jobs`, as ``ecngym run`` plans them.
"""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym
import pytest
from omegaconf import OmegaConf

import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.benchmark.runner import BenchmarkOptions, plan_jobs
from ecngym.benchmark.scoring import REFERENCES
from ecngym.benchmark.suite import load_suite
from ecngym.commands.factories import CONFIG_DIR, benchmark_controllers

REPO = Path(__file__).resolve().parents[2]
NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}


def _number(word: str) -> int:
    return int(word) if word.isdigit() else NUMBERS[word.lower()]


def _count(text: str, pattern: str, page: str) -> int:
    """The number (a digit string or a word) that ``pattern``'s group ``n`` matches in ``text``."""
    match = re.search(pattern, text)
    assert match, f"{page} no longer says /{pattern}/; update this test with the page"
    return _number(match["n"])


def _main_job() -> tuple[object, list]:
    """The default suite of ``ecngym run`` and its jobs, planned as the command plans them."""
    run = OmegaConf.load(CONFIG_DIR / "run.yaml")
    (suite_name,) = [d["suite"] for d in run.defaults if "suite" in d]
    suite = load_suite(suite_name)
    jobs = plan_jobs(suite, benchmark_controllers(run), Path("store"), Path("out"), True, BenchmarkOptions(),
                     learners=suite.spec.learners and run.controllers == "all")
    return suite, jobs


@pytest.fixture(scope="module")
def main_job() -> tuple[object, list]:
    return _main_job()


def _getting_started_run_section() -> str:
    text = (REPO / "docs" / "getting-started.md").read_text(encoding="utf-8")
    start, end = text.index("`make demo` is `make install`"), text.index("Each episode becomes a row")
    return text[start:end]


def test_getting_started_lists_the_scenarios_and_seeds_the_main_job_runs(main_job) -> None:
    suite, jobs = main_job
    text, page = _getting_started_run_section(), "docs/getting-started.md"
    assert _count(text, r"\*\*(?P<n>\w+) v2 scenarios\*\*", page) == len(suite.scenarios)
    missing = [name for name in suite.scenarios if f"`{name}`" not in text]
    assert not missing, f"{page} does not name the main job's scenario(s) {missing}"
    assert {len(job.seeds) for job in jobs} == {_count(text, r"first (?P<n>\w+) test traces", page)}


def test_getting_started_counts_the_controllers_learners_and_references_the_main_job_runs(main_job) -> None:
    _, jobs = main_job
    text, page = _getting_started_run_section(), "docs/getting-started.md"
    learners = {j.controller: j.controller_cfg["path"] for j in jobs
                if not j.reference and "CheckpointController" in str(j.controller_cfg.get("_target_", ""))}
    untrained = {j.controller for j in jobs if not j.reference and j.controller not in learners}
    references = {j.controller for j in jobs if j.reference}
    assert _count(text, r"\*\*(?P<n>\w+) controllers that need no training\*\*", page) == len(untrained)
    # (the optional static_tuned_per_role plays where a scenario's references file holds one)
    assert _count(text, r"\*\*the (?P<n>\w+) references\*\*", page) == len(references)
    assert references <= set(REFERENCES)
    assert not [r for r in references if f"`{r}`" not in text], f"{page} does not name every reference"
    assert not [a for a in learners if f"`{a}`" not in text], f"{page} does not name every shipped learner"
    named = set(re.findall(r"`(\w+)`", text.split("**the shipped learners**")[1].split("**the")[0]))
    assert named == set(learners), f"{page} names learners {sorted(named)}; the main job runs {sorted(learners)}"
    seeds = {Path(path).name for path in learners.values()}
    training_seed = _count(text, r"training seed (?P<n>\w+)", page)
    assert seeds == {f"seed{training_seed}"}, f"{page} says training seed {training_seed}; the main job plays {seeds}"


def test_the_home_page_names_every_registered_env_and_counts_the_suites(main_job) -> None:
    suite, _ = main_job
    full, page = load_suite("full"), "docs/index.md"
    text = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    box = text[text.index("## What is in the box"):text.index("## Where to go")]
    named = set(re.findall(r"`(?:ecngym/)?([A-Z]\w+-v\d+)`", box))
    registered = {env_id.split("/", 1)[1] for env_id in gym.registry if env_id.startswith("ecngym/")}
    assert named == registered, (f"{page} names envs {sorted(named - registered)} that are not registered and "
                                 f"leaves out {sorted(registered - named)}")
    assert _count(box, r"suite v2: (?P<n>\w+) scenarios", page) == len(full.scenarios)
    assert {s.id.split("/", 1)[1] for s in full.scenarios.values()} == {n for n in named if n.endswith("-v2")}
    assert _count(box, r"runs (?P<n>\w+) of them", page) == len(suite.scenarios)
    assert _count(box, r"`suite=full` all (?P<n>\w+)", page) == len(full.scenarios)
    v1 = load_suite("full-v1")
    assert _count(box, r"Suite v1, frozen: (?P<n>\w+) scenarios", page) == len(v1.scenarios)
    assert {s.id.split("/", 1)[1] for s in v1.scenarios.values()} == {n for n in named if n.endswith("-v1")}
    assert _count(box, r"(?P<n>\w+) quick toy envs", page) == len({n for n in named if n.endswith("-v0")})


def test_the_readme_counts_the_main_job_scenarios(main_job) -> None:
    suite, _ = main_job
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert _count(text, r"\(`ecngym run suite=core`\): (?P<n>\w+) v2 scenarios", "README.md") == len(suite.scenarios)
