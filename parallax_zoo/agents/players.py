"""Players for evaluation and training opponents: random, scripted and greedy play, and two players sharing the slots.

Each is a `player.Player`, so evaluation collects with the same `collect`
that training uses, and a user can `act` with any of them. Players are pytrees (a policy's params are
leaves, a model or a rule is static), so jitted code takes them as arguments
and compiles once per kind of player, not once per player.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import jax
import jax.numpy as jnp
from jaxtyping import Array, PRNGKeyArray

from parallax_zoo.agents.networks import ActorCritic, uniform
from parallax_zoo.agents.player import Player
from parallax_zoo.agents.policy import Policy, observation_slots
from parallax_zoo.agents.recurrent import Memory
from parallax_zoo.agents.rollout import RecurrentRolloutPolicy, is_recurrent
from parallax_zoo.agents.slots import Slots

Rule = Callable[[Array], Array]
"""A `ScriptedPlayer`'s rule, `rule(observation) -> action` over every slot: `[*batch, agents, obs_dim]` to
`[*batch, agents]`.

Not a `Player`: a pure jittable function that the player maps over the slots inside the rollout."""

MaskedRule = Callable[[Array, Array, PRNGKeyArray], Array]
"""A `MaskedScriptedPlayer`'s rule: `rule(observation, action_mask, key) -> action` for one slot's view of one game.

Not a `Player`: a pure jittable function of one slot, which the player vmaps over every slot (the opponent
ladders, `agents.ladder` and `agents.held_out_ladder`, are written as such rules)."""


def needs_key(key: PRNGKeyArray | None, caller: str) -> PRNGKeyArray:
    """`key`, or a `ValueError` saying that `caller` draws at random and needs one."""
    if key is None:
        raise ValueError(f"{caller} draws at random: pass key=jax.random.key(...)")
    return key


def split_or_none(key: PRNGKeyArray | None, count: int) -> list[PRNGKeyArray | None]:
    """`count` keys split from `key`, or `count` Nones where there is no key (for players that may not need one)."""
    return [None] * count if key is None else list(jax.random.split(key, count))


def rule_slots(observation: Array, action_mask: Array | None, slot_shape: tuple[int, ...]) -> Slots:
    """The slots a scripted rule reads, as `slots.read_slots` gives them: each slot's observation flattened to floats,
    `[*slot_shape, obs_dim]`, and the mask."""
    observation = jnp.asarray(observation, jnp.float32).reshape(*slot_shape, -1)
    return Slots(
        observation=observation,
        global_observation=observation.reshape(*slot_shape[:-1], -1),  # unused: a rule has no critic
        action_mask=None if action_mask is None else jnp.asarray(action_mask),
        active=jnp.ones(slot_shape, dtype=bool),
        reward=jnp.zeros(slot_shape),
    )


@dataclass(frozen=True)
class RandomPlayer:
    """Uniform over each slot's legal actions (`Box` actions: N(0, 1), clipped to the bounds)."""

    model: ActorCritic

    def act(
        self, observation: Array, key: PRNGKeyArray | None = None, action_mask: Array | None = None, greedy: bool = True
    ) -> Array:
        """A uniformly random legal action (`greedy` changes nothing); needs a `key`."""
        slots = observation_slots(self.model, observation, action_mask, "RandomPlayer.act")
        return self.env_action(self.act_slots(slots, needs_key(key, "RandomPlayer.act"))[0])

    def act_slots(self, slots: Slots, key: PRNGKeyArray) -> tuple[Array, Array, Array]:
        dist = uniform(self.model.head, slots.active.shape, slots.action_mask)
        action = dist.sample(key)
        return action, dist.log_prob(action), self.value(slots)

    def value(self, slots: Slots) -> Array:
        return jnp.zeros(slots.active.shape)

    def env_action(self, action: Array) -> Array:
        return self.model.env_action(action)


