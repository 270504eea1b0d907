"""Recording an episode as frames (one jitted `lax.scan` of `env.step` and `env.render`), and frames to a captioned GIF.

Frames after the episode ends repeat the final frame, so every recording of
an env has the same static shape.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, PRNGKeyArray

from parallax.adapters.frames import RenderUnavailableError
from parallax.core import AnyEnv, action_mask_of
from parallax.spaces import sample_legal
from parallax_zoo.atomic import atomic_write

if TYPE_CHECKING:
    from parallax_zoo.agents.player import Player

ActFn = Callable[[Any, PRNGKeyArray], Array]
"""`act(state, key) -> action`: how the recorder's scan is given its actions, from the env's whole state.

Not a `Player`: the random `act` samples the env's own action space, so any env that renders records,
including those no network can act in; a player becomes one through `policy_act`."""


def random_act(env: AnyEnv) -> ActFn:
    """A uniformly random policy over the legal actions of `env`."""

    def act(state: Any, key: PRNGKeyArray) -> Array:
        return sample_legal(env.action_space, key=key, mask=action_mask_of(state))

    return act


def policy_act(player: Player) -> ActFn:
    """A player as an `act` function, playing as evaluation does: a trained `Policy` its most likely action."""
    from parallax_zoo.agents.player_factories import as_player
    from parallax_zoo.agents.slots import read_slots

    greedy = as_player(None, player, greedy=True)  # no env needed: a player is never the random player's name
    if getattr(greedy, "recurrent", False):
        return RecurrentAct(greedy)

    def act(state: Any, key: PRNGKeyArray) -> Array:
        action, _, _ = greedy.act_slots(read_slots(state), key)
        return greedy.env_action(action)

    return act


@dataclass(frozen=True)
class RecurrentAct:
    """A recurrent player as the recorder's `act`: `step(state, key, hidden)` carries its hidden state through the
    scan from `initial_hidden()` (one episode is recorded, so it is never reset)."""

    player: Any

    def initial_hidden(self) -> Array:
        return self.player.initial_memory(()).hidden

    def step(self, state: Any, key: PRNGKeyArray, hidden: Array) -> tuple[Array, Array]:
        from parallax_zoo.agents.slots import read_slots

        hidden, action, _, _ = self.player.act_memory(hidden, read_slots(state), key)
        return self.player.env_action(action), hidden

    def __call__(self, state: Any, key: PRNGKeyArray) -> Array:
        raise TypeError("a recurrent player acts with its hidden state: call step(state, key, hidden)")


@dataclass(frozen=True)
class Recording:
    """One recorded episode: `frames` `uint8[T + 1, H, W, 3]` from the reset on, each step's `rewards`
    (`float32[T + 1]`, or `[T + 1, num_agents]`; zero at the reset and after the end), and `length`,
    the step on which the episode ended (None where it ran past the recording)."""

    frames: np.ndarray
    rewards: np.ndarray
    length: int | None

    def captions(self) -> list[str]:
        """A line per frame: the step and its rewards; from the episode's end on, the result (the returns)."""
        returns = self.rewards.sum(axis=0)
        lines = []
        for step, reward in enumerate(self.rewards):
            if self.length is not None and step >= self.length:
                lines.append(f"step {self.length}, over: {_per_agent('return', returns)}")
            else:
                lines.append(
                    f"step {step}  {_per_agent('reward', reward)}  "
                    f"({_per_agent('total', self.rewards[: step + 1].sum(axis=0))})"
                )
        return lines


def _per_agent(label: str, values: np.ndarray) -> str:
    values = np.atleast_1d(values)
    if values.size == 1:
        return f"{label} {_number(values[0])}"
    return f"{label}s " + " / ".join(_number(v) for v in values)


def _number(value: Any) -> str:
    value = float(value)
    return f"{value:.0f}" if value.is_integer() else f"{value:.2f}"


def render_unavailable(env: Any) -> str | None:
    """Why `env` cannot be drawn here (no renderer of its own and none of ours, or MuJoCo without OpenGL), or None."""
    reason = getattr(env, "cannot_render", None)
    if reason is None and not hasattr(env, "render_trajectory") and not hasattr(env, "render"):
        reason = f"{type(getattr(env, 'unwrapped', env)).__name__} has no render method"
    return reason


