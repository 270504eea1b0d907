"""Recording an episode as frames (one jitted `lax.scan` of `env.step` and `env.render`), and frames to GIF.

Frames after the episode ends repeat the final frame, so every recording of
an env has the same static shape.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, PRNGKeyArray

from parallax.core import action_mask_of
from parallax.spaces import sample_legal
from parallax_zoo.atomic import atomic_write

if TYPE_CHECKING:
    from parallax_zoo.agents.policy import Policy

ActFn = Callable[[Any, PRNGKeyArray], Array]
"""`act(state, key) -> action`: how a policy is called while recording."""


def random_act(env: Any) -> ActFn:
    """A uniformly random policy over the legal actions of `env`."""

    def act(state: Any, key: PRNGKeyArray) -> Array:
        return sample_legal(env.action_space, key=key, mask=action_mask_of(state))

    return act


def policy_act(policy: Policy, greedy: bool = True) -> ActFn:
    """A trained policy as an `act` function: its most likely action (or a sample) in every slot."""
    from parallax_zoo.agents.slots import read_slots

    def act(state: Any, key: PRNGKeyArray) -> Array:
        action, _, _ = policy.act_slots(read_slots(state), key, greedy=greedy)
        return policy.env_action(action)

    return act


def record_episode(env: Any, act: ActFn, key: PRNGKeyArray, num_steps: int) -> np.ndarray:
    """Frames `uint8[num_steps + 1, H, W, 3]` of one episode from `env.reset(key)` under `act`."""
    reset_key, scan_key = jax.random.split(key)

    @jax.jit
    def run(reset_key: PRNGKeyArray, scan_key: PRNGKeyArray) -> Array:
        state = env.reset(key=reset_key)

        def body(carry: tuple[Any, Array], step_key: PRNGKeyArray) -> tuple[tuple[Any, Array], Array]:
            state, ended = carry
            next_state = env.step(state, act(state, step_key))
            state = jax.tree_util.tree_map(lambda old, new: jnp.where(ended, old, new), state, next_state)
            return (state, ended | state.done), env.render(state)

        first = env.render(state)
        _, frames = jax.lax.scan(body, (state, jnp.bool_(False)), jax.random.split(scan_key, num_steps))
        return jnp.concatenate([first[None], frames])

    return np.asarray(run(reset_key, scan_key))


def save_gif(frames: Sequence[np.ndarray] | np.ndarray, path: str | os.PathLike, fps: int = 8) -> Path:
    """Write `frames` (`uint8[T, H, W, 3]`) as a looping GIF; written to a temporary file, then renamed."""
    from PIL import Image as PILImage

    frames = np.asarray(frames, dtype=np.uint8)
    if frames.ndim != 4 or frames.shape[-1] != 3 or len(frames) == 0:
        raise ValueError(f"save_gif expects frames of shape (T, H, W, 3) with T >= 1, got {frames.shape}")
    images = [PILImage.fromarray(frame) for frame in frames]

    def write(temporary: Path) -> None:
        images[0].save(temporary, format="GIF", save_all=True, append_images=images[1:],
                       duration=max(1, round(1000 / fps)), loop=0)

    return atomic_write(path, write)
