"""Agents: PPO and MAPPO trainers, their networks, rollouts and advantage estimation, and the players they meet.

Whatever acts is a `Player` (`agents.player`): `act(observation, key, action_mask=...)` for every one.

    from parallax_zoo.agents import PPOConfig, ppo
    policy, metrics = jax.jit(ppo.make_train(PPOConfig(), env))(jax.random.key(0))

Importing this package needs the `train` extra (flax, optax).
"""

from parallax_zoo.agents import mappo, ppo
from parallax_zoo.agents.advantages import estimate_advantages
from parallax_zoo.agents.mappo import MAPPOConfig
from parallax_zoo.agents.player import Player
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.ppo import PPOConfig

__all__ = ["MAPPOConfig", "PPOConfig", "Player", "Policy", "estimate_advantages", "mappo", "ppo"]
