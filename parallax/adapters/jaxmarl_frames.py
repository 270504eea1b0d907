"""JaxMARL episodes drawn by JaxMARL's own visualisers, one drawing per family (`JaxMARLAdapter.render_trajectory`).

MPE through `MPEVisualizer`, SMAX and JaxNav through their envs' `init_render`
onto a matplotlib axis, Overcooked through `OvercookedVisualizer` (and V2's),
STORM through its env's `render`, MABrax through Brax's MuJoCo renderer;
Hanabi and Switch Riddle only print text, which is drawn into the frame, and
Coin Game, whose `render` no longer runs on matplotlib 3.10+, is drawn here
from its state. Everything runs on the host after the episode is recorded; jaxmarl,
matplotlib and the rasterisers are imported when a drawing is asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from parallax.adapters.frames import RenderUnavailableError, mujoco_renderer_problem
from parallax.adapters.host_frames import (
    draw_trajectory,
    each_step,
    figure_frame,
    printed,
    text_frame,
    use_offscreen_matplotlib,
)
from parallax.adapters.mujoco_warnings import mujoco_warnings_as_python_warnings

FIGURE_INCHES = 4.0
"""Side of the square matplotlib figures (400 pixels at 100 dpi)."""


def on_host(tree: Any) -> Any:
    """Every array leaf as numpy (PRNG keys, which numpy cannot hold, stay as they are)."""

    def convert(leaf: Any) -> Any:
        if isinstance(leaf, jax.Array) and jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            return leaf
        return np.asarray(leaf)

    return jax.tree_util.tree_map(convert, tree)


def _figure_drawing(draw_on: Callable[[Any, Any], None]) -> Callable[[Any], np.ndarray]:
    """A drawing that gives `draw_on(axis, state)` a fresh square figure and returns its pixels."""

    def draw(state: Any) -> np.ndarray:
        use_offscreen_matplotlib()
        from matplotlib.figure import Figure

        figure = Figure((FIGURE_INCHES, FIGURE_INCHES))
        draw_on(figure.add_subplot(111), state)
        return figure_frame(figure)

    return draw


def _mpe(env: Any, states: Any) -> np.ndarray:
    use_offscreen_matplotlib()
    import matplotlib.pyplot as plt
    from jaxmarl.environments.mpe.mpe_visualizer import MPEVisualizer

    steps = [on_host(state) for state in each_step(states)]
    visualizer = printed_quietly(lambda: MPEVisualizer(_ColoursIn255(env), steps))
    try:

        def draw(index: Any) -> np.ndarray:
            visualizer.update(int(index))
            return figure_frame(visualizer.fig)

        return draw_trajectory(np.arange(len(steps)), draw)
    finally:
        plt.close(visualizer.fig)


class _ColoursIn255:
    """An MPE env as `MPEVisualizer` reads it: one RGB colour in 0..255 per entity (simple_push lists its
    landmarks' colour as loose numbers, which the visualiser cannot hand to matplotlib)."""

    def __init__(self, env: Any):
        self._env = env
        colours = [np.broadcast_to(np.asarray(colour, np.float64).reshape(-1)[:3], (3,)) for colour in env.colour]
        colours += [np.full(3, 128.0)] * (int(env.num_entities) - len(colours))
        self.colour = [colour * 255 if colour.max() <= 1.0 else colour for colour in colours]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)


def _smax(env: Any, states: Any) -> np.ndarray:
    smax = getattr(env, "_env", env)
    idle = {agent: 0 for agent in smax.agents}

    def draw_on(axis: Any, state: Any) -> None:
        smax_state = on_host(getattr(state, "state", state))
        image = smax.init_render(axis, (None, smax_state, idle), 0, int(smax_state.step))
        axis.figure.clf()
        axis.figure.figimage(np.asarray(image.get_array()))

    return draw_trajectory(states, _figure_drawing(draw_on))


def _jaxnav(env: Any, states: Any) -> np.ndarray:
    draw_on = lambda axis, state: env.init_render(axis, on_host(state), lidar=False)  # noqa: E731 - lidar needs obs
    return draw_trajectory(states, _figure_drawing(draw_on))


def _overcooked(env: Any, states: Any) -> np.ndarray:
    from jaxmarl.environments.overcooked_v2.overcooked import OvercookedV2

    if isinstance(env, OvercookedV2):
        from jaxmarl.viz.overcooked_v2_visualizer import OvercookedV2Visualizer

        return np.asarray(OvercookedV2Visualizer().render_sequence(states), np.uint8)
    from jaxmarl.viz.overcooked_visualizer import TILE_PIXELS, OvercookedVisualizer

    padding = env.agent_view_size - 2

    def draw(state: Any) -> np.ndarray:
        state = on_host(state)
        return OvercookedVisualizer._render_grid(
            np.asarray(state.maze_map[padding:-padding, padding:-padding, :]),
            tile_size=TILE_PIXELS,
            highlight_mask=None,
            agent_dir_idx=state.agent_dir_idx,
            agent_inv=state.agent_inv,
        )

    return draw_trajectory(states, draw)


