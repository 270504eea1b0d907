"""JaxMARLAdapter against the real JaxMARL: terminal observations, time limits, padded slots, registry."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jaxmarl = pytest.importorskip("jaxmarl")

import parallax_zoo  # noqa: E402
from parallax import Box, Discrete, MARLEnv, VmapWrapper, check_env  # noqa: E402
from parallax.adapters.jaxmarl import JaxMARLAdapter, episode_length_settings  # noqa: E402

DEFAULT_SUITE = {"jaxmarl/MPE_simple_spread_v3"}
"""The ids whose `check_env` runs in the default suite: one per family, the cheapest to compile."""

JAXMARL_IDS = parallax_zoo.list_envs(tag="jaxmarl")


def rollout(env, state, actions):
    """Steps with `actions[t]`; returns the stacked states, index t = after step t + 1."""

    def body(s, a):
        s = env.step(s, a)
        return s, s

    return jax.jit(lambda s, a: jax.lax.scan(body, s, a)[1])(state, actions)


def at(states, t):
    return jax.tree_util.tree_map(lambda x: x[t], states)


def random_actions(env, key, num_steps):
    return jax.vmap(lambda k: env.action_space.sample(key=k))(jax.random.split(key, num_steps))


@pytest.fixture(scope="module")
def spread():
    return parallax_zoo.make("jaxmarl/MPE_simple_spread_v3")


@pytest.mark.parametrize(
    "env_id", [i if i in DEFAULT_SUITE else pytest.param(i, marks=pytest.mark.slow) for i in JAXMARL_IDS]
)
def test_every_registered_id_passes_check_env(env_id):
    env = parallax_zoo.make(env_id)
    assert env.num_agents == parallax_zoo.spec(env_id).num_agents
    assert env.episode_length == parallax_zoo.spec(env_id).max_steps
    check_env(env, num_steps=8)


def test_mpe_truncates_where_jaxmarl_ends_the_episode_with_the_true_last_observation(spread):
    raw = spread.env
    state = spread.reset(key=jax.random.key(0))
    actions = random_actions(spread, jax.random.key(1), 26)
    states = rollout(spread, state, actions)
    # JaxMARL's own loop from the same start: step_env from each of our states gives our next one.
    raw_dones = []
    previous = state
    for t in range(26):
        current = at(states, t)
        _, step_key = jax.random.split(previous.key)
        obs, raw_state, rewards, dones, _ = raw.step_env(
            step_key, previous.env_state, {a: actions[t, i] for i, a in enumerate(raw.agents)}
        )
        np.testing.assert_array_equal(np.stack([obs[a] for a in raw.agents]), current.agents.observation)
        np.testing.assert_array_equal(np.stack([rewards[a] for a in raw.agents]), current.agents.reward)
        raw_dones.append(bool(dones["__all__"]))
        previous = current
    assert raw_dones == [False] * 25 + [True]
    assert np.asarray(states.truncation).tolist() == [False] * 25 + [True]
    assert not np.asarray(states.termination).any()
    assert np.asarray(states.agents.active).all()
    # JaxMARL's own step replaces the last observation by a reset one.
    before_end = at(states, 24)
    reset_obs, *_ = raw.step(jax.random.key(2), before_end.env_state, {a: actions[25, i] for i, a in enumerate(raw.agents)})
    assert not np.allclose(np.stack([reset_obs[a] for a in raw.agents]), at(states, 25).agents.observation)
    assert spread.episode_length == 26


def test_max_steps_sets_jaxmarl_own_limit():
    assert episode_length_settings(type(jaxmarl.make("MPE_simple_spread_v3")), 26) == {"max_steps": 25}
    short = parallax_zoo.make("jaxmarl/MPE_simple_spread_v3", max_steps=4)
    assert short.env.max_steps == 4 and short.episode_length == 5
    states = rollout(short, short.reset(key=jax.random.key(0)), random_actions(short, jax.random.key(1), 5))
    assert np.asarray(states.truncation).tolist() == [False] * 4 + [True]


def test_heterogeneous_agents_are_padded_and_masked():
    tag = JaxMARLAdapter(jaxmarl.make("MPE_simple_tag_v3"))
    raw = tag.env
    assert tag.agents == ("adversary_0", "adversary_1", "adversary_2", "agent_0")
    assert tag.observation_space.shape == (4, 16)
    state = tag.reset(key=jax.random.key(0))
    raw_obs, _ = raw.reset(jax.random.split(jax.random.key(0))[1])
    np.testing.assert_array_equal(state.agents.observation[3, :14], raw_obs["agent_0"])
    np.testing.assert_array_equal(state.agents.observation[3, 14:], [0.0, 0.0])
    np.testing.assert_array_equal(state.agents.observation[0], raw_obs["adversary_0"])
    # The padding entries are bounded to zero; JaxMARL's own entries keep its (open) bounds.
    assert np.all(tag.observation_space.high[3, 14:] == 0.0) and np.all(np.isinf(tag.observation_space.high[3, :14]))

    listener = JaxMARLAdapter(jaxmarl.make("MPE_simple_speaker_listener_v4"))
    assert listener.action_space == Discrete(5, shape=(2,))
    state = listener.reset(key=jax.random.key(0))
    assert state.agents.action_mask.tolist() == [[True] * 3 + [False] * 2, [True] * 5]
    # Homogeneous agents carry no mask at all.
    assert JaxMARLAdapter(jaxmarl.make("MPE_simple_spread_v3")).reset(key=jax.random.key(0)).agents.action_mask is None


def test_continuous_heterogeneous_actions_are_cut_to_each_agent():
    comm = JaxMARLAdapter(jaxmarl.make("MPE_simple_world_comm_v3"))
    space = comm.action_space
    assert isinstance(space, Box) and space.shape == (6, 9)
    np.testing.assert_array_equal(space.high[0], np.ones(9))
    np.testing.assert_array_equal(space.high[1], [1.0] * 5 + [0.0] * 4)
    state = comm.reset(key=jax.random.key(0))
    action = space.sample(key=jax.random.key(1))
    padded = action.at[1:, 5:].set(0.7)
    np.testing.assert_array_equal(comm.step(state, action).agents.observation, comm.step(state, padded).agents.observation)


def test_spaces_follow_what_jaxmarl_emits(spread):
    assert spread.action_space == Discrete(5, shape=(3,))
    space = spread.observation_space
    assert isinstance(space, Box) and space.shape == (3, 18) and space.dtype == jnp.float32
    assert np.all(np.isneginf(space.low)) and np.all(np.isposinf(space.high))
    facmac = JaxMARLAdapter(jaxmarl.make("MPE_simple_facmac_6a_v1"))
    # JaxMARL declares 16 entries here and emits 28: the space follows the emitted shape.
    assert jaxmarl.make("MPE_simple_facmac_6a_v1").observation_space("agent_0").shape == (16,)
    assert facmac.observation_space.shape == (8, 28)
    assert facmac.reset(key=jax.random.key(0)).agents.observation.shape == (8, 28)


def test_key_advances_every_step(spread):
    state = spread.reset(key=jax.random.key(0))
    following = spread.step(state, jnp.zeros(3, jnp.int32))
    assert not np.array_equal(jax.random.key_data(state.key), jax.random.key_data(following.key))


def test_selective_reset_under_vmap_keeps_the_terminal_observation(spread):
    env = VmapWrapper(spread, num_envs=2)
    state = env.reset(key=jax.random.key(0))
    for _ in range(26):
        state = env.step(state, jnp.ones((2, 3), jnp.int32))
    assert np.asarray(state.truncation).all()
    terminal = state.agents.observation
    fresh = env.reset(key=jax.random.key(1), state=state, done=jnp.array([True, False]))
    np.testing.assert_array_equal(fresh.agents.observation[1], terminal[1])
    assert int(fresh.step_count[0]) == 0 and int(fresh.step_count[1]) == 26


def test_bad_inputs_get_clear_errors(spread):
    with pytest.raises(TypeError, match="PRNG key"):
        spread.reset(key=0)
    state = spread.reset(key=jax.random.key(0))
    with pytest.raises(ValueError, match=r"expected an action of shape \(3,\)"):
        spread.step(state, jnp.zeros(2, jnp.int32))
    with pytest.raises(TypeError, match="JaxMARL MultiAgentEnv"):
        JaxMARLAdapter(object())


def test_satisfies_the_marl_env_protocol(spread):
    assert isinstance(spread, MARLEnv)
