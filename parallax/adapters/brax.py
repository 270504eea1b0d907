"""`BraxAdapter`: a Brax environment as a parallax `Env`.

Accepts a bare env or one inside brax's training wrappers (`training.wrap`,
`envs.create`): the auto-reset, episode, vmap and evaluation wrappers are all
stripped, because auto-reset overwrites terminal observations and vmap adds a
batch axis that `VmapWrapper` adds again (docs/protocol.md). The episode
wrapper's `episode_length` and `action_repeat` are kept and applied here.
"""

from __future__ import annotations

from typing import Any

from brax.envs.base import Env as BraxEnv
from brax.envs.wrappers import training

from parallax.adapters._physics import PhysicsAdapter, first_given, strip_wrappers

BRAX_DEFAULT_EPISODE_LENGTH = 1000
"""The length brax's own `envs.create` and `training.wrap` use when none is given."""

TRAINING_WRAPPERS = (
    training.AutoResetWrapper,
    training.EpisodeWrapper,
    training.VmapWrapper,
    training.EvalWrapper,
)


class BraxAdapter(PhysicsAdapter):
    """Wraps a Brax env; `info` carries brax's `metrics`, `env_state` the brax `State`.

    The episode length is the argument if given, else the stripped
    `EpisodeWrapper`'s, else brax's default of 1000 env steps; likewise the
    action repeat is the argument, the wrapper's, or 1. Actions are in
    [-1, 1], as brax environments expect.
    """

    def __init__(self, env: BraxEnv, episode_length: int | None = None, *, action_repeat: int | None = None):
        if not isinstance(env, BraxEnv):
            raise TypeError(
                f"BraxAdapter expects a brax.envs.Env, got {type(env).__name__}. "
                "Create one with brax.envs.get_environment(name)."
            )
        bare, wrapped_length, wrapped_repeat = strip_wrappers(
            env,
            removable=TRAINING_WRAPPERS,
            refused=(training.DomainRandomizationVmapWrapper,),
            episode_wrapper=training.EpisodeWrapper,
            adapter=self.name,
        )
        super().__init__(
            bare,
            episode_length=first_given(episode_length, wrapped_length, BRAX_DEFAULT_EPISODE_LENGTH),
            action_repeat=first_given(action_repeat, wrapped_repeat, 1),
        )

    def _renderable(self, states: Any) -> Any:
        """Brax's `render` takes its pipeline states."""
        return states.env_state.pipeline_state


__all__ = ["BraxAdapter"]
