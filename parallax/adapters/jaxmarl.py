"""`JaxMARLAdapter`: a JaxMARL environment as a parallax `MARLEnv`.

JaxMARL's own `step` resets an env whose episode ended and so overwrites the
terminal observation; the adapter calls `step_env`, which never resets
(docs/suites-jaxmarl-craftax.md), except in Coin Game and STORM, which
start their next round inside it and are stepped so that an episode's last
step is the true one (`_without_the_last_reset`). JaxMARL keys everything
by agent; the adapter stacks the agents into slots in JaxMARL's own agent
order (`env.agents`), and a dict observation (STORM's) entry by entry.

Agents of different kinds (MPE simple_tag's adversaries and good agents,
SMAX's allies and enemies) are padded to the largest shape: observations
and continuous actions with zeros, discrete actions up to the largest
action count, with `agents.action_mask` marking the actions each slot has
(and, where JaxMARL reports them, the ones available now). An agent JaxMARL
reports done while the episode goes on (a dead SMAX unit, a JaxNav robot
that reached its goal or crashed) turns inactive; its observation and
reward slots are zeros from then on and its actions are replaced by a legal
one, as the protocol's rules 1-3 ask. Actions outside a slot's own space are
clipped into it (docs/protocol.md, "Out-of-range actions"). How each family's `dones` split into
termination and truncation, and how long its episodes are, is read off its
source and recorded in `FAMILIES` below.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxmarl.environments import spaces as jaxmarl_spaces
from jaxmarl.environments.multi_agent_env import MultiAgentEnv
from jaxtyping import Array, Bool, PRNGKeyArray

from parallax.adapters.base import Adapter, cast_like, next_and_step_key, zeros_like_signature
from parallax.core import Agents, MARLState
from parallax.spaces import Box, Discrete, MultiDiscrete, PyTreeSpace, Space


@dataclass(frozen=True)
class Family:
    """How one JaxMARL family ends its episodes and reports its agents.

    `episode_length(env)` is the step on which the family's time limit ends an
    episode (None where only the rules end it); `limit_setting` names the
    constructor argument that sets it and `limit_offset` how the two differ
    (JaxMARL's MPE and SMAX compare the step count before incrementing it, so
    `max_steps=25` gives 26-step episodes). `termination(env, before,
    actions, after, info)` says whether an episode that ended did so by the
    rules; any other end is a truncation. `alive(env, after, dones)` marks the
    agents still in the game (None: every agent plays until the episode
    ends). `available_actions(env, state)` is JaxMARL's per-agent legal-action
    dict where availability changes during play; `global_observation(env,
    state, observations)` JaxMARL's world state where the family has one.
    `agent_observations(env, observations)` lists each agent's observation
    where JaxMARL does not key them by agent (None: `_per_agent`);
    `observation_space(env, agent)` corrects JaxMARL's declared space where
    it is wrong (None: `env.observation_space`); and
    `step(env, key, state, actions)` stands in for `env.step_env` where that
    resets inside the step that ends an episode (None: `env.step_env`).
    """

    name: str
    episode_length: Callable[[Any], int | None]
    limit_setting: str | None
    limit_offset: int
    termination: Callable[[Any, Any, dict[Any, Array], Any, dict[str, Any]], Array]
    alive: Callable[[Any, Any, dict[Any, Any]], Array] | None = None
    available_actions: Callable[[Any, Any], Any] | None = None
    global_observation: Callable[[Any, Any, Any], Array] | None = None
    agent_observations: Callable[[Any, Any], list[Any]] | None = None
    observation_space: Callable[[Any, Any], Any] | None = None
    step: Callable[[Any, Any, Any, dict[Any, Array]], tuple[Any, Any, Any, dict[Any, Any], dict[str, Any]]] | None = (
        None
    )


def _never(env: Any, before: Any, actions: Any, after: Any, info: Any) -> Array:
    """A family whose episodes only its time limit ends: every end is a truncation."""
    return jnp.zeros((), jnp.bool_)


def _always(env: Any, before: Any, actions: Any, after: Any, info: Any) -> Array:
    """A family whose episodes only its rules end: every end is a termination."""
    return jnp.ones((), jnp.bool_)


def _no_limit(env: Any) -> int | None:
    return None


def _max_steps(env: Any) -> int | None:
    return int(env.max_steps)


def _max_steps_plus_one(env: Any) -> int | None:
    return int(env.max_steps) + 1


def _smax(env: Any) -> Any:
    """The SMAX env inside a heuristic-enemy env (or the env itself)."""
    return getattr(env, "_env", env)


def _smax_state(state: Any) -> Any:
    """The SMAX state inside a heuristic-enemy env's state (or the state itself)."""
    return getattr(state, "state", state)


