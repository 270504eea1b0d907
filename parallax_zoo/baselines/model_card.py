"""The model card (README.md) of a baseline folder, in the Hub's reinforcement-learning convention."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from parallax_zoo.judging.ratings import Rating


FILES_SECTION = (
    "## Files\n\n"
    "- `model.safetensors`: the policy parameters (safetensors only, never pickle)\n"
    "- `config.yaml`: every hyperparameter and the package versions used\n"
    "- `eval.json`: episodes, seeds, mean, std and 95% confidence interval (zero-sum games: every opponent's record "
    "and the Elo rating)\n"
    "- `curve.png`: the training curve\n"
)
"""The last section of every card: what each file of the folder holds."""


def model_card(
    env_id: str,
    algorithm: str,
    mean: float,
    std: float,
    episodes: int,
    *,
    seed: int | None = None,
    description: str = "",
    folder: str | os.PathLike[str] | None = None,
    opponents: Mapping[str, Mapping[str, float]] | None = None,
    rating: Rating | None = None,
    held_out: Mapping[str, Mapping[str, float]] | None = None,
    held_out_rating: Rating | None = None,
) -> str:
    """The Hub model card (README.md) of a policy folder, in the Hub's RL convention: tags and a `model-index`
    mean_reward.

    Without `folder` it is the card of the official baseline; with it, of a
    user's own run in that folder, whose snippets load the folder itself.
    Zero-sum games add the record against each protocol opponent overall and
    per seat (`opponents`, as `EvalResult.opponents` holds it) and the policy's
    Elo `rating` on the anchored scale (docs/evaluation.md), and where measured the record against the
    held-out players (`held_out`, as `EvalResult.held_out` holds it) in a section of its own, with the Elo rating
    those games alone give it (`held_out_rating`, `anchors.held_out_rating`).
    """
    for name, value in (("env_id", env_id), ("algorithm", algorithm)):
        if not isinstance(value, str) or not value or value.strip() != value or "\n" in value:
            raise ValueError(f"{name} must be a non-empty single-line string without surrounding spaces, got {value!r}")
    if not (math.isfinite(mean) and math.isfinite(std) and std >= 0):
        raise ValueError(f"mean and std must be finite and std >= 0 (measured by evaluate), got mean={mean}, std={std}")
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be a positive int (the evaluation protocol's episode count), got {episodes!r}")
    score = f"{mean:.2f} +/- {std:.2f}"
    metadata = {
        "library_name": "parallax-zoo",
        "tags": ["reinforcement-learning", "parallax-zoo", env_id, algorithm],
        "model-index": [
            {
                "name": f"{algorithm}-{env_id}",
                "results": [
                    {
                        "task": {"type": "reinforcement-learning", "name": "reinforcement-learning"},
                        "dataset": {"name": env_id, "type": env_id},
                        "metrics": [{"type": "mean_reward", "value": score, "name": "mean_reward", "verified": False}],
                    }
                ],
            }
        ],
    }
    seed_text = str(seed) if seed is not None else "S"
    games = opponents_section(opponents or {}, rating) + held_out_section(held_out or {}, held_out_rating)
    if folder is not None:
        return f"---\n{yaml.safe_dump(metadata, sort_keys=False)}---\n\n" + _run_card(
            env_id, algorithm, score, episodes, description, Path(folder).as_posix(), seed_text, games
        )
    body = f"""# {algorithm} baseline for {env_id}

The reference {algorithm} policy of the Parallax Zoo environment `{env_id}`.{" " + description if description else ""}

## Score

mean_reward = {score} over {episodes} episodes of the fixed evaluation protocol of `{env_id}`,
measured by `parallax_zoo.evaluate` on these exact weights (see `eval.json`).
{games}
## Use

```python
import parallax_zoo

# sha256-checked against the pin in registry.yaml
policy = parallax_zoo.load_baseline("{env_id}")
result = parallax_zoo.evaluate("{env_id}", policy)
print(result.mean, result.std, result.ci95)
```

Evaluate from the command line:

```bash
parallax-zoo eval {env_id} --policy baseline
```

