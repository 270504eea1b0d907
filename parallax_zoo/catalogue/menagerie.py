"""Whether a MuJoCo Playground env's MuJoCo Menagerie robot assets are on disk, checked before it is built.

Playground's locomotion and manipulation envs read their robots from a
MuJoCo Menagerie checkout at `mujoco_playground._src.mjx_env.MENAGERIE_PATH`
(inside the installed package) and, where that folder is missing,
`git clone` it from GitHub when the env is first loaded. The zoo never
downloads behind a user's back: `make` checks the robot folders first and
fails at once, in one line, saying which folders, where and how to provide
them (docs/suites.md, "MuJoCo Playground").
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Any

from parallax_zoo.errors import UserError

MENAGERIE_URL = "https://github.com/google-deepmind/mujoco_menagerie.git"
"""Where MuJoCo Menagerie lives (Playground clones the same repository, under its older address)."""

ROBOT_FOLDER = re.compile(r'MENAGERIE_PATH\s*/\s*"([\w.-]+)"|_MENAGERIE_\w*DIR\s*=\s*"([\w.-]+)"')
"""How Playground's env modules name a Menagerie robot folder: `MENAGERIE_PATH / "unitree_go1"`, `_MENAGERIE_*_DIR`."""


class MissingAssetsError(UserError, FileNotFoundError):
    """An env whose robot assets are not on disk; the message names the folders, where they go and how to get them."""

    def __init__(self, message: str, folders: list[str]):
        super().__init__(message)
        self.folders = folders

    def __str__(self) -> str:
        return str(self.args[0])


def menagerie_folders(playground: Any, foreign_id: str) -> list[str]:
    """The Menagerie robot folders `foreign_id`'s class reads, found in the source of the modules it is built from.

    Empty for an env that needs no Menagerie asset (the DM Control Suite).
    """
    if foreign_id not in playground.registry.locomotion.ALL_ENVS + playground.registry.manipulation.ALL_ENVS:
        return []
    locomotion, manipulation = playground.registry.locomotion, playground.registry.manipulation
    suite = locomotion if foreign_id in locomotion.ALL_ENVS else manipulation
    env_class = suite._envs[foreign_id]
    env_class = getattr(env_class, "func", env_class)  # a functools.partial of the class, for some ids
    folders: list[str] = []
    for cls in inspect.getmro(env_class):
        module = inspect.getmodule(cls)
        if module is None or not module.__name__.startswith("mujoco_playground."):
            continue
        for match in ROBOT_FOLDER.finditer(inspect.getsource(module)):
            folder = match.group(1) or match.group(2)
            if folder not in folders:
                folders.append(folder)
    return folders


def require_menagerie_assets(env_id: str, playground: Any, foreign_id: str) -> None:
    """Raise `MissingAssetsError` if a robot folder `foreign_id` needs is missing from Playground's Menagerie path."""
    folders = menagerie_folders(playground, foreign_id)
    if not folders:
        return
    mjx_env = importlib.import_module(f"{playground.__name__}._src.mjx_env")
    root = Path(str(mjx_env.MENAGERIE_PATH))
    missing = [folder for folder in folders if not (root / folder).is_dir()]
    if not missing:
        return
    commit = getattr(mjx_env, "MENAGERIE_COMMIT_SHA", None)
    checkout = f" && git -C {root} checkout {commit}" if commit else ""
    provide = (
        f"git clone {MENAGERIE_URL} {root}{checkout}"
        if not root.exists()
        else (
            f"copy them from a MuJoCo Menagerie checkout ({MENAGERIE_URL}{f' at {commit}' if commit else ''}) into "
            f"{root}"
        )
    )
    raise MissingAssetsError(
        f"{env_id} needs MuJoCo Menagerie's robot assets ({', '.join(missing)}), which MuJoCo Playground reads from "
        f"{root} and which are not there; parallax-zoo does not download them. Provide them with: {provide}",
        missing,
    )


__all__ = ["MENAGERIE_URL", "MissingAssetsError", "menagerie_folders", "require_menagerie_assets"]
