"""Adapter overhead: each adapter against its raw foreign env, stepped with `jax.vmap` in one process.

Run: `python benchmarks/bench_adapters.py [--quick]`.

Both sides of a pair run the same number of steps of the same env with the
same actions inside one jitted `lax.scan`, summing rewards and observations
so that nothing is optimised away. They are timed alternately (interleaved), and the median of
the repetitions is reported; compile time is measured separately. The pairs:

- gymnax CartPole-v1 (1, 128, 1024 envs): raw `env.step`, which auto-resets
  and needs a key per env per step, against
  `VmapWrapper(AutoResetWrapper(GymnaxAdapter(env)))`, which auto-resets too
  and keeps its keys in the state. A second row pairs the same raw loop with
  `VmapWrapper(GymnaxAdapter(env))` and a selective reset every step, the
  loop that keeps terminal observations: the same work as gymnax's
  auto-reset (one key per env per step, a step, a reset and a select), so
  this is the pair that measures the adapter. A third row pairs the
  auto-reset stack with a raw loop that, like the protocol, carries a key
  per env and splits it every step.
- JaxMARL MPE_simple_spread_v3 and Craftax-Classic-Symbolic-v1 (1, 128,
  1024 envs): the raw suite's `step_env` under `jax.vmap`, then its `reset`
  for every env and a select that keeps the fresh state where an episode
  ended, a key per env split every step; against `VmapWrapper(adapter)`
  stepped and selectively reset, the same work behind the protocol, its
  reset keys taken from a key per env with one `fold_in` of the step number
  (the adapter carries its step keys in the state).
- Brax inverted_pendulum (spring backend, 16 envs) and Playground PointMass
  (impl "jax", 16 envs): raw `env.step` against `VmapWrapper(adapter)`;
  neither side resets, since brax and Playground envs do not reset
  themselves.
- Pgx connect_four and go_9x9, Jumanji Snake-v1 and XLand-MiniGrid MiniGrid-DoorKey-5x5
  (1, 128, 1024 envs): the suite's own loop, a vmapped step with a key per
  env where the suite takes one, then a reset of the finished envs
  (`jnp.where` over a fresh batch, with a key per env), against
  `VmapWrapper(adapter)` stepped and selectively reset. Both sides pick the
  same moves (Pgx: the first legal move from a position that differs across
  envs and steps). For Pgx each side sums the rewards and one observation
  per env, as much as Pgx's state holds: the raw loop the mover's, ours
  slot 0's. The adapter still computes both players' views into every state
  (the board convention's cost); slot 0 holds the mover's view on some moves
  and the waiting player's on the others, so neither can be dropped.

Ratio = ours / raw throughput; at least 0.95 is the target. On a shared,
loaded machine the timings swing by 10-20 %, so the table also gives the
ratio of the process's CPU time (raw / ours, medians; other processes'
load moves it less than wall time) and XLA's flop count of each compiled
rollout (ours / raw), which load cannot move.
A compile time of 0.0 means that rollout was already compiled for an
earlier row.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp

from parallax import AutoResetWrapper, VmapWrapper
from parallax.core import fold_in_key

Rollout = Callable[[Any], Any]


@dataclass(frozen=True)
class Case:
    """One row of the table: a raw rollout and ours over the same env, envs and steps."""

    name: str
    num_envs: int
    num_steps: int
    raw: tuple[Rollout, Any]
    ours: tuple[Rollout, Any]


def scan_rollout(step: Callable[[Any, Any], Any], num_steps: int) -> Rollout:
    """A jitted `lax.scan` of `step(carry, t) -> (carry, outputs)` returning the sum of all outputs."""

    def rollout(carry: Any) -> Any:
        def body(inner: tuple[Any, Any], t: Any) -> tuple[tuple[Any, Any], None]:
            state, total = inner
            state, outputs = step(state, t)
            return (state, total + sum(jnp.sum(x) for x in jax.tree_util.tree_leaves(outputs))), None

        (_, total), _ = jax.lax.scan(body, (carry, jnp.float32(0)), jnp.arange(num_steps))
        return total

    return jax.jit(rollout)


def alternating_actions(t: Any, num_envs: int) -> Any:
    """CartPole actions that differ across envs and steps, identical for both sides."""
    return ((t + jnp.arange(num_envs)) % 2).astype(jnp.int32)


def smooth_actions(t: Any, num_envs: int, size: int) -> Any:
    """Continuous actions in [-1, 1] that differ across envs and steps, identical for both sides."""
    phase = t.astype(jnp.float32) * 0.1 + jnp.arange(num_envs, dtype=jnp.float32)[:, None]
    return jnp.sin(phase + jnp.arange(size, dtype=jnp.float32))


def gymnax_cases(num_envs: int, num_steps: int) -> list[Case]:
    import gymnax

    from parallax.adapters.gymnax import GymnaxAdapter

    env, params = gymnax.make("CartPole-v1")
    adapter = GymnaxAdapter(env, params)

    def raw_step(carry: Any, t: Any) -> tuple[Any, Any]:
        key, state = carry
        key, step_key = jax.random.split(key)
        keys = jax.random.split(step_key, num_envs)
        observation, state, reward, _, _, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            keys, state, alternating_actions(t, num_envs), params
        )
        return (key, state), (reward, observation)

    reset_keys = jax.random.split(jax.random.key(0), num_envs)
    _, raw_state = jax.vmap(env.reset, in_axes=(0, None))(reset_keys, params)
    raw = (scan_rollout(raw_step, num_steps), (jax.random.key(1), raw_state))

    auto = VmapWrapper(AutoResetWrapper(adapter), num_envs=num_envs)

    def auto_step(state: Any, t: Any) -> tuple[Any, Any]:
        state = auto.step(state, alternating_actions(t, num_envs))
        return state, (state.reward, state.observation)

    selective = VmapWrapper(adapter, num_envs=num_envs)

    def selective_step(carry: Any, t: Any) -> tuple[Any, Any]:
        key, state = carry
        key, reset_key = jax.random.split(key)
        state = selective.step(state, alternating_actions(t, num_envs))
        outputs = (state.reward, state.observation)
        return (key, selective.reset(key=reset_key, state=state, done=state.done)), outputs

    def raw_carried_step(carry: Any, t: Any) -> tuple[Any, Any]:
        keys, state = carry
        next_keys, step_keys = jnp.moveaxis(jax.vmap(jax.random.split)(keys), 1, 0)
        observation, state, reward, _, _, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            step_keys, state, alternating_actions(t, num_envs), params
        )
        return (next_keys, state), (reward, observation)

    raw_carried = (
        scan_rollout(raw_carried_step, num_steps),
        (jax.random.split(jax.random.key(1), num_envs), raw_state),
    )
    ours_auto = (scan_rollout(auto_step, num_steps), auto.reset(key=jax.random.key(0)))
    ours_selective = (
        scan_rollout(selective_step, num_steps),
        (jax.random.key(1), selective.reset(key=jax.random.key(0))),
    )
    return [
        Case("gymnax CartPole-v1 selective reset", num_envs, num_steps, raw, ours_selective),
        Case("gymnax CartPole-v1 AutoResetWrapper", num_envs, num_steps, raw, ours_auto),
        Case("  same, raw carrying a key per env", num_envs, num_steps, raw_carried, ours_auto),
    ]


def split_per_env(keys: Any, num: int) -> list[Any]:
    """`num` new keys for every env's key: the raw loops' per-env key handling."""
    return list(jnp.moveaxis(jax.vmap(lambda k: jax.random.split(k, num))(keys), 1, 0))


def selective_case(
    name: str,
    adapter: Any,
    raw_step: Callable[[Any, Any], Any],
    raw_carry: Any,
    actions: Callable[[Any], Any],
    num_envs: int,
    num_steps: int,
) -> Case:
    """`raw_step` against `VmapWrapper(adapter)` stepped, then reset where done, with the same actions.

    Like the raw loop, ours carries a key per env; it needs only a reset key from it each
    step (the adapter keeps its step keys in the state), one hash: `fold_in` of the step number.
    """
    env = VmapWrapper(adapter, num_envs=num_envs)

    def outputs_of(state: Any) -> Any:
        agents = getattr(state, "agents", None)
        return (state.reward, state.observation) if agents is None else (agents.reward, agents.observation)

    rollout = selective_rollout(
        env, lambda s, t: actions(t), outputs_of, num_steps, lambda keys, t: (keys, fold_in_key(keys, t))
    )
    ours = (rollout, (jax.random.split(jax.random.key(1), num_envs), env.reset(key=jax.random.key(0))))
    return Case(name, num_envs, num_steps, (scan_rollout(raw_step, num_steps), raw_carry), ours)


def jaxmarl_case(num_envs: int, num_steps: int) -> Case:
    import jaxmarl

    from parallax.adapters.jaxmarl import JaxMARLAdapter

    raw_env = jaxmarl.make("MPE_simple_spread_v3")
    agents = raw_env.agents

    def actions(t: Any) -> Any:
        return ((t + jnp.arange(num_envs)[:, None] + jnp.arange(len(agents))[None, :]) % 5).astype(jnp.int32)

    def raw_step(carry: Any, t: Any) -> tuple[Any, Any]:
        keys, state = carry
        keys, step_keys, reset_keys = split_per_env(keys, 3)
        action = actions(t)
        obs, state, rewards, dones, _ = jax.vmap(raw_env.step_env)(
            step_keys, state, {a: action[:, i] for i, a in enumerate(agents)}
        )
        outputs = (jnp.stack([rewards[a] for a in agents], axis=1), jnp.stack([obs[a] for a in agents], axis=1))
        _, fresh = jax.vmap(raw_env.reset)(reset_keys)
        return (keys, where_done(dones["__all__"], fresh, state)), outputs

    keys = jax.random.split(jax.random.key(0), num_envs)
    _, raw_state = jax.vmap(raw_env.reset)(keys)
    return selective_case(
        "jaxmarl MPE_simple_spread_v3 selective",
        JaxMARLAdapter(raw_env),
        raw_step,
        (keys, raw_state),
        actions,
        num_envs,
        num_steps,
    )


def craftax_case(num_envs: int, num_steps: int) -> Case:
    from craftax.craftax_env import make_craftax_env_from_name

    from parallax.adapters.craftax import CraftaxAdapter

    raw_env = make_craftax_env_from_name("Craftax-Classic-Symbolic-v1", auto_reset=False)
    default_params: Any = raw_env.default_params
    params = default_params.replace(max_timesteps=50)

    def actions(t: Any) -> Any:
        return ((t + jnp.arange(num_envs)) % 17).astype(jnp.int32)

    def raw_step(carry: Any, t: Any) -> tuple[Any, Any]:
        keys, state = carry
        keys, step_keys, reset_keys = split_per_env(keys, 3)
        obs, state, reward, done, _ = jax.vmap(raw_env.step_env, in_axes=(0, 0, 0, None))(
            step_keys, state, actions(t), params
        )
        _, fresh = jax.vmap(raw_env.reset_env, in_axes=(0, None))(reset_keys, params)
        return (keys, where_done(done, fresh, state)), (reward, obs)

    keys = jax.random.split(jax.random.key(0), num_envs)
    _, raw_state = jax.vmap(raw_env.reset_env, in_axes=(0, None))(keys, params)
    adapter = CraftaxAdapter(raw_env, params)
    return selective_case(
        "craftax Classic-Symbolic (50-step episodes)",
        adapter,
        raw_step,
        (keys, raw_state),
        actions,
        num_envs,
        num_steps,
    )


def physics_case(name: str, raw_env: Any, adapter: Any, num_envs: int, num_steps: int) -> Case:
    """Raw `jax.vmap(env.step)` against `VmapWrapper(adapter)` for a Brax-style env, no resets on either side."""
    size = adapter.action_space.shape[0]

    def raw_step(state: Any, t: Any) -> tuple[Any, Any]:
        state = jax.vmap(raw_env.step)(state, smooth_actions(t, num_envs, size))
        return state, (state.reward, state.obs)

    raw_state = jax.vmap(raw_env.reset)(jax.random.split(jax.random.PRNGKey(0), num_envs))
    env = VmapWrapper(adapter, num_envs=num_envs)

    def ours_step(state: Any, t: Any) -> tuple[Any, Any]:
        state = env.step(state, smooth_actions(t, num_envs, size))
        return state, (state.reward, state.observation)

    return Case(
        name,
        num_envs,
        num_steps,
        (scan_rollout(raw_step, num_steps), raw_state),
        (scan_rollout(ours_step, num_steps), env.reset(key=jax.random.key(0))),
    )


def brax_case(num_envs: int, num_steps: int) -> Case:
    import brax.envs

    from parallax.adapters.brax import BraxAdapter

    raw_env = brax.envs.get_environment("inverted_pendulum", backend="spring")
    adapter = BraxAdapter(raw_env, episode_length=10 * num_steps)
    return physics_case("brax inverted_pendulum (spring)", raw_env, adapter, num_envs, num_steps)


def playground_case(num_envs: int, num_steps: int) -> Case:
    from mujoco_playground import registry

    from parallax.adapters.mjx import MJXAdapter

    raw_env = registry.load("PointMass", config_overrides={"impl": "jax"})
    adapter = MJXAdapter(raw_env, episode_length=10 * num_steps)
    return physics_case("playground PointMass (impl jax)", raw_env, adapter, num_envs, num_steps)


def where_done(done: Any, fresh: Any, state: Any) -> Any:
    """`fresh` where `done`, else `state`: the raw side's reset of the finished envs."""

    def pick(new: Any, old: Any) -> Any:
        return jnp.where(jnp.reshape(done, done.shape + (1,) * (new.ndim - done.ndim)), new, old)

    return jax.tree_util.tree_map(pick, fresh, state)


