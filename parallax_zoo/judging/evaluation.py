"""The fixed evaluation protocol, its results, and the leaderboard built on them.

Every env id gets one protocol (docs/evaluation.md): a fixed episode count,
episode seeds split from a root key derived from the id, greedy actions (sampled
ones for ids tagged `sampled-actions`, whose suite scores its policies so), and
for zero-sum games fixed opponents (the scripted opponents registry.yaml names,
such as the board games' ladder, the uniformly random player, and the baseline
where one is pinned) met from every seat equally often. Results carry the mean,
std and 95% confidence interval of the episode scores (inside the scores'
bounds: `judging.intervals`), the record against each opponent overall and per
seat, and serialize to JSON with everything needed to compare them later. On request
a zero-sum game also meets its held-out players, reported apart (`EvalResult.held_out`).
"""

from __future__ import annotations

import functools
import json
import math
import zlib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh

from parallax.core import AnyEnv
from parallax.version import package_versions
from parallax_zoo.agents.player import Player
from parallax_zoo.agents.player_factories import as_player, held_out_player, opponent_player
from parallax_zoo.agents.policy import Policy
from parallax_zoo.atomic import write_text_atomic
from parallax_zoo.catalogue import registry
from parallax_zoo.catalogue.player_names import BASELINE, RANDOM
from parallax_zoo.catalogue.registry import EnvSpec
from parallax_zoo.errors import UserError
from parallax_zoo.judging import programs, progress
from parallax_zoo.judging.intervals import mean_interval

PROTOCOL_VERSION = 2
"""The evaluation protocol's version. 2: zero-sum games meet the opponent ladder, 256 games per opponent
(128 from each seat); results of another version are refused by the leaderboard (docs/evaluation.md)."""
EPISODES = 128
"""Episodes of a protocol that is not a zero-sum game's."""
GAMES_PER_OPPONENT = 256
"""A zero-sum game's episodes against each opponent, split equally between the seats."""
SAMPLED_ACTIONS = "sampled-actions"
"""The tag of ids whose protocol samples the policy's actions instead of taking the likeliest: those whose suite's
published scores are of sampled play (Craftax, where a greedy policy stalls; docs/evaluation.md)."""
ZERO_SUM_BOUNDS = (-1.0, 1.0)
"""A zero-sum game's score: -1 a loss, +1 a win."""
HELD_OUT_STREAM = 1 << 20
"""Folded into the protocol's key for the held-out games: their seeds share nothing with the protocol opponents'."""


@dataclass(frozen=True)
class EvalProtocol:
    """How an env id is evaluated: fixed for the id, so results are comparable across policies."""

    env_id: str
    episodes: int
    root_seed: int
    max_steps: int
    greedy: bool = True
    zero_sum: bool = False
    opponents: tuple[str, ...] = ()
    version: int = PROTOCOL_VERSION


def protocol(env_spec: EnvSpec, pinning: bool = False) -> EvalProtocol:
    """The protocol of an env, from its spec: `EPISODES` episodes, or a zero-sum game's `GAMES_PER_OPPONENT`
    against each opponent, both seats equally.

    A zero-sum game meets its registry.yaml `opponents` first, then the random player, then the pinned baseline
    (`pinning`: also where none is pinned yet, as the protocol will be once the baseline being made is pinned).
    A policy plays its likeliest actions, or samples them where the id is tagged `SAMPLED_ACTIONS`.
    """
    env_id = env_spec.id
    zero_sum = "zero-sum" in env_spec.tags
    opponents: tuple[str, ...] = ()
    if zero_sum:
        with_baseline = pinning or env_spec.baseline is not None
        opponents = (*env_spec.opponents, RANDOM) + ((BASELINE,) if with_baseline else ())
    return EvalProtocol(
        env_id=env_id,
        episodes=GAMES_PER_OPPONENT if zero_sum else EPISODES,
        root_seed=zlib.crc32(env_id.encode()) & 0x7FFFFFFF,
        max_steps=env_spec.max_steps or 1000,
        greedy=SAMPLED_ACTIONS not in env_spec.tags,
        zero_sum=zero_sum,
        opponents=opponents,
    )


