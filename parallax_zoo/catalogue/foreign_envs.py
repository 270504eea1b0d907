"""Builds adapted envs for the registry: a foreign env (gymnax, Brax, Playground, Pgx, Jumanji, XLand-MiniGrid, JaxMARL,
Craftax) in its adapter.

Each builder imports its foreign package and adapter only when called, so
listing the registry needs none of them. The adapters set truncation
themselves from the foreign episode length, which the registry's
`max_steps` configures here, so `make` adds no `TimeLimit`; only a suite
without episode lengths of its own (Pgx, and Jumanji envs without a time
limit) gets a `TimeLimit` where `max_steps` is given. A suite is one builder
and one line in each of `ADAPTER_EXTRAS` and `BUILDERS`.
Before Brax or Playground is imported, `MUJOCO_GL` is pointed at a headless
OpenGL backend where there is no display, so their renderers can start.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.metadata
import inspect
import io
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from types import ModuleType
from typing import Any

from parallax.adapters.frames import mujoco_renderer_problem
from parallax.adapters.mujoco_warnings import mujoco_warnings_as_python_warnings
from parallax.install_command import install_command
from parallax.wrappers import TimeLimit
from parallax_zoo.catalogue.menagerie import require_menagerie_assets
from parallax_zoo.catalogue.signatures import InvalidKwargError, accepted_kwargs, check_kwargs
from parallax_zoo.errors import UserError

ADAPTER_EXTRAS = {
    "brax": "brax",
    "craftax": "craftax",
    "gymnax": "gymnax",
    "jaxmarl": "jaxmarl",
    "jumanji": "jumanji",
    "mjx": "mjx",
    "pgx": "pgx",
    "xminigrid": "xminigrid",
}
"""The pip extra of parallax-zoo that installs each adapter's foreign package."""


class MissingExtraError(UserError, ImportError):
    """An adapted env whose foreign package is not installed; `extra` is the pip extra that installs it."""

    def __init__(self, message: str, extra: str):
        super().__init__(message)
        self.extra = extra


@contextlib.contextmanager
def _stdout_dropped() -> Iterator[None]:
    """Drop what is printed to stdout inside the block, at the file descriptor too: JaxMARL's import points
    `sys.stdout` back at `sys.__stdout__` on the way, so swapping `sys.stdout` alone would not do."""
    stderr = sys.stderr  # which JaxMARL's import also points at sys.__stderr__: put back below
    streams = [stream for stream in (sys.stdout, sys.__stdout__) if stream is not None]
    for stream in streams:
        stream.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(io.StringIO()):
            os.dup2(sink.fileno(), 1)
            try:
                yield
            finally:
                for stream in (sys.stdout, sys.__stdout__):
                    if stream is not None:
                        stream.flush()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        sys.stderr = stderr


def import_optional(module: str, adapter: str, env_id: str) -> ModuleType:
    """Import `module`, or raise a `MissingExtraError` saying which pip extra provides it.

    What a suite prints while it is imported (JaxMARL's "Importing submoduled environments...") is dropped: it
    is not the caller's output."""
    try:
        with _stdout_dropped():
            return importlib.import_module(module)
    except ImportError as error:
        extra = ADAPTER_EXTRAS[adapter]
        raise MissingExtraError(
            f"{env_id} needs {module!r}, which is not importable ({error}). Install it with: {install_command(extra)}",
            extra,
        ) from error


def build_gymnax(env_id: str, foreign_id: str, kwargs: Mapping[str, Any], max_steps: int | None) -> Any:
    """`GymnaxAdapter(env, params)`; `max_steps` sets `params.max_steps_in_episode`, kwargs override other params."""
    gymnax = import_optional("gymnax", "gymnax", env_id)
    env, params = gymnax.make(foreign_id)
    check_kwargs(env_id, kwargs, [field.name for field in dataclasses.fields(params)])
    adapter = import_optional("parallax.adapters.gymnax", "gymnax", env_id)
    if max_steps is not None:  # of the default's type: BernoulliBandit-misc keeps a float, which its step relies on
        params = params.replace(max_steps_in_episode=type(params.max_steps_in_episode)(max_steps))
    return adapter.GymnaxAdapter(env, params.replace(**kwargs))