COIN_CELL = 64
"""Pixels of a Coin Game cell."""


def _coin_game(env: Any, states: Any) -> np.ndarray:
    """Coin Game's 3 x 3 grid drawn by us from its state: its own `render` calls `tostring_rgb`, which matplotlib
    3.10 removed. The red and blue players are large discs, their coins small ones with a dark rim."""
    rows, cols = np.mgrid[0 : 3 * COIN_CELL, 0 : 3 * COIN_CELL] + 0.5

    def disc(image: np.ndarray, position: Any, radius: float, colour: tuple[int, int, int]) -> None:
        row, col = (np.asarray(position).reshape(-1)[:2] + 0.5) * COIN_CELL
        inside = (rows - row) ** 2 + (cols - col) ** 2 <= radius**2
        image[inside] = colour

    def draw(state: Any) -> np.ndarray:
        state = on_host(state)
        image = np.full((3 * COIN_CELL, 3 * COIN_CELL, 3), 255, np.uint8)
        image[(rows.astype(int) % COIN_CELL == 0) | (cols.astype(int) % COIN_CELL == 0)] = (200, 200, 200)
        disc(image, state.red_pos, 0.4 * COIN_CELL, (214, 39, 40))
        disc(image, state.blue_pos, 0.3 * COIN_CELL, (31, 119, 180))
        for position, colour in ((state.red_coin_pos, (214, 39, 40)), (state.blue_coin_pos, (31, 119, 180))):
            disc(image, position, 0.16 * COIN_CELL, (40, 40, 40))
            disc(image, position, 0.12 * COIN_CELL, colour)
        return image

    return draw_trajectory(states, draw)


class _StormTimeBar:
    """A STORM env whose `render_time` works on numpy 2: JaxMARL's writes `numpy.int8(255)`, which overflows once
    a step has passed. The bars are the same: one cell per inner step played, one per outer round."""

    def __init__(self, env: Any):
        self._env = env

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)

    def render_time(self, state: Any, width_px: int) -> np.ndarray:
        tile_height = 32
        image = np.zeros((2 * tile_height, width_px, 3), np.uint8)
        for row, (done, total) in enumerate(
            ((state.step, self._env.num_inner_steps), (state.outer_t, self._env.num_outer_steps))
        ):
            image[row * tile_height : (row + 1) * tile_height, : int(done) * (width_px // int(total))] = 255
        return image


def _storm(env: Any, states: Any) -> np.ndarray:
    """STORM's own `render` (with its time bar fixed, `_StormTimeBar`), given its state with integer widths that
    do not overflow (the adapter keeps the narrower dtypes STORM's step returns)."""
    widened = lambda leaf: leaf.astype(np.int32) if np.issubdtype(leaf.dtype, np.integer) else leaf  # noqa: E731
    patched = _StormTimeBar(env)
    return draw_trajectory(
        states, lambda state: np.asarray(type(env).render(patched, jax.tree_util.tree_map(widened, on_host(state))))
    )


def _text(env: Any, states: Any) -> np.ndarray:
    return draw_trajectory(states, lambda state: text_frame(printed(lambda: env.render(on_host(state)))))


def _mabrax(env: Any, states: Any) -> np.ndarray:
    problem = mujoco_renderer_problem()
    if problem is not None:
        raise RenderUnavailableError(f"{type(env).__name__} renders through Brax with {problem}")
    brax_env = env.env
    trajectory = [state.pipeline_state for state in each_step(states)]
    with mujoco_warnings_as_python_warnings():
        frames = brax_env.render(trajectory, height=240, width=320)
    return np.stack([np.asarray(frame, np.uint8) for frame in frames])


def printed_quietly(build: Callable[[], Any]) -> Any:
    """`build()` with what it prints swallowed (MPE's visualiser reports its set-up on stdout)."""
    result: list[Any] = []
    printed(lambda: result.append(build()))
    return result[0]


DRAWINGS: dict[str, Callable[[Any, Any], np.ndarray]] = {
    "MPE": _mpe,
    "SMAX": _smax,
    "JaxNav": _jaxnav,
    "Overcooked": _overcooked,
    "Coin Game": _coin_game,
    "STORM": _storm,
    "Hanabi": _text,
    "Switch Riddle": _text,
    "MABrax": _mabrax,
}
"""JaxMARL family name -> its drawing of (the JaxMARL env, its states stacked on a time axis)."""


__all__ = ["DRAWINGS", "on_host"]
