"""The env batch split across a 4-device mesh (docs/scaling.md): same results, and really split.

XLA's device count is fixed when jax starts, so the checks run in one fresh
interpreter with `--xla_force_host_platform_device_count=4`. What holds
exactly and what only within float rounding was measured, not assumed: env
states, sampled actions and evaluation scores are bit-identical; network
outputs and training differ by float32 rounding only, because matmuls run on
smaller batches and sums over the env batch are added in a different order.
"""

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import numpy as np
import pytest
from helpers.compile_flags import cpu_devices_environment
from helpers.example_envs import GridWorld
from jax.sharding import Mesh

from parallax import TimeLimit
from parallax_zoo.agents import PPOConfig, ppo
from parallax_zoo.agents.sharding import check_divisible, default_mesh, device_rows

ROOT = Path(__file__).resolve().parents[3]

SETUP = textwrap.dedent(
    """
    import dataclasses
    import jax, numpy as np
    from jax.sharding import PartitionSpec
    from helpers.example_envs import GridWorld
    from parallax import TimeLimit
    from parallax_zoo.agents.policy import Policy, actor_critic_for
    from parallax_zoo.agents.ppo import PPOConfig, make_train, vector_env
    from parallax_zoo.agents.rollout import collect
    from parallax_zoo.agents.sharding import default_mesh, device_rows
    from parallax_zoo import evaluate

    def leaves_equal(a, b):
        as_data = lambda x: jax.random.key_data(x) if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key) else x
        pairs = zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True)
        return all(np.array_equal(as_data(x), as_data(y)) for x, y in pairs)

    assert len(jax.devices()) == 4, jax.devices()
    mesh = default_mesh()
    env = TimeLimit(GridWorld(), 50)
    config = PPOConfig(num_envs=8, num_steps=16, total_timesteps=8 * 16 * 3, num_minibatches=2, update_epochs=2)
    """
)

TRAINING_AND_ROLLOUT = textwrap.dedent(
    """
    # Training: same params and metrics as the unsharded run, within float32 rounding; params replicated.
    single_policy, single = jax.jit(make_train(config, env))(jax.random.key(0))
    sharded_policy, sharded = jax.jit(make_train(config, env, mesh))(jax.random.key(0))
    assert np.array_equal(single["episodes"], sharded["episodes"]), (single["episodes"], sharded["episodes"])
    for name in single:
        np.testing.assert_allclose(sharded[name], single[name], rtol=1e-5, atol=1e-6, err_msg=name)
    for ours, theirs in zip(
        jax.tree_util.tree_leaves(sharded_policy.params), jax.tree_util.tree_leaves(single_policy.params)
    ):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
        assert ours.sharding.spec == PartitionSpec() and len(ours.sharding.device_set) == 4, ours.sharding
    print("training ok")

    # Rollout: each device holds num_envs / 4 envs of the state and trajectory. Everything the env computes
    # and every sampled action is bit-identical to unsharded; the critic's values and the log-probabilities differ
    # by float rounding (a [2, 64] matmul per device against one [8, 64] matmul).
    vec_env = vector_env(env, config.num_envs)
    def rollout(key, mesh):
        reset_key, play_key = jax.random.split(key)
        return collect(vec_env, single_policy, vec_env.reset(key=reset_key), play_key, 20, mesh)
    state, trajectory = jax.jit(lambda k: rollout(k, mesh))(jax.random.key(1))
    plain_state, plain_trajectory = jax.jit(lambda k: rollout(k, None))(jax.random.key(1))
    for leaf in jax.tree_util.tree_leaves(state):
        rows = device_rows(leaf)
        assert len(rows) == 4 and set(rows.values()) == {2}, (leaf.shape, rows)
    assert trajectory.action.sharding.spec == PartitionSpec(None, "envs"), trajectory.action.sharding
    assert set(device_rows(trajectory.action.swapaxes(0, 1)).values()) == {2}
    assert leaves_equal(state, plain_state)
    critic = ("value", "bootstrap_value", "log_prob")  # what the network computes: float rounding apart
    for name in critic:
        np.testing.assert_allclose(getattr(trajectory, name), getattr(plain_trajectory, name), rtol=1e-6, atol=1e-6)
    assert leaves_equal(
        dataclasses.replace(trajectory, **{name: None for name in critic}),
        dataclasses.replace(plain_trajectory, **{name: None for name in critic}),
    )
    print("rollout ok")


    # A batch that does not split evenly is refused with the fix in the message.
    try:
        make_train(PPOConfig(num_envs=6, num_steps=16, total_timesteps=6 * 16), env, mesh)
    except ValueError as error:
        assert "6 envs cannot be split evenly across 4 devices" in str(error), error
    else:
        raise AssertionError("num_envs=6 on 4 devices was accepted")
    print("divisibility ok")
    """
)

EVALUATION = textwrap.dedent(
    """
    # Evaluation with a mesh: identical scores, single-agent and head-to-head.
    grid_policy = Policy(actor_critic_for(env), actor_critic_for(env).init(jax.random.key(2)))
    assert evaluate("GridWorld-v0", grid_policy, mesh=mesh).scores == evaluate("GridWorld-v0", grid_policy).scores
    import parallax_zoo
    board = parallax_zoo.make("TicTacToe-v0")
    board_policy = Policy(actor_critic_for(board), actor_critic_for(board).init(jax.random.key(3)))
    board_sharded = evaluate("TicTacToe-v0", board_policy, baseline=board_policy, mesh=mesh)
    board_single = evaluate("TicTacToe-v0", board_policy, baseline=board_policy)
    assert board_sharded.scores == board_single.scores and board_sharded.opponents == board_single.opponents
    print("evaluation ok")
    """
)