@dataclass(frozen=True)
class ScriptedPlayer:
    """A fixed `Rule`, `rule(observation) -> action` per slot (`[*batch, agents, obs_dim] -> [*batch, agents]`).

    Registered envs name theirs in registry.yaml's `opponents` (TeamRace's naive team); a rule that
    also reads the action mask and breaks ties at random is a `MaskedScriptedPlayer`.
    """

    rule: Rule

    def act(
        self, observation: Array, key: PRNGKeyArray | None = None, action_mask: Array | None = None, greedy: bool = True
    ) -> Array:
        """The rule's actions for an observation `[*batch, agents, ...]`, each slot's view flattened as the rule
        reads it. The slots are the leading axes of `action_mask` where one is given (the rule reads no mask),
        else every axis of `observation` but the last; `key` goes unused (the rule draws nothing)."""
        observation = jnp.asarray(observation)
        slot_shape = observation.shape[:-1] if action_mask is None else jnp.shape(action_mask)[:-1]
        slots = rule_slots(observation, action_mask, tuple(slot_shape))
        return self.env_action(self.act_slots(slots, jax.random.key(0))[0])

    def act_slots(self, slots: Slots, key: PRNGKeyArray) -> tuple[Array, Array, Array]:
        action = jnp.asarray(self.rule(slots.observation))
        if action.shape != slots.active.shape:
            raise ValueError(
                f"ScriptedPlayer: the rule returned actions of shape {action.shape}, expected one per slot "
                f"{slots.active.shape}"
            )
        return action, jnp.zeros(slots.active.shape), self.value(slots)

    def value(self, slots: Slots) -> Array:
        return jnp.zeros(slots.active.shape)

    def env_action(self, action: Array) -> Array:
        return action


@dataclass(frozen=True)
class MaskedScriptedPlayer:
    """A fixed `MaskedRule`, `rule(observation, action_mask, key) -> action` for one slot's view, over every slot.

    The rule sees one slot's flattened observation `[obs_dim]`, its action mask
    row `[actions]` and a key of its own (so a batch of games breaks ties
    independently); the board games' opponent ladder is written this way
    (registry.yaml `opponents`, docs/evaluation.md).
    """

    rule: MaskedRule

    def act(
        self, observation: Array, key: PRNGKeyArray | None = None, action_mask: Array | None = None, greedy: bool = True
    ) -> Array:
        """The rule's action in every slot of `action_mask` (`[*batch, agents, actions]`, required); needs a `key`."""
        if action_mask is None:
            raise ValueError(
                "MaskedScriptedPlayer.act: the rule reads the action mask; pass action_mask=state.agents.action_mask"
            )
        slots = rule_slots(observation, action_mask, tuple(jnp.shape(action_mask)[:-1]))
        return self.env_action(self.act_slots(slots, needs_key(key, "MaskedScriptedPlayer.act"))[0])

    def act_slots(self, slots: Slots, key: PRNGKeyArray) -> tuple[Array, Array, Array]:
        if slots.action_mask is None:
            raise ValueError(
                "MaskedScriptedPlayer: the env has no action mask; a rule of the observation alone is a ScriptedPlayer"
            )
        batch = slots.active.shape
        observation = slots.observation.reshape(-1, slots.observation.shape[-1])
        mask = slots.action_mask.reshape(-1, slots.action_mask.shape[-1])
        keys = jax.random.split(key, observation.shape[0])
        action = jax.vmap(self.rule)(observation, mask, keys).reshape(batch)
        return action, jnp.zeros(batch), self.value(slots)

    def value(self, slots: Slots) -> Array:
        return jnp.zeros(slots.active.shape)

    def env_action(self, action: Array) -> Array:
        return action


