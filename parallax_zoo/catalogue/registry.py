"""The environment registry: `EnvSpec`, `register`, `make`, `spec`, `list_envs`, loaded from registry.yaml.

`registry.yaml` ships inside the package (`parallax_zoo/catalogue/registry.yaml`,
linked from the repository root) so an installed wheel finds it. Ids are `Name-vN`; adapted envs live under their
adapter's namespace and keep the foreign library's name, with its version
where it has one: `gymnax/CartPole-v1`, `brax/ant`, `mjx/CartpoleBalance`,
`pgx/go_9x9`, `jumanji/Snake-v1`, `xminigrid/MiniGrid-DoorKey-5x5`.
Ids without a namespace (the zoo's own envs) are in the namespace `native`.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from parallax.core import AnyEnv
from parallax.wrappers import TimeLimit, ValidateActions
from parallax_zoo.catalogue.foreign_envs import BUILDERS
from parallax_zoo.catalogue.pins import BaselinePin, BaselinePinError
from parallax_zoo.catalogue.player_names import RESERVED_PLAYERS
from parallax_zoo.catalogue.signatures import InvalidKwargError, check_kwargs
from parallax_zoo.errors import UserError

NATIVE_ID = re.compile(
    r"^(?:(?P<namespace>[a-z][a-z0-9_]*)/)?(?P<name>[A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z][A-Za-z0-9_]*)*)-v(?P<version>\d+)$"
)
"""`Name-vN`, optionally under a lower-case namespace: `GridWorld-Masked-v0`, `myorg/Maze-v2`."""

ADAPTED_ID = re.compile(
    r"^(?P<namespace>[a-z][a-z0-9_]*)/(?P<name>[A-Za-z0-9][A-Za-z0-9_.]*(?:-[A-Za-z0-9_.]+)*?)(?:-v(?P<version>\d+))?$"
)
"""`adapter/ForeignName`, with `-vN` where the foreign library versions its ids (Pgx's `2048` starts with a digit)."""

NATIVE_NAMESPACE = "native"
"""The namespace of ids written without one: the zoo's own envs, `Race-v0` and the like."""

ENTRY_POINT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")

PACKAGED_REGISTRY = Path(__file__).resolve().parent / "registry.yaml"
"""The registry.yaml shipped in the package; the repository root's registry.yaml links to it."""


class RegistryError(UserError):
    """Base class of the registry's errors."""


class EnvNotFoundError(RegistryError, KeyError):
    """An id that is not registered; the message lists the close matches and where the full list is."""

    def __init__(self, env_id: str, close: list[str], count: int):
        self.env_id, self.close, self.count = env_id, close, count
        super().__init__(self.message("parallax_zoo.list_envs()"))

    def message(self, listing: str) -> str:
        """The message, naming `listing` (a Python call, or a command for the command line) as the full list."""
        suggestion = f" Did you mean: {', '.join(map(repr, self.close))}?" if self.close else ""
        return (
            f"No environment registered as {self.env_id!r}.{suggestion} `{listing}` lists all {self.count} "
            "registered ids."
        )

    def __str__(self) -> str:
        return str(self.args[0])


class NamespaceNotFoundError(EnvNotFoundError):
    """A namespace under which nothing is registered; the message lists the close matches and every namespace."""

    def __init__(self, namespace: str, close: list[str], namespaces: list[str]):
        self.namespace, self.close, self.namespaces = namespace, close, namespaces
        RegistryError.__init__(self, self.message(""))

    def message(self, listing: str) -> str:
        suggestion = f" Did you mean: {', '.join(map(repr, self.close))}?" if self.close else ""
        return (
            f"No environment is registered under the namespace {self.namespace!r}.{suggestion} "
            f"Namespaces: {', '.join(self.namespaces)}."
        )


class InvalidSpecError(RegistryError, ValueError):
    """A malformed registry entry; `entry` and `field` say which one and where."""

    def __init__(self, entry: str, field_name: str, problem: str, source: str | None = None):
        self.entry, self.field, self.problem, self.source = entry, field_name, problem, source
        where = f"{source}: " if source else ""
        super().__init__(f"{where}entry {entry}, field '{field_name}': {problem}")


class RegistryFileError(RegistryError, ValueError):
    """registry.yaml as a whole is unreadable: bad YAML, or not a list of entries under `envs:`."""


class DuplicateEnvError(RegistryError, ValueError):
    """An id registered twice without `override=True`."""


@dataclass(frozen=True)
class EnvSpec:
    """One registry entry: how to build an env and what it is.

    Exactly one of `entry_point` ("module:Class") or `adapter` ("gymnax",
    "brax", "mjx") with `foreign_id` says how to build it. `make` passes
    `kwargs` (and its own overrides) to the constructor, and wraps native envs
    in `TimeLimit(max_steps)`; adapters truncate at `max_steps` themselves.
    `reference_score` is what the evaluation measured on the pinned baseline.
    `opponents` names scripted players of a zero-sum game ("name" -> "module:function": a
    function mapping every slot's observations to actions, or one slot's observation, action
    mask and key to its action, as the board games' opponent ladder does); evaluation meets
    each of them first, so the reference score is measured against the first one.
    `held_out` names players of the same form that no training seats and the protocol's score never counts: the
    held-out ladder, met only when an evaluation asks for it (docs/evaluation.md, "The held-out ladder").
    """

    id: str
    entry_point: str | None = None
    adapter: str | None = None
    foreign_id: str | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    max_steps: int | None = None
    multi_agent: bool = False
    num_agents: int = 1
    tags: tuple[str, ...] = ()
    baseline: BaselinePin | None = None
    reference_score: float | None = None
    opponents: Mapping[str, str] = field(default_factory=dict)
    held_out: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.tags, list):
            object.__setattr__(self, "tags", tuple(self.tags))
        if isinstance(self.kwargs, Mapping) and not isinstance(self.kwargs, MappingProxyType):
            object.__setattr__(self, "kwargs", MappingProxyType(dict(self.kwargs)))
        for players in ("opponents", "held_out"):
            value = getattr(self, players)
            if isinstance(value, Mapping) and not isinstance(value, MappingProxyType):
                object.__setattr__(self, players, MappingProxyType(dict(value)))
        if isinstance(self.baseline, Mapping):
            try:
                object.__setattr__(self, "baseline", BaselinePin.from_dict(self.baseline))
            except BaselinePinError as error:
                raise InvalidSpecError(repr(self.id), "baseline", str(error)) from None
        problems = self.problems()
        if problems:
            field_name, problem = problems[0]
            raise InvalidSpecError(repr(self.id), field_name, problem)

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        """One line: id, kind, agents, max_steps and reference score; `describe()` has every field and the pins."""
        score = "-" if self.reference_score is None else f"{self.reference_score:.3f}"
        baseline = "" if self.baseline is None else f", baseline={self.baseline.repo_id}@{self.baseline.revision[:12]}"
        return (
            f"EnvSpec({self.id!r}, kind={self.kind}, agents={self.num_agents}, max_steps={self.max_steps}, "
            f"reference_score={score}{baseline})"
        )

    def describe(self) -> str:
        """Every field on its own line, the baseline's pinned files with their sha256s indented under it."""
        lines = [f"EnvSpec {self.id}"]
        for spec_field in fields(self):
            value = getattr(self, spec_field.name)
            if spec_field.name == "baseline" and value is not None:
                lines.append(f"  baseline: {value.repo_id}@{value.revision}")
                lines += [f"    {name}: sha256 {digest}" for name, digest in sorted(value.files.items())]
            elif spec_field.name != "id":
                shown = dict(value) if isinstance(value, Mapping) else value
                lines.append(f"  {spec_field.name}: {shown!r}")
        return "\n".join(lines)

    @property
    def kind(self) -> str:
        """ "native" for an entry point, else the adapter's name."""
        return self.adapter or "native"

    def problems(self) -> list[tuple[str, str]]:
        """(field, problem) for every field that is wrong; empty for a valid spec."""
        found: list[tuple[str, str]] = []
        found += _id_problems(self.id, self.adapter)
        if (self.entry_point is None) == (self.adapter is None):
            found.append(
                ("entry_point", "give exactly one of 'entry_point' (module:Class) or 'adapter' with 'foreign_id'")
            )
        if self.entry_point is not None and not (
            isinstance(self.entry_point, str) and ENTRY_POINT.match(self.entry_point)
        ):
            found.append(("entry_point", f"must look like 'package.module:ClassName', got {self.entry_point!r}"))
        if self.adapter is not None:
            if self.adapter not in BUILDERS:
                found.append(("adapter", f"must be one of {sorted(BUILDERS)}, got {self.adapter!r}"))
            if not isinstance(self.foreign_id, str) or not self.foreign_id:
                found.append(
                    ("foreign_id", f"an adapted env needs the foreign library's env name, got {self.foreign_id!r}")
                )
        elif self.foreign_id is not None:
            found.append(("foreign_id", "only adapted envs (with 'adapter') have a foreign_id"))
        if not isinstance(self.kwargs, Mapping) or not all(isinstance(k, str) for k in self.kwargs):
            found.append(("kwargs", f"must be a mapping from argument names to values, got {self.kwargs!r}"))
        if self.max_steps is not None and (problem := max_steps_problem(self.max_steps)):
            found.append(("max_steps", f"{problem} or null, got {self.max_steps!r}"))
        if not isinstance(self.multi_agent, bool):
            found.append(("multi_agent", f"must be true or false, got {self.multi_agent!r}"))
        if not (_is_int(self.num_agents) and self.num_agents >= 1):
            found.append(("num_agents", f"must be an int >= 1, got {self.num_agents!r}"))
        elif self.multi_agent is False and self.num_agents != 1:
            found.append(
                ("num_agents", f"a single-agent env has num_agents 1, got {self.num_agents}; set multi_agent: true")
            )
        if not isinstance(self.tags, tuple) or not all(isinstance(t, str) for t in self.tags):
            found.append(("tags", f"must be a list of strings, got {self.tags!r}"))
        if self.baseline is not None and not isinstance(self.baseline, BaselinePin):
            found.append(
                ("baseline", f"must be null or a mapping with repo_id, revision, files; got {self.baseline!r}")
            )
        found += self._player_problems("opponents", RESERVED_PLAYERS)
        taken = (*RESERVED_PLAYERS, *(self.opponents if isinstance(self.opponents, Mapping) else ()))
        found += self._player_problems("held_out", taken)
        score = self.reference_score
        if score is not None and not (
            isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score)
        ):
            found.append(("reference_score", f"must be a finite number or null, got {score!r}"))
        return found

    def _player_problems(self, players: str, taken: tuple[str, ...]) -> list[tuple[str, str]]:
        """The problems of the `opponents` or `held_out` mapping: names not in `taken`, targets 'module:function',
        and only for zero-sum games."""
        table = getattr(self, players)
        if not isinstance(table, Mapping):
            return [(players, f"must be a mapping from names to 'module:function', got {table!r}")]
        found = []
        for name, target in table.items():
            if not isinstance(name, str) or name in taken:
                found.append((players, f"names must be strings other than {taken}, got {name!r}"))
            elif not (isinstance(target, str) and ENTRY_POINT.match(target)):
                found.append((players, f"{name!r} must look like 'package.module:function', got {target!r}"))
        if table and "zero-sum" not in (self.tags or ()):
            what = "opponents" if players == "opponents" else "held-out players"
            found.append((players, f"only zero-sum games (tag 'zero-sum') have {what}"))
        return found

    @classmethod
    def from_mapping(cls, entry: Mapping[str, Any], source: str | None = None, position: int | None = None) -> EnvSpec:
        """Build a spec from a registry.yaml entry; errors name the entry and the field."""
        label = f"#{position}" if position is not None else "(unnamed)"
        if not isinstance(entry, Mapping):
            raise InvalidSpecError(label, "(entry)", f"must be a mapping of fields, got {entry!r}", source)
        env_id = entry.get("id")
        label = repr(env_id) if isinstance(env_id, str) else label
        if env_id is None:
            raise InvalidSpecError(label, "id", "is missing; every entry needs an id like 'Name-v0'", source)
        known = [f.name for f in fields(cls)]
        for name in entry:
            if name not in known:
                close = difflib.get_close_matches(str(name), known, n=1)
                hint = f" Did you mean '{close[0]}'?" if close else ""
                raise InvalidSpecError(
                    label, str(name), f"is not a spec field.{hint} Fields: {', '.join(known)}.", source
                )
        try:
            return cls(**dict(entry))
        except InvalidSpecError as error:
            raise InvalidSpecError(label, error.field, error.problem, source) from None


