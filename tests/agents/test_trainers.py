"""What every learning agent's trainer checks before it trains (ACC on SB3, LAECN), through ``train_agent``."""

import pytest

from ecngym.agents import train_agent
from ecngym.agents.config import agent_config
from ecngym.error import ConfigError


@pytest.mark.parametrize(("name", "not_checkpoint", "content", "message", "message_not_path"), [
    # was SB3's ValueError (not a zip), a TypeError (not a path)
    ("acc", "notes.zip", "not a zip",
     r"^resume: '.*/notes.zip' is not an ACC checkpoint \(a model.zip or checkpoints/model_<n>_steps.zip\) of this "
     r"scenario \(ValueError", r"^resume: got 5, expected the path of an ACC checkpoint"),
    # was torch's UnpicklingError (not a checkpoint), a TypeError (not a path)
    ("laecn", "curve.csv", "episode,env_steps\n",
     r"^resume: '.*/curve.csv' is not a checkpoint of this laecn on this scenario \(UnpicklingError",
     r"^resume: got 5, expected the path of a LAECN checkpoint"),
])
def test_a_resume_that_is_not_a_checkpoint_is_named(tiny_env, tmp_path, name, not_checkpoint, content, message,
                                                    message_not_path):
    (tmp_path / not_checkpoint).write_text(content)
    for resume, expected in ((str(tmp_path / not_checkpoint), message), (5, message_not_path)):
        with pytest.raises(ConfigError, match=expected):
            train_agent(tiny_env, agent_config(name), tmp_path / "run", timesteps=4, seed=0, resume=resume,
                        progress_bar=False)
