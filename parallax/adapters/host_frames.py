"""Frames drawn on the host by a suite's own renderer: SVG rasterised, matplotlib figures and text as pixels.

The adapters whose suite draws outside `jit` (Pgx's SVG boards, Jumanji's
and JaxMARL's matplotlib viewers, XLand-MiniGrid's numpy tiles) record an
episode first and draw it after, through `render_trajectory(states)`
(docs/getting-started.md, "Rendering"). These helpers turn what a suite draws into
`uint8[H, W, 3]` frames; the rasteriser (resvg-py) and matplotlib are
imported only when used.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np

from parallax.adapters.frames import RenderUnavailableError

TEXT_WIDTH = 96
"""Characters per line of a text frame; longer lines are cut."""

_EMBEDDED_IMAGE = re.compile(r'(data:image/[a-z]+;base64,)([^"]*)')
"""A base64 image inside an SVG; matplotlib's (Pgx's MinAtar) wraps it in lines, which resvg cannot decode."""

_POINT_SIZE = re.compile(r'\b(width|height)="([0-9.]+)pt"')
"""A size in points (matplotlib's SVGs), which resvg-py refuses; it becomes pixels (4/3 of a point)."""


def each_step(states: Any) -> Iterator[Any]:
    """The states of a trajectory (every leaf stacked on a leading time axis), one step at a time."""
    length = int(jax.tree_util.tree_leaves(states)[0].shape[0])
    for step in range(length):
        yield jax.tree_util.tree_map(lambda leaf, step=step: leaf[step], states)


def draw_trajectory(states: Any, draw: Callable[[Any], np.ndarray]) -> np.ndarray:
    """`uint8[T, H, W, 3]`: `draw(state)` of every step, padded with white to the largest frame."""
    frames = [as_rgb(draw(state)) for state in each_step(states)]
    height = max(frame.shape[0] for frame in frames)
    width = max(frame.shape[1] for frame in frames)
    padded = np.full((len(frames), height, width, 3), 255, np.uint8)
    for index, frame in enumerate(frames):
        padded[index, : frame.shape[0], : frame.shape[1]] = frame
    return padded


def as_rgb(image: Any) -> np.ndarray:
    """An image as `uint8[H, W, 3]`: RGBA composited on white, grey repeated, floats in [0, 1] or [0, 255] scaled."""
    array = np.asarray(image)
    if array.dtype != np.uint8:
        array = np.asarray(array, np.float64)
        array = array * 255 if array.size and array.max() <= 1.0 else array
        array = np.clip(np.rint(array), 0, 255).astype(np.uint8)
    if array.ndim == 2:
        array = np.repeat(array[..., None], 3, axis=-1)
    if array.shape[-1] == 4:
        alpha = array[..., 3:].astype(np.float32) / 255
        array = np.rint(array[..., :3] * alpha + 255 * (1 - alpha)).astype(np.uint8)
    return np.ascontiguousarray(array[..., :3])


def svg_frame(svg: str) -> np.ndarray:
    """An SVG document rasterised at its own size (resvg-py, a self-contained wheel: `pip install resvg-py`)."""
    try:
        import resvg_py
    except ModuleNotFoundError:
        raise RenderUnavailableError(
            "drawing SVG boards needs resvg-py, which is not installed; "
            "install it with: pip install 'parallax-zoo[pgx]'"
        ) from None
    from PIL import Image

    svg = _EMBEDDED_IMAGE.sub(lambda match: match.group(1) + "".join(match.group(2).split()), svg)
    svg = _POINT_SIZE.sub(lambda match: f'{match.group(1)}="{float(match.group(2)) * 4 / 3:.3f}"', svg, count=2)
    png = resvg_py.svg_to_bytes(svg_string=svg, background="white")
    return as_rgb(Image.open(io.BytesIO(bytes(png))).convert("RGB"))


def use_offscreen_matplotlib() -> None:
    """Select matplotlib's Agg backend where there is no display, so that viewers draw off-screen."""
    import matplotlib

    if not os.environ.get("DISPLAY"):
        matplotlib.use("Agg")


def figure_frame(figure: Any) -> np.ndarray:
    """A matplotlib figure's pixels (drawn on its Agg canvas; a bare `Figure` gets one)."""
    if not hasattr(figure.canvas, "buffer_rgba"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(figure)
    figure.canvas.draw()
    return as_rgb(np.asarray(figure.canvas.buffer_rgba()))


def text_frame(text: str, max_lines: int = 40) -> np.ndarray:
    """Text drawn black on white in PIL's default font: the picture of a game that has only text."""
    from PIL import Image, ImageDraw, ImageFont

    lines = [line[:TEXT_WIDTH] for line in text.rstrip("\n").splitlines()[:max_lines]] or [""]
    font = ImageFont.load_default(size=12)
    line_height = 14
    width = 8 + int(max(font.getlength(line) for line in lines))
    image = Image.new("RGB", (max(width, 64), 8 + line_height * len(lines)), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(lines):
        draw.text((4, 4 + row * line_height), line, fill=(0, 0, 0), font=font)
    return np.asarray(image, np.uint8)


def printed(show: Callable[[], Any]) -> str:
    """What `show()` prints: the text a suite's console renderer writes."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        show()
    return buffer.getvalue()


__all__ = [
    "as_rgb",
    "draw_trajectory",
    "each_step",
    "figure_frame",
    "printed",
    "svg_frame",
    "text_frame",
    "use_offscreen_matplotlib",
]
