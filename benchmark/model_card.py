"""A checkpoint's model card as a typed record, and the checks that bind its weights file to it.

A card (``card.json``, written by :func:`ecngym.benchmark.checkpoints.write_checkpoint`) says what
the weights are: the networks' layer sizes, the actions they choose among, the observation they
read and the sha256 of the weights file. :func:`parse_card` validates a card's every field (a
malformed one names the field), and :func:`check_weights` refuses a weights file that is not the
one the card describes: another file (another training seed's, say: its sha256 differs), tensor
names that are no layer of the card's networks, or shapes the card's layers do not have (a network
with fewer outputs than the actions would otherwise play).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import model_validator

from ecngym.error import ConfigError
from ecngym.validation import ConfigModel, OneOf, Text, Whole, field_error


def acting_nets(agent: str) -> tuple[str, ...]:
    """The networks learner ``agent`` acts with (tensor groups of its weights file), from its registry entry.

    The first chooses the action (its outputs are the card's ``n_actions``, its input the observation's).

    Raises:
        ConfigError: Naming ``agent`` if it is no registered learner.
    """
    from ecngym.agents.acting_nets import learner_acting

    return tuple(learner_acting(agent).nets)


#: The activations between a network's linear layers ("none": a single linear layer).
ACTIVATIONS = {"relu": lambda x: np.maximum(x, 0), "tanh": np.tanh, "none": lambda x: x}
#: A tensor of a network: ``<net>.<index in its torch Sequential>.weight`` or ``.bias``.
_TENSOR = re.compile(r"([a-z]+)\.([0-9]+)\.(weight|bias)")
_SHA256 = re.compile(r"[0-9a-f]{64}")
Count = Whole(0, 2**31 - 1)
Width = Whole(1, 2**31 - 1)


class NetSpec(ConfigModel):
    """One network of a card: its activation and its linear layers' ``[inputs, outputs]``, in order."""

    activation: OneOf(*ACTIVATIONS)
    layers: list[list[Width]]

    @model_validator(mode="after")
    def _check(self) -> NetSpec:
        if not self.layers:
            raise field_error("layers", "got an empty list; a network has at least one linear layer")
        for i, layer in enumerate(self.layers):
            if len(layer) != 2:
                raise field_error(f"layers[{i}]", f"got {layer}, expected [inputs, outputs]")
            if i and layer[0] != self.layers[i - 1][1]:
                raise field_error(f"layers[{i}]", f"takes {layer[0]} inputs, but layers[{i - 1}] has "
                                                  f"{self.layers[i - 1][1]} outputs")
        return self


class ObservationLayout(ConfigModel):
    """What a checkpoint's policy reads (:func:`ecngym.benchmark.checkpoints.observation_layout`)."""

    features: list[Text]
    history: Width
    queue_mapping: Text
    obs_dim: Width


class ActionLayout(ConfigModel):
    """What a checkpoint's outputs set (:func:`ecngym.benchmark.checkpoints.declared_action`)."""

    type: Text
    scope: Text
    templates: list[Any] | None


class Card(ConfigModel):
    """A checkpoint's ``card.json`` (the fields :func:`~ecngym.benchmark.checkpoints.write_checkpoint` writes)."""

    format: Text
    format_version: Width
    agent: Text
    scenario: Text
    scenario_version: Width
    env_id: Text
    seed: Count
    command: Text
    budget_steps: Width
    budget_source: Text
    train_trace_seeds: list[Count]
    trace_hashes: dict[str, Text]
    episodes_trained: Count
    hyperparams: dict[str, Any]
    hyperparams_source: Text
    granularity: Text | None
    n_actions: Width
    static_action: Count | None
    agent_config: dict[str, Any] | None
    env_overrides: dict[str, Any]
    observation: ObservationLayout
    nets: dict[str, NetSpec]
    versions: dict[str, Text]
    training_cost: dict[str, Any]
    created: Text
    weights_sha256: Text
    weights_bytes: Count
    curve: Text
    scores: dict[str, Any]
    #: what the policy's outputs mean (type, scope, templates); cards written before it record none
    action: ActionLayout | None = None
    #: a tier run: the tier's settings and what the run did; its validation curve
    tier: dict[str, Any] | None = None
    validation: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _check(self) -> Card:
        if not _SHA256.fullmatch(self.weights_sha256):
            raise field_error("weights_sha256", f"got {self.weights_sha256!r}, expected 64 lower-case hex digits")
        try:
            wanted = acting_nets(self.agent)
        except ConfigError as exc:
            raise field_error("agent", exc.message) from None
        if sorted(self.nets) != sorted(wanted):
            raise field_error("nets", f"has networks {sorted(self.nets)}; agent {self.agent!r} acts with "
                                      f"{list(wanted)}")
        first = self.nets[wanted[0]].layers
        if first[-1][1] != self.n_actions:
            raise field_error("n_actions", f"got {self.n_actions}, but network {wanted[0]!r} has {first[-1][1]} "
                                           "outputs (one per action)")
        if first[0][0] != self.observation.obs_dim:
            raise field_error("observation.obs_dim", f"got {self.observation.obs_dim}, but network {wanted[0]!r} "
                                                     f"takes {first[0][0]} inputs")
        return self


