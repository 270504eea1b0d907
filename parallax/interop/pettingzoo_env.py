"""`to_pettingzoo` and `to_pettingzoo_aec`: a multi-agent parallax env as a PettingZoo `ParallelEnv` or `AECEnv`.

Slot `i` is the agent `agent_i`. A slot that goes inactive leaves `agents`,
terminated for that agent (truncated instead when the episode is cut short
on that step), and comes back when the env makes it active again. PettingZoo
forbids an agent to come back once done, so an env whose slots come back
declares `respawns = True`; its agents then stay in `agents` until the
episode ends, and `infos[agent]["active"]` says whether an agent's action is
used. Rewards follow the protocol's pairing: the reward a step returns for an
agent is the one its slot earned on that step. Masked envs give each agent a
`{"observation", "action_mask"}` dict, as PettingZoo's classic games do.
docs/interop.md shows both exports in use.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import jax
import numpy as np
from pettingzoo import AECEnv, ParallelEnv

from parallax.core import MARLState
from parallax.interop.compiled import jit_once
from parallax.interop.gymnasium_spaces import checked_action, slot_space, to_gymnasium_space
from parallax.spaces import PyTreeSpace

RENDER_FPS = 8
"""Frames per second PettingZoo's tools assume for the exports' RGB frames."""


def to_pettingzoo(env: Any, render_mode: str | None = None) -> PettingZooParallelEnv:
    """A `pettingzoo.ParallelEnv` in which every live agent acts on every step of the multi-agent `env`."""
    return PettingZooParallelEnv(env, render_mode=render_mode)


def to_pettingzoo_aec(env: Any, render_mode: str | None = None) -> PettingZooAECEnv:
    """A `pettingzoo.AECEnv`: the agents that can act on a step take turns in slot order, then the env steps.

    An agent can act when its slot is active and, in a masked env, its mask
    allows more than the last action (the waiting player's no-op in the
    zoo's board games): so in a board game the player to move is the only one
    to act, and in a simultaneous env every active agent acts in turn. The
    others play their first legal action (zeros without a mask).
    """
    return PettingZooAECEnv(env, render_mode=render_mode)


def _reset(env: Any, key: jax.Array) -> tuple:
    key, reset_key = jax.random.split(key)
    return key, env.reset(key=reset_key)


def _step(env: Any, state: MARLState, action: jax.Array) -> MARLState:
    return env.step(state, action)


def _render(env: Any, state: MARLState) -> jax.Array:
    return env.render(state)


class _Slots:
    """What both exports share: the jitted env, the agents' names and spaces, and NumPy views of a state."""

    def __init__(self, env: Any, export: str, render_mode: str | None):
        if getattr(env, "num_envs", None) is not None:
            raise TypeError(f"{export} expects one unbatched env, got {env!r} with num_envs={env.num_envs}.")
        abstract = jax.eval_shape(lambda key: env.reset(key=key), jax.random.key(0))
        if not isinstance(abstract, MARLState):
            raise TypeError(
                f"{export} exports multi-agent envs (whose states are MARLStates); {env!r} is single-agent. "
                "Use parallax.interop.to_gymnasium for it."
            )
        if isinstance(env.action_space, PyTreeSpace):
            raise TypeError(f"{export} needs an array action space, got {env.action_space!r}.")
        self.env = env
        self.num_slots = int(abstract.agents.active.shape[0])
        self.names = [f"agent_{slot}" for slot in range(self.num_slots)]
        self.slot_of = {name: slot for slot, name in enumerate(self.names)}
        self.respawns = bool(getattr(env, "respawns", False))
        mask = abstract.agents.action_mask
        self.masked = mask is not None
        self.render_modes = ["rgb_array"] if callable(getattr(env, "render", None)) else []
        if render_mode is not None and render_mode not in self.render_modes:
            supported = f"it supports {self.render_modes}" if self.render_modes else "it has no render(state) method"
            raise ValueError(f"render_mode={render_mode!r} is not available for {env!r}: {supported}.")
        self.action_dtype = np.dtype(env.action_space.dtype)
        self.action_shape = tuple(env.action_space.shape)
        self.observation_spaces: dict[str, gymnasium.spaces.Space] = {}
        self.action_spaces: dict[str, gymnasium.spaces.Space] = {}
        for slot, name in enumerate(self.names):
            observation_space = to_gymnasium_space(slot_space(env.observation_space, slot))
            if mask is not None:
                mask_space = gymnasium.spaces.Box(0, 1, (mask.shape[-1],), np.int8)
                observation_space = gymnasium.spaces.Dict({"observation": observation_space, "action_mask": mask_space})
            self.observation_spaces[name] = observation_space
            self.action_spaces[name] = to_gymnasium_space(slot_space(env.action_space, slot))
        declared = getattr(env, "global_observation_space", None)
        self.state_space = None if declared is None else to_gymnasium_space(declared)

        self._reset = jit_once(_reset, env)
        self._step = jit_once(_step, env)

    def reset(self, key: jax.Array) -> tuple:
        """The next key, the reset state, and its NumPy view (see `view`)."""
        key, state = self._reset(key)
        return key, state, self.view(state)

    def step(self, state: MARLState, action: np.ndarray) -> tuple:
        """The next state and its NumPy view."""
        state = self._step(state, action)
        return state, self.view(state)

    def view(self, state: MARLState) -> tuple:
        """What the exports read from a state, in NumPy: per-slot observations, rewards, active flags, masks; the
        flags."""
        agents = state.agents
        mask = None if agents.action_mask is None else np.asarray(agents.action_mask)
        observation = jax.tree_util.tree_map(np.asarray, agents.observation)
        return (observation, np.asarray(agents.reward), np.asarray(agents.active), mask,
                np.asarray(state.termination), np.asarray(state.truncation))  # fmt: skip

    def first_key(self, seed: int | None, key: jax.Array | None) -> jax.Array:
        """The key a reset starts from: `jax.random.key(seed)`, the last one, or a fresh random one."""
        if seed is not None:
            return jax.random.key(seed)
        if key is not None:
            return key
        return jax.random.key(int(np.random.default_rng().integers(2**31)))

    def observation(self, view: tuple, slot: int) -> Any:
        observations, _, _, mask, _, _ = view
        observation = jax.tree_util.tree_map(lambda x: x[slot], observations)
        if self.masked:
            return {"observation": observation, "action_mask": mask[slot].astype(np.int8)}
        return observation

    def default_actions(self, view: tuple) -> np.ndarray:
        """Every slot's action before any agent chooses: its first legal action, or zeros without a mask."""
        mask = view[3]
        if self.masked:
            return np.argmax(mask, axis=-1).astype(self.action_dtype)
        return np.zeros(self.action_shape, self.action_dtype)

    def can_act(self, view: tuple) -> np.ndarray:
        """Which slots choose an action on the next step (see `to_pettingzoo_aec`)."""
        _, _, active, mask, _, _ = view
        choosing = active & mask[:, :-1].any(axis=-1) if self.masked else active
        if choosing.any():
            return choosing
        return active if active.any() else np.ones_like(active)

    def outcome(self, before: tuple, after: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per slot, after a step: whether its agent is terminated, truncated, and still live."""
        _, _, was_active, _, _, _ = before
        _, _, active, _, termination, truncation = after
        ended = bool(termination) or bool(truncation)
        if self.respawns:
            terminated = np.full(self.num_slots, bool(termination))
            truncated = np.full(self.num_slots, bool(truncation) and not bool(termination))
            return terminated, truncated, np.full(self.num_slots, not ended)
        left = was_active & ~active
        terminated = left & ~np.bool_(truncation) | np.bool_(termination)
        truncated = (left | np.bool_(truncation)) & ~terminated
        return terminated, truncated, active & ~ended

    def live(self, view: tuple) -> np.ndarray:
        """Which slots are agents right after a reset."""
        active = view[2]
        return np.ones_like(active) if self.respawns else active

    def render(self, state: MARLState) -> np.ndarray:
        return np.asarray(jit_once(_render, self.env)(state))

    def global_observation(self, state: MARLState) -> np.ndarray:
        if state.global_observation is None:
            raise AttributeError(f"{self.env!r} gives no global_observation, so there is no state() to return.")
        return np.asarray(state.global_observation)


class PettingZooParallelEnv(ParallelEnv):
    """A multi-agent parallax env behind PettingZoo's `ParallelEnv` API; `parallax_env` is the JAX env it steps.

    `step` needs an action for every agent in `agents`. `state()` is the
    env's `global_observation`, for centralised critics.
    """

    def __init__(self, env: Any, render_mode: str | None = None):
        self._slots = _Slots(env, "to_pettingzoo", render_mode)
        self.parallax_env = env
        self.possible_agents = list(self._slots.names)
        self.agents: list[str] = []
        self.observation_spaces = self._slots.observation_spaces
        self.action_spaces = self._slots.action_spaces
        if self._slots.state_space is not None:
            self.state_space = self._slots.state_space
        self.metadata = {
            "name": _name(env),
            "render_modes": self._slots.render_modes,
            "render_fps": RENDER_FPS,
            "is_parallelizable": True,
        }
        self.render_mode = render_mode
        self._key: jax.Array | None = None
        self._state: Any = None
        self._view: tuple = ()
        self._warned = False

    @property
    def parallax_state(self) -> Any:
        """The current JAX state (None before the first `reset`)."""
        return self._state

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        self._warned = False
        self._key, self._state, self._view = self._slots.reset(self._slots.first_key(seed, self._key))
        live = self._slots.live(self._view)
        self.agents = [name for name, is_live in zip(self.possible_agents, live) if is_live]
        observations = {name: self._slots.observation(self._view, self._slots.slot_of[name]) for name in self.agents}
        return observations, {name: {"active": bool(self._view[2][self._slots.slot_of[name]])} for name in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if self._state is None:
            raise RuntimeError("step() was called before reset(); call reset() first.")
        unknown = [name for name in actions if name not in self._slots.slot_of]
        if unknown:
            raise ValueError(
                f"step got actions for {unknown}, which are not agents of this env; its agents are "
                f"{self.possible_agents}."
            )
        if bool(self._view[4]) or bool(self._view[5]):
            if not self._warned:
                gymnasium.logger.warn(
                    "step() was called after the episode ended; call reset() to start a new one. "
                    "Until then a step returns empty dicts, as PettingZoo's parallel envs do."
                )
                self._warned = True
            return {}, {}, {}, {}, {}
        missing = [name for name in self.agents if name not in actions]
        if missing:
            raise ValueError(f"step needs an action for every agent in agents; missing {missing}.")
        batch = self._slots.default_actions(self._view)
        for name in self.agents:
            where = f"{type(self).__name__}.step, {name}"
            batch[self._slots.slot_of[name]] = checked_action(self.action_spaces[name], actions[name], where)
        before = self._view
        self._state, self._view = self._slots.step(self._state, batch)
        after = self._view
        terminated, truncated, live = self._slots.outcome(before, after)
        reported = [name for slot, name in enumerate(self.possible_agents) if name in self.agents or live[slot]]
        rewards = after[1]
        slot_of = self._slots.slot_of
        observations = {name: self._slots.observation(after, slot_of[name]) for name in reported}
        result = (
            observations,
            {name: float(rewards[slot_of[name]]) for name in reported},
            {name: bool(terminated[slot_of[name]]) for name in reported},
            {name: bool(truncated[slot_of[name]]) for name in reported},
            {name: {"active": bool(after[2][slot_of[name]])} for name in reported},
        )
        self.agents = [name for slot, name in enumerate(self.possible_agents) if live[slot]]
        return result

    def render(self) -> np.ndarray | None:
        """The env's RGB picture of the current state with `render_mode="rgb_array"`, else None."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() was called without a render_mode; make the env with render_mode='rgb_array'."
            )
            return None
        return self._slots.render(self._state)

    def state(self) -> np.ndarray:
        return self._slots.global_observation(self._state)

    def close(self) -> None:
        """Nothing to release: the env is pure functions and its state an array pytree."""

    def __repr__(self) -> str:
        return f"PettingZooParallelEnv({self.parallax_env!r})"


class PettingZooAECEnv(AECEnv):
    """A multi-agent parallax env behind PettingZoo's `AECEnv` API; `parallax_env` is the JAX env it steps."""

    def __init__(self, env: Any, render_mode: str | None = None):
        super().__init__()
        self._slots = _Slots(env, "to_pettingzoo_aec", render_mode)
        self.parallax_env = env
        self.possible_agents = list(self._slots.names)
        self.agents = []
        self.observation_spaces = self._slots.observation_spaces
        self.action_spaces = self._slots.action_spaces
        if self._slots.state_space is not None:
            self.state_space = self._slots.state_space
        self.metadata = {"name": _name(env), "render_modes": self._slots.render_modes, "render_fps": RENDER_FPS}
        self.render_mode = render_mode
        self._key: jax.Array | None = None
        self._state: Any = None
        self._view: tuple = ()
        self._turns: list[str] = []
        self._actions = np.zeros(0)

    @property
    def parallax_state(self) -> Any:
        """The current JAX state (None before the first `reset`)."""
        return self._state

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.action_spaces[agent]

    def observe(self, agent: str) -> Any:
        return self._slots.observation(self._view, self._slots.slot_of[agent])

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._key, self._state, self._view = self._slots.reset(self._slots.first_key(seed, self._key))
        live = self._slots.live(self._view)
        self.agents = [name for name, is_live in zip(self.possible_agents, live) if is_live]
        self.rewards = {name: 0.0 for name in self.agents}
        self._cumulative_rewards = {name: 0.0 for name in self.agents}
        self.terminations = {name: False for name in self.agents}
        self.truncations = {name: False for name in self.agents}
        self.infos = {name: {"active": bool(self._view[2][self._slots.slot_of[name]])} for name in self.agents}
        self._skip_agent_selection = None
        self._start_turns()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is live, so it needs an action; None is only for agents that are done.")
        where = f"{type(self).__name__}.step, {agent}"
        self._actions[self._slots.slot_of[agent]] = checked_action(self.action_spaces[agent], action, where)
        self._cumulative_rewards[agent] = 0.0
        self._turns.pop(0)
        if self._turns:
            self._clear_rewards()
            self.agent_selection = self._turns[0]
        else:
            self._step_env()
        self._accumulate_rewards()
        self._deads_step_first()

    def _step_env(self) -> None:
        before = self._view
        self._state, self._view = self._slots.step(self._state, self._actions)
        after = self._view
        terminated, truncated, live = self._slots.outcome(before, after)
        for slot, name in enumerate(self.possible_agents):
            if name not in self.agents:
                if not live[slot]:
                    continue
                self.agents.append(name)
                self._cumulative_rewards[name] = 0.0
            self.rewards[name] = float(after[1][slot])
            self.terminations[name] = bool(terminated[slot])
            self.truncations[name] = bool(truncated[slot])
            self.infos[name] = {"active": bool(after[2][slot])}
        self.agents.sort(key=self._slots.slot_of.__getitem__)
        self._start_turns()

    def _start_turns(self) -> None:
        """Queue the agents that choose the next step's actions, in slot order, and select the first."""
        self._actions = self._slots.default_actions(self._view)
        can_act = self._slots.can_act(self._view)
        live = [name for name in self.agents if not (self.terminations[name] or self.truncations[name])]
        self._turns = [name for name in live if can_act[self._slots.slot_of[name]]] or live
        self.agent_selection = self._turns[0] if self._turns else self.agents[0]

    def render(self) -> np.ndarray | None:
        """The env's RGB picture of the current state with `render_mode="rgb_array"`, else None."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() was called without a render_mode; make the env with render_mode='rgb_array'."
            )
            return None
        return self._slots.render(self._state)

    def state(self) -> np.ndarray:
        return self._slots.global_observation(self._state)

    def close(self) -> None:
        """Nothing to release: the env is pure functions and its state an array pytree."""

    def __repr__(self) -> str:
        return f"PettingZooAECEnv({self.parallax_env!r})"


def _name(env: Any) -> str:
    """The env's class name, under any wrappers: PettingZoo prints it as the env's name."""
    inner = getattr(env, "unwrapped", env)
    return type(inner).__name__
