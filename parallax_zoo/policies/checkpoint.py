"""Saving and loading trained policies: params as safetensors, hyperparameters as `config.yaml`.

A baseline folder holds `model.safetensors` (the policy's params and
normaliser, flattened to "params/actor/Dense_0/kernel"-style keys; never
pickle) and `config.yaml` (every hyperparameter and the package versions).
Files are written to a temporary name and renamed, so a failed save leaves
nothing half-written. Loading checks every tensor against a freshly
network (shapes only: nothing is built before they agree) and says exactly
what differs; loading from bytes lets a caller parse exactly the bytes it
hash-checked.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path
from typing import Any

import jax
import numpy as np
import yaml
from safetensors import SafetensorError
from safetensors.numpy import load as load_safetensors
from safetensors.numpy import save_file

from parallax.core import AnyEnv
from parallax.version import package_versions
from parallax_zoo.agents.alphazero import AlphaZeroConfig
from parallax_zoo.agents.mappo import MAPPOConfig
from parallax_zoo.agents.normalizer import ObsNormalizer
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.ppo import PPOConfig, model_for
from parallax_zoo.agents.search import SearchSettings
from parallax_zoo.atomic import atomic_write, write_text_atomic
from parallax_zoo.errors import UserError

MODEL_FILE = "model.safetensors"
CONFIG_FILE = "config.yaml"
ALGORITHMS: dict[str, type[PPOConfig]] = {"ppo": PPOConfig, "mappo": MAPPOConfig, "alphazero": AlphaZeroConfig}


class CheckpointError(UserError, ValueError):
    """A checkpoint does not fit the network it is loaded into, holds non-finite values, or a file is malformed."""


def _key_name(entry: Any) -> str:
    for attribute in ("key", "name", "idx"):
        if hasattr(entry, attribute):
            return str(getattr(entry, attribute))
    return str(entry)


def flatten(tree: Any) -> dict[str, np.ndarray]:
    """A pytree's leaves keyed by their path, "a/b/c"."""
    leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
    return {"/".join(_key_name(entry) for entry in path): np.asarray(leaf) for path, leaf in leaves}


def save_policy(policy: Policy, path: str | os.PathLike[str]) -> None:
    """Write the policy's params (and normaliser statistics) to a safetensors file."""
    tensors = {name: np.array(value, order="C") for name, value in flatten(policy).items()}
    atomic_write(path, lambda temporary: save_file(tensors, str(temporary), metadata={"format": "parallax-zoo"}))


def load_policy(path: str | os.PathLike[str], template: Policy) -> Policy:
    """Read params saved by `save_policy` into the structure of `template` (a policy or its `jax.eval_shape`)."""
    return policy_from_bytes(Path(path).read_bytes(), template, source=os.fspath(path))


def safetensors_shapes(data: bytes, source: str) -> dict[str, tuple[int, ...]]:
    """Every tensor's shape from a safetensors file's header alone (the 8-byte length, then JSON); nothing is loaded."""
    if len(data) < 8:
        raise CheckpointError(
            f"{source} is not a safetensors file: {len(data)} bytes, shorter than its 8-byte header length; "
            "it is empty or truncated. Download or save it again"
        )
    length = int.from_bytes(data[:8], "little")
    if length > len(data) - 8:
        raise CheckpointError(
            f"{source} is not a complete safetensors file: its header claims {length} bytes but the "
            f"file has {len(data) - 8} after the length; it is truncated or not safetensors "
            "(pickle weights are refused). Download or save it again"
        )
    try:
        header = json.loads(data[8 : 8 + length])
        return {name: tuple(int(n) for n in entry["shape"]) for name, entry in header.items() if name != "__metadata__"}
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise CheckpointError(
            f"{source} has a malformed safetensors header ({error}); it is not a safetensors file "
            "(pickle weights are refused). Save the params with safetensors"
        ) from error


