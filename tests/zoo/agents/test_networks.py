"""Distributions, action heads, the dense layer and PPO on Box and MultiDiscrete actions."""

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxtyping import Array

from parallax import State, TimeLimit, spaces, stack_space
from parallax_zoo.agents.distributions import Categorical, DiagGaussian, MultiCategorical, mask_logits
from parallax_zoo.agents.networks import Dense, action_head, agent_space, categorical
from parallax_zoo.agents.ppo import PPOConfig, make_train


def test_categorical_by_hand():
    dist = Categorical(jnp.log(jnp.array([0.5, 0.25, 0.25])))
    # H = -(0.5 ln 0.5 + 2 * 0.25 ln 0.25) = 0.5 ln 2 + ln 2 = 1.5 ln 2
    np.testing.assert_allclose(dist.entropy(), 1.5 * math.log(2.0), rtol=1e-6)
    np.testing.assert_allclose(dist.log_prob(jnp.array(1)), math.log(0.25), rtol=1e-6)
    assert int(dist.mode()) == 0


def test_masked_actions_have_zero_probability():
    dist = Categorical(mask_logits(jnp.zeros(3), jnp.array([True, False, True])))
    draws = jax.vmap(dist.sample)(jax.random.split(jax.random.key(0), 2000))
    assert set(np.unique(np.asarray(draws))) == {0, 2}
    np.testing.assert_allclose(dist.entropy(), math.log(2.0), rtol=1e-6)
    np.testing.assert_allclose(dist.log_prob(jnp.array(2)), math.log(0.5), rtol=1e-6)
    assert np.isfinite(dist.entropy())


def test_multi_categorical_pads_short_components():
    head = action_head(spaces.MultiDiscrete([2, 3]))
    dist = categorical(head, jnp.zeros(head.logits_shape), None)
    assert isinstance(dist, MultiCategorical)
    # Uniform over 2 and over 3 choices: H = ln 2 + ln 3, log p(a) = -ln 6.
    np.testing.assert_allclose(dist.entropy(), math.log(6.0), rtol=1e-6)
    np.testing.assert_allclose(dist.log_prob(jnp.array([1, 2])), -math.log(6.0), rtol=1e-6)
    draws = np.asarray(jax.vmap(dist.sample)(jax.random.split(jax.random.key(0), 2000)))
    assert draws[:, 0].max() == 1 and draws[:, 1].max() == 2


def test_diag_gaussian_by_hand():
    dist = DiagGaussian(jnp.zeros(2), jnp.zeros(2))
    # At the mean with unit std, per dimension log N = -0.5 ln(2 pi); two dimensions sum.
    np.testing.assert_allclose(dist.log_prob(jnp.zeros(2)), -math.log(2.0 * math.pi), rtol=1e-6)
    np.testing.assert_allclose(dist.entropy(), math.log(2.0 * math.pi * math.e), rtol=1e-6)
    wide = DiagGaussian(jnp.zeros(1), jnp.log(jnp.full(1, 2.0)))
    # x = 2 with std 2: z = 1, log N = -0.5 - ln 2 - 0.5 ln(2 pi)
    np.testing.assert_allclose(
        wide.log_prob(jnp.full(1, 2.0)), -0.5 - math.log(2.0) - 0.5 * math.log(2 * math.pi), rtol=1e-6
    )


def test_heads_for_every_supported_space():
    assert action_head(spaces.Discrete(4)).kind == "categorical"
    assert action_head(spaces.Discrete(3, shape=(2,))).nvec == (3, 3)
    assert action_head(spaces.MultiBinary(3)).nvec == (2, 2, 2)
    box = action_head(spaces.Box(-1.0, 1.0, (2,)))
    assert box.kind == "gaussian" and box.low == (-1.0, -1.0)
    np.testing.assert_array_equal(box.to_env(jnp.array([[3.0, -0.5]])), [[1.0, -0.5]])
    assert agent_space(stack_space(spaces.Discrete(5), 3), 3) == spaces.Discrete(5)
    with pytest.raises(TypeError, match="No policy head"):
        action_head(spaces.PyTreeSpace({"a": spaces.Discrete(2)}))


