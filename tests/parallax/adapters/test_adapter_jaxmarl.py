"""JaxMARLAdapter against the real JaxMARL: terminal observations, time limits, padded slots, registry."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.slow_params import slow_except

jaxmarl = pytest.importorskip("jaxmarl")

import parallax_zoo  # noqa: E402
from parallax import Box, Discrete, MARLEnv, TimeLimit, VmapWrapper, check_env  # noqa: E402
from parallax.adapters.base import next_and_step_key  # noqa: E402
from parallax.adapters.jaxmarl import JaxMARLAdapter, episode_length_settings  # noqa: E402

DEFAULT_SUITE = {"jaxmarl/MPE_simple_spread_v3"}
"""The ids whose `check_env` runs in the default suite; the rest run with --run-slow.

A `check_env` costs 3 s (Switch Riddle) to 18 s (SMAX, JaxNav) of compiling on a 2-core CPU and
MABrax's physics minutes, so the default suite checks MPE here and covers every other family but
MABrax with `test_every_step_matches_jaxmarl_own_step_env_up_to_the_episode_end`, which compiles
one step.
"""

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


@pytest.mark.parametrize("env_id", slow_except(JAXMARL_IDS, DEFAULT_SUITE))
def test_every_registered_id_passes_check_env(env_id):
    env = parallax_zoo.make(env_id)
    assert env.num_agents == parallax_zoo.spec(env_id).num_agents
    assert env.episode_length == parallax_zoo.spec(env_id).max_steps
    check_env(env, num_steps=8)


@pytest.mark.parametrize(
    "env_id",
    [
        i if not {"mabrax", "storm"} & set(parallax_zoo.spec(i).tags) else pytest.param(i, marks=pytest.mark.slow)
        for i in JAXMARL_IDS
    ],
)
def test_every_registered_id_builds_with_the_registered_episode_length(env_id):
    env = parallax_zoo.make(env_id)
    assert env.episode_length == parallax_zoo.spec(env_id).max_steps
    assert env.num_agents == parallax_zoo.spec(env_id).num_agents == len(env.env.agents)


def test_settings_jaxmarl_does_not_take_get_a_clear_error():
    # JaxMARL builds facmac_3a from a factory without settings: its episodes are fixed at 26 steps.
    with pytest.raises(TypeError, match=r"MPE_simple_facmac_3a_v1 does not take the settings \['max_steps'\]"):
        parallax_zoo.make("jaxmarl/MPE_simple_facmac_3a_v1", max_steps=10)
    with pytest.raises(TypeError, match="does not take the keyword argument 'max_step'"):
        parallax_zoo.make("jaxmarl/SMAX", max_step=10)


@pytest.mark.slow
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
    reset_obs, *_ = raw.step(
        jax.random.key(2), before_end.env_state, {a: actions[25, i] for i, a in enumerate(raw.agents)}
    )
    assert not np.allclose(np.stack([reset_obs[a] for a in raw.agents]), at(states, 25).agents.observation)
    assert spread.episode_length == 26


def test_max_steps_sets_jaxmarl_own_limit():
    assert episode_length_settings(type(jaxmarl.make("MPE_simple_spread_v3")), 26) == {"max_steps": 25}
    short = parallax_zoo.make("jaxmarl/MPE_simple_spread_v3", max_steps=4)
    assert (
        short.env.max_steps == 3 and short.episode_length == 4
    )  # max_steps means what the registry's does: the episode ends on step 4
    assert episode_length_settings(type(jaxmarl.make("SMAX")), 101) == {"max_steps": 100}
    assert episode_length_settings(type(jaxmarl.make("overcooked")), 400) == {"max_steps": 400}
    # Hanabi has no time limit to set; Coin Game's length follows its inner and outer episode counts.
    assert episode_length_settings(type(jaxmarl.make("hanabi")), 80) == {}
    assert parallax_zoo.make("jaxmarl/coin_game", num_inner_steps=3, num_outer_steps=2).episode_length == 6


def test_max_steps_cuts_short_the_families_without_a_limit_setting_and_refuses_to_lengthen_them():
    short = parallax_zoo.make("jaxmarl/coin_game", max_steps=10)
    assert isinstance(short, TimeLimit) and short.max_steps == 10
    state = short.reset(key=jax.random.key(0))
    step = jax.jit(short.step)
    ends = []
    for _ in range(10):
        state = step(state, jnp.zeros((2,), jnp.int32))
        ends.append((bool(state.truncation), bool(state.termination)))
    assert ends == [(False, False)] * 9 + [(True, False)]
    assert isinstance(parallax_zoo.make("jaxmarl/hanabi", max_steps=50), TimeLimit)
    assert not isinstance(parallax_zoo.make("jaxmarl/coin_game", max_steps=100), TimeLimit)
    with pytest.raises(
        TypeError, match=r"jaxmarl/coin_game ends every episode by step 100.*max_steps=101 cannot lengthen it"
    ):
        parallax_zoo.make("jaxmarl/coin_game", max_steps=101)


def test_heterogeneous_agents_are_padded_and_masked():
    tag = JaxMARLAdapter(jaxmarl.make("MPE_simple_tag_v3"))
    raw = tag.env
    assert tag.agents == ("adversary_0", "adversary_1", "adversary_2", "agent_0")
    assert tag.observation_space.shape == (4, 16)
    state = tag.reset(key=jax.random.key(0))
    raw_obs, _ = raw.reset(jax.random.key(0))
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


@pytest.mark.slow
def test_continuous_heterogeneous_actions_are_cut_to_each_agent():
    comm = JaxMARLAdapter(jaxmarl.make("MPE_simple_world_comm_v3"))
    space = comm.action_space
    assert isinstance(space, Box) and space.shape == (6, 9)
    np.testing.assert_array_equal(space.high[0], np.ones(9))
    np.testing.assert_array_equal(space.high[1], [1.0] * 5 + [0.0] * 4)
    state = comm.reset(key=jax.random.key(0))
    action = space.sample(key=jax.random.key(1))
    padded = action.at[1:, 5:].set(0.7)
    np.testing.assert_array_equal(
        comm.step(state, action).agents.observation, comm.step(state, padded).agents.observation
    )


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


@pytest.mark.slow
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


def judged_rollout(env, key, num_steps):
    """Random legal play, each step taken by the adapter and, from the same state, by JaxMARL's own `step_env`.

    The adapter splits `state.key` into (next key, step key) and hands the
    step key to `step_env`; the suite's step here gets the same key, so both
    sides see the same randomness. Returns our states and the suite's
    (observations, dones) per step, index t = after step t + 1.
    """
    raw = env.env
    spaces = [raw.action_space(agent) for agent in raw.agents]
    shape = env.observation_space.shape[1:]

    def suite_actions(action):
        return {
            agent: (action[i] if action.ndim == 1 else action[i, : space.shape[0]]).astype(space.dtype)
            for i, (agent, space) in enumerate(zip(raw.agents, spaces))
        }

    def body(state, k):
        mask = state.agents.action_mask
        if mask is None:
            action = env.action_space.sample(key=k)
        else:
            action = jax.random.categorical(k, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)
        _, step_key = next_and_step_key(state.key)
        obs, _, _, dones, _ = raw.step_env(step_key, state.env_state, suite_actions(action))
        padded = [jnp.pad(obs[a], [(0, n - d) for d, n in zip(obs[a].shape, shape)]) for a in raw.agents]
        theirs = (jnp.stack(padded), jnp.stack([dones[a] for a in raw.agents]), dones["__all__"])
        following = env.step(state, action)
        return following, (following, theirs)

    state = env.reset(key=key)
    _, (ours, theirs) = jax.jit(lambda s, k: jax.lax.scan(body, s, jax.random.split(k, num_steps)))(state, key)
    return ours, theirs


def first_end(done):
    """The index of the step that ends the first episode, or len(done) if none does."""
    done = np.asarray(done)
    return int(np.argmax(done)) if done.any() else len(done)


JUDGED = [
    ("jaxmarl/MPE_simple_tag_v3", {}, 26),
    ("jaxmarl/overcooked", {"max_steps": 6}, 6),
    ("jaxmarl/switch_riddle", {}, 6),
    pytest.param("jaxmarl/jaxnav", {"max_steps": 6}, 6, marks=pytest.mark.slow),
    pytest.param("jaxmarl/hanabi", {}, 80, marks=pytest.mark.slow),
    pytest.param("jaxmarl/HeuristicEnemySMAX", {"max_steps": 60}, 61, marks=pytest.mark.slow),
    pytest.param("jaxmarl/overcooked_v2", {"max_steps": 6}, 6, marks=pytest.mark.slow),
    pytest.param("jaxmarl/SMAX", {"max_steps": 60}, 61, marks=pytest.mark.slow),
    pytest.param("jaxmarl/hopper_3x1", {"episode_length": 8}, 8, marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("env_id", "settings", "num_steps"), JUDGED)
def test_every_step_matches_jaxmarl_own_step_env_up_to_the_episode_end(env_id, settings, num_steps):
    env = parallax_zoo.make(env_id, **settings)
    assert_matches_the_suite(env, *judged_rollout(env, jax.random.key(3), num_steps), num_steps)


def assert_matches_the_suite(env, ours, theirs, num_steps):
    """Our observations and episode ends agree with JaxMARL's, step by step, up to the first episode end."""
    their_obs, _, their_done = theirs
    end = first_end(their_done)
    assert first_end(ours.done) == end
    steps = slice(0, min(end + 1, num_steps))
    active = np.asarray(ours.agents.active)[steps]
    observation = np.asarray(ours.agents.observation)[steps]
    theirs = np.asarray(their_obs)[steps]
    # Active slots hold JaxMARL's observation (padded with zeros); inactive slots are zeros.
    expected = np.where(active.reshape(active.shape + (1,) * (theirs.ndim - 2)), theirs, 0)
    np.testing.assert_allclose(observation, expected, rtol=1e-6, atol=1e-6)
    # Truncation fires at the suite's own episode length and not before; termination only by the rules.
    if env.episode_length is not None and end < num_steps and end + 1 == env.episode_length:
        assert bool(ours.truncation[end])
    assert not np.asarray(ours.truncation)[: min(end, num_steps)].any()
    if end < num_steps and end + 1 < (env.episode_length or np.inf):
        assert bool(ours.termination[end]) and not bool(ours.truncation[end])


