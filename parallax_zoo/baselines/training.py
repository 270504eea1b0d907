"""Producing a baseline folder: train one seed or several, save each, plot the curve, evaluate, write the model card.

`train_baseline(env_id)` writes `baselines/<baseline_dirname>/` as docs/baselines.md
lays it out: `config.yaml`, `model.safetensors`, `eval.json`,
`curve.png` and the model card `README.md`. The seeds train vmapped in one
jitted segment function that is called repeatedly on the carried train
state, so a progress bar can show the current return between segments; the
same segments run with or without the bar, so a seed's weights never depend
on it. Each folder is written whole in a staging folder and swapped in (`staging`).
Hyperparameters come from `--config FILE`, else the folder's own
`config.yaml`, else `parallax_zoo/baselines/baseline_configs/<baseline_dirname>.yaml`,
else the default of the id's family (`families.py`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jaxtyping import Array, PRNGKeyArray

from parallax.core import AnyEnv
from parallax_zoo.agents import alphazero, mappo, ppo
from parallax_zoo.agents.alphazero import AlphaZeroConfig
from parallax_zoo.agents.mappo import MAPPOConfig
from parallax_zoo.agents.player import Player
from parallax_zoo.agents.player_factories import training_opponent
from parallax_zoo.agents.players import Greedy, RandomPlayer
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.ppo import PPOConfig, TrainState
from parallax_zoo.agents.search import SearchPlayer, SearchSettings
from parallax_zoo.agents.selfplay import head_to_head
from parallax_zoo.agents.sharding import local_copy
from parallax_zoo.agents.slots import read_slots
from parallax_zoo.atomic import atomic_write, write_text_atomic
from parallax_zoo.baselines import staging
from parallax_zoo.baselines.families import family_config_path
from parallax_zoo.baselines.model_card import model_card
from parallax_zoo.baselines.processes import writes_files
from parallax_zoo.catalogue import registry
from parallax_zoo.catalogue.pins import baseline_dirname
from parallax_zoo.catalogue.player_names import BASELINE, RANDOM
from parallax_zoo.catalogue.registry import EnvSpec
from parallax_zoo.errors import UserError
from parallax_zoo.judging import random_scores
from parallax_zoo.judging.anchors import anchored_rating, held_out_rating
from parallax_zoo.judging.evaluation import evaluate, protocol
from parallax_zoo.judging.ratings import Rating
from parallax_zoo.judging.seed_statistics import SeedStatistics, over_seeds
from parallax_zoo.locking import LockTimeout, exclusive_lock, lock_beside
from parallax_zoo.policies import checkpoint, hub
from parallax_zoo.policies.loading import load_folder

EVAL_FILE = "eval.json"
CURVE_FILE = "curve.png"
CARD_FILE = "README.md"
BASELINE_CONFIGS = Path(__file__).resolve().parent / "baseline_configs"
"""The shipped hyperparameters of every baseline, one `<baseline_dirname>.yaml` per env."""
PROGRESS_SEGMENTS = 20
"""Training is split into at most this many jitted segments; the bar updates after each."""


def default_config_path(env_id: str) -> Path:
    """The shipped default hyperparameters of `env_id`'s baseline (one file per env, checkpoint's config format)."""
    return BASELINE_CONFIGS / f"{baseline_dirname(env_id)}.yaml"


def config_path(env_id: str, config: str | os.PathLike[str] | None = None) -> Path:
    """The config file to train with: `config`, else the shipped baseline's, else the id's own default, else its
    family's; a clear error if `config` is not there."""
    candidates = (
        [Path(config)]
        if config is not None
        else [
            hub.mirror_folder(env_id) / checkpoint.CONFIG_FILE,
            default_config_path(env_id),
            family_config_path(registry.spec(env_id)),
        ]
    )
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        raise ValueError(
            f"no baseline config for {env_id!r}: looked for {', '.join(map(str, candidates))}. "
            "Pass --config FILE (the config.yaml format that checkpoint.save_config writes)."
        )
    return path


def resolve_search(env_id: str, config: str | os.PathLike[str] | PPOConfig | None = None) -> SearchSettings | None:
    """The play-time search settings in the config `resolve_config` reads (None for a `PPOConfig` object or a config
    without)."""
    if isinstance(config, PPOConfig):
        return None
    path = config_path(env_id, config)
    return checkpoint.search_from_bytes(path.read_bytes(), str(path))