class Registry:
    """A set of `EnvSpec`s by id. The package's default one is loaded from registry.yaml."""

    def __init__(self, specs: Iterable[EnvSpec] = ()):
        self._specs: dict[str, EnvSpec] = {}
        for env_spec in specs:
            self.register(env_spec)

    @classmethod
    def from_yaml(cls, text: str, source: str = "registry.yaml") -> Registry:
        """Parse registry.yaml's text: a top-level `envs:` list of entries."""
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise RegistryFileError(f"{source} is not valid YAML: {error}") from None
        if not isinstance(data, Mapping) or not isinstance(data.get("envs"), list):
            raise RegistryFileError(f"{source} must be a mapping with an 'envs' key holding a list of entries")
        registry = cls()
        for position, entry in enumerate(data["envs"]):
            env_spec = EnvSpec.from_mapping(entry, source, position)
            if env_spec.id in registry._specs:
                raise DuplicateEnvError(
                    f"{source}: entry #{position} repeats the id {env_spec.id!r}; ids must be unique"
                )
            registry.register(env_spec)
        return registry

    def register(self, spec_or_fields: EnvSpec | Mapping[str, Any], *, override: bool = False) -> EnvSpec:
        """Add a spec (or the fields of one); an existing id raises unless `override=True`."""
        env_spec = spec_or_fields if isinstance(spec_or_fields, EnvSpec) else EnvSpec.from_mapping(spec_or_fields)
        if env_spec.id in self._specs and not override:
            raise DuplicateEnvError(
                f"{env_spec.id!r} is already registered ({_describe(self._specs[env_spec.id])}). "
                "Pass override=True to replace it, or register the new env under the next version."
            )
        self._specs[env_spec.id] = env_spec
        return env_spec

    def spec(self, env_id: str) -> EnvSpec:
        """The spec of `env_id`; an unknown id raises `EnvNotFoundError` listing close matches."""
        if not isinstance(env_id, str):
            raise TypeError(f"environment ids are strings like 'Race-v0', got {type(env_id).__name__}: {env_id!r}")
        if env_id in self._specs:
            return self._specs[env_id]
        by_lower = {known.lower(): known for known in self._specs}
        close = difflib.get_close_matches(env_id.lower(), list(by_lower), n=5, cutoff=0.6)
        raise EnvNotFoundError(env_id, [by_lower[c] for c in close], len(self._specs))

    def make(self, env_id: str, /, *, max_steps: int | None = None, validate: bool = False, **overrides: Any) -> Any:
        """Build `env_id` with its registered kwargs updated by `overrides`; native envs get `TimeLimit(max_steps)`.

        `max_steps` replaces the registered time limit (adapters truncate at it
        themselves). The env carries the spec it was made from as `env.spec`,
        with `max_steps` and `kwargs` as made (and no reference score where
        they differ from the registered ones: it was measured under those).
        See `build`; `validate=True` adds `ValidateActions`.
        """
        env_spec = self.spec(env_id)
        if max_steps is not None and (problem := max_steps_problem(max_steps)):
            raise InvalidKwargError(f"{env_id}: max_steps {problem}, got {max_steps!r}")
        made = env_spec
        if (max_steps is not None and max_steps != env_spec.max_steps) or overrides:
            made = dataclasses.replace(
                env_spec,
                max_steps=env_spec.max_steps if max_steps is None else max_steps,
                kwargs={**env_spec.kwargs, **overrides},
                reference_score=None,
            )
        env: Any = build(made if max_steps is not None else env_spec, validate=validate, **overrides)
        return _carrying_spec(env, made)

    def list_envs(self, tag: str | None = None, namespace: str | None = None) -> list[str]:
        """Every registered id, sorted; only those carrying `tag`, and only those in `namespace`, if given."""
        if namespace is not None:
            self._require_namespace(namespace)
        return sorted(
            i
            for i, s in self._specs.items()
            if (tag is None or tag in s.tags) and (namespace is None or namespace_of(i) == namespace)
        )

    def namespaces(self) -> list[str]:
        """The namespaces of the registered ids, sorted, `native` first."""
        found = {namespace_of(env_id) for env_id in self._specs}
        return sorted(found, key=lambda name: (name != NATIVE_NAMESPACE, name))

    def table(self, namespace: str | None = None) -> str:
        """A plain-text table of the registry, one section per namespace: id, kind, agents, max_steps, reference score,
        tags."""
        header = ("id", "kind", "agents", "max_steps", "reference", "tags")
        chosen = self.namespaces() if namespace is None else [namespace]
        sections: list[tuple[str, list[tuple[str, ...]]]] = []
        for name in chosen:
            rows = []
            for env_id in self.list_envs(namespace=name):
                s = self._specs[env_id]
                score = "-" if s.reference_score is None else f"{s.reference_score:.3f}"
                rows.append((env_id, s.kind, str(s.num_agents), str(s.max_steps or "-"), score, ", ".join(s.tags)))
            sections.append((name, rows))
        everything = [header] + [row for _, rows in sections for row in rows]
        widths = [max(len(row[i]) for row in everything) for i in range(len(header))]

        def line(row: tuple[str, ...]) -> str:
            return "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()

        blocks = []
        for name, rows in sections:
            title = f"{name} ({len(rows)} env{'s' if len(rows) != 1 else ''})"
            blocks.append("\n".join([title, line(header), "  ".join("-" * w for w in widths), *map(line, rows)]))
        return "\n\n".join(blocks)

    def _require_namespace(self, namespace: str) -> None:
        if namespace not in self.namespaces():
            raise NamespaceNotFoundError(
                namespace, difflib.get_close_matches(namespace, self.namespaces(), n=3), self.namespaces()
            )

    def copy(self) -> Registry:
        """An independent registry holding the same specs."""
        return Registry(self._specs.values())

    def __contains__(self, env_id: object) -> bool:
        return env_id in self._specs

    def __len__(self) -> int:
        return len(self._specs)


