"""PPO runs sharded over (simulated) devices: seeds split across a 4-device mesh (docs/scaling.md).

XLA's device count is fixed when jax starts, so the check runs in a fresh interpreter.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.compile_flags import cpu_devices_environment

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = textwrap.dedent(
    """
    import jax, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    from helpers.example_envs import GridWorld
    from parallax import TimeLimit
    from parallax_zoo.agents.ppo import PPOConfig, make_train

    assert len(jax.devices()) == 4, jax.devices()
    config = PPOConfig(num_envs=8, num_steps=32, total_timesteps=8 * 32 * 4)
    train = jax.jit(jax.vmap(make_train(config, TimeLimit(GridWorld(), 50))))
    keys = jax.random.split(jax.random.key(0), 4)
    mesh = Mesh(np.array(jax.devices()), ("seeds",))
    policy, metrics = train(jax.device_put(keys, NamedSharding(mesh, PartitionSpec("seeds"))))
    kernel = jax.tree_util.tree_leaves(policy.params)[0]
    assert kernel.sharding.spec == PartitionSpec("seeds"), kernel.sharding
    assert len(kernel.sharding.device_set) == 4
    _, single = train(keys)
    np.testing.assert_allclose(metrics["loss"], single["loss"], rtol=1e-5, atol=1e-6)
    print("sharded ok")
    """
)


@pytest.mark.slow
def test_seeds_shard_across_four_devices():
    env = cpu_devices_environment(4)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "sharded ok" in result.stdout
