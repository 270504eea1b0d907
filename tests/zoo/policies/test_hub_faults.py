"""Faults between us and the Hub, all real: servers on 127.0.0.1 that hang, refuse, drop mid-file or serve
wrong bytes; a read-only cache; a file swapped after its check; two processes racing on a tampered repo.

`hub:` policies are verified against the hashes the Hub itself reports at a pinned commit. Every wait is
bounded: the tests set `HF_HUB_DOWNLOAD_TIMEOUT` to 1 s so a hang costs seconds (the default bound is
checked by a slow test).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from helpers.hub_server import HubServer, SilentServer, closed_port_endpoint
from huggingface_hub import constants

import parallax_zoo
from parallax_zoo import evaluate, load_baseline
from parallax_zoo.agents.ppo import PPOConfig
from parallax_zoo.catalogue.pins import BaselinePin
from parallax_zoo.catalogue.registry import resolve
from parallax_zoo.policies import checkpoint
from parallax_zoo.policies.hub import BaselineIntegrityError, BaselineUnavailableError, HubError, fetch_baseline
from parallax_zoo.policies.loading import resolve_policy

POLICY_REPO = "someone/gridworld-policy"
ENV_ID = "GridWorld-v0"
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def hub_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HF_HOME, online, Xet off, and 1 s read timeouts; returns the Hub cache folder."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_DOWNLOAD_TIMEOUT", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setenv("PARALLAX_ZOO_BASELINES", str(tmp_path / "empty-mirror"))
    return tmp_path / "hf-home" / "hub"


@pytest.fixture
def server(tmp_path: Path, hub_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    running = HubServer(tmp_path / "hub-server").start()
    monkeypatch.setenv("HF_ENDPOINT", running.endpoint)
    yield running
    running.stop()


def policy_folder(folder: Path) -> Path:
    """A real GridWorld policy folder (config.yaml, model.safetensors) as `parallax-zoo train` writes one."""
    config = PPOConfig(env_id=ENV_ID, hidden_sizes=(8,))
    checkpoint.save(folder, checkpoint.initial_policy(config, parallax_zoo.make(ENV_ID)), config)
    return folder


@pytest.fixture
def policy_commit(server: HubServer, tmp_path: Path) -> str:
    return server.store.commit_folder(POLICY_REPO, policy_folder(tmp_path / "policy"))


def cached_files(cache: Path) -> list[Path]:
    return [path for path in cache.rglob("*") if path.is_file() or path.is_symlink()] if cache.exists() else []


# 1. hub: policies name a commit and are checked against the hashes the Hub reports


@pytest.mark.parametrize("revision", ["", "@main", "@v1.0", "@" + "A" * 40])
def test_a_hub_policy_must_name_a_commit(server: HubServer, policy_commit: str, revision: str) -> None:
    with pytest.raises(HubError, match="must name a commit.*a branch or tag moves"):
        resolve_policy(f"hub:{POLICY_REPO}{revision}", *resolve(ENV_ID))
    assert server.requests == []


def test_a_hub_policy_is_verified_and_its_provenance_recorded(
    server: HubServer, policy_commit: str, tmp_path: Path, hub_env: Path
) -> None:
    policy, name, provenance = resolve_policy(f"hub:{POLICY_REPO}@{policy_commit}", *resolve(ENV_ID))
    folder = tmp_path / "policy"
    expected = {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in ("config.yaml", "model.safetensors")}
    assert provenance == {"repo": POLICY_REPO, "commit": policy_commit, "files": expected}
    assert name == f"hub:{POLICY_REPO}@{policy_commit}"
    info = [r.path for r in server.requests if r.path.startswith("/api/models/")]
    assert info == [f"/api/models/{POLICY_REPO}/revision/{policy_commit}?blobs=true"], "the file hashes were asked for"
    saved = evaluate(ENV_ID, policy, name=name, provenance=provenance, episodes=4).save(tmp_path / "result.json")
    assert json.loads(saved.read_text())["provenance"] == provenance


@pytest.mark.parametrize("tampered", ["model.safetensors", "config.yaml"])
def test_a_hub_policy_with_wrong_bytes_is_refused_and_not_cached(
    server: HubServer, policy_commit: str, hub_env: Path, tampered: str
) -> None:
    server.store.corrupt(POLICY_REPO, tampered)
    kind = "sha256" if tampered.endswith(".safetensors") else "git blob id"
    with pytest.raises(BaselineIntegrityError, match=f"{tampered} downloaded .* has {kind} .* the Hub reports"):
        resolve_policy(f"hub:{POLICY_REPO}@{policy_commit}", *resolve(ENV_ID))
    leftovers = [p for p in cached_files(hub_env) if tampered in p.name or p.suffix == ".incomplete"]
    assert leftovers == []
    bad = hashlib.sha256(server.store.read_object(server.store.tree(POLICY_REPO, policy_commit)[tampered].sha256))
    assert bad.hexdigest() not in {
        hashlib.sha256(p.read_bytes()).hexdigest() for p in cached_files(hub_env) if p.is_file()
    }


# 2. the bytes that are hashed are the bytes that are parsed


def test_a_mirror_file_swapped_after_its_check_is_not_loaded(
    tmp_path: Path, hub_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = ROOT / "baselines" / "Race-v0"
    mirror = tmp_path / "mirror"
    shutil.copytree(shipped, mirror / "Race-v0")
    monkeypatch.setenv("PARALLAX_ZOO_BASELINES", str(mirror))
    pin = parallax_zoo.spec("Race-v0").baseline
    assert pin is not None
    weights = mirror / "Race-v0" / "model.safetensors"
    genuine = checkpoint.load_network(mirror / "Race-v0", parallax_zoo.make("Race-v0"))[0]
    other = checkpoint.initial_policy(
        checkpoint.load_config(mirror / "Race-v0" / "config.yaml"), parallax_zoo.make("Race-v0")
    )
    swap_in = tmp_path / "swap.safetensors"
    checkpoint.save_policy(other, swap_in)
    real_sha256 = hashlib.sha256

    class SwapAfterCheck:
        """hashlib.sha256 as is; the moment the pinned weights' digest is taken, the file on disk is swapped."""

        def __init__(self, *args: bytes) -> None:
            self._digest = real_sha256(*args)

        def update(self, data: bytes) -> None:
            self._digest.update(data)

        def hexdigest(self) -> str:
            digest = self._digest.hexdigest()
            if digest == pin.files["model.safetensors"]:
                shutil.copy(swap_in, weights)
            return digest

    monkeypatch.setattr(hashlib, "sha256", SwapAfterCheck)
    loaded = load_baseline("Race-v0")
    monkeypatch.setattr(hashlib, "sha256", real_sha256)
    assert weights.read_bytes() == swap_in.read_bytes(), "the swap happened after the check"
    for a, b in zip(checkpoint.flatten(loaded).values(), checkpoint.flatten(genuine).values(), strict=True):
        np.testing.assert_array_equal(a, b)