def _smax_termination(env: Any, before: Any, actions: Any, after: Any, info: Any) -> Array:
    """One side wiped out: SMAX's `is_terminal` without its time limit."""
    alive = _smax_state(after).unit_alive
    num_allies = _smax(env).num_allies
    return ~jnp.any(alive[:num_allies]) | ~jnp.any(alive[num_allies:])


def _done_agents_drop_out(env: Any, after: Any, dones: dict[Any, Any]) -> Array:
    """SMAX reports a dead unit done while the battle goes on: it drops out."""
    return jnp.stack([~jnp.asarray(dones[agent], jnp.bool_) for agent in env.agents])


def _smax_available(env: Any, state: Any) -> Any:
    return env.get_avail_actions(state)


def _smax_world_state(env: Any, state: Any, observations: Any) -> Array:
    return observations["world_state"]


def _hanabi_legal(env: Any, state: Any) -> Any:
    return env.get_legal_moves(state)


def _rounds_length(env: Any) -> int | None:
    """Coin Game and STORM play `num_outer_steps` rounds of `num_inner_steps` steps in one episode."""
    return int(env.num_inner_steps) * int(env.num_outer_steps)


def _without_the_last_reset(
    env: Any, key: Any, state: Any, actions: dict[Any, Array]
) -> tuple[Any, Any, Any, dict[Any, Any], dict[str, Any]]:
    """Coin Game's and STORM's `step_env` without the reset they do inside the step that ends an episode.

    Both start the next round inside the step whose `state.step` reaches
    `num_inner_steps`, so the last step of an episode returns the first
    observation of a round that is never played. On that step the adapter
    hands `step_env` the state with `step` one lower (nothing else reads the
    counter), which ends no round, then restores the count and ends the
    episode itself: the observation is the true last one. Both pay nothing
    on a step that ends a round, so the adapter pays nothing on it either.
    """
    last = (state.step == env.num_inner_steps - 1) & (state.outer_t == env.num_outer_steps - 1)
    held = state.replace(step=jnp.where(last, state.step - 1, state.step))
    observations, after, rewards, dones, info = env.step_env(key, held, actions)
    after = after.replace(step=jnp.where(last, state.step + 1, after.step), done=after.done | last)
    rewards = jax.tree_util.tree_map(lambda reward: jnp.where(last, jnp.zeros_like(reward), reward), rewards)
    dones = {agent: jnp.asarray(done) | last for agent, done in dones.items()}
    if "inner_episode_done" in info:
        info = {**info, "inner_episode_done": jnp.asarray(info["inner_episode_done"]) | last}
    return observations, after, rewards, dones, info


def _storm_observations(env: Any, observations: Any) -> list[Any]:
    """Each STORM agent's observation: InTheGrid stacks its agents inside each entry (the inventory's on its last
    axis)."""
    if isinstance(observations, dict):
        return [
            {"observation": observations["observations"][i], "inventory": observations["inventory"][:, i]}
            for i in range(len(env.agents))
        ]
    return _per_agent(observations, env.agents)


def _storm_observation_space(env: Any, agent: Any) -> Any:
    """STORM's declared space, with the inventory's bounds read off its `_get_obs` (JaxMARL 0.2 caps it at 6).

    InTheGrid's inventory is an agent's red and blue coin counts, whether it
    holds enough to interact, then the counts it is shown of a frozen agent;
    InTheGrid_2p's has both agents' flags. The counts are `int8`s that grow
    with every coin picked up until an interaction empties them.
    """
    from jaxmarl.environments.storm import InTheGrid_2p

    declared = env.observation_space(agent)
    if not isinstance(declared, dict):
        return declared  # InTheMatrix: one Box, as declared
    count = int(np.iinfo(np.int8).max)
    high = [count, count, 1, 1, count, count] if isinstance(env, InTheGrid_2p) else [count, count, 1, count, count]
    inventory = jaxmarl_spaces.Box(0, np.asarray(high), (len(high),), jnp.int8)
    return {**declared, "inventory": inventory}


