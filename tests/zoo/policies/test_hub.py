"""Baselines to and from the Hub (docs/evaluation.md), driven through the real huggingface_hub client.

Every download and push goes over HTTP to `tests/helpers/hub_server.py` on 127.0.0.1. `parallax_zoo.policies.hub`
reads HF_ENDPOINT, HF_HUB_OFFLINE and HF_HOME when called, so the tests set them with
monkeypatch. huggingface_hub reads HF_HUB_DISABLE_XET only at import, as the module constant
`constants.HF_HUB_DISABLE_XET` that `is_xet_available()` looks up at call time: the tests patch
that constant so uploads take the LFS path the test server implements instead of Xet storage.
"""

from __future__ import annotations

import hashlib
import http.server
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import yaml
from helpers.hub_server import HubServer
from huggingface_hub import HfApi, ModelCard, ModelCardData, constants, metadata_load
from PIL import Image
from safetensors.numpy import load_file, save_file

from parallax_zoo.atomic import write_text_atomic
from parallax_zoo.baselines.model_card import model_card
from parallax_zoo.catalogue.pins import BaselinePin, BaselinePinError, format_pin
from parallax_zoo.policies.hub import (
    BaselineIntegrityError,
    BaselineUnavailableError,
    HubError,
    fetch_baseline,
    push_baseline,
)

REPO = "parallax-zoo/Race-v0"
ENV_ID = "Race-v0"


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_baseline(folder: Path, scale: float) -> Path:
    """A small baseline folder: real safetensors weights, a config and a model card."""
    folder.mkdir(parents=True, exist_ok=True)
    weights = {
        "actor/kernel": (np.arange(24, dtype=np.float32).reshape(4, 6) * scale),
        "actor/bias": np.full((6,), scale, dtype=np.float32),
    }
    save_file(weights, str(folder / "model.safetensors"))
    (folder / "config.yaml").write_text(yaml.safe_dump({"algorithm": "MAPPO", "lr": 3e-4 * scale}))
    (folder / "README.md").write_text(model_card(ENV_ID, "MAPPO", 1.5 * scale, 0.25, 32))
    Image.new("RGB", (8, 4), (int(40 * scale) % 256, 90, 200)).save(folder / "curve.png")
    return folder


def pin_of(folder: Path, revision: str = "main", repo_id: str = REPO) -> BaselinePin:
    files = {path.name: sha256_of(path) for path in folder.iterdir()}
    return BaselinePin(repo_id=repo_id, revision=revision, files=files)


def cache_files(root: Path) -> list[Path]:
    """Every regular file under the Hub cache (links not followed)."""
    return [path for path in root.rglob("*") if path.is_file() and not path.is_symlink()]


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    """A Hub-compatible server on 127.0.0.1, with HF_ENDPOINT and an empty HF_HOME pointing the client at it."""
    server = HubServer(tmp_path / "hub-server").start()
    monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setenv("HF_TOKEN", "test-token")  # so a token stored on this machine is never sent
    yield server
    server.stop()


@pytest.fixture
def seeded(hub: HubServer, tmp_path: Path) -> tuple[HubServer, Path, str]:
    """The server holding one commit of a baseline folder; returns the server, the folder and the commit id."""
    folder = write_baseline(tmp_path / "seed", scale=1.0)
    commit_id = hub.store.commit_folder(REPO, folder)
    return hub, folder, commit_id


def hf_cache(tmp_path: Path) -> Path:
    return tmp_path / "hf-home" / "hub"


# Pins


def test_pin_round_trips_through_registry_yaml(tmp_path: Path) -> None:
    pin = pin_of(write_baseline(tmp_path / "b", 1.0), revision="0123456789abcdef0123456789abcdef01234567")
    assert BaselinePin.from_dict(pin.to_dict()) == pin
    pasted = yaml.safe_load(format_pin(pin))
    assert BaselinePin.from_dict(pasted["baseline"]) == pin
    assert hash(BaselinePin.from_dict(pasted["baseline"])) == hash(pin)
    assert pin.is_commit and not BaselinePin(REPO, "main", pin.files).is_commit


