"""Frames drawn in `jnp`: gymnax's classic-control envs, any observation as a picture, and why an env cannot render.

gymnax draws nothing itself, so CartPole, Acrobot, MountainCar and Pendulum
are drawn here as pure functions of the gymnax `EnvState` returning
`uint8[H, W, 3]` (jittable, like the native envs' `render`); an env whose
suite has no drawing is drawn from its observation (`observation_frame`).
Suites that draw on the host (MuJoCo for Brax and Playground, Pgx's SVG,
Jumanji's and JaxMARL's matplotlib viewers) do so in `render_trajectory` on
their adapters (`host_frames`). This module imports jax only.
"""

from __future__ import annotations

import ctypes.util
import math
import os
import sys
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

HEIGHT, WIDTH = 128, 192
"""The size of a classic-control frame; recordings scale it up for GIFs."""

_WHITE, _BLACK, _GREY = (255, 255, 255), (40, 40, 40), (200, 200, 200)
_BLUE, _ORANGE, _GREEN, _BROWN = (31, 119, 180), (255, 127, 14), (46, 160, 67), (140, 100, 60)


class RenderUnavailableError(RuntimeError):
    """An env that cannot draw frames here; the message says why and what to install or set."""


def _pixels() -> tuple[Array, Array]:
    """Pixel centres (x across, y up from the bottom), broadcast to `[HEIGHT, WIDTH]`."""
    x = jnp.arange(WIDTH)[None, :] + 0.5
    y = HEIGHT - (jnp.arange(HEIGHT)[:, None] + 0.5)
    return x, y


def _paint(image: Array, mask: Array, color: tuple[int, int, int]) -> Array:
    return jnp.where(mask[..., None], jnp.asarray(color, jnp.uint8), image)


def _segment(x0: Array, y0: Array, x1: Array, y1: Array, width: float) -> Array:
    """The pixels within `width / 2` of the segment from (x0, y0) to (x1, y1), in pixel units, y up."""
    x, y = _pixels()
    dx, dy = x1 - x0, y1 - y0
    t = jnp.clip(((x - x0) * dx + (y - y0) * dy) / jnp.maximum(dx * dx + dy * dy, 1e-6), 0.0, 1.0)
    return (x - x0 - t * dx) ** 2 + (y - y0 - t * dy) ** 2 <= (width / 2) ** 2


def _disc(cx: Array | float, cy: Array | float, radius: float) -> Array:
    x, y = _pixels()
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius**2


def _blank() -> Array:
    return jnp.broadcast_to(jnp.asarray(_WHITE, jnp.uint8), (HEIGHT, WIDTH, 3))


def cartpole(env_state: Any, params: Any) -> Array:
    """The cart on its track (x in +-x_threshold across the frame) and the pole at angle theta from upright."""
    scale = WIDTH / (2 * float(params.x_threshold) * 1.2)
    track_y = 0.3 * HEIGHT
    cart_x = WIDTH / 2 + env_state.x * scale
    pole = 2 * float(params.length) * scale
    x, y = _pixels()
    image = _paint(_blank(), jnp.abs(y - track_y) < 0.75, _BLACK)
    cart = (jnp.abs(x - cart_x) <= 0.08 * WIDTH) & (y >= track_y) & (y <= track_y + 0.12 * HEIGHT)
    image = _paint(image, cart, _BLUE)
    top_y = track_y + 0.12 * HEIGHT
    tip_x, tip_y = cart_x + pole * jnp.sin(env_state.theta), top_y + pole * jnp.cos(env_state.theta)
    image = _paint(image, _segment(cart_x, jnp.asarray(top_y), tip_x, tip_y, 5.0), _ORANGE)
    return _paint(image, _disc(cart_x, top_y, 2.5), _BLACK)


def acrobot(env_state: Any, params: Any) -> Array:
    """Two links hanging from a pivot in the middle; the goal line above the pivot at one link's length."""
    reach = float(params.link_length_1 + params.link_length_2)
    scale = 0.45 * HEIGHT / reach
    cx, cy = WIDTH / 2, HEIGHT / 2
    a1, a2 = env_state.joint_angle1, env_state.joint_angle1 + env_state.joint_angle2
    x1 = cx + scale * float(params.link_length_1) * jnp.sin(a1)
    y1 = cy - scale * float(params.link_length_1) * jnp.cos(a1)
    x2 = x1 + scale * float(params.link_length_2) * jnp.sin(a2)
    y2 = y1 - scale * float(params.link_length_2) * jnp.cos(a2)
    _, y = _pixels()
    image = _paint(_blank(), jnp.abs(y - (cy + scale * float(params.link_length_1))) < 0.75, _GREEN)
    image = _paint(image, _segment(jnp.asarray(cx), jnp.asarray(cy), x1, y1, 5.0), _BLUE)
    image = _paint(image, _segment(x1, y1, x2, y2, 5.0), _BLUE)
    image = _paint(image, _disc(x1, y1, 3.0), _ORANGE)
    return _paint(image, _disc(cx, cy, 3.0), _BLACK)


