"""The model card (README.md) of a baseline folder, in the Hub's reinforcement-learning convention."""

from __future__ import annotations

import math
import os
from pathlib import Path

import yaml


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
) -> str:
    """The Hub model card (README.md) of a policy folder, in the Hub's RL convention: tags and a `model-index` mean_reward.

    Without `folder` it is the card of the official baseline; with it, of a
    user's own run in that folder, whose snippets load the folder itself.
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
    if folder is not None:
        return f"---\n{yaml.safe_dump(metadata, sort_keys=False)}---\n\n" + _run_card(
            env_id, algorithm, score, episodes, description, Path(folder).as_posix(), seed_text)
    body = f"""# {algorithm} baseline for {env_id}

The reference {algorithm} policy of the Parallax Zoo environment `{env_id}`.{" " + description if description else ""}

## Score

mean_reward = {score} over {episodes} episodes of the fixed evaluation protocol of `{env_id}`,
measured by `parallax_zoo.evaluate` on these exact weights (see `eval.json`).

## Use

```python
import parallax_zoo

policy = parallax_zoo.load_baseline("{env_id}")  # sha256-checked against the pin in registry.yaml
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

## Files

- `model.safetensors`: the policy parameters (safetensors only, never pickle)
- `config.yaml`: every hyperparameter and the package versions used
- `eval.json`: episodes, seeds, mean, std and 95% confidence interval
- `curve.png`: the training curve
"""
    return f"---\n{yaml.safe_dump(metadata, sort_keys=False)}---\n\n{body}"


def _run_card(env_id: str, algorithm: str, score: str, episodes: int, description: str, folder: str, seed: str) -> str:
    """The body of a user's run's card: names it as theirs, not the reference policy, and loads this folder."""
    return f"""# Your {algorithm} run on {env_id}

A policy you trained on the Parallax Zoo environment `{env_id}` with `parallax-zoo train`, written to
`{folder}`. It is your run, not the official baseline pinned in registry.yaml.{" " + description if description else ""}

## Score

mean_reward = {score} over {episodes} episodes of the fixed evaluation protocol of `{env_id}`,
measured by `parallax_zoo.evaluate` on these exact weights (see `eval.json`).

## Use

```python
import parallax_zoo
from parallax_zoo.scoring.loading import load_folder

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

## Files

- `model.safetensors`: the policy parameters (safetensors only, never pickle)
- `config.yaml`: every hyperparameter and the package versions used
- `eval.json`: episodes, seeds, mean, std and 95% confidence interval
- `curve.png`: the training curve
"""