def test_pin_yaml_keeps_hex_that_looks_like_a_number() -> None:
    pin = BaselinePin(REPO, "1234567890" * 4, {"model.safetensors": "0" * 64, "config.yaml": "1" * 63 + "e"})
    assert BaselinePin.from_dict(yaml.safe_load(format_pin(pin))["baseline"]) == pin


GOOD_SHA = "a" * 64


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"repo_id": "Race-v0"}, "'Race-v0'"),
        ({"repo_id": "a/b/c"}, "'a/b/c'"),
        ({"revision": "v1.0"}, "'v1.0'"),
        ({"revision": "A" * 40}, "'" + "A" * 40 + "'"),
        ({"revision": "a" * 39}, "'" + "a" * 39 + "'"),
        ({"files": {}}, "lists no files"),
        ({"files": {"model.safetensors": "A" * 64}}, "'" + "A" * 64 + "'"),
        ({"files": {"model.safetensors": "a" * 63}}, "'" + "a" * 63 + "'"),
        ({"files": {"model.safetensors": 123}}, "123"),
        ({"files": {"../model.safetensors": GOOD_SHA}}, "'../model.safetensors'"),
        ({"files": {"/etc/model.safetensors": GOOD_SHA}}, "'/etc/model.safetensors'"),
    ],
)
def test_pin_validation_names_the_bad_value(fields: dict[str, object], named: str) -> None:
    data: dict[str, object] = {"repo_id": REPO, "revision": "main", "files": {"model.safetensors": GOOD_SHA}} | fields
    with pytest.raises(BaselinePinError, match=re.escape(named)):
        BaselinePin.from_dict(data)


def test_pin_from_dict_rejects_unknown_and_missing_keys() -> None:
    with pytest.raises(BaselinePinError, match=r"unknown keys \['sha'\]"):
        BaselinePin.from_dict({"repo_id": REPO, "files": {"model.safetensors": GOOD_SHA}, "sha": "x"})
    with pytest.raises(BaselinePinError, match="needs repo_id and files"):
        BaselinePin.from_dict({"repo_id": REPO})


@pytest.mark.parametrize("weights", ["model.bin", "pytorch_model.pt", "policy.pkl", "last.ckpt"])
def test_pin_refuses_pickle_weights(weights: str) -> None:
    with pytest.raises(BaselinePinError, match="safetensors only"):
        BaselinePin(REPO, "main", {weights: GOOD_SHA})


# Fetching


def test_download_through_hf_endpoint(seeded: tuple[HubServer, Path, str], tmp_path: Path) -> None:
    server, folder, commit_id = seeded
    pin = pin_of(folder)
    fetched = fetch_baseline(pin, tmp_path / "mirror" / ENV_ID)
    assert fetched.parent.parent.parent == hf_cache(tmp_path)
    assert fetched.name == commit_id
    for name in pin.files:
        assert (fetched / name).read_bytes() == (folder / name).read_bytes()
    np.testing.assert_array_equal(load_file(str(fetched / "model.safetensors"))["actor/bias"], np.ones(6, np.float32))
    first, *others = pin.files
    expected = [f"/{REPO}/resolve/main/{first}"] + [f"/{REPO}/resolve/{commit_id}/{name}" for name in others]
    assert [request.path for request in server.file_downloads()] == expected, (
        "the first file resolves main, the others are fetched at the commit main pointed at"
    )


def test_download_at_pinned_commit(seeded: tuple[HubServer, Path, str], tmp_path: Path) -> None:
    server, folder, first_commit = seeded
    pin = pin_of(folder, revision=first_commit)
    newer = server.store.commit_folder(REPO, write_baseline(tmp_path / "newer", scale=2.0))
    assert newer != first_commit and server.store.resolve(REPO, "main") == newer
    fetched = fetch_baseline(pin, None)
    assert fetched.name == first_commit
    assert {name: sha256_of(fetched / name) for name in pin.files} == dict(pin.files)
    assert all(f"/resolve/{first_commit}/" in request.path for request in server.file_downloads())


