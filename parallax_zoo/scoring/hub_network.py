"""Bounded waits for every request huggingface_hub makes on our behalf (README, "Baselines, evaluation and the leaderboard").

huggingface_hub retries a failed request with backoff, a failed metadata
request again with a 60 s timeout, and a download that drops mid-file for as
long as some bytes arrive: against a Hub that accepts and never answers that
is minutes. `bounded_requests()` caps each request's connect and read timeouts
and counts failed attempts; after `MAX_FAILED_ATTEMPTS` the next request
raises `HubGaveUp`, which no huggingface_hub retry loop catches, carrying the
first failure as its cause. Outside the context requests pass unchanged.
"""

from __future__ import annotations

import contextvars
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx2

CONNECT_TIMEOUT_S = 3.0
"""Seconds to wait for a TCP connection (a closed port answers at once; a black hole does not)."""
DEFAULT_READ_TIMEOUT_S = 10.0
"""Seconds to wait for the next bytes of an answer, unless `HF_HUB_DOWNLOAD_TIMEOUT` says otherwise."""
MAX_FAILED_ATTEMPTS = 2
"""Failed requests (refused, timed out, dropped) after which an operation gives up."""
CLIENT_BOOKKEEPING_PATHS = ("/api/agent-harnesses",)
"""Requests huggingface_hub makes for itself (to its import-time endpoint, failures swallowed): capped, not counted."""


class HubGaveUp(Exception):
    """An operation's requests failed `MAX_FAILED_ATTEMPTS` times; `failure` is the first one."""

    def __init__(self, failure: Exception, attempts: int) -> None:
        super().__init__(f"gave up after {attempts} failed attempts: {describe(failure)}")
        self.failure = failure
        self.attempts = attempts


@dataclass
class _Attempts:
    read_timeout: float
    failures: list[Exception]


_current: contextvars.ContextVar[_Attempts | None] = contextvars.ContextVar("parallax_zoo_hub_attempts", default=None)


def read_timeout_s() -> float:
    """The read timeout: `HF_HUB_DOWNLOAD_TIMEOUT` as set now (seconds), else `DEFAULT_READ_TIMEOUT_S`."""
    try:
        configured = float(os.environ.get("HF_HUB_DOWNLOAD_TIMEOUT", ""))
    except ValueError:
        return DEFAULT_READ_TIMEOUT_S
    return configured if configured > 0 else DEFAULT_READ_TIMEOUT_S


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
    """Drops huggingface_hub's per-retry warnings (the error that ends the operation names the cause and the attempts)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.WARNING


@contextmanager
def bounded_requests() -> Iterator[list[Exception]]:
    """Bound every huggingface_hub request made inside: capped timeouts, at most `MAX_FAILED_ATTEMPTS` failures.

    Yields the list of failures so far (the first is the cause to report).
    """
    _install()
    attempts = _Attempts(read_timeout=read_timeout_s(), failures=[])
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


class _CountingStream(httpx2.SyncByteStream):
    """A response body that records a failure while it is read (a connection dropped mid-file)."""

    def __init__(self, stream: httpx2.SyncByteStream, attempts: _Attempts) -> None:
        self._stream = stream
        self._attempts = attempts

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._stream
        except (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError) as error:
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
            attempts = _Attempts(attempts.read_timeout, failures=[])
        if len(attempts.failures) >= MAX_FAILED_ATTEMPTS:
            raise HubGaveUp(attempts.failures[0], len(attempts.failures))
        timeout = dict(request.extensions.get("timeout") or {})
        for name, cap in (("connect", CONNECT_TIMEOUT_S), ("read", attempts.read_timeout),
                          ("write", attempts.read_timeout), ("pool", CONNECT_TIMEOUT_S)):
            given = timeout.get(name)
            timeout[name] = cap if given is None else min(float(given), cap)
        request.extensions["timeout"] = timeout
        try:
            response = super().handle_request(request)
        except (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError) as error:
            attempts.failures.append(error)
            raise
        assert isinstance(response.stream, httpx2.SyncByteStream)
        response.stream = _CountingStream(response.stream, attempts)
        return response


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
