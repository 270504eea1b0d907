"""The Pgx adapters against the real Pgx: the board convention, legal masks, rewards and observations game by game.

Every registered `pgx/` id passes `check_env`; a board game and a
single-player game run in the default suite, the rest with `--run-slow`. The boundary truths replay random legal games
in lockstep with Pgx's own `step`: the adapter hands Pgx the step key it derives from its state key
(`next_and_step_key`), so the raw game gets the same dice and deals.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pgx = pytest.importorskip("pgx")

import parallax_zoo  # noqa: E402
from parallax import Box, Env, MARLEnv, MultiBinary, TimeLimit, VmapWrapper, check_env  # noqa: E402
from parallax.adapters.base import next_and_step_key  # noqa: E402
from parallax.adapters.pgx import MaskedState, PgxAdapter, PgxSinglePlayerAdapter  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:.*player_id.*:DeprecationWarning")

DEFAULT_IDS = ("pgx/tic_tac_toe",)
SINGLE_PLAYER = ["2048"] + [g for g in pgx.available_envs() if g.startswith("minatar-")]
MULTI_PLAYER = [g for g in pgx.available_envs() if g not in SINGLE_PLAYER]
GAME_LENGTH = 600
"""Moves replayed per game in the slow lockstep checks: random play ends most of Pgx's games well within it."""


def ids():
    return [
        pytest.param(i, marks=() if i in DEFAULT_IDS else pytest.mark.slow)
        for i in parallax_zoo.list_envs(namespace="pgx")
    ]


def games(names, cheap):
    return [pytest.param(g, marks=() if g in cheap else pytest.mark.slow) for g in names]


@pytest.mark.parametrize("env_id", ids())
def test_every_registered_game_passes_check_env(env_id):
    check_env(parallax_zoo.make(env_id), num_steps=8)


def lockstep(game, num_games, length, seed=0):
    """Random legal games played by the adapter and by Pgx side by side; per step, what each reports.

    The waiting players' slots get random actions, which the adapter must
    ignore. `live` is true on the steps played before the game ended.
    """
    adapter = PgxAdapter(game)
    players = adapter.num_agents

    def one_game(key):
        reset_key, play_key = jax.random.split(key)
        state = adapter.reset(key=reset_key)

        def body(carry, step_key):
            state, raw, over = carry
            move_key, noise_key = jax.random.split(step_key)
            move = jax.random.categorical(move_key, jnp.where(raw.legal_action_mask, 0.0, -jnp.inf)).astype(jnp.int32)
            noise = jax.random.randint(noise_key, (players,), 0, adapter.num_moves + 1)
            action = jnp.where(jnp.arange(players) == raw.current_player, move, noise)
            nxt = adapter.step(state, action)
            raw_next = game.step(raw, move, next_and_step_key(state.key)[1])
            views = jnp.stack([game.observe(raw_next, p) for p in range(players)])
            record = {
                "live": ~over,
                "mask": nxt.agents.action_mask,
                "pgx_mask": raw_next.legal_action_mask,
                "mover": raw_next.current_player,
                "reward": nxt.agents.reward,
                "pgx_reward": raw_next.rewards,
                "termination": nxt.termination,
                "pgx_terminated": raw_next.terminated,
                "truncation": nxt.truncation,
                "observation": nxt.agents.observation,
                "pgx_observation": views,
                "active": nxt.agents.active,
            }
            return (nxt, raw_next, over | raw_next.terminated), record

        start = (state, state.env_state, jnp.zeros((), jnp.bool_))
        (_, _, ended), records = jax.lax.scan(body, start, jax.random.split(play_key, length))
        return ended, records

    keys = jax.random.split(jax.random.key(seed), num_games)
    ended, records = jax.jit(jax.vmap(one_game))(keys)
    return adapter, np.asarray(ended), jax.tree_util.tree_map(np.asarray, records)


