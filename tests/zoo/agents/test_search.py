"""Play-time search (`agents.search.SearchPlayer`): tactics on set positions, its config, and loading it whole."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import parallax_zoo
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.search import SearchPlayer, SearchSettings
from parallax_zoo.policies import checkpoint
from parallax_zoo.policies.checkpoint import CheckpointError
from parallax_zoo.policies.loading import load_folder

ENV = parallax_zoo.make("ConnectFour-v0")
KEY = jax.random.key(0)


def c4_cells(pieces: dict[tuple[int, int], int]) -> np.ndarray:
    """A ConnectFour board from {(row, col): +1 or -1}, row 5 the bottom."""
    cells = np.zeros((6, 7), np.int8)
    for (row, col), mark in pieces.items():
        cells[row, col] = mark
    return cells.reshape(42)


def blank_policy() -> Policy:
    """A network that knows nothing: zero weights give a uniform prior and a value of 0 everywhere."""
    policy, _ = checkpoint.load_network(Path(__file__).resolve().parents[3] / "baselines" / "ConnectFour-v0", ENV)
    return jax.tree_util.tree_map(jnp.zeros_like, policy)


# X (slot 0) to move in both. Win: X holds row 5, columns 0-2; its only winning drop is column 3.
# Block: O holds row 5, columns 0-2, X has no three to complete; every drop but column 3 lets O win.
WIN = c4_cells({(5, 0): 1, (5, 1): 1, (5, 2): 1, (5, 6): -1, (4, 6): -1, (3, 6): -1})
BLOCK = c4_cells({(5, 0): -1, (5, 1): -1, (5, 2): -1, (5, 5): 1, (5, 6): 1, (4, 6): 1})


def test_the_win_check_takes_a_win_and_blocks_a_loss_with_a_blank_network_and_the_waiting_slot_gets_the_no_op() -> None:
    """Played as a `Player` on a batch of both positions: the searched move for the mover, the no-op (7) for the waiting
    slot."""
    from parallax_zoo.agents.slots import read_slots

    player = SearchPlayer(blank_policy(), ENV.unwrapped, SearchSettings(simulations=16, win_check=True))
    states = jax.vmap(lambda cells: ENV.unwrapped.position(cells, 0, key=KEY))(jnp.stack([WIN, BLOCK]))
    action, _, value = jax.jit(player.act_slots)(read_slots(states), KEY)
    np.testing.assert_array_equal(action, [[3, 7], [3, 7]])
    assert value.shape == (2, 2)


# O holds row 5, columns 2-3; X holds column 6, rows 4-5. O to move wins by force: a drop in column 1 or 4 makes
# three in a row open at both ends. X to move must stop that (columns 1 or 4) or threaten first (column 6).
OPEN_TWO = c4_cells({(5, 2): -1, (5, 3): -1, (5, 6): 1, (4, 6): 1})


def test_a_four_ply_tactics_check_sees_the_open_three_that_a_two_ply_check_lets_through() -> None:
    """Depth 2 sees no move win or lose at once here; depth 4 keeps only the moves that make (O to move) or stop
    (X to move) the double threat, whatever the network says."""
    states = jax.vmap(lambda to_move: ENV.unwrapped.position(OPEN_TWO, to_move, key=KEY))(jnp.arange(2))
    mask = states.agents.action_mask[jnp.arange(2), jnp.arange(2)]
    for depth, allowed in ((2, [list(range(7))] * 2), (4, [[1, 4, 6], [1, 4]])):
        player = SearchPlayer(blank_policy(), ENV.unwrapped, SearchSettings(simulations=8, tactics_depth=depth))
        kept = np.asarray(jax.jit(player.tactical_moves)(states, mask))
        assert [np.flatnonzero(row).tolist() for row in kept] == allowed, depth


def test_search_settings_round_trip_through_config_yaml_and_load_the_whole_agent(tmp_path: Path) -> None:
    policy, config = checkpoint.load_network(Path(__file__).resolve().parents[3] / "baselines" / "ConnectFour-v0", ENV)
    settings = SearchSettings(simulations=8, considered_actions=7, gumbel_scale=0.0, win_check=True)
    checkpoint.save(tmp_path, policy, config, settings)
    assert checkpoint.search_from_bytes((tmp_path / "config.yaml").read_bytes()) == settings
    agent = load_folder(tmp_path, ENV)
    assert isinstance(agent, SearchPlayer) and agent.settings == settings
    assert isinstance(agent.policy, Policy)
    checkpoint.save(tmp_path, policy, config)
    assert isinstance(load_folder(tmp_path, ENV), Policy), "a config without search loads the network alone"


@pytest.mark.parametrize(
    ("search", "message"),
    [
        ("{simulations: 0}", "simulations must be between 1 and 4096, got 0"),
        ("{simulations: 1000000000}", "simulations must be between 1 and 4096, got 1000000000"),
        ("{considered_actions: 100000}", "considered_actions must be between 1 and 4096, got 100000"),
        ("{tactics_depth: 7}", "tactics_depth must be between 1 and 6, got 7"),
        ("{simulation: 8}", r"unknown search settings \['simulation'\]"),
        ("{simulations: many}", "simulations must be an integer"),
        ("[8]", "search must be a mapping"),
    ],
)
def test_bad_search_settings_are_refused_with_what_to_fix(search: str, message: str) -> None:
    text = f"algorithm: mappo\nhyperparameters: {{env_id: ConnectFour-v0}}\nsearch: {search}\n".encode()
    with pytest.raises(CheckpointError, match=message):
        checkpoint.search_from_bytes(text, "config.yaml")


def test_a_policy_folder_asking_for_an_unbounded_search_is_refused_when_it_loads(tmp_path: Path) -> None:
    """The bound holds before any search runs, for a folder as for a Hub policy (both load through `load_files`)."""
    policy, config = checkpoint.load_network(Path(__file__).resolve().parents[3] / "baselines" / "ConnectFour-v0", ENV)
    checkpoint.save(tmp_path, policy, config, SearchSettings())
    text = (tmp_path / "config.yaml").read_text()
    (tmp_path / "config.yaml").write_text(text.replace("simulations: 64", "simulations: 1000000000"))
    with pytest.raises(CheckpointError, match=r"config.yaml: SearchSettings: simulations must be between 1 and 4096"):
        load_folder(tmp_path, ENV)


def test_searching_games_of_one_kind_share_their_compiled_program() -> None:
    """Boards of one kind and picture size compare equal, so a reloaded agent hits evaluation's compile cache."""
    assert parallax_zoo.make("ConnectFour-v0").unwrapped == ENV.unwrapped
    assert hash(parallax_zoo.make("ConnectFour-v0").unwrapped) == hash(ENV.unwrapped)
    assert parallax_zoo.make("TicTacToe-v0").unwrapped != ENV.unwrapped


