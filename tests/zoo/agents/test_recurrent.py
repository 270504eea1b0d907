"""Recurrent PPO (`policy=recurrent`): the hidden state is reset exactly where the previous step ended an
episode, training replays the collected sequences whole, and the policy learns a task that needs memory."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.example_envs import GridWorld

import parallax_zoo
from parallax import TimeLimit
from parallax_zoo.agents.players import Greedy
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.ppo import Batch, PPOConfig, make_train, model_for, vector_env, whole_sequences
from parallax_zoo.agents.recurrent import Memory
from parallax_zoo.agents.rollout import collect, collect_recurrent, play_episodes
from parallax_zoo.policies import checkpoint

NUM_ENVS, NUM_STEPS = 6, 24
CONFIG = PPOConfig(
    policy="recurrent", num_envs=NUM_ENVS, num_steps=NUM_STEPS, hidden_sizes=(16, 16), rnn_hidden=8, num_minibatches=3
)


@pytest.fixture(scope="module")
def collected():
    """A fresh recurrent policy's rollout on GridWorld, episodes cut by goals and by TimeLimit(5) at various steps,
    from a memory that is not zero and whose envs 0 and 3 have just ended an episode."""
    env = TimeLimit(GridWorld(), max_steps=5)
    model = model_for(env, CONFIG)
    policy = Policy(model, model.init(jax.random.key(1)))
    vec_env = vector_env(env, NUM_ENVS)
    hidden = jax.random.normal(jax.random.key(2), (NUM_ENVS, 1, CONFIG.rnn_hidden))
    memory = Memory(hidden, jnp.asarray([True, False, False, True, False, False]))

    @jax.jit
    def run(key):
        return collect_recurrent(vec_env, policy, vec_env.reset(key=key), memory, key, NUM_STEPS)

    state, final_memory, trajectory = run(jax.random.key(0))
    return policy, memory, final_memory, trajectory


def reference_values(policy, memory, trajectory):
    """Values and log-probabilities stepped one at a time, the hidden state set to zeros by hand before step 0
    where the memory says its episode ended and before step t where step t - 1 ended one (termination or truncation)."""
    model = policy.model
    done = np.asarray(trajectory.termination | trajectory.truncation)[..., 0]
    hidden = np.where(np.asarray(memory.episode_ended)[:, None, None], 0.0, np.asarray(memory.hidden))
    values, log_probs = [], []
    for t in range(NUM_STEPS):
        if t > 0:
            hidden = np.where(done[t - 1][:, None, None], 0.0, hidden)
        hidden, dist, value = model.step(policy.params, jnp.asarray(hidden), trajectory.observation[t])
        values.append(value)
        log_probs.append(dist.log_prob(trajectory.action[t]))
    return np.stack(values), np.stack(log_probs), done, hidden


def test_the_hidden_state_is_reset_exactly_after_each_episode_end(collected):
    policy, memory, final_memory, trajectory = collected
    values, log_probs, done, hidden = reference_values(policy, memory, trajectory)
    ends = np.argwhere(done)
    assert len(ends) >= 2 * NUM_ENVS and len(set(ends[:, 0] % 5)) > 1  # episodes end often, not all on one step
    np.testing.assert_allclose(trajectory.value, values, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(trajectory.log_prob, log_probs, rtol=1e-5, atol=1e-6)
    expected_start = np.concatenate([np.asarray(memory.episode_ended)[None], done[:-1]])
    np.testing.assert_array_equal(trajectory.episode_start, expected_start)
    np.testing.assert_array_equal(final_memory.episode_ended, done[-1])
    np.testing.assert_allclose(final_memory.hidden, hidden, rtol=1e-5, atol=1e-6)


def test_a_skipped_or_shifted_reset_gives_other_values(collected):
    """The reference above is sensitive to the reset: without it, or a step late, its values differ."""
    policy, memory, _, trajectory = collected
    model = policy.model
    done = np.asarray(trajectory.termination | trajectory.truncation)[..., 0]
    for starts in (np.zeros_like(done), np.concatenate([np.zeros_like(done[:2]), done[:-2]])):
        shifted = model.replay(policy.params, memory.hidden, trajectory.observation, jnp.asarray(starts), None)[1]
        assert np.abs(np.asarray(shifted) - np.asarray(trajectory.value)).max() > 1e-3


def test_training_replays_the_collected_sequences(collected):
    policy, memory, _, trajectory = collected
    dist, value = policy.replay(memory.hidden, trajectory.slots(), trajectory.episode_start)
    np.testing.assert_allclose(value, trajectory.value, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dist.log_prob(trajectory.action), trajectory.log_prob, rtol=1e-5, atol=1e-6)


def test_minibatches_hold_whole_env_sequences(collected):
    _, memory, _, trajectory = collected
    env_of = jnp.broadcast_to(jnp.arange(NUM_ENVS, dtype=jnp.float32)[None, :, None], trajectory.value.shape)
    time_of = jnp.broadcast_to(jnp.arange(NUM_STEPS, dtype=jnp.float32)[:, None, None], trajectory.value.shape)
    batch = Batch(trajectory, env_of, time_of, memory.hidden)
    minibatches = whole_sequences(batch, jax.random.key(3), num_minibatches=3)
    assert minibatches.advantage.shape == (3, NUM_STEPS, 2, 1)
    starts, minibatch_starts = trajectory.episode_start, minibatches.transition.episode_start
    minibatch_memory = minibatches.memory
    assert starts is not None and minibatch_starts is not None and minibatch_memory is not None
    envs = np.asarray(minibatches.advantage[:, 0, :, 0]).astype(int)  # [minibatch, column]: the env it holds
    assert sorted(envs.reshape(-1)) == list(range(NUM_ENVS))  # every env once
    for m in range(3):
        for column in range(2):
            env = envs[m, column]
            np.testing.assert_array_equal(minibatches.advantage[m, :, column, 0], np.full(NUM_STEPS, env))
            np.testing.assert_array_equal(minibatches.target[m, :, column, 0], np.arange(NUM_STEPS))
            observation = minibatches.transition.observation[m, :, column]
            np.testing.assert_array_equal(observation, trajectory.observation[:, env])
            np.testing.assert_array_equal(minibatch_starts[m, :, column], starts[:, env])
            np.testing.assert_array_equal(minibatch_memory[m, column], memory.hidden[env])


@pytest.mark.slow  # trains to a result (16 s on two cores); the tests above check the recurrent data layout by default
def test_recurrent_ppo_learns_memory_chain(tmp_path):
    # MemoryChain shows a +-1 context on the first step only and pays +1 (or -1) for naming it five steps later:
    # without memory the best expected return is 0, which is also the random player's.
    env_id = "gymnax/MemoryChain-bsuite"
    config = PPOConfig(
        env_id=env_id,
        policy="recurrent",
        num_envs=16,
        num_steps=16,
        total_timesteps=8192,
        learning_rate=3e-3,
        num_minibatches=2,
        hidden_sizes=(32, 32),
        rnn_hidden=32,
    )
    policy, metrics = jax.jit(make_train(config, parallax_zoo.make(env_id)))(jax.random.key(0))
    assert policy.recurrent
    assert float(np.mean(metrics["episode_return"][-4:])) > 0.7
    # Played greedily from fresh episodes, the memory is carried by `collect` itself.
    vec_env = vector_env(parallax_zoo.make(env_id), 64)
    _, trajectory = jax.jit(lambda key: collect(vec_env, policy, vec_env.reset(key=key), key, 12))(jax.random.key(5))
    finished = np.asarray(trajectory.episode_finished)
    assert finished.sum() >= 64
    assert np.asarray(trajectory.episode_return)[finished].mean() > 0.7
    # Saved and loaded, it is the same recurrent policy, and greedy evaluation carries its memory too.
    checkpoint.save(tmp_path, policy, config)
    loaded, loaded_config = checkpoint.load_network(tmp_path, parallax_zoo.make(env_id))
    assert loaded.model == policy.model and loaded_config == config
    jax.tree_util.tree_map(np.testing.assert_array_equal, loaded.params, policy.params)
    returns, ended = play_episodes(parallax_zoo.make(env_id), Greedy(loaded), jax.random.key(6), 32, 10)
    assert bool(ended.all()) and float(returns.mean()) > 0.9


def test_recurrent_config_is_checked():
    with pytest.raises(ValueError, match=r"policy must be one of \['feedforward', 'recurrent'\], got 'lstm'"):
        PPOConfig(policy="lstm")
    with pytest.raises(ValueError, match="num_envs=6 must be divisible by num_minibatches=4"):
        PPOConfig(policy="recurrent", num_envs=6, num_steps=8, total_timesteps=48, num_minibatches=4)
    with pytest.raises(ValueError, match="rnn_hidden=0 is out of range"):
        PPOConfig(policy="recurrent", rnn_hidden=0)
    with pytest.raises(ValueError, match="set centralized_critic=false"):
        PPOConfig(policy="recurrent", centralized_critic=True)
    PPOConfig(policy="feedforward", num_envs=6, num_steps=8, total_timesteps=48, num_minibatches=4)  # rows split fine


def test_a_recurrent_policy_acts_through_step_with_its_hidden_state(collected):
    policy, _, _, trajectory = collected
    observation = trajectory.observation[0, :, 0]
    with pytest.raises(TypeError, match=r"call policy.step\(observation, hidden\)"):
        policy.act(observation)
    action, hidden = policy.step(observation)
    again, _ = policy.step(observation, hidden)
    assert action.shape == (NUM_ENVS,) and hidden.shape == (NUM_ENVS, 1, CONFIG.rnn_hidden)
    first = policy.model.step(policy.params, policy.model.initial_hidden((NUM_ENVS,)), observation[:, None])[0]
    np.testing.assert_allclose(hidden, first, rtol=1e-6)
    assert "GRU 8" in repr(policy)


def test_feedforward_collect_leaves_episode_start_unset():
    env = TimeLimit(GridWorld(), max_steps=5)
    config = dataclasses.replace(CONFIG, policy="feedforward")
    model = model_for(env, config)
    vec_env = vector_env(env, 2)
    policy = Policy(model, model.init(jax.random.key(0)))
    _, trajectory = jax.jit(lambda key: collect(vec_env, policy, vec_env.reset(key=key), key, 4))(jax.random.key(1))
    assert trajectory.episode_start is None and not Policy(model, {}).recurrent


def _recurrent_board_player():
    """A fresh recurrent policy for TicTacToe whose hidden state changes its choices: its GRU's weights are drawn
    large, so its actions depend on the moves seen before, as a trained one's do."""
    env = parallax_zoo.make("TicTacToe-v0")
    model = model_for(env, dataclasses.replace(CONFIG, rnn_hidden=16, hidden_sizes=(32,)))
    params = model.init(jax.random.key(4))
    params = jax.tree_util.tree_map(lambda leaf: leaf * 4.0, params)
    return env, Policy(model, params)


