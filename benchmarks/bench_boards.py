"""Board-game throughput: Parallax Zoo's TicTacToe, ConnectFour, Othello against Pgx, side by side.

Each run is one jitted `lax.scan` over `num_envs` games. Every run of both
loops does the same things:

1. draw the run's randomness up front, from the run's key, in two calls (one
   threefry pass each rather than three small ones per scan step): one
   uniform per game per step for the moves, and one key per game per step
   for the resets (`random_streams`);
2. at each step, pick one uniformly random legal move per game with
   `random_legal` from one mask row per game of the same width (Pgx:
   `legal_action_mask`; ours: the two players' rows or-ed without the no-op,
   see `random_turn_action`; the waiting player plays the no-op);
3. step every game with `jax.vmap` (ours: `VmapWrapper.step`, which returns
   full `MARLState`s: both players' observations, masks and rewards, the
   global observation; Pgx: `State`s with the mover's observation, mask and
   rewards);
4. reset finished games: build a batch of initial states from that step's
   keys (ours: `VmapWrapper.reset`; Pgx: `jax.vmap(env.init)`, which also
   draws the first player from its key), and select them with `jnp.where`
   where a game is done (ours: the selective `reset(key=, state=, done=)`).

Candidates are compiled ahead of time from cold caches (`timing.compare_compiled`:
compile wall and CPU seconds reported apart), then timed interleaved in one
process, `--repeats` times each, in wall and in CPU seconds (all threads).
The table shows the median env steps per second and the median and range of
the per-repeat ratio ours / Pgx, in wall and in CPU time (each repeat times
both back to back, so the ratios are paired).

    python benchmarks/bench_boards.py [--quick] [--repeats N] [--steps-budget N] [--games A,B] [--envs N,M]
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
import numpy as np
from jaxtyping import Array, Bool, Int, PRNGKeyArray
from timing import Timing, compare_compiled, print_table  # noqa: E402

from parallax import VmapWrapper  # noqa: E402
from parallax_zoo.envs.connect_four import ConnectFour  # noqa: E402
from parallax_zoo.envs.othello import Othello  # noqa: E402
from parallax_zoo.envs.tictactoe import TicTacToe  # noqa: E402

_WORD_BITS = 32


def random_streams(key: PRNGKeyArray, num_steps: int, num_envs: int) -> tuple[Array, PRNGKeyArray]:
    """A run's randomness, drawn up front: one uniform in [0, 1) and one reset key per game per scan step."""
    move_key, reset_key = jax.random.split(key)
    uniforms = jax.random.uniform(move_key, (num_steps, num_envs))
    return uniforms, jax.random.split(reset_key, (num_steps, num_envs))


def random_legal(u: Array, mask: Bool[Array, "... actions"]) -> Int[Array, ...]:
    """A uniformly random legal action per mask row from one uniform `u` per row: the k-th legal, k = floor(u * count).

    The row is packed into 32-bit words in one reduction; the legal count is
    their popcounts, and the k-th set bit's position is the number of the
    word's prefixes holding at most k set bits (no cumulative sum over the
    row, no argmax). Both steps are reductions, so XLA computes the action
    once per game whichever step reads it. A row with no legal action gives 0.
    """
    width = mask.shape[-1]
    num_words = -(-width // _WORD_BITS)
    padded = jnp.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, num_words * _WORD_BITS - width)])
    bit = np.left_shift(np.uint32(1), np.arange(_WORD_BITS, dtype=np.uint32))
    words = jnp.sum(
        jnp.where(padded.reshape(*mask.shape[:-1], num_words, _WORD_BITS), bit, np.uint32(0)), axis=-1, dtype=jnp.uint32
    )
    counts = jax.lax.population_count(words).astype(jnp.int32)
    count = jnp.sum(counts, axis=-1)
    k = jnp.minimum((u * count).astype(jnp.int32), count - 1)
    word, base, skipped, total = words[..., 0], jnp.zeros_like(k), jnp.zeros_like(k), counts[..., 0]
    for index in range(1, num_words):  # the word holding the k-th legal action, and the legal actions before it
        past = k >= total
        word = jnp.where(past, words[..., index], word)
        base = jnp.where(past, index * _WORD_BITS, base)
        skipped = jnp.where(past, total, skipped)
        total = total + counts[..., index]
    k = k - skipped
    prefixes = np.left_shift(np.uint32(2), np.arange(_WORD_BITS, dtype=np.uint32)) - np.uint32(1)  # bits 0..j
    below = jax.lax.population_count(word[..., None] & prefixes).astype(jnp.int32) <= k[..., None]
    base = base + jnp.sum(below, axis=-1, dtype=jnp.int32)  # a reduction: the action is computed once per game
    return base.astype(jnp.int32)


def random_turn_action(u: Array, mask: Bool[Array, "... 2 actions"]) -> Int[Array, "... 2"]:
    """A random legal joint action for a turn-based board game: a random legal move for the player to move, the no-op
    for the other.

    The waiting player's row allows only the no-op (the last index), so the
    mover's moves are the two rows or-ed without that index: one row per game
    of the same width as Pgx's mask, drawn by the same `random_legal`. Slot 0
    is the mover exactly when its no-op is not allowed.
    """
    move = random_legal(u, mask[..., 0, :-1] | mask[..., 1, :-1])
    mover = jnp.where(mask[..., 0, -1], 1, 0)
    return jnp.where(np.arange(2) == mover[..., None], move[..., None], mask.shape[-1] - 1)