@pytest.mark.parametrize("game_id", games(MULTI_PLAYER, cheap=("tic_tac_toe",)))
def test_masks_rewards_and_observations_agree_with_pgx_game_by_game(game_id):
    game = pgx.make(game_id)
    length = {"tic_tac_toe": 9, "kuhn_poker": 4}.get(game_id, GAME_LENGTH)
    adapter, ended, r = lockstep(game, num_games=32 if length < GAME_LENGTH else 8, length=length)
    assert ended.any(), f"no random game of {game_id} ended within {length} moves"
    if length < GAME_LENGTH:
        assert ended.all(), "every tic-tac-toe and Kuhn poker game ends within its bound"
    live = r["live"]
    np.testing.assert_array_equal(r["reward"][live], r["pgx_reward"][live])
    np.testing.assert_array_equal(r["termination"][live], r["pgx_terminated"][live])
    np.testing.assert_array_equal(r["observation"][live], r["pgx_observation"][live])
    assert r["active"].all() and not r["truncation"].any()
    players, no_op = adapter.num_agents, adapter.no_op
    only_no_op = np.arange(no_op + 1) == no_op
    for g, t in zip(*np.nonzero(live)):
        mask = r["mask"][g, t]
        if r["termination"][g, t]:
            np.testing.assert_array_equal(mask, np.broadcast_to(only_no_op, mask.shape))
            continue
        mover = r["mover"][g, t]
        np.testing.assert_array_equal(mask[mover, :no_op], r["pgx_mask"][g, t])
        assert not mask[mover, no_op]
        for waiting in set(range(players)) - {int(mover)}:
            np.testing.assert_array_equal(mask[waiting], only_no_op)
    # A decided game pays Pgx's final rewards on its last move, and the sums agree game by game.
    final = np.where(live[..., None], r["reward"], 0).sum(axis=1)
    np.testing.assert_array_equal(final, np.where(live[..., None], r["pgx_reward"], 0).sum(axis=1))


@pytest.mark.parametrize("game_id", games(SINGLE_PLAYER, cheap=("minatar-breakout",)))
def test_single_player_games_agree_with_pgx_step_by_step(game_id):
    game = pgx.make(game_id)
    adapter = PgxSinglePlayerAdapter(game)
    state = adapter.reset(key=jax.random.key(3))
    assert isinstance(state, MaskedState)

    def body(carry, key):
        state, raw = carry
        move = jax.random.categorical(key, jnp.where(raw.legal_action_mask, 0.0, -jnp.inf)).astype(jnp.int32)
        nxt = adapter.step(state, move)
        raw_next = game.step(raw, move, next_and_step_key(state.key)[1])
        fresh = adapter.reset(key=key)
        record = (
            nxt.observation,
            raw_next.observation,
            nxt.reward,
            raw_next.rewards[0],
            nxt.termination,
            raw_next.terminated,
            nxt.action_mask,
            raw_next.legal_action_mask,
        )
        # Both sides restart together from the adapter's reset when the game ends.
        following = jax.tree_util.tree_map(lambda a, b: jnp.where(nxt.done, a, b), fresh, nxt)
        return (following, following.env_state), record

    steps = 2600 if game_id == "minatar-freeway" else 300  # Freeway ends only after its 2500 frames
    _, records = jax.jit(lambda s, k: jax.lax.scan(body, (s, s.env_state), jax.random.split(k, steps)))(
        state, jax.random.key(4)
    )
    obs, pgx_obs, reward, pgx_reward, term, pgx_term, mask, pgx_mask = map(np.asarray, records)
    assert term.any(), f"random play of {game_id} never ended in {steps} steps"
    np.testing.assert_array_equal(obs, pgx_obs)
    np.testing.assert_array_equal(reward, pgx_reward)
    np.testing.assert_array_equal(term, pgx_term)
    np.testing.assert_array_equal(mask, pgx_mask)


@pytest.fixture(scope="module")
def tic_tac_toe():
    return PgxAdapter(pgx.make("tic_tac_toe"))


def test_an_illegal_move_or_the_movers_no_op_loses_with_pgx_penalty(tic_tac_toe):
    state = tic_tac_toe.reset(key=jax.random.key(0))
    mover = int(state.env_state.current_player)
    for move in (tic_tac_toe.no_op, 99, -3):
        action = jnp.zeros(2, jnp.int32).at[mover].set(move)
        ended = tic_tac_toe.step(state, action)
        assert bool(ended.termination)
        assert ended.agents.reward[mover] == -1.0 and ended.agents.reward[1 - mover] == 1.0
    occupied = tic_tac_toe.step(state, jnp.zeros(2, jnp.int32).at[mover].set(4))
    again = tic_tac_toe.step(occupied, jnp.full(2, 4, jnp.int32))
    assert bool(again.termination) and again.agents.reward[1 - mover] == -1.0