@dataclass(frozen=True)
class EvalResult:
    """Scores of one policy under one env's protocol.

    `scores` holds one number per episode: the return (single-agent), the mean
    of the slots' returns (cooperative multi-agent), or the policy's side's
    return against the first opponent (zero-sum: +1 win, 0 draw, -1 loss).
    `opponents` gives, against each opponent, the games played and the win/draw/loss rates
    and mean return, overall and from each seat (`games_side_0`, `win_side_0`, ...: the side
    the policy held, e.g. 0 moves first). `held_out` holds the same records against the game's held-out
    players (registry.yaml `held_out:`), where the evaluation asked for them; they never enter `scores` or the mean.
    """

    env_id: str
    policy: str
    protocol: EvalProtocol
    scores: tuple[float, ...]
    per_agent: tuple[float, ...] = ()
    opponents: dict[str, dict[str, float]] = field(default_factory=dict)
    held_out: dict[str, dict[str, float]] = field(default_factory=dict)
    finished: float = 1.0
    versions: dict[str, str] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    """Where the policy's files came from: {"repo", "commit", "files": {filename: sha256}} for Hub policies."""

    @property
    def finite(self) -> bool:
        """Whether every score is a finite number (a diverged policy's NaN is not a score)."""
        return bool(np.isfinite(np.asarray(self.scores, dtype=float)).all()) and self.episodes > 0

    @property
    def episodes(self) -> int:
        return len(self.scores)

    @property
    def mean(self) -> float:
        """The mean score; finite whenever every score is (huge scores are scaled down first, so it cannot overflow)."""
        with np.errstate(invalid="ignore", over="ignore"):
            mean = float(np.mean(self.scores))
            if not math.isfinite(mean) and self.finite:
                mean = float(np.sum(np.asarray(self.scores, dtype=float) / self.episodes))
        return mean

    @property
    def std(self) -> float:
        """The scores' standard deviation; like `mean`, finite whenever every score is."""
        with np.errstate(invalid="ignore", over="ignore"):
            std = float(np.std(self.scores))
            if not math.isfinite(std) and self.finite:
                scale = float(np.max(np.abs(self.scores)))
                std = scale * float(np.std(np.asarray(self.scores, dtype=float) / scale))
        return std

    @property
    def score_bounds(self) -> tuple[float, float] | None:
        """The least and most a score can be, where the protocol knows them: a zero-sum game's loss and win.

        A zero-sum game scored in chips or points (Kuhn and Leduc poker, backgammon's gammons) has scores past a
        win's 1: no bound is known for it, and its interval is the bootstrap's (the Wilson interval of a rate
        past 1 is undefined)."""
        if not self.protocol.zero_sum:
            return None
        low, high = ZERO_SUM_BOUNDS
        return ZERO_SUM_BOUNDS if all(low <= score <= high for score in self.scores) else None

    @functools.cached_property
    def ci95(self) -> tuple[float, float]:
        """The 95% confidence interval of the mean, inside what a score can be (`judging.intervals`): Wilson for a
        zero-sum game's scores, a percentile bootstrap otherwise."""
        return mean_interval(self.scores, self.score_bounds)

    @property
    def ci95_method(self) -> str:
        return "wilson" if self.score_bounds is not None else "bootstrap"

    @property
    def all_equal(self) -> bool:
        """Every episode scored the same: the spread of this policy's scores is nil (a deterministic env, say)."""
        return self.episodes > 0 and self.finite and len(set(self.scores)) == 1

    def summary(self) -> str:
        """The mean, its spread and its interval in words, saying so when every episode scored the same."""
        low, high = self.ci95
        unit = "games" if self.protocol.zero_sum else "episodes"
        interval = f"95% CI [{low:.3f}, {high:.3f}]"
        if self.all_equal:
            same = f"every one of the {self.episodes} {unit} scored {self.mean:.3f}"
            return f"{self.mean:.3f} ({same}; {interval})" if self.protocol.zero_sum else f"{self.mean:.3f} ({same})"
        return f"{self.mean:.3f} +/- {self.std:.3f} over {self.episodes} {unit} ({interval})"

    @property
    def env_version(self) -> int | None:
        """The `N` of the id's `-vN`, if it has one."""
        head, _, version = self.env_id.rpartition("-v")
        return int(version) if head and version.isdigit() else None

    def __repr__(self) -> str:
        """Mean, 95% CI, episodes and the record against each opponent; the scores themselves stay in `scores`."""
        low, high = self.ci95
        text = (
            f"EvalResult({self.env_id}, {self.policy}: mean {self.mean:.3f}, 95% CI [{low:.3f}, {high:.3f}], "
            f"{self.episodes} episodes" + (", all scored the same" if self.all_equal else "")
        )
        for label, records in (("vs", self.opponents), ("held-out", self.held_out)):
            for opponent, record in records.items():
                text += (
                    f"; {label} {opponent}: win {record['win']:.1%} draw {record['draw']:.1%} loss {record['loss']:.1%}"
                )
        return text + ")"

    def to_json(self) -> str:
        """The result as strict JSON text (what `save` writes; a non-finite number is null)."""
        return json.dumps(self.to_dict(), indent=2, allow_nan=False)

    def to_dict(self) -> dict[str, Any]:
        """Everything about the result as plain, strict JSON data: a non-finite number is null, and `finite` false."""
        data = {
            "env_id": self.env_id,
            "env_version": self.env_version,
            "policy": self.policy,
            "protocol": {**asdict(self.protocol), "opponents": list(self.protocol.opponents)},
            "episodes": self.episodes,
            "finite": self.finite,
            "mean": _finite_or_none(self.mean),
            "std": _finite_or_none(self.std),
            "ci95": [_finite_or_none(bound) for bound in self.ci95],
            "ci95_method": self.ci95_method,
            "all_equal": self.all_equal,
            "finished": _finite_or_none(self.finished),
            "per_agent": [_finite_or_none(x) for x in self.per_agent],
            "opponents": _records_to_json(self.opponents),
            "scores": [_finite_or_none(x) for x in self.scores],
            "versions": self.versions,
        }
        if self.held_out:
            data["held_out"] = _records_to_json(self.held_out)
        return data | ({"provenance": self.provenance} if self.provenance else {})

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EvalResult:
        """The inverse of `to_dict`."""
        fields = dict(data["protocol"])
        fields["opponents"] = tuple(fields["opponents"])
        return cls(
            env_id=data["env_id"],
            policy=data["policy"],
            protocol=EvalProtocol(**fields),
            scores=tuple(_number(x) for x in data["scores"]),
            per_agent=tuple(_number(x) for x in data.get("per_agent", ())),
            opponents=_records_from_json(data.get("opponents", {})),
            held_out=_records_from_json(data.get("held_out", {})),
            finished=_number(data.get("finished", 1.0)),
            versions=data.get("versions", {}),
            provenance=data.get("provenance", {}),
        )

    def save(self, path: str | Path) -> Path:
        """Write the result as strict JSON (no bare NaN), through a temporary file."""
        path = Path(path)
        write_text_atomic(path, self.to_json() + "\n")
        return path