def selective_rollout(
    env: Any,
    action_of: Callable[[Any, Any], Any],
    outputs_of: Callable[[Any], Any],
    num_steps: int,
    reset_keys: Callable[[Any, Any], Any] = lambda key, t: jax.random.split(key),
) -> Rollout:
    """Ours: `VmapWrapper(adapter)` stepped, then the finished envs reset selectively.

    `reset_keys(key, t)` gives the carried key(s) for the next step and step `t`'s reset key(s):
    by default one key split in two every step.
    """

    def step(carry: Any, t: Any) -> tuple[Any, Any]:
        key, state = carry
        key, reset_key = reset_keys(key, t)
        state = env.step(state, action_of(state, t))
        outputs = outputs_of(state)
        return (key, env.reset(key=reset_key, state=state, done=state.done)), outputs

    return scan_rollout(step, num_steps)


def rotating_legal_move(legal: Any, t: Any) -> Any:
    """The first legal move at or after a position that differs across envs and steps (identical for both sides)."""
    num_envs, num_moves = legal.shape
    offset = (t + jnp.arange(num_envs)[:, None]) % num_moves
    order = (jnp.arange(num_moves) + offset) % num_moves
    first = jnp.argmax(jnp.take_along_axis(legal, order, axis=1), axis=1)
    return jnp.take_along_axis(order, first[:, None], axis=1)[:, 0].astype(jnp.int32)