def packaged_registry() -> Registry:
    """A fresh registry read from the registry.yaml shipped in the package (ignores `register` calls made since)."""
    return Registry.from_yaml(PACKAGED_REGISTRY.read_text(encoding="utf-8"), source=str(PACKAGED_REGISTRY))


def namespace_of(env_id: str) -> str:
    """The part of `env_id` before its `/`: `pgx` for `pgx/go_9x9`; `native` for an id without one."""
    namespace, slash, _ = env_id.partition("/")
    return namespace if slash else NATIVE_NAMESPACE


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


MAX_STEPS_BOUND = 2**31 - 1
"""The largest time limit: every env and adapter counts steps in int32 (`State.step_count`)."""


def max_steps_problem(max_steps: Any) -> str | None:
    """What a time limit must be ("must be ..."), or None where it is: an int from 1 to `MAX_STEPS_BOUND`."""
    if _is_int(max_steps) and 1 <= max_steps <= MAX_STEPS_BOUND:
        return None
    return f"must be an int from 1 to {MAX_STEPS_BOUND:,} (steps are counted in int32)"


def _id_problems(env_id: Any, adapter: Any) -> list[tuple[str, str]]:
    if not isinstance(env_id, str):
        return [("id", f"must be a string like 'Name-v0', got {env_id!r}")]
    if adapter is None:
        if not NATIVE_ID.match(env_id):
            return [
                ("id", f"must look like 'Name-vN' (e.g. 'Race-v0'), optionally 'namespace/Name-vN'; got {env_id!r}")
            ]
        return []
    match = ADAPTED_ID.match(env_id)
    if not match:
        return [("id", f"an adapted env's id is 'adapter/ForeignName' (e.g. 'gymnax/CartPole-v1'), got {env_id!r}")]
    if match["namespace"] != adapter:
        return [("id", f"an env built by the {adapter!r} adapter lives under '{adapter}/', got {env_id!r}")]
    return []


