"""Which RL reward agrees with the benchmark's score: rank correlations over the stored episodes.

Every episode row stores its return under each reward the envs offer (``return_acc``,
``return_pred``, ``return_fct``: :class:`~ecngym.envs.reward.RewardReturns`, computed from the
episode's own telemetry with the env's reward functions). For each scenario of a suite, the
Spearman rank correlation between a reward's return and the scenario's score over its stored
episodes says whether maximising that reward would rank controllers as the score does. The score
is lower-is-better for slowdowns, so the correlation is taken with the score's *goodness*
(``-score`` for a lower-is-better score): +1 means the reward orders episodes exactly as the score.
"""