def record(env: Any, act: ActFn, key: PRNGKeyArray, num_steps: int) -> Recording:
    """One episode of `env` under `act` from `env.reset(key)`: `num_steps` steps in one jitted scan, drawn.

    Envs drawn in `jnp` (`env.render(state)`) are drawn inside the scan; envs
    whose renderer runs on the host (`env.render_trajectory(states)`, Brax
    and Playground through MuJoCo) are drawn after it. An env that can draw
    neither raises `RenderUnavailableError` saying why, before anything runs.
    """
    reason = render_unavailable(env)
    if reason is not None:
        raise RenderUnavailableError(reason)
    host = hasattr(env, "render_trajectory")
    reset_key, scan_key = jax.random.split(key)
    draw = (lambda state: state) if host else env.render

    @jax.jit
    def run(reset_key: PRNGKeyArray, scan_key: PRNGKeyArray) -> tuple[Any, Array, Array]:
        state = env.reset(key=reset_key)
        hidden = act.initial_hidden() if isinstance(act, RecurrentAct) else jnp.zeros(())

        def body(
            carry: tuple[Any, Array, Array], step_key: PRNGKeyArray
        ) -> tuple[tuple[Any, Array, Array], tuple[Any, Array, Array]]:
            state, ended, hidden = carry
            if isinstance(act, RecurrentAct):
                action, hidden = act.step(state, step_key, hidden)
            else:
                action = act(state, step_key)
            next_state = env.step(state, action)
            reward = jnp.where(ended, 0.0, _reward_of(next_state))
            state = jax.tree_util.tree_map(lambda old, new: jnp.where(ended, old, new), state, next_state)
            ended = ended | state.done
            return (state, ended, hidden), (draw(state), reward, ended)

        first = draw(state)
        _, (frames, rewards, ended) = jax.lax.scan(
            body, (state, jnp.bool_(False), hidden), jax.random.split(scan_key, num_steps)
        )
        stack = lambda a, b: jnp.concatenate([a[None], b])  # noqa: E731
        frames = jax.tree_util.tree_map(stack, first, frames)
        return frames, stack(jnp.zeros_like(rewards[0]), rewards), ended

    frames, rewards, ended = run(reset_key, scan_key)
    frames = _drawn_on_host(env, frames) if host else np.asarray(frames)
    ended = np.asarray(ended)
    return Recording(frames, np.asarray(rewards, np.float32), int(np.argmax(ended)) + 1 if ended.any() else None)


def _drawn_on_host(env: Any, states: Any) -> np.ndarray:
    """The suite's own renderer on the recorded states; a failure inside it becomes one `RenderUnavailableError`."""
    try:
        return np.asarray(env.render_trajectory(states), np.uint8)
    except RenderUnavailableError:
        raise
    except Exception as error:  # a foreign renderer's own failure: reported in one line, not as a traceback
        name = type(getattr(env, "unwrapped", env)).__name__
        raise RenderUnavailableError(
            f"{name}: its suite's renderer failed ({type(error).__name__}: {error})"
        ) from error


def _reward_of(state: Any) -> Array:
    """The step's reward: the scalar of a single-agent state, the per-agent vector of a multi-agent one."""
    agents = getattr(state, "agents", None)
    return jnp.asarray(state.reward if agents is None else agents.reward, jnp.float32)


def record_episode(env: AnyEnv, act: ActFn, key: PRNGKeyArray, num_steps: int) -> np.ndarray:
    """Frames `uint8[num_steps + 1, H, W, 3]` of one episode from `env.reset(key)` under `act` (see `record`)."""
    return record(env, act, key, num_steps).frames


MIN_GIF_SIDE = 256
"""The default scale makes a GIF's short side at least this many pixels."""


def default_scale(frames: np.ndarray) -> int:
    """The smallest whole factor that brings the frames' short side to `MIN_GIF_SIDE` pixels."""
    return max(1, math.ceil(MIN_GIF_SIDE / min(frames.shape[1], frames.shape[2])))


def save_gif(
    frames: Sequence[np.ndarray] | np.ndarray,
    path: str | os.PathLike,
    fps: int = 8,
    scale: int | None = None,
    captions: Sequence[str] | None = None,
) -> Path:
    """Write `frames` (`uint8[T, H, W, 3]`) as a looping GIF; written to a temporary file, then renamed.

    Each frame is enlarged `scale` times (nearest neighbour; default: to a
    short side of at least 256 pixels) and, given `captions`, gets its line
    of text in a strip underneath.
    """
    from PIL import Image as PILImage
    from PIL import ImageDraw, ImageFont

    frames = np.asarray(frames, dtype=np.uint8)
    if frames.ndim != 4 or frames.shape[-1] != 3 or len(frames) == 0:
        raise ValueError(f"save_gif expects frames of shape (T, H, W, 3) with T >= 1, got {frames.shape}")
    if captions is not None and len(captions) != len(frames):
        raise ValueError(f"save_gif got {len(captions)} captions for {len(frames)} frames; give one per frame")
    scale = default_scale(frames) if scale is None else scale
    if not (isinstance(scale, int) and scale >= 1):
        raise ValueError(f"scale must be a whole number >= 1, got {scale!r}")
    frames = frames.repeat(scale, axis=1).repeat(scale, axis=2)
    images = [PILImage.fromarray(frame) for frame in frames]
    if captions is not None:
        size = max(11, min(frames.shape[1], frames.shape[2]) // 18)
        font = ImageFont.load_default(size=size)
        strip = size + size // 2 + 4
        captioned = []
        for image, caption in zip(images, captions):
            canvas = PILImage.new("RGB", (image.width, image.height + strip), (255, 255, 255))
            canvas.paste(image, (0, 0))
            ImageDraw.Draw(canvas).text((4, image.height + 2), caption, fill=(0, 0, 0), font=font)
            captioned.append(canvas)
        images = captioned

    def write(temporary: Path) -> None:
        images[0].save(
            temporary, format="GIF", save_all=True, append_images=images[1:], duration=max(1, round(1000 / fps)), loop=0
        )

    return atomic_write(path, write)
