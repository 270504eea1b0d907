"""A tiny two-player zero-sum game for the self-play tests: take-away Nim.

A pile of 4-9 stones; players alternate taking 1 or 2; whoever takes the
last stone wins (+1, the other -1). Turn-based as docs/protocol.md asks:
both players stay active, whose turn it is lives in `action_mask`, and the
waiting player's only legal action is the no-op (the last action). An
illegal move by the player to move loses the game. Perfect play leaves a
multiple of 3, so a trained policy beats the random player clearly.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
from jaxtyping import Array, PRNGKeyArray

from parallax import Agents, MARLState, Space, spaces, stack_space
from parallax_zoo.agents.players import needs_key, rule_slots
from parallax_zoo.agents.slots import Slots

MAX_PILE = 9
TAKE_ONE, TAKE_TWO, NO_OP = 0, 1, 2


class Nim:
    num_agents = 2
    action_space: Space = stack_space(spaces.Discrete(3), 2)
    observation_space: Space = stack_space(spaces.Box(0.0, 1.0, (MAX_PILE + 2,)), 2)

    def _state(self, pile, mover, reward, termination, step_count, key) -> MARLState:
        to_move = jnp.arange(2) == mover
        pile_one_hot = jax.nn.one_hot(pile, MAX_PILE + 1)
        observation = jnp.concatenate([jnp.broadcast_to(pile_one_hot, (2, MAX_PILE + 1)), to_move[:, None]], axis=1)
        legal_move = jnp.array([True, False, False]) | (jnp.arange(3) == TAKE_TWO) & (pile >= 2)
        mask = jnp.where(to_move[:, None], legal_move, jnp.arange(3) == NO_OP)
        return MARLState(
            env_state=(pile, mover),
            agents=Agents(observation=observation, active=jnp.ones(2, bool), reward=reward, action_mask=mask),
            termination=termination,
            truncation=jnp.bool_(False),
            info={},
            step_count=step_count,
            key=key,
        )

    def reset(self, *, key: PRNGKeyArray) -> MARLState:
        key, pile_key = jax.random.split(key)
        pile = jax.random.randint(pile_key, (), 4, MAX_PILE + 1)
        return self._state(pile, jnp.int32(0), jnp.zeros(2), jnp.bool_(False), jnp.int32(0), key)

    def step(self, state: MARLState, action: Array) -> MARLState:
        pile, mover = state.env_state
        move = action[mover]
        illegal = (move == NO_OP) | ((move == TAKE_TWO) & (pile < 2))
        pile = jnp.where(illegal, pile, pile - (move + 1))
        finished = illegal | (pile == 0)
        winner = jnp.where(illegal, 1 - mover, mover)
        reward = jnp.where(finished, jnp.where(jnp.arange(2) == winner, 1.0, -1.0), 0.0)
        return self._state(pile, 1 - mover, reward, finished, state.step_count + 1, state.key)


@dataclass(frozen=True)
class PerfectNim:
    """Leaves a multiple of 3 whenever it can (take pile % 3), else takes one."""

    def act(self, observation, key=None, action_mask=None, greedy=True):
        observation = jnp.asarray(observation)
        action, _, _ = self.act_slots(rule_slots(observation, action_mask, observation.shape[:-1]), key)
        return action

    def act_slots(self, slots: Slots, key):
        pile = jnp.argmax(slots.observation[..., : MAX_PILE + 1], axis=-1)
        my_turn = slots.observation[..., MAX_PILE + 1] > 0
        move = jnp.where(pile % 3 == 2, TAKE_TWO, TAKE_ONE)
        action = jnp.where(my_turn, move, NO_OP).astype(jnp.int32)
        return action, jnp.zeros(action.shape), jnp.zeros(action.shape)

    def value(self, slots: Slots):
        return jnp.zeros(slots.active.shape)

    def env_action(self, action):
        return action


@dataclass(frozen=True)
class CarelessNim:
    """Plays like `PerfectNim` with probability `skill`, else takes one or two at random."""

    skill: float = 0.5

    def act(self, observation, key=None, action_mask=None, greedy=True):
        observation = jnp.asarray(observation)
        slots = rule_slots(observation, action_mask, observation.shape[:-1])
        action, _, _ = self.act_slots(slots, needs_key(key, "CarelessNim.act"))
        return action

    def act_slots(self, slots: Slots, key):
        perfect, _, _ = PerfectNim().act_slots(slots, key)
        careless_key, choice_key = jax.random.split(key)
        careless = jax.random.bernoulli(careless_key, 1.0 - self.skill, perfect.shape)
        guess = jax.random.randint(choice_key, perfect.shape, TAKE_ONE, TAKE_TWO + 1)
        action = jnp.where(careless & (perfect != NO_OP), guess, perfect).astype(jnp.int32)
        return action, jnp.zeros(action.shape), jnp.zeros(action.shape)

    def value(self, slots: Slots):
        return jnp.zeros(slots.active.shape)

    def env_action(self, action):
        return action
