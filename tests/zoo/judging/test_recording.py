"""Recordings as a user saves them: GIFs scaled up, one caption under each frame."""

from __future__ import annotations

import jax
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
