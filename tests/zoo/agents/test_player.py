"""The `Player` protocol: every shipped baseline acts with `act` as a user calls it, and every player satisfies it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import parallax_zoo
from parallax.core import MARLState
from parallax_zoo.agents.player import Player
from parallax_zoo.agents.player_factories import as_player, opponent_player, random_player, scripted_rule
from parallax_zoo.agents.players import Greedy, MaskedScriptedPlayer, Matchup, Rotation, ScriptedPlayer
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.search import SearchPlayer
from parallax_zoo.agents.slots import read_slots
from parallax_zoo.catalogue.registry import RegistryError


@jax.jit
def rollout_step(player: Player, states: MARLState, key: jax.Array) -> jax.Array:
    """What the rollout plays: the player's slot actions for the states' slots, as the env's action."""
    return player.env_action(player.act_slots(read_slots(states), key)[0])


def opening_positions(env_id: str, moves: int, games: int = 4) -> MARLState:
    """`games` positions after `moves` random legal moves each: a batch of states, as `VmapWrapper` keeps them."""
    env = parallax_zoo.make(env_id)
    rules = random_player(env)
    states = jax.vmap(lambda key: env.reset(key=key))(jax.random.split(jax.random.key(3), games))
    for ply in range(moves):
        action = rules.env_action(rules.act_slots(read_slots(states), jax.random.key(ply))[0])
        states = jax.vmap(env.step)(states, action)
    return states


@pytest.mark.parametrize("env_id", ["TicTacToe-v0", "ConnectFour-v0"])
def test_a_shipped_board_baseline_acts_on_the_observation_and_mask_as_every_baseline_does(env_id: str) -> None:
    """`load_baseline(...).act(observation, action_mask=...)` on a state as the env emits it: the mover gets a
    legal move, the waiting slot the no-op; ConnectFour's search takes the win in one it is shown."""
    baseline = parallax_zoo.load_baseline(env_id)
    env = parallax_zoo.make(env_id)
    state = env.reset(key=jax.random.key(0))
    action = np.asarray(baseline.act(state.agents.observation, action_mask=state.agents.action_mask))
    assert action.shape == (2,)
    assert state.agents.action_mask is not None and bool(state.agents.action_mask[0, action[0]])
    assert action[1] == env.unwrapped.no_op
    if env_id == "ConnectFour-v0":
        # X holds row 5, columns 0-2; its only winning drop is column 3.
        cells = np.zeros((6, 7), np.int8)
        cells[5, :3], cells[5, 6], cells[4, 6], cells[3, 6] = 1, -1, -1, -1
        win = env.unwrapped.position(cells.reshape(42), 0, key=jax.random.key(0))
        assert isinstance(baseline, SearchPlayer)
        assert np.asarray(baseline.act(win.agents.observation, action_mask=win.agents.action_mask)).tolist() == [3, 7]
        with pytest.raises(ValueError, match="pass action_mask=state.agents.action_mask"):
            baseline.act(win.agents.observation)
        with pytest.raises(ValueError, match=r"sampling \(greedy=False\) needs key"):
            baseline.act(win.agents.observation, action_mask=win.agents.action_mask, greedy=False)


@pytest.mark.parametrize("env_id", ["TicTacToe-v0", pytest.param("ConnectFour-v0", marks=pytest.mark.slow)])
def test_a_baseline_acts_on_a_batch_of_games_as_evaluation_plays_them(env_id: str) -> None:
    """`act` on a batch of positions `[games, 2, ...]` gives each game's move, the one evaluation plays there."""
    baseline = parallax_zoo.load_baseline(env_id)
    env = parallax_zoo.make(env_id)
    states = opening_positions(env_id, moves=3)
    mask = states.agents.action_mask
    batch = np.asarray(baseline.act(states.agents.observation, action_mask=mask))
    mover = np.asarray(states.env_state.to_move)
    games = np.arange(batch.shape[0])
    assert batch.shape == (4, 2)
    assert np.asarray(mask)[games, mover, batch[games, mover]].all()
    assert (batch[games, 1 - mover] == env.unwrapped.no_op).all()
    evaluated = rollout_step(as_player(env, baseline, greedy=True), states, jax.random.key(0))
    np.testing.assert_array_equal(batch, np.asarray(evaluated))