def resolve_config(env_id: str, config: str | os.PathLike[str] | PPOConfig | None = None) -> PPOConfig:
    """The config to train with: `config` (a config or a YAML path), else the shipped baseline's, else the default.

    The env id in the result is always `env_id`; a config file naming another env is an error.
    """
    loaded = config if isinstance(config, PPOConfig) else checkpoint.load_config(config_path(env_id, config))
    if loaded.env_id not in ("", env_id):
        raise ValueError(f"the config is for env {loaded.env_id!r}, not {env_id!r}; pass a config for {env_id!r}")
    return dataclasses.replace(loaded, env_id=env_id)


def segment_lengths(num_updates: int, segments: int = PROGRESS_SEGMENTS) -> tuple[int, int]:
    """(updates per segment, number of segments): the largest count <= `segments` that divides `num_updates`."""
    count = max(c for c in range(1, min(segments, num_updates) + 1) if num_updates % c == 0)
    return num_updates // count, count


@dataclass(frozen=True)
class SegmentedTraining:
    """A training run cut into equal jitted segments: `init(keys)`, then `run(state)` `count` times, then
    `policy(state)`."""

    init: Callable[[PRNGKeyArray], TrainState]
    run: Callable[[TrainState, PRNGKeyArray], tuple[TrainState, Array]]
    policy: Callable[[TrainState], Policy]
    count: int
    steps_per_point: int
    """Env steps per seed between two points of the curve `run` returns."""
    curve_label: str


def segmented_training(
    config: PPOConfig, env: AnyEnv, opponent: Player | None = None, mesh: Mesh | None = None
) -> SegmentedTraining:
    """The pieces `ppo.make_train` / `mappo.make_train` scan (`ppo.training`, `mappo.training`; self-play's
    snapshot matches left out: they never change the train state), vmapped over a leading seed axis and cut
    into segments. `opponent` is the player a `MAPPOConfig`'s `opponent` names; with a `mesh`, each seed's env
    batch is split across its devices (docs/scaling.md)."""
    if isinstance(config, AlphaZeroConfig):
        pieces = alphazero.training(config, env, mesh=mesh, opponent=opponent)
    elif isinstance(config, MAPPOConfig):
        pieces = mappo.training(config, env, mesh=mesh, opponent=opponent)
    elif opponent is not None:
        raise ValueError("segmented_training: only a MAPPOConfig seats an opponent")
    else:
        pieces = ppo.training(config, env, mesh=mesh)
    length, count = segment_lengths(pieces.num_updates)
    zero_sum = isinstance(config, MAPPOConfig) and (config.self_play or opponent is not None)
    matches = (config.eval_episodes, config.eval_max_steps) if isinstance(config, MAPPOConfig) else (0, 0)
    rival = RandomPlayer(pieces.model) if opponent is None else opponent
    rival_name = opponent_label(config.opponent if isinstance(config, MAPPOConfig) and opponent is not None else RANDOM)

    def run(state: TrainState, key: PRNGKeyArray) -> tuple[TrainState, Array]:
        """`length` updates; the curve's points: each update's training return, or for zero-sum games
        (whose training return is 0 by symmetry) the greedy policy's return against the training
        opponent (else the random player) at the end."""
        state, metrics = jax.lax.scan(pieces.update, state, None, length=length)
        if not zero_sum:
            return state, metrics["episode_return"]
        match = head_to_head(env, Greedy(pieces.policy(state)), rival, key, *matches)
        return state, match["return"][None]

    init_one = jax.jit(pieces.init)

    def init_seeds(keys: PRNGKeyArray) -> TrainState:
        # One seed at a time: XLA:CPU's batched QR (the orthogonal initialiser under vmap) can deadlock.
        states = [init_one(key) for key in keys]
        return jax.tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *states)

    return SegmentedTraining(
        init=init_seeds,
        run=jax.jit(jax.vmap(run, in_axes=(0, None))),
        policy=pieces.policy,
        count=count,
        steps_per_point=config.num_envs * config.num_steps * (length if zero_sum else 1),
        curve_label=f"return vs {rival_name} (greedy)" if zero_sum else "training episode return",
    )