BRAX_BACKENDS = ("generalized", "positional", "spring", "mjx")
"""The physics pipelines of brax 0.14's `PipelineEnv`, the values of every brax env's `backend=` keyword."""

BRAX_BACKENDS_OF = {"swimmer": ("generalized",)}
"""Brax envs that run on fewer pipelines: brax's Swimmer refuses every backend but `generalized`."""


def check_brax_backend(env_id: str, foreign_id: str, kwargs: Mapping[str, Any]) -> None:
    """Raise `InvalidKwargError` for a `backend=` the brax env does not run on, naming the ones it does."""
    if "backend" not in kwargs:
        return
    accepted = BRAX_BACKENDS_OF.get(foreign_id, BRAX_BACKENDS)
    if kwargs["backend"] not in accepted:
        raise InvalidKwargError(
            f"{env_id}: backend={kwargs['backend']!r} is not a physics backend it runs on. "
            f"It accepts: {', '.join(map(repr, accepted))}."
        )


class IncompatibleVersionsError(UserError, RuntimeError):
    """An env that the installed versions of its suite and of jax cannot run together; the message says why."""


def require_brax_fluid_support(env_id: str, env: Any) -> None:
    """Raise `IncompatibleVersionsError` for a brax env with fluid forces (Swimmer) where jax cannot compute them.

    brax 0.14 computes fluid forces with `jax.numpy.clip(a_min=...)`, a keyword that later jax releases
    removed, so such an env would fail with a traceback on its first step (docs/suites.md, "Brax").
    """
    import jax.numpy as jnp

    if not bool(getattr(env.sys, "enable_fluid", False)) or "a_min" in inspect.signature(jnp.clip).parameters:
        return
    versions = f"brax {importlib.metadata.version('brax')} and jax {importlib.metadata.version('jax')}"
    raise IncompatibleVersionsError(
        f"{env_id} cannot run with {versions}: brax computes its fluid forces with jax.numpy.clip(a_min=...), "
        "which this jax no longer accepts. Install a jax whose jax.numpy.clip takes a_min, or a brax release "
        "that calls clip(min=...)."
    )


def build_brax(env_id: str, foreign_id: str, kwargs: Mapping[str, Any], max_steps: int | None) -> Any:
    """`BraxAdapter(brax.envs.get_environment(foreign_id, **kwargs), episode_length=max_steps)`.

    `backend=` picks brax's physics pipeline (`generalized` unless given), checked like every other kwarg.
    """
    mujoco_renderer_problem()
    brax_envs = import_optional("brax.envs", "brax", env_id)
    with mujoco_warnings_as_python_warnings():
        env = brax_envs.get_environment(foreign_id)
        if kwargs:
            check_kwargs(env_id, kwargs, type(env))
            check_brax_backend(env_id, foreign_id, kwargs)
            env = type(env)(**kwargs)
    require_brax_fluid_support(env_id, env)
    adapter = import_optional("parallax.adapters.brax", "brax", env_id)
    episode = {} if max_steps is None else {"episode_length": max_steps}
    return adapter.BraxAdapter(env, **episode)


def build_mjx(env_id: str, foreign_id: str, kwargs: Mapping[str, Any], max_steps: int | None) -> Any:
    """`MJXAdapter(registry.load(foreign_id, config_overrides=...))` with the JAX implementation of MJX.

    kwargs override entries of the Playground config; `max_steps` sets its `episode_length`. A locomotion or
    manipulation env whose MuJoCo Menagerie robot assets are missing fails first, in one line (`menagerie.py`).
    """
    mujoco_renderer_problem()
    playground = import_optional("mujoco_playground", "mjx", env_id)
    require_menagerie_assets(env_id, playground, foreign_id)
    config = playground.registry.get_default_config(foreign_id)
    check_kwargs(env_id, kwargs, sorted(config.keys()))
    adapter = import_optional("parallax.adapters.mjx", "mjx", env_id)
    overrides: dict[str, Any] = {"impl": "jax"} if "impl" in config else {}
    if max_steps is not None and "episode_length" in config:
        overrides["episode_length"] = max_steps
    overrides.update(kwargs)
    with mujoco_warnings_as_python_warnings():
        return adapter.MJXAdapter(playground.registry.load(foreign_id, config_overrides=overrides))