def policy_from_bytes(data: bytes, template: Policy, source: str = MODEL_FILE) -> Policy:
    """The policy in safetensors `data`, in the structure of `template` (a policy or its `jax.eval_shape`).

    The header's shapes are compared with the template's before any tensor is
    read; a mismatch raises `CheckpointError` listing missing and unexpected
    tensors and every shape that differs. A tensor holding NaN or inf is refused by name.
    """
    found_shapes = safetensors_shapes(data, source)
    expected = {name: (tuple(leaf.shape), leaf.dtype) for name, leaf in flatten_abstract(template).items()}
    problems = [
        f"missing {name} (expected shape {shape})" for name, (shape, _) in expected.items() if name not in found_shapes
    ]
    problems += [
        f"unexpected {name} (found shape {found_shapes[name]})" for name in found_shapes if name not in expected
    ]
    problems += [
        f"{name}: expected shape {shape}, found {found_shapes[name]}"
        for name, (shape, _) in expected.items()
        if name in found_shapes and found_shapes[name] != shape
    ]
    if problems:
        raise CheckpointError(
            f"{source} does not fit this network ({len(problems)} problems):\n  "
            + "\n  ".join(problems)
            + "\nCheck that the config (hidden_sizes, agent_ids, centralized_critic, normalize_obs) "
            "and the env match the ones the checkpoint was trained with."
        )
    try:
        found = load_safetensors(data)
    except SafetensorError as error:
        raise CheckpointError(
            f"{source} is not a valid safetensors file ({error}); download or save it again"
        ) from error
    for name, tensor in found.items():
        if np.issubdtype(tensor.dtype, np.inexact) and not np.isfinite(tensor).all():
            bad = int(np.size(tensor) - np.count_nonzero(np.isfinite(tensor)))
            raise CheckpointError(
                f"{source}: tensor {name} holds NaN or inf ({bad} of {tensor.size} values); the weights were refused. "
                "Retrain or restore a checkpoint saved before training diverged"
            )
    treedef = jax.tree_util.tree_structure(template)
    leaves = [found[name].astype(dtype) for name, (_, dtype) in expected.items()]
    return jax.tree_util.tree_unflatten(treedef, leaves)


def flatten_abstract(tree: Any) -> dict[str, Any]:
    """`flatten` for a tree whose leaves may be abstract (`jax.ShapeDtypeStruct`): leaves kept as they are."""
    leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
    return {"/".join(_key_name(entry) for entry in path): leaf for path, leaf in leaves}


def initial_policy(config: PPOConfig, env: AnyEnv) -> Policy:
    """A freshly initialised policy for `env` as `config` describes it."""
    model = model_for(env, config)
    normalizer = ObsNormalizer.create(model.obs_dim, model.global_obs_dim) if config.normalize_obs else None
    return Policy(model, model.init(jax.random.key(0)), normalizer)


def policy_shapes(config: PPOConfig, env: AnyEnv) -> Policy:
    """The template checkpoints load into: `initial_policy`'s shapes and dtypes, computed abstractly (no memory
    used)."""
    return jax.eval_shape(lambda: initial_policy(config, env))


def config_to_dict(config: PPOConfig) -> dict[str, Any]:
    """The config as plain YAML-able data, with its algorithm name."""
    algorithm = next(name for name, cls in ALGORITHMS.items() if type(config) is cls)
    fields = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    fields["hidden_sizes"] = list(config.hidden_sizes)
    return {"algorithm": algorithm, "hyperparameters": fields}


def config_from_dict(data: dict[str, Any], source: str = CONFIG_FILE) -> PPOConfig:
    """The inverse of `config_to_dict`; unknown, misspelt or mistyped hyperparameters are an error, not ignored."""
    algorithm = data.get("algorithm")
    if algorithm not in ALGORITHMS:
        raise CheckpointError(f"{source}: algorithm must be one of {sorted(ALGORITHMS)}, got {algorithm!r}")
    cls = ALGORITHMS[algorithm]
    values = data.get("hyperparameters") or {}
    if not isinstance(values, dict):
        raise CheckpointError(
            f"{source}: hyperparameters must be a mapping name: value, got {type(values).__name__} {values!r}"
        )
    return _checked_dataclass(cls, values, f"{algorithm} hyperparameters", source)


def _checked_dataclass(cls: type[Any], values: dict[str, Any], what: str, source: str) -> Any:
    """`cls(**values)` after checking every name is a field and every value has the type of the field's default."""
    defaults = cls()
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise CheckpointError(f"{source}: unknown {what} {unknown}; known ones are {sorted(known)}")
    values = {name: _checked_value(name, value, getattr(defaults, name), source) for name, value in values.items()}
    try:
        return cls(**values)
    except ValueError as error:
        raise CheckpointError(f"{source}: {error}") from error


