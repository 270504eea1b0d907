"""Re-measuring the shipped baselines under the current evaluation protocol, nothing retrained.

For each baseline folder (`baselines/<EnvId>/`, the Hub mirror) it evaluates
the saved weights again, rewrites `eval.json` and the model card, and pins the
folder's new hashes and reference score in registry.yaml (docs/evaluation.md):

    parallax-zoo maintain remeasure [ENV_ID ...]   # default: every shipped baseline
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from parallax.core import AnyEnv
from parallax_zoo.baselines import staging
from parallax_zoo.baselines.registry_update import pin_baseline
from parallax_zoo.baselines.training import (
    EVAL_FILE,
    add_seed_statistics,
    check_staged,
    is_pinned_folder,
    output_lock,
    run_env_id,
    seed_folders,
    statistics_of_runs,
    write_evaluation,
)
from parallax_zoo.catalogue import registry
from parallax_zoo.catalogue.registry import EnvSpec
from parallax_zoo.errors import UserError
from parallax_zoo.policies import hub


def check_seed_runs(env_id: str, others: dict[int, Path]) -> None:
    """Every other training seed's run is where `training.seed_folders` puts it, with weights of `env_id`."""
    missing = [str(path) for path in others.values() if not path.is_dir() or run_env_id(path) != env_id]
    if missing:
        raise UserError(
            f"{env_id}: the runs of its other training seeds are not all here ({', '.join(missing)}), so its "
            f"statistics over seeds cannot be measured again; run from the checkout that trained them, make them "
            f"again with `parallax-zoo maintain batch {env_id} --seeds {len(others) + 1} --pin`, or pass "
            f"--pinned-seed-only to drop those statistics"
        )


def shipped_baselines() -> list[str]:
    """The env ids whose baseline folder is in the mirror (`hub.mirror_folder`) with its `eval.json`."""
    return [env_id for env_id in registry.list_envs() if (hub.mirror_folder(env_id) / EVAL_FILE).is_file()]


def remeasure(
    env_spec: EnvSpec,
    env: AnyEnv,
    registry_path: str | os.PathLike[str] | None = None,
    held_out: bool = False,
    pinned_seed_only: bool = False,
) -> EnvSpec:
    """Evaluate the env's shipped baseline again on `env`, rewrite its `eval.json` and card, and pin it; returns
    the new spec.

    The training seeds the card names are kept from the old `eval.json`; `held_out` measures the held-out players
    again (`write_evaluation`), else their record there is kept. A baseline trained over several seeds has each
    other seed's run re-measured too, in its folder (`training.seed_folders`), and its statistics over seeds
    made again from the new scores; where a seed's folder is missing it stops, unless `pinned_seed_only`, which
    drops those statistics rather than keep numbers of another measurement. The new files are written in a
    staging folder and swapped in with the pin, under registry.yaml's lock (`registry_update.pin_baseline`).
    """
    env_id = env_spec.id
    folder = hub.mirror_folder(env_id)
    if not (folder / EVAL_FILE).is_file():
        raise UserError(
            f"{env_id}: no baseline folder with {EVAL_FILE} in {folder}; train one with "
            f"`parallax-zoo train {env_id} --pin`"
        )
    with output_lock(folder):
        staging.recover(folder, is_pinned_folder(env_id, registry_path))
        with staging.staged_beside(folder) as staged:
            for path in folder.iterdir():
                if path.is_file() and not path.name.startswith("."):
                    shutil.copy2(path, staged / path.name)
            record = json.loads((staged / EVAL_FILE).read_text(encoding="utf-8"))
            seeds = list(record["training_seeds"])
            pinned = int(record.get("policy_seed", seeds[0]))
            order = [pinned, *(n for n in seeds if n != pinned)]
            others = {n: path for n, path in seed_folders(env_id, folder, order).items() if n != pinned}
            others = {} if pinned_seed_only else others
            check_seed_runs(env_id, others)
            write_evaluation(env_spec, env, staged, seeds, policy_seed=pinned, held_out=held_out)
            if others:
                for number, path in others.items():
                    write_evaluation(env_spec, env, path, seeds, official=False, policy_seed=number, shown_as=path)
                runs = {pinned: staged, **others}
                statistics = statistics_of_runs(runs)
                for number, path in runs.items():
                    add_seed_statistics(env_id, path, statistics, number == pinned, path)
            check_staged(env, staged)
            with staging.deferred_interrupts():
                return pin_baseline(env_id, staged, registry_path, swap=lambda: staging.swap_in(staged, folder))
