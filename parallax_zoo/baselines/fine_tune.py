"""Fine-tuning a board baseline against the opponent ladder: MAPPO from trained weights, against a rotation of
ladder players.

Self-play against the random player leaves a board baseline blind to simple
tactics (docs/baselines.md, "Board baselines"). A fine-tune starts from a
policy folder's weights and runs `stages` of MAPPO in which a share of the
training envs seats the ladder players named (dealt over the envs in turn,
`players.Rotation`) and the rest play the policy against itself. After each
segment the greedy policy meets every opponent named (64 games, both seats);
those win rates are the curve. The folder written holds the last stage's
config, the weights, the curve, `eval.json` and the card with the wall time.

    parallax-zoo maintain fine-tune ConnectFour-v0 START_FOLDER OUT_FOLDER
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import jax
import numpy as np

from parallax.core import AnyEnv
from parallax_zoo.agents import mappo
from parallax_zoo.agents.mappo import MAPPOConfig
from parallax_zoo.agents.player_factories import opponent_player, training_opponent
from parallax_zoo.agents.players import Greedy
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.search import SearchSettings
from parallax_zoo.agents.selfplay import head_to_head
from parallax_zoo.baselines import staging
from parallax_zoo.baselines.training import (
    CURVE_FILE,
    check_output_folder,
    check_staged,
    output_lock,
    placement,
    write_evaluation,
)
from parallax_zoo.catalogue.registry import EnvSpec
from parallax_zoo.policies import checkpoint

SEGMENTS = 8
"""Segments per stage; the curve has one point per segment and opponent."""
PROBE_GAMES = 64


@dataclass(frozen=True)
class Stage:
    """One stretch of fine-tuning: the ladder players dealt over `opponent_share` of the envs, for `total_timesteps`
    steps."""

    opponents: tuple[str, ...]
    opponent_share: float
    total_timesteps: int
    learning_rate: float


RECIPES: dict[str, tuple[Stage, ...]] = {
    "ConnectFour-v0": (
        Stage(("tactical", "depth2"), 0.75, 2**21, 3e-4),
        Stage(("depth2", "depth2", "tactical"), 0.9, 2**22, 3e-4),
        Stage(("depth2", "random", "tactical", "depth2"), 0.9, 2**20, 1e-4),
    ),
    "Othello-v0": (
        Stage(("positional", "mobility"), 0.75, 2**21, 3e-4),
        Stage(("positional", "positional", "mobility"), 0.9, 2**21, 2e-4),
        Stage(("positional", "random", "mobility", "positional"), 0.9, 2**20, 1e-4),
    ),
}
"""The stages the board baselines were fine-tuned with, from their earlier self-play weights: Othello's shipped one, and
ConnectFour's until AlphaZero replaced it (docs/baselines.md, "Board baselines")."""


def stage_config(config: MAPPOConfig, stage: Stage) -> MAPPOConfig:
    """`config` with the stage's opponents (recorded as their names joined by `+`), share, length and learning rate."""
    return dataclasses.replace(
        config,
        opponent="+".join(stage.opponents),
        opponent_share=stage.opponent_share,
        total_timesteps=stage.total_timesteps,
        learning_rate=stage.learning_rate,
    )


def fine_tune(
    env_spec: EnvSpec,
    env: AnyEnv,
    start: Policy,
    config: MAPPOConfig,
    stages: Sequence[Stage],
    seed: int = 0,
    progress: bool = True,
) -> tuple[Policy, MAPPOConfig, dict[str, list[tuple[int, float]]]]:
    """Run `stages` on `env` (the env of `env_spec`) from `start`'s weights; returns the policy, the last stage's
    config, and each opponent's win-rate curve as (fine-tuning env steps so far, greedy win rate) points."""
    policy = start
    curves: dict[str, list[tuple[int, float]]] = {}
    steps = 0
    for index, stage in enumerate(stages):
        config = stage_config(config, stage)
        pieces = mappo.training(config, env, opponent=training_opponent(env_spec, env, config.opponent))
        state = dataclasses.replace(
            jax.jit(pieces.init)(jax.random.fold_in(jax.random.key(seed), index)), params=policy.params
        )
        run = jax.jit(
            lambda state, pieces=pieces: jax.lax.scan(
                pieces.update, state, None, length=pieces.num_updates // SEGMENTS
            )[0]
        )
        names = sorted(set(stage.opponents))
        probe = jax.jit(
            lambda policy, key, names=names, max_steps=config.eval_max_steps: [
                head_to_head(env, Greedy(policy), opponent_player(env_spec, env, name), key, PROBE_GAMES, max_steps)[
                    "win"
                ]
                for name in names
            ]
        )
        for segment in range(SEGMENTS):
            state = run(state)
            policy = pieces.policy(state)
            steps += config.total_timesteps // SEGMENTS
            wins = probe(policy, jax.random.key(segment))
            for name, win in zip(names, wins):
                curves.setdefault(name, []).append((steps, float(win)))
            if progress:
                print(
                    f"{env_spec.id} stage {index + 1}/{len(stages)} segment {segment + 1}/{SEGMENTS}: greedy wins "
                    + ", ".join(f"{name} {float(win):.0%}" for name, win in zip(names, wins)),
                    flush=True,
                )
    return policy, config, curves


