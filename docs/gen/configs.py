"""Generate the config reference pages from the code that checks the configs.

Run by mkdocs-gen-files at build time. Nothing on these pages is written by hand:

* ``reference/agents.md``: each ``configs/agent/*.yaml`` against its typed model
  (its ``_kind_``'s config, :func:`ecngym.agents.registry.agent_kind`; pydantic
  :class:`~ecngym.validation.ConfigModel`): every
  field, what it accepts (the range its validator enforces, :func:`ecngym.validation.describe_field`)
  and the value the shipped file sets;
* ``reference/env-config.md``: the env's typed config (:class:`ecngym.envs.EnvConfig` and its nested
  models), fields, ranges and defaults;
* ``reference/fabric-config.md``: :class:`ecngym.sim_backend.config.FabricConfig`, whose simulator
  knobs (fields, ranges, defaults, descriptions) are read from the C++ attributes;
* ``reference/aqm-policies.md``: every port AQM policy's parameters with the ranges and defaults of
  the C++ attribute checkers (:func:`ecngym.sim_backend.aqm.policy_spec` reads them from the compiled
  fabric);
* ``reference/controllers.md``: each ``configs/controller/*.yaml``: its header comment, the class its
  ``_target_`` names with every keyword parameter (type, default, the docstring's description, which
  states the range the constructor checks), the values the file sets, and for AQM-policy
  controllers the policy's parameter table.
"""

from __future__ import annotations

import inspect
import re
from importlib.resources import files
from typing import Any

import griffe
import mkdocs_gen_files
import yaml
from omegaconf import OmegaConf
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from ecngym.agents.registry import KIND_KEY, agent_kind, load_agent_yaml
from ecngym.baselines.registry import controller_class
from ecngym.baselines.static import FORMULA_SETTINGS, STATIC_SETTINGS
from ecngym.envs.config import EnvConfig
from ecngym.sim_backend import FabricConfig, aqm
from ecngym.validation import describe_field

CONFIGS = files("ecngym.configs")


def cell(value: Any) -> str:
    """A value as one Markdown table cell (code, pipes escaped)."""
    if value is PydanticUndefined:
        return "(required)"
    text = yaml.safe_dump(value, default_flow_style=True, width=10**6).strip().removesuffix("...").strip()
    return f"`{text}`".replace("|", "\\|")


def words(text: str) -> str:
    """Docstring text as one table cell (reST double backticks to Markdown code, one line)."""
    # brackets escaped: "[OURS]" or "[agent.x=y]" would read as a cross-reference to mkdocs-autorefs
    text = " ".join(text.replace("``", "`").split())
    text = text.replace("|", "\\|").replace("[", "\\[").replace("]", "\\]")
    # a citation of a docs page ("docs: algorithms/pred.md") becomes a link (a missing page fails the build)
    return re.sub(r"\b(docs: )((?:algorithms|concepts)/[\w-]+\.md)", r"\1[\2](../\2)", text)


def header_comment(path: Any) -> str:
    """The leading ``#`` comment of a YAML file, as a paragraph."""
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return words(" ".join(lines))


def model_rows(model: type[BaseModel], values: dict[str, Any] | None, prefix: str = "",
               descriptions: bool = False) -> list[str]:
    """Table rows of a model's fields, nested models flattened to dotted names.

    Args:
        model: The config model.
        values: The values a shipped YAML file sets under this model (``None``: show defaults).
        prefix: The dotted name of the model's node.
        descriptions: Add a column with each field's description (a fabric knob's attribute help).
    """
    rows = []
    for name, info in model.model_fields.items():
        dotted = f"{prefix}{name}"
        kind = info.annotation
        nested = kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None
        given = (values or {}).get(name, PydanticUndefined) if values is not None else None
        default = info.default_factory() if info.default_factory is not None else info.default
        if nested is not None:
            sub = given if isinstance(given, dict) else None
            rows += model_rows(nested, sub if values is not None else None, dotted + ".", descriptions)
            continue
        if isinstance(default, BaseModel):
            default = default.model_dump()
        shown = cell(given) if values is not None else ""
        rows.append(f"| `{dotted}` | {words(describe_field(info))} | {cell(default)} |"
                    + (f" {shown} |" if values is not None else "")
                    + (f" {words(info.description or '')} |" if descriptions else ""))
    return rows