def build_jaxmarl(env_id: str, foreign_id: str, kwargs: Mapping[str, Any], max_steps: int | None) -> Any:
    """`JaxMARLAdapter(jaxmarl.make(foreign_id, **kwargs))`; `max_steps` sets the env's own time limit, kwargs win.

    A family with no time-limit setting (Coin Game, STORM, Switch Riddle,
    Hanabi) gets a `TimeLimit` for a `max_steps` shorter than its own episode
    length (any, for Hanabi, which has none); a longer one is refused.
    """
    mujoco_renderer_problem()  # JaxMARL imports Brax, and so MuJoCo, which reads MUJOCO_GL once
    jaxmarl = import_optional("jaxmarl", "jaxmarl", env_id)
    adapter = import_optional("parallax.adapters.jaxmarl", "jaxmarl", env_id)
    with mujoco_warnings_as_python_warnings(import_mujoco=False):
        default = jaxmarl.make(foreign_id)
    env_class = type(default)
    accepted = accepted_kwargs(env_class)
    inner = getattr(default, "_env", None)  # HeuristicEnemySMAX passes the settings it does not know to its SMAX
    if accepted is not None and inner is not None:
        inner_accepted = accepted_kwargs(type(inner))
        accepted = None if inner_accepted is None else accepted + inner_accepted
    if accepted is not None:
        check_kwargs(env_id, kwargs, accepted)
    family = adapter.family_of(env_class)
    default_length = family.episode_length(default)
    cut_short = max_steps is not None and max_steps != default_length and family.limit_setting is None
    if cut_short and default_length is not None and max_steps > default_length:
        raise InvalidKwargError(
            f"{env_id} ends every episode by step {default_length}, and JaxMARL's {env_class.__name__} has no "
            f"episode-length setting, so max_steps={max_steps} cannot lengthen it. Give max_steps <= {default_length}."
        )
    limit = {} if max_steps == default_length else adapter.episode_length_settings(env_class, max_steps)
    if accepted is not None and not set(limit) <= set(accepted):
        raise InvalidKwargError(
            f"{env_id} has a fixed episode length of {default_length} steps: JaxMARL's {env_class.__name__} "
            f"takes no {', '.join(limit)} setting, so max_steps={max_steps} cannot be applied."
        )
    settings = {**limit, **kwargs}
    try:
        with mujoco_warnings_as_python_warnings(import_mujoco=False):  # MABrax compiles Brax XML, halfcheetah warns
            env = jaxmarl.make(foreign_id, **settings)
    except TypeError as error:  # JaxMARL builds some ids (MPE facmac 3a/6a/9a) from factories that take no settings
        fixed = (
            f" (a fixed episode length of {default_length} steps: max_steps={max_steps} cannot be applied)"
            if limit
            else ""
        )
        raise InvalidKwargError(f"{env_id} does not take the settings {sorted(settings)}{fixed}: {error}") from error
    adapted = adapter.JaxMARLAdapter(env)
    return TimeLimit(adapted, max_steps) if cut_short and max_steps is not None else adapted


