"""Board-game throughput: Parallax Zoo's TicTacToe, ConnectFour, Othello against Pgx, side by side.

Each run is one jitted `lax.scan` over `num_envs` games. Every scan step of
both loops does the same things:

1. split the loop key in three (loop key, action key, reset key);
2. draw one uniformly random legal move per game with `random_legal` from one
   mask row per game of the same width (Pgx: `legal_action_mask`; ours: the
   two players' rows or-ed without the no-op, see `random_turn_action`; the
   waiting player plays the no-op);
3. step every game with `jax.vmap` (ours: `VmapWrapper.step`, which returns
   full `MARLState`s: both players' observations, masks and rewards, the
   global observation; Pgx: `State`s with the mover's observation, mask and
   rewards);
4. reset finished games: split the reset key into one key per game, build a
   batch of initial states from those keys (ours: `VmapWrapper.reset`; Pgx:
   `jax.vmap(env.init)`, which also draws the first player from its key), and
   select them with `jnp.where` where a game is done (ours: the selective
   `reset(key=, state=, done=)`).

Candidates are compiled first (compile time reported separately), then timed
interleaved in one process, `--repeats` times each. The table shows the median
env steps per second and the median and range of the per-repeat ratio
ours / Pgx (each repeat times both back to back, so the ratio is paired).

    python benchmarks/bench_boards.py [--quick] [--repeats N] [--steps-budget N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a checkout without installing

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Int, PRNGKeyArray

from parallax import VmapWrapper  # noqa: E402
from parallax_zoo.envs.connect_four import ConnectFour  # noqa: E402
from parallax_zoo.envs.othello import Othello  # noqa: E402
from parallax_zoo.envs.tictactoe import TicTacToe  # noqa: E402


def random_legal(key: PRNGKeyArray, mask: Bool[Array, "... actions"]) -> Int[Array, "..."]:
    """A uniformly random legal action per mask row: one uniform draw, then the k-th legal index.

    The legal count is the last running count, so the row is summed once.
    """
    running = jnp.cumsum(mask, axis=-1, dtype=jnp.int32)
    count = running[..., -1]
    u = jax.random.uniform(key, count.shape)
    k = jnp.minimum((u * count).astype(jnp.int32), count - 1)
    return jnp.argmax(running > k[..., None], axis=-1).astype(jnp.int32)


def random_turn_action(key: PRNGKeyArray, mask: Bool[Array, "... 2 actions"]) -> Int[Array, "... 2"]:
    """A random legal joint action for a turn-based board game: a random legal move for the player to move, the no-op for the other.

    The waiting player's row allows only the no-op (the last index), so the
    mover's moves are the two rows or-ed without that index: one row per game
    of the same width as Pgx's mask, drawn by the same `random_legal`. Slot 0
    is the mover exactly when its no-op is not allowed.
    """
    move = random_legal(key, mask[..., 0, :-1] | mask[..., 1, :-1])
    slot0_moves = ~mask[..., 0, -1]
    no_op = mask.shape[-1] - 1
    return jnp.stack([jnp.where(slot0_moves, move, no_op), jnp.where(slot0_moves, no_op, move)], axis=-1)


def ours_rollout(env: Any, num_envs: int, num_steps: int) -> Callable[[PRNGKeyArray], Any]:
    """A jitted rollout of a Parallax Zoo board game: `VmapWrapper` plus selective reset."""
    venv = VmapWrapper(env, num_envs)

    def run(key: PRNGKeyArray) -> Any:
        key, reset_key = jax.random.split(key)
        state = venv.reset(key=reset_key)

        def body(carry: tuple[Any, PRNGKeyArray], _: None) -> tuple[tuple[Any, PRNGKeyArray], None]:
            state, key = carry
            key, action_key, reset_key = jax.random.split(key, 3)
            action = random_turn_action(action_key, state.agents.action_mask)
            state = venv.step(state, action)
            state = venv.reset(key=reset_key, state=state, done=state.done)
            return (state, key), None

        (state, _), _ = jax.lax.scan(body, (state, key), None, length=num_steps)
        return state

    return jax.jit(run)


def pgx_rollout(env_id: str, num_envs: int, num_steps: int) -> Callable[[PRNGKeyArray], Any]:
    """A jitted rollout of a Pgx game: `jax.vmap` of `init`/`step`, finished games replaced by fresh ones."""
    import pgx

    env = pgx.make(env_id)  # type: ignore[arg-type]
    init = jax.vmap(env.init)
    step = jax.vmap(env.step)

    def run(key: PRNGKeyArray) -> Any:
        key, reset_key = jax.random.split(key)
        state = init(jax.random.split(reset_key, num_envs))

        def body(carry: tuple[Any, PRNGKeyArray], _: None) -> tuple[tuple[Any, PRNGKeyArray], None]:
            state, key = carry
            key, action_key, reset_key = jax.random.split(key, 3)
            action = random_legal(action_key, state.legal_action_mask)
            state = step(state, action)
            fresh = init(jax.random.split(reset_key, num_envs))
            done = jnp.asarray(state.terminated | state.truncated)
            state = jax.tree.map(
                lambda new, old: jnp.where(jnp.reshape(done, done.shape + (1,) * (old.ndim - 1)), new, old), fresh, state
            )
            return (state, key), None

        (state, _), _ = jax.lax.scan(body, (state, key), None, length=num_steps)
        return state

    return jax.jit(run)


@dataclass
class Candidate:
    """One (library, game, batch size) to time."""

    game: str
    library: str
    num_envs: int
    num_steps: int
    run: Callable[[PRNGKeyArray], Any]
    compile_s: float = 0.0
    times: list[float] | None = None

    def compile(self, key: PRNGKeyArray) -> None:
        start = time.perf_counter()
        jax.block_until_ready(self.run(key))
        self.compile_s = time.perf_counter() - start
        self.times = []

    def time_once(self, key: PRNGKeyArray) -> None:
        start = time.perf_counter()
        jax.block_until_ready(self.run(key))
        assert self.times is not None
        self.times.append(time.perf_counter() - start)

    @property
    def steps_per_second(self) -> float:
        assert self.times
        return self.num_envs * self.num_steps / statistics.median(self.times)


def paired_ratios(ours: Candidate, peer: Candidate) -> list[float]:
    """Ours' speed over the peer's, repeat by repeat (both timed back to back in each repeat)."""
    assert ours.times and peer.times
    return sorted(p / o for o, p in zip(ours.times, peer.times, strict=True))


GAMES: dict[str, tuple[Callable[[], Any], str | None]] = {
    "tic_tac_toe": (TicTacToe, "tic_tac_toe"),
    "connect_four": (ConnectFour, "connect_four"),
    "othello": (Othello, "othello"),
}
"""Each game's name: our env class and the Pgx id it is timed against."""