def train_seeds(
    config: PPOConfig,
    env: AnyEnv,
    seeds: list[int],
    progress: bool = True,
    opponent: Player | None = None,
    mesh: Mesh | None = None,
    start: Policy | None = None,
) -> tuple[Policy, np.ndarray, SegmentedTraining]:
    """Train every seed at once; returns the policies (leading seed axis), the curve `[seeds, points]` and the run,
    as arrays of this process (`sharding.local_copy`).

    `opponent` is the player a `MAPPOConfig`'s `opponent` names (`player_factories.training_opponent`); a `mesh`
    splits each seed's envs across its devices, those of every process after `processes.join_processes`. Every
    seed starts from `start`'s weights (and observation normaliser) where given (`load_start`), else from its own
    initialisation."""
    from tqdm import tqdm

    training = segmented_training(config, env, opponent, mesh)
    state = training.init(jnp.stack([jax.random.key(seed) for seed in seeds]))
    if start is not None:
        state = started_from(state, start, len(seeds))
    steps_per_segment = config.total_timesteps // training.count // (config.num_envs * config.num_steps)
    steps_per_segment *= config.num_envs * config.num_steps * len(seeds)
    returns = []
    bar_format = (
        "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} env steps [{elapsed}<{remaining}, {rate_fmt}{postfix}]"
    )
    with tqdm(
        total=steps_per_segment * training.count,
        unit=" env steps",
        unit_scale=True,
        disable=not progress,
        desc=f"{config.env_id} x{len(seeds)} seed{'s' if len(seeds) > 1 else ''}",
        bar_format=bar_format,
    ) as bar:
        with staging.interrupts_noticed() as stop_if_interrupted:
            for segment in range(training.count):
                state, points = training.run(state, jax.random.key(segment))
                returns.append(np.asarray(local_copy(points)))
                bar.set_postfix(mean_return=f"{float(returns[-1][:, -1].mean()):.3f}")
                bar.update(steps_per_segment)
                stop_if_interrupted()  # a Ctrl-C that a library swallowed still stops the run here
    return local_copy(training.policy(state)), np.concatenate(returns, axis=1), training


def load_start(folder: str | os.PathLike[str], config: PPOConfig, env: AnyEnv) -> tuple[Policy, str]:
    """The weights in policy folder `folder`, loaded into the network `config` builds for `env` (a different network
    is refused, naming each tensor that does not fit), and the sentence the card records about them: a run can go on
    from an earlier one (`train --init`, docs/baselines.md "AlphaZero")."""
    model = Path(folder) / checkpoint.MODEL_FILE
    if not model.is_file():
        raise UserError(f"--init {folder}: no {checkpoint.MODEL_FILE} there; give a policy folder that `train` wrote")
    data = model.read_bytes()
    policy = checkpoint.policy_from_bytes(data, checkpoint.policy_shapes(config, env), str(model))
    digest = hashlib.sha256(data).hexdigest()
    return policy, f" It started from the weights of {folder} (model.safetensors sha256 {digest})."


def started_from(state: TrainState, start: Policy, seeds: int) -> TrainState:
    """`state` (leading seed axis) with every seed's params and observation normaliser replaced by `start`'s."""
    stacked = jax.tree_util.tree_map(lambda leaf: jnp.stack([leaf] * seeds), start)
    return dataclasses.replace(state, params=stacked.params, normalizer=stacked.normalizer)


def plot_curve(returns: np.ndarray, steps_per_point: int, label: str, env_id: str, path: Path) -> None:
    """`curve.png`: the mean return over seeds against env steps, with the min-max band shaded (one seed: its line)."""
    import matplotlib.pyplot as plt

    figure = curve_figure(returns, steps_per_point, label, env_id)
    try:
        atomic_write(path, lambda temporary: figure.savefig(temporary, format="png"))
    finally:
        plt.close(figure)


def curve_figure(returns: np.ndarray, steps_per_point: int, label: str, env_id: str) -> Any:
    """The matplotlib figure `plot_curve` saves: the seeds' mean and min-max band, or one seed's line alone."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = steps_per_point * np.arange(1, returns.shape[1] + 1)
    figure, axes = plt.subplots(figsize=(6, 4), dpi=100)
    if returns.shape[0] == 1:
        axes.plot(steps, returns[0], label="1 seed")
    else:
        axes.fill_between(steps, returns.min(axis=0), returns.max(axis=0), alpha=0.3, label="min-max over seeds")
        axes.plot(steps, returns.mean(axis=0), label=f"mean of {returns.shape[0]} seeds")
    axes.set_xlabel("env steps per seed")
    axes.set_ylabel(label)
    axes.set_title(env_id)
    axes.legend(loc="lower right")
    figure.tight_layout()
    return figure


def opponent_label(name: str) -> str:
    """An evaluation or training opponent's name in prose, for curve labels and model cards."""
    return {BASELINE: "itself", RANDOM: "the random player"}.get(name, f"the scripted {name!r} opponent")