def every_player(env_id: str) -> dict[str, Player]:
    """One player of each kind the zoo has, for `env_id` (a board game with a search baseline or a network one)."""
    env = parallax_zoo.make(env_id)
    baseline = parallax_zoo.load_baseline(env_id)
    policy = baseline.policy if isinstance(baseline, SearchPlayer) else baseline
    assert isinstance(policy, Policy)
    ladder = opponent_player(env_id, env, next(iter(parallax_zoo.spec(env_id).opponents)))
    first_slot = jnp.array([[True, False]] * 4)
    players: dict[str, Player] = {
        "policy": policy,
        "greedy": Greedy(policy),
        "random": random_player(env),
        "scripted": ScriptedPlayer(lambda observation: jnp.full(observation.shape[:-1], env.unwrapped.no_op)),
        "ladder": ladder,
        "matchup": Matchup(Greedy(policy), ladder, first_slot),
        "rotation": Rotation((ladder, random_player(env))),
    }
    if isinstance(baseline, SearchPlayer):
        players["search"] = baseline
    return players


@pytest.mark.parametrize("env_id", ["TicTacToe-v0", pytest.param("ConnectFour-v0", marks=pytest.mark.slow)])
def test_every_kind_of_player_is_a_player_and_acts_with_act(env_id: str) -> None:
    """Each player is a `Player` at run time, and its `act(observation, key, action_mask=...)` is its rollout's step."""
    states = opening_positions(env_id, moves=2)
    players = every_player(env_id)
    assert isinstance(players["ladder"], MaskedScriptedPlayer)
    for name, player in players.items():
        assert isinstance(player, Player), name
        key = jax.random.key(5)
        # `Policy.act` plays the mode unless told to sample (as a user acting with a baseline wants); the rollout
        # samples. Compared greedy, a sampling rollout agreed only where the draw was the mode (TicTacToe's here).
        sampling = {"greedy": False} if isinstance(player, Policy) else {}
        action = player.act(states.agents.observation, key, action_mask=states.agents.action_mask, **sampling)
        np.testing.assert_array_equal(np.asarray(action), np.asarray(rollout_step(player, states, key)), err_msg=name)
    assert not isinstance(object(), Player)


def test_players_that_draw_at_random_or_read_the_mask_say_what_they_need() -> None:
    env = parallax_zoo.make("TicTacToe-v0")
    state = env.reset(key=jax.random.key(0))
    ladder = opponent_player("TicTacToe-v0", env, "perfect")
    with pytest.raises(ValueError, match=r"RandomPlayer.act draws at random: pass key=jax.random.key\(...\)"):
        random_player(env).act(state.agents.observation, action_mask=state.agents.action_mask)
    with pytest.raises(ValueError, match="MaskedScriptedPlayer.act: the rule reads the action mask"):
        ladder.act(state.agents.observation, jax.random.key(0))
    with pytest.raises(ValueError, match=r"pass baseline=parallax_zoo.load_baseline\('TicTacToe-v0'\)"):
        opponent_player("TicTacToe-v0", env, "baseline")
    with pytest.raises(TypeError, match="expected a parallax_zoo Policy, a Player or 'random', got int"):
        as_player(env, 3, greedy=True)  # pyright: ignore[reportArgumentType]


def test_scripted_opponents_load_by_name_and_unknown_names_list_the_known_ones() -> None:
    naive = scripted_rule("TeamRace-v0", "naive")
    state = parallax_zoo.make("TeamRace-v0").reset(key=jax.random.key(0))
    assert naive(state.agents.observation).shape == (4,)
    assert ScriptedPlayer(naive).act(state.agents.observation).shape == (4,)
    with pytest.raises(RegistryError, match="no scripted opponent 'blocking'; registry.yaml lists: 'naive'"):
        scripted_rule("TeamRace-v0", "blocking")
    with pytest.raises(RegistryError, match="lists: none"):
        scripted_rule("Race-v0", "naive")