def test_a_recurrent_player_keeps_its_hidden_state_in_head_to_head_play():
    """Two-player play (evaluation, the self-play snapshots, the opponent ladders) seats players with `Matchup`; a
    recurrent player in it moves as it does alone, its hidden state carried from move to move, not reset."""
    from parallax_zoo.agents.players import Matchup, RandomPlayer
    from parallax_zoo.agents.ppo import vector_env as vec

    env, policy = _recurrent_board_player()
    vec_env = vec(env, 16)
    state = vec_env.reset(key=jax.random.key(0))
    everywhere = jnp.ones(state.agents.active.shape, bool)
    matchup = Matchup(Greedy(policy), RandomPlayer(policy.model), everywhere)  # the recurrent player in every seat
    _, alone = collect(vec_env, Greedy(policy), state, jax.random.key(1), 9)
    _, seated = collect(vec_env, matchup, state, jax.random.key(1), 9)
    np.testing.assert_array_equal(seated.action, alone.action)
    np.testing.assert_allclose(seated.value, alone.value, rtol=1e-6, atol=1e-6)

    memoryless = jax.jit(lambda s: Greedy(policy).act_slots(s, jax.random.key(0))[0])  # every move from zeros
    assert not np.array_equal(jax.vmap(memoryless)(alone.slots()), alone.action)  # so the hidden state matters


