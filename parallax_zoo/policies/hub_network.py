"""Bounded waits for every request huggingface_hub makes on our behalf (docs/baselines.md, "Loading").

huggingface_hub retries a failed request with backoff, a failed metadata
request again with a 60 s timeout, and a download that drops mid-file for as
long as some bytes arrive: against a Hub that accepts and never answers that
is minutes. `bounded_requests()` caps each request's connect and read timeouts
and counts failed attempts; after `MAX_FAILED_ATTEMPTS` the next request
raises `HubGaveUp`, which no huggingface_hub retry loop catches, carrying the
first failure as its cause. A download (`bounded_requests(file_limits())`) also
has a total deadline, since a server may send a byte a second forever, and a
size cap, checked on the sizes the Hub announces before any byte is read and
again as bytes arrive: it raises `HubFileLimit`. Outside the context requests
pass unchanged.
"""

from __future__ import annotations

import contextvars
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx2

CONNECT_TIMEOUT_S = 3.0
"""Seconds to wait for a TCP connection (a closed port answers at once; a black hole does not)."""
DEFAULT_READ_TIMEOUT_S = 10.0
"""Seconds to wait for the next bytes of an answer, unless `HF_HUB_DOWNLOAD_TIMEOUT` says otherwise."""
MAX_FAILED_ATTEMPTS = 2
"""Failed requests (refused, timed out, dropped) after which an operation gives up."""
CLIENT_BOOKKEEPING_PATHS = ("/api/agent-harnesses",)
"""Requests huggingface_hub makes for itself (to its import-time endpoint, failures swallowed): capped, not counted."""


DEFAULT_FILE_DEADLINE_S = 120.0
"""Seconds one file's download may take in all (every request and retry), unless `FILE_DEADLINE_ENV` says otherwise."""
FILE_DEADLINE_ENV = "PARALLAX_ZOO_HUB_FILE_DEADLINE"
DEFAULT_MAX_FILE_MB = 64.0
"""The largest file a download accepts, in MiB (a policy's files are well under 1 MiB), unless `MAX_FILE_MB_ENV`
says."""
MAX_FILE_MB_ENV = "PARALLAX_ZOO_HUB_MAX_FILE_MB"
SIZE_HEADERS = ("X-Linked-Size", "Content-Length")
"""Where the Hub announces a file's size: the LFS object's size, and the size of the answer itself."""


@dataclass(frozen=True)
class FileLimits:
    """How long one file's download may take in all, and how large the file may be."""

    deadline_s: float
    max_bytes: int


def _positive_env(name: str, default: float) -> float:
    """The positive number environment variable `name` holds, else `default`."""
    try:
        configured = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return configured if configured > 0 else default


def file_limits() -> FileLimits:
    """The limits on one file's download as set now: `FILE_DEADLINE_ENV` seconds, `MAX_FILE_MB_ENV` MiB."""
    max_mb = _positive_env(MAX_FILE_MB_ENV, DEFAULT_MAX_FILE_MB)
    return FileLimits(_positive_env(FILE_DEADLINE_ENV, DEFAULT_FILE_DEADLINE_S), max(1, int(max_mb * 2**20)))


class HubFileLimit(Exception):
    """A download ran past its deadline or its size cap (`FileLimits`); no huggingface_hub retry loop catches it."""


class HubGaveUp(Exception):
    """An operation's requests failed `MAX_FAILED_ATTEMPTS` times; `failure` is the first one."""

    def __init__(self, failure: Exception, attempts: int) -> None:
        super().__init__(f"gave up after {attempts} failed attempts: {describe(failure)}")
        self.failure = failure
        self.attempts = attempts


class _Watchdog:
    """One download's own connections, cut at its deadline: a read that gets a byte at a time is still bounded.

    Requests go through `transport`, a pool of this download's alone, so every
    connection is opened here and its socket recorded; at the deadline each is
    shut down, which ends the read blocked on it.
    """

    def __init__(self, deadline_s: float) -> None:
        self.transport = httpx2.HTTPTransport()
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(deadline_s, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def trace(self, event: str, info: dict[str, object]) -> None:
        """httpcore's trace hook: record the socket of each connection this download opens."""
        if event.endswith("connect_tcp.complete"):
            stream = info.get("return_value")
            sock = getattr(stream, "get_extra_info", lambda name: None)("socket")
            if isinstance(sock, socket.socket):
                with self._lock:
                    self._sockets.append(sock)
                    if self.expired:
                        _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)

    def close(self) -> None:
        self._timer.cancel()
        self.transport.close()


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # closed already


