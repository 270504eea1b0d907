"""The documentation site's scorecard and reproduction pages, generated from the shipped baselines' eval.json files,
their cards, the random player's stored scores and `published_scores.yaml` at every build (docs/hooks.py), so the
pages cannot drift from the files they sum up. The statistics are `parallax_zoo.judging.scorecard`'s."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from parallax_zoo.baselines.gpu_tier import gpu_tier, tier_sources
from parallax_zoo.catalogue.pins import baseline_dirname
from parallax_zoo.catalogue.registry import EnvSpec, Registry, namespace_of, packaged_registry
from parallax_zoo.judging.random_scores import stored_random_score
from parallax_zoo.judging.scorecard import (
    MIN_SEEDS,
    PROFILE_THRESHOLDS,
    BaselineScores,
    Scorecard,
    read_baseline_scores,
    scorecard,
)

SCORECARD_PAGE = "scorecard.md"
REPRODUCTION_PAGE = "reproduction.md"
PROFILE_FOLDER = "scorecard"
"""Where each namespace's performance-profile plot sits in the site: `scorecard/<namespace>.svg`."""
PUBLISHED_FILE = "published_scores.yaml"
RETURN_UNIT = "return"
TRAINING_TIME = re.compile(r"Training took ([0-9.]+) min of wall time on (\d+) CPU cores")
"""The sentence a model card gives its training time in (parallax_zoo/baselines/training.py)."""


@dataclass(frozen=True)
class Published:
    """One number a peer project publishes for an id (a row of `published_scores.yaml`)."""

    env_id: str
    algorithm: str
    value: float
    unit: str
    source: str
    steps: int | None = None


def published_scores(docs_folder: Path) -> tuple[list[Published], dict[str, str]]:
    """The published numbers and their sources' descriptions, from `published_scores.yaml`."""
    document = yaml.safe_load((docs_folder / PUBLISHED_FILE).read_text(encoding="utf-8"))
    rows = [
        Published(row["id"], row["algorithm"], float(row["value"]), row["unit"], row["source"], row.get("steps"))
        for row in document["scores"]
    ]
    return rows, dict(document["sources"])


def _pinned(registry: Registry) -> list[EnvSpec]:
    return [registry.spec(env_id) for env_id in registry.list_envs() if registry.spec(env_id).baseline is not None]


def _comparable(published: Sequence[Published], env_id: str) -> float | None:
    """The best published return for `env_id`, the top of its scorecard scale where it beats our seeds."""
    values = [row.value for row in published if row.env_id == env_id and row.unit == RETURN_UNIT]
    return max(values) if values else None


def namespace_scorecards(baselines_folder: Path, published: Sequence[Published], registry: Registry) -> list[Scorecard]:
    """One scorecard per namespace with a pinned baseline; an id without a stored random score is left out."""
    grouped: dict[str, list[BaselineScores]] = {}
    missing: dict[str, dict[str, str]] = {}
    for env_spec in _pinned(registry):
        namespace = namespace_of(env_spec.id)
        random = stored_random_score(env_spec)
        if random is None:
            missing.setdefault(namespace, {})[env_spec.id] = (
                f"no stored random score (`parallax-zoo maintain random-scores {env_spec.id} --write`)"
            )
            grouped.setdefault(namespace, [])
            continue
        folder = baselines_folder / baseline_dirname(env_spec.id)
        grouped.setdefault(namespace, []).append(
            read_baseline_scores(folder, random["mean"], _comparable(published, env_spec.id))
        )
    cards = []
    for namespace, baselines in grouped.items():
        card = scorecard(namespace, baselines)
        cards.append(
            Scorecard(
                card.namespace,
                card.env_ids,
                card.normalized,
                card.iqm,
                card.iqm_ci95,
                card.profile,
                card.profile_ci95,
                {**card.left_out, **missing.get(namespace, {})},
            )
        )
    return sorted(cards, key=lambda card: (card.namespace != "native", card.namespace))


