"""Re-measuring the shipped baselines under the current evaluation protocol, nothing retrained.

For each baseline folder (`baselines/<EnvId>/`, the Hub mirror) it evaluates
the saved weights again, rewrites `eval.json` and the model card, and pins the
folder's new hashes and reference score in registry.yaml (docs/evaluation.md):

    python -m parallax_zoo.baselines.remeasure [ENV_ID ...]   # default: every shipped baseline
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from parallax_zoo.catalogue import registry
from parallax_zoo.baselines.registry_update import pin_baseline
from parallax_zoo.catalogue.registry import EnvSpec
from parallax_zoo.errors import UserError
from parallax_zoo.policies import hub
from parallax_zoo.baselines import staging
from parallax_zoo.baselines.training import EVAL_FILE, check_staged, is_pinned_folder, output_lock, write_evaluation


def shipped_baselines() -> list[str]:
    """The env ids whose baseline folder is in the mirror (`hub.mirror_folder`) with its `eval.json`."""
    return [env_id for env_id in registry.list_envs() if (hub.mirror_folder(env_id) / EVAL_FILE).is_file()]


def remeasure(env_id: str, registry_path: str | os.PathLike[str] | None = None) -> EnvSpec:
    """Evaluate `env_id`'s shipped baseline again, rewrite its `eval.json` and card, and pin it; returns the new spec.

    The training seeds the card names are kept from the old `eval.json`. The new files are written in a
    staging folder and swapped in with the pin, under registry.yaml's lock (`pinning.pin_baseline`).
    """
    folder = hub.mirror_folder(env_id)
    if not (folder / EVAL_FILE).is_file():
        raise UserError(f"{env_id}: no baseline folder with {EVAL_FILE} in {folder}; train one with "
                        f"`parallax-zoo train {env_id} --pin`")
    with output_lock(folder):
        staging.recover(folder, is_pinned_folder(env_id, registry_path))
        staged = staging.staging_folder(folder)
        try:
            for path in folder.iterdir():
                if path.is_file() and not path.name.startswith("."):
                    shutil.copy2(path, staged / path.name)
            seeds = json.loads((staged / EVAL_FILE).read_text(encoding="utf-8"))["training_seeds"]
            write_evaluation(env_id, staged, list(seeds))
            check_staged(env_id, staged)
            with staging.deferred_interrupts():
                return pin_baseline(env_id, staged, registry_path, swap=lambda: staging.swap_in(staged, folder))
        finally:
            shutil.rmtree(staged, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m parallax_zoo.baselines.remeasure", description="Re-measure shipped baselines under the current protocol.")
    parser.add_argument("env_ids", nargs="*", help="baselines to re-measure (default: every shipped one)")
    parser.add_argument("--registry", type=Path, default=None, help="registry.yaml to pin in (default: the package's)")
    args = parser.parse_args(argv)
    for env_id in args.env_ids or shipped_baselines():
        spec = remeasure(env_id, args.registry)
        record = json.loads((hub.mirror_folder(env_id) / EVAL_FILE).read_text(encoding="utf-8"))
        print(f"{env_id}: reference score {spec.reference_score}" + (
            f", Elo {record['elo']['elo']:.0f} [{record['elo']['low']:.0f}, {record['elo']['high']:.0f}]" if "elo" in record else ""))
        for opponent, games in record.get("opponents", {}).items():
            print(f"  vs {opponent:10} " + "  ".join(
                f"side {side}: win {games[f'win_side_{side}']:.1%} draw {games[f'draw_side_{side}']:.1%} "
                f"loss {games[f'loss_side_{side}']:.1%}" for side in (0, 1)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
