"""The GPU check: re-trained baselines against their reference scores, then env, board-game and PPO throughput.

`benchmarks/gpu_check.sh` runs this with the machine's own jax and the wheels
carried for it (docs/development.md, "The GPU check"). Sections run in order of
importance, each result is added to `results.json` as soon as it is measured,
and a section that would start after `--budget-s` is recorded as skipped, so a
run cut short still leaves what it measured.

1. baselines: `gymnax/CartPole-v1` and `Race-v0` re-trained from the shipped
   `baselines/<id>/config.yaml` exactly as `parallax-zoo train` does (seeds 0-2
   vmapped, seed 0's weights kept), evaluated under the protocol, and compared
   with the registry's reference score (see `TOLERANCE`).
2. envs: every native env under `VmapWrapper(AutoResetWrapper(...))` with random
   legal actions (`bench_envs.build_rollout`) at 1, 1024, 65536 and 1M envs.
3. boards: TicTacToe and ConnectFour against Pgx at 1024 and 65536 envs, with
   `bench_boards`' sampler and reset, interleaved, paired ratios.
4. ppo: PPO training steps per second on `gymnax/CartPole-v1` (`bench_ppo.measure`)
   at the baseline's 4 envs and at 2048 envs.

`--dry` runs every section on any backend with tiny sizes, so that the script
is tested on every change; its numbers mean nothing.

    python benchmarks/gpu_check.py [--dry] [--out FOLDER] [--sections baselines,envs,boards,ppo] [--budget-s SECONDS]
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib
import importlib.metadata
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]  # runnable from a checkout without installing

REQUIRED = {
    "jax": "jax",
    "jaxlib": "jaxlib",
    "jaxtyping": "jaxtyping",
    "numpy": "numpy",
    "yaml": "pyyaml",
    "PIL": "pillow",
    "flax": "flax",
    "optax": "optax",
    "chex": "chex",
    "safetensors": "safetensors",
    "tqdm": "tqdm",
    "matplotlib": "matplotlib",
    "seaborn": "seaborn",
    "gymnasium": "gymnasium",
    "farama_notifications": "farama-notifications",
    "gymnax": "gymnax",
    "six": "six",
    "svgwrite": "svgwrite",
    "pgx": "pgx",
}
"""Every module the check imports (directly or through gymnax and Pgx), and the distribution that provides it."""

CARRIED = ("gymnax", "gymnasium", "farama-notifications", "six", "pgx", "svgwrite")
"""The distributions `benchmarks/gpu_wheels.sh` downloads: the ones the GPU machine lacks."""

REPORTED = (
    "parallax-zoo",
    "jax-cuda13-plugin",
    "jax-cuda13-pjrt",
    "jax-cuda12-plugin",
    "jax-cuda12-pjrt",
    "huggingface_hub",
    "typing-extensions",
)
"""Versions printed besides the required ones: the CUDA plugin actually used and the rest of the stack."""

SECTIONS = ("baselines", "envs", "boards", "ppo", "gpu-tier")
DEFAULT_SECTIONS = ("baselines", "envs", "boards", "ppo")
"""What runs unless --sections says otherwise; `gpu-tier` trains the ids of --gpu-tier, only when asked."""
DEFAULT_GPU_TIER = ("mjx/CheetahRun", "brax/ant", "xminigrid/MiniGrid-FourRooms")
"""The GPU tier ids `--sections gpu-tier` trains unless --gpu-tier names others: one of each kind of anchor."""
DRY_GPU_TIER_ENVS = 4
"""The dry run's envs per GPU tier id (one update of them), so that a CPU can run the section."""

BASELINES = ("gymnax/CartPole-v1", "Race-v0")

TOLERANCE = 0.1
"""A re-trained baseline passes when it closes at least 90% of the gap from the random player's score to
the reference score ((mean - random) / (reference - random) >= 0.9). It cannot be asked to match exactly:
XLA on a GPU orders sums and matrix products differently from XLA on a CPU, so the parameters differ in
their last bits after the first update and a thousand PPO updates turn that into a different, equally
valid training run. The reference is what seed 0 scored on a CPU; a GPU re-train is another draw from the
same training distribution. On a CPU, seeds 0 to 5 of both shipped configs all score the reference (500 on
CartPole, 0.9 on Race), so 10% of the learnable gap leaves room for that draw while still failing a run
that learned little or broke."""