def build(env_spec: EnvSpec, /, *, validate: bool = False, **overrides: Any) -> Any:
    """The env `env_spec` describes, its kwargs updated by `overrides`; native envs get `TimeLimit(max_steps)`.

    Every override is checked against the constructor's signature (name,
    type, range) before anything is built. `validate=True` wraps the env in
    `ValidateActions`, which refuses out-of-range actions and steps from an
    ended episode.
    """
    kwargs = {**env_spec.kwargs, **overrides}
    if env_spec.adapter is not None:
        env = BUILDERS[env_spec.adapter](env_spec.id, str(env_spec.foreign_id), kwargs, env_spec.max_steps)
    else:
        env_class = _load_entry_point(env_spec)
        check_kwargs(env_spec.id, kwargs, env_class)
        env = env_class(**kwargs)
        env = env if env_spec.max_steps is None else TimeLimit(env, env_spec.max_steps)
    return ValidateActions(env) if validate else env


def _load_entry_point(env_spec: EnvSpec) -> Any:
    """The class or factory function `entry_point` names; anything else (a constant, a module) is refused."""
    target = _import_target(env_spec.id, "entry_point", str(env_spec.entry_point))
    if not callable(target):
        raise InvalidSpecError(
            repr(env_spec.id),
            "entry_point",
            f"{env_spec.entry_point!r} names {type(target).__name__} {target!r}, not a class or factory function; "
            "point it at the env's class, e.g. 'package.module:MyEnv'",
        )
    return target