def pgx_cases(num_envs: int, num_steps: int) -> list[Case]:
    return [pgx_case(name, num_envs, num_steps) for name in ("connect_four", "go_9x9")]


def pgx_case(name: str, num_envs: int, num_steps: int) -> Case:
    import pgx

    from parallax.adapters.pgx import PgxAdapter

    game = pgx.make(name)
    adapter = PgxAdapter(game)
    players = jnp.arange(adapter.num_agents)

    def raw_step(carry: Any, t: Any) -> tuple[Any, Any]:
        key, state = carry
        key, step_key, reset_key = jax.random.split(key, 3)
        move = rotating_legal_move(state.legal_action_mask, t)
        state = jax.vmap(game.step)(state, move, jax.random.split(step_key, num_envs))
        outputs = (state.rewards, state.observation)
        fresh = jax.vmap(game.init)(jax.random.split(reset_key, num_envs))
        return (key, where_done(state.terminated | state.truncated, fresh, state)), outputs

    raw_state = jax.vmap(game.init)(jax.random.split(jax.random.key(0), num_envs))
    env = VmapWrapper(adapter, num_envs=num_envs)

    def action_of(state: Any, t: Any) -> Any:
        game_state = state.env_state
        move = rotating_legal_move(game_state.legal_action_mask, t)
        return jnp.where(players == game_state.current_player[:, None], move[:, None], adapter.no_op)

    def one_view(state: Any) -> Any:
        """The rewards and one observation per env (slot 0's), as much as the raw loop reads of Pgx's state."""
        return state.agents.reward, state.agents.observation[:, 0]

    ours = selective_rollout(env, action_of, one_view, num_steps)
    return Case(
        f"pgx {name} selective reset",
        num_envs,
        num_steps,
        (scan_rollout(raw_step, num_steps), (jax.random.key(1), raw_state)),
        (ours, (jax.random.key(1), env.reset(key=jax.random.key(0)))),
    )