def test_a_smax_unit_that_dies_goes_inactive_with_zeros_while_the_battle_goes_on():
    env = parallax_zoo.make("jaxmarl/HeuristicEnemySMAX", max_steps=60)
    ours, theirs = judged_rollout(env, jax.random.key(3), 61)
    assert_matches_the_suite(env, ours, theirs, 61)
    _, their_agent_dones, their_done = theirs
    end = first_end(their_done)
    active = np.asarray(ours.agents.active)
    dead_before_end = [(t, i) for t in range(end) for i in range(env.num_agents) if not active[t, i]]
    assert dead_before_end, "no ally died before the battle ended; pick another seed"
    t, i = dead_before_end[0]
    # The suite reports that unit done on that step; the adapter marks it inactive from then on.
    assert bool(their_agent_dones[t, i]) and (t == 0 or bool(active[t - 1, i]))
    assert not active[t : end + 1, i].any()
    np.testing.assert_array_equal(np.asarray(ours.agents.observation)[t : end + 1, i], 0.0)
    # Its reward slot is zero on the steps after it died (rule 3) although JaxMARL keeps paying dead units.
    np.testing.assert_array_equal(np.asarray(ours.agents.reward)[t + 1 : end + 1, i], 0.0)
    # Its only legal action is the stand-in the adapter plays for it (rule 4).
    masks = np.asarray(ours.agents.action_mask)[t : end + 1, i]
    assert (masks.sum(axis=-1) == 1).all()
    assert not bool(ours.done[t]) or t == end


