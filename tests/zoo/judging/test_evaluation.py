"""The fixed evaluation protocol and its results."""

from __future__ import annotations

import dataclasses
import json

import jax
import numpy as np
import pytest

import parallax_zoo
from parallax_zoo import evaluate
from parallax_zoo.agents.players import ScriptedPlayer
from parallax_zoo.agents.ppo import PPOConfig
from parallax_zoo.judging import evaluation
from parallax_zoo.judging.evaluation import SAMPLED_ACTIONS, EvalResult, protocol
from parallax_zoo.policies.checkpoint import initial_policy


def test_protocol_is_fixed_per_env_id():
    assert protocol(parallax_zoo.spec("Race-v0")) == protocol(parallax_zoo.spec("Race-v0"))
    assert protocol(parallax_zoo.spec("Race-v0")).root_seed != protocol(parallax_zoo.spec("GridWorld-v0")).root_seed
    assert protocol(parallax_zoo.spec("TicTacToe-v0")).zero_sum and protocol(
        parallax_zoo.spec("TicTacToe-v0")
    ).opponents == ("perfect", "random", "baseline")
    assert not protocol(parallax_zoo.spec("GridWorld-v0")).zero_sum
    assert protocol(parallax_zoo.spec("RespawnRace-v0")).max_steps == parallax_zoo.spec("RespawnRace-v0").max_steps


def test_an_id_tagged_sampled_actions_is_played_by_sampling_from_the_protocols_seeds():
    assert not protocol(parallax_zoo.spec("craftax/Craftax-Symbolic-v1")).greedy
    spec = parallax_zoo.spec("GridWorld-v0")
    sampling = dataclasses.replace(spec, tags=(*spec.tags, SAMPLED_ACTIONS))
    env = parallax_zoo.make("GridWorld-v0")
    policy = initial_policy(PPOConfig(env_id="GridWorld-v0"), env)
    greedy = evaluation.evaluate(spec, env, policy)
    sampled, again = (evaluation.evaluate(sampling, env, policy) for _ in range(2))
    assert greedy.protocol.greedy and not sampled.protocol.greedy
    assert sampled.scores == again.scores
    assert sampled.scores != greedy.scores


def test_same_policy_twice_gives_identical_results():
    policy = initial_policy(PPOConfig(env_id="GridWorld-v0"), parallax_zoo.make("GridWorld-v0"))
    first = evaluate("GridWorld-v0", policy, name="untrained")
    second = evaluate("GridWorld-v0", policy, name="untrained")
    assert first.scores == second.scores
    assert first.to_dict() == second.to_dict()
    assert first.episodes == protocol(parallax_zoo.spec("GridWorld-v0")).episodes


def test_cooperative_result_has_per_agent_scores_and_statistics():
    result = evaluate("Race-v0", "random")
    assert len(result.per_agent) == 3
    assert result.finished == 1.0
    scores = np.asarray(result.scores)
    assert result.mean == pytest.approx(scores.mean())
    assert result.std == pytest.approx(scores.std())
    low, high = result.ci95
    assert scores.min() <= low < result.mean < high <= scores.max()
    assert result.ci95_method == "bootstrap" and result.to_dict()["ci95"] == [low, high]
    # A random racer moves every other step on average, so it finishes in about 20 of the 50 steps:
    # 1 - 0.01 * 20 = 0.8, while always moving forward scores the optimal 0.9.
    assert 0.7 < result.mean < 0.9


def test_zero_sum_result_counts_wins_draws_and_losses_from_both_seats():
    result = evaluate("TicTacToe-v0", "random")
    record = result.opponents["perfect"]  # the scores are the games against the first opponent
    assert record["win"] + record["draw"] + record["loss"] == pytest.approx(1.0)
    assert set(np.unique(result.scores)) <= {-1.0, 0.0, 1.0}
    assert result.mean == pytest.approx(record["win"] - record["loss"])


def test_a_zero_sum_game_scored_in_chips_gets_the_bootstrap_interval():
    """Leduc hold'em pays chips: a policy winning 3 a hand is past a win's 1, where the Wilson interval of its
    "rate" took the square root of a negative number (a trained Leduc baseline's evaluation raised ValueError)."""
    winning = EvalResult(
        env_id="pgx/leduc_holdem",
        policy="random",
        protocol=protocol(parallax_zoo.spec("pgx/leduc_holdem")),
        scores=(3.0,) * 200 + (-1.0,) * 40 + (7.0,) * 16,
    )
    low, high = winning.ci95
    assert winning.ci95_method == "bootstrap" and 1.0 < low < winning.mean < high <= 7.0
    assert winning.to_dict()["ci95"] == [low, high]


def test_a_zero_sum_interval_stays_inside_a_loss_and_a_win():
    nearly_all_lost = EvalResult(
        env_id="ConnectFour-v0",
        policy="random",
        protocol=protocol(parallax_zoo.spec("ConnectFour-v0")),
        scores=(-1.0,) * 249 + (0.0,) * 7,
    )  # ConnectFour's random player against `tactical`
    low, high = nearly_all_lost.ci95
    assert -1.0 <= low < nearly_all_lost.mean < high <= 1.0 and nearly_all_lost.ci95_method == "wilson"
    all_lost = EvalResult(
        env_id="ConnectFour-v0",
        policy="random",
        protocol=protocol(parallax_zoo.spec("ConnectFour-v0")),
        scores=(-1.0,) * 256,
    )
    low, high = all_lost.ci95
    assert low == -1.0 and -1.0 < high < -0.95  # 256 losses do not prove the policy can never draw
    assert all_lost.all_equal and "every one of the 256 games scored -1.000" in all_lost.summary()
    played = evaluate("TicTacToe-v0", "random")
    low, high = played.ci95
    assert -1.0 <= low < played.mean < high <= 1.0