def profile_svg(card: Scorecard) -> str:
    """The performance profile of `card`: the fraction of its runs above each normalised score, with its 95% band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "parallax-zoo"  # the same figure gives the same file
    figure, axes = plt.subplots(figsize=(5, 3.2))
    axes.plot(PROFILE_THRESHOLDS, card.profile, color="#1f77b4")
    axes.fill_between(PROFILE_THRESHOLDS, card.profile_ci95[0], card.profile_ci95[1], color="#1f77b4", alpha=0.25)
    axes.set_xlabel("normalised score tau (0 random, 1 best known)")
    axes.set_ylabel("fraction of runs above tau")
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1.02)
    axes.set_title(f"{card.namespace}: {len(card.env_ids)} ids x {card.normalized.shape[0]} seeds")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(figure)
    return buffer.getvalue()


def _interval(value: float | None, bounds: tuple[float, float] | None) -> str:
    if value is None or bounds is None:
        return "-"
    return f"{value:.3f} [{bounds[0]:.3f}, {bounds[1]:.3f}]"


def scorecard_page(cards: Sequence[Scorecard]) -> str:
    lines = [
        "# Scorecards",
        "",
        "Every shipped baseline's training seeds, each seed's protocol score normalised: 0 is the random player's",
        "protocol score on the id, 1 the best score known for it, the return a peer project publishes",
        f"([Reproduction]({REPRODUCTION_PAGE})) or the best of our seeds, whichever is higher. Per namespace, the",
        "interquartile mean (IQM) of the normalised scores over its ids and seeds, with a stratified-bootstrap 95%",
        "interval, and a performance profile (the fraction of runs scoring above each normalised score), both computed",
        "with rliable from the shipped eval.json files by `parallax_zoo.judging.scorecard`; the page is generated at",
        f"every build. An id enters with {MIN_SEEDS} or more training seeds' scores (the card's `over_seeds`); the ids",
        "left out are named, with why.",
        "",
        "| namespace | ids in it | seeds per id | IQM [95% CI] | left out |",
        "|---|---|---|---|---|",
    ]
    for card in cards:
        seeds = str(card.normalized.shape[0]) if card.env_ids else "-"
        lines.append(
            f"| {card.namespace} | {len(card.env_ids)} | {seeds} | {_interval(card.iqm, card.iqm_ci95)} "
            f"| {len(card.left_out)} |"
        )
    for card in cards:
        lines += ["", f"## {card.namespace}", ""]
        if card.env_ids:
            lines += [
                f"![performance profile of {card.namespace}]({PROFILE_FOLDER}/{card.namespace}.svg)",
                "",
                "| id | normalised score of each seed |",
                "|---|---|",
            ]
            for index, env_id in enumerate(card.env_ids):
                scores = ", ".join(f"{score:.3f}" for score in card.normalized[:, index])
                lines.append(f"| `{env_id}` | {scores} |")
            lines.append("")
        if card.left_out:
            lines.append("Left out:")
            lines.append("")
            lines += [f"- `{env_id}`: {why}" for env_id, why in sorted(card.left_out.items())]
    return "\n".join(lines) + "\n"


def training_time(card_text: str) -> str:
    """The training time a model card records, or '-' where it records none."""
    found = TRAINING_TIME.search(card_text)
    return "-" if found is None else f"{found.group(1)} min on {found.group(2)} cores"


def _number(value: float) -> str:
    return f"{value:g}"


def reproduction_page(
    baselines_folder: Path, published: Sequence[Published], sources: dict[str, str], registry: Registry
) -> str:
    lines = [
        "# Reproduction",
        "",
        "Every published number the baselines are measured against, beside ours. Ours is the protocol score",
        "([Evaluation](evaluation.md): greedy, the id's fixed episodes and seeds) of each training seed, their",
        "interquartile mean with its stratified-bootstrap 95% interval (rliable) and the pinned seed's score; the",
        "command re-makes the baseline (the same arguments give the same weights, [Baselines](baselines.md)), and the",
        "time is the one its card records, for all its seeds vmapped together. The page is generated at every build",
        "from the shipped files and `docs/published_scores.yaml`.",
        "",
        "| id | published | ours: each seed | ours: IQM [95% CI] | pinned seed | command | time |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in published:
        at = f" at {row.steps:,} steps" if row.steps else ""
        unit = "" if row.unit == RETURN_UNIT else f" ({row.unit})"
        cell = f"{_number(row.value)}{unit}, {row.algorithm}{at}, [{row.source}](#sources)"
        env_spec = registry.spec(row.env_id)
        folder = baselines_folder / baseline_dirname(row.env_id)
        if env_spec.baseline is None or not folder.is_dir():
            lines.append(f"| `{row.env_id}` | {cell} | no pinned baseline yet | - | - | - | - |")
            continue
        scores = read_baseline_scores(folder, 0.0)
        seeds = ", ".join(f"{score:.3f}" for score in scores.seed_scores)
        recorded = json.loads((folder / "eval.json").read_text(encoding="utf-8")).get("over_seeds")
        iqm = "-" if recorded is None else _interval(recorded["iqm"], tuple(recorded["iqm_ci95"]))  # as trained
        pinned = float(env_spec.reference_score) if env_spec.reference_score is not None else scores.seed_scores[0]
        command = f"`parallax-zoo train {row.env_id} --seeds {max(len(scores.seed_scores), MIN_SEEDS)} --pin`"
        time = training_time((folder / "README.md").read_text(encoding="utf-8"))
        lines.append(f"| `{row.env_id}` | {cell} | {seeds} | {iqm} | {pinned:.3f} | {command} | {time} |")
    lines += ["", "## Sources", ""]
    lines += [f"- **{name}**: {description}" for name, description in sources.items()]
    return "\n".join(lines + gpu_tier_section()) + "\n"


def gpu_tier_section() -> list[str]:
    """The GPU tier's table: each id's config, budget, published number and the GPU time its anchor gives."""
    lines = [
        "",
        "## The GPU tier",
        "",
        "The ids that do not train on this project's CPU in budget ([Baselines](baselines.md#the-gpu-tier)), each",
        "trained with `parallax-zoo train ID --tier gpu`: its configuration (a family file in",
        "`parallax_zoo/baselines/baseline_configs/gpu/` with the id's changes in `tier.yaml`), the published number to",
        "meet where its source gives one as a number, and the GPU time estimated from a published speed for the same",
        "budget (compiling apart; on the anchor's hardware, for the anchor's trainer, not ours).",
        "",
        "| id | config | env steps | published | estimated GPU time | anchor |",
        "|---|---|---|---|---|---|",
    ]
    for env_id, entry in gpu_tier().items():
        config = entry.config()
        published = "-" if entry.published is None else f"{entry.published:g} ({entry.published_unit})"
        minutes = entry.estimated_minutes()
        estimate = "no published anchor" if minutes is None else f"{minutes:.1f} min"
        anchor = "-" if entry.anchor is None else f"{entry.anchor.hardware}, [{entry.anchor.source}](#gpu-tier-sources)"
        lines.append(
            f"| `{env_id}` | {entry.family} | {config.total_timesteps:,} | {published}, "
            f"[{entry.published_source}](#gpu-tier-sources) | {estimate} | {anchor} |"
        )
    lines += ["", "### GPU tier sources", ""]
    lines += [f"- **{name}**: {description}" for name, description in tier_sources().items()]
    return lines


def scorecard_pages(docs_folder: Path, registry: Registry | None = None) -> Iterator[tuple[str, str]]:
    """(site path, content) for the scorecard page, its plots and the reproduction page."""
    registry = registry or packaged_registry()
    baselines_folder = docs_folder.parent / "baselines"
    published, sources = published_scores(docs_folder)
    cards = namespace_scorecards(baselines_folder, published, registry)
    yield SCORECARD_PAGE, scorecard_page(cards)
    for card in cards:
        if card.env_ids:
            yield f"{PROFILE_FOLDER}/{card.namespace}.svg", profile_svg(card)
    yield REPRODUCTION_PAGE, reproduction_page(baselines_folder, published, sources, registry)
