"""A small Hugging Face Hub-compatible HTTP server on 127.0.0.1 for tests (docs/evaluation.md).

It stores model repos with real commits in a folder and answers the requests that
huggingface_hub 2.4's `hf_hub_download`, `HfApi.create_repo`, `HfApi.upload_folder`
(preupload, LFS basic transfer, NDJSON commit) and `HfApi.model_info` make. Standard
library only. Every request is logged so tests can assert what went over the wire.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import http.server
import json
import re
import socket
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".pkl", ".npz", ".h5", ".onnx", ".zip")
"""Files stored through LFS whatever their content, as in the Hub's default `.gitattributes`."""

SAMPLE_SIZE = 512
"""How many leading bytes the client sends in a preupload request, from which the Hub tells binary files."""

_COMMIT_ID = re.compile(r"[0-9a-f]{40}")
_REPO_PART = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_RESOLVE = re.compile(rf"^/(?P<repo>{_REPO_PART}/{_REPO_PART})/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")
_API_MODEL = re.compile(rf"^/api/models/(?P<repo>{_REPO_PART}/{_REPO_PART})(?:/revision/(?P<rev>[^/]+))?$")
_PREUPLOAD = re.compile(rf"^/api/models/(?P<repo>{_REPO_PART}/{_REPO_PART})/preupload/(?P<rev>[^/]+)$")
_COMMIT = re.compile(rf"^/api/models/(?P<repo>{_REPO_PART}/{_REPO_PART})/commit/(?P<rev>[^/]+)$")
_LFS_BATCH = re.compile(rf"^/(?P<repo>{_REPO_PART}/{_REPO_PART})\.git/info/lfs/objects/batch$")
_LFS_UPLOAD = re.compile(r"^/lfs-upload/(?P<oid>[0-9a-f]{64})$")


def git_blob_sha1(data: bytes) -> str:
    """The git object id of a blob, which the Hub uses as the ETag of a regular (non-LFS) file."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def stored_as_lfs(path: str, sample: bytes) -> bool:
    """Whether the Hub stores a file through LFS (its ETag is then the sha256): weights by name, binaries by content."""
    if path.endswith(LFS_SUFFIXES) or b"\0" in sample[:SAMPLE_SIZE]:
        return True
    try:
        sample[:SAMPLE_SIZE].decode("utf-8")
    except UnicodeDecodeError as error:
        return error.reason != "unexpected end of data"
    return False


@dataclasses.dataclass(frozen=True)
class RepoFile:
    """One file of a commit: where its bytes are and the ids the Hub reports for it."""

    sha256: str
    git_sha1: str
    size: int
    lfs: bool

    @property
    def etag(self) -> str:
        """The Hub's ETag: the sha256 for LFS files, the git blob id otherwise."""
        return self.sha256 if self.lfs else self.git_sha1