# 4. every wait is bounded, and the message names the endpoint, the cause and the way out


def test_a_hub_that_never_answers_fails_in_seconds(hub_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with SilentServer() as silent:
        monkeypatch.setenv("HF_ENDPOINT", silent.endpoint)
        started = time.monotonic()
        with pytest.raises(BaselineUnavailableError) as caught:
            load_baseline("Race-v0")
        elapsed = time.monotonic() - started
    message = str(caught.value)
    assert silent.endpoint in message and "timed out" in message
    assert "HF_HUB_OFFLINE=1" in message and "PARALLAX_ZOO_BASELINES" in message
    assert elapsed < 10, f"gave up after {elapsed:.1f} s with 1 s read timeouts"
    assert silent.connections <= 3


@pytest.mark.slow
def test_a_hub_that_never_answers_fails_within_30_s_by_default(hub_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_DOWNLOAD_TIMEOUT")
    with SilentServer() as silent:
        monkeypatch.setenv("HF_ENDPOINT", silent.endpoint)
        started = time.monotonic()
        with pytest.raises(BaselineUnavailableError, match="timed out"):
            load_baseline("Race-v0")
        assert time.monotonic() - started < 30


def test_a_closed_port_is_refused_in_seconds(hub_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    closed = closed_port_endpoint()
    monkeypatch.setenv("HF_ENDPOINT", closed)
    started = time.monotonic()
    with pytest.raises(BaselineUnavailableError) as caught:
        load_baseline("Race-v0")
    assert time.monotonic() - started < 10
    message = str(caught.value)
    assert closed in message and "connection refused" in message and "HF_HUB_OFFLINE=1" in message


def test_a_download_dropped_mid_file_fails_and_leaves_nothing(server: HubServer, hub_env: Path, tmp_path: Path) -> None:
    folder = policy_folder(tmp_path / "weights")
    commit = server.store.commit_folder("parallax-zoo/Race-v0", folder)
    pin = BaselinePin(
        "parallax-zoo/Race-v0",
        commit,
        {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in ("model.safetensors",)},
    )
    server.drop_downloads_after(16)
    started = time.monotonic()
    with pytest.raises(BaselineUnavailableError, match="dropped mid-transfer") as caught:
        fetch_baseline(pin, None)
    assert time.monotonic() - started < 15
    assert server.endpoint in str(caught.value)
    assert [p for p in cached_files(hub_env) if "blobs" in p.parts or "snapshots" in p.parts] == []


def run_eval_cli(
    policy: str, extra_env: dict[str, str], timeout_s: float
) -> tuple[subprocess.CompletedProcess[str], float]:
    """`parallax-zoo eval GridWorld-v0 --policy POLICY` as a user runs it, in a real process; its outcome and wall
    time."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_DISABLE_XET": "1", **extra_env}
    started = time.monotonic()
    process = subprocess.run(
        [str(Path(sys.executable).parent / "parallax-zoo"), "eval", ENV_ID, "--policy", policy],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    return process, time.monotonic() - started


def test_a_hub_that_sends_a_byte_at_a_time_stops_at_the_file_deadline(
    server: HubServer, policy_commit: str, hub_env: Path
) -> None:
    """Each read gets a byte well within the 1 s read timeout, so only a total deadline per file ends the wait."""
    server.drip_downloads(0.05)
    process, elapsed = run_eval_cli(f"hub:{POLICY_REPO}@{policy_commit}", {"PARALLAX_ZOO_HUB_FILE_DEADLINE": "2"}, 60)
    assert process.returncode == 2, process.stderr
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in process.stderr, process.stderr
    assert "deadline of 2 s per file" in lines[0] and "PARALLAX_ZOO_HUB_FILE_DEADLINE" in lines[0]
    assert server.endpoint in lines[0]
    assert elapsed < 30, f"the eval gave up after {elapsed:.1f} s with a 2 s deadline"
    assert [p for p in cached_files(hub_env) if p.suffix == ".incomplete"] == []


def test_a_hub_that_sends_its_headers_a_byte_at_a_time_stops_at_the_file_deadline(
    server: HubServer, policy_commit: str, hub_env: Path
) -> None:
    """The status line and headers trickle in too: the deadline holds before any byte of the file arrives."""
    server.drip_headers(0.2)
    process, elapsed = run_eval_cli(f"hub:{POLICY_REPO}@{policy_commit}", {"PARALLAX_ZOO_HUB_FILE_DEADLINE": "2"}, 60)
    assert process.returncode == 2, process.stderr
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and "deadline of 2 s per file" in lines[0], process.stderr
    assert elapsed < 15, f"the eval gave up after {elapsed:.1f} s with a 2 s deadline (the headers alone take a minute)"


def test_a_hub_file_over_the_size_cap_is_refused_before_it_is_read(
    server: HubServer, policy_commit: str, hub_env: Path, tmp_path: Path
) -> None:
    """The cap is set below the real weights' size here, as the default 64 MiB cap refuses a 2 GB model.safetensors."""
    size = (tmp_path / "policy" / "model.safetensors").stat().st_size
    cap_mb = 1 / 1024
    assert size > 1024
    process, _ = run_eval_cli(f"hub:{POLICY_REPO}@{policy_commit}", {"PARALLAX_ZOO_HUB_MAX_FILE_MB": str(cap_mb)}, 60)
    assert process.returncode == 2, process.stderr
    message = process.stderr.strip()
    assert "Traceback" not in message and len(message.splitlines()) == 1, message
    assert f"model.safetensors of {POLICY_REPO}@{policy_commit}" in message
    assert f"the server announces {size:,} bytes for it, over the cap of 1,024 bytes per file" in message
    assert "PARALLAX_ZOO_HUB_MAX_FILE_MB=0.000976562 MiB" in message and "nothing was read" in message
    assert not [r for r in server.file_downloads() if r.path.endswith("model.safetensors")], (
        "no byte of it was asked for"
    )
    assert [p for p in cached_files(hub_env) if "model.safetensors" in p.name or p.suffix == ".incomplete"] == []


# 6. a tampered file in a cache that cannot be written


def _freeze(folder: Path) -> None:
    """Make `folder`'s entries impossible to remove, even for root (the immutable attribute), else by permissions."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
    elif subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("running as root on a filesystem without chattr +i: no way to make the cache read-only")


def _thaw(folder: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
    else:
        folder.chmod(0o755)


def test_a_tampered_file_in_a_read_only_cache_is_reported_honestly(
    server: HubServer, hub_env: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = policy_folder(tmp_path / "weights")
    commit = server.store.commit_folder("parallax-zoo/Race-v0", folder)
    pin = BaselinePin(
        "parallax-zoo/Race-v0",
        commit,
        {
            name: hashlib.sha256((folder / name).read_bytes()).hexdigest()
            for name in ("config.yaml", "model.safetensors")
        },
    )
    snapshot = fetch_baseline(pin, None)
    (snapshot / "config.yaml").resolve().write_text("algorithm: tampered\n")
    frozen = [snapshot, snapshot.parent.parent / "blobs"]
    for each in frozen:
        _freeze(each)
    try:
        with caplog.at_level(logging.WARNING), pytest.raises(BaselineIntegrityError) as caught:
            fetch_baseline(pin, None)
    finally:
        for each in frozen:
            _thaw(each)
    message = str(caught.value)
    assert "config.yaml" in message and "could NOT be removed" in message and "HF_HUB_CACHE" in message
    assert not [r for r in caplog.records if "removed" in r.getMessage()], "no log claims a removal that failed"
    assert (snapshot / "config.yaml").read_text() == "algorithm: tampered\n"


# 10. two processes refusing the same tampered download


RACER = """
import sys
from parallax_zoo.catalogue.pins import BaselinePin
from parallax_zoo.policies.hub import BaselineIntegrityError, BaselineUnavailableError, fetch_baseline
pin = BaselinePin.from_dict(__import__("json").loads(sys.argv[1]))
try:
    fetch_baseline(pin, None)
except (BaselineIntegrityError, BaselineUnavailableError) as error:
    print(type(error).__name__)
"""


def test_two_processes_refusing_one_tampered_file_both_say_so(server: HubServer, hub_env: Path, tmp_path: Path) -> None:
    folder = policy_folder(tmp_path / "weights")
    commit = server.store.commit_folder("parallax-zoo/Race-v0", folder)
    files = {
        name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in ("config.yaml", "model.safetensors")
    }
    server.store.corrupt("parallax-zoo/Race-v0", "model.safetensors")
    pin = json.dumps({"repo_id": "parallax-zoo/Race-v0", "revision": commit, "files": files})
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_DISABLE_XET": "1"}
    for _ in range(1):
        racers = [
            subprocess.Popen(
                [sys.executable, "-c", RACER, pin], env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            for _ in range(2)
        ]
        outcomes = [racer.communicate(timeout=120) for racer in racers]
        for (out, err), racer in zip(outcomes, racers, strict=True):
            assert racer.returncode == 0 and "Traceback" not in err, err
            assert out.strip() in ("BaselineIntegrityError", "BaselineUnavailableError")
    assert not [p for p in cached_files(hub_env) if p.name == "model.safetensors" or p.suffix == ".incomplete"]
