"""The `parallax-zoo` command, on top of every other room: ids are resolved here, once, into specs and envs."""

from parallax_zoo.cli.main import main

__all__ = ["main"]
