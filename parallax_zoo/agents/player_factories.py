"""Every player made from a name or a policy: the random player, registry.yaml's scripted opponents, the baseline.

The one place that turns what a caller names into a `Player`: evaluation's
opponents (docs/evaluation.md), the leaderboard's entrants, and the fixed
opponents MAPPO seats in training (`MAPPOConfig.opponent`) all come from here.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from parallax.core import AnyEnv
from parallax_zoo.agents.player import Player
from parallax_zoo.agents.players import Greedy, MaskedScriptedPlayer, RandomPlayer, Rotation, ScriptedPlayer
from parallax_zoo.agents.policy import Policy, actor_critic_for
from parallax_zoo.catalogue import registry
from parallax_zoo.catalogue.player_names import BASELINE, RANDOM
from parallax_zoo.catalogue.registry import EnvSpec, RegistryError


def random_player(env: AnyEnv) -> RandomPlayer:
    """The uniformly random player of `env`, over each slot's legal actions."""
    return RandomPlayer(actor_critic_for(env))


def as_player(env: Any, policy: Player | str, greedy: bool) -> Player:
    """What acts for `policy`: the random player for `"random"`, a `Policy` greedy or sampling, any player as is."""
    if isinstance(policy, Policy):
        return Greedy(policy) if greedy else policy
    if isinstance(policy, str):
        if policy != RANDOM:
            raise ValueError(f"evaluate: a policy is a Policy, a player or {RANDOM!r}, got the string {policy!r}")
        return random_player(env)
    if not isinstance(policy, Player):
        raise TypeError(
            f"evaluate: expected a parallax_zoo Policy, a Player or {RANDOM!r}, got {type(policy).__name__}; a Player "
            f"has act, act_slots, value and env_action (parallax_zoo.agents.player.Player)"
        )
    return policy


def scripted_rule(env_spec: str | EnvSpec, name: str, held_out: bool = False) -> Callable[..., Any]:
    """The rule registry.yaml names as the env's opponent `name` (see `EnvSpec.opponents`), imported; with
    `held_out`, its held-out player `name` (`EnvSpec.held_out`) instead."""
    env_spec = registry.spec(env_spec) if isinstance(env_spec, str) else env_spec
    table, players = (env_spec.held_out, "held_out") if held_out else (env_spec.opponents, "opponents")
    if name not in table:
        known = ", ".join(map(repr, table)) or "none"
        what = "held-out player" if held_out else "scripted opponent"
        raise RegistryError(f"{env_spec.id} has no {what} {name!r}; registry.yaml lists: {known}")
    target_path = table[name]
    module_name, _, attribute = target_path.partition(":")
    where = f"{env_spec.id}: {players}.{name} {target_path!r}"
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise RegistryError(f"{where}: cannot import {module_name!r}: {error}") from error
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise RegistryError(f"{where} names {part!r}, which {module_name!r} does not define")
        target = getattr(target, part)
    return target


def scripted_player(rule: Callable[..., Any], where: str = "scripted_player") -> Player:
    """The player of a registry opponent's rule, told by its arguments: `rule(observation)` over every slot is a
    `ScriptedPlayer`; `rule(observation, action_mask, key)` for one slot's view (the opponent ladder's
    signature, `parallax_zoo.agents.ladder`) is a `MaskedScriptedPlayer`."""
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in inspect.signature(rule).parameters.values() if p.kind in positional and p.default is p.empty]
    if len(required) == 1:
        return ScriptedPlayer(rule)
    if len(required) == 3:
        return MaskedScriptedPlayer(rule)
    raise TypeError(
        f"{where}: a scripted opponent takes (observation) for every slot or (observation, action_mask, key) for "
        f"one slot's view; {getattr(rule, '__name__', rule)!r} takes {len(required)} required arguments"
    )


def opponent_player(env_spec: str | EnvSpec, env: AnyEnv, name: str, baseline: Player | None = None) -> Player:
    """The player an opponent's name stands for in `env` (whose id or spec is `env_spec`).

    `random`: the uniformly random player; `baseline`: the loaded `baseline` (`loading.load_baseline`), greedy;
    any other name: the scripted opponent registry.yaml names for the env (`scripted_rule`).
    The player serves evaluation and training alike (MAPPO's `opponent=`).
    """
    env_spec = registry.spec(env_spec) if isinstance(env_spec, str) else env_spec
    if name == RANDOM:
        return random_player(env)
    if name == BASELINE:
        if baseline is None:
            raise ValueError(
                f"opponent_player: the {BASELINE!r} opponent of {env_spec.id} is the loaded baseline; "
                f"pass baseline=parallax_zoo.load_baseline({env_spec.id!r})"
            )
        return as_player(env, baseline, greedy=True)  # a search player plays whole
    return scripted_player(scripted_rule(env_spec, name), f"{env_spec.id} opponents.{name}")


def held_out_player(env_spec: str | EnvSpec, env: AnyEnv, name: str) -> Player:
    """The held-out player registry.yaml names for the env (`EnvSpec.held_out`). Evaluation alone meets these:
    training resolves only `opponents` (`training_opponent`), so none is ever seated there."""
    env_spec = registry.spec(env_spec) if isinstance(env_spec, str) else env_spec
    return scripted_player(scripted_rule(env_spec, name, held_out=True), f"{env_spec.id} held_out.{name}")


def training_opponent(env_spec: str | EnvSpec, env: AnyEnv, opponent: str, baseline: Player | None = None) -> Player:
    """The player a `MAPPOConfig`'s `opponent` names: one opponent's name, or several joined by `+`, dealt over the
    envs in turn (`players.Rotation`; a name given twice gets twice the envs)."""
    players = tuple(opponent_player(env_spec, env, name, baseline) for name in opponent.split("+"))
    return players[0] if len(players) == 1 else Rotation(players)
