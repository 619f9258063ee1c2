"""Generate ``reference/envs.md``: every registered env id with its spaces and its preset.

Run by mkdocs-gen-files at build time. Every ``ecngym/`` id of Gymnasium's registry is made
with ``gymnasium.make`` (no simulation runs) and its observation and action spaces described from
the space objects, so the page shows what the code registers, not what someone remembered to write.
"""

from __future__ import annotations

import gymnasium as gym
import mkdocs_gen_files
import yaml

import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.envs.registration import ENTRY_POINT

#: every ecngym id in Gymnasium's registry (however it was registered: the presets of
#: envs/registration.py or scenario files) -> the preset it was registered with
SCENARIOS = {env_id: spec.kwargs.get("config", {}) for env_id, spec in sorted(gym.registry.items())
             if env_id.startswith("ecngym/")}


def space_rows(space: gym.Space) -> str:
    """A space in one table cell: its kind, shape, dtype and the range of its bounds.

    (A Box's per-element bounds as their minimum and maximum, not the whole arrays.)
    """
    if isinstance(space, gym.spaces.Box):
        low, high = float(space.low.min()), float(space.high.max())
        uniform = bool((space.low == space.low.flat[0]).all() and (space.high == space.high.flat[0]).all())
        bounds = f"[{low:g}, {high:g}]" + ("" if uniform else " (per element, within)")
        return f"`Box` shape {space.shape}, {space.dtype}, bounds {bounds}"
    if isinstance(space, gym.spaces.Discrete):
        return f"`Discrete({space.n})`: {space.n} ECN templates"
    if isinstance(space, gym.spaces.MultiDiscrete):
        return f"`MultiDiscrete({space.nvec.tolist()})`: one template index per unit"
    return f"`{' '.join(repr(space).split())}`"


module, cls = ENTRY_POINT.split(":")
with mkdocs_gen_files.open("reference/envs.md", "w") as page:
    page.write("# Environments\n\n")
    page.write(f"Every env id registered by `import ecngym.envs`, made with `gymnasium.make(id)` when this page was "
               f"built. All share one class, [`{cls}`](api/envs.md#{module}.{cls}); an id is a preset of its "
               f"config ([`EnvConfig`](api/envs.md#ecngym.envs.config.EnvConfig), fields in "
               f"[Env config](env-config.md)): keywords of `gymnasium.make` merge into the preset key by key.\n\n")
    page.write("| id | observation space | action space |\n|---|---|---|\n")
    for env_id in SCENARIOS:
        env = gym.make(env_id)
        page.write(f"| `{env_id}` | {space_rows(env.observation_space)} | {space_rows(env.action_space)} |\n")
        env.close()
    for env_id, preset in SCENARIOS.items():
        page.write(f"\n## `{env_id}`\n\n")
        env = gym.make(env_id)
        page.write(f"- observation: {space_rows(env.observation_space)}\n")
        page.write(f"- action: {space_rows(env.action_space)}\n")
        env.close()
        text = yaml.safe_dump(preset, sort_keys=False, default_flow_style=None).strip() if preset else (
            "{}  # the EnvConfig defaults")
        page.write(f"\nIts preset (overrides of the `EnvConfig` defaults):\n\n```yaml\n{text}\n```\n\n")
        page.write(f"```python\nimport gymnasium as gym\nimport ecngym.envs  # registers the ids\n\n"
                   f"env = gym.make(\"{env_id}\")\nobs, info = env.reset(seed=0)\n```\n")