def candidates(
    batch_sizes: list[int], steps_for: Callable[[int], int], games: tuple[str, ...] = tuple(GAMES)
) -> list[Candidate]:
    """Every game of `games` at every batch size, ours and Pgx's."""
    result = []
    for name in games:
        make, pgx_id = GAMES[name]
        env = make()
        for n in batch_sizes:
            steps = steps_for(n)
            result.append(Candidate(name, "ours", n, steps, ours_rollout(env, n, steps)))
            if pgx_id is not None:
                result.append(Candidate(name, "pgx", n, steps, pgx_rollout(pgx_id, n, steps)))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer steps and repeats (a smoke run)")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs per candidate (default 7, quick 3)")
    parser.add_argument(
        "--steps-budget", type=int, default=None,
        help="env steps per timed run, spread over the batch (default 1_000_000, quick 20_000; 64 to 2_000 scan steps)",
    )
    args = parser.parse_args()
    repeats = args.repeats or (3 if args.quick else 7)
    budget = args.steps_budget or (20_000 if args.quick else 1_000_000)

    def steps_for(num_envs: int) -> int:
        return max(64, min(2_000, budget // num_envs))

    print(f"jax {jax.__version__}, backend {jax.default_backend()}, devices {jax.devices()}")
    runs = candidates([1, 128, 1024], steps_for)
    key = jax.random.key(0)
    for candidate in runs:
        candidate.compile(key)
    for repeat in range(repeats):
        for candidate in runs:
            candidate.time_once(jax.random.fold_in(key, repeat + 1))

    print(f"\nmedian env steps/s over {repeats} interleaved runs (random legal moves, reset when done)")
    print(f"{'game':<13} {'envs':>5} {'steps':>6} {'ours steps/s':>14} {'pgx steps/s':>14} {'ours/pgx':>9} "
          f"{'ratio range':>12} {'ours compile s':>15} {'pgx compile s':>14}")
    by_key = {(c.game, c.library, c.num_envs): c for c in runs}
    for c in runs:
        if c.library != "ours":
            continue
        peer = by_key.get((c.game, "pgx", c.num_envs))
        peer_rate = f"{peer.steps_per_second:14.3e}" if peer else f"{'-':>14}"
        ratios = paired_ratios(c, peer) if peer else []
        ratio = f"{statistics.median(ratios):9.2f}" if peer else f"{'-':>9}"
        spread = f"{ratios[0]:5.2f}-{ratios[-1]:<6.2f}" if peer else f"{'-':>12}"
        peer_compile = f"{peer.compile_s:14.2f}" if peer else f"{'-':>14}"
        print(f"{c.game:<13} {c.num_envs:>5} {c.num_steps:>6} {c.steps_per_second:14.3e} {peer_rate} {ratio} "
              f"{spread:>12} {c.compile_s:15.2f} {peer_compile}")


if __name__ == "__main__":
    main()
