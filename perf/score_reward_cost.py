"""CPU cost of the ``score_dense`` reward's per-step flow term, beside the whole env step.

``python -m ecngym.perf.score_reward_cost [env ids ...]`` (default: ``RoceStorageIncast-v1`` and
``DctcpLargeIncast-v1``, the suite scenario with the most flows) plays one full episode of each with
``reward=score_dense`` and the static-default action, and prints the process CPU time per step of
:meth:`ScoreDenseReward.step <ecngym.envs.score_reward.ScoreDenseReward.step>` (the C++
``FlowSlowdownTracker`` update and its Python call) and of the whole ``env.step``. CPU time, not wall
time: the figure holds on a shared machine.
"""

from __future__ import annotations

import sys
import time

DEFAULT_ENVS = ("ecngym/RoceStorageIncast-v1", "ecngym/DctcpLargeIncast-v1")


def measure(env_id: str, seed: int = 101) -> dict[str, float]:
    """One episode of ``env_id`` under score_dense: steps, flows, CPU µs per step of the flow term and of the step."""
    import gymnasium as gym

    import ecngym.envs  # noqa: F401
    from ecngym.envs.score_reward import ScoreDenseReward

    spent = [0.0]
    original = ScoreDenseReward.step

    def timed(self: ScoreDenseReward, last: bool) -> float:
        start = time.process_time()
        reward = original(self, last)
        spent[0] += time.process_time() - start
        return reward

    env = gym.make(env_id, reward={"name": "score_dense"})
    ScoreDenseReward.step = timed
    try:
        env.reset(seed=seed)
        action = env.unwrapped.static_action()
        steps, done, info, cpu0 = 0, False, {}, time.process_time()
        while not done:
            _, _, _, done, info = env.step(action)
            steps += 1
        cpu = time.process_time() - cpu0
    finally:
        ScoreDenseReward.step = original
        env.close()
    return {"steps": steps, "flows": int(info["summary"]["flows_total"]), "term_us": 1e6 * spent[0] / steps,
            "step_us": 1e6 * cpu / steps}


def main(argv: list[str] | None = None) -> int:
    """Print one line per env id."""
    for env_id in (argv if argv is not None else sys.argv[1:]) or DEFAULT_ENVS:
        m = measure(env_id)
        print(f"{env_id}: {m['steps']} steps, {m['flows']} flows; score_dense term {m['term_us']:.1f} us CPU per "
              f"step, {100 * m['term_us'] / m['step_us']:.1f} % of the env step ({m['step_us']:.0f} us CPU)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