class RepoStore:
    """Model repos on disk: content-addressed objects, JSON commits whose id is the sha1 of their content, refs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        (root / "objects").mkdir(parents=True, exist_ok=True)
        (root / "repos").mkdir(parents=True, exist_ok=True)

    def _repo_dir(self, repo_id: str) -> Path:
        return self.root / "repos" / repo_id.replace("/", "--")

    def exists(self, repo_id: str) -> bool:
        """Whether the repo was created."""
        return self._repo_dir(repo_id).is_dir()

    def create_repo(self, repo_id: str) -> bool:
        """Create an empty repo; False if it already existed."""
        with self._lock:
            repo_dir = self._repo_dir(repo_id)
            if repo_dir.is_dir():
                return False
            (repo_dir / "commits").mkdir(parents=True)
            (repo_dir / "refs").mkdir()
            return True

    def put_object(self, data: bytes) -> str:
        """Store bytes under their sha256 and return it."""
        sha256 = hashlib.sha256(data).hexdigest()
        path = self.root / "objects" / sha256
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        return sha256

    def has_object(self, sha256: str) -> bool:
        """Whether bytes with this sha256 were uploaded."""
        return (self.root / "objects" / sha256).is_file()

    def read_object(self, sha256: str) -> bytes:
        """The stored bytes (after `corrupt`, no longer those the sha256 names)."""
        return (self.root / "objects" / sha256).read_bytes()

    def resolve(self, repo_id: str, revision: str) -> str | None:
        """The commit id a branch name or commit id points at, or None."""
        repo_dir = self._repo_dir(repo_id)
        if _COMMIT_ID.fullmatch(revision):
            return revision if (repo_dir / "commits" / f"{revision}.json").is_file() else None
        ref = repo_dir / "refs" / revision
        return ref.read_text() if ref.is_file() else None

    def tree(self, repo_id: str, commit_id: str) -> dict[str, RepoFile]:
        """Every file of a commit."""
        commit = json.loads((self._repo_dir(repo_id) / "commits" / f"{commit_id}.json").read_text())
        return {path: RepoFile(**entry) for path, entry in commit["files"].items()}

    def commit(
        self,
        repo_id: str,
        *,
        message: str,
        add: Mapping[str, str],
        delete: tuple[str, ...] = (),
        branch: str = "main",
        parent: str | None = None,
    ) -> str:
        """Record a commit on `branch` adding files (path -> stored object sha256) and deleting paths; return its id."""
        with self._lock:
            repo_dir = self._repo_dir(repo_id)
            head = self.resolve(repo_id, branch)
            if parent is not None and parent != head:
                raise ValueError(f"parent commit {parent} is not the head of {branch} ({head})")
            files = {
                path: dataclasses.asdict(entry) for path, entry in (self.tree(repo_id, head) if head else {}).items()
            }
            for path in delete:
                files = {
                    name: entry for name, entry in files.items() if name != path and not name.startswith(path + "/")
                }
            for path, sha256 in add.items():
                data = self.read_object(sha256)
                entry = RepoFile(sha256, git_blob_sha1(data), len(data), stored_as_lfs(path, data))
                files[path] = dataclasses.asdict(entry)
            content = json.dumps({"parent": head, "message": message, "files": files}, sort_keys=True).encode()
            commit_id = hashlib.sha1(content).hexdigest()
            (repo_dir / "commits" / f"{commit_id}.json").write_bytes(content)
            tmp = repo_dir / "refs" / f".{branch}.tmp"
            tmp.write_text(commit_id)
            tmp.replace(repo_dir / "refs" / branch)
            return commit_id

    def commit_folder(self, repo_id: str, folder: Path, message: str = "Upload folder") -> str:
        """Create the repo if needed and commit every file of `folder` on main; return the commit id."""
        self.create_repo(repo_id)
        add = {
            path.relative_to(folder).as_posix(): self.put_object(path.read_bytes())
            for path in sorted(folder.rglob("*"))
            if path.is_file()
        }
        return self.commit(repo_id, message=message, add=add)

    def corrupt(self, repo_id: str, path: str, revision: str = "main") -> None:
        """Flip one byte of a stored file in place, as a tampered storage backend would; ids stay as they were."""
        commit_id = self.resolve(repo_id, revision)
        if commit_id is None:
            raise KeyError(f"{repo_id}@{revision} does not exist")
        object_path = self.root / "objects" / self.tree(repo_id, commit_id)[path].sha256
        data = bytearray(object_path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        object_path.write_bytes(bytes(data))


@dataclasses.dataclass(frozen=True)
class LoggedRequest:
    """One request the server answered."""

    method: str
    path: str
    status: int


class _HubHandler(http.server.BaseHTTPRequestHandler):
    """Routes one request to the matching Hub endpoint."""

    protocol_version = "HTTP/1.1"

    @property
    def hub(self) -> _HubHTTPServer:
        """The server this handler answers for, with its store and request log."""
        return cast(_HubHTTPServer, self.server)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log; requests go to `HubServer.requests` instead."""

    def _respond(self, status: int, body: bytes = b"", headers: Mapping[str, str] | None = None) -> None:
        self.hub.log.append(LoggedRequest(self.command, self.path, status))  # before the client can see the answer
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        self._respond(status, json.dumps(payload).encode(), {"Content-Type": "application/json", **(headers or {})})

    def _error(self, status: int, code: str, message: str, headers: Mapping[str, str] | None = None) -> None:
        self._json(status, {"error": message}, {"X-Error-Code": code, "X-Error-Message": message, **(headers or {})})

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length)

    def _base_url(self) -> str:
        return f"http://{self.headers.get('Host')}"

    def _resolve_repo(self, repo_id: str, revision: str) -> str | None:
        """The commit for repo@revision, or None after answering with the Hub's 404."""
        store = self.hub.store
        if not store.exists(repo_id):
            self._error(404, "RepoNotFound", f"Repository {repo_id} not found")
            return None
        commit_id = store.resolve(repo_id, unquote(revision))
        if commit_id is None:
            self._error(404, "RevisionNotFound", f"Invalid rev id: {unquote(revision)}")
            return None
        return commit_id

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if match := _RESOLVE.match(path):
            self._resolve_file(match["repo"], match["rev"], unquote(match["path"]))
        elif match := _API_MODEL.match(path):
            blobs = parse_qs(urlsplit(self.path).query).get("blobs", [""])[0].lower() == "true"
            self._model_info(match["repo"], match["rev"] or "main", blobs)
        else:
            self._error(404, "NotFound", f"no route for GET {path}")

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        body = self._body()
        if path == "/api/repos/create":
            self._create_repo(json.loads(body))
        elif path == "/api/validate-yaml":
            self._validate_yaml(json.loads(body))
        elif match := _PREUPLOAD.match(path):
            self._preupload(match["repo"], match["rev"], json.loads(body))
        elif match := _LFS_BATCH.match(path):
            self._lfs_batch(match["repo"], json.loads(body))
        elif match := _COMMIT.match(path):
            self._commit(match["repo"], match["rev"], body)
        else:
            self._error(404, "NotFound", f"no route for POST {path}")

    def do_PUT(self) -> None:
        path = urlsplit(self.path).path
        body = self._body()
        if match := _LFS_UPLOAD.match(path):
            if hashlib.sha256(body).hexdigest() != match["oid"]:
                self._error(400, "BadRequest", "uploaded content does not match its oid")
                return
            self.hub.store.put_object(body)
            self._respond(200)
        else:
            self._error(404, "NotFound", f"no route for PUT {path}")

    def _resolve_file(self, repo_id: str, revision: str, file_path: str) -> None:
        commit_id = self._resolve_repo(repo_id, revision)
        if commit_id is None:
            return
        entry = self.hub.store.tree(repo_id, commit_id).get(file_path)
        if entry is None:
            self._error(404, "EntryNotFound", f"{file_path} does not exist", {"X-Repo-Commit": commit_id})
            return
        headers = {"X-Repo-Commit": commit_id, "ETag": f'"{entry.etag}"', "Accept-Ranges": "none"}
        if entry.lfs:
            headers |= {"X-Linked-Etag": f'"{entry.sha256}"', "X-Linked-Size": str(entry.size)}
        body = self.hub.store.read_object(entry.sha256)
        if self.hub.drip_headers_every is not None:
            self._drip_whole(body, headers, self.hub.drip_headers_every)
            return
        if self.hub.drip_downloads_every is not None and self.command == "GET":
            self._drip(body, headers, self.hub.drip_downloads_every)
            return
        cut = self.hub.drop_downloads_after
        if cut is not None and self.command == "GET":
            self._drop_mid_file(body[:cut], len(body), headers)
            return
        self._respond(200, body, headers)

    def _drop_mid_file(self, sent: bytes, size: int, headers: Mapping[str, str]) -> None:
        """Announce the whole file, send its first bytes, then close the connection, as a failing link does."""
        self.hub.log.append(LoggedRequest(self.command, self.path, 200))
        self.send_response(200)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        self.wfile.write(sent)
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def _drip(self, body: bytes, headers: Mapping[str, str], interval_s: float) -> None:
        """Announce the whole file and send it one byte every `interval_s`, as a slow link does (the client may hang
        up)."""
        self.hub.log.append(LoggedRequest(self.command, self.path, 200))
        self.send_response(200)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            for offset in range(len(body)):
                self.wfile.write(body[offset : offset + 1])
                self.wfile.flush()
                time.sleep(interval_s)
        except OSError:
            self.close_connection = True

    def _drip_whole(self, body: bytes, headers: Mapping[str, str], interval_s: float) -> None:
        """Send the whole answer, status line and headers first, one byte every `interval_s` (the client may hang
        up)."""
        self.hub.log.append(LoggedRequest(self.command, self.path, 200))
        head = "".join(f"{name}: {value}\r\n" for name, value in {**headers, "Content-Length": str(len(body))}.items())
        raw = f"HTTP/1.1 200 OK\r\n{head}\r\n".encode() + (body if self.command == "GET" else b"")
        self.close_connection = True
        try:
            for offset in range(len(raw)):
                self.wfile.write(raw[offset : offset + 1])
                self.wfile.flush()
                time.sleep(interval_s)
        except OSError:
            pass

    def _model_info(self, repo_id: str, revision: str, blobs: bool) -> None:
        """The repo's info at a revision; per-file sizes and hashes only when asked (`?blobs=true`, files_metadata)."""
        commit_id = self._resolve_repo(repo_id, revision)
        if commit_id is None:
            return
        siblings = [
            {"rfilename": path}
            | (
                {
                    "size": entry.size,
                    "blobId": entry.git_sha1,
                    **({"lfs": {"size": entry.size, "sha256": entry.sha256, "pointerSize": 134}} if entry.lfs else {}),
                }
                if blobs
                else {}
            )
            for path, entry in sorted(self.hub.store.tree(repo_id, commit_id).items())
        ]
        author = repo_id.split("/")[0]
        info = {"id": repo_id, "modelId": repo_id, "author": author, "sha": commit_id, "private": False}
        self._json(200, info | {"siblings": siblings})

    def _create_repo(self, payload: Mapping[str, Any]) -> None:
        organization, name = payload.get("organization"), payload.get("name")
        if not organization or not name or payload.get("type", "model") != "model":
            self._error(400, "BadRequest", "this test server hosts model repos named 'namespace/name' only")
            return
        repo_id = f"{organization}/{name}"
        url = f"{self._base_url()}/{repo_id}"
        if not self.hub.store.create_repo(repo_id):
            message = "You already created this model repo"
            self._json(409, {"error": message, "url": url}, {"X-Error-Code": "Conflict", "X-Error-Message": message})
            return
        self._json(200, {"url": url, "name": repo_id})

    def _validate_yaml(self, payload: Mapping[str, Any]) -> None:
        content = str(payload.get("content", ""))
        match = re.match(r"^---\n(.*?)\n---\n", content, re.DOTALL)
        try:
            metadata = yaml.safe_load(match[1]) if match else {}
        except yaml.YAMLError as error:
            self._json(400, {"errors": [{"message": f"invalid YAML: {error}"}], "warnings": []})
            return
        if not isinstance(metadata, dict | None):
            self._json(400, {"errors": [{"message": "metadata must be a YAML mapping"}], "warnings": []})
            return
        self._json(200, {"errors": [], "warnings": []})

    def _preupload(self, repo_id: str, revision: str, payload: Mapping[str, Any]) -> None:
        store = self.hub.store
        if not store.exists(repo_id):
            self._error(404, "RepoNotFound", f"Repository {repo_id} not found")
            return
        head = store.resolve(repo_id, unquote(revision))
        tree = store.tree(repo_id, head) if head else {}
        files = [
            {
                "path": item["path"],
                "uploadMode": "lfs" if stored_as_lfs(item["path"], base64.b64decode(item["sample"])) else "regular",
                "shouldIgnore": False,
                "oid": tree[item["path"]].etag if item["path"] in tree else None,
            }
            for item in payload["files"]
        ]
        self._json(200, {"files": files, "commitOid": head})

    def _lfs_batch(self, repo_id: str, payload: Mapping[str, Any]) -> None:
        if not self.hub.store.exists(repo_id):
            self._error(404, "RepoNotFound", f"Repository {repo_id} not found")
            return
        objects = []
        for item in payload["objects"]:
            entry: dict[str, Any] = {"oid": item["oid"], "size": item["size"]}
            if not self.hub.store.has_object(item["oid"]):
                entry["actions"] = {"upload": {"href": f"{self._base_url()}/lfs-upload/{item['oid']}"}}
            objects.append(entry)
        self._json(200, {"transfer": "basic", "objects": objects}, {"Content-Type": "application/vnd.git-lfs+json"})

    def _commit(self, repo_id: str, revision: str, body: bytes) -> None:
        store = self.hub.store
        if not store.exists(repo_id):
            self._error(404, "RepoNotFound", f"Repository {repo_id} not found")
            return
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        header = next((line["value"] for line in lines if line["key"] == "header"), {})
        add: dict[str, str] = {}
        delete: list[str] = []
        for line in lines:
            key, value = line["key"], line["value"]
            if key == "file":
                add[value["path"]] = store.put_object(base64.b64decode(value["content"]))
            elif key == "lfsFile":
                if not store.has_object(value["oid"]):
                    self._error(400, "BadRequest", f"LFS object {value['oid']} of {value['path']} was never uploaded")
                    return
                add[value["path"]] = value["oid"]
            elif key in ("deletedFile", "deletedFolder"):
                delete.append(value["path"].rstrip("/"))
        try:
            commit_id = store.commit(
                repo_id,
                message=header.get("summary", ""),
                add=add,
                delete=tuple(delete),
                branch=unquote(revision),
                parent=header.get("parentCommit"),
            )
        except ValueError as error:
            self._error(412, "PreconditionFailed", str(error))
            return
        url = f"{self._base_url()}/{repo_id}/commit/{commit_id}"
        self._json(200, {"success": True, "commitOid": commit_id, "commitUrl": url})


