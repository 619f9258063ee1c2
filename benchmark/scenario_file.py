"""A scenario file of the user's, anywhere on disk, as a suite of its own: ``scenario_file=PATH``.

The benchmark commands that run over a suite (``ecngym benchmark references``, ``headroom``,
``learners``, ``board``, ``rewards``; ``ecngym run benchmark.scenario_file=PATH``) share the
``scenario_file`` argument (:class:`ScenarioFileArgs`) and build the suite of that one scenario with
:func:`scenario_file_suite`. Its references go beside the file (``references/<name>.yaml`` in its
folder) or to a ``reference_dir`` / ``out`` the user gives, never into the package. A copy of a
shipped scenario keeps the shipped one's env id, so the shipped learners' checkpoints of that
scenario play it (each refusing an observation or action layout it did not train on).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import model_validator

from ecngym.benchmark.suite import (
    SCENARIO_DIR,
    Scenario,
    Suite,
    SuiteSpec,
    check_scenario_env,
    registered_scenario,
)
from ecngym.configs import CONFIG_DIR
from ecngym.error import ConfigError
from ecngym.validation import ConfigModel, Text, field_error
from ecngym.yaml_files import read_yaml

#: The folder beside a user's scenario file that its references go to by default.
OWN_REFERENCE_FOLDER = "references"
#: What a ``scenario_file`` must be (for messages).
SCENARIO_FILE = "a scenario file named <name>.yaml, in the format of configs/suite/scenarios/<name>.yaml"


class ScenarioFileArgs(ConfigModel):
    """The ``scenario_file`` argument the benchmark commands share (the base of their ``key=value`` models).

    ``scenario_file`` names a scenario file of the user's, anywhere on disk: the command runs on the
    suite of that one scenario (:func:`scenario_file_suite`). It takes the place of the command's
    ``suite``, ``scenario`` and ``scenario_dir`` (those it has), so it is refused together with any
    of them.

    Args:
        scenario_file: A scenario file of your own (``<folder>/<name>.yaml``, in the format of
            ``configs/suite/scenarios/<name>.yaml``); None: the command's own choice of scenarios.
    """

    scenario_file: Text | None = None

    @model_validator(mode="after")
    def _check_scenario_file(self) -> ScenarioFileArgs:
        if self.scenario_file is None:
            return self
        for other in ("suite", "scenario", "scenario_dir"):
            value = getattr(self, other, None)
            if value is not None:
                raise field_error("scenario_file", f"got {self.scenario_file!r} together with {other}={value!r}; "
                                                   "give one of them: a scenario file is a suite of its own (its "
                                                   "folder is its scenario folder)")
        return self


def scenario_file_suite(path: Any, field: str = "scenario_file", reference_dir: Path | str | None = None) -> Suite:
    """The suite of one scenario file of the user's: that scenario, every test seed and training seed of its file.

    The file may lie anywhere outside the package's ``configs`` (a shipped scenario is run by its
    name). Results, references and checkpoints are found by a scenario's name, so its name is its
    file's stem and is no shipped scenario's. Its ``id`` is an ecngym env id, and its env states
    every setting that id's preset makes (:func:`check_own_env`). The suite has the scenario's name
    and version; its references are ``references/<name>.yaml`` beside the file unless
    ``reference_dir`` says otherwise. Its learners are the shipped checkpoints of the shipped
    scenario registered under the same id (a copy of ``roce_storage_incast`` with other traffic
    plays that scenario's checkpoints; each refuses an observation or action layout it did not
    train on).

    Args:
        path: The scenario file.
        field: The argument that gave it, named in errors (``scenario_file``, ``benchmark.scenario_file``).
        reference_dir: The folder of its references files (default: ``references/`` beside the file).

    Returns:
        The suite.

    Raises:
        ConfigError: Naming ``field`` for a path that is no ``.yaml`` file, lies in the package's
            configs, or holds no YAML mapping; ``<field>.<key>`` for a bad field of the file (a
            ``name`` that is not its stem or is a shipped scenario's, an ``id`` that is no ecngym
            env id, an ``env`` that leaves out a setting of the id's preset or that the env refuses).
    """
    from ecngym.files import check_input_file

    file = check_input_file(field, path, SCENARIO_FILE)
    if file.suffix != ".yaml":
        raise ConfigError(field, f"got {str(path)!r}; expected {SCENARIO_FILE}")
    if file.resolve().is_relative_to(CONFIG_DIR.resolve()):
        raise ConfigError(field, f"got {str(path)!r}, a file of the package's configs: run a shipped scenario by its "
                                 f"name (scenario={file.stem}, suite=...), or copy the file to a folder of your own "
                                 "and give a name of your own to the copy")
    data = read_yaml(file, field)
    if not isinstance(data, dict):
        raise ConfigError(field, f"{file} holds {type(data).__name__}, not a mapping of a scenario's fields; expected "
                                 f"{SCENARIO_FILE}")
    scenario = Scenario.parse(data, field)
    if scenario.name != file.stem:
        raise ConfigError(f"{field}.name", f"got {scenario.name!r} in {file}; a scenario's name is its file's stem: "
                                           f"set name: {file.stem}, or rename the file {scenario.name}.yaml")
    if (SCENARIO_DIR / file.name).is_file():
        raise ConfigError(f"{field}.name", f"got {scenario.name!r}, the name of a shipped scenario: stored results, "
                                           "references and checkpoints are found by name and would be taken for the "
                                           "shipped one's; give yours a name of its own (its file's and its name: "
                                           f"field's), e.g. my_{scenario.name}")
    check_own_env(scenario, field)
    try:
        check_scenario_env(scenario)
    except ConfigError as exc:
        raise ConfigError(field + exc.field.removeprefix(f"scenarios.{scenario.name}"),
                          f"{exc.message} (in {file})") from None
    training = scenario.training
    shipped = registered_scenario(scenario.id)
    spec = SuiteSpec.parse({"name": scenario.name, "version": scenario.version,
                            "test_seeds": len(scenario.protocol.test_seeds), "scenarios": [scenario.name],
                            "training_seeds": len(training.seeds) if training is not None else 1,
                            "learners": shipped is not None}, field)
    references = Path(reference_dir) if reference_dir is not None else file.parent.absolute() / OWN_REFERENCE_FOLDER
    return Suite(spec, {scenario.name: scenario}, file.parent.absolute(), references, {scenario.name: shipped})


def check_own_env(scenario: Scenario, field: str = "scenario_file") -> None:
    """Refuse a user's scenario whose ``id`` is no ecngym env id, or whose env leaves out a setting of the id's preset.

    A scenario runs as ``gymnasium.make(id, **env)``: its ``env`` is merged, mapping by mapping
    (``topology`` whole), into the preset registered under ``id`` (a shipped scenario's ``env`` for
    a ``-v1`` id, :data:`ecngym.envs.registration.SCENARIOS`' for a ``-v0`` one). A key the file
    leaves out would keep the preset's value without the file saying so (a copied scenario whose
    ``phases`` were deleted would still switch phases): such a file is refused, naming the keys.

    Args:
        scenario: The scenario.
        field: The argument that gave its file, named in errors.

    Raises:
        ConfigError: Naming ``<field>.id`` for an id ecngym does not register (listing those it
            does), or ``<field>.env.<key>`` for the first key the preset sets that the env leaves out
            (its preset value and every such key named).
    """
    from ecngym.envs.registration import SCENARIOS, SUITE_SCENARIOS

    presets = {**SCENARIOS, **SUITE_SCENARIOS}
    if scenario.id not in presets:
        raise ConfigError(f"{field}.id", f"got {scenario.id!r}, not an ecngym env id: a scenario runs as a registered "
                                         "id, its env merged into that id's preset; keep the id of the shipped "
                                         f"scenario you copied, or give one of {sorted(presets)}")
    missing = _left_out(presets[scenario.id], scenario.env)
    if not missing:
        return
    shipped = registered_scenario(scenario.id)
    source = (f"the shipped scenario {shipped.name}'s env" if shipped is not None
              else f"the preset of {scenario.id} (ecngym.envs.registration.SCENARIOS)")
    key, value = missing[0]
    raise ConfigError(f"{field}.env.{key}", f"left out, so {source} sets it ({value!r}) without your file saying so "
                                            f"(a scenario's env is merged into the preset registered under its id "
                                            f"{scenario.id}); write {', '.join(k for k, _ in missing)} in your env "
                                            "with the values you want (e.g. phases: [] for no phases, "
                                            "incast: {degree: 0} for no incast)")


def _left_out(preset: dict[str, Any], env: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """(dotted key, preset value) of each key ``preset`` sets that ``env`` does not (``topology``: whole)."""
    out = []
    for key, value in preset.items():
        dotted = f"{prefix}{key}"
        if key not in env:
            out.append((dotted, value))
        elif isinstance(value, dict) and isinstance(env[key], dict) and dotted != "topology":
            out += _left_out(value, env[key], dotted + ".")
    return out