def card_description(
    config: PPOConfig, seeds: list[int], result: dict[str, Any], policy_seed: int | None = None
) -> str:
    """The model card's summary of how the weights were trained (seed `policy_seed`'s, default the first) and, for
    games, how they play."""
    algorithm = "MAPPO" if isinstance(config, MAPPOConfig) else "PPO"
    if isinstance(config, AlphaZeroConfig):
        algorithm = f"AlphaZero (self-play with {config.simulations}-simulation Gumbel MuZero search at every move)"
    trained = f"seeds {seeds} vmapped; these are seed {seeds[0] if policy_seed is None else policy_seed}'s weights"
    text = (
        f"{algorithm} trained {config.total_timesteps:,} env steps per seed on {config.num_envs} envs x "
        f"{config.num_steps} steps, {trained}."
    )
    opponents = [opponent_label(name) for name in result.get("opponents", {})]
    if opponents:
        text += f" Evaluated against {', '.join(opponents)}, each from both seats (the table below)."
    return text


MOVE_COST_GAMES = 64
"""The batch of games over which a searching agent's cost per move is measured for its model card."""


def milliseconds_per_move(env: AnyEnv, agent: Player, games: int = MOVE_COST_GAMES, repeats: int = 5) -> float:
    """The median wall time in milliseconds of one jitted move of `agent` for a batch of `games` opening positions
    of `env` (compile time apart)."""
    slots = read_slots(jax.vmap(lambda key: env.reset(key=key))(jax.random.split(jax.random.key(0), games)))
    move = jax.jit(lambda slots, key: agent.act_slots(slots, key)[0])
    jax.block_until_ready(move(slots, jax.random.key(0)))
    times = []
    for repeat in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(move(slots, jax.random.key(repeat)))
        times.append(time.perf_counter() - start)
    return 1000.0 * float(np.median(times))


def root_tactics(settings: SearchSettings) -> str:
    """The card's words for the root's tactics check (`SearchSettings.tactics_depth`)."""
    if settings.tactics_depth <= 2:
        return (
            "at the root it takes a winning move when there is one, and otherwise never a move that lets the "
            "opponent win at once if another move prevents it"
        )
    return (
        f"at the root it tries every line {settings.tactics_depth} plies deep, whatever the network says, and takes "
        f"the quickest forced win when there is one, and otherwise never a move that loses by force within "
        f"{settings.tactics_depth} plies if another move prevents it"
    )


def play_description(env: AnyEnv, agent: Player) -> str:
    """The model card's sentence on how the agent plays: greedy on its network, or the search and its cost per move."""
    if not isinstance(agent, SearchPlayer):
        return ""
    settings = agent.settings
    cost = milliseconds_per_move(env, agent)
    return (
        f" It plays with Gumbel MuZero search (`mctx`) over the game's own rules: {settings.simulations} simulations "
        f"per move, the network's policy as prior and its critic as leaf value"
        f"{', and a one-move win check at every node' if settings.win_check else ''}; {root_tactics(settings)} "
        "(docs/baselines.md); one move from the opening costs "
        f"{cost:.1f} ms for a batch of {MOVE_COST_GAMES} games ({cost / MOVE_COST_GAMES:.2f} ms per game) on "
        f"{jax.devices()[0].platform.upper()} with {os.cpu_count()} cores. `load_baseline` returns the whole agent "
        "(a `SearchPlayer`); its `.policy` is the raw network, which plays greedily without search."
    )


RUN_FILES = (checkpoint.CONFIG_FILE, checkpoint.MODEL_FILE, EVAL_FILE, CURVE_FILE, CARD_FILE)
"""The five files of a run or baseline folder (docs/baselines.md), all `train` writes into one."""


class FolderNotARunError(UserError):
    """`train`'s output folder holds something other than an earlier run of the same env."""