def test_tampered_download_is_refused_and_not_kept(seeded: tuple[HubServer, Path, str], tmp_path: Path) -> None:
    server, folder, commit_id = seeded
    pin = pin_of(folder, revision=commit_id)
    server.store.corrupt(REPO, "model.safetensors")
    tampered_sha = hashlib.sha256(server.store.read_object(pin.files["model.safetensors"])).hexdigest()
    mirror = tmp_path / "mirror" / ENV_ID
    with pytest.raises(BaselineIntegrityError) as caught:
        fetch_baseline(pin, mirror)
    message = str(caught.value)
    assert "model.safetensors" in message and pin.files["model.safetensors"] in message and tampered_sha in message
    assert (caught.value.expected, caught.value.found) == (pin.files["model.safetensors"], tampered_sha)
    kept = cache_files(hf_cache(tmp_path))
    assert tampered_sha not in {sha256_of(path) for path in kept}
    assert not [path for path in kept if path.name.endswith((".incomplete", ".tmp"))]
    assert not list(hf_cache(tmp_path).rglob("snapshots/*/model.safetensors"))
    assert not mirror.exists()


def test_tampered_mirror_is_refused_and_left_untouched(seeded: tuple[HubServer, Path, str], tmp_path: Path) -> None:
    server, folder, commit_id = seeded
    pin = pin_of(folder, revision=commit_id)
    mirror = write_baseline(tmp_path / "mirror" / ENV_ID, scale=1.0)
    (mirror / "config.yaml").write_text("algorithm: edited by hand\n")
    edited = (mirror / "config.yaml").read_bytes()
    with pytest.raises(BaselineIntegrityError, match="local mirror") as caught:
        fetch_baseline(pin, mirror)
    assert caught.value.filename == "config.yaml"
    assert caught.value.found == hashlib.sha256(edited).hexdigest() and caught.value.found in str(caught.value)
    assert (mirror / "config.yaml").read_bytes() == edited
    assert server.requests == []


def test_mirror_first_makes_no_request(seeded: tuple[HubServer, Path, str], tmp_path: Path) -> None:
    server, folder, commit_id = seeded
    mirror = write_baseline(tmp_path / "mirror" / ENV_ID, scale=1.0)
    assert fetch_baseline(pin_of(folder, revision=commit_id), mirror) == mirror
    assert server.requests == []


def test_mirror_with_git_lfs_pointer_falls_back_to_the_hub(seeded: tuple[HubServer, Path, str], tmp_path: Path) -> None:
    server, folder, commit_id = seeded
    pin = pin_of(folder, revision=commit_id)
    mirror = write_baseline(tmp_path / "mirror" / ENV_ID, scale=1.0)
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{pin.files['model.safetensors']}\nsize 1\n"
    (mirror / "model.safetensors").write_text(pointer)
    fetched = fetch_baseline(pin, mirror)
    assert fetched.name == commit_id and sha256_of(fetched / "model.safetensors") == pin.files["model.safetensors"]
    assert (mirror / "model.safetensors").read_text() == pointer


@pytest.mark.parametrize("revision", ["main", "commit"])
def test_cache_second_makes_no_request(seeded: tuple[HubServer, Path, str], tmp_path: Path, revision: str) -> None:
    server, folder, commit_id = seeded
    pin = pin_of(folder, revision=commit_id if revision == "commit" else "main")
    first = fetch_baseline(pin, None)
    answered = len(server.requests)
    assert len(server.file_downloads()) == len(pin.files)
    assert fetch_baseline(pin, tmp_path / "empty-mirror") == first
    assert len(server.requests) == answered


def test_corrupted_cache_is_replaced_by_a_verified_download(
    seeded: tuple[HubServer, Path, str], tmp_path: Path
) -> None:
    server, folder, commit_id = seeded
    pin = pin_of(folder, revision=commit_id)
    first = fetch_baseline(pin, None)
    blob = (first / "config.yaml").resolve()
    blob.write_text("algorithm: bit rot\n")
    again = fetch_baseline(pin, None)
    assert sha256_of(again / "config.yaml") == pin.files["config.yaml"]
    assert [request.path for request in server.file_downloads()].count(f"/{REPO}/resolve/{commit_id}/config.yaml") == 2