def _import_target(env_id: str, field_name: str, target_path: str) -> Any:
    module_name, _, attribute = target_path.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise RegistryError(
            f"{env_id}: cannot import {module_name!r} from {field_name} {target_path!r}: {error}"
        ) from error
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise RegistryError(
                f"{env_id}: {field_name} {target_path!r} names {part!r}, which {module_name!r} does not define"
            )
        target = getattr(target, part)
    return target


def _describe(env_spec: EnvSpec) -> str:
    return (
        f"entry_point {env_spec.entry_point}"
        if env_spec.entry_point
        else f"adapter {env_spec.adapter}: {env_spec.foreign_id}"
    )


_default_registry: Registry | None = None


def default_registry() -> Registry:
    """The package's registry, read from the registry.yaml shipped in the package on first use."""
    global _default_registry
    if _default_registry is None:
        _default_registry = packaged_registry()
    return _default_registry


def register(spec_or_fields: EnvSpec | Mapping[str, Any], *, override: bool = False) -> EnvSpec:
    """Add an env to the package registry (for this process); an existing id raises unless `override=True`."""
    return default_registry().register(spec_or_fields, override=override)


def spec(env_id: str) -> EnvSpec:
    """The registered `EnvSpec` of `env_id`."""
    return default_registry().spec(env_id)


