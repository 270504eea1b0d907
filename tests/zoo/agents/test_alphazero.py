"""AlphaZero (`agents.alphazero`): what self-play with search teaches, its config, and training through `train`."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import parallax_zoo
from parallax_zoo.agents.alphazero import AlphaZeroConfig, self_play, training
from parallax_zoo.agents.players import RandomPlayer
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.ppo import vector_env
from parallax_zoo.agents.search import SearchPlayer, SearchSettings
from parallax_zoo.policies import checkpoint
from parallax_zoo.policies.loading import load_folder

ENV = parallax_zoo.make("TicTacToe-v0")
KEY = jax.random.key(0)
TINY = AlphaZeroConfig(
    env_id="TicTacToe-v0",
    num_envs=8,
    num_steps=8,
    total_timesteps=64,
    simulations=8,
    hidden_sizes=(32,),
    num_minibatches=2,
    update_epochs=1,
    snapshots=1,
)


def blank_policy(value: float = 0.0) -> Policy:
    """Zero weights (a uniform prior) whose critic says `value` everywhere."""
    model = training(TINY, ENV).model
    params = jax.tree_util.tree_map(jnp.zeros_like, model.init(KEY))
    params["critic"]["Dense_0"]["bias"] = jnp.full((1,), value)
    return Policy(model, params)


def played(policy: Policy, num_steps: int = 12, games: int = 16):  # noqa: ANN201
    env = vector_env(ENV, games)
    searcher = SearchPlayer(policy, ENV.unwrapped, TINY.search)
    run = jax.jit(lambda state, key: self_play(env, searcher, state, key, num_steps))
    return run(env.reset(key=KEY), jax.random.key(1))


def test_the_policy_target_is_the_searchs_policy_for_the_player_to_move_and_sums_to_one() -> None:
    _, trajectory, targets = played(blank_policy())
    to_move = np.asarray(trajectory.global_observation[..., -1], int)
    np.testing.assert_array_equal(np.argmax(targets.policy_slot, axis=-1), to_move)
    assert bool(jnp.all(jnp.sum(targets.policy_slot, axis=-1) == 1))
    np.testing.assert_allclose(jnp.sum(targets.policy, axis=-1), 1.0, atol=1e-5)
    mover_mask = jnp.take_along_axis(trajectory.action_mask, jnp.asarray(to_move)[..., None, None], axis=-2)[..., 0, :]
    assert not bool(jnp.any((targets.policy > 0) & ~mover_mask)), "the target puts weight on an illegal move"
    played_move = jnp.take_along_axis(trajectory.action, jnp.asarray(to_move)[..., None], axis=-1)[..., 0]
    assert bool(jnp.all(jnp.take_along_axis(targets.policy, played_move[..., None], axis=-1) > 0))


@pytest.mark.parametrize("critic", [0.0, 0.25])
def test_the_value_target_is_each_slots_outcome_or_the_critic_where_the_rollout_cut_the_game(critic: float) -> None:
    """Checked against a plain-Python backward pass over the trajectory's rewards and game ends."""
    _, trajectory, targets = played(blank_policy(critic))
    reward, ended = np.asarray(trajectory.reward), np.asarray(trajectory.termination)
    expected = np.zeros_like(reward)
    steps, games, slots = reward.shape
    for game in range(games):
        for slot in range(slots):
            following = critic
            for t in reversed(range(steps)):
                following = reward[t, game, slot] + (0.0 if ended[t, game, slot] else following)
                expected[t, game, slot] = following
    assert ended.any() and not ended[-1].all(), "the rollout should end some games and cut others"
    np.testing.assert_allclose(targets.value, expected, atol=1e-6)
    assert set(np.unique(expected[ended])) <= {-1.0, 0.0, 1.0}