def docstring_params(obj: Any) -> dict[str, str]:
    """``Args:`` of an object's Google docstring: name -> description."""
    doc = inspect.getdoc(obj) or ""
    out = {}
    for section in griffe.Docstring(doc, parser="google").parse(warn_missing_types=False, warn_unknown_params=False):
        if section.kind.value == "parameters":
            out.update({p.name: words(p.description) for p in section.value})
    return out


def policy_table(policy: str) -> str:
    """A policy's parameters as the C++ checkers declare them."""
    rows = ["| parameter | kind | allowed | default | description |", "|---|---|---|---|---|"]
    for spec in aqm.policy_spec(policy).values():
        if spec.kind == "enum":
            allowed = ", ".join(f"`{c}`" for c in spec.choices)
        elif spec.kind == "bool":
            allowed = "true or false"
        else:
            unit = " B" if spec.name.endswith("_bytes") else " ns" if spec.name.endswith("_ns") else ""
            allowed = f"[{spec.low:g}, {spec.high:g}]{unit}"
        rows.append(f"| `{spec.name}` | {spec.kind} | {allowed} | {cell(spec.default)} | {words(spec.help)} |")
    return "\n".join(rows) + "\n"


def telemetry_table(policy: str) -> str:
    """The policy's telemetry (``PortAqmPolicy::DescribeTelemetry``): observation features of the same names."""
    specs = aqm.telemetry(policy)
    if not specs:
        return ""
    rows = ["Telemetry (`Fabric.read_telemetry()` keys, one value per port; observation features of the same "
            "name, mapped into [0, 1] by the normaliser):\n", "| key | unit | normaliser | meaning |",
            "|---|---|---|---|"]
    rows += [f"| `{t.name}` | {t.unit} | `{t.normaliser}` | {words(t.help)} |" for t in specs]
    return "\n".join(rows) + "\n\n"


# ------------------------------------------------------------------------------------------ agents
with mkdocs_gen_files.open("reference/agents.md", "w") as page:
    page.write("# Agent configs\n\n`ecngym train agent=<name>` reads `configs/agent/<name>.yaml`; the agent's typed "
               "model checks every field before any fabric or network exists (a bad value is an error naming "
               "`agent.<field>` and what is allowed). The *accepts* column is read from each field's validator; "
               "*shipped* is the value the file sets.\n\n")
    for path in sorted(CONFIGS.joinpath("agent").iterdir(), key=lambda p: p.name):
        if not path.name.endswith(".yaml"):
            continue
        name = path.name.removesuffix(".yaml")
        model = agent_kind(name).config
        values = {k: v for k, v in OmegaConf.to_container(load_agent_yaml(name)).items() if k != KIND_KEY}
        page.write(f"## `{name}`\n\n{header_comment(path)}\n\nModel: `{model.__module__}.{model.__name__}`; "
                   f"override a field with `ecngym train agent={name} agent.<field>=<value>`.\n\n")
        page.write("| field | accepts | default | shipped |\n|---|---|---|---|\n")
        page.write("\n".join(model_rows(model, values)) + "\n\n")
        env = values.get("env") or {}
        if env:
            page.write(f"Its `env` overrides (checked by [`EnvConfig`](env-config.md)):\n\n```yaml\n"
                       f"{yaml.safe_dump(env, sort_keys=False).strip()}\n```\n\n")

# ------------------------------------------------------------------------------------- env config
with mkdocs_gen_files.open("reference/env-config.md", "w") as page:
    page.write("# Env config\n\nThe fields of [`EnvConfig`](api/envs.md#ecngym.envs.config.EnvConfig), the "
               "typed config of every ecngym env (`gymnasium.make(id, **fields)`, or `env.kwargs.<field>=...` on "
               "the command line); nested models flattened to dotted names. *accepts* is read from each "
               "field's validator. Each [env id](envs.md) is a preset of these fields.\n\n")
    page.write("| field | accepts | default |\n|---|---|---|\n")
    page.write("\n".join(model_rows(EnvConfig, None)) + "\n")