def seed_folders(env_id: str, out: Path, seed_list: list[int]) -> dict[int, Path]:
    """Where each trained seed is saved: the first in `out`; each other seed n in `runs/<Id>/seed<n>/` when `out` is
    the baseline mirror's folder, else in the sibling `seed<n>/` (`out` named `seed<first>`) or `<out>-seed<n>/`."""
    first, *others = seed_list
    if out.resolve() == hub.mirror_folder(env_id).resolve():
        beside = {n: Path("runs") / baseline_dirname(env_id) / f"seed{n}" for n in others}
    elif out.name == f"seed{first}":
        beside = {n: out.parent / f"seed{n}" for n in others}
    else:
        beside = {n: out.parent / f"{out.name}-seed{n}" for n in others}
    return {first: out, **beside}


def run_env_id(folder: Path) -> str | None:
    """The env id of an earlier run in `folder` (only run files, a config naming its env), else None."""
    entries = [path for path in folder.iterdir() if not path.name.startswith(".")]
    if not all(path.is_file() and path.name in RUN_FILES for path in entries):
        return None
    try:
        return checkpoint.load_config(folder / checkpoint.CONFIG_FILE).env_id
    except (OSError, ValueError):
        return None


def check_output_folder(env_id: str, folder: Path, force: bool = False) -> None:
    """Refuse, unless `force`, a non-empty `folder` that is not an earlier run of `env_id`."""
    if force or not folder.exists():
        return
    if not folder.is_dir():
        raise FolderNotARunError(f"the output folder {folder} is a file; give a folder path with --out")
    if not any(not path.name.startswith(".") for path in folder.iterdir()) or run_env_id(folder) == env_id:
        return
    raise FolderNotARunError(
        f"the output folder {folder} is not empty and holds no earlier {env_id} run (only {', '.join(RUN_FILES)} "
        f"with a config for {env_id}); train into another folder with --out, or add --force to replace its run files"
    )


def is_pinned_folder(env_id: str, registry_path: str | os.PathLike[str] | None = None) -> Callable[[Path], bool]:
    """Whether a folder's files are exactly what registry.yaml (read now) pins for `env_id`."""
    from parallax_zoo.baselines.registry_update import folder_pin

    path = Path(registry_path) if registry_path is not None else registry.PACKAGED_REGISTRY

    def matches(folder: Path) -> bool:
        pinned = registry.Registry.from_yaml(path.read_text(encoding="utf-8"), source=str(path)).spec(env_id).baseline
        try:
            return pinned is not None and dict(folder_pin(env_id, folder)[0].files) == dict(pinned.files)
        except (OSError, ValueError):
            return False

    return matches