def test_a_seated_opponent_plays_its_slots_and_teaches_nothing() -> None:
    env = vector_env(ENV, 4)
    state = env.reset(key=KEY)
    learner = jnp.array([[True, False], [False, True], [True, True], [True, True]])
    searcher = SearchPlayer(blank_policy(), ENV.unwrapped, TINY.search)
    _, _, targets = jax.jit(
        lambda state, key: self_play(env, searcher, state, key, 6, RandomPlayer(searcher.policy.model), learner)
    )(state, KEY)
    assert not bool(jnp.any(targets.policy_slot & ~learner)) and not bool(jnp.any(targets.value_slot & ~learner))
    assert bool(jnp.any(targets.policy_slot[:, 0, 0])) and bool(jnp.any(targets.policy_slot[:, 1, 1]))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"simulations": 0}, "simulations=0 is out of range"),
        ({"policy": "recurrent", "centralized_critic": False}, "policy='recurrent'"),
        ({"normalize_obs": True}, "normalize_obs=True"),
    ],
)
def test_bad_alphazero_settings_are_refused_with_what_to_fix(change: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(TINY, **change)


def test_alphazero_refuses_a_game_the_search_cannot_set_up() -> None:
    with pytest.raises(ValueError, match="position"):
        training(dataclasses.replace(TINY, env_id="Race-v0"), parallax_zoo.make("Race-v0"))


def test_an_alphazero_config_round_trips_through_config_yaml(tmp_path: Path) -> None:
    policy = blank_policy()
    checkpoint.save(tmp_path, policy, TINY)
    assert "algorithm: alphazero" in (tmp_path / "config.yaml").read_text()
    loaded, config = checkpoint.load_network(tmp_path, ENV)
    assert config == TINY and isinstance(config, AlphaZeroConfig) and config.search.gumbel_scale == 1.0


def test_thirty_updates_fit_the_network_to_what_the_search_teaches() -> None:
    """Thirty updates of 64 searched TicTacToe games: both losses fall (the policy toward the search's improved
    policy, the value toward the outcomes)."""
    config = dataclasses.replace(
        TINY,
        num_envs=64,
        num_steps=16,
        total_timesteps=64 * 16 * 30,
        num_minibatches=8,
        update_epochs=4,
        hidden_sizes=(64,),
        learning_rate=1e-3,
    )
    pieces = training(config, ENV)
    _, metrics = jax.jit(lambda key: jax.lax.scan(pieces.update, pieces.init(key), None, pieces.num_updates))(KEY)
    policy_loss, value_loss = np.asarray(metrics["policy_loss"]), np.asarray(metrics["value_loss"])
    assert policy_loss[-5:].mean() < 0.9 * policy_loss[:5].mean()
    assert value_loss[-5:].mean() < 0.7 * value_loss[:5].mean()


@pytest.mark.slow
def test_train_makes_an_alphazero_run_folder_whose_card_says_how_it_was_trained(tmp_path: Path) -> None:
    """The batch training command runs AlphaZero as any trainer: the five files, the weights load with the config
    file's play-time search, the card."""
    from parallax_zoo.cli.main import main

    config = dataclasses.replace(TINY, opponent="random", opponent_share=0.5, total_timesteps=64 * 2)
    checkpoint.save_config(config, tmp_path / "az.yaml", SearchSettings(simulations=4, win_check=True))
    out = tmp_path / "run"
    assert main(["train", "TicTacToe-v0", "--config", str(tmp_path / "az.yaml"), "--out", str(out)]) == 0
    assert sorted(path.name for path in out.iterdir()) == sorted(
        ["config.yaml", "model.safetensors", "eval.json", "curve.png", "README.md"]
    )
    _, loaded = checkpoint.load_network(out, ENV)
    assert loaded == dataclasses.replace(config, env_id="TicTacToe-v0")
    agent = load_folder(out, ENV)
    assert isinstance(agent, SearchPlayer) and agent.settings == SearchSettings(simulations=4, win_check=True)
    card = (out / "README.md").read_text()
    assert "AlphaZero (self-play with 8-simulation Gumbel MuZero search at every move) trained 128 env steps" in card