def jumanji_cases(num_envs: int, num_steps: int) -> list[Case]:
    import jumanji

    from parallax.adapters.jumanji import JumanjiAdapter

    raw_env = jumanji.make("Snake-v1")
    adapter = JumanjiAdapter(raw_env)

    def raw_step(carry: Any, t: Any) -> tuple[Any, Any]:
        key, (state, timestep) = carry
        key, reset_key = jax.random.split(key)
        state, timestep = jax.vmap(raw_env.step)(state, alternating_actions(t, num_envs) % 4)
        outputs = (timestep.reward, timestep.observation)
        fresh = jax.vmap(raw_env.reset)(jax.random.split(reset_key, num_envs))
        return (key, where_done(timestep.last(), fresh, (state, timestep))), outputs

    raw_start = jax.vmap(raw_env.reset)(jax.random.split(jax.random.key(0), num_envs))
    env = VmapWrapper(adapter, num_envs=num_envs)
    ours = selective_rollout(
        env, lambda s, t: alternating_actions(t, num_envs) % 4, lambda s: (s.reward, s.observation), num_steps
    )
    return [
        Case(
            "jumanji Snake-v1 selective reset",
            num_envs,
            num_steps,
            (scan_rollout(raw_step, num_steps), (jax.random.key(1), raw_start)),
            (ours, (jax.random.key(1), env.reset(key=jax.random.key(0)))),
        )
    ]


