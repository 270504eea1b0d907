"""Plain-Python rules of tic-tac-toe, Connect Four and Othello: an independent oracle for the board-game tests.

Boards are lists in row-major order: +1 slot 0, -1 slot 1, 0 empty. Written
with loops over cells and directions, nothing shared with the JAX envs.
"""

from __future__ import annotations

DIRECTIONS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]


def has_line(cells: list[int], height: int, width: int, mark: int, length: int) -> bool:
    """Whether `mark` has `length` in a row anywhere (across, down or diagonally)."""
    for row in range(height):
        for col in range(width):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                squares = [(row + k * dr, col + k * dc) for k in range(length)]
                if all(0 <= r < height and 0 <= c < width and cells[r * width + c] == mark for r, c in squares):
                    return True
    return False


def connect_four_drop(cells: list[int], column: int, mark: int) -> list[int] | None:
    """The board after dropping `mark` into `column` (6x7), or None when the column is full."""
    for row in range(5, -1, -1):
        if cells[row * 7 + column] == 0:
            after = list(cells)
            after[row * 7 + column] = mark
            return after
    return None


def othello_flips(cells: list[int], cell: int, mark: int) -> list[int]:
    """The cells a disc of `mark` placed on empty `cell` turns over (8x8)."""
    if cells[cell] != 0:
        return []
    row, col = divmod(cell, 8)
    flipped = []
    for dr, dc in DIRECTIONS:
        run = []
        r, c = row + dr, col + dc
        while 0 <= r < 8 and 0 <= c < 8 and cells[r * 8 + c] == -mark:
            run.append(r * 8 + c)
            r, c = r + dr, c + dc
        if run and 0 <= r < 8 and 0 <= c < 8 and cells[r * 8 + c] == mark:
            flipped.extend(run)
    return flipped


def othello_legal(cells: list[int], mark: int) -> list[bool]:
    """For each of the 64 cells, whether `mark` may place there."""
    return [bool(othello_flips(cells, cell, mark)) for cell in range(64)]


def othello_play(cells: list[int], cell: int, mark: int) -> list[int]:
    """The board after `mark` places on `cell`, flipping what it flanks."""
    after = list(cells)
    for flipped in othello_flips(cells, cell, mark) + [cell]:
        after[flipped] = mark
    return after