def parse_card(data: Any, card_path: Path, field: str) -> dict[str, Any]:
    """``data`` (a ``card.json``'s contents) validated as a :class:`Card`; returned as the plain dict it was.

    Raises:
        ConfigError: Naming ``field``, the card's file and its first bad field (``nets.q.layers[1]``).
    """
    try:
        Card.parse(data, "")
    except ConfigError as exc:
        raise ConfigError(field, f"{str(card_path)!r} is not a valid checkpoint card: {exc.field}: "
                                 f"{exc.message}") from None
    return data


def check_weights(card: dict[str, Any], weights: Path, raw: bytes, tensors: dict[str, np.ndarray],
                  field: str) -> None:
    """Refuse a weights file that is not the one ``card`` describes.

    Args:
        card: The checkpoint's card (validated by :func:`parse_card`).
        weights: The weights file, for the messages.
        raw: Its bytes.
        tensors: Its tensors (read from ``raw``).
        field: The option that gave the checkpoint, named in errors.

    Raises:
        ConfigError: Naming ``field`` if the file's sha256 is not the card's ``weights_sha256`` (it
            holds other weights: another run's), a tensor's name is no ``<net>.<index>.weight|bias``
            of the card's networks, a layer's weight or bias is missing, or a tensor's shape or
            dtype is not what the card's layers say.
    """
    digest = hashlib.sha256(raw).hexdigest()
    if digest != card["weights_sha256"]:
        raise ConfigError(field, f"{str(weights)!r} has sha256 {digest[:16]}…, its card's weights_sha256 is "
                                 f"{card['weights_sha256'][:16]}…: these are not the weights the card describes "
                                 "(another run's?); put back the checkpoint's own file or retrain (the card's command)")
    by_net: dict[str, dict[int, dict[str, np.ndarray]]] = {}
    for name, tensor in tensors.items():
        match = _TENSOR.fullmatch(name)
        if match is None or match[1] not in card["nets"]:
            raise ConfigError(field, f"{str(weights)!r} holds the tensor {name!r}, which is no <net>.<index>.weight "
                                     f"or .bias of the card's networks {sorted(card['nets'])}")
        by_net.setdefault(match[1], {}).setdefault(int(match[2]), {})[match[3]] = tensor
    for net, spec in card["nets"].items():
        layers = [by_net.get(net, {})[i] for i in sorted(by_net.get(net, {}))]
        if len(layers) != len(spec["layers"]):
            raise ConfigError(field, f"{str(weights)!r} holds {len(layers)} layers of network {net!r}, its card's "
                                     f"nets.{net}.layers lists {len(spec['layers'])}")
        for i, ((inputs, outputs), parts) in enumerate(zip(spec["layers"], layers, strict=True)):
            for part, shape in (("weight", (outputs, inputs)), ("bias", (outputs,))):
                tensor = parts.get(part)
                what = f"{str(weights)!r}: network {net!r}'s layer {i} {part}"
                if tensor is None:
                    raise ConfigError(field, f"{what} is missing")
                if tuple(tensor.shape) != shape or tensor.dtype != np.float32:
                    raise ConfigError(field, f"{what} is {tensor.dtype}{list(tensor.shape)}, its card's "
                                             f"nets.{net}.layers[{i}] = {[inputs, outputs]} needs float32{list(shape)}")