@dataclass(frozen=True)
class Greedy:
    """A policy that always takes its most likely action."""

    policy: Policy

    def act(
        self, observation: Array, key: PRNGKeyArray | None = None, action_mask: Array | None = None, greedy: bool = True
    ) -> Array:
        """The policy's most likely action, whatever `greedy` says."""
        return self.policy.act(observation, key, action_mask, greedy=True)

    def act_slots(self, slots: Slots, key: PRNGKeyArray) -> tuple[Array, Array, Array]:
        return self.policy.act_slots(slots, key, greedy=True)

    def value(self, slots: Slots) -> Array:
        return self.policy.value(slots)

    def env_action(self, action: Array) -> Array:
        return self.policy.env_action(action)

    @property
    def recurrent(self) -> bool:
        return self.policy.recurrent

    def initial_memory(self, batch_shape: tuple[int, ...]) -> Memory:
        return self.policy.initial_memory(batch_shape)

    def act_memory(self, hidden: Array, slots: Slots, key: PRNGKeyArray) -> tuple[Array, Array, Array, Array]:
        return self.policy.act_memory(hidden, slots, key, greedy=True)

    def value_memory(self, hidden: Array, slots: Slots) -> Array:
        return self.policy.value_memory(hidden, slots)


@dataclass(frozen=True)
class Matchup:
    """`first` acts in the slots where `first_slots` (`[*batch, agents]`) is true, `second` in the rest."""

    first: Player
    second: Player
    first_slots: Array

    def act(
        self, observation: Array, key: PRNGKeyArray | None = None, action_mask: Array | None = None, greedy: bool = True
    ) -> Array:
        """Each side's player's action in its own slots (the env's action is one per slot, `[*batch, agents]`)."""
        first_key, second_key = split_or_none(key, 2)
        first = self.first.act(observation, first_key, action_mask, greedy)
        second = self.second.act(observation, second_key, action_mask, greedy)
        seat = self.first_slots.reshape(self.first_slots.shape + (1,) * (first.ndim - self.first_slots.ndim))
        return jnp.where(seat, first, second)

    def act_slots(self, slots: Slots, key: PRNGKeyArray) -> tuple[Array, Array, Array]:
        first_key, second_key = jax.random.split(key)
        first = self.first.act_slots(slots, first_key)
        second = self.second.act_slots(slots, second_key)
        action, log_prob, value = (self._seated(a, b) for a, b in zip(first, second))
        return action, log_prob, value

    def _seated(self, first: Array, second: Array) -> Array:
        """Per slot, `first`'s entry where the first player sits and `second`'s elsewhere (any trailing axes)."""
        seat = self.first_slots.reshape(self.first_slots.shape + (1,) * (first.ndim - self.first_slots.ndim))
        return jnp.where(seat, first, second)

    def value(self, slots: Slots) -> Array:
        return jnp.where(self.first_slots, self.first.value(slots), self.second.value(slots))

    def env_action(self, action: Array) -> Array:
        return self.first.env_action(action)

    @property
    def recurrent(self) -> bool:
        """Whether either side keeps a hidden state; the rollout then carries both sides' (`act_memory`)."""
        return is_recurrent(self.first) or is_recurrent(self.second)

    def initial_memory(self, batch_shape: tuple[int, ...]) -> Memory:
        """Each side's hidden state before the first move: a recurrent side's own, an empty one for the other."""
        first, second = (_initial_hidden(side, batch_shape) for side in (self.first, self.second))
        agents = next(h.shape[len(batch_shape)] for h in (first, second) if h is not None)
        empty = jnp.zeros((*batch_shape, agents, 0))
        return Memory(
            (empty if first is None else first, empty if second is None else second), jnp.zeros(batch_shape, bool)
        )

    def act_memory(
        self, hidden: tuple[Array, Array], slots: Slots, key: PRNGKeyArray
    ) -> tuple[Any, Array, Array, Array]:
        """Both sides move from their own hidden state (each already reset where an episode starts); each slot
        keeps its side's action, log-probability and value, and each side's hidden state moves on."""
        first_key, second_key = jax.random.split(key)
        first_hidden, *first = _step_side(self.first, hidden[0], slots, first_key)
        second_hidden, *second = _step_side(self.second, hidden[1], slots, second_key)
        action, log_prob, value = (self._seated(a, b) for a, b in zip(first, second))
        return (first_hidden, second_hidden), action, log_prob, value

    def value_memory(self, hidden: tuple[Array, Array], slots: Slots) -> Array:
        values = [
            cast(RecurrentRolloutPolicy, side).value_memory(h, slots) if is_recurrent(side) else side.value(slots)
            for side, h in zip((self.first, self.second), hidden)
        ]
        return jnp.where(self.first_slots, *values)


