"""Drawing primitives for `env.render(state)`.

Renders are pure `jnp` functions of the state returning `uint8[H, W, 3]`, so a
whole episode can be rendered under `jit`/`vmap`/`scan`. Shapes are static:
the canvas size is fixed by the env's config.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, UInt8

Color = tuple[int, int, int]

WHITE: Color = (255, 255, 255)
BLACK: Color = (0, 0, 0)
GREY: Color = (200, 200, 200)
GREEN: Color = (46, 160, 67)
RED: Color = (214, 39, 40)
BLUE: Color = (31, 119, 180)
ORANGE: Color = (255, 127, 14)
YELLOW: Color = (240, 200, 40)
PURPLE: Color = (148, 103, 189)
PALETTE: tuple[Color, ...] = (BLUE, ORANGE, GREEN, RED, PURPLE, YELLOW)
FINISH: Color = GREEN
"""The race track's finish column."""
RACER_PALETTE: tuple[Color, ...] = tuple(color for color in PALETTE if color != FINISH)
"""Racers' colours in slot order: never the finish column's, so no racer vanishes into it."""

Image = UInt8[Array, "height width 3"]


def canvas(height: int, width: int, color: Color = WHITE) -> Image:
    """A blank image."""
    return jnp.broadcast_to(jnp.asarray(color, jnp.uint8), (height, width, 3))


def _pixel_grid(image: Image) -> tuple[Array, Array]:
    rows = jnp.arange(image.shape[0])[:, None]
    cols = jnp.arange(image.shape[1])[None, :]
    return rows, cols


def paint(image: Image, mask: Array, color: Color, where: Array | bool = True) -> Image:
    """Colour the pixels in `mask` (boolean `[H, W]`) where `where` holds."""
    return jnp.where((mask & where)[..., None], jnp.asarray(color, jnp.uint8), image)


def fill_rect(
    image: Image,
    top: Array | int,
    left: Array | int,
    height: Array | int,
    width: Array | int,
    color: Color,
    where: Array | bool = True,
) -> Image:
    """Fill the rectangle of `height x width` pixels whose top-left corner is (`top`, `left`)."""
    rows, cols = _pixel_grid(image)
    mask = (rows >= top) & (rows < top + height) & (cols >= left) & (cols < left + width)
    return paint(image, mask, color, where)


def fill_circle(
    image: Image,
    center_row: Array | float,
    center_col: Array | float,
    radius: Array | float,
    color: Color,
    where: Array | bool = True,
) -> Image:
    """Fill a disc; centre and radius in pixels, fractional values allowed."""
    rows, cols = _pixel_grid(image)
    mask = (rows + 0.5 - center_row) ** 2 + (cols + 0.5 - center_col) ** 2 <= radius**2
    return paint(image, mask, color, where)


def grid_lines(image: Image, cell: int, color: Color = GREY) -> Image:
    """Draw the lines of a grid of `cell`-pixel squares."""
    rows, cols = _pixel_grid(image)
    return paint(image, (rows % cell == 0) | (cols % cell == 0), color)


def fill_circles(
    image: Image,
    center_rows: Array,
    center_cols: Array,
    radius: Array | float,
    colors: Array | np.ndarray,
    where: Array | bool = True,
) -> Image:
    """Fill `n` discs at once: disc `i` at (`center_rows[i]`, `center_cols[i]`) in `colors[i]` where `where[i]`.

    Vectorised over the discs, so drawing every agent is one array operation;
    where discs overlap, the lowest index is on top.
    """
    center_rows = jnp.asarray(center_rows, jnp.float32)
    center_cols = jnp.asarray(center_cols, jnp.float32)
    rows, cols = _pixel_grid(image)
    inside = (rows[None] + 0.5 - center_rows[:, None, None]) ** 2 + (cols[None] + 0.5 - center_cols[:, None, None]) ** 2
    inside = inside <= jnp.asarray(radius, jnp.float32) ** 2
    inside = inside & jnp.broadcast_to(jnp.asarray(where), center_rows.shape)[:, None, None]
    top = jnp.argmax(inside, axis=0)
    return jnp.where(inside.any(axis=0)[..., None], jnp.asarray(colors, jnp.uint8)[top], image)


def race_track(
    positions: Array, visible: Array, track_length: int, cell: int, colors: Array | np.ndarray | None = None
) -> Image:
    """A race as an image: one lane per agent, cells `0 .. track_length`, the finish column green.

    Agent `i` is a disc in lane `i` at cell `positions[i]`, drawn where
    `visible[i]`, ringed in black so it stands out on every cell; colours default to `RACER_PALETTE` in slot order.
    """
    num_lanes = positions.shape[0]
    if colors is None:
        colors = np.resize(np.asarray(RACER_PALETTE, np.uint8), (num_lanes, 3))
    width = (track_length + 1) * cell
    image = fill_rect(canvas(num_lanes * cell, width), 0, track_length * cell, num_lanes * cell, cell, FINISH)
    image = grid_lines(image, cell)
    rows, cols = (jnp.arange(num_lanes) + 0.5) * cell, (positions + 0.5) * cell
    rims = np.zeros((num_lanes, 3), np.uint8)
    image = fill_circles(image, rows, cols, 0.4 * cell, rims, visible)
    return fill_circles(image, rows, cols, 0.32 * cell, colors, visible)


def cell_coordinates(height: int, width: int, cell: int) -> tuple[Array, Array, Array, Array]:
    """Per pixel of a `height x width` image tiled by `cell`-pixel squares: its square's row and column,
    and its offset from the square's centre in square units (-0.5 .. 0.5), down then across.

    Shapes broadcast to `[height, width]`; use them to draw pieces on a board without a loop over cells.
    """
    rows = jnp.arange(height)[:, None]
    cols = jnp.arange(width)[None, :]
    down = ((rows % cell) + 0.5) / cell - 0.5
    across = ((cols % cell) + 0.5) / cell - 0.5
    return rows // cell, cols // cell, down, across