def test_a_deterministic_score_says_every_episode_scored_the_same():
    policy = parallax_zoo.load_baseline("Race-v0")
    result = evaluate("Race-v0", policy)
    assert result.all_equal and result.ci95 == (result.mean, result.mean)
    assert result.summary() == f"{result.mean:.3f} (every one of the 128 episodes scored {result.mean:.3f})"
    assert result.to_dict()["all_equal"] is True
    spread, again = (
        EvalResult(
            env_id="GridWorld-v0",
            policy="x",
            protocol=protocol(parallax_zoo.spec("GridWorld-v0")),
            scores=tuple(np.linspace(0.0, 1.0, 128)),
        )
        for _ in range(2)
    )
    assert not spread.all_equal and spread.ci95 == again.ci95  # the bootstrap is seeded: the same every time
    assert 0.0 < spread.ci95[0] < 0.5 < spread.ci95[1] < 1.0
    assert "+/-" in spread.summary() and "95% CI [" in spread.summary()


def test_zero_sum_records_split_by_the_side_the_policy_held():
    result = evaluate("TicTacToe-v0", "random")
    record = result.opponents["perfect"]
    scores = np.asarray(result.scores)
    for side in (0, 1):
        held = scores[side::2]  # episode e seats the policy on side e % 2
        assert record[f"win_side_{side}"] == pytest.approx(np.mean(held > 0))
        assert record[f"loss_side_{side}"] == pytest.approx(np.mean(held < 0))
        assert record[f"win_side_{side}"] + record[f"draw_side_{side}"] + record[f"loss_side_{side}"] == pytest.approx(
            1
        )
    assert (record["win_side_0"] + record["win_side_1"]) / 2 == pytest.approx(record["win"])


def test_team_race_meets_its_scripted_naive_team_first():
    from parallax_zoo.envs.team_race import naive_policy

    assert protocol(parallax_zoo.spec("TeamRace-v0")).opponents[:2] == ("naive", "random")
    # Naive against naive: both teams run every step and reach the finish together, a draw every game.
    result = evaluate("TeamRace-v0", ScriptedPlayer(naive_policy), episodes=8)
    assert result.opponents["naive"]["draw"] == 1.0
    assert result.scores == (0.0,) * 8


def test_json_round_trip_and_atomic_save(tmp_path):
    result = evaluate("GridWorld-v0", "random", episodes=8)
    path = result.save(tmp_path / "gridworld.json")
    data = json.loads(path.read_text())
    assert data["env_id"] == "GridWorld-v0" and data["env_version"] == 0
    assert data["episodes"] == 8 and len(data["scores"]) == 8
    assert {"jax", "flax"} <= set(data["versions"])
    assert EvalResult.from_json(data) == result
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gridworld.json"]


def test_policy_for_another_env_is_refused_with_expected_and_found_shapes():
    policy = initial_policy(PPOConfig(env_id="GridWorld-v0"), parallax_zoo.make("GridWorld-v0"))
    with pytest.raises(ValueError) as caught:
        evaluate("Race-v0", policy)
    message = str(caught.value)
    assert "num_agents: the env needs 3, the policy has 1" in message
    assert "observation_shape: the env needs (3, 3), the policy has (4,)" in message


def test_unknown_policy_names_are_refused():
    with pytest.raises(ValueError, match="'random'"):
        evaluate("GridWorld-v0", "greedy-ish")
    with pytest.raises(TypeError, match="Policy"):
        evaluate("GridWorld-v0", jax.numpy.zeros(3))  # type: ignore[arg-type]


def test_zero_sum_games_meet_every_ladder_opponent_from_both_seats_with_records_per_opponent_and_seat():
    import parallax_zoo.judging.evaluation as evaluation

    for env_id in ("TicTacToe-v0", "ConnectFour-v0", "Othello-v0"):
        fixed = protocol(parallax_zoo.spec(env_id))
        assert fixed.version == evaluation.PROTOCOL_VERSION == 2
        assert fixed.opponents == (*parallax_zoo.spec(env_id).opponents, "random", "baseline")
        assert fixed.episodes >= 200 and fixed.episodes % 2 == 0
    result = evaluate("TicTacToe-v0", "random")
    assert list(result.opponents) == ["perfect", "random", "baseline"]
    for record in result.opponents.values():
        assert record["games"] == 256 and record["games_side_0"] == record["games_side_1"] == 128
        for side in (0, 1):
            assert record[f"win_side_{side}"] + record[f"draw_side_{side}"] + record[
                f"loss_side_{side}"
            ] == pytest.approx(1)
        for outcome in ("win", "draw", "loss"):
            assert (record[f"{outcome}_side_0"] + record[f"{outcome}_side_1"]) / 2 == pytest.approx(record[outcome])
    perfect = result.opponents["perfect"]
    assert perfect["win_side_0"] == perfect["win_side_1"] == 0.0, "perfect play never loses, from either seat"
    assert perfect["draw_side_0"] > perfect["draw_side_1"], "the random player draws more often when it moves first"
    assert result.opponents["random"]["win_side_0"] > result.opponents["random"]["win_side_1"]
    saved = EvalResult.from_json(json.loads(result.to_json()))
    assert saved.opponents == result.opponents and saved.protocol.version == 2