def test_a_recurrent_learner_against_a_seated_opponent_carries_its_hidden_state_as_training_replays_it():
    """Training against a fixed opponent in some envs: the learner's moves in its own slots are the ones a replay
    of the trajectory from its memory gives (what the loss assumes), and the opponent's slots are not learned."""
    from parallax_zoo.agents.players import RandomPlayer
    from parallax_zoo.agents.ppo import vector_env as vec
    from parallax_zoo.agents.selfplay import TrainingOpponent, collect_recurrent_against, seated_slots

    env, policy = _recurrent_board_player()
    vec_env = vec(env, 8)
    state = vec_env.reset(key=jax.random.key(0))
    memory = policy.initial_memory((8,))
    opponent = TrainingOpponent(RandomPlayer(policy.model), envs=4)
    _, final, trajectory = jax.jit(
        lambda s, m: collect_recurrent_against(vec_env, policy, opponent, s, m, jax.random.key(3), 20)
    )(state, memory)
    learner = np.asarray(seated_slots(state, 4))
    active = np.asarray(trajectory.active)
    assert not active[:, ~learner].any() and active[:, learner].any()  # only the learner's slots are learned from
    dist, values = policy.replay(memory.hidden, trajectory.slots(), trajectory.episode_start)
    np.testing.assert_allclose(np.asarray(values)[active], np.asarray(trajectory.value)[active], atol=1e-5)
    replayed = np.asarray(dist.log_prob(trajectory.action))
    np.testing.assert_allclose(replayed[active], np.asarray(trajectory.log_prob)[active], atol=1e-4)
    assert final.hidden.shape == memory.hidden.shape


@pytest.mark.slow  # compiles recurrent MAPPO and its self-play evaluation: about 20 s on 2 cores
def test_recurrent_self_play_trains_against_a_seated_opponent():
    from parallax_zoo.agents.mappo import MAPPOConfig
    from parallax_zoo.agents.mappo import make_train as make_mappo
    from parallax_zoo.agents.players import RandomPlayer

    config = MAPPOConfig(
        policy="recurrent",
        hidden_sizes=(32,),
        rnn_hidden=16,
        num_envs=8,
        num_steps=10,
        centralized_critic=False,
        self_play=True,
        snapshots=2,
        total_timesteps=8 * 10 * 2,
        num_minibatches=2,
        eval_episodes=8,
        eval_max_steps=10,
        opponent="random",
        opponent_share=0.5,
    )
    env, policy = _recurrent_board_player()
    _, metrics = jax.jit(make_mappo(config, env, opponent=RandomPlayer(policy.model)))(jax.random.key(0))
    assert np.isfinite(np.asarray(metrics["loss"])).all() and metrics["loss"].shape == (2,)
