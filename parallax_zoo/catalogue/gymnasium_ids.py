"""The zoo's single-agent ids in Gymnasium's registry, under the `parallax_zoo` namespace.

`gymnasium.make("parallax_zoo/GridWorld-v0")` and
`gymnasium.make_vec("parallax_zoo/GridWorld-v0", num_envs=128)` work once
`parallax_zoo` is imported; an adapted id keeps its name with `-` for `/`
(`parallax_zoo/gymnax-CartPole-v1`). Importing `parallax_zoo` never imports
Gymnasium: the ids are registered at once when Gymnasium is already loaded,
and otherwise right after Gymnasium's own import finishes. Ids registered
into the zoo later are exported with `to_gymnasium(parallax_zoo.make(id))`.
docs/interop.md shows them in use.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from typing import Any

from parallax_zoo.catalogue.registry import list_envs, make, resolve, spec

NAMESPACE = "parallax_zoo"


def gymnasium_id(env_id: str) -> str:
    """The Gymnasium id of a zoo id: `GridWorld-v0` -> `parallax_zoo/GridWorld-v0`, `brax/ant` ->
    `parallax_zoo/brax-ant`."""
    return f"{NAMESPACE}/{env_id.replace('/', '-')}"


def shared_env(env_id: str) -> Any:
    """`make(env_id)`, one env object per id (`registry.resolve`): every export made from it reuses the same compiled
    reset and step."""
    return resolve(env_id)[1]


def make_gymnasium_env(env_id: str, render_mode: str | None = None, **kwargs: Any) -> Any:
    """Gymnasium's entry point for a zoo id: `to_gymnasium(parallax_zoo.make(env_id, **kwargs))`."""
    from parallax.interop import to_gymnasium

    return to_gymnasium(make(env_id, **kwargs) if kwargs else shared_env(env_id), render_mode=render_mode)


def make_gymnasium_vector_env(env_id: str, num_envs: int, render_mode: str | None = None, **kwargs: Any) -> Any:
    """Gymnasium's vector entry point for a zoo id: `to_gymnasium_vector(parallax_zoo.make(env_id, **kwargs),
    num_envs)`."""
    from parallax.interop import to_gymnasium_vector

    env = make(env_id, **kwargs) if kwargs else shared_env(env_id)
    return to_gymnasium_vector(env, num_envs, render_mode=render_mode)


def register_gymnasium_envs() -> list[str]:
    """Register every single-agent zoo id not yet in Gymnasium's registry; returns the Gymnasium ids registered."""
    import gymnasium

    registered = []
    for env_id in list_envs():
        if spec(env_id).multi_agent or gymnasium_id(env_id) in gymnasium.registry:
            continue
        gymnasium.register(
            id=gymnasium_id(env_id),
            entry_point=f"{__name__}:make_gymnasium_env",
            vector_entry_point=f"{__name__}:make_gymnasium_vector_env",
            kwargs={"env_id": env_id},
        )
        registered.append(gymnasium_id(env_id))
    return registered


class _RegisterAfterGymnasium(importlib.abc.MetaPathFinder):
    """Finds `gymnasium` as usual and registers the zoo's ids as soon as Gymnasium's own import has run."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "gymnasium":
            return None
        sys.meta_path.remove(self)
        found = importlib.util.find_spec(name)
        loader = None if found is None else found.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return found
        run_gymnasium = loader.exec_module

        def run_then_register(module: Any) -> None:
            run_gymnasium(module)
            register_gymnasium_envs()

        loader.exec_module = run_then_register  # type: ignore[method-assign]
        return found


def register_when_gymnasium_loads() -> None:
    """Register now if Gymnasium is loaded, else right after it is first imported (it never is, by this call)."""
    if "gymnasium" in sys.modules:
        register_gymnasium_envs()
    elif not any(isinstance(finder, _RegisterAfterGymnasium) for finder in sys.meta_path):
        sys.meta_path.insert(0, _RegisterAfterGymnasium())