def make(env_id: str, /, *, max_steps: int | None = None, validate: bool = False, **overrides: Any) -> Any:
    """Build a registered env: entry point or adapter, kwargs updated by `overrides` (checked first),
    `TimeLimit(max_steps)` applied (the registered one unless given), `ValidateActions` with `validate=True`; the env
    carries its `spec`."""
    return default_registry().make(env_id, max_steps=max_steps, validate=validate, **overrides)


def resolve(env_id: str) -> tuple[EnvSpec, AnyEnv]:
    """The spec of `env_id` and its env as `make(env_id)` builds it: what the command line and the public API turn
    an id into, once, for everything below them. One env object per spec: envs are immutable, so one serves every
    caller, and the programs compiled for it are reused."""
    env_spec = spec(env_id)
    return env_spec, _shared_env(env_spec)


@functools.cache
def _shared_env(env_spec: EnvSpec) -> AnyEnv:
    return _carrying_spec(build(env_spec), env_spec)


def _carrying_spec(env: Any, env_spec: EnvSpec) -> Any:
    """`env`, carrying the spec it was made from as `env.spec` where its class lets it."""
    try:
        env.spec = env_spec
    except AttributeError:  # an env class with __slots__ or a read-only `spec`
        pass
    return env


def list_envs(tag: str | None = None, namespace: str | None = None) -> list[str]:
    """Every registered id, sorted; only those carrying `tag`, and only those in `namespace` (`pgx`, `native`, ...), if
    given."""
    return default_registry().list_envs(tag, namespace)


def registry_table(namespace: str | None = None) -> str:
    """The registry as a readable plain-text table, one section per namespace (or only `namespace`'s)."""
    return default_registry().table(namespace)


__all__ = [
    "BaselinePin",
    "DuplicateEnvError",
    "EnvNotFoundError",
    "NamespaceNotFoundError",
    "EnvSpec",
    "InvalidKwargError",
    "InvalidSpecError",
    "Registry",
    "RegistryError",
    "RegistryFileError",
    "build",
    "default_registry",
    "list_envs",
    "make",
    "packaged_registry",
    "namespace_of",
    "register",
    "registry_table",
    "resolve",
    "spec",
]