def test_spaces_follow_what_pgx_emits_with_bounds(tic_tac_toe):
    assert tic_tac_toe.observation_space == MultiBinary((2, 3, 3, 2), jnp.bool_)
    assert tic_tac_toe.action_space.n == 10 and tic_tac_toe.action_space.shape == (2,)
    backgammon = PgxAdapter(pgx.make("backgammon"))
    space = backgammon.observation_space
    assert isinstance(space, Box) and space.dtype == jnp.int32 and space.shape == (2, 34)
    np.testing.assert_array_equal(space.low[0], [-15] * 28 + [0] * 6)
    np.testing.assert_array_equal(space.high[0], [15] * 28 + [4] * 6)
    chess_space = PgxAdapter(pgx.make("gardner_chess")).observation_space
    assert isinstance(chess_space, Box) and chess_space.dtype == jnp.float32 and chess_space.shape == (2, 5, 5, 115)
    assert chess_space.low.min() == 0.0 and chess_space.high.max() == 1.0


def test_the_key_advances_every_step(tic_tac_toe):
    state = tic_tac_toe.reset(key=jax.random.key(0))
    action = jnp.argmax(state.agents.action_mask, axis=-1).astype(jnp.int32)
    following = tic_tac_toe.step(state, action)
    assert not np.array_equal(jax.random.key_data(state.key), jax.random.key_data(following.key))


def test_who_moves_first_is_pgxs_random_choice(tic_tac_toe):
    batch = VmapWrapper(tic_tac_toe, num_envs=32).reset(key=jax.random.key(0))
    first = np.asarray(batch.env_state.current_player)
    assert set(first.tolist()) == {0, 1}
    mover_rows = np.asarray(batch.agents.action_mask)[np.arange(32), first]
    assert mover_rows[:, :9].all() and not mover_rows[:, 9].any()


def test_the_adapters_refuse_the_wrong_kind_of_game():
    with pytest.raises(ValueError, match="PgxSinglePlayerAdapter"):
        PgxAdapter(pgx.make("2048"))
    with pytest.raises(ValueError, match="PgxAdapter"):
        PgxSinglePlayerAdapter(pgx.make("tic_tac_toe"))
    with pytest.raises(TypeError, match="pgx.make"):
        PgxAdapter(object())  # type: ignore[arg-type]


def test_registry_builds_the_right_adapter_with_the_games_settings():
    go = parallax_zoo.make("pgx/go_9x9")
    assert isinstance(go, PgxAdapter) and isinstance(go, MARLEnv)
    assert go.observation_space.shape == (2, 9, 9, 17) and go.num_moves == 82
    smaller = parallax_zoo.make("pgx/go_9x9", size=5)
    assert smaller.num_moves == 26
    solo = parallax_zoo.make("pgx/2048")
    assert isinstance(solo, PgxSinglePlayerAdapter) and isinstance(solo, Env)
    sticky = parallax_zoo.make("pgx/minatar-breakout", sticky_action_prob=0.0)
    assert isinstance(sticky, TimeLimit) and sticky.max_steps == 1000, "MinAtar takes gymnax's limits (registry.yaml)"
    assert isinstance(sticky.env, PgxSinglePlayerAdapter) and sticky.env.env.sticky_action_prob == 0.0
    assert parallax_zoo.spec("pgx/go_9x9").num_agents == 2 and parallax_zoo.spec("pgx/sparrow_mahjong").num_agents == 3
    assert parallax_zoo.spec("pgx/go_9x9").max_steps is None


def test_a_time_limit_given_to_the_registry_truncates_pgx_games(scratch_registry):
    scratch_registry.register(
        {
            "id": "pgx/connect_four",
            "adapter": "pgx",
            "foreign_id": "connect_four",
            "max_steps": 3,
            "multi_agent": True,
            "num_agents": 2,
        },
        override=True,
    )
    env = parallax_zoo.make("pgx/connect_four")
    assert isinstance(env, TimeLimit)
    state = env.reset(key=jax.random.key(0))
    flags = []
    for _ in range(3):
        state = env.step(state, jnp.argmax(state.agents.action_mask, axis=-1).astype(jnp.int32))
        flags.append(bool(state.truncation))
    assert flags == [False, False, True]