def ours_rollout(env: Any, num_envs: int, num_steps: int) -> Callable[[PRNGKeyArray], Any]:
    """A jitted rollout of a Parallax Zoo board game: `VmapWrapper` plus selective reset."""
    venv = VmapWrapper(env, num_envs)

    def run(key: PRNGKeyArray) -> Any:
        key, start_key = jax.random.split(key)
        state = venv.reset(key=start_key)

        def body(state: Any, randomness: tuple[Array, PRNGKeyArray]) -> tuple[Any, None]:
            u, reset_keys = randomness
            state = venv.step(state, random_turn_action(u, state.agents.action_mask))
            return venv.reset(key=reset_keys, state=state, done=state.done), None

        state, _ = jax.lax.scan(body, state, random_streams(key, num_steps, num_envs))
        return state

    return jax.jit(run)


def pgx_rollout(env_id: str, num_envs: int, num_steps: int) -> Callable[[PRNGKeyArray], Any]:
    """A jitted rollout of a Pgx game: `jax.vmap` of `init`/`step`, finished games replaced by fresh ones."""
    import pgx

    env = pgx.make(env_id)  # type: ignore[arg-type]
    init = jax.vmap(env.init)
    step = jax.vmap(env.step)

    def run(key: PRNGKeyArray) -> Any:
        key, start_key = jax.random.split(key)
        state = init(jax.random.split(start_key, num_envs))

        def body(state: Any, randomness: tuple[Array, PRNGKeyArray]) -> tuple[Any, None]:
            u, reset_keys = randomness
            state = step(state, random_legal(u, state.legal_action_mask))
            fresh = init(reset_keys)
            done = jnp.asarray(state.terminated | state.truncated)
            state = jax.tree.map(
                lambda new, old: jnp.where(jnp.reshape(done, done.shape + (1,) * (old.ndim - 1)), new, old),
                fresh,
                state,
            )
            return state, None

        state, _ = jax.lax.scan(body, state, random_streams(key, num_steps, num_envs))
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
        "--steps-budget",
        type=int,
        default=None,
        help="env steps per timed run, spread over the batch (default 1_000_000, quick 20_000; 64 to 2_000 scan steps)",
    )
    parser.add_argument("--games", default=",".join(GAMES), help=f"comma-separated games (default: {','.join(GAMES)})")
    parser.add_argument("--envs", default="1,128,1024", help="comma-separated batch sizes (default 1,128,1024)")
    args = parser.parse_args()
    games = tuple(args.games.split(","))
    unknown = [game for game in games if game not in GAMES]
    if unknown:
        parser.error(f"unknown game(s) {', '.join(unknown)}; choose from {', '.join(GAMES)}")
    repeats = args.repeats or (3 if args.quick else 7)
    budget = args.steps_budget or (20_000 if args.quick else 1_000_000)

    def steps_for(num_envs: int) -> int:
        return max(64, min(2_000, budget // num_envs))

    print(f"jax {jax.__version__}, backend {jax.default_backend()}, devices {jax.devices()}")
    runs = candidates([int(n) for n in args.envs.split(",")], steps_for, games)
    key = jax.random.key(0)
    timings = compare_compiled(
        {f"{c.game}/{c.library}/{c.num_envs}": c.run for c in runs}, lambda i: jax.random.fold_in(key, i), repeats
    )

    def paired(ours: Timing, peer: Timing, cpu: bool) -> str:
        mine, theirs = (ours.runs_cpu_s, peer.runs_cpu_s) if cpu else (ours.runs_s, peer.runs_s)
        ratios = sorted(p / o for o, p in zip(mine, theirs, strict=True))
        return f"{statistics.median(ratios):.2f} ({ratios[0]:.2f}-{ratios[-1]:.2f})"

    rows = []
    for c in runs:
        if c.library != "ours":
            continue
        ours, peer = timings[f"{c.game}/ours/{c.num_envs}"], timings.get(f"{c.game}/pgx/{c.num_envs}")
        steps = c.num_envs * c.num_steps
        rows.append(
            (
                c.game,
                str(c.num_envs),
                str(c.num_steps),
                f"{steps / ours.median_s:.3e}",
                f"{steps / peer.median_s:.3e}" if peer else "-",
                paired(ours, peer, cpu=False) if peer else "-",
                paired(ours, peer, cpu=True) if peer else "-",
                f"{ours.compile_s:.2f} / {peer.compile_s:.2f}" if peer else f"{ours.compile_s:.2f}",
                f"{ours.compile_cpu_s:.2f} / {peer.compile_cpu_s:.2f}" if peer else f"{ours.compile_cpu_s:.2f}",
            )
        )
    print_table(
        f"median env steps/s over {repeats} interleaved runs (random legal moves, reset when done); "
        "ratios ours/pgx, median (range) of the paired runs",
        rows,
        (
            "game",
            "envs",
            "steps",
            "ours steps/s",
            "pgx steps/s",
            "wall ratio",
            "cpu ratio",
            "compile s ours / pgx",
            "compile cpu s ours / pgx",
        ),
    )


if __name__ == "__main__":
    main()