def run_on_four_devices(script: str) -> str:
    """Run `script` in a fresh interpreter that sees four CPU devices; return its output."""
    env = cpu_devices_environment(4)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result.stdout


@pytest.mark.slow  # a mesh of four devices, compiled in a fresh process (20 s on two cores)
def test_env_batch_shards_across_four_devices():
    output = run_on_four_devices(SETUP + TRAINING_AND_ROLLOUT)
    for stage in ("training", "rollout", "divisibility"):
        assert f"{stage} ok" in output, output


@pytest.mark.slow  # compiles evaluation four times, single-agent and head-to-head, with and without the mesh
def test_evaluation_on_four_devices_scores_as_unsharded():
    output = run_on_four_devices(SETUP + EVALUATION)
    assert "evaluation ok" in output, output


TWO_HOSTS = textwrap.dedent(
    """
    import sys, jax, numpy as np
    jax.distributed.initialize(coordinator_address=sys.argv[1], num_processes=2, process_id=int(sys.argv[2]))
    from helpers.example_envs import GridWorld
    from parallax import TimeLimit
    from parallax_zoo.agents.ppo import PPOConfig, train
    from parallax_zoo.agents.sharding import default_mesh

    assert len(jax.devices()) == 4 and len(jax.local_devices()) == 2
    config = PPOConfig(num_envs=8, num_steps=16, total_timesteps=8 * 16 * 3, num_minibatches=2, update_epochs=2)
    _, metrics = train(config, jax.random.key(0), TimeLimit(GridWorld(), 50), mesh=default_mesh())
    print("loss", np.asarray(metrics["loss"]).tolist())
    """
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
def test_two_processes_train_as_one_run():
    """The documented multi-host launch, as two local processes of 2 CPU devices each: one run, unsharded result."""
    env = cpu_devices_environment(2)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    coordinator = f"localhost:{free_port()}"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", TWO_HOSTS, coordinator, str(index)],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index in range(2)
    ]
    outputs = [process.communicate(timeout=300) for process in processes]
    assert all(process.returncode == 0 for process in processes), [err[-2000:] for _, err in outputs]
    losses = [json.loads(out.split("loss", 1)[1]) for out, _ in outputs]
    assert losses[0] == losses[1]

    config = PPOConfig(num_envs=8, num_steps=16, total_timesteps=8 * 16 * 3, num_minibatches=2, update_epochs=2)
    _, single = ppo.train(config, jax.random.key(0), TimeLimit(GridWorld(), 50))
    np.testing.assert_allclose(losses[0], single["loss"], rtol=1e-5, atol=1e-6)


MAPPO_SELF_PLAY = textwrap.dedent(
    """
    import jax, numpy as np
    import parallax_zoo
    from parallax_zoo.agents.mappo import MAPPOConfig, make_train
    from parallax_zoo.agents.sharding import default_mesh

    config = MAPPOConfig(
        num_envs=8, num_steps=12, total_timesteps=8 * 12 * 2, num_minibatches=2, update_epochs=1,
        self_play=True, snapshots=2, eval_episodes=8, eval_max_steps=10,
    )
    env = parallax_zoo.make("TicTacToe-v0")
    _, single = jax.jit(make_train(config, env))(jax.random.key(0))
    _, sharded = jax.jit(make_train(config, env, default_mesh()))(jax.random.key(0))
    for name in ("loss", "policy_loss", "value_loss", "entropy", "episode_return"):
        np.testing.assert_allclose(sharded[name], single[name], rtol=1e-5, atol=1e-6, err_msg=name)
    for ours, theirs in zip(jax.tree_util.tree_leaves(sharded["eval"]), jax.tree_util.tree_leaves(single["eval"])):
        np.testing.assert_array_equal(ours, theirs)
    print("mappo ok")
    """
)


@pytest.mark.slow
def test_mappo_self_play_with_a_mesh_matches_unsharded():
    """MAPPO with self-play evaluation on 4 devices: losses within float rounding, evaluation results identical."""
    env = cpu_devices_environment(4)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, "-c", MAPPO_SELF_PLAY], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "mappo ok" in result.stdout


def test_default_mesh_spans_the_given_devices():
    mesh = default_mesh(jax.devices()[:1])
    assert mesh.axis_names == ("envs",) and mesh.devices.tolist() == jax.devices()[:1]
    with pytest.raises(ValueError, match="empty device list"):
        default_mesh([])


def test_mesh_without_envs_axis_is_refused():
    with pytest.raises(ValueError, match="axis named 'envs'"):
        check_divisible(4, Mesh(np.array(jax.devices()[:1]), ("batch",)), "make_train")


def test_device_rows_counts_each_devices_share():
    array = jax.device_put(jax.numpy.zeros((6, 2)), jax.devices()[0])
    assert device_rows(array) == {jax.devices()[0]: 6}