def train_baseline(
    env_spec: EnvSpec,
    env: AnyEnv,
    seed: int = 0,
    config: str | os.PathLike[str] | PPOConfig | None = None,
    out_dir: str | os.PathLike[str] | None = None,
    seeds: int = 1,
    progress: bool = True,
    pin: bool = False,
    registry_path: str | os.PathLike[str] | None = None,
    force: bool = False,
    mesh: Mesh | None = None,
    random_scores_path: str | os.PathLike[str] | None = None,
    allow_random_level: bool = False,
    search: SearchSettings | None = None,
    init: str | os.PathLike[str] | None = None,
) -> Path:
    """Train `seeds` seeds (`seed`, `seed + 1`, ...) on `env` (the env of `env_spec`), each saved in its folder
    (`seed_folders`); returns seed `seed`'s.

    `out_dir` defaults to `hub.mirror_folder(env_id)`, the official baseline's
    folder; the model card of any other folder names it as a user's run and
    shows how to load that folder. The same arguments always produce the same weights.
    Each folder is written and checked in a staging folder and swapped in whole
    (`staging`); with `pin`, seed `seed`'s folder is pinned in registry.yaml in the
    same step, so an interrupted or failed run leaves the old folder and its pin as they were.
    Pinning an id that has no random player's score under its protocol measures that score and writes it to
    `random_scores_path` (default the shipped `random_scores.json`) with the pin, so every pinned id has one.
    A pin whose seed does not score above the random player's 95% interval is refused and nothing is written
    (`check_beats_random`), unless `allow_random_level` (an env where random play is already optimal); so is one
    whose evaluation saw an episode that had not ended (`check_episodes_end`).
    A non-empty folder that is not an earlier run of `env_id` is refused unless `force` (`check_output_folder`).
    `search` is the play-time search the weights are saved with (config.yaml's `search:`); default the `search:`
    section of the config file `config` names (none where `config` is a config object: pass it then).
    With a `mesh` over the devices of several processes (`processes.join_processes`), every process trains and
    process 0 alone checks, locks and writes the folders. `init` names a policy folder whose weights every seed
    starts from (`load_start`); the card records the folder and the weights' sha256.
    """
    if seeds < 1:
        raise ValueError(f"--seeds must be >= 1 (the number of seeds trained, each saved), got {seeds}")
    env_id = env_spec.id
    resolved = resolve_config(env_id, config)
    folder = Path(out_dir) if out_dir is not None else hub.mirror_folder(env_id)
    opponent = None
    if isinstance(resolved, MAPPOConfig) and resolved.opponent:
        opponent = training_opponent(env_spec, env, resolved.opponent)
    search = search if search is not None else resolve_search(env_id, config)
    initial, started = load_start(init, resolved, env) if init is not None else (None, "")
    seed_list = [seed + i for i in range(seeds)]
    folders = seed_folders(env_id, folder, seed_list)
    writer = writes_files()
    for target in folders.values() if writer else ():
        check_output_folder(env_id, target, force)
    mirror = hub.mirror_folder(env_id).resolve()
    with ExitStack() as locks:
        for target in folders.values() if writer else ():
            locks.enter_context(output_lock(target))
            staging.recover(target, is_pinned_folder(env_id, registry_path) if target.resolve() == mirror else None)
        start = time.perf_counter()
        policies, returns, training = train_seeds(
            resolved, env, seed_list, progress and writer, opponent, mesh, initial
        )
        if not writer:
            return folder
        minutes = (time.perf_counter() - start) / 60
        note = f" Training took {minutes:.1f} min of wall time on {os.cpu_count()} CPU cores."
        if jax.process_count() > 1:
            note = note[:-1] + f" in each of {jax.process_count()} processes, {len(jax.devices())} devices in all."
        note += started
        staged: dict[int, Path] = {}
        for index, (number, target) in enumerate(folders.items()):
            staged[number] = locks.enter_context(staging.staged_beside(target))  # removed before the locks go
            policy = jax.tree_util.tree_map(lambda leaf, i=index: leaf[i], policies)
            checkpoint.save(staged[number], policy, resolved, search)
            plot_curve(returns, training.steps_per_point, training.curve_label, env_id, staged[number] / CURVE_FILE)
            write_evaluation(
                env_spec,
                env,
                staged[number],
                seed_list,
                official=target.resolve() == mirror,
                training=note,
                policy_seed=number,
                shown_as=target,
            )
            check_staged(env, staged[number])
        if len(staged) > 1:  # each seed's score known: the statistics over seeds go into every folder
            statistics = statistics_of_runs(staged)
            for number, target in folders.items():
                add_seed_statistics(env_id, staged[number], statistics, target.resolve() == mirror, target)
        scores_file = Path(random_scores_path or random_scores.RANDOM_SCORES_FILE)
        random_record = None  # measured here, so written beside the pin
        if pin:
            pinned_record = json.loads((staged[seed] / EVAL_FILE).read_text(encoding="utf-8"))
            check_episodes_end(env_spec, seed, pinned_record)
            random_reference = random_scores.stored_random_score(env_spec, scores_file, pinning=True)
            if random_reference is None:  # a zero-sum game's protocol gains the baseline: the random player meets it
                pinned_player = load_folder(staged[seed], env)
                random_record = random_reference = random_scores.measure_random_score(env_spec, env, pinned_player)
            if not allow_random_level:
                check_beats_random(env_id, seed, pinned_record, random_reference)
        with staging.deferred_interrupts():
            for number, target in reversed(folders.items()):
                place = placement(staged[number], target)
                if pin and number == seed:
                    from parallax_zoo.baselines.registry_update import pin_baseline

                    pin_baseline(env_id, staged[number], registry_path, swap=place)
                else:
                    place()
            if random_record is not None:
                random_scores.write_random_scores([(env_id, random_record)], scores_file)
                if progress:
                    print(f"{env_id}: the random player's score {random_record['mean']:.3f} written to {scores_file}")
    return folder


class UnfinishedEpisodesError(UserError):
    """A pin refused: some of the protocol's episodes had not ended when it stopped playing them."""


