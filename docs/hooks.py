"""MkDocs hook: adds the environment catalogue pages, generated from registry.yaml, to the site."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

from parallax_zoo.catalogue.catalogue_pages import catalogue_pages


def on_files(files: Files, config: Any) -> Files:
    docs_folder = Path(config["docs_dir"])
    for path, markdown in catalogue_pages(docs_folder):
        files.append(File.generated(config, path, content=markdown))
    return files