@dataclass(frozen=True)
class Sizes:
    """How big each section runs: the GPU sizes, or the dry run's tiny ones."""

    env_batches: tuple[int, ...]
    env_steps_budget: int
    board_batches: tuple[int, ...]
    board_steps_budget: int
    repeats: int
    ppo_envs: tuple[int, ...]
    ppo_updates: int
    baseline_updates: int | None
    """Updates to re-train each baseline for; None trains the shipped config's full length."""


GPU = Sizes(
    env_batches=(1, 1024, 65536, 1_048_576),
    env_steps_budget=1 << 24,
    board_batches=(1024, 65536),
    board_steps_budget=1 << 24,
    repeats=5,
    ppo_envs=(4, 2048),
    ppo_updates=50,
    baseline_updates=None,
)
DRY = Sizes(
    env_batches=(4,),
    env_steps_budget=16,
    board_batches=(4,),
    board_steps_budget=16,
    repeats=1,
    ppo_envs=(4,),
    ppo_updates=1,
    baseline_updates=1,
)
DRY_XLA_FLAGS = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
"""XLA options for the dry run: it only has to run, and XLA:CPU's optimisation passes are most of its time."""


def fail(message: str) -> NoReturn:
    """Stop with `message` on stderr and exit status 2: the machine is not set up for the check."""
    print(message, file=sys.stderr)
    raise SystemExit(2)


def carried_wheels() -> dict[str, str]:
    """The distributions installed from the carried wheels (the folder `GPU_CHECK_SITE` names), by version;
    stops if one of them is not the copy that imports resolve to (another copy earlier on the path)."""
    site = os.environ.get("GPU_CHECK_SITE")
    if not site:
        return {}
    carried = {}
    for info in sorted(Path(site).glob("*.dist-info")):
        distribution = importlib.metadata.PathDistribution(info)
        name = distribution.metadata["Name"]
        found = importlib.metadata.distribution(name)
        if Path(str(found.locate_file(""))).resolve() != Path(site).resolve():
            fail(
                f"gpu_check: the carried {name} {distribution.version} is shadowed by {found.version} at "
                f"{found.locate_file('')}; put {site} first on PYTHONPATH"
            )
        carried[name] = distribution.version
    if not carried:
        fail(f"gpu_check: GPU_CHECK_SITE={site} holds no installed wheel")
    return carried