def check_episodes_end(env_spec: EnvSpec, seed: int, record: dict[str, Any]) -> None:
    """Refuse to pin a seed whose evaluation (its `eval.json` `record`) saw episodes that had not ended by the
    protocol's last step: such an episode scores 0 (`rollout.first_episode_returns`), so the score would understate
    the policy."""
    finished = float(record.get("finished", 1.0))
    if finished < 1.0:
        raise UnfinishedEpisodesError(
            f"{env_spec.id}: not pinned, nothing written: {1 - finished:.0%} of seed {seed}'s protocol episodes had "
            f"not ended after {protocol(env_spec).max_steps} steps, and such an episode scores 0. Give the id a "
            f"max_steps (its time limit) in registry.yaml so that every episode ends, then train again"
        )


class NoBetterThanRandomError(UserError):
    """A pin refused: the trained seed does not beat the random player under the id's protocol."""


def check_beats_random(env_id: str, seed: int, record: dict[str, Any], random_record: dict[str, Any]) -> None:
    """Refuse to pin a seed whose protocol score (its `eval.json` `record`) is not above the random player's 95%
    interval (docs/baselines.md, "Training"): such weights carry no skill, and a normalised score against them would
    mean nothing."""
    score = float(record["mean"])
    low, high = (float(bound) for bound in random_record["ci95"])
    if score <= high:
        raise NoBetterThanRandomError(
            f"{env_id}: not pinned, nothing written: seed {seed} scores {score:.3f}, not above the random player's "
            f"95% interval [{low:.3f}, {high:.3f}] under the same protocol. Change the config (longer training, "
            f"other settings) and train again; pass --allow-random-level only where random play is already optimal"
        )


def placement(staged: Path, target: Path) -> Callable[[], None]:
    """How a staged folder goes in: whole by `staging.swap_in`, or file by file where `target` holds more than a run."""
    foreign = [path for path in target.iterdir() if not path.name.startswith(".")] if target.is_dir() else []
    if any(not path.is_file() or path.name not in RUN_FILES for path in foreign):
        return lambda: staging.move_files_in(staged, target)
    return lambda: staging.swap_in(staged, target)


def check_staged(env: AnyEnv, folder: Path) -> None:
    """A staged folder holds exactly the run's files and its config, weights (fitting `env`) and eval.json read back."""
    names = sorted(path.name for path in folder.iterdir())
    if names != sorted(RUN_FILES):
        raise RuntimeError(f"the staged run {folder} holds {names}, not {sorted(RUN_FILES)}")
    load_folder(folder, env)
    json.loads((folder / EVAL_FILE).read_text(encoding="utf-8"))


class FolderInUseError(UserError):
    """Another training run holds the lock of the output folder."""


@contextmanager
def output_lock(folder: Path) -> Iterator[None]:
    """Hold `folder`'s lock for one training run; a folder that another run holds is refused at once."""
    path = lock_beside(folder)
    try:
        with exclusive_lock(path, timeout=0):
            yield
    except LockTimeout:
        raise FolderInUseError(
            f"the output folder {folder} is in use by another `parallax-zoo train` (it holds {path}); wait for that "
            "run to finish, or train into another folder with --out"
        ) from None


def card_notes(record: dict[str, Any]) -> str:
    """The sentences an `eval.json` record adds to its card's summary: how the agent plays (a search and its
    measured cost per move) and how it was trained; the card is what the card writer makes of `eval.json`."""
    return "".join(str(record.get(note, "")) for note in ("play_note", "training_note", "seeds_note"))