def build_craftax(env_id: str, foreign_id: str, kwargs: Mapping[str, Any], max_steps: int | None) -> Any:
    """`CraftaxAdapter` around Craftax's env without auto-reset; `max_steps` sets `params.max_timesteps`.

    kwargs name fields of Craftax's `EnvParams` (`day_length`, ...) or of its
    `StaticEnvParams` (`map_size`, ...), which rebuild the env.
    """
    craftax_env = import_optional("craftax.craftax_env", "craftax", env_id)
    adapter = import_optional("parallax.adapters.craftax", "craftax", env_id)
    env = craftax_env.make_craftax_env_from_name(foreign_id, auto_reset=False)
    params, static = env.default_params, env.default_static_params()
    static_names = [field.name for field in dataclasses.fields(static)]
    check_kwargs(env_id, kwargs, [field.name for field in dataclasses.fields(params)] + static_names)
    static_kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items() if k in static_names}
    if static_kwargs:
        env = type(env)(static_env_params=static.replace(**static_kwargs))
    if max_steps is not None:
        params = params.replace(max_timesteps=max_steps)
    return adapter.CraftaxAdapter(env, params.replace(**{k: v for k, v in kwargs.items() if k not in static_names}))


def build_pgx(env_id: str, foreign_id: str, kwargs: Mapping[str, Any], max_steps: int | None) -> Any:
    """`PgxAdapter(pgx.make(foreign_id))`, or `PgxSinglePlayerAdapter` for a single-player game.

    kwargs are the game class's constructor arguments (Go's `size` and
    `komi`, MinAtar's `sticky_action_prob`, ...); Pgx's games end by their
    own rules, so `max_steps`, where given, adds a `TimeLimit`.
    """
    pgx = import_optional("pgx", "pgx", env_id)
    game = pgx.make(foreign_id)
    if kwargs:
        check_kwargs(env_id, kwargs, type(game))
        game = type(game)(**kwargs)
    adapter = import_optional("parallax.adapters.pgx", "pgx", env_id)
    env = adapter.PgxAdapter(game) if game.num_players > 1 else adapter.PgxSinglePlayerAdapter(game)
    return env if max_steps is None else TimeLimit(env, max_steps)


def build_jumanji(env_id: str, foreign_id: str, kwargs: Mapping[str, Any], max_steps: int | None) -> Any:
    """`JumanjiAdapter(jumanji.make(foreign_id, **kwargs))`; `max_steps` sets the env's `time_limit`.

    An env without a time limit of its own (TSP, Knapsack, ...) ends by its
    rules; `max_steps`, where given for one, adds a `TimeLimit`.
    """
    jumanji = import_optional("jumanji", "jumanji", env_id)
    env = jumanji.make(foreign_id)
    settings = dict(kwargs)
    has_time_limit = "time_limit" in (accepted_kwargs(type(env)) or ())
    if max_steps is not None and has_time_limit and getattr(env, "time_limit", None) != max_steps:
        settings.setdefault("time_limit", max_steps)
    if settings:
        check_kwargs(env_id, settings, type(env))
        env = jumanji.make(foreign_id, **settings)
    adapter = import_optional("parallax.adapters.jumanji", "jumanji", env_id)
    wrapped = adapter.JumanjiAdapter(env)
    return wrapped if max_steps is None or has_time_limit else TimeLimit(wrapped, max_steps)


def build_xminigrid(env_id: str, foreign_id: str, kwargs: Mapping[str, Any], max_steps: int | None) -> Any:
    """`XMiniGridAdapter(*xminigrid.make(foreign_id))`; `max_steps` and kwargs (`ruleset`, `view_size`, ...) replace
    params."""
    xminigrid = import_optional("xminigrid", "xminigrid", env_id)
    env, params = xminigrid.make(foreign_id)
    check_kwargs(env_id, kwargs, [field.name for field in dataclasses.fields(params)])
    adapter = import_optional("parallax.adapters.xminigrid", "xminigrid", env_id)
    if max_steps is not None:
        params = params.replace(max_steps=max_steps)
    return adapter.XMiniGridAdapter(env, params.replace(**kwargs))


BUILDERS: dict[str, Callable[[str, str, Mapping[str, Any], int | None], Any]] = {
    "brax": build_brax,
    "craftax": build_craftax,
    "gymnax": build_gymnax,
    "jaxmarl": build_jaxmarl,
    "jumanji": build_jumanji,
    "mjx": build_mjx,
    "pgx": build_pgx,
    "xminigrid": build_xminigrid,
}
"""Adapter name in registry.yaml -> the function that builds such an env."""