def mountain_car(env_state: Any, params: Any) -> Array:
    """The valley `sin(3 x)`, the goal flag at `goal_position`, and the car as a disc on the slope."""
    low, high = float(params.min_position), float(params.max_position)
    x, y = _pixels()

    def to_x(position: Any) -> Any:
        return (position - low) / (high - low) * WIDTH

    def height_at(position: Any) -> Any:
        return (jnp.sin(3 * position) * 0.45 + 0.55) * 0.75 * HEIGHT + 0.1 * HEIGHT

    ground = height_at(low + x / WIDTH * (high - low))
    image = _paint(_blank(), y <= ground, _GREY)
    image = _paint(image, jnp.abs(y - ground) < 1.0, _BROWN)
    goal_x, goal_y = to_x(float(params.goal_position)), height_at(float(params.goal_position))
    image = _paint(image, (jnp.abs(x - goal_x) < 0.75) & (y >= goal_y) & (y <= goal_y + 16), _BLACK)
    image = _paint(image, (x >= goal_x) & (x <= goal_x + 8) & (y >= goal_y + 10) & (y <= goal_y + 16), _GREEN)
    return _paint(image, _disc(to_x(env_state.position), height_at(env_state.position) + 5, 5.0), _BLUE)


def pendulum(env_state: Any, params: Any) -> Array:
    """The rod from the pivot at angle theta from upright, and an arc showing the last torque's sign and size."""
    cx, cy = WIDTH / 2, HEIGHT / 2
    length = 0.4 * HEIGHT
    tip_x, tip_y = cx + length * jnp.sin(env_state.theta), cy + length * jnp.cos(env_state.theta)
    image = _paint(_blank(), _segment(jnp.asarray(cx), jnp.asarray(cy), tip_x, tip_y, 7.0), _ORANGE)
    torque = jnp.clip(env_state.last_u / float(params.max_torque), -1.0, 1.0)
    x, y = _pixels()
    angle = jnp.arctan2(x - cx, y - cy)
    ring = jnp.abs(jnp.sqrt((x - cx) ** 2 + (y - cy) ** 2) - 0.15 * HEIGHT) < 1.5
    swept = (angle * jnp.sign(torque) >= 0) & (jnp.abs(angle) <= jnp.abs(torque) * math.pi)
    image = _paint(image, ring & swept, _BLUE)
    return _paint(image, _disc(cx, cy, 3.0), _BLACK)


GYMNAX_DRAWINGS: dict[str, Callable[[Any, Any], Array]] = {
    "CartPole-v1": cartpole,
    "Acrobot-v1": acrobot,
    "MountainCar-v0": mountain_car,
    "ContinuousMountainCar-v0": mountain_car,
    "Pendulum-v1": pendulum,
}
"""gymnax env name -> its drawing from (`EnvState`, params)."""


OBSERVATION_SIDE = 192
"""About how many pixels the long side of one observation panel gets in `observation_frame`."""

_PANEL_PALETTE = np.asarray(
    [
        _BLUE,
        _ORANGE,
        _GREEN,
        (214, 39, 40),
        (148, 103, 189),
        (240, 200, 40),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (23, 190, 207),
    ],
    np.float32,
)
_ROW_CELLS = 32
"""A vector observation too long for bars is wrapped into rows of this many cells."""
_MAX_BARS = 96
"""A vector observation of at most this many numbers is drawn as bars."""
_BAR_HEIGHT = 96


def observation_frame(observation: Any) -> Array:
    """`uint8[H, W, 3]` of an observation pytree, for envs whose suite draws nothing: one panel per leaf, stacked.

    A leaf of shape `[..., H, W, C]` (a grid of channels, e.g. MinAtar's) is drawn as an image, channel `c` in
    its own colour, one copy per leading index side by side (every agent's view); a short vector as bars about
    a zero line; any other leaf as a grid of cells, positive values orange and negative blue, darker for larger
    magnitudes (a long vector wrapped into rows).
    Jittable: shapes depend only on the observation's shapes.
    """
    panels = [_panel(jnp.asarray(leaf)) for leaf in jax.tree_util.tree_leaves(observation)]
    if not panels:
        return _blank()
    width = max(panel.shape[1] for panel in panels)
    separator = jnp.full((4, width, 3), 255, jnp.uint8)
    rows = []
    for panel in panels:
        pad = jnp.full((panel.shape[0], width - panel.shape[1], 3), 255, jnp.uint8)
        rows += [jnp.concatenate([panel, pad], axis=1), separator]
    return jnp.concatenate(rows[:-1], axis=0)