@pytest.mark.parametrize("how", ["environment", "import-time constant"])
def test_offline_with_nothing_cached_names_the_variable_and_mirror(
    seeded: tuple[HubServer, Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    server, folder, commit_id = seeded
    if how == "environment":
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    else:
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    mirror = tmp_path / "mirror" / ENV_ID
    with pytest.raises(BaselineUnavailableError) as caught:
        fetch_baseline(pin_of(folder, revision=commit_id), mirror)
    assert "HF_HUB_OFFLINE" in str(caught.value) and str(mirror) in str(caught.value)
    assert "parallax-zoo download" in str(caught.value)
    assert server.requests == []


def test_offline_uses_the_cache(seeded: tuple[HubServer, Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    server, folder, _ = seeded
    pin = pin_of(folder)
    fetched = fetch_baseline(pin, None)
    answered = len(server.requests)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert fetch_baseline(pin, None) == fetched
    assert len(server.requests) == answered


def test_missing_repo_error_names_endpoint_and_repo(hub: HubServer, tmp_path: Path) -> None:
    pin = BaselinePin("parallax-zoo/Nowhere-v0", "main", {"model.safetensors": GOOD_SHA})
    with pytest.raises(BaselineUnavailableError) as caught:
        fetch_baseline(pin, None)
    assert hub.endpoint in str(caught.value) and "HF_ENDPOINT" in str(caught.value)
    assert "parallax-zoo/Nowhere-v0" in str(caught.value)


class _NotAHubHandler(http.server.BaseHTTPRequestHandler):
    """Answers every request with a plain 200 page, as a misconfigured proxy or web server would."""

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD

    def log_message(self, format: str, *args: object) -> None:
        """Keep test output quiet."""


def test_endpoint_that_is_not_a_hub_error_names_it(
    seeded: tuple[HubServer, Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, folder, commit_id = seeded
    not_a_hub = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotAHubHandler)
    thread = threading.Thread(target=not_a_hub.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{not_a_hub.server_address[1]}"
        monkeypatch.setenv("HF_ENDPOINT", endpoint)
        with pytest.raises(BaselineUnavailableError, match="HF_ENDPOINT") as caught:
            fetch_baseline(pin_of(folder, revision=commit_id), None)
        assert endpoint in str(caught.value) and REPO in str(caught.value)
    finally:
        not_a_hub.shutdown()
        not_a_hub.server_close()
        thread.join()


def test_unreachable_endpoint_error_names_it(
    seeded: tuple[HubServer, Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, folder, commit_id = seeded
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    monkeypatch.setenv("HF_ENDPOINT", closed)
    with pytest.raises(BaselineUnavailableError, match="HF_ENDPOINT") as caught:
        fetch_baseline(pin_of(folder, revision=commit_id), None)
    assert closed in str(caught.value) and REPO in str(caught.value) and "connection refused" in str(caught.value)


# Pushing


def test_push_round_trip(hub: HubServer, tmp_path: Path) -> None:
    folder = write_baseline(tmp_path / "trained", scale=3.0)
    pin = push_baseline(folder, "parallax-zoo/Pushed-v0", token="test-token")
    assert pin.is_commit and hub.store.resolve("parallax-zoo/Pushed-v0", "main") == pin.revision
    names = ("README.md", "config.yaml", "curve.png", "model.safetensors")
    assert dict(pin.files) == {name: sha256_of(folder / name) for name in names}
    lfs_uploads = {request.path for request in hub.requests if request.method == "PUT"}
    assert lfs_uploads == {f"/lfs-upload/{pin.files[name]}" for name in ("curve.png", "model.safetensors")}
    assert HfApi(endpoint=hub.endpoint).model_info("parallax-zoo/Pushed-v0").sha == pin.revision
    unchanged = push_baseline(folder, "parallax-zoo/Pushed-v0", token="test-token")
    assert unchanged == pin, "pushing an unchanged folder makes no new commit"

    (folder / "config.yaml").write_text("algorithm: MAPPO\nlr: 0.001\n")
    updated = push_baseline(folder, "parallax-zoo/Pushed-v0", token="test-token")
    assert updated.revision != pin.revision and updated.files["config.yaml"] != pin.files["config.yaml"]
    for current in (pin, updated):
        fetched = fetch_baseline(current, None)
        assert fetched.name == current.revision
        assert {name: sha256_of(fetched / name) for name in current.files} == dict(current.files)


def test_push_refuses_pickle_weights(hub: HubServer, tmp_path: Path) -> None:
    folder = write_baseline(tmp_path / "trained", scale=1.0)
    (folder / "model.pt").write_bytes(b"pickle")
    with pytest.raises(HubError, match="safetensors only") as caught:
        push_baseline(folder, "parallax-zoo/Pickled-v0", token="test-token")
    assert "model.pt" in str(caught.value)
    assert hub.requests == []


def test_push_refuses_a_folder_without_safetensors(hub: HubServer, tmp_path: Path) -> None:
    folder = write_baseline(tmp_path / "trained", scale=1.0)
    (folder / "model.safetensors").unlink()
    with pytest.raises(HubError, match="no .safetensors"):
        push_baseline(folder, "parallax-zoo/Empty-v0", token="test-token")
    assert hub.requests == []


# Model cards


def test_model_card_follows_the_hub_rl_convention(tmp_path: Path) -> None:
    text = model_card(ENV_ID, "MAPPO", 12.3456, 0.5, 64, seed=3)
    card = ModelCard(text)
    assert isinstance(card.data, ModelCardData)
    assert card.data.library_name == "parallax-zoo"
    assert card.data.tags == ["reinforcement-learning", "parallax-zoo", ENV_ID, "MAPPO"]
    assert card.data.eval_results is not None
    (result,) = card.data.eval_results
    assert (result.task_type, result.dataset_name, result.dataset_type) == ("reinforcement-learning", ENV_ID, ENV_ID)
    assert (result.metric_type, result.metric_value, result.verified) == ("mean_reward", "12.35 +/- 0.50", False)
    write_text_atomic(tmp_path / "README.md", text)
    metadata = metadata_load(tmp_path / "README.md")
    assert metadata is not None
    assert metadata["model-index"][0]["results"][0]["metrics"][0]["value"] == "12.35 +/- 0.50"
    assert [path.name for path in tmp_path.iterdir()] == ["README.md"]
    for command in (
        'parallax_zoo.load_baseline("Race-v0")',
        "parallax-zoo eval Race-v0 --policy baseline",
        "parallax-zoo train Race-v0 --seed 3",
    ):
        assert command in card.text


@pytest.mark.parametrize(
    ("mean", "std", "episodes"), [(float("nan"), 1.0, 10), (1.0, -0.1, 10), (1.0, float("inf"), 10), (1.0, 1.0, 0)]
)
def test_model_card_rejects_unmeasured_scores(mean: float, std: float, episodes: int) -> None:
    with pytest.raises(ValueError, match="mean|episodes"):
        model_card(ENV_ID, "PPO", mean, std, episodes)


# load_baseline end to end: the shipped Race-v0 baseline served by the test Hub, the mirror empty


def test_load_baseline_downloads_verifies_and_reproduces_the_reference(hub: HubServer, tmp_path: Path, monkeypatch):
    import parallax_zoo
    from parallax_zoo import evaluate, load_baseline

    env_spec = parallax_zoo.spec("Race-v0")
    assert env_spec.baseline is not None and env_spec.reference_score is not None
    shipped = Path(__file__).resolve().parents[3] / "baselines" / "Race-v0"
    hub.store.commit_folder(env_spec.baseline.repo_id, shipped)
    monkeypatch.setenv("PARALLAX_ZOO_BASELINES", str(tmp_path / "empty-mirror"))

    policy = load_baseline("Race-v0")
    downloaded = sorted(p.name for p in (hf_cache(tmp_path)).rglob("*") if p.is_file() and "snapshots" in p.parts)
    assert downloaded == sorted(env_spec.baseline.files)
    assert evaluate("Race-v0", policy).mean == pytest.approx(env_spec.reference_score)
