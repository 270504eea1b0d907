"""Scorecards: seeds normalised between the random player and the best score known, and per namespace their IQM,
its interval and the performance profile, by rliable (docs/evaluation.md, "Scorecards")."""

import json

import numpy as np
import pytest
from scipy import stats

import parallax_zoo
from parallax_zoo.catalogue.pins import baseline_dirname
from parallax_zoo.judging.scorecard import (
    MIN_SEEDS,
    PROFILE_THRESHOLDS,
    BaselineScores,
    read_baseline_scores,
    scorecard,
)
from parallax_zoo.policies.hub import mirror_root


def test_zero_is_the_random_player_and_one_the_best_known_score():
    ours = BaselineScores("a", (4.0, 2.0, 0.0), random=1.0)
    assert ours.best_known == 4.0 and ours.normalized() == pytest.approx((1.0, 1 / 3, -1 / 3))
    published_higher = BaselineScores("a", (4.0, 2.0, 0.0), random=1.0, published=7.0)
    assert published_higher.normalized() == pytest.approx((0.5, 1 / 6, -1 / 6))
    published_lower = BaselineScores("a", (4.0, 2.0, 0.0), random=1.0, published=3.0)  # ours beat it: ours is the top
    assert published_lower.normalized() == ours.normalized()


def test_with_nothing_known_above_the_random_player_there_is_no_scale():
    assert BaselineScores("a", (-200.0, -200.0, -200.0), random=-200.0).normalized() is None
    assert BaselineScores("a", (1.0, 1.0, 1.0), random=1.02, published=1.01).normalized() is None
    assert BaselineScores("a", (1.0, 1.0, 1.0), random=1.02, published=1.1).normalized() == pytest.approx((-0.25,) * 3)


def _card():
    return scorecard(
        "suite",
        [
            BaselineScores("good", (10.0, 8.0, 10.0, 9.0), random=0.0),
            BaselineScores("mixed", (1.0, 0.0, 0.5), random=0.0, published=2.0),
            BaselineScores("flat", (-200.0, -200.0, -200.0), random=-200.0),
            BaselineScores("single", (3.0,), random=0.0),
        ],
    )


def test_the_ids_with_enough_seeds_and_a_scale_enter_and_the_others_are_named_with_why():
    card = _card()
    assert card.env_ids == ("good", "mixed")
    assert set(card.left_out) == {"flat", "single"}
    assert "random player" in card.left_out["flat"] and f"--seeds {MIN_SEEDS}" in card.left_out["single"]
    # Each id keeps its first seeds, as many as the id with the fewest has: rliable takes [runs, tasks].
    np.testing.assert_allclose(card.normalized, [[1.0, 0.5], [0.8, 0.0], [1.0, 0.25]])


def test_the_iqm_is_rliables_over_every_run_and_its_interval_holds_it_inside_the_runs_range():
    card = _card()
    assert card.iqm is not None and card.iqm_ci95 is not None
    assert card.iqm == pytest.approx(stats.trim_mean(card.normalized.ravel(), 0.25))
    low, high = card.iqm_ci95
    assert card.normalized.min() <= low <= card.iqm <= high <= card.normalized.max()
    assert _card().iqm_ci95 == card.iqm_ci95  # a fixed bootstrap seed: the same files, the same interval


def test_the_profile_is_the_fraction_of_runs_above_each_threshold_inside_its_band():
    card = _card()
    expected = [(card.normalized > tau).mean() for tau in PROFILE_THRESHOLDS]
    np.testing.assert_allclose(card.profile, expected)
    assert np.all(np.diff(card.profile) <= 0)
    assert np.all(card.profile_ci95[0] - 1e-9 <= card.profile) and np.all(card.profile <= card.profile_ci95[1] + 1e-9)
    assert np.all((card.profile_ci95 >= 0.0) & (card.profile_ci95 <= 1.0))
    np.random.seed(12345)
    state = np.random.get_state()[1].copy()
    _card()
    np.testing.assert_array_equal(np.random.get_state()[1], state)  # NumPy's global generator is given back


def test_a_namespace_with_no_id_to_score_has_an_empty_card():
    card = scorecard("none", [BaselineScores("single", (3.0,), random=0.0)])
    assert card.env_ids == () and card.iqm is None and card.iqm_ci95 is None and list(card.left_out) == ["single"]


def test_every_shipped_baseline_reads_as_its_eval_json_records_it():
    for env_id in parallax_zoo.list_envs():
        if parallax_zoo.spec(env_id).baseline is None:
            continue
        folder = mirror_root() / baseline_dirname(env_id)
        record = json.loads((folder / "eval.json").read_text(encoding="utf-8"))
        scores = read_baseline_scores(folder, random=0.0)
        assert scores.env_id == env_id
        seeds = record.get("over_seeds", {}).get("scores", {"0": record["mean"]})
        assert scores.seed_scores == tuple(seeds[key] for key in sorted(seeds, key=int))
        assert record["mean"] == scores.seed_scores[record.get("policy_seed", 0)]