def _panel(leaf: Array) -> Array:
    if leaf.ndim >= 3 and leaf.shape[-3] >= 2 and leaf.shape[-2] >= 2:
        images = leaf.reshape((-1, *leaf.shape[-3:]))
        pictures = [_channels_picture(image) for image in images[:8]]
        gap = jnp.full((pictures[0].shape[0], 4, 3), 255, jnp.uint8)
        return jnp.concatenate([part for picture in pictures for part in (picture, gap)][:-1], axis=1)
    values = leaf if leaf.ndim == 2 and min(leaf.shape) > 1 else leaf.reshape((-1,))
    if values.ndim == 1 and values.shape[0] <= _MAX_BARS:
        return _bars(values.astype(jnp.float32))
    if values.ndim == 1:
        rows = -(-values.shape[0] // _ROW_CELLS)
        values = jnp.pad(values.astype(jnp.float32), (0, rows * _ROW_CELLS - values.shape[0])).reshape(rows, _ROW_CELLS)
    return _values_picture(values.astype(jnp.float32))


def _bars(values: Array) -> Array:
    """A vector as bars about a grey zero line: up and orange for positive, down and blue for negative."""
    count = max(values.shape[0], 1)
    bar = max(4, OBSERVATION_SIDE // count)
    height = _BAR_HEIGHT
    rows = jnp.arange(height)[:, None]
    cols = jnp.arange(count * bar)[None, :]
    scaled = jnp.pad(values, (0, count - values.shape[0]))
    scaled = scaled / jnp.maximum(jnp.abs(scaled).max(), 1e-6)
    level = scaled[cols // bar] * (height / 2 - 2)
    up = (height / 2) - (rows + 0.5)
    inside = (cols % bar != bar - 1) & (((up >= 0) & (up <= level)) | ((up <= 0) & (up >= level)))
    image = jnp.broadcast_to(jnp.asarray(_WHITE, jnp.uint8), (height, count * bar, 3))
    image = _paint(image, inside & (level > 0), _ORANGE)
    image = _paint(image, inside & (level < 0), _BLUE)
    return _paint(image, rows == height // 2, _GREY)


def _enlarge(image: Array) -> Array:
    cell = max(1, min(16, OBSERVATION_SIDE // max(image.shape[0], image.shape[1])))
    return jnp.repeat(jnp.repeat(image, cell, axis=0), cell, axis=1)


def _channels_picture(image: Array) -> Array:
    """An `[H, W, C]` grid: RGB bytes as they are; otherwise each channel scaled to [0, 1] and tinted in its colour."""
    if image.shape[-1] == 3 and image.dtype == jnp.uint8:
        return _enlarge(image)
    values = image.astype(jnp.float32)
    low, high = values.min(), values.max()
    values = (values - low) / jnp.maximum(high - low, 1e-6)
    ink = 255.0 - jnp.asarray(np.resize(_PANEL_PALETTE, (image.shape[-1], 3)))
    picture = 255.0 - jnp.clip(jnp.einsum("hwc,cd->hwd", values, ink), 0.0, 255.0)
    return _enlarge(picture.astype(jnp.uint8))


def _values_picture(values: Array) -> Array:
    """A `[rows, cols]` grid of numbers: orange for positive, blue for negative, the largest magnitude darkest."""
    scaled = values / jnp.maximum(jnp.abs(values).max(), 1e-6)
    orange, blue = 255.0 - jnp.asarray(_ORANGE, jnp.float32), 255.0 - jnp.asarray(_BLUE, jnp.float32)
    ink = jnp.where(scaled[..., None] >= 0, orange, blue)
    picture = 255.0 - jnp.abs(scaled)[..., None] * ink
    picture = _enlarge(picture.astype(jnp.uint8))
    return picture


def mujoco_renderer_problem() -> str | None:
    """Why MuJoCo's renderer cannot start here (None where it may): it needs a display or EGL/OSMesa.

    Without a display and with `MUJOCO_GL` unset, MuJoCo would try GLFW and
    fail, so `MUJOCO_GL` is set to `egl` where libEGL is found (before
    mujoco is imported; it reads the variable once). Where something imported
    mujoco before that could happen, this says so instead of letting GLFW fail
    (or abort the process) when the first frame is drawn.
    """
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    if os.environ.get("MUJOCO_GL", "").lower() == "glfw":
        return (
            "MuJoCo's renderer on GLFW (MUJOCO_GL=glfw), which needs a display and found none; set MUJOCO_GL=egl "
            "(or osmesa) before starting Python, or unset it"
        )
    chosen = sys.modules.get("mujoco.rendering.classic.gl_context")
    if chosen is not None and getattr(chosen, "_MUJOCO_GL", None) == "":
        return (  # MuJoCo took GLFW when it was imported with MUJOCO_GL unset, and cannot change now
            "MuJoCo's renderer on GLFW, which needs a display: mujoco was first imported with MUJOCO_GL unset, by "
            "a library loaded before any env that draws with it; start Python with MUJOCO_GL=egl (or osmesa) set"
        )
    if os.environ.get("MUJOCO_GL"):
        return None
    if ctypes.util.find_library("EGL"):
        os.environ["MUJOCO_GL"] = "egl"
        return None
    if ctypes.util.find_library("OSMesa"):
        os.environ["MUJOCO_GL"] = "osmesa"
        return None
    return (
        "MuJoCo's renderer needs OpenGL and found no display, EGL or OSMesa here; "
        "install libEGL (apt install libegl1) or OSMesa (apt install libosmesa6), or set MUJOCO_GL"
    )


__all__ = [
    "GYMNAX_DRAWINGS",
    "HEIGHT",
    "OBSERVATION_SIDE",
    "RenderUnavailableError",
    "WIDTH",
    "mujoco_renderer_problem",
    "observation_frame",
]