def write_evaluation(
    env_spec: EnvSpec,
    env: AnyEnv,
    folder: Path,
    training_seeds: list[int],
    official: bool = True,
    training: str | None = None,
    policy_seed: int | None = None,
    shown_as: Path | None = None,
    held_out: bool = False,
) -> None:
    """Evaluate the agent saved in `folder` on `env` (the env of `env_spec`) and write its `eval.json` and model card.

    The agent plays whole: a folder whose config has `search` settings plays
    with its search, and the card states its cost per move. `training` is a
    sentence or two for the card on how the weights were trained and how long
    it took, kept in `eval.json` as `training_note` (the search's sentence is
    its `play_note`); None keeps the note the folder's `eval.json` has (a
    re-measurement retrains nothing). `policy_seed` is the seed whose weights these are
    (default the first of `training_seeds`); `shown_as` is the folder the card names (default
    `folder`; a staged folder names the folder it will replace).

    In zero-sum games the protocol's "baseline" opponent is these weights
    themselves (the folder is the baseline being made), so the record shows
    how the policy fares against itself; `eval.json` and the card also give
    its Elo rating on the anchored scale (`anchors.anchored_rating`). `held_out` also plays the game's held-out
    players (`evaluate`); without it a record of them the folder's `eval.json` has is kept, as the weights
    it was measured on are these (a re-measurement retrains nothing).
    """
    saved = load_folder(folder, env)
    evaluated = evaluate(env_spec, env, saved, baseline=saved, held_out=held_out)
    rating = anchored_rating(evaluated)
    previous = json.loads((folder / EVAL_FILE).read_text(encoding="utf-8")) if (folder / EVAL_FILE).is_file() else {}
    if training is None:
        training = str(previous.get("training_note", ""))
    policy_seed = training_seeds[0] if policy_seed is None else policy_seed
    record = {**evaluated.to_dict(), "training_seeds": training_seeds, "policy_seed": policy_seed}
    if not held_out and previous.get("held_out"):
        record["held_out"] = previous["held_out"]
    held_out_elo = held_out_rating(dataclasses.replace(evaluated, held_out=record.get("held_out") or {}))
    for name, value in (("elo", rating), ("held_out_elo", held_out_elo)):
        if value is not None:
            record[name] = value.to_json()
    notes = {"play_note": play_description(env, saved), "training_note": training}
    record |= {key: note for key, note in notes.items() if note}
    write_record(env_spec.id, folder, record, official, shown_as)


def statistics_of_runs(runs: dict[int, Path]) -> SeedStatistics:
    """The statistics over seeds of evaluated runs (seed -> folder), from each folder's `eval.json` mean."""
    return over_seeds(
        {n: json.loads((path / EVAL_FILE).read_text(encoding="utf-8"))["mean"] for n, path in runs.items()}
    )


def add_seed_statistics(
    env_id: str, folder: Path, statistics: SeedStatistics, official: bool = True, shown_as: Path | None = None
) -> None:
    """Add the statistics over every training seed to an evaluated folder's `eval.json` (`over_seeds`) and card."""
    record = json.loads((folder / EVAL_FILE).read_text(encoding="utf-8"))
    record |= {"over_seeds": statistics.to_dict(), "seeds_note": statistics.sentence()}
    write_record(env_id, folder, record, official, shown_as)


def in_order(records: dict[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """`records` with the keys `names` gives first, in that order, then the rest sorted."""
    first = [name for name in names if name in records]
    return {name: records[name] for name in [*first, *sorted(set(records) - set(first))]}


def write_record(
    env_id: str, folder: Path, record: dict[str, Any], official: bool = True, shown_as: Path | None = None
) -> None:
    """Write `record` as the folder's `eval.json` and the model card made from it (`write_evaluation`); the card
    lists the opponents in the protocol's order and the held-out players in registry.yaml's, as `eval.json` (its
    keys sorted) does not keep it."""
    write_text_atomic(folder / EVAL_FILE, json.dumps(record, indent=2, sort_keys=True) + "\n")
    record = {
        **record,
        "opponents": in_order(record.get("opponents") or {}, record.get("protocol", {}).get("opponents", [])),
    }
    if record.get("held_out"):
        record["held_out"] = in_order(record["held_out"], registry.spec(env_id).held_out)
    config = checkpoint.load_config(folder / checkpoint.CONFIG_FILE)
    rating, held_out_elo = (
        None if elo is None else Rating.from_json(elo) for elo in (record.get("elo"), record.get("held_out_elo"))
    )
    card = model_card(
        env_id,
        checkpoint.config_to_dict(config)["algorithm"],
        float(record["mean"]),
        float(record["std"]),
        int(record["episodes"]),
        seed=record["policy_seed"],
        description=card_description(config, record["training_seeds"], record, record["policy_seed"])
        + card_notes(record),
        folder=None if official else (shown_as or folder),
        opponents=record.get("opponents") or {},
        rating=rating,
        held_out=record.get("held_out") or {},
        held_out_rating=held_out_elo,
    )
    write_text_atomic(folder / CARD_FILE, card)