def per_agent(tree, raw):
    """JaxMARL's per-agent values of one step, in slot order: a dict by agent, a tuple, or one stacked array.

    STORM's InTheGrid stacks its agents inside a dict of observations, its inventory's on the last axis.
    """
    if isinstance(tree, dict) and "observations" in tree:
        return [
            {"observation": tree["observations"][i], "inventory": tree["inventory"][:, i]}
            for i in range(len(raw.agents))
        ]
    if isinstance(tree, dict):
        return [tree[agent] for agent in raw.agents]
    return list(tree)


def assert_slots_hold(ours, theirs):
    """Slot i of our stacked observation (a pytree) equals agent i's observation from JaxMARL."""
    for i, their in enumerate(theirs):
        mine = jax.tree_util.tree_map(lambda x, i=i: np.asarray(x[i]), ours)
        jax.tree_util.tree_map(np.testing.assert_array_equal, mine, jax.tree_util.tree_map(np.asarray, their))


ROUND_BASED = [
    "coin_game",
    pytest.param("storm_2p", marks=pytest.mark.slow),
    pytest.param("storm", marks=pytest.mark.slow),
    pytest.param("storm_np", marks=pytest.mark.slow),
]
"""STORM's step compiles for a minute on a 2-core CPU; the default suite checks storm_2p's slots at reset below."""


