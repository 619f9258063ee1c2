"""RLlib: multi-agent PPO with one policy shared by every switch agent of the parallel env."""

from __future__ import annotations

from typing import Any

ENV_NAME = "ecngym_multi_agent"


def shared_policy_ppo(env_config: dict[str, Any], *, train_batch_size: int = 400, minibatch_size: int = 64,
                      num_epochs: int = 2, num_env_runners: int = 0, seed: int = 0) -> Any:
    """An RLlib ``PPOConfig`` on :class:`~ecngym.envs.multi_agent.EcnTuningParallelEnv`.

    Every agent maps to the policy ``"shared"`` (ACC-style parameter sharing). Env runners are
    separate processes when ``num_env_runners > 0`` (one fabric each).

    Args:
        env_config: :class:`~ecngym.envs.EnvConfig` fields, plus optionally ``scenario`` (a registered
            scenario to start from, e.g. ``"RoceLeafSpine-v0"``) and ``agent_granularity``.
        train_batch_size: Environment steps per training iteration.
        minibatch_size: SGD minibatch size.
        num_epochs: Passes over each batch.
        num_env_runners: Remote sampling workers (0 = sample in the driver).
        seed: RLlib's seed.

    Returns:
        The config; ``.build_algo()`` then ``.train()``.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.tune.registry import register_env

    from ecngym.envs.adapters import rllib_env_creator

    register_env(ENV_NAME, rllib_env_creator)
    return (PPOConfig()
            .environment(ENV_NAME, env_config=env_config)
            .env_runners(num_env_runners=num_env_runners)
            .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, *args, **kwargs: "shared")
            .training(train_batch_size=train_batch_size, minibatch_size=minibatch_size, num_epochs=num_epochs)
            .debugging(seed=seed))
