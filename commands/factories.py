"""What every experiment command builds from its config: the env, the controller, the results store.

Shared by ``ecngym run``, ``eval``, ``train`` (:mod:`ecngym.commands`) and the suite runner
(:mod:`ecngym.benchmark.runner`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import hydra.utils
from omegaconf import DictConfig, OmegaConf
from rich.console import Console

from ecngym.configs import CONFIG_DIR
from ecngym.error import ConfigError
from ecngym.validation import config_values


def make_controller(cfg: DictConfig, controller_cfg: DictConfig | None = None) -> Any:
    """Build the controller of ``controller_cfg`` (default ``cfg.controller``) from its ``_target_``.

    See :mod:`ecngym.baselines.registry`.

    Raises:
        ConfigError: On an unknown target or key, or a bad parameter (naming ``controller.<field>``).
    """
    from ecngym.baselines.registry import build_controller

    return build_controller(cfg.controller if controller_cfg is None else controller_cfg)


def with_scenario_file(cfg: DictConfig) -> DictConfig:
    """``cfg`` with its ``env`` taken from the scenario file ``cfg.scenario`` (a suite scenario's YAML, anywhere).

    The file's env id and env settings replace the ``env=`` choice (its ``env.kwargs`` included);
    ``fabric=`` / ``topology=`` / ``workload=`` groups still apply on top.

    Raises:
        ConfigError: Naming ``scenario`` for a path that is no file, or the file's bad field.
    """
    from ecngym.benchmark.suite import load_scenario
    from ecngym.files import check_input_file

    path = check_input_file("scenario", cfg.scenario, "a scenario file (configs/suite/scenarios/<name>.yaml format)")
    sc = load_scenario(path.stem, path.parent)
    cfg = cfg.copy()
    OmegaConf.set_struct(cfg, False)
    cfg.env = OmegaConf.create({"name": sc.name, "id": sc.id, "kwargs": dict(sc.env)})
    return cfg


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


def env_for(controller: Any, cfg: DictConfig, console: Console | None = None) -> Any:
    """The eval env, rebuilt with the controller's ``env_overrides`` when it needs any.

    (A static setting that is not one of the discrete templates joins them; a tuner that sets
    arbitrary thresholds asks for a continuous action space; a trained agent sets the state,
    reward and Δt it was trained with. Traces do not depend on any of them.) Each ``env.kwargs``
    key given on the command line that the controller's settings replace by another value is
    named on ``console``: it does not apply to this controller.
    """
    from ecngym.envs.for_controller import make_for_controller

    def make(extra: Mapping[str, Any]) -> Any:
        if not extra:
            return make_env(cfg)
        if console is not None:
            for key, given, used in _replaced_env_keys(cfg, extra):
                console.print(f"[yellow]note: {controller.name} sets env.{key.split('.')[0]} itself: "
                              f"env.kwargs.{key}={given!r} does not apply to it (it runs with {used})[/]")
        try:
            return make_env(cfg, dict(extra))
        except ConfigError as exc:  # the controller's own settings (a trained agent's: its agent.json's "env")
            from ecngym.agents.saved_run import AGENT_FILE

            trained = hasattr(controller, "run_dir")
            source = f"{controller.run_dir / AGENT_FILE}'s env" if trained else f"{controller.name}'s env_overrides"
            raise ConfigError("controller.path" if trained else "controller",
                              f"{source} gives a bad {exc.field}: {exc.message}") from None

    return make_for_controller(make, controller)


def _replaced_env_keys(cfg: DictConfig, extra: Mapping[str, Any]) -> list[tuple[str, Any, str]]:
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


def logger_config(cfg: DictConfig) -> dict[str, Any] | None:
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


def distinct_items(field: str, values: Any, example: str) -> list[Any]:
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
    mandatory ``???`` field such as a model path) and that ``controllers_not_in_all`` does not name
    (controllers too costly for the main job, run by name); a list names them.

    Raises:
        ConfigError: On an unknown or repeated controller name, or an empty list.
    """
    directory = CONFIG_DIR / "controller"
    known = sorted(p.stem for p in directory.glob("*.yaml"))
    wanted = cfg.controllers
    if wanted == "all":
        chosen = {}
        left_out = set(cfg.get("controllers_not_in_all") or [])
        unknown = sorted(left_out - set(known))
        if unknown:
            raise ConfigError("controllers_not_in_all", f"unknown controller(s) {unknown}; known: {known}")
        for name in (n for n in known if n not in left_out):
            ccfg = OmegaConf.load(directory / f"{name}.yaml")
            if not any(OmegaConf.is_missing(ccfg, key) for key in ccfg):
                chosen[name] = ccfg
        return chosen
    if isinstance(wanted, str) or not OmegaConf.is_list(wanted):
        raise ConfigError("controllers", f"got {wanted!r}; give 'all' or a list of names from {known}")
    unknown = [n for n in distinct_items("controllers", wanted, "[static_dcqcn,pred]") if n not in known]
    if unknown:
        raise ConfigError("controllers", f"unknown controller(s) {unknown}; known: {known}")
    return {str(n): OmegaConf.load(directory / f"{n}.yaml") for n in wanted}
