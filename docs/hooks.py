"""MkDocs hooks: the environment catalogue pages (`catalogue_pages.py` beside this file), generated from
registry.yaml at every build, and their place in the nav; the scorecard and reproduction pages
(`scorecard_pages.py`), generated from the shipped baselines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from catalogue_pages import CATALOGUE_FOLDER, catalogue_pages, families  # MkDocs puts this folder on the path
from mkdocs.structure.files import File, Files
from scorecard_pages import scorecard_pages

CATALOGUE_INDEX = f"{CATALOGUE_FOLDER}/index.md"


def on_config(config: Any) -> Any:
    """Expands the nav's `Environments: environments/index.md` into the index and one entry per family."""
    family_entries = [{family.label: family.page} for family in families()]
    for position, entry in enumerate(config["nav"] or []):
        if isinstance(entry, dict) and CATALOGUE_INDEX in entry.values():
            (title,) = entry
            config["nav"][position] = {title: [CATALOGUE_INDEX, *family_entries]}
    return config


def on_files(files: Files, config: Any) -> Files:
    docs_folder = Path(config["docs_dir"])
    for path, markdown in catalogue_pages(docs_folder):
        files.append(File.generated(config, path, content=markdown))
    for path, content in scorecard_pages(docs_folder):
        files.append(File.generated(config, path, content=content))
    return files
