"""`MJXAdapter`: a MuJoCo Playground environment as a parallax `Env`.

Load the environment with the JAX implementation of MJX so that it runs
under `jit` and `vmap` on any device:
`registry.load(name, config_overrides={"impl": "jax"})`. Playground's own
training wrappers (`wrapper.wrap_for_brax_training`) are stripped like
Brax's, keeping their episode length and action repeat.
"""

from __future__ import annotations

from typing import Any

from brax.envs.wrappers import training as brax_training
from mujoco_playground import MjxEnv
from mujoco_playground import wrapper as playground_wrapper

from parallax.adapters._physics import PhysicsAdapter, first_given, strip_wrappers

TRAINING_WRAPPERS = (
    playground_wrapper.BraxAutoResetWrapper,
    brax_training.AutoResetWrapper,
    brax_training.EpisodeWrapper,
    brax_training.VmapWrapper,
    brax_training.EvalWrapper,
)


class MJXAdapter(PhysicsAdapter):
    """Wraps a Playground env; `info` carries its `metrics`, `env_state` its `State`.

    The episode length and action repeat are the arguments if given, else
    the stripped `EpisodeWrapper`'s, else the env's config
    (`episode_length`, `action_repeat`). Playground 0.2.0 has no public
    accessor for an env's config, so it is read from `env.config` where a
    later version provides one and from `env._config` otherwise.
    """

    def __init__(self, env: MjxEnv, episode_length: int | None = None, *, action_repeat: int | None = None):
        if not isinstance(getattr(env, "unwrapped", None), MjxEnv):
            raise TypeError(
                f"MJXAdapter expects a mujoco_playground MjxEnv, got {type(env).__name__}. Create one with "
                'mujoco_playground.registry.load(name, config_overrides={"impl": "jax"}).'
            )
        bare, wrapped_length, wrapped_repeat = strip_wrappers(
            env,
            removable=TRAINING_WRAPPERS,
            refused=(
                playground_wrapper.BraxDomainRandomizationVmapWrapper,
                brax_training.DomainRandomizationVmapWrapper,
            ),
            episode_wrapper=brax_training.EpisodeWrapper,
            adapter=self.name,
        )
        episode_length = first_given(episode_length, wrapped_length, _config_value(bare, "episode_length"))
        if episode_length is None:
            raise ValueError(
                f"MJXAdapter: {type(bare).__name__} has no episode_length in its config; pass episode_length=."
            )
        super().__init__(
            bare,
            episode_length=int(episode_length),
            action_repeat=int(first_given(action_repeat, wrapped_repeat, _config_value(bare, "action_repeat"), 1)),
        )


def _config_value(env: Any, field: str) -> Any:
    """`field` of the env's config, or None where the config has no such field."""
    config = getattr(env, "config", None)
    if config is None:
        config = getattr(env, "_config", None)
    return None if config is None else config.get(field)


__all__ = ["MJXAdapter"]
