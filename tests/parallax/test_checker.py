"""`check_env` passes good envs and names the rule each broken env breaks."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import pytest
from helpers.example_envs import GridWorld, MaskedGridWorld, Race

import parallax_zoo
from parallax import Agents, Box, MARLState, ProtocolError, State, TimeLimit, check_env, spaces, stack_space


@pytest.mark.parametrize(
    "env",
    [GridWorld(), MaskedGridWorld(), Race(), TimeLimit(Race(), max_steps=5)],
    ids=["GridWorld", "MaskedGridWorld", "Race", "TimeLimit(Race, 5)"],
)
def test_good_envs_pass(env):
    check_env(env)


class InfoAppearsOnStep(GridWorld):
    def step(self, state, action):
        return dataclasses.replace(super().step(state, action), info={"extra": jnp.float32(1.0)})


class RewardBecomesInt(GridWorld):
    def step(self, state, action):
        state = super().step(state, action)
        return dataclasses.replace(state, reward=state.reward.astype(jnp.int32))


class ObservationOutsideSpace(GridWorld):
    observation_space = Box(0.0, 1.0, (4,))


class StepCountStuck(GridWorld):
    def step(self, state, action):
        return dataclasses.replace(super().step(state, action), step_count=state.step_count)


class HiddenCounter(GridWorld):
    """Reads a Python counter: equal keys and states no longer give equal results."""

    calls = 0

    def step(self, state, action):
        HiddenCounter.calls += 1
        state = super().step(state, action)
        return dataclasses.replace(state, reward=state.reward + HiddenCounter.calls)


class UnhashableSpace:
    shape = (4,)
    dtype = jnp.float32
    __hash__ = None  # type: ignore[assignment]

    def sample(self, *, key):
        return jnp.zeros(4)

    def contains(self, x):
        return jnp.asarray(True)


class SpaceNotHashable(GridWorld):
    observation_space = UnhashableSpace()  # type: ignore[assignment]


class PerAgentTermination(Race):
    def step(self, state, action):
        state = super().step(state, action)
        return dataclasses.replace(state, termination=~state.agents.active)


class UsesInactiveActions(Race):
    """Breaks rule 1: moves agents whether or not they are active."""

    def step(self, state, action):
        positions = state.env_state + action
        return dataclasses.replace(
            super().step(state, action),
            env_state=positions,
        )


class ObservesInactive(Race):
    """Breaks rule 2: finished agents still report their position."""

    def step(self, state, action):
        state = super().step(state, action)
        return dataclasses.replace(state, agents=dataclasses.replace(state.agents, observation=state.env_state))


class RewardsInactive(Race):
    """Breaks rule 3: finished agents keep collecting reward."""

    def step(self, state, action):
        state = super().step(state, action)
        reward = state.agents.reward + jnp.where(state.agents.active, 0.0, 0.5)
        return dataclasses.replace(state, agents=dataclasses.replace(state.agents, reward=reward))


class LateReward(Race):
    """Breaks rule 5's pairing: the finishing reward arrives one step after the agent went inactive."""

    def reset(self, *, key):
        state = super().reset(key=key)
        return dataclasses.replace(state, info={"pending": jnp.zeros(3)})

    def step(self, state, action):
        inner = super().step(dataclasses.replace(state, info={}), action)
        pending = inner.agents.reward
        agents = dataclasses.replace(inner.agents, reward=state.info["pending"])
        return dataclasses.replace(inner, agents=agents, info={"pending": pending})


class EmptyMask(Race):
    """Breaks rule 4: inactive agents get no legal action."""

    action_space = stack_space(spaces.Discrete(2), 3)

    def reset(self, *, key):
        state = super().reset(key=key)
        return dataclasses.replace(state, agents=dataclasses.replace(state.agents, action_mask=jnp.ones((3, 2), bool)))

    def step(self, state, action):
        state = super().step(
            dataclasses.replace(state, agents=dataclasses.replace(state.agents, action_mask=None)), action
        )
        mask = jnp.broadcast_to(state.agents.active[:, None], (3, 2))
        return dataclasses.replace(state, agents=dataclasses.replace(state.agents, action_mask=mask))


class ReturnsState(Race):
    """A multi-agent env that returns a single-agent State."""

    def reset(self, *, key):
        return GridWorld().reset(key=key)


@pytest.mark.parametrize(
    ("env", "rule", "field"),
    [
        (InfoAppearsOnStep(), "stable pytree", "state"),
        (RewardBecomesInt(), "reward", "reward"),
        (ObservationOutsideSpace(), "observation_space", "observation"),
        (StepCountStuck(), "step_count increments", "step_count"),
        (HiddenCounter(), "determinism", "state"),
        (SpaceNotHashable(), "spaces", "observation_space"),
        (ReturnsState(), "state type", "state"),
        (PerAgentTermination(), "rule 6", "termination"),
        (UsesInactiveActions(), "rule 1", "action (inactive slots)"),
        (ObservesInactive(), "rule 2", "agents.observation (inactive slots must be zeros)"),
        (RewardsInactive(), "rule 3", "agents.reward (slots inactive on the previous step must be zeros)"),
        (LateReward(), "rule 3", "agents.reward (slots inactive on the previous step must be zeros)"),
        (EmptyMask(), "rule 4", "agents.action_mask (every slot needs a legal action)"),
    ],
    ids=lambda x: type(x).__name__ if not isinstance(x, str) else x,
)
def test_each_broken_env_is_caught_with_its_rule(env, rule, field):
    with pytest.raises(ProtocolError) as caught:
        check_env(env, num_steps=32)
    assert caught.value.rule == rule
    assert caught.value.field == field
    assert rule in str(caught.value) and field in str(caught.value)


def test_error_names_the_step():
    class BreaksAtFive(GridWorld):
        def step(self, state, action):
            state = super().step(state, action)
            return dataclasses.replace(state, observation=jnp.where(state.step_count == 5, 99.0, state.observation))

    with pytest.raises(ProtocolError, match="at step 5"):
        check_env(BreaksAtFive())


def test_marl_state_from_single_agent_env_is_caught():
    class Confused(GridWorld):
        def reset(self, *, key):
            return Race().reset(key=key)

    with pytest.raises(ProtocolError, match="expected a State"):
        check_env(Confused())


def test_reset_reward_must_be_zero_for_marl():
    class RewardAtReset(Race):
        def reset(self, *, key):
            state = super().reset(key=key)
            return dataclasses.replace(state, agents=dataclasses.replace(state.agents, reward=jnp.ones(3)))

    with pytest.raises(ProtocolError, match="rule 3"):
        check_env(RewardAtReset())


def test_state_and_marl_state_are_distinct_types():
    assert not issubclass(MARLState, State)
    assert Agents.__dataclass_fields__["action_mask"].default is None


class _StuckClock:
    """Race-v0 whose step_count never moves: check_env must say what it expected and what it found."""

    def __init__(self) -> None:
        self.env = parallax_zoo.make("Race-v0")

    def __getattr__(self, name: str):
        return getattr(self.env, name)

    def step(self, state, action):
        return dataclasses.replace(self.env.step(state, action), step_count=state.step_count)


def test_check_env_says_what_was_expected_and_found():
    with pytest.raises(ProtocolError) as caught:
        check_env(_StuckClock(), num_steps=4)
    assert "expected step_count 1 (the previous step's + 1), got 0" in str(caught.value)
    assert "violated" not in str(caught.value)
