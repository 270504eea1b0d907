"""Public names respelt to one English variant (-ize) keep their old spelling for one release, with a warning."""

from __future__ import annotations

import pytest

from parallax_zoo.agents.mappo import MAPPOConfig
from parallax_zoo.agents.ppo import PPOConfig
from parallax_zoo.scoring import leaderboard
from parallax_zoo.scoring.checkpoint import config_from_dict, config_to_dict


@pytest.mark.parametrize("config_class", [PPOConfig, MAPPOConfig])
def test_centralised_critic_still_configures_the_centralized_critic(config_class: type[PPOConfig]) -> None:
    with pytest.warns(DeprecationWarning, match="centralized_critic"):
        config = config_class(centralised_critic=False)
    assert config.centralized_critic is False
    assert config == config_class(centralized_critic=False)
    with pytest.warns(DeprecationWarning, match="centralized_critic"):
        assert config.centralised_critic is False
    assert "centralised_critic" not in config_to_dict(config)["hyperparameters"]


def test_a_config_file_with_the_old_key_loads_with_a_warning() -> None:
    data = config_to_dict(MAPPOConfig(centralized_critic=False))
    data["hyperparameters"]["centralised_critic"] = data["hyperparameters"].pop("centralized_critic")
    with pytest.warns(DeprecationWarning, match="centralized_critic"):
        assert config_from_dict(data) == MAPPOConfig(centralized_critic=False)


def test_normalise_and_row_normalised_are_the_new_names() -> None:
    with pytest.warns(DeprecationWarning, match="normalize"):
        assert leaderboard.normalise(0.55, 0.2, 0.9) == leaderboard.normalize(0.55, 0.2, 0.9)
    row = leaderboard.Row("Race-v0", "me", 0.5, (0.4, 0.6), 128, normalized=0.25)
    with pytest.warns(DeprecationWarning, match="normalized"):
        assert row.normalised == 0.25
