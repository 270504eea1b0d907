"""The random player's shipped protocol scores: measured by `maintain random-scores`, kept per id, used only under
the protocol they were measured with."""

import dataclasses
import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from helpers.memory_maps import memory_map_count

import parallax_zoo
from parallax_zoo.cli.main import main
from parallax_zoo.errors import UserError
from parallax_zoo.judging import random_scores
from parallax_zoo.judging.random_scores import RANDOM_SCORES_FILE, stored_random_score, write_random_scores
from parallax_zoo.locking import exclusive_lock


def test_measured_scores_are_kept_per_id_and_count_only_under_their_protocol(tmp_path, capsys):
    path = tmp_path / "random_scores.json"
    assert main(["maintain", "random-scores", "GridWorld-v0", "TicTacToe-v0", "--write", "--file", str(path)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("GridWorld-v0") and f"wrote {path}" in printed
    grid = stored_random_score(parallax_zoo.spec("GridWorld-v0"), path)
    assert grid is not None and grid["episodes"] == 128 and grid["ci95"][0] <= grid["mean"] <= grid["ci95"][1]
    assert grid["mean"] == parallax_zoo.evaluate("GridWorld-v0", "random").mean  # the protocol's own number
    other_limit = dataclasses.replace(parallax_zoo.spec("GridWorld-v0"), max_steps=7)  # another protocol
    assert stored_random_score(other_limit, path) is None

    maps_before = memory_map_count()
    assert main(["maintain", "random-scores", "Race-v0", "--write", "--file", str(path)]) == 0  # adds, keeps the rest
    grown = memory_map_count() - maps_before  # each id's programs let go after it (judging/programs.py)
    assert grown < 50, f"{grown} more memory maps after measuring Race-v0: its programs were kept"
    assert sorted(json.loads(path.read_text())["envs"]) == ["GridWorld-v0", "Race-v0", "TicTacToe-v0"]


def test_every_shipped_score_is_under_its_ids_current_protocol():
    envs = json.loads(RANDOM_SCORES_FILE.read_text())["envs"]
    assert envs, "random_scores.json holds no id"
    stale = [env_id for env_id in envs if stored_random_score(parallax_zoo.spec(env_id)) is None]
    assert not stale, f"re-measure with `parallax-zoo maintain random-scores --write {' '.join(stale)}`"


def test_every_id_with_a_pinned_baseline_has_the_random_players_score():
    """Its normalised score needs both ends, so pinning a new baseline goes with measuring the random player."""
    pinned = [env_id for env_id in parallax_zoo.list_envs() if parallax_zoo.spec(env_id).baseline is not None]
    missing = [env_id for env_id in pinned if stored_random_score(parallax_zoo.spec(env_id)) is None]
    assert len(pinned) >= 34 and not missing, (
        f"measure with `parallax-zoo maintain random-scores --write {' '.join(missing)}`"
    )


def test_writers_at_once_all_land_and_a_stuck_lock_says_what_to_remove(tmp_path, monkeypatch):
    path = tmp_path / "random_scores.json"
    record = {"mean": 1.0, "ci95": [0.5, 1.5], "episodes": 8}
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda number: write_random_scores([(f"Id{number}-v0", record)], path), range(16)))
    assert set(json.loads(path.read_text())["envs"]) == {f"Id{number}-v0" for number in range(16)}

    monkeypatch.setattr(random_scores, "LOCK_TIMEOUT", 0.1)
    lock = tmp_path / ".random_scores.json.lock"
    with exclusive_lock(lock, 0), pytest.raises(UserError, match=f"remove {lock}"):
        write_random_scores([("Late-v0", record)], path)
    assert "Late-v0" not in json.loads(path.read_text())["envs"]


def test_pinning_a_zero_sum_game_measures_the_random_player_under_the_protocol_the_pin_gives(tmp_path, monkeypatch):
    """A game's first pin adds the baseline to its protocol's opponents, so the random player's record measured
    before it no longer counts: the pin measures it again, against the weights it pins."""
    from parallax_zoo.baselines.training import train_baseline
    from parallax_zoo.catalogue.registry import PACKAGED_REGISTRY, Registry
    from parallax_zoo.policies import hub

    text = PACKAGED_REGISTRY.read_text()
    entry = text.index("  - id: TicTacToe-v0\n")
    start = text.index("    baseline:\n", entry)
    end = text.index("    reference_score:", entry)
    end = text.index("\n", end) + 1
    (tmp_path / "registry.yaml").write_text(text[:start] + text[end:])  # TicTacToe-v0 as before its first pin
    unpinned = Registry.from_yaml((tmp_path / "registry.yaml").read_text()).spec("TicTacToe-v0")
    assert unpinned.baseline is None
    before_pin = dict(stored_random_score(parallax_zoo.spec("TicTacToe-v0")))
    before_pin["protocol"] = {**before_pin["protocol"], "opponents": ["perfect", "random"]}
    scores = tmp_path / "random_scores.json"
    scores.write_text(json.dumps({"envs": {"TicTacToe-v0": before_pin}}))
    assert stored_random_score(unpinned, scores) is not None, "the record counts while the game has no pin"
    (tmp_path / "tiny.yaml").write_text(
        "algorithm: mappo\nhyperparameters:\n  num_envs: 4\n  num_steps: 8\n  total_timesteps: 64\n"
        "  update_epochs: 1\n  num_minibatches: 1\n  hidden_sizes: [16]\n  agent_ids: true\n"
        "  centralized_critic: true\n  self_play: true\n  snapshots: 2\n  opponent: random\n  opponent_share: 0.5\n"
        "  eval_episodes: 4\n  eval_max_steps: 10\n"
    )
    monkeypatch.setenv(hub.MIRROR_ENV_VAR, str(tmp_path / "baselines"))
    train_baseline(
        unpinned,
        parallax_zoo.make("TicTacToe-v0"),
        config=tmp_path / "tiny.yaml",
        progress=False,
        pin=True,
        registry_path=tmp_path / "registry.yaml",
        random_scores_path=scores,
        allow_random_level=True,  # a tiny run: the pin's mechanics, not its skill
    )
    pinned = Registry.from_yaml((tmp_path / "registry.yaml").read_text()).spec("TicTacToe-v0")
    assert pinned.baseline is not None
    record = stored_random_score(pinned, scores)
    assert record is not None, "the random player's record was left under the protocol before the pin"
    assert record["protocol"]["opponents"] == ["perfect", "random", "baseline"]
