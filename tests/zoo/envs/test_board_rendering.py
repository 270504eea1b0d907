"""The drawing pieces the board games add: `cell_coordinates` and `board.render_discs`."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from parallax_zoo.envs.board import render_discs
from parallax_zoo.envs.rendering import BLACK, GREEN, GREY, RED, cell_coordinates


def test_cell_coordinates_index_squares_and_centre_offsets() -> None:
    row, col, down, across = cell_coordinates(4, 6, 2)
    np.testing.assert_array_equal(row[:, 0], [0, 0, 1, 1])
    np.testing.assert_array_equal(col[0], [0, 0, 1, 1, 2, 2])
    # Pixel centres sit a quarter of a 2-pixel square either side of the square's centre.
    np.testing.assert_allclose(down[:, 0], [-0.25, 0.25, -0.25, 0.25])
    np.testing.assert_allclose(across[0], [-0.25, 0.25] * 3)


def test_render_discs_paints_one_disc_per_piece() -> None:
    grid = jnp.asarray([[1, 0], [0, -1]], jnp.int8)
    image = jax.jit(lambda g: render_discs(g, 10, GREEN, GREY, {1: RED, -1: BLACK}))(grid)
    assert image.shape == (20, 20, 3) and image.dtype == jnp.uint8
    np.testing.assert_array_equal(image[5, 5], RED)
    np.testing.assert_array_equal(image[15, 15], BLACK)
    np.testing.assert_array_equal(image[5, 15], GREEN)  # an empty square
    np.testing.assert_array_equal(image[1, 1], GREEN)  # a corner of a square, outside the disc
    np.testing.assert_array_equal(image[10, 3], GREY)  # a grid line
