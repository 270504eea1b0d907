"""Finding a policy by name: the pinned baseline, a local folder, a Hub repo at a commit, or the random player.

One place that evaluation, the leaderboard and the command line all load
policies through. A policy folder holds `config.yaml` and `model.safetensors`
(`parallax_zoo.policies.checkpoint`); weights are safetensors only. Every file
is read once: the bytes that are hash-checked are the bytes that are parsed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from parallax.core import AnyEnv
from parallax_zoo.agents.player import Player
from parallax_zoo.agents.search import SearchPlayer
from parallax_zoo.catalogue.player_names import BASELINE, RANDOM
from parallax_zoo.catalogue.registry import EnvSpec
from parallax_zoo.errors import UserError
from parallax_zoo.policies import checkpoint, hub

POLICY_FILES = (checkpoint.CONFIG_FILE, checkpoint.MODEL_FILE)


class PolicyNotFoundError(UserError, FileNotFoundError):
    """A policy named on the command line is neither a known name nor a policy folder."""


class ResolvedPolicy(NamedTuple):
    """A policy named on the command line: what acts, the name results record, and where its files came from."""

    policy: Player | str
    name: str
    provenance: dict[str, Any]
    """For Hub and baseline policies: {"repo": ..., "commit": ..., "files": {filename: sha256}}; else empty."""


def load_folder(folder: str | Path, env: AnyEnv) -> Player:
    """The agent saved in `folder` (see `load_files`), checked to fit `env`."""
    folder = Path(folder)
    missing = [name for name in POLICY_FILES if not (folder / name).is_file()]
    if missing:
        raise PolicyNotFoundError(
            f"{folder} is not a policy folder: it lacks {', '.join(missing)} (written by `parallax-zoo train`)"
        )
    return load_files(hub.VerifiedFiles(folder, {name: (folder / name).read_bytes() for name in POLICY_FILES}, {}), env)


def load_files(files: hub.VerifiedFiles, env: Any) -> Player:
    """The agent in a folder's config and weights, parsed from the bytes already read (and checked), fitted to `env`.

    A config with `search` settings gives the whole player, a `SearchPlayer` over
    `env`'s game (its `.policy` is the raw network); any other gives the `Policy`. Either acts with
    `act(observation, key, action_mask=...)` (`agents.player.Player`).
    """
    contents = files.contents
    config = contents[checkpoint.CONFIG_FILE]
    policy, _ = checkpoint.network_from_bytes(config, contents[checkpoint.MODEL_FILE], env, str(files.folder))
    policy.check_fits(env)
    settings = checkpoint.search_from_bytes(config, f"{files.folder}/{checkpoint.CONFIG_FILE}")
    if settings is None:
        return policy
    return SearchPlayer(policy, env.unwrapped, settings)


def baseline_files(env_spec: EnvSpec) -> hub.VerifiedFiles:
    """The files of the env's baseline at the revision registry.yaml pins, each sha256-checked, with their bytes.

    Looks in the local mirror (`baselines/` or `$PARALLAX_ZOO_BASELINES`), then the
    Hub cache, then downloads; honours `HF_HUB_OFFLINE` and `HF_ENDPOINT`.
    """
    pin = env_spec.baseline
    if pin is None:
        env_id = env_spec.id
        raise hub.BaselineNotPinnedError(
            f"{env_id} has no baseline pinned in registry.yaml yet; train one with `parallax-zoo train {env_id}`"
        )
    return hub.fetch_baseline_files(pin, hub.mirror_folder(env_spec.id))


def load_baseline(env_spec: EnvSpec, env: AnyEnv) -> Player:
    """The baseline of the env at the revision registry.yaml pins, parsed from the bytes that were checked
    (`baseline_files`), fitted to `env` (the env of `env_spec`; `parallax_zoo.load_baseline` takes the id).

    A baseline that searches at play time comes whole, as a `SearchPlayer`; `.policy` is its raw network.
    Every baseline acts with `act(observation, key, action_mask=...)` (docs/baselines.md, "Acting").
    """
    return load_files(baseline_files(env_spec), env)


def load_hub(repo_and_commit: str, env: AnyEnv) -> tuple[Player, dict[str, Any]]:
    """A policy from a Hub model repo at a commit, `REPO@<40-hex commit>`, and its provenance.

    Only config.yaml and model.safetensors are fetched, each checked against the hash the Hub reports
    for it at that commit. The provenance records the repo, the commit and each file's sha256.
    """
    repo_id, commit = hub.parse_repo_at_commit(repo_and_commit)
    files = hub.fetch_hub_files(repo_and_commit, POLICY_FILES)
    provenance = {"repo": repo_id, "commit": commit, "files": dict(files.sha256)}
    return load_files(files, env), provenance


def baseline_label(env_spec: EnvSpec) -> str:
    """The name results record the pinned baseline under: `baseline:REPO@REVISION` (`baseline` while none is pinned)."""
    pin = env_spec.baseline
    return BASELINE if pin is None else f"{BASELINE}:{pin.repo_id}@{pin.revision}"


def resolve_policy(source: str, env_spec: EnvSpec, env: AnyEnv) -> ResolvedPolicy:
    """A policy named on the command line for `env` (the env of `env_spec`), the name results record it under, and
    its provenance.

    `baseline`, `random`, `hub:REPO@COMMIT`, or a path to a policy folder.
    """
    if source == RANDOM:
        return ResolvedPolicy(RANDOM, RANDOM, {})
    if source == BASELINE:
        pin = env_spec.baseline
        label = baseline_label(env_spec)
        provenance = {} if pin is None else {"repo": pin.repo_id, "commit": pin.revision, "files": dict(pin.files)}
        return ResolvedPolicy(load_baseline(env_spec, env), label, provenance)
    if source.startswith("hub:"):
        policy, provenance = load_hub(source.removeprefix("hub:"), env)
        return ResolvedPolicy(policy, source, provenance)
    path = Path(source)
    if not path.exists():
        raise PolicyNotFoundError(
            f"no policy {source!r}: use 'baseline', 'random', 'hub:REPO@COMMIT' or the path of a policy folder"
        )
    return ResolvedPolicy(load_folder(path, env), str(path), {})
