"""Recordings as a user saves them: GIFs scaled up, one caption under each frame."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from PIL import Image

import parallax_zoo
from parallax_zoo.judging.recording import random_act, record, save_gif


def test_gif_scale_and_captions(tmp_path):
    env = parallax_zoo.make("TicTacToe-v0")
    recording = record(env, random_act(env), jax.random.key(3), 12)
    assert recording.length is not None and recording.captions()[-1].startswith(
        f"step {recording.length}, over: returns"
    )
    path = save_gif(recording.frames, tmp_path / "t.gif", scale=3, captions=recording.captions())
    with Image.open(path) as gif:
        assert gif.size[0] == 3 * recording.frames.shape[2] and gif.size[1] > 3 * recording.frames.shape[1]
    with pytest.raises(ValueError, match="2 captions for 13 frames"):
        save_gif(recording.frames, tmp_path / "u.gif", captions=["a", "b"])


def test_a_recurrent_policy_is_recorded_with_its_hidden_state_carried_step_to_step():
    from parallax_zoo.agents.policy import Policy
    from parallax_zoo.agents.ppo import PPOConfig, model_for
    from parallax_zoo.judging.recording import policy_act

    env = parallax_zoo.make("GridWorld-v0")
    config = PPOConfig(policy="recurrent", hidden_sizes=(16,), rnn_hidden=8, num_minibatches=1)
    model = model_for(env, config)
    policy = Policy(model, model.init(jax.random.key(23)))  # weights whose moves depend on the hidden state
    recording = record(env, policy_act(policy), jax.random.key(0), 6)

    def frames_by_hand(carry_hidden: bool) -> np.ndarray:
        """The same greedy episode stepped by hand, the hidden state handed on (or dropped) every step."""
        state, hidden = env.reset(key=jax.random.split(jax.random.key(0))[0]), None
        frames = [env.render(state)]
        for _ in range(6):
            action, new_hidden = policy.step(state.observation, hidden)
            hidden = new_hidden if carry_hidden else None
            state = env.step(state, action)
            frames.append(env.render(state))
        return np.stack([np.asarray(frame) for frame in frames])

    np.testing.assert_array_equal(recording.frames, frames_by_hand(carry_hidden=True))
    assert not np.array_equal(recording.frames, frames_by_hand(carry_hidden=False))  # the memory shows in the play