@dataclass
class _Attempts:
    read_timeout: float
    failures: list[Exception]
    limits: FileLimits | None = None
    deadline: float = float("inf")
    """`time.monotonic()` past which the download stops (with `limits`)."""
    watchdog: _Watchdog | None = None

    def check_deadline(self, received: int = 0) -> None:
        """Raise `HubFileLimit` once the deadline has passed."""
        expired = self.watchdog is not None and self.watchdog.expired
        if self.limits is not None and (expired or time.monotonic() >= self.deadline):
            arrived = f"; {received:,} bytes of the file had arrived" if received else ""
            raise HubFileLimit(
                f"the download was still going after its deadline of {self.limits.deadline_s:g} s per file{arrived}: "
                f"the server is too slow. Try again later, or allow more time with {FILE_DEADLINE_ENV} (seconds)"
            )

    def remaining_s(self) -> float:
        return max(0.001, self.deadline - time.monotonic())

    def check_size(self, size: int, announced: bool) -> None:
        """Raise `HubFileLimit` where `size` bytes exceed the cap."""
        if self.limits is not None and size > self.limits.max_bytes:
            how = f"the server announces {size:,} bytes for it" if announced else f"{size:,} bytes had arrived"
            raise HubFileLimit(
                f"{how}, over the cap of {self.limits.max_bytes:,} bytes per file "
                f"({MAX_FILE_MB_ENV}={self.limits.max_bytes / 2**20:g} MiB); "
                f"{'nothing was read' if announced else 'the rest was not read'}. A policy's files are small: check "
                f"the repo, or raise {MAX_FILE_MB_ENV} if the file is meant to be this large"
            )


_current: contextvars.ContextVar[_Attempts | None] = contextvars.ContextVar("parallax_zoo_hub_attempts", default=None)


def read_timeout_s() -> float:
    """The read timeout: `HF_HUB_DOWNLOAD_TIMEOUT` as set now (seconds), else `DEFAULT_READ_TIMEOUT_S`."""
    return _positive_env("HF_HUB_DOWNLOAD_TIMEOUT", DEFAULT_READ_TIMEOUT_S)


def describe(failure: BaseException) -> str:
    """A failed request's cause in words: refused, timed out (and after how long), or dropped."""
    if isinstance(failure, HubGaveUp):
        return describe(failure.failure)
    if isinstance(failure, httpx2.ConnectTimeout):
        return f"timed out: no connection within {CONNECT_TIMEOUT_S:g} s"
    if isinstance(failure, httpx2.TimeoutException):
        return f"timed out: the server accepted the connection but sent nothing for {read_timeout_s():g} s"
    if isinstance(failure, httpx2.ConnectError):
        return "connection refused" if "refused" in str(failure).lower() else f"could not connect ({failure})"
    if isinstance(failure, httpx2.RemoteProtocolError | httpx2.ReadError):
        return f"the connection dropped mid-transfer ({failure})"
    return str(failure)


RETRY_LOGGERS = ("huggingface_hub.utils._http", "huggingface_hub.file_download")
"""huggingface_hub's loggers of each retry; inside `bounded_requests` the failure is reported once, by the caller."""