def _finite_or_none(value: float) -> float | None:
    """`value`, or None (JSON null) when it is NaN or infinite."""
    return value if math.isfinite(value) else None


def _records_to_json(records: dict[str, dict[str, float]]) -> dict[str, dict[str, float | None]]:
    """Records against opponents as strict JSON data: a non-finite rate is null."""
    return {name: {k: _finite_or_none(v) for k, v in record.items()} for name, record in records.items()}


def _records_from_json(data: dict[str, dict[str, float | None]]) -> dict[str, dict[str, float]]:
    """The inverse of `_records_to_json`."""
    return {name: {k: _number(v) for k, v in record.items()} for name, record in data.items()}


def _number(value: float | None) -> float:
    """A number read back from JSON: null (a non-finite value) becomes NaN."""
    return math.nan if value is None else float(value)


def evaluate(
    env_spec: EnvSpec,
    env: AnyEnv,
    policy: Player | str,
    *,
    name: str | None = None,
    baseline: Player | None = None,
    episodes: int | None = None,
    mesh: Mesh | None = None,
    provenance: dict[str, Any] | None = None,
    held_out: bool = False,
) -> EvalResult:
    """Evaluate `policy` (a `Policy`, a scripted player, or `"random"`) on `env` under the fixed protocol of its spec.

    `env` is the env of `env_spec` as `make` builds it (`registry.resolve` gives both from an id;
    `parallax_zoo.evaluate` takes the id).
    Zero-sum games also play the pinned `baseline` where the protocol lists it
    (pass it to avoid a second load); a `baseline` passed for a game with none
    pinned yet is met too, as the protocol will once it is pinned. `episodes` overrides the protocol's count
    for quick looks only: such a result does not compare with published ones.
    `mesh` (`agents.sharding.default_mesh()`) splits the episodes across its
    devices; the episode count must be a multiple of the device count.
    `provenance` (from `loading.resolve_policy`) is recorded in the result as it is.
    `held_out` also plays the game's held-out players, as many games each, reported apart in `EvalResult.held_out`.
    """
    env_id = env_spec.id
    if held_out and not env_spec.held_out:
        with_players = [other for other in registry.list_envs() if registry.spec(other).held_out]
        raise UserError(
            f"{env_id} has no held-out players (registry.yaml `held_out:`); the games that have them: "
            f"{', '.join(with_players) or 'none'}"
        )
    fixed = protocol(env_spec, pinning=baseline is not None)
    if episodes is not None:
        fixed = replace(fixed, episodes=episodes)
    if isinstance(policy, Policy):
        policy.check_fits(env)
    player = as_player(env, policy, fixed.greedy)
    key = jax.random.key(fixed.root_seed)
    label = name or (policy if isinstance(policy, str) else type(policy).__name__)
    if not fixed.zero_sum:
        with progress.bar(f"{env_id}: evaluating {label}", fixed.episodes, "episodes") as shown:
            shown.set_postfix_str(f"playing {fixed.episodes} episodes of up to {fixed.max_steps} steps at once")
            returns, finished = programs.play(env, player, key, fixed.episodes, fixed.max_steps, mesh)
            returns, finished = np.asarray(returns), np.asarray(finished)
            shown.set_postfix_str("")
            shown.update(fixed.episodes)
        scores = returns.mean(axis=-1)
        return EvalResult(
            env_id=env_id,
            policy=label,
            protocol=fixed,
            scores=tuple(float(s) for s in scores),
            per_agent=tuple(float(s) for s in returns.mean(axis=0)),
            finished=float(np.mean(finished)),
            versions=package_versions(),
            provenance=provenance or {},
        )
    results: dict[str, dict[str, float]] = {}
    held_out_results: dict[str, dict[str, float]] = {}
    first_scores: tuple[float, ...] = ()
    held_out_names = tuple(env_spec.held_out) if held_out else ()
    total = fixed.episodes * (len(fixed.opponents) + len(held_out_names))
    with progress.bar(f"{env_id}: evaluating {label}", total, "games") as shown:
        for index, opponent_name in enumerate(fixed.opponents):
            shown.set_postfix_str(f"vs {opponent_name} ({index + 1} of {len(fixed.opponents)} opponents)")
            opponent = _protocol_opponent(env_spec, env, opponent_name, baseline)
            results[opponent_name], scores = _match_record(
                env, player, opponent, jax.random.fold_in(key, index), fixed, mesh
            )
            shown.update(fixed.episodes)
            if index == 0:
                first_scores = scores
        held_out_key = jax.random.fold_in(key, HELD_OUT_STREAM)
        for index, opponent_name in enumerate(held_out_names):
            shown.set_postfix_str(f"vs held-out {opponent_name} ({index + 1} of {len(held_out_names)})")
            opponent = held_out_player(env_spec, env, opponent_name)
            held_out_results[opponent_name], _ = _match_record(
                env, player, opponent, jax.random.fold_in(held_out_key, index), fixed, mesh
            )
            shown.update(fixed.episodes)
    return EvalResult(
        env_id=env_id,
        policy=label,
        protocol=fixed,
        scores=first_scores,
        opponents=results,
        held_out=held_out_results,
        versions=package_versions(),
        provenance=provenance or {},
    )


