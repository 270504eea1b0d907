"""Results in the exact format `evaluate` writes, built from given games: the raw material of forged-file tests."""

from __future__ import annotations

import numpy as np

import parallax_zoo
from parallax_zoo.catalogue.player_names import RANDOM
from parallax_zoo.judging.evaluation import EvalResult, per_side_record, protocol
from parallax_zoo.judging.random_scores import stored_random_score


def crafted(env_id: str, policy: str, games: dict[str, tuple[int, int, int]]) -> EvalResult:
    """A zero-sum result as `evaluate` writes it: against each opponent the given games (won, drawn, lost),
    alternating between the seats; the scores are the games against the first opponent."""
    records, scores = {}, ()
    for index, (opponent, counts) in enumerate(games.items()):
        outcomes = np.repeat([1.0, 0.0, -1.0], counts)
        sides = np.arange(outcomes.size) % 2
        records[opponent] = {
            "games": float(outcomes.size),
            "win": float(np.mean(outcomes > 0)),
            "draw": float(np.mean(outcomes == 0)),
            "loss": float(np.mean(outcomes < 0)),
            "return": float(np.mean(outcomes)),
        } | per_side_record(outcomes, sides)
        if index == 0:
            scores = tuple(float(x) for x in outcomes)
    return EvalResult(env_id, policy, protocol(parallax_zoo.spec(env_id)), scores=scores, opponents=records)


def scored(env_id: str, policy: str, scores: tuple[float, ...]) -> EvalResult:
    """A result of an env without opponents as `evaluate` writes it: the scores, the last repeated to the
    protocol's episode count."""
    fixed = protocol(parallax_zoo.spec(env_id))
    return EvalResult(env_id, policy, fixed, scores=scores + scores[-1:] * (fixed.episodes - len(scores)))


def random_result(env_id: str) -> EvalResult:
    """The random player's result on an env without opponents, every episode scoring its shipped mean: what a board
    accepts under the name `random` (the result checks hold that name to the shipped score)."""
    stored = stored_random_score(parallax_zoo.spec(env_id))
    assert stored is not None, f"no shipped random score for {env_id}"
    return scored(env_id, RANDOM, (float(stored["mean"]),))