def tree_revision() -> str:
    """The commit of the tree the check runs from (plus "+changes" when it differs), or "unknown" outside git."""
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()

    try:
        return git("rev-parse", "--short=12", "HEAD") + (
            "+changes" if git("status", "--porcelain", "--untracked-files=no") else ""
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def preflight(dry: bool) -> dict[str, Any]:
    """Import every required module, print and return the versions, and stop with one clear message if a module
    is missing or (unless `dry`) jax sees no GPU."""
    missing = []
    for module, distribution in REQUIRED.items():
        try:
            importlib.import_module(module)
        except ImportError as error:
            carried = (
                " (carry its wheel: `bash benchmarks/gpu_wheels.sh`, then bring the .whl folder)"
                if distribution in CARRIED
                else " (the GPU machine is expected to have it; carry a wheel of it)"
            )
            missing.append(f"{distribution}: cannot import {module} ({error}){carried}")
    if missing:
        fail("gpu_check: missing packages:\n  " + "\n  ".join(missing))

    import jax

    carried = carried_wheels()
    versions = {"python": platform.python_version()}
    for distribution in (*dict.fromkeys(REQUIRED.values()), *REPORTED):
        try:
            versions[distribution] = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            versions[distribution] = "not installed"
    versions["parallax-zoo tree"] = tree_revision()
    devices = [f"{d.platform}:{d.device_kind}" for d in jax.devices()]
    print("gpu_check versions: " + ", ".join(f"{k} {v}" for k, v in versions.items() if v != "not installed"))
    print(
        "gpu_check carried: " + (", ".join(f"{k} {v}" for k, v in carried.items()) or "nothing (GPU_CHECK_SITE unset)")
    )
    print(f"gpu_check devices: {devices} (backend {jax.default_backend()})")
    if not dry and jax.default_backend() != "gpu":
        fail(
            f"gpu_check: jax sees no GPU (backend {jax.default_backend()!r}, devices {devices}); "
            "run on the GPU machine with its own jax and CUDA plugin, or set GPU_CHECK_DRY=1 for a CPU dry run"
        )
    return {"versions": versions, "carried": carried, "devices": devices, "backend": jax.default_backend()}


def check_baseline(env_id: str, sizes: Sizes, work: Path, out: Path) -> dict[str, Any]:
    """Re-train `env_id` from its shipped config as `parallax-zoo train` does and compare it with the reference."""
    from parallax_zoo.baselines.training import CURVE_FILE, EVAL_FILE, resolve_config, train_baseline
    from parallax_zoo.catalogue.pins import baseline_dirname
    from parallax_zoo.catalogue.player_names import RANDOM
    from parallax_zoo.catalogue.registry import resolve
    from parallax_zoo.judging.evaluation import evaluate
    from parallax_zoo.judging.leaderboard import normalize

    dirname = baseline_dirname(env_id)
    config = resolve_config(env_id, ROOT / "baselines" / dirname / "config.yaml")
    if sizes.baseline_updates is not None:
        config = dataclasses.replace(
            config, total_timesteps=sizes.baseline_updates * config.num_envs * config.num_steps
        )
    start = time.perf_counter()
    env_spec, env = resolve(env_id)
    folder = train_baseline(
        env_spec, env, seed=0, config=config, out_dir=work / dirname, seeds=3, progress=False
    )  # as shipped
    seconds = time.perf_counter() - start
    result = json.loads((folder / EVAL_FILE).read_text())
    (out / f"curve-{dirname}.png").write_bytes((folder / CURVE_FILE).read_bytes())
    reference = env_spec.reference_score
    random_score = evaluate(env_spec, env, RANDOM).mean
    normalised = normalize(result["mean"], random_score, reference)
    seeds = len(result["training_seeds"])
    return {
        "env_id": env_id,
        "total_timesteps": config.total_timesteps,
        "seeds": seeds,
        "seconds": seconds,
        "steps_per_s": seeds * config.total_timesteps / seconds,
        "mean": result["mean"],
        "ci95": result["ci95"],
        "episodes": result["episodes"],
        "reference": reference,
        "random": random_score,
        "normalised": normalised,
        "passed": normalised is not None and normalised >= 1 - TOLERANCE,
        "compared": sizes.baseline_updates is None,
    }


def train_gpu_tier(env_id: str, sizes: Sizes, work: Path, out: Path) -> dict[str, Any]:
    """Train `env_id` with the GPU tier's configuration as `parallax-zoo train --tier gpu` does; its time beside
    the estimate from the published anchor and its protocol score beside the published number."""
    from parallax_zoo.baselines.gpu_tier import gpu_tier
    from parallax_zoo.baselines.training import CURVE_FILE, EVAL_FILE, train_baseline
    from parallax_zoo.catalogue.pins import baseline_dirname
    from parallax_zoo.catalogue.registry import resolve

    entry = gpu_tier()[env_id]
    config = entry.config()
    if sizes.baseline_updates is not None:  # the dry run: a few envs, one update
        minibatches = min(config.num_minibatches, DRY_GPU_TIER_ENVS)
        config = dataclasses.replace(
            config,
            num_envs=DRY_GPU_TIER_ENVS,
            num_minibatches=minibatches,
            total_timesteps=sizes.baseline_updates * DRY_GPU_TIER_ENVS * config.num_steps,
        )
    dirname = baseline_dirname(env_id)
    start = time.perf_counter()
    env_spec, env = resolve(env_id)
    folder = train_baseline(env_spec, env, seed=0, config=config, out_dir=work / f"gpu-tier-{dirname}", progress=False)
    seconds = time.perf_counter() - start
    result = json.loads((folder / EVAL_FILE).read_text())
    (out / f"curve-gpu-tier-{dirname}.png").write_bytes((folder / CURVE_FILE).read_bytes())
    return {
        "env_id": env_id,
        "total_timesteps": config.total_timesteps,
        "minutes": seconds / 60,
        "estimated_minutes": entry.estimated_minutes(),
        "anchor_hardware": entry.anchor.hardware if entry.anchor else None,
        "mean": result["mean"],
        "ci95": result["ci95"],
        "published": entry.published,
        "published_unit": entry.published_unit,
    }


def median_rate(num_envs: int, num_steps: int, run: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """(compile-and-first-run seconds, median env steps per second over `repeats` runs after it)."""
    import jax

    start = time.perf_counter()
    jax.block_until_ready(run())
    first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(run())
        times.append(time.perf_counter() - start)
    return first, num_envs * num_steps / statistics.median(times)


def env_throughput(sizes: Sizes) -> list[dict[str, Any]]:
    """Every native env at every batch size: steps per second of random legal play with auto-reset."""
    import bench_envs
    import jax

    import parallax_zoo

    rows = []
    key = jax.random.key(1)
    for env_id in [i for i in parallax_zoo.list_envs() if parallax_zoo.spec(i).kind == "native"]:
        for n in sizes.env_batches:
            steps = max(4, min(1000, sizes.env_steps_budget // n))
            rollout, state = bench_envs.build_rollout(parallax_zoo.make(env_id), n, steps)
            first, rate = median_rate(n, steps, functools.partial(rollout, state, key), sizes.repeats)
            rows.append(
                {"env_id": env_id, "num_envs": n, "num_steps": steps, "first_call_s": first, "steps_per_s": rate}
            )
            del rollout, state
    return rows


def board_throughput(sizes: Sizes) -> list[dict[str, Any]]:
    """TicTacToe and ConnectFour against Pgx: `bench_boards`' candidates, compiled, then timed interleaved."""
    import bench_boards
    import jax

    runs = bench_boards.candidates(
        list(sizes.board_batches),
        lambda n: max(16, min(2000, sizes.board_steps_budget // n)),
        games=("tic_tac_toe", "connect_four"),
    )
    key = jax.random.key(0)
    for candidate in runs:
        candidate.compile(key)
    for repeat in range(sizes.repeats):
        for candidate in runs:
            candidate.time_once(jax.random.fold_in(key, repeat + 1))
    by_key = {(c.game, c.library, c.num_envs): c for c in runs}
    rows = []
    for ours in (c for c in runs if c.library == "ours"):
        pgx = by_key[(ours.game, "pgx", ours.num_envs)]
        ratios = bench_boards.paired_ratios(ours, pgx)
        rows.append(
            {
                "game": ours.game,
                "num_envs": ours.num_envs,
                "num_steps": ours.num_steps,
                "ours_steps_per_s": ours.steps_per_second,
                "pgx_steps_per_s": pgx.steps_per_second,
                "ratio_median": statistics.median(ratios),
                "ratio_range": [ratios[0], ratios[-1]],
                "ours_compile_s": ours.compile_s,
                "pgx_compile_s": pgx.compile_s,
            }
        )
    return rows


def ppo_throughput(sizes: Sizes) -> list[dict[str, Any]]:
    """PPO training env steps per second on CartPole, compile apart, at each of `sizes.ppo_envs` envs."""
    import bench_ppo
    import jax

    from parallax_zoo.agents.ppo import make_train

    env = bench_ppo.cartpole()
    rows = []
    for n in sizes.ppo_envs:
        config = dataclasses.replace(
            bench_ppo.CONFIG, num_envs=n, total_timesteps=sizes.ppo_updates * n * bench_ppo.CONFIG.num_steps
        )
        measured = bench_ppo.measure(make_train(config, env), jax.random.key(0), max(1, sizes.repeats // 2), config)
        rows.append(
            {
                "env_id": bench_ppo.ENV_ID,
                "num_envs": n,
                "num_steps": config.num_steps,
                "updates": config.num_updates,
                **measured,
            }
        )
    return rows


def print_tables(results: dict[str, Any]) -> None:
    """The results as plain terminal tables, one per section."""
    from timing import print_table

    sections = results["sections"]
    if isinstance(sections.get("baselines"), list):
        print_table(
            f"re-trained baselines (pass: normalised >= {1 - TOLERANCE:.2f})",
            [
                (
                    r["env_id"],
                    f"{r['total_timesteps']:,} x {r['seeds']}",
                    f"{r['seconds']:.1f}",
                    f"{r['mean']:.3f}",
                    f"{r['reference']:.3f}",
                    f"{r['random']:.3f}",
                    "-" if r["normalised"] is None else f"{r['normalised']:.3f}",
                    ("pass" if r["passed"] else "FAIL") if r["compared"] else "not compared (dry run)",
                )
                for r in sections["baselines"]
            ],
            ("env", "steps x seeds", "train+eval s", "mean", "reference", "random", "normalised", "result"),
        )
    if isinstance(sections.get("envs"), list):
        print_table(
            "native env throughput (random legal actions, auto-reset)",
            [
                (
                    r["env_id"],
                    f"{r['num_envs']:,}",
                    str(r["num_steps"]),
                    f"{r['first_call_s']:.2f}",
                    f"{r['steps_per_s']:.3e}",
                )
                for r in sections["envs"]
            ],
            ("env", "envs", "steps", "first call s", "steps/s"),
        )
    if isinstance(sections.get("boards"), list):
        print_table(
            "board games against Pgx (same sampler and reset)",
            [
                (
                    r["game"],
                    f"{r['num_envs']:,}",
                    str(r["num_steps"]),
                    f"{r['ours_steps_per_s']:.3e}",
                    f"{r['pgx_steps_per_s']:.3e}",
                    f"{r['ratio_median']:.2f}",
                    f"{r['ratio_range'][0]:.2f}-{r['ratio_range'][1]:.2f}",
                    f"{r['ours_compile_s']:.2f}",
                    f"{r['pgx_compile_s']:.2f}",
                )
                for r in sections["boards"]
            ],
            (
                "game",
                "envs",
                "steps",
                "ours steps/s",
                "pgx steps/s",
                "ours/pgx",
                "range",
                "ours compile s",
                "pgx compile s",
            ),
        )
    if isinstance(sections.get("ppo"), list):
        print_table(
            "PPO training throughput",
            [
                (
                    r["env_id"],
                    f"{r['num_envs']:,}",
                    str(r["updates"]),
                    f"{r['compile_s']:.2f}",
                    f"{r['train_s']:.2f}",
                    f"{r['steps_per_s']:,.0f}",
                    f"{r['final_return']:.1f}",
                )
                for r in sections["ppo"]
            ],
            ("env", "envs", "updates", "compile s", "train s", "steps/s", "final return"),
        )
    if isinstance(sections.get("gpu-tier"), list):
        print_table(
            "GPU tier, trained with --tier gpu (minutes include compiling; the estimate is the anchor's speed)",
            [
                (
                    r["env_id"],
                    f"{r['total_timesteps']:,}",
                    f"{r['minutes']:.1f}",
                    "-" if r["estimated_minutes"] is None else f"{r['estimated_minutes']:.1f}",
                    r["anchor_hardware"] or "-",
                    f"{r['mean']:.3f}",
                    "-" if r["published"] is None else f"{r['published']:g} {r['published_unit']}",
                )
                for r in sections["gpu-tier"]
            ],
            ("env", "env steps", "minutes", "estimate", "anchor on", "score", "published"),
        )
    for name, value in sections.items():
        if not isinstance(value, list):
            print(f"\n{name}: {value}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dry", action="store_true", help="tiny sizes on any backend: checks that the script runs")
    parser.add_argument("--out", type=Path, default=ROOT / "gpu-check", help="folder for results.json and the curves")
    parser.add_argument(
        "--sections",
        default=",".join(DEFAULT_SECTIONS),
        help=f"comma-separated sections to run, in their fixed order: {','.join(SECTIONS)} "
        f"(default {','.join(DEFAULT_SECTIONS)})",
    )
    parser.add_argument(
        "--gpu-tier",
        default=",".join(DEFAULT_GPU_TIER),
        help=f"the GPU tier ids the gpu-tier section trains, comma-separated (default {','.join(DEFAULT_GPU_TIER)})",
    )
    parser.add_argument(
        "--budget-s",
        type=float,
        default=420.0,
        help="no section starts after this many seconds (default 420); later ones are recorded as skipped",
    )
    args = parser.parse_args()
    chosen = args.sections.split(",")
    if unknown := [name for name in chosen if name not in SECTIONS]:
        parser.error(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    tier_ids = [env_id for env_id in args.gpu_tier.split(",") if env_id]
    if "gpu-tier" in chosen:
        from parallax_zoo.baselines.gpu_tier import gpu_tier

        if unknown_ids := [env_id for env_id in tier_ids if env_id not in gpu_tier()]:
            parser.error(
                f"not in the GPU tier: {', '.join(unknown_ids)} (parallax_zoo/baselines/baseline_configs/gpu/tier.yaml)"
            )
    if args.dry:
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {DRY_XLA_FLAGS}".strip()
    start = time.perf_counter()
    results: dict[str, Any] = {"dry": args.dry, **preflight(args.dry), "sections": {}}

    from parallax_zoo.atomic import write_text_atomic

    sizes = DRY if args.dry else GPU
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as work_dir:  # the re-trained baseline folders
        work = Path(work_dir)
        sections: dict[str, Callable[[], Any]] = {
            "baselines": lambda: [check_baseline(env_id, sizes, work, args.out) for env_id in BASELINES],
            "envs": lambda: env_throughput(sizes),
            "boards": lambda: board_throughput(sizes),
            "ppo": lambda: ppo_throughput(sizes),
            "gpu-tier": lambda: [train_gpu_tier(env_id, sizes, work, args.out) for env_id in tier_ids],
        }
        for name, run in sections.items():
            if name not in chosen:
                continue
            elapsed = time.perf_counter() - start
            if elapsed > args.budget_s:
                results["sections"][name] = (
                    f"skipped: {elapsed:.0f} s had passed, over the {args.budget_s:.0f} s budget"
                )
            else:
                print(f"gpu_check: {name} (at {elapsed:.0f} s)", flush=True)
                section_start, section_cpu = time.perf_counter(), time.process_time()
                try:
                    results["sections"][name] = run()
                except Exception as error:  # one broken section must not cost the others their run on the GPU
                    traceback.print_exc()
                    results["sections"][name] = f"error: {type(error).__name__}: {error}"
                results.setdefault("seconds", {})[name] = time.perf_counter() - section_start
                results.setdefault("cpu_seconds", {})[name] = time.process_time() - section_cpu
            write_text_atomic(args.out / "results.json", json.dumps(results, indent=2) + "\n")
    results["total_s"] = time.perf_counter() - start
    # The GPU machine's huggingface_hub is older than the project's range; the check never needs it.
    results["imported_huggingface_hub"] = "huggingface_hub" in sys.modules
    results["total_cpu_s"] = time.process_time()
    write_text_atomic(args.out / "results.json", json.dumps(results, indent=2) + "\n")
    print_tables(results)

    baselines = results["sections"].get("baselines", [])
    failed = (
        [r["env_id"] for r in baselines if r["compared"] and not r["passed"]] if isinstance(baselines, list) else []
    )
    incomplete = [name for name, value in results["sections"].items() if not isinstance(value, list)]
    print(f"\ngpu_check: {results['total_s']:.0f} s in all; results in {args.out / 'results.json'}")
    if failed or incomplete:
        print(
            f"gpu_check: FAILED: below the reference score tolerance: {', '.join(failed) or 'none'}; "
            f"sections skipped or broken: {', '.join(incomplete) or 'none'}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
