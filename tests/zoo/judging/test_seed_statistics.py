"""Statistics over training seeds: the interquartile mean and its stratified-bootstrap interval, by rliable."""

import numpy as np
import pytest
from scipy import stats

from parallax_zoo.judging.seed_statistics import over_seeds


def test_the_iqm_is_the_mean_of_the_middle_half_and_its_interval_holds_it():
    scores = {seed: float(score) for seed, score in enumerate([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 100.0])}
    result = over_seeds(scores)
    assert result.iqm == pytest.approx(stats.trim_mean(list(scores.values()), 0.25))  # 3.5: the outlier trimmed
    assert 0.0 <= result.low <= result.iqm <= result.high <= 100.0
    assert result.to_dict()["scores"] == {str(seed): score for seed, score in scores.items()}


def test_the_interval_is_the_same_every_time_and_never_leaves_the_seeds_range():
    scores = {0: -3.0, 1: 5.0, 2: 11.0}
    first, again = over_seeds(scores), over_seeds(scores)
    assert (first.low, first.high) == (again.low, again.high)
    assert -3.0 <= first.low < first.high <= 11.0
    same = over_seeds({0: 2.0, 1: 2.0, 2: 2.0})
    assert (same.iqm, same.low, same.high) == (2.0, 2.0, 2.0)


def test_no_seeds_is_refused():
    with pytest.raises(ValueError, match="no seed scores"):
        over_seeds({})


def test_the_card_sentence_names_every_seed_and_the_interval():
    sentence = over_seeds({0: 1.0, 1: 2.0, 2: 3.0}).sentence()
    assert "seed 0 1.000, seed 1 2.000, seed 2 3.000" in sentence and "interquartile mean 2.000" in sentence
    assert np.isfinite(over_seeds({0: 1.0}).iqm)