def _protocol_opponent(env_spec: EnvSpec, env: AnyEnv, name: str, baseline: Player | None) -> Player:
    """The protocol opponent `name`, loading the pinned baseline where it is the opponent and none was passed."""
    if name == BASELINE and baseline is None:
        from parallax_zoo.policies.loading import load_baseline

        baseline = load_baseline(env_spec, env)
    return opponent_player(env_spec, env, name, baseline)


def _match_record(
    env: AnyEnv, player: Player, opponent: Player, key: jax.Array, fixed: EvalProtocol, mesh: Mesh | None
) -> tuple[dict[str, float], tuple[float, ...]]:
    """The record against one opponent (games, win/draw/loss overall and per seat) and the policy's side's scores."""
    match = programs.match(env, player, opponent, key, fixed.episodes, fixed.max_steps, mesh)
    side_returns = np.asarray(match.pop("side_returns"))
    side = np.asarray(match.pop("side"))
    record = (
        {"games": float(side_returns.size)}
        | {k: float(v) for k, v in match.items()}
        | per_side_record(side_returns, side)
    )
    return record, tuple(float(s) for s in side_returns)


def per_side_record(side_returns: np.ndarray, side: np.ndarray) -> dict[str, float]:
    """Games, and win, draw and loss rates, from each side the policy held: `games_side_0`, `win_side_0`, ..."""
    record = {}
    for s in np.unique(side):
        mine = side_returns[side == s]
        record |= {
            f"games_side_{s}": float(mine.size),
            f"win_side_{s}": float(np.mean(mine > 0)),
            f"draw_side_{s}": float(np.mean(mine == 0)),
            f"loss_side_{s}": float(np.mean(mine < 0)),
        }
    return record