def plot_win_curves(curves: dict[str, list[tuple[int, float]]], env_id: str, path: Path) -> None:
    """`curve.png`: the greedy policy's win rate against each ladder opponent over the fine-tune."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from parallax_zoo.atomic import atomic_write

    figure, axes = plt.subplots(figsize=(6, 4), dpi=100)
    for name, points in curves.items():
        steps, wins = zip(*points)
        axes.plot(np.array(steps), np.array(wins), marker=".", label=f"vs {name}")
    axes.set_xlabel("fine-tuning env steps")
    axes.set_ylabel(f"greedy win rate ({PROBE_GAMES} games, both seats)")
    axes.set_title(env_id)
    axes.legend(loc="lower right")
    figure.tight_layout()
    try:
        atomic_write(path, lambda temporary: figure.savefig(temporary, format="png"))
    finally:
        plt.close(figure)


def fine_tune_baseline(
    env_spec: EnvSpec,
    env: AnyEnv,
    start: str | os.PathLike[str],
    out: str | os.PathLike[str],
    search: SearchSettings | None = None,
    seed: int = 0,
    progress: bool = True,
    force: bool = False,
) -> Path:
    """Fine-tune the policy in folder `start` on `env` (the env of `env_spec`) by the env's recipe (`RECIPES`) and
    write the baseline folder `out`; returns it.

    As `train` does, the files are written in a staging folder and moved in only once complete and read back, so an
    interrupted or failed fine-tune leaves `out` as it was; a non-empty `out` that is not an earlier run of the env
    is refused unless `force`."""
    env_id = env_spec.id
    if env_id not in RECIPES:
        raise ValueError(f"no fine-tuning recipe for {env_id!r}; recipes exist for {sorted(RECIPES)}")
    policy, config = checkpoint.load_network(start, env)
    if not isinstance(config, MAPPOConfig):
        raise ValueError(f"{start}: fine-tuning starts from a MAPPO policy folder, got a {type(config).__name__}")
    folder = Path(out)
    check_output_folder(env_id, folder, force)
    with output_lock(folder):
        staging.recover(folder)
        began = time.perf_counter()
        policy, config, curves = fine_tune(env_spec, env, policy, config, RECIPES[env_id], seed, progress)
        minutes = (time.perf_counter() - began) / 60
        stages = "; ".join(
            f"{stage.total_timesteps:,} steps with {' / '.join(stage.opponents)} "
            f"in {stage.opponent_share:.0%} of the envs "
            f"at learning rate {stage.learning_rate:g}"
            for stage in RECIPES[env_id]
        )
        with staging.staged_beside(folder) as staged:  # the old folder stays whole until the new one is complete
            checkpoint.save(staged, policy, config, search)
            plot_win_curves(curves, env_id, staged / CURVE_FILE)
            write_evaluation(
                env_spec,
                env,
                staged,
                [seed],
                training=(
                    f" Then fine-tuned against the opponent ladder (`parallax-zoo maintain fine-tune`): {stages}, "
                    f"the rest self-play; the fine-tune took {minutes:.1f} min of wall time "
                    f"on {os.cpu_count()} shared CPU cores."
                ),
                shown_as=folder,
            )
            check_staged(env, staged)
            placement(staged, folder)()
    return folder