def _initial_hidden(player: Player, batch_shape: tuple[int, ...]) -> Array | None:
    return cast(RecurrentRolloutPolicy, player).initial_memory(batch_shape).hidden if is_recurrent(player) else None


def _step_side(player: Player, hidden: Array, slots: Slots, key: PRNGKeyArray) -> tuple[Array, Array, Array, Array]:
    """One side's move in every slot: a recurrent player from its hidden state, any other as it always acts."""
    if is_recurrent(player):
        return cast(RecurrentRolloutPolicy, player).act_memory(hidden, slots, key)
    return (hidden, *player.act_slots(slots, key))


@dataclass(frozen=True)
class Rotation:
    """Several players dealt over a batch of games: game `e` of `[games, agents]` is played by `players[e %
    len(players)]`.

    A training opponent that mixes, for instance, the opponent ladder's rungs
    (`mappo.training`'s `opponent`). Every player acts on the whole batch and
    each game keeps its own player's actions, so the rotation stays one jitted program.
    """

    players: tuple[Player, ...]

    def act(
        self, observation: Array, key: PRNGKeyArray | None = None, action_mask: Array | None = None, greedy: bool = True
    ) -> Array:
        """Game `e` of a batch `[games, agents, ...]` gets `players[e % len(players)]`'s action."""
        actions = [
            player.act(observation, player_key, action_mask, greedy)
            for player, player_key in zip(self.players, split_or_none(key, len(self.players)))
        ]
        dealt = jnp.arange(actions[0].shape[0]) % len(self.players)
        chosen = actions[0]
        for index, action in enumerate(actions[1:], start=1):
            chosen = jnp.where((dealt == index).reshape((-1,) + (1,) * (action.ndim - 1)), action, chosen)
        return chosen

    def act_slots(self, slots: Slots, key: PRNGKeyArray) -> tuple[Array, Array, Array]:
        keys = jax.random.split(key, len(self.players))
        outputs = [player.act_slots(slots, k) for player, k in zip(self.players, keys)]
        dealt = jnp.arange(slots.active.shape[0]) % len(self.players)

        def pick(*fields: Array) -> Array:
            chosen = fields[0]
            for index, field in enumerate(fields[1:], start=1):
                chosen = jnp.where((dealt == index).reshape((-1,) + (1,) * (field.ndim - 1)), field, chosen)
            return chosen

        action, log_prob, value = (pick(*fields) for fields in zip(*outputs))
        return action, log_prob, value

    def value(self, slots: Slots) -> Array:
        return jnp.zeros(slots.active.shape)

    def env_action(self, action: Array) -> Array:
        return self.players[0].env_action(action)


jax.tree_util.register_dataclass(RandomPlayer, data_fields=[], meta_fields=["model"])
jax.tree_util.register_dataclass(ScriptedPlayer, data_fields=[], meta_fields=["rule"])
jax.tree_util.register_dataclass(MaskedScriptedPlayer, data_fields=[], meta_fields=["rule"])
jax.tree_util.register_dataclass(Greedy, data_fields=["policy"], meta_fields=[])
jax.tree_util.register_dataclass(Rotation, data_fields=["players"], meta_fields=[])
jax.tree_util.register_dataclass(Matchup, data_fields=["first", "second", "first_slots"], meta_fields=[])