def test_a_rotation_deals_its_players_over_the_games_in_turn() -> None:
    from parallax_zoo.agents.player_factories import training_opponent
    from parallax_zoo.agents.players import Rotation, ScriptedPlayer
    from parallax_zoo.agents.slots import Slots
    from parallax_zoo.catalogue.registry import resolve

    constant = [
        ScriptedPlayer(lambda observation, k=k: jnp.full(observation.shape[:-1], k, jnp.int32)) for k in range(3)
    ]
    games = Slots(jnp.zeros((5, 2, 3)), jnp.zeros((5, 6)), None, jnp.ones((5, 2), bool), jnp.zeros((5, 2)))
    action, _, _ = jax.jit(Rotation(tuple(constant)).act_slots)(games, KEY)
    np.testing.assert_array_equal(action, [[0, 0], [1, 1], [2, 2], [0, 0], [1, 1]])
    assert isinstance(training_opponent(*resolve("TicTacToe-v0"), "random+random"), Rotation)


@pytest.mark.slow
def test_a_fine_tune_stage_trains_from_the_given_weights_against_a_rotation_and_records_its_curve() -> None:
    from parallax_zoo.agents.mappo import MAPPOConfig
    from parallax_zoo.baselines.fine_tune import SEGMENTS, Stage, fine_tune

    env = parallax_zoo.make("TicTacToe-v0")
    start, config = checkpoint.load_network(Path(__file__).resolve().parents[3] / "baselines" / "TicTacToe-v0", env)
    assert isinstance(config, MAPPOConfig)
    tiny = dataclasses.replace(config, num_envs=4, num_steps=4, num_minibatches=1, update_epochs=1)
    stage = Stage(("random", "random"), 0.5, 4 * 4 * SEGMENTS, 1e-3)
    policy, final, curves = fine_tune(parallax_zoo.spec("TicTacToe-v0"), env, start, tiny, [stage], progress=False)
    assert (
        final.opponent == "random+random" and final.opponent_share == 0.5 and final.total_timesteps == 4 * 4 * SEGMENTS
    )
    assert [steps for steps, _ in curves["random"]] == [16 * (i + 1) for i in range(SEGMENTS)]
    assert all(0 <= win <= 1 for _, win in curves["random"])
    moved = jax.tree_util.tree_map(lambda a, b: bool(jnp.any(a != b)), policy.params, start.params)
    assert any(jax.tree_util.tree_leaves(moved)), "the fine-tune changed the starting weights"


@pytest.mark.parametrize("env_id", ["TicTacToe-v0", "ConnectFour-v0"])
def test_position_rebuilds_every_state_a_game_reaches_from_its_cells_and_mover(env_id: str) -> None:
    """What search roots on: the state rebuilt from the global observation equals the one play reached, bit sets
    included."""
    game = parallax_zoo.make(env_id).unwrapped
    step = jax.jit(game.step)
    position = jax.jit(lambda cells, to_move: game.position(cells, to_move, key=KEY))
    rng = np.random.default_rng(0)
    for _ in range(3):
        state = game.reset(key=KEY)
        while True:
            rebuilt = position(state.env_state.board, state.env_state.to_move)
            for built, reached in zip(
                jax.tree_util.tree_leaves(rebuilt.env_state), jax.tree_util.tree_leaves(state.env_state)
            ):
                np.testing.assert_array_equal(built, reached)
            np.testing.assert_array_equal(rebuilt.agents.action_mask, state.agents.action_mask)
            assert bool(rebuilt.termination) == bool(state.termination)
            if bool(state.termination):
                break
            move = rng.choice(np.flatnonzero(np.asarray(state.agents.action_mask)[int(state.env_state.to_move)]))
            state = step(state, jnp.array([move, move]))


def test_position_rejects_a_bad_board() -> None:
    with pytest.raises(ValueError, match=r"shape \(42,\)"):
        ENV.unwrapped.position(np.zeros((6, 7), np.int8), 0, key=KEY)
    with pytest.raises(ValueError, match="to_move"):
        ENV.unwrapped.position(np.zeros(42, np.int8), 2, key=KEY)