def _switch_riddle_told(env: Any, before: Any, actions: Any, after: Any, info: Any) -> Array:
    """The prisoner in the room said "tell": the riddle's own end, not its step limit."""
    in_room = jnp.stack([actions[agent] for agent in env.agents])[before.agent_in_room]
    return in_room == env.game_actions["TELL"]


def _jaxnav_finished(env: Any, before: Any, actions: Any, after: Any, info: Any) -> Array:
    """Every robot reached its goal or crashed (evaporated ones included): JaxNav's end without its time limit."""
    return jnp.all(after.term | after.move_term | after.goal_reached)


def _jaxnav_alive(env: Any, after: Any, dones: dict[Any, Any]) -> Array:
    """With `evaporating=True` a robot that reaches its goal or crashes leaves; otherwise all stay to the end."""
    if not env.evaporating:
        return jnp.ones(len(env.agents), jnp.bool_)
    return ~(after.term | after.move_term | after.goal_reached)


def _jaxnav_world_state(env: Any, state: Any, observations: Any) -> Array:
    return env.get_world_state(state)[0]


def _mabrax_length(env: Any) -> int | None:
    return -(-int(env.episode_length) // int(env.action_repeat))


def _mabrax_fell(env: Any, before: Any, actions: Any, after: Any, info: Any) -> Array:
    """Brax's episode wrapper flags its time limit in `info["truncation"]`; any other end is the robot falling."""
    return jnp.asarray(info["truncation"]) == 0


FAMILIES: dict[str, Family] = {
    "MPE": Family("MPE", _max_steps_plus_one, "max_steps", 1, _never),
    "SMAX": Family(
        "SMAX",
        _max_steps_plus_one,
        "max_steps",
        1,
        _smax_termination,
        alive=_done_agents_drop_out,
        available_actions=_smax_available,
        global_observation=_smax_world_state,
    ),
    "Overcooked": Family("Overcooked", _max_steps, "max_steps", 0, _never),
    "Hanabi": Family("Hanabi", _no_limit, None, 0, _always, available_actions=_hanabi_legal),
    "Coin Game": Family("Coin Game", _rounds_length, None, 0, _never, step=_without_the_last_reset),
    "Switch Riddle": Family("Switch Riddle", _max_steps, None, 0, _switch_riddle_told),
    "JaxNav": Family(
        "JaxNav",
        _max_steps,
        "max_steps",
        0,
        _jaxnav_finished,
        alive=_jaxnav_alive,
        global_observation=_jaxnav_world_state,
    ),
    "MABrax": Family("MABrax", _mabrax_length, "episode_length", 0, _mabrax_fell),
    "STORM": Family(
        "STORM",
        _rounds_length,
        None,
        0,
        _never,
        agent_observations=_storm_observations,
        observation_space=_storm_observation_space,
        step=_without_the_last_reset,
    ),
}
"""Every JaxMARL family the adapter supports, read off JaxMARL 0.2's `step_env`s."""


def _family_classes() -> list[tuple[type, str]]:
    from jaxmarl.environments.coin_game.coin_game import CoinGame
    from jaxmarl.environments.hanabi.hanabi import HanabiEnv
    from jaxmarl.environments.jaxnav.jaxnav_env import JaxNav
    from jaxmarl.environments.mpe.simple import SimpleMPE
    from jaxmarl.environments.overcooked.overcooked import Overcooked
    from jaxmarl.environments.overcooked_v2.overcooked import OvercookedV2
    from jaxmarl.environments.smax.heuristic_enemy_smax_env import EnemySMAX
    from jaxmarl.environments.smax.smax_env import SMAX
    from jaxmarl.environments.storm import InTheGrid, InTheGrid_2p, InTheMatrix
    from jaxmarl.environments.switch_riddle.switch_riddle import SwitchRiddle

    classes = [
        (SimpleMPE, "MPE"),
        (SMAX, "SMAX"),
        (EnemySMAX, "SMAX"),
        (Overcooked, "Overcooked"),
        (OvercookedV2, "Overcooked"),
        (HanabiEnv, "Hanabi"),
        (CoinGame, "Coin Game"),
        (SwitchRiddle, "Switch Riddle"),
        (JaxNav, "JaxNav"),
        (InTheGrid, "STORM"),
        (InTheGrid_2p, "STORM"),
        (InTheMatrix, "STORM"),
    ]
    try:
        from jaxmarl.environments.mabrax.mabrax_env import MABraxEnv
    except ImportError:  # MABrax needs brax, which JaxMARL treats as optional
        return classes
    return [*classes, (MABraxEnv, "MABrax")]


def family_of(env: Any) -> Family:
    """The `Family` of a JaxMARL env or env class; a `TypeError` names the families supported."""
    env_class = env if isinstance(env, type) else type(env)
    for base, name in _family_classes():
        if issubclass(env_class, base):
            return FAMILIES[name]
    raise TypeError(
        f"JaxMARLAdapter does not support {env_class.__name__}; it supports the JaxMARL families {', '.join(FAMILIES)}."
    )


def episode_length_settings(env_class: type, episode_length: int | None) -> dict[str, int]:
    """The constructor setting that makes `env_class`'s episodes end (truncate) on step `episode_length`.

    Empty for `None` or for a family whose episodes only the rules end. The
    registry's `max_steps` counts the adapter's steps, so MPE's `max_steps=25`
    (26-step episodes) is registered as 26.
    """
    family = family_of(env_class)
    if episode_length is None or family.limit_setting is None:
        return {}
    if episode_length < 1:
        raise ValueError(f"episode_length must be an int >= 1, got {episode_length}")
    return {family.limit_setting: int(episode_length) - family.limit_offset}


class JaxMARLAdapter(Adapter[MARLState]):
    """Wraps a JaxMARL `MultiAgentEnv` as a parallax `MARLEnv` over `len(env.agents)` slots.

    `env_state` is JaxMARL's state and `info` what `step_env` reports (zeros
    of the same structure after `reset`). The key advances on every step.
    `episode_length` is the step on which the env's time limit truncates an
    episode, None where only the rules end it.
    """

    def __init__(self, env: MultiAgentEnv):
        if not (hasattr(env, "step_env") and hasattr(env, "agents")):
            raise TypeError(
                f"JaxMARLAdapter expects a JaxMARL MultiAgentEnv (with step_env and agents), got {type(env).__name__}. "
                "Create one with `jaxmarl.make(name)`."
            )
        self.env = env
        self.family = family_of(env)
        if getattr(env, "auto_reset", False):
            raise ValueError(
                f"{type(env).__name__} was built with auto_reset=True, so its step_env resets inside and the "
                "terminal observation is lost. Build it with auto_reset=False."
            )
        self.agents: tuple[Any, ...] = tuple(env.agents)
        self._num_agents = len(self.agents)
        self._agent_action_spaces: list[Any] = [env.action_space(agent) for agent in self.agents]
        self._action_space, self._own_actions = _stacked_action_space(self._agent_action_spaces)
        signature = self._abstract_step()
        self._signature = signature
        observations = jax.eval_shape(self._agent_observations, signature["observation"])
        corrected = self.family.observation_space
        declared: list[Any] = [
            env.observation_space(agent) if corrected is None else corrected(env, agent) for agent in self.agents
        ]
        include_zero = self.family.alive is not None
        self._observation_layout: Any
        if isinstance(observations[0], dict):  # STORM's grids: an observation and an inventory per agent
            self._observation_layout = {name: _layout([o[name] for o in observations]) for name in observations[0]}
            self._observation_space = PyTreeSpace(
                {
                    name: _stacked_observation_space(
                        [d[name] for d in declared], [o[name] for o in observations], *layout, include_zero=include_zero
                    )
                    for name, layout in self._observation_layout.items()
                }
            )
        else:
            self._observation_layout = _layout(observations)
            self._observation_space = _stacked_observation_space(
                declared, observations, *self._observation_layout, include_zero=include_zero
            )
        self._action_mask = _action_mask(self._action_space, self._own_actions)
        self.episode_length = self.family.episode_length(env)
        super().__init__()

    @property
    def num_agents(self) -> int:
        return self._num_agents

    def _reset_unchecked(self, key: PRNGKeyArray) -> MARLState:
        observations, env_state = self.env.reset(key)
        env_state = cast_like(env_state, self._signature["env_state"])
        active = jnp.ones(self._num_agents, jnp.bool_)
        return MARLState(
            env_state=env_state,
            agents=Agents(
                observation=self._stack_observations(observations, active),
                active=active,
                reward=jnp.zeros(self._num_agents, jnp.float32),
                action_mask=self._mask(env_state, active),
            ),
            termination=jnp.zeros((), jnp.bool_),
            truncation=jnp.zeros((), jnp.bool_),
            info=zeros_like_signature(self._signature["info"]),
            step_count=jnp.zeros((), jnp.int32),
            key=key,
            global_observation=self._global(env_state, observations),
        )

    def _step_unchecked(self, state: MARLState, action: Array) -> MARLState:
        next_key, step_key = next_and_step_key(state.key)
        acted = state.agents.active
        actions = self._actions(action, state)
        if self.family.step is None:
            observations, env_state, rewards, dones, info = self.env.step_env(step_key, state.env_state, actions)
        else:
            observations, env_state, rewards, dones, info = self.family.step(
                self.env, step_key, state.env_state, actions
            )
        env_state = cast_like(env_state, self._signature["env_state"])
        done = jnp.asarray(dones["__all__"], jnp.bool_)
        termination = done & self.family.termination(self.env, state.env_state, actions, env_state, info)
        if self.family.alive is None:
            active = acted
            reward = jnp.stack(_per_agent(rewards, self.agents)).astype(jnp.float32)
        else:
            active = acted & self.family.alive(self.env, env_state, dones)
            reward = jnp.where(acted, jnp.stack(_per_agent(rewards, self.agents)).astype(jnp.float32), 0.0)
        return MARLState(
            env_state=env_state,
            agents=Agents(
                observation=self._stack_observations(observations, active),
                active=active,
                reward=reward,
                action_mask=self._mask(env_state, active),
            ),
            termination=termination,
            truncation=done & ~termination,
            info=cast_like(dict(info), self._signature["info"]),
            step_count=state.step_count + 1,
            key=next_key,
            global_observation=self._global(env_state, observations),
        )

    def _actions(self, action: Array, state: MARLState) -> dict[Any, Array]:
        """Per-agent actions in JaxMARL's dict, each cut to its own space; inactive slots get a legal stand-in."""
        if self.family.alive is not None:
            mask = state.agents.action_mask
            if mask is not None:
                stand_in = jnp.argmax(mask, axis=-1).astype(action.dtype)
            else:
                stand_in = jnp.zeros_like(action)
            shape = state.agents.active.shape + (1,) * (action.ndim - 1)
            action = jnp.where(jnp.reshape(state.agents.active, shape), action, stand_in)
        per_agent = {}
        for i, (agent, space) in enumerate(zip(self.agents, self._agent_action_spaces)):
            per_agent[agent] = _own_action(space, action[i])
        return per_agent

    def _agent_observations(self, observations: Any) -> list[Any]:
        if self.family.agent_observations is None:
            return _per_agent(observations, self.agents)
        return self.family.agent_observations(self.env, observations)

    def _stack_observations(self, observations: Any, active: Bool[Array, " num_agents"]) -> Any:
        """The agents' observations stacked into slots (entry by entry for dict observations)."""
        per_agent = self._agent_observations(observations)
        if isinstance(self._observation_layout, dict):
            return {
                name: self._stack_slots([o[name] for o in per_agent], layout, active)
                for name, layout in self._observation_layout.items()
            }
        return self._stack_slots(per_agent, self._observation_layout, active)

    def _stack_slots(
        self, observations: list[Any], layout: tuple[tuple[int, ...], Any], active: Bool[Array, " num_agents"]
    ) -> Array:
        """One array of slots, each agent's entry padded with zeros to the layout's shape; zeros in inactive slots."""
        shape, dtype = layout
        stacked = jnp.stack([_pad(jnp.asarray(o, dtype), shape) for o in observations])
        if self.family.alive is None:
            return stacked
        return jnp.where(
            jnp.reshape(active, active.shape + (1,) * (stacked.ndim - 1)), stacked, jnp.zeros((), stacked.dtype)
        )

    def _mask(self, env_state: Any, active: Bool[Array, " num_agents"]) -> Array | None:
        if self.family.available_actions is None:
            return None if self._action_mask is None else jnp.asarray(self._action_mask)
        available = self.family.available_actions(self.env, env_state)
        width = (int(getattr(self._action_space, "n")),)
        mask = jnp.stack([_pad(jnp.asarray(a, jnp.bool_), width) for a in _per_agent(available, self.agents)])
        if self._action_mask is not None:
            mask = mask & jnp.asarray(self._action_mask)
        # A done agent's only legal action is the stand-in the adapter plays for it (rule 4).
        stand_in = jax.nn.one_hot(jnp.argmax(mask, axis=-1), mask.shape[-1], dtype=jnp.bool_)
        return jnp.where(active[:, None], mask, stand_in)

    def _global(self, env_state: Any, observations: Any) -> Array | None:
        if self.family.global_observation is None:
            return None
        return self.family.global_observation(self.env, env_state, observations)

    def _abstract_step(self) -> dict[str, Any]:
        """Shapes and dtypes of what `step_env` returns: the reference every state is cast to."""
        key = jax.random.key(0)
        _, env_state = jax.eval_shape(self.env.reset, key)
        actions = {
            agent: jax.ShapeDtypeStruct(_shape_of(space), jnp.dtype(space.dtype))
            for agent, space in zip(self.agents, self._agent_action_spaces)
        }
        observation, next_state, _, _, info = jax.eval_shape(self.env.step_env, key, env_state, actions)
        return {"observation": observation, "env_state": next_state, "info": dict(info)}

    def render_trajectory(self, states: MARLState) -> np.ndarray:
        """`uint8[T, H, W, 3]`: JaxMARL's own visualiser's picture of every step, drawn on the host
        (`jaxmarl_frames`; text drawn into the frame for Hanabi and Switch Riddle, which only print)."""
        from parallax.adapters.jaxmarl_frames import DRAWINGS

        return DRAWINGS[self.family.name](self.env, states.env_state)

    def __repr__(self) -> str:
        return f"JaxMARLAdapter({type(self.env).__name__})"


def _own_action(space: Any, action: Array) -> Array:
    """One slot's action cut to its agent's own space and clipped into it (docs/protocol.md, "Out-of-range actions").

    A discrete action beyond the agent's own count becomes its last action; a
    continuous entry is clipped to the agent's bounds, NaN counting as 0.
    """
    if isinstance(space, jaxmarl_spaces.Box):
        shape = _shape_of(space)
        own = action[tuple(slice(0, d) for d in shape)]
        own = jnp.where(jnp.isnan(own), jnp.zeros_like(own), own)
        low = np.broadcast_to(np.asarray(space.low, np.float32), shape)
        high = np.broadcast_to(np.asarray(space.high, np.float32), shape)
        return jnp.clip(own, low, high).astype(space.dtype)
    return jnp.clip(action, 0, int(space.n) - 1).astype(space.dtype)


def _per_agent(tree: Any, agents: Sequence[Any]) -> list[Any]:
    """The agents' entries of a JaxMARL per-agent dict (or tuple, as STORM returns), in slot order."""
    if isinstance(tree, dict):
        return [tree[agent] for agent in agents]
    return list(tree)


def _layout(observations: Sequence[Any]) -> tuple[tuple[int, ...], Any]:
    """The shape the agents' observations are padded to and the dtype they are stacked in."""
    return _padded_shape([tuple(o.shape) for o in observations]), jnp.result_type(*[o.dtype for o in observations])


def _padded_shape(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    ranks = {len(shape) for shape in shapes}
    if len(ranks) != 1:
        raise TypeError(f"JaxMARLAdapter cannot pad agents whose observations differ in rank: {list(shapes)}")
    return tuple(int(max(sizes)) for sizes in zip(*shapes))


def _pad(x: Array, shape: tuple[int, ...]) -> Array:
    if tuple(x.shape) == tuple(shape):
        return x
    return jnp.pad(x, [(0, target - size) for size, target in zip(x.shape, shape)])


def _shape_of(space: Any) -> tuple[int, ...]:
    """A JaxMARL space's shape as a tuple (Hanabi declares an int)."""
    return (
        tuple(np.atleast_1d(space.shape).astype(int).tolist())
        if np.ndim(space.shape) == 0
        else tuple(int(d) for d in space.shape)
    )


def _stacked_action_space(spaces: Sequence[Any]) -> tuple[Space, list[Any]]:
    """The slots' action space, and each agent's own extent in it (an action count or a shape)."""
    if all(isinstance(space, jaxmarl_spaces.Discrete) for space in spaces):
        counts = [int(space.n) for space in spaces]
        return Discrete(max(counts), shape=(len(spaces),), dtype=jnp.int32), counts
    if all(isinstance(space, jaxmarl_spaces.Box) for space in spaces):
        shapes = [_shape_of(space) for space in spaces]
        padded = _padded_shape(shapes)
        low = np.zeros((len(spaces), *padded), np.float32)
        high = np.zeros((len(spaces), *padded), np.float32)
        for i, (space, shape) in enumerate(zip(spaces, shapes)):
            region = (i, *(slice(0, d) for d in shape))
            low[region] = np.broadcast_to(np.asarray(space.low, np.float32), shape)
            high[region] = np.broadcast_to(np.asarray(space.high, np.float32), shape)
        return Box(low, high, low.shape, jnp.float32), shapes
    kinds = sorted({type(space).__name__ for space in spaces})
    raise TypeError(f"JaxMARLAdapter supports all-Discrete or all-Box action spaces, got {kinds}")


def _action_mask(space: Space, own: list[Any]) -> np.ndarray | None:
    """Which padded discrete actions each slot has; None where every slot has them all (or actions are continuous)."""
    if not isinstance(space, Discrete) or all(count == space.n for count in own):
        return None
    return np.arange(space.n)[None, :] < np.asarray(own)[:, None]


def _stacked_observation_space(
    declared: Sequence[Any],
    emitted: Sequence[Any],
    shape: tuple[int, ...],
    dtype: Any,
    *,
    include_zero: bool,
) -> Space:
    """Per-slot bounds from JaxMARL's declared spaces, at the shape and dtype the env actually emits.

    Padding entries are bounded to zero. Where an agent can drop out its slot
    holds zeros, so `include_zero` widens the bounds to contain them.
    """
    dtype = jnp.dtype(dtype)
    integer = jnp.issubdtype(dtype, jnp.integer)
    num = len(declared)
    if all(isinstance(space, jaxmarl_spaces.MultiDiscrete) for space in declared) and integer:
        nvec = np.stack([np.broadcast_to(np.asarray(space.num_categories), shape) for space in declared])
        return MultiDiscrete(nvec, dtype)
    low = np.zeros((num, *shape), np.float64)
    high = np.zeros((num, *shape), np.float64)
    for i, (space, out) in enumerate(zip(declared, emitted)):
        region = (i, *(slice(0, d) for d in out.shape))
        space_low, space_high = _declared_bounds(space, tuple(out.shape))
        low[region], high[region] = space_low, space_high
    if include_zero:
        low, high = np.minimum(low, 0.0), np.maximum(high, 0.0)
    if integer:
        limits = jnp.iinfo(dtype)
        low, high = np.clip(low, limits.min, limits.max), np.clip(high, limits.min, limits.max)
    return Box(low, high, low.shape, dtype)


def _declared_bounds(space: Any, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """A declared space's bounds broadcast to the emitted shape; unbounded where JaxMARL declares another shape."""
    if isinstance(space, jaxmarl_spaces.Box):
        low, high = np.asarray(space.low, np.float64), np.asarray(space.high, np.float64)
        if _shape_of(space) == shape or (low.size == 1 and high.size == 1):
            return np.broadcast_to(low, shape), np.broadcast_to(high, shape)
    if isinstance(space, jaxmarl_spaces.Discrete) and shape == ():
        return np.zeros(()), np.full((), space.n - 1.0)
    return np.full(shape, -np.inf), np.full(shape, np.inf)


__all__ = ["FAMILIES", "Family", "JaxMARLAdapter", "episode_length_settings", "family_of"]