# ----------------------------------------------------------------------------------- fabric config
with mkdocs_gen_files.open("reference/fabric-config.md", "w") as page:
    page.write("# Fabric config\n\nThe fields of [`FabricConfig`](api/sim_backend.md#ecngym.sim_backend.config), "
               "the `fabric` node of every config (`fabric.<field>=...`), nested sections flattened to dotted names. "
               "The congestion-control, NIC and buffer knobs are read from the C++ TypeId attributes that declare "
               "them ([where a knob lives](../concepts/fabric-and-models.md#where-a-knob-lives)): *accepts* is their "
               "checker's range, *default* their default in internal units (bytes, ns, bit/s; sizes, durations "
               "and rates also take human units), *description* their help text.\n\n")
    page.write("| field | accepts | default | description |\n|---|---|---|---|\n")
    page.write("\n".join(model_rows(FabricConfig, None, descriptions=True)) + "\n")

# ------------------------------------------------------------------------------------ AQM policies
with mkdocs_gen_files.open("reference/aqm-policies.md", "w") as page:
    page.write("# Port AQM policies\n\nThe per-packet policies of the fabric's switch ports "
               "([`ecngym.sim_backend.aqm`](api/sim_backend.md#ecngym.sim_backend.aqm)). Each parameter is a C++ "
               "TypeId attribute whose checker is the one home of its range; this table is read from the compiled "
               "fabric. Byte and time parameters (`*_bytes`, `*_ns`) also take human units (`\"65KB\"`, "
               "`\"80us\"`).\n\n")
    for policy, type_name in aqm.POLICIES.items():
        tuned = ", ".join(f"`{p}`" for p in aqm.ACTION_PARAMS.get(policy, ()))
        curve = aqm.marking_curve(policy)
        shows = (f" Its RED marking curve ({', '.join(f'`{p}`' for p in curve)}) is what the `kmin`, `kmax` and "
                 "`pmax` observation features show." if curve else "")
        page.write(f"## `{policy}`\n\nC++ type `{type_name}`; an env's action tunes {tuned} unless "
                   f"`env.action.params` names others.{shows}\n\n{policy_table(policy)}\n")
        page.write(telemetry_table(policy))

# ------------------------------------------------------------------------------------- controllers
with mkdocs_gen_files.open("reference/controllers.md", "w") as page:
    page.write("# Controller configs\n\n`ecngym eval controller=<name>` (and `ecngym run`) read "
               "`configs/controller/<name>.yaml`: a Hydra `_target_` class and its keyword arguments. Unknown keys "
               "are refused naming `controller.<key>`; each value is checked by the class's constructor (the "
               "range is in the parameter's description) or, for port AQM policies, by the C++ attribute "
               "checkers ([AQM policies](aqm-policies.md)).\n\n")
    page.write("Named static ECN settings (`setting:` of `StaticEcnController`), scaled with the port rate:\n\n")
    page.write("| setting | Kmin per Gbps | Kmax per Gbps | Pmax | source |\n|---|---|---|---|---|\n")
    for s in STATIC_SETTINGS.values():
        page.write(f"| `{s.name}` | {s.kmin_bytes_per_gbps:g} B | {s.kmax_bytes_per_gbps:g} B | {s.pmax:g} | "
                   f"{words(s.source)} |\n")
    page.write(f"\nComputed settings: {', '.join(f'`{n}`' for n in FORMULA_SETTINGS)} (see the class's "
               "`setting` parameter below).\n\n")
    for path in sorted(CONFIGS.joinpath("controller").iterdir(), key=lambda p: p.name):
        if not path.name.endswith(".yaml"):
            continue
        name = path.name.removesuffix(".yaml")
        values = yaml.safe_load(path.read_text()) or {}
        cls = controller_class(values)
        target = values["_target_"]
        page.write(f"## `{name}`\n\n{header_comment(path)}\n\nClass: `{target}`.\n\n")
        described = docstring_params(cls)
        page.write("| parameter | type | class default | this config | description |\n|---|---|---|---|---|\n")
        for pname, param in inspect.signature(cls).parameters.items():
            if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
                continue
            annotation = param.annotation if isinstance(param.annotation, str) else inspect.formatannotation(
                param.annotation)
            default = "(required)" if param.default is param.empty else cell(param.default)
            given = cell(values[pname]) if pname in values else ""
            page.write(f"| `{pname}` | `{words(annotation)}` | {default} | {given} | {described.get(pname, '')} |\n")
        policy = values.get("policy")
        if isinstance(policy, str):
            page.write(f"\nThe `{policy}` policy's parameters (`params:`), from the C++ checkers:\n\n"
                       f"{policy_table(policy)}")
        page.write("\n")
