"""The player names the zoo reserves: the uniformly random player and the pinned baseline.

They name players wherever a policy is named (`parallax-zoo eval --policy random`,
an evaluation protocol's opponents), so no registry.yaml opponent may take them.
"""

from __future__ import annotations

RANDOM = "random"
"""The uniformly random player over the legal actions."""

BASELINE = "baseline"
"""The env's pinned baseline policy (registry.yaml `baseline:`)."""

RESERVED_PLAYERS = (RANDOM, BASELINE)