@pytest.mark.parametrize(
    ("foreign_id", "num_actions"),
    [
        pytest.param("storm", 5, marks=pytest.mark.slow),
        ("storm_2p", 5),
        pytest.param("storm_np", 8, marks=pytest.mark.slow),
    ],
)
def test_storm_slots_hold_each_agent_observation(foreign_id, num_actions):
    env = parallax_zoo.make(f"jaxmarl/{foreign_id}")
    raw = env.env
    assert env.agents == (0, 1) and env.episode_length == 152
    assert env.action_space == Discrete(num_actions, shape=(2,))
    state = env.reset(key=jax.random.key(0))
    observations, _ = raw.reset(jax.random.key(0))
    assert_slots_hold(state.agents.observation, per_agent(observations, raw))
    assert bool(env.observation_space.contains(state.agents.observation))


@pytest.mark.parametrize("foreign_id", ROUND_BASED)
def test_round_based_games_end_with_the_true_last_observation(foreign_id):
    # Two rounds of three steps. JaxMARL starts the next round inside the step that ends one: between the
    # rounds the adapter keeps that, as the episode goes on; on the episode's last step it returns the true
    # end, which is what JaxMARL's step_env returns for rounds one step longer from the same state and actions.
    env = parallax_zoo.make(f"jaxmarl/{foreign_id}", num_inner_steps=3, num_outer_steps=2)
    raw = env.env
    suite_step = jax.jit(raw.step_env)
    longer_step = jax.jit(jaxmarl.make(foreign_id, num_inner_steps=4, num_outer_steps=2).step_env)
    assert env.episode_length == 6
    actions = random_actions(env, jax.random.key(1), 6)
    state = env.reset(key=jax.random.key(0))
    for t in range(6):
        _, step_key = next_and_step_key(state.key)
        joint = {agent: actions[t, i] for i, agent in enumerate(raw.agents)}
        observations, _, rewards, dones, _ = suite_step(step_key, state.env_state, joint)
        following = env.step(state, actions[t])
        # Both suites pay nothing on a step that ends a round, the last one included; so does the adapter.
        np.testing.assert_array_equal(np.stack(per_agent(rewards, raw)), following.agents.reward)
        assert bool(dones["__all__"]) == (t == 5) == bool(following.truncation)
        assert not bool(following.termination) and bool(following.agents.active.all())
        if t < 5:
            assert_slots_hold(following.agents.observation, per_agent(observations, raw))
        else:
            true_end, *_ = longer_step(step_key, state.env_state, joint)
            assert_slots_hold(following.agents.observation, per_agent(true_end, raw))
            fresh, last = jax.tree_util.tree_leaves(observations), jax.tree_util.tree_leaves(true_end)
            assert any(not np.array_equal(a, b) for a, b in zip(fresh, last)), (
                "JaxMARL's own last step returns a new round"
            )
            # The state is the end of the last round, not the start of another.
            assert int(following.env_state.step) == 3 and bool(following.env_state.done)
        state = following
