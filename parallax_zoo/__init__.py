"""Parallax Zoo: native JAX environments, a registry of them and of adapted ones, and their baselines."""

from parallax_zoo.registry import EnvSpec, list_envs, make, register, registry_table, spec

__all__ = ["EnvSpec", "list_envs", "make", "register", "registry_table", "spec"]
