"""The zoo's Race, counting its constructions: how many times a command builds the env of an id."""

from __future__ import annotations

from typing import Any

from parallax_zoo.envs.race import Race


class CountedRace(Race):
    built = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        type(self).built += 1
        super().__init__(*args, **kwargs)
