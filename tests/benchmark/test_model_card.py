"""A checkpoint's card binds its weights: sha256, tensor names and shapes, scenario and version (issue 42).

Each test tampers with a copy of a shipped checkpoint (DQN on ``dctcp_pred_regimes``, training seed 1:
``q`` = 1152 -> 64 -> 64 -> 8, ReLU) and checks the one-line error; nothing is trained here.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import gymnasium as gym
import pytest
from safetensors.numpy import load_file, save_file

import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.benchmark.checkpoints import CARD_FILE, CHECKPOINT_DIR, WEIGHTS_FILE, CheckpointController, load_checkpoint
from ecngym.benchmark.suite import load_scenario
from ecngym.error import ConfigError

SHIPPED = CHECKPOINT_DIR / "dctcp_pred_regimes" / "dqn"
ENV_ID = "ecngym/DctcpPredRegimes-v1"


def _copy(tmp_path: Path, seed: int = 1) -> Path:
    folder = tmp_path / "ckpt"
    shutil.copytree(SHIPPED / f"seed{seed}", folder)
    return folder


def _edit_card(folder: Path, **changes) -> dict:
    card = json.loads((folder / CARD_FILE).read_text())
    card.update(changes)
    (folder / CARD_FILE).write_text(json.dumps(card))
    return card


def _write_weights(folder: Path, tensors: dict, fix_card: bool) -> None:
    """Write ``tensors`` as the checkpoint's weights; with ``fix_card``, the card's sha256 and size follow."""
    path = folder / WEIGHTS_FILE
    save_file(tensors, str(path))
    if fix_card:
        _edit_card(folder, weights_sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
                   weights_bytes=path.stat().st_size)


def _error(folder: Path) -> str:
    with pytest.raises(ConfigError) as err:
        load_checkpoint(folder, load_scenario("dctcp_pred_regimes"))
    assert err.value.field == "controller.path"
    return err.value.message


def test_another_seeds_weights_under_a_card_are_refused_by_their_sha256(tmp_path):
    folder = _copy(tmp_path)
    shutil.copyfile(SHIPPED / "seed2" / WEIGHTS_FILE, folder / WEIGHTS_FILE)
    card = json.loads((folder / CARD_FILE).read_text())
    other = hashlib.sha256((folder / WEIGHTS_FILE).read_bytes()).hexdigest()
    assert _error(folder) == (f"{str(folder / WEIGHTS_FILE)!r} has sha256 {other[:16]}…, its card's weights_sha256 "
                              f"is {card['weights_sha256'][:16]}…: these are not the weights the card describes "
                              "(another run's?); put back the checkpoint's own file or retrain (the card's command)")


def test_a_net_with_fewer_outputs_than_the_cards_actions_is_refused(tmp_path):
    folder = _copy(tmp_path)
    tensors = load_file(str(folder / WEIGHTS_FILE))
    tensors["q.4.weight"], tensors["q.4.bias"] = tensors["q.4.weight"][:3].copy(), tensors["q.4.bias"][:3].copy()
    _write_weights(folder, tensors, fix_card=True)  # a card whose hash matches: the shapes must still fit
    assert _error(folder) == (f"{str(folder / WEIGHTS_FILE)!r}: network 'q''s layer 2 weight is float32[3, 64], its "
                              "card's nets.q.layers[2] = [64, 8] needs float32[8, 64]")


@pytest.mark.parametrize(("rename", "message"), [
    ({"q.0.bias": "q.x.bias"}, "holds the tensor 'q.x.bias', which is no <net>.<index>.weight or .bias of the "
                               "card's networks ['q']"),
    ({"q.0.bias": "pi.0.bias"}, "holds the tensor 'pi.0.bias', which is no <net>.<index>.weight or .bias"),
    ({"q.0.bias": None}, "network 'q''s layer 0 bias is missing"),
    ({"q.4.weight": None, "q.4.bias": None}, "holds 2 layers of network 'q', its card's nets.q.layers lists 3"),
])
def test_tensor_names_that_are_not_the_cards_layers_are_refused_naming_them(tmp_path, rename, message):
    folder = _copy(tmp_path)
    tensors = load_file(str(folder / WEIGHTS_FILE))
    for old, new in rename.items():
        value = tensors.pop(old)
        if new is not None:
            tensors[new] = value
    _write_weights(folder, tensors, fix_card=True)
    assert message in _error(folder)


@pytest.mark.parametrize(("change", "message"), [
    ({"nets": None}, "nets: required field is missing"),
    ({"nets": {"q": {"activation": "gelu", "layers": [[1152, 64], [64, 64], [64, 8]]}}},
     "nets.q.activation: got 'gelu', allowed: 'relu', 'tanh', 'none'"),
    ({"nets": {"q": {"activation": "relu", "layers": [[1152, 64], [32, 64], [64, 8]]}}},
     "nets.q.layers[1]: takes 32 inputs, but layers[0] has 64 outputs"),
    ({"nets": {"pi": {"activation": "relu", "layers": [[1152, 8]]}}},
     "nets: has networks ['pi']; agent 'dqn' acts with ['q']"),
    ({"n_actions": 9}, "n_actions: got 9, but network 'q' has 8 outputs (one per action)"),
    ({"agent": "a2c"}, "agent: got 'a2c'; the learners: ['acc', 'haecn', 'laecn', 'dqn', 'ppo']"),
    ({"weights_sha256": "abc"}, "weights_sha256: got 'abc', expected 64 lower-case hex digits"),
    ({"observation": {"features": ["queue"], "history": 3, "queue_mapping": "step"}},
     "observation.obs_dim: required field is missing"),
    ({"trace_hashes": [1, 2]}, "trace_hashes: "),
    ({"bogus": 1}, "bogus: "),
])
def test_a_malformed_card_is_refused_naming_its_field(tmp_path, change, message):
    folder = _copy(tmp_path)
    card = json.loads((folder / CARD_FILE).read_text())
    for key, value in change.items():
        if value is None:
            card.pop(key)
        else:
            card[key] = value
    (folder / CARD_FILE).write_text(json.dumps(card))
    with pytest.raises(ConfigError) as err:
        CheckpointController(folder)
    assert err.value.field == "controller.path"
    assert err.value.message.startswith(f"{str(folder / CARD_FILE)!r} is not a valid checkpoint card: {message}"), \
        err.value.message
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("change", "message", "refused_by_layout_alone"), [
    ({"scenario_version": 2}, "the checkpoint was made for version 2 of scenario dctcp_pred_regimes, this scenario is "
                              "version 1: retrain it (its card's command)", True),
    ({"scenario": "roce_load_step"}, "the checkpoint was made for scenario 'roce_load_step', this is scenario "
                                     "'dctcp_pred_regimes': play it on its own scenario or retrain it (its card's "
                                     "command)", False),
])
def test_a_card_of_another_scenario_or_version_is_refused_where_it_plays(tmp_path, change, message,
                                                                         refused_by_layout_alone):
    folder = _copy(tmp_path)
    _edit_card(folder, **change)
    # given the scenario (the learner table, a suite's plan) ...
    assert _error(folder) == message
    with pytest.raises(ConfigError, match="^controller.path: the checkpoint was made for"):
        CheckpointController(folder, scenario="dctcp_pred_regimes", scenario_version=1)
    # ... or not (an env of a suite scenario's id: the player looks its scenario file up): its own scenario at
    # another version is refused; another scenario is judged by its layout (ecngym eval controller=checkpoint):
    # roce_load_step's templates are not this scenario's
    controller = CheckpointController(folder)
    env = gym.make(ENV_ID, **controller.env_overrides())
    try:
        if refused_by_layout_alone:
            with pytest.raises(ConfigError) as err:
                controller.reset(env)
            assert str(err.value) == f"controller.path: {message}"
        else:
            with pytest.raises(ConfigError, match="action.templates differ"):
                controller.reset(env)
    finally:
        env.close()


def test_the_suite_plan_refuses_a_shipped_checkpoint_of_another_scenario_version(tmp_path):
    import yaml

    from ecngym.benchmark.runner import learner_controllers
    from ecngym.benchmark.suite import SCENARIO_DIR

    root = tmp_path / "checkpoints"
    shutil.copytree(SHIPPED / "seed1", root / "dctcp_pred_regimes" / "dqn" / "seed1")
    assert set(learner_controllers("dctcp_pred_regimes", root, version=1)) == {"dqn"}
    with pytest.raises(ConfigError, match="^controller.path: the checkpoint was made for version 1 of scenario "
                                          "dctcp_pred_regimes, this scenario is version 2"):
        learner_controllers("dctcp_pred_regimes", root, version=2)
    assert yaml.safe_load((SCENARIO_DIR / "dctcp_pred_regimes.yaml").read_text())["version"] == 1


def test_the_shipped_checkpoint_still_plays_its_scenario(tmp_path):
    controller = CheckpointController(_copy(tmp_path), scenario="dctcp_pred_regimes", scenario_version=1)
    env = gym.make(ENV_ID, **controller.env_overrides())
    try:
        controller.reset(env)
    finally:
        env.close()
