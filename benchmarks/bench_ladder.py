"""Cost per move of each opponent-ladder player (parallax_zoo.agents.ladder) on a batch of positions.

Each candidate is one jitted call of the player, mapped with `per_slot` over
`num_envs` games and both slots (the waiting slot's call is part of the cost,
as in evaluation), on positions reached by random play from each game's
start. Compile time is reported apart; the table gives the median time of a
call, its range, and microseconds per game-move.

    python benchmarks/bench_ladder.py [--num-envs N] [--repeats N] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a checkout without installing

import jax
import jax.numpy as jnp

from benchmarks.timing import compare, print_table
from parallax import VmapWrapper
from parallax_zoo.agents import ladder
from parallax_zoo.envs.connect_four import ConnectFour
from parallax_zoo.envs.othello import Othello
from parallax_zoo.envs.tictactoe import TicTacToe

GAMES = {"TicTacToe": TicTacToe, "ConnectFour": ConnectFour, "Othello": Othello}
OPENING_PLIES = {"TicTacToe": 3, "ConnectFour": 8, "Othello": 12}


def positions(game: str, num_envs: int) -> tuple[jax.Array, jax.Array]:
    """Observations and masks `[num_envs, 2, ...]` after a few random plies (finished games reset)."""
    venv = VmapWrapper(GAMES[game](), num_envs)
    state = venv.reset(key=jax.random.key(0))
    for ply in range(OPENING_PLIES[game]):
        mask = state.agents.action_mask
        action = jax.random.categorical(jax.random.key(ply + 1), jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)
        state = venv.step(state, action)
        state = venv.reset(key=jax.random.key(100 + ply), state=state, done=state.done)
    return state.agents.observation, state.agents.action_mask


def main() -> None:
    parser = argparse.ArgumentParser(description="Cost per move of each opponent-ladder player.")
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=None, help="player names to time (default: all)")
    args = parser.parse_args()
    rows = []
    for game, players in ladder.LADDER.items():
        observation, mask = positions(game, args.num_envs)
        for name, player in players.items():
            if args.only and name not in args.only:
                continue
            act = jax.jit(ladder.per_slot(player))
            timing = compare({name: functools.partial(act, observation, mask)}, repeats=args.repeats)[name]
            per_move_us = timing.median_s / args.num_envs * 1e6
            rows.append(
                (
                    game,
                    name,
                    f"{timing.compile_s:.2f}",
                    f"{timing.median_s * 1e3:.1f}",
                    f"{min(timing.runs_s) * 1e3:.1f}-{max(timing.runs_s) * 1e3:.1f}",
                    f"{per_move_us:.1f}",
                )
            )
    print_table(
        f"ladder players, {args.num_envs} games x 2 slots per call, {jax.default_backend()}",
        rows,
        ("game", "player", "compile s", "median ms", "range ms", "us per game-move"),
    )


if __name__ == "__main__":
    main()