class _HubHTTPServer(http.server.ThreadingHTTPServer):
    """The socket server, carrying the store and the request log its handlers share."""

    daemon_threads = True

    def __init__(self, store: RepoStore) -> None:
        super().__init__(("127.0.0.1", 0), _HubHandler)
        self.store = store
        self.log: list[LoggedRequest] = []
        self.drop_downloads_after: int | None = None
        self.drip_downloads_every: float | None = None
        self.drip_headers_every: float | None = None


class HubServer:
    """A running Hub-compatible server: `endpoint` is what HF_ENDPOINT should be set to."""

    def __init__(self, root: Path) -> None:
        self.store = RepoStore(root)
        self._http = _HubHTTPServer(self.store)
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, name="hub-server", daemon=True
        )

    @property
    def endpoint(self) -> str:
        """The base URL, http://127.0.0.1:PORT."""
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[LoggedRequest]:
        """Every request answered so far, in order."""
        return list(self._http.log)

    def drop_downloads_after(self, size: int | None) -> None:
        """From now on, cut every file download after `size` bytes (None: serve files whole again)."""
        self._http.drop_downloads_after = size

    def drip_downloads(self, interval_s: float | None) -> None:
        """From now on, send every file download one byte every `interval_s` seconds (None: at full speed again)."""
        self._http.drip_downloads_every = interval_s

    def drip_headers(self, interval_s: float | None) -> None:
        """From now on, send every file's whole answer, headers included, one byte every `interval_s` seconds."""
        self._http.drip_headers_every = interval_s

    def file_downloads(self) -> list[LoggedRequest]:
        """The GET requests that transferred a repo file's bytes."""
        return [request for request in self.requests if request.method == "GET" and "/resolve/" in request.path]

    def start(self) -> HubServer:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._http.shutdown()
        self._http.server_close()
        self._thread.join()


class SilentServer:
    """A TCP server on 127.0.0.1 that accepts every connection and never answers, as a hung Hub does."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        """The base URL, http://127.0.0.1:PORT."""
        self._accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, name="silent-server", daemon=True)

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            self._accepted.append(connection)

    @property
    def connections(self) -> int:
        """How many connections were accepted (and left unanswered)."""
        return len(self._accepted)

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._socket.shutdown(socket.SHUT_RDWR)
        self._socket.close()
        for connection in self._accepted:
            connection.close()
        self._thread.join(timeout=5)


def closed_port_endpoint() -> str:
    """The URL of a port on 127.0.0.1 where nothing listens (a connection is refused at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"