def _checked_value(name: str, value: Any, default: Any, source: str) -> Any:
    """`value` if it has the type of the hyperparameter's default (ints are floats too; hidden_sizes positive ints)."""
    if isinstance(default, tuple):
        if isinstance(value, list | tuple) and value and all(type(n) is int and n > 0 for n in value):
            return tuple(value)
        expected = "a non-empty list of positive integers"
    elif isinstance(default, bool):
        if type(value) is bool:
            return value
        expected = "true or false"
    elif isinstance(default, int):
        if type(value) is int:
            return value
        expected = "an integer"
    elif isinstance(default, float):
        if type(value) in (int, float) and math.isfinite(value):
            return float(value)
        expected = "a finite number"
    else:
        if isinstance(value, str):
            return value
        expected = "a string"
    raise CheckpointError(f"{source}: hyperparameter {name} must be {expected}, got {value!r}; fix it in the config")


def search_to_dict(settings: SearchSettings) -> dict[str, Any]:
    """The play-time search settings as config.yaml's `search` mapping."""
    return dataclasses.asdict(settings)


def search_from_dict(data: dict[str, Any], source: str = CONFIG_FILE) -> SearchSettings | None:
    """The `search` mapping of a parsed config.yaml as `SearchSettings`, or None where the policy plays without
    search."""
    values = data.get("search")
    if values is None:
        return None
    if not isinstance(values, dict):
        raise CheckpointError(f"{source}: search must be a mapping name: value, got {type(values).__name__} {values!r}")
    return _checked_dataclass(SearchSettings, values, "search settings", source)


def save_config(config: PPOConfig, path: str | os.PathLike[str], search: SearchSettings | None = None) -> None:
    """Write `config.yaml`: the algorithm, every hyperparameter, the play-time search settings if any, the package
    versions."""
    searched = {} if search is None else {"search": search_to_dict(search)}
    text = yaml.safe_dump({**config_to_dict(config), **searched, "versions": package_versions()}, sort_keys=False)
    write_text_atomic(path, text)


def load_config(path: str | os.PathLike[str]) -> PPOConfig:
    """Read a config written by `save_config`."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise CheckpointError(f"cannot read the config {path}: {error.strerror or error}") from error
    return config_from_bytes(data, os.fspath(path))


def config_from_bytes(data: bytes, source: str = CONFIG_FILE) -> PPOConfig:
    """The config in YAML `data` (safe YAML only: no tags that build objects)."""
    return config_from_dict(parse_config(data, source), source)


def search_from_bytes(data: bytes, source: str = CONFIG_FILE) -> SearchSettings | None:
    """The play-time search settings in config.yaml's bytes `data`, or None where there are none."""
    return search_from_dict(parse_config(data, source), source)


def parse_config(data: bytes, source: str = CONFIG_FILE) -> dict[str, Any]:
    """config.yaml's bytes as a mapping (safe YAML only), with a clear error for bad YAML or another shape."""
    try:
        parsed = yaml.safe_load(data)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise CheckpointError(
            f"{source} is not valid YAML{where}: {problem}; fix it (a config is the mapping `parallax-zoo train` "
            "writes)"
        ) from error
    if not isinstance(parsed, dict):
        raise CheckpointError(f"{source}: expected a YAML mapping with 'algorithm' and 'hyperparameters'")
    return parsed


def save(
    directory: str | os.PathLike[str], policy: Policy, config: PPOConfig, search: SearchSettings | None = None
) -> None:
    """Write `config.yaml` (with `search`, the settings of a policy that searches at play time) and `model.safetensors`
    into `directory`."""
    directory = Path(directory)
    save_config(config, directory / CONFIG_FILE, search)
    save_policy(policy, directory / MODEL_FILE)


def load_network(directory: str | os.PathLike[str], env: AnyEnv) -> tuple[Policy, PPOConfig]:
    """The raw network and the config it was trained with, saved in `directory`, checked against the network `env`
    and the config imply: what training goes on from. The agent a folder plays as (with its search, if any) is
    `loading.load_folder`'s."""
    directory = Path(directory)
    config, model = (directory / CONFIG_FILE).read_bytes(), (directory / MODEL_FILE).read_bytes()
    return network_from_bytes(config, model, env, str(directory))


def network_from_bytes(config: bytes, model: bytes, env: AnyEnv, source: str = "") -> tuple[Policy, PPOConfig]:
    """`load_network` from the two files' bytes (those a caller already hash-checked); `source` names them in errors."""
    prefix = f"{source}/" if source else ""
    parsed = config_from_bytes(config, prefix + CONFIG_FILE)
    return policy_from_bytes(model, policy_shapes(parsed, env), prefix + MODEL_FILE), parsed