class _NoRetryChatter(logging.Filter):
    """Drops huggingface_hub's per-retry warnings (the error that ends the operation names the cause and the
    attempts)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.WARNING


@contextmanager
def bounded_requests(limits: FileLimits | None = None) -> Iterator[list[Exception]]:
    """Bound every huggingface_hub request made inside: capped timeouts, at most `MAX_FAILED_ATTEMPTS` failures.

    With `limits`, everything inside is one file's download: it stops at the deadline and at the size cap.
    Yields the list of failures so far (the first is the cause to report).
    """
    _install()
    deadline = float("inf") if limits is None else time.monotonic() + limits.deadline_s
    watchdog = None if limits is None else _Watchdog(limits.deadline_s)
    attempts = _Attempts(
        read_timeout=read_timeout_s(), failures=[], limits=limits, deadline=deadline, watchdog=watchdog
    )
    token = _current.set(attempts)
    quiet = _NoRetryChatter()
    for name in RETRY_LOGGERS:
        logging.getLogger(name).addFilter(quiet)
    try:
        yield attempts.failures
    finally:
        for name in RETRY_LOGGERS:
            logging.getLogger(name).removeFilter(quiet)
        _current.reset(token)
        if watchdog is not None:
            watchdog.close()


class _CountingStream(httpx2.SyncByteStream):
    """A response body that records a failure while it is read (a connection dropped mid-file)."""

    def __init__(self, stream: httpx2.SyncByteStream, attempts: _Attempts) -> None:
        self._stream = stream
        self._attempts = attempts

    def __iter__(self) -> Iterator[bytes]:
        received = 0
        try:
            for chunk in self._stream:
                received += len(chunk)
                self._attempts.check_size(received, announced=False)
                self._attempts.check_deadline(received)
                yield chunk
        except (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError) as error:
            self._attempts.check_deadline(received)
            self._attempts.failures.append(error)
            raise

    def close(self) -> None:
        self._stream.close()


class _BoundedTransport(httpx2.HTTPTransport):
    """The default transport, plus the bounds of the enclosing `bounded_requests()` (none outside it)."""

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        attempts = _current.get()
        if attempts is None:
            return super().handle_request(request)
        if request.url.path.endswith(CLIENT_BOOKKEEPING_PATHS):
            attempts = _Attempts(attempts.read_timeout, [], attempts.limits, attempts.deadline, attempts.watchdog)
        if len(attempts.failures) >= MAX_FAILED_ATTEMPTS:
            raise HubGaveUp(attempts.failures[0], len(attempts.failures))
        attempts.check_deadline()
        remaining = attempts.remaining_s()
        timeout = dict(request.extensions.get("timeout") or {})
        for name, cap in (
            ("connect", CONNECT_TIMEOUT_S),
            ("read", attempts.read_timeout),
            ("write", attempts.read_timeout),
            ("pool", CONNECT_TIMEOUT_S),
        ):
            given = timeout.get(name)
            timeout[name] = min(cap if given is None else min(float(given), cap), remaining)
        request.extensions["timeout"] = timeout
        watchdog = attempts.watchdog
        try:
            if watchdog is None:
                response = super().handle_request(request)
            else:
                request.extensions["trace"] = _chained(request.extensions.get("trace"), watchdog.trace)
                response = watchdog.transport.handle_request(request)
        except (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError) as error:
            attempts.check_deadline()
            attempts.failures.append(error)
            raise
        try:
            attempts.check_size(max((_announced_size(response, header) for header in SIZE_HEADERS), default=0), True)
        except HubFileLimit:
            response.close()
            raise
        assert isinstance(response.stream, httpx2.SyncByteStream)
        response.stream = _CountingStream(response.stream, attempts)
        return response


def _chained(first: Any, second: Any) -> Any:
    """A trace hook calling `first` (a hook already set, if any) and then `second`."""
    if first is None:
        return second

    def both(event: str, info: dict[str, object]) -> None:
        first(event, info)
        second(event, info)

    return both


def _announced_size(response: httpx2.Response, header: str) -> int:
    """The size a response's `header` announces, 0 where it announces none."""
    value = response.headers.get(header, "")
    return int(value) if value.isdigit() else 0


_installed = False


def _install() -> None:
    """Make huggingface_hub's shared client use `_BoundedTransport` (once per process)."""
    global _installed
    if _installed:
        return
    from huggingface_hub import close_session, set_client_factory
    from huggingface_hub.utils._http import hf_request_event_hook

    def client() -> httpx2.Client:
        return httpx2.Client(
            transport=_BoundedTransport(),
            event_hooks={"request": [hf_request_event_hook]},
            follow_redirects=True,
            timeout=None,
        )

    set_client_factory(client)
    close_session()
    _installed = True
