"""What acts: the `Player` protocol, which the trained `Policy`, `SearchPlayer` and every player of `players` satisfy.

A player has two faces. `act(observation, key, action_mask=..., greedy=...)`
takes the env's observation as a state carries it (`state.observation`, or
`state.agents.observation` for a multi-agent env, with any leading batch axes)
and returns the env's action, for a user stepping an env by hand
(docs/baselines.md, "Acting"). `act_slots`, `value` and `env_action` take the
agents' per-slot view (`slots.Slots`) and are what the jitted rollout,
evaluation and training call (`rollout.collect`), so one compiled program
plays any player.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from jaxtyping import Array, PRNGKeyArray

from parallax_zoo.agents.slots import Slots


@runtime_checkable
class Player(Protocol):
    """Whatever acts in an env: a trained policy, a policy that searches, a scripted rule, the random player."""

    def act(
        self, observation: Array, key: PRNGKeyArray | None = None, action_mask: Array | None = None, greedy: bool = True
    ) -> Array:
        """The env's action for an observation shaped like the env's (any leading batch axes).

        `action_mask` is the env's mask (per agent for multi-agent envs); a player
        that draws at random (sampling with `greedy=False`, the random player, a rule
        that breaks ties at random) needs a `key` and says so when it has none.
        """
        ...

    def act_slots(self, slots: Slots, key: PRNGKeyArray) -> tuple[Array, Array, Array]:
        """Slot actions, their log-probabilities and the slots' values (the rollout's step)."""
        ...

    def value(self, slots: Slots) -> Array:
        """The value of every slot (zeros for a player without a critic)."""
        ...

    def env_action(self, action: Array) -> Array:
        """Slot actions to the env's action."""
        ...