Retrain from scratch (every hyperparameter is in `config.yaml`):

```bash
parallax-zoo train {env_id} --seed {seed_text}
```

{FILES_SECTION}"""
    return f"---\n{yaml.safe_dump(metadata, sort_keys=False)}---\n\n{body}"


def opponents_section(opponents: Mapping[str, Mapping[str, float]], rating: Rating | None) -> str:
    """The card's Elo rating and its table of games against each protocol opponent, overall and from each seat ("" for
    none)."""
    if not opponents:
        return ""
    text = "\n## Opponents and Elo\n\n"
    if rating is not None:
        text += (
            f"Elo {rating.elo:.0f} (95% CI [{rating.low:.0f}, {rating.high:.0f}], "
            "from the Fisher information of the fit) "
            "on the zoo's anchored scale: the random player rates 1000 and each ladder opponent holds the rating of "
            "its anchoring fit (docs/evaluation.md).\n\n"
        )
    return (
        text
        + records_table(opponents)
        + (
            "\nSide 0 moves first in the board games. `baseline` is these weights themselves. Every game is "
            "counted in `eval.json`.\n"
        )
    )


def held_out_section(held_out: Mapping[str, Mapping[str, float]], rating: Rating | None = None) -> str:
    """The card's table of games against the held-out players and the Elo rating they give ("" where none were
    measured)."""
    if not held_out:
        return ""
    text = (
        "\n## Held-out opponents\n\n"
        "Players no training or fine-tuning ever seated, written apart from the ladder above; their games never "
        'count in the score (docs/evaluation.md, "The held-out ladder").\n\n'
    )
    if rating is not None:
        text += (
            f"Elo {rating.elo:.0f} (95% CI [{rating.low:.0f}, {rating.high:.0f}]) from these games alone, on the same "
            "anchored scale: each held-out player holds the rating its games against the random player and the "
            "ladder gave it.\n\n"
        )
    return text + records_table(held_out)


def records_table(records: Mapping[str, Mapping[str, float]]) -> str:
    """A markdown table of the games against each opponent, overall and from each seat."""
    text = (
        "| opponent | games | win | draw | loss | from side 0: win / draw / loss | from side 1: win / draw / loss |\n"
        "| --- | --- | --- | --- | --- | --- | --- |\n"
    )
    for name, record in records.items():
        seats = [
            " / ".join(f"{record.get(f'{outcome}_side_{side}', math.nan):.1%}" for outcome in ("win", "draw", "loss"))
            for side in (0, 1)
        ]
        text += (
            f"| {name} | {record['games']:.0f} | {record['win']:.1%} | {record['draw']:.1%} | {record['loss']:.1%} | "
            f"{seats[0]} | {seats[1]} |\n"
        )
    return text


def _run_card(
    env_id: str, algorithm: str, score: str, episodes: int, description: str, folder: str, seed: str, games: str = ""
) -> str:
    """The body of a user's run's card: names it as theirs, not the reference policy, and loads this folder."""
    return f"""# Your {algorithm} run on {env_id}

A policy you trained on the Parallax Zoo environment `{env_id}` with `parallax-zoo train`, written to
`{folder}`. It is your run, not the official baseline pinned in registry.yaml.{" " + description if description else ""}

## Score

mean_reward = {score} over {episodes} episodes of the fixed evaluation protocol of `{env_id}`,
measured by `parallax_zoo.evaluate` on these exact weights (see `eval.json`).
{games}
## Use

```python
import parallax_zoo
from parallax_zoo.policies.loading import load_folder

policy = load_folder("{folder}", parallax_zoo.make("{env_id}"))
result = parallax_zoo.evaluate("{env_id}", policy)
print(result)
```

Evaluate, render or rank it from the command line:

```bash
parallax-zoo eval {env_id} --policy {folder}
parallax-zoo render {env_id} --policy {folder}
parallax-zoo leaderboard --entrant {env_id}={folder}
```

Train it again (every hyperparameter is in `config.yaml`):

```bash
parallax-zoo train {env_id} --seed {seed} --config {folder}/config.yaml --out {folder}
```

{FILES_SECTION}"""