def xminigrid_cases(num_envs: int, num_steps: int) -> list[Case]:
    import xminigrid

    from parallax.adapters.xminigrid import XMiniGridAdapter

    raw_env, params = xminigrid.make("MiniGrid-DoorKey-5x5")
    adapter = XMiniGridAdapter(raw_env, params)

    def actions(t: Any) -> Any:
        return ((t + jnp.arange(num_envs)) % 3).astype(jnp.int32)

    def raw_step(carry: Any, t: Any) -> tuple[Any, Any]:
        key, timestep = carry
        key, reset_key = jax.random.split(key)
        timestep = jax.vmap(raw_env.step, in_axes=(None, 0, 0))(params, timestep, actions(t))
        outputs = (timestep.reward, timestep.observation)
        fresh = jax.vmap(raw_env.reset, in_axes=(None, 0))(params, jax.random.split(reset_key, num_envs))
        return (key, where_done(timestep.last(), fresh, timestep)), outputs

    raw_start = jax.vmap(raw_env.reset, in_axes=(None, 0))(params, jax.random.split(jax.random.key(0), num_envs))
    env = VmapWrapper(adapter, num_envs=num_envs)
    ours = selective_rollout(env, lambda s, t: actions(t), lambda s: (s.reward, s.observation), num_steps)
    return [
        Case(
            "xminigrid MiniGrid-DoorKey-5x5 sel. reset",
            num_envs,
            num_steps,
            (scan_rollout(raw_step, num_steps), (jax.random.key(1), raw_start)),
            (ours, (jax.random.key(1), env.reset(key=jax.random.key(0)))),
        )
    ]


SUITE_CASES = {"pgx": pgx_cases, "jumanji": jumanji_cases, "xminigrid": xminigrid_cases}


