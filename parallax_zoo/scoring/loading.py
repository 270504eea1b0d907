"""Finding a policy by name: the pinned baseline, a local folder, a Hub repo, or the random player.

One place that evaluation, the leaderboard and the command line all load
policies through. A policy folder holds `config.yaml` and `model.safetensors`
(`parallax_zoo.scoring.checkpoint`); weights are safetensors only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parallax_zoo.catalogue import registry
from parallax_zoo.catalogue.player_names import BASELINE, RANDOM
from parallax_zoo.scoring import checkpoint, hub
from parallax_zoo.agents.policy import Policy

POLICY_FILES = (checkpoint.CONFIG_FILE, checkpoint.MODEL_FILE)


def load_folder(folder: str | Path, env: Any) -> Policy:
    """The policy saved in `folder`, checked to fit `env`."""
    folder = Path(folder)
    missing = [name for name in POLICY_FILES if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(f"{folder} is not a policy folder: it lacks {', '.join(missing)} (written by `parallax-zoo train`)")
    policy, _ = checkpoint.load(folder, env)
    policy.check_fits(env)
    return policy


def baseline_folder(env_id: str) -> Path:
    """The folder holding `env_id`'s baseline at the revision registry.yaml pins, every file's sha256 checked.

    Looks in the local mirror (`baselines/` or `$PARALLAX_ZOO_BASELINES`), then the
    Hub cache, then downloads; honours `HF_HUB_OFFLINE` and `HF_ENDPOINT`.
    """
    pin = registry.spec(env_id).baseline
    if pin is None:
        raise LookupError(f"{env_id} has no baseline pinned in registry.yaml yet; train one with `parallax-zoo train {env_id}`")
    return hub.fetch_baseline(pin, hub.mirror_folder(env_id))


def load_baseline(env_id: str) -> Policy:
    """The baseline of `env_id` at the revision registry.yaml pins, every file's sha256 checked (`baseline_folder`)."""
    return load_folder(baseline_folder(env_id), registry.make(env_id))


def load_hub(repo_and_revision: str, env_id: str) -> Policy:
    """A policy from a Hub model repo, `REPO` or `REPO@REVISION`: only its config and safetensors are fetched."""
    return load_folder(hub.download_files(repo_and_revision, POLICY_FILES), registry.make(env_id))


def resolve_policy(source: str, env_id: str) -> tuple[Policy | str, str]:
    """A policy named on the command line, and the name results record it under.

    `baseline`, `random`, `hub:REPO[@REVISION]`, or a path to a policy folder.
    """
    if source == RANDOM:
        return RANDOM, RANDOM
    if source == BASELINE:
        pin = registry.spec(env_id).baseline
        label = BASELINE if pin is None else f"{BASELINE}:{pin.repo_id}@{pin.revision}"
        return load_baseline(env_id), label
    if source.startswith("hub:"):
        return load_hub(source.removeprefix("hub:"), env_id), source
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(
            f"no policy {source!r}: use 'baseline', 'random', 'hub:REPO@REVISION' or the path of a policy folder"
        )
    return load_folder(path, registry.make(env_id)), str(path)
