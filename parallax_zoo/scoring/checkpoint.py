"""Saving and loading trained policies: params as safetensors, hyperparameters as `config.yaml`.

A baseline folder holds `model.safetensors` (the policy's params and
normaliser, flattened to "params/actor/Dense_0/kernel"-style keys; never
pickle) and `config.yaml` (every hyperparameter and the package versions).
Files are written to a temporary name and renamed, so a failed save leaves
nothing half-written. Loading checks every tensor against a freshly
initialised network and says exactly what differs.
"""

from __future__ import annotations

import dataclasses
import os
from importlib import metadata
from pathlib import Path
from typing import Any

import jax
import numpy as np
import yaml
from safetensors.numpy import load_file, save_file

from parallax_zoo.agents.mappo import MAPPOConfig
from parallax_zoo.atomic import atomic_write, write_text_atomic
from parallax_zoo.agents.normalizer import ObsNormalizer
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.ppo import PPOConfig, model_for

MODEL_FILE = "model.safetensors"
CONFIG_FILE = "config.yaml"
ALGORITHMS: dict[str, type[PPOConfig]] = {"ppo": PPOConfig, "mappo": MAPPOConfig}
VERSIONED_PACKAGES = ("parallax-zoo", "jax", "jaxlib", "flax", "optax")


class CheckpointError(ValueError):
    """A checkpoint does not fit the network it is loaded into, or a config file is malformed."""


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
    """Read params saved by `save_policy` into the structure of `template` (a freshly initialised policy).

    Raises `CheckpointError` listing missing and unexpected tensors and every
    shape that differs (expected vs found).
    """
    found = load_file(os.fspath(path))
    expected = flatten(template)
    problems = [f"missing {name} (expected shape {expected[name].shape})" for name in expected if name not in found]
    problems += [f"unexpected {name} (found shape {found[name].shape})" for name in found if name not in expected]
    problems += [
        f"{name}: expected shape {expected[name].shape}, found {found[name].shape}"
        for name in expected
        if name in found and found[name].shape != expected[name].shape
    ]
    if problems:
        raise CheckpointError(
            f"{path} does not fit this network ({len(problems)} problems):\n  "
            + "\n  ".join(problems)
            + "\nCheck that the config (hidden_sizes, agent_ids, centralised_critic, normalize_obs) "
            "and the env match the ones the checkpoint was trained with."
        )
    treedef = jax.tree_util.tree_structure(template)
    leaves = [found[name].astype(expected[name].dtype) for name in expected]
    return jax.tree_util.tree_unflatten(treedef, leaves)


def initial_policy(config: PPOConfig, env: Any) -> Policy:
    """A freshly initialised policy for `env` as `config` describes it: the template checkpoints load into."""
    model = model_for(env, config)
    normalizer = ObsNormalizer.create(model.obs_dim, model.global_obs_dim) if config.normalize_obs else None
    return Policy(model, model.init(jax.random.key(0)), normalizer)


def package_versions() -> dict[str, str]:
    """The installed versions of the packages a result depends on, recorded in configs and results."""
    versions = {}
    for package in VERSIONED_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


def config_to_dict(config: PPOConfig) -> dict[str, Any]:
    """The config as plain YAML-able data, with its algorithm name."""
    algorithm = next(name for name, cls in ALGORITHMS.items() if type(config) is cls)
    fields = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    fields["hidden_sizes"] = list(config.hidden_sizes)
    return {"algorithm": algorithm, "hyperparameters": fields}


def config_from_dict(data: dict[str, Any]) -> PPOConfig:
    """The inverse of `config_to_dict`; unknown or misspelt hyperparameters are an error, not ignored."""
    algorithm = data.get("algorithm")
    if algorithm not in ALGORITHMS:
        raise CheckpointError(f"config: algorithm must be one of {sorted(ALGORITHMS)}, got {algorithm!r}")
    cls = ALGORITHMS[algorithm]
    values = dict(data.get("hyperparameters") or {})
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise CheckpointError(f"config: unknown {algorithm} hyperparameters {unknown}; known ones are {sorted(known)}")
    if "hidden_sizes" in values:
        values["hidden_sizes"] = tuple(values["hidden_sizes"])
    return cls(**values)


def save_config(config: PPOConfig, path: str | os.PathLike[str]) -> None:
    """Write `config.yaml`: the algorithm, every hyperparameter and the package versions."""
    text = yaml.safe_dump({**config_to_dict(config), "versions": package_versions()}, sort_keys=False)
    write_text_atomic(path, text)


def load_config(path: str | os.PathLike[str]) -> PPOConfig:
    """Read a config written by `save_config`."""
    data = yaml.safe_load(Path(path).read_text())
    if not isinstance(data, dict):
        raise CheckpointError(f"{path}: expected a YAML mapping with 'algorithm' and 'hyperparameters'")
    return config_from_dict(data)


def save(directory: str | os.PathLike[str], policy: Policy, config: PPOConfig) -> None:
    """Write `config.yaml` and `model.safetensors` into `directory`."""
    directory = Path(directory)
    save_config(config, directory / CONFIG_FILE)
    save_policy(policy, directory / MODEL_FILE)


def load(directory: str | os.PathLike[str], env: Any) -> tuple[Policy, PPOConfig]:
    """The policy and config saved in `directory`, checked against the network `env` and the config imply."""
    directory = Path(directory)
    config = load_config(directory / CONFIG_FILE)
    return load_policy(directory / MODEL_FILE, initial_policy(config, env)), config