def compile_seconds(rollout: Rollout, carry: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    compiled = rollout.lower(carry).compile()  # type: ignore[attr-defined]
    return compiled, time.perf_counter() - start


def flops(compiled: Any) -> float:
    """XLA's own count of the floating-point work in a compiled rollout: a measure the machine's load cannot skew."""
    analysis = compiled.cost_analysis()
    analysis = analysis[0] if isinstance(analysis, list) else analysis
    return float(analysis.get("flops", float("nan")))


def measure(case: Case, repetitions: int) -> dict[str, float]:
    """Compile both sides, warm them up, then time them alternately; medians in seconds."""
    raw_run, raw_compile = compile_seconds(*case.raw)
    ours_run, ours_compile = compile_seconds(*case.ours)
    runs = {"raw": (raw_run, case.raw[1]), "ours": (ours_run, case.ours[1])}
    for run, carry in runs.values():
        jax.block_until_ready(run(carry))
    times: dict[str, list[float]] = {"raw": [], "ours": []}
    cpu_times: dict[str, list[float]] = {"raw": [], "ours": []}
    for repetition in range(repetitions):
        order = ("raw", "ours") if repetition % 2 == 0 else ("ours", "raw")
        for side in order:
            run, carry = runs[side]
            start, cpu_start = time.perf_counter(), time.process_time()
            jax.block_until_ready(run(carry))
            times[side].append(time.perf_counter() - start)
            cpu_times[side].append(time.process_time() - cpu_start)
    return {
        "raw_s": statistics.median(times["raw"]),
        "ours_s": statistics.median(times["ours"]),
        "cpu_ratio": statistics.median(cpu_times["raw"]) / statistics.median(cpu_times["ours"]),
        "raw_compile_s": raw_compile,
        "ours_compile_s": ours_compile,
        "flops_ratio": flops(ours_run) / flops(raw_run),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and steps")
    families = ["gymnax", "brax", "mjx", "jaxmarl", "craftax", *SUITE_CASES]
    parser.add_argument("--skip", nargs="*", default=[], choices=families, help="families to leave out")
    parser.add_argument("--only", nargs="*", default=None, choices=families, help="run only these families")
    parser.add_argument(
        "--repetitions", type=int, default=None, help="interleaved repetitions (more on a loaded machine)"
    )
    args = parser.parse_args()
    repetitions, scale = (5, 0.25) if args.quick else (15, 1.0)
    repetitions = args.repetitions or repetitions
    warnings.filterwarnings("ignore")

    chosen = set(families if args.only is None else args.only) - set(args.skip)
    builders: list[Callable[[], list[Case]]] = []
    if "gymnax" in chosen:
        for num_envs, num_steps in ((1, 20000), (128, 4000), (1024, 1000)):
            builders.append(lambda n=num_envs, s=num_steps: gymnax_cases(n, max(1, int(s * scale))))
    if "jaxmarl" in chosen:
        for num_envs, num_steps in ((1, 4000), (128, 1000), (1024, 200)):
            builders.append(lambda n=num_envs, s=num_steps: [jaxmarl_case(n, max(1, int(s * scale)))])
    if "craftax" in chosen:
        for num_envs, num_steps in ((1, 400), (128, 100), (1024, 20)):
            builders.append(lambda n=num_envs, s=num_steps: [craftax_case(n, max(1, int(s * scale)))])
    if "brax" in chosen:
        builders.append(lambda: [brax_case(16, max(1, int(200 * scale)))])
    if "mjx" in chosen:
        builders.append(lambda: [playground_case(16, max(1, int(100 * scale)))])
    for family, cases in SUITE_CASES.items():
        if family in chosen:
            for num_envs, num_steps in ((1, 4000), (128, 1000), (1024, 250)):
                builders.append(lambda c=cases, n=num_envs, s=num_steps: c(n, max(1, int(s * scale))))

    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; {repetitions} interleaved repetitions, medians")
    header = (
        f"{'case':40} {'envs':>5} {'steps':>6} {'raw steps/s':>13} {'ours steps/s':>13} {'ratio':>6} {'cpu ratio':>9} "
        f"{'flops ours/raw':>14} {'compile raw/ours s':>19}"
    )
    print(header)
    print("-" * len(header))
    for build in builders:
        for case in build():
            result = measure(case, repetitions)
            env_steps = case.num_envs * case.num_steps
            raw_rate, ours_rate = env_steps / result["raw_s"], env_steps / result["ours_s"]
            print(
                f"{case.name:40} {case.num_envs:>5} {case.num_steps:>6} {raw_rate:>13,.0f} {ours_rate:>13,.0f} "
                f"{ours_rate / raw_rate:>6.3f} {result['cpu_ratio']:>9.3f} {result['flops_ratio']:>14.3f} "
                f"{result['raw_compile_s']:>9.1f}/{result['ours_compile_s']:<9.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
