"""SB3's MLP policies with leaner per-step paths: same networks, same weights, same actions.

``ecngym train`` steps one env per SB3 step, and on ``RoceIncast-v0`` an env step takes about
0.4 - 0.5 ms, so SB3's per-step Python around a batch-1 forward pass weighs as much as the
simulation (``ecngym bench train`` splits a training step's time). Two of those costs are
bookkeeping that these subclasses skip; everything else is SB3's own code:

* :class:`LeanActorCriticPolicy` (PPO): the rollout's ``forward`` on a ``Discrete`` action space
  builds no ``torch.distributions.Categorical`` object; it does that distribution's arithmetic on
  the logits itself, so actions and log-probabilities are the same to the bit (174 -> 128 us per
  batch-1 forward on one thread). It also runs the MLP extractor's ``Sequential`` layers and the
  two heads as the functions their modules' ``forward`` calls (``F.linear``, ``torch.tanh``,
  ``F.relu``), skipping ``nn.Module.__call__``'s hook machinery around each of the 13 modules (the
  same ops on the same tensors; a layer of another type is called as a module). Other action
  spaces, and the training-time ``evaluate_actions`` (entropy, batch log-probabilities), run SB3's
  code unchanged.
* :class:`LeanDQNPolicy` (DQN, ACC's Double DQN): ``set_training_mode`` returns at once when the
  Q-network is already in that mode. SB3 calls it on every ``predict`` (every env step) and every
  ``train``; torch's ``Module.train`` walks every submodule each time (~22 us).

A model saved with one of these classes loads with ecngym installed (SB3 stores the policy
class); the weights are those of SB3's ``MlpPolicy``.
"""

from __future__ import annotations

import torch as th
import torch.nn.functional as F
from gymnasium import spaces
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor
from stable_baselines3.dqn.policies import DQNPolicy
from torch import nn


def _layers(net: nn.Module, x: th.Tensor) -> th.Tensor:
    """``net(x)`` for a ``Sequential`` of layers (or one layer), each as the function its ``forward`` calls."""
    for layer in net if type(net) is nn.Sequential else (net,):
        kind = type(layer)
        if kind is nn.Linear:
            x = F.linear(x, layer.weight, layer.bias)
        elif kind is nn.Tanh:
            x = th.tanh(x)
        elif kind is nn.ReLU and not layer.inplace:
            x = F.relu(x)
        else:
            x = layer(x)
    return x


class LeanActorCriticPolicy(ActorCriticPolicy):
    """SB3's ``ActorCriticPolicy`` (PPO's ``MlpPolicy``) with a distribution-free rollout step."""

    def forward(self, obs: th.Tensor, deterministic: bool = False) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        """Actions, values and log-probabilities of a batch of observations (SB3's contract).

        On a ``Discrete`` action space, the arithmetic of SB3's ``Categorical`` (normalised logits,
        their softmax, ``torch.multinomial`` with replacement or the argmax, the log-probability
        gathered from the normalised logits) without building the distribution object, so the
        same floats and the same draws from the same random stream; otherwise SB3's ``forward``.
        """
        if not isinstance(self.action_space, spaces.Discrete):
            return super().forward(obs, deterministic)
        features = self.extract_features(obs)
        pi_features, vf_features = (features, features) if self.share_features_extractor else features
        if type(self.mlp_extractor) is MlpExtractor:  # (its forward_actor / forward_critic: the two nets)
            latent_pi = _layers(self.mlp_extractor.policy_net, pi_features)
            latent_vf = _layers(self.mlp_extractor.value_net, vf_features)
        else:
            latent_pi = self.mlp_extractor.forward_actor(pi_features)
            latent_vf = self.mlp_extractor.forward_critic(vf_features)
        values = _layers(self.value_net, latent_vf)
        logits = _layers(self.action_net, latent_pi)
        log_pmf = logits - logits.logsumexp(dim=-1, keepdim=True)  # Categorical's normalised logits
        probs = th.softmax(log_pmf, dim=-1)  # and its probs: the same floats, so the same draws
        actions = probs.argmax(dim=-1) if deterministic else th.multinomial(probs, 1, True).squeeze(-1)
        log_prob = log_pmf.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
        return actions, values, log_prob


class LeanDQNPolicy(DQNPolicy):
    """SB3's ``DQNPolicy`` (DQN's ``MlpPolicy``) that skips mode switches to the mode it is in."""

    def set_training_mode(self, mode: bool) -> None:
        """Put the Q-network in training or evaluation mode (nothing to do if it is already)."""
        if self.q_net.training != mode:
            super().set_training_mode(mode)
        self.training = mode