class Reach:
    """Move a point in [-1, 1]^2 towards a random target; reward is minus the distance."""

    observation_space = spaces.Box(-1.0, 1.0, (4,))

    def __init__(self, action_space):
        self.action_space = action_space

    def _velocity(self, action):
        if isinstance(self.action_space, spaces.Box):
            return jnp.clip(action, -1.0, 1.0)
        return action.astype(jnp.float32) - 1.0  # MultiDiscrete([3, 3]): 0, 1, 2 -> -1, 0, +1

    def _state(self, pos, target, reward, step_count, key):
        return State(
            env_state=(pos, target),
            observation=jnp.concatenate([pos, target]),
            reward=reward,
            termination=jnp.bool_(False),
            truncation=jnp.bool_(False),
            info={},
            step_count=step_count,
            key=key,
        )

    def reset(self, *, key):
        key, target_key = jax.random.split(key)
        target = jax.random.uniform(target_key, (2,), minval=-1.0, maxval=1.0)
        return self._state(jnp.zeros(2), target, jnp.float32(0.0), jnp.int32(0), key)

    def step(self, state, action):
        pos, target = state.env_state
        pos = jnp.clip(pos + 0.2 * self._velocity(action), -1.0, 1.0)
        return self._state(pos, target, -jnp.linalg.norm(pos - target), state.step_count + 1, state.key)


@pytest.mark.parametrize(
    "action_space", [spaces.Box(-1.0, 1.0, (2,)), spaces.MultiDiscrete([3, 3])], ids=["box", "multidiscrete"]
)
def test_ppo_learns_box_and_multidiscrete_actions(action_space):
    env = TimeLimit(Reach(action_space), max_steps=20)
    config = PPOConfig(num_envs=16, num_steps=20, total_timesteps=16 * 20 * 40, learning_rate=3e-3, ent_coef=0.0)
    _, metrics = jax.jit(make_train(config, env))(jax.random.key(0))
    first, last = float(metrics["episode_return"][0]), float(np.mean(metrics["episode_return"][-3:]))
    # The first update acts almost at random (about -13 per episode); steering at the target roughly halves it.
    assert last > 0.6 * first, (first, last)


@pytest.mark.parametrize("inputs", [4, 300])  # row_matmul's path and the plain matmul past ROW_MATMUL_MAX_INPUTS
def test_dense_has_flax_denses_parameters_outputs_and_gradients(inputs: int):
    # Shipped weights name `Dense_0/kernel`, `Dense_0/bias`: the layer must keep flax's names, shapes and init.
    import flax.linen as nn

    x = jax.random.normal(jax.random.key(0), (3, 5, inputs))
    ours, theirs = Dense(7), nn.Dense(7)
    params = ours.init(jax.random.key(1), x)
    assert jax.tree_util.tree_all(jax.tree_util.tree_map(jnp.array_equal, params, theirs.init(jax.random.key(1), x)))

    def loss(module: nn.Module, params: Any, x: Array) -> Array:
        return jnp.sum(jnp.tanh(module.apply(params, x)) ** 2)

    np.testing.assert_allclose(ours.apply(params, x), theirs.apply(params, x), rtol=1e-6)
    for argnums in (1, 2):  # the parameters' gradient and the input's
        ours_grad = jax.grad(loss, argnums)(ours, params, x)
        theirs_grad = jax.grad(loss, argnums)(theirs, params, x)
        jax.tree_util.tree_map(
            lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6), ours_grad, theirs_grad
        )
    # Vmapped over seeds, as training several seeds at once runs it.
    batched = jax.vmap(lambda p: jax.grad(loss, 1)(ours, p, x))(
        jax.tree_util.tree_map(lambda a: jnp.stack([a, 2 * a]), params)
    )
    second = jax.grad(loss, 1)(theirs, jax.tree_util.tree_map(lambda a: 2 * a, params), x)
    jax.tree_util.tree_map(lambda a, b: np.testing.assert_allclose(a[1], b, rtol=1e-5, atol=1e-6), batched, second)
