"""One deadline per HTTP request: connect within a bound, answer whole within another.

httpx's timeouts bound each network operation, not the request: a server that
accepts the connection and trickles a byte every few seconds keeps every read
under the read timeout and holds a command forever (``push`` and ``status`` hung
past 150 s, the judge past 300 s, with ``timeout_s = 60``). README "Security":
every request citecal sends has one deadline, connect included, and when it
passes the message says what the server did: nothing at all after accepting the
connection, or part of an answer, too slowly.

:class:`DeadlineTransport` enforces it for the synchronous clients (the Argilla
SDK's): its network streams read with ``min(read timeout, time left)`` and count
the bytes each request received. The judge's asynchronous client bounds its
requests with ``asyncio.timeout`` instead (:mod:`citecal.verify.judge._client`),
which keeps the proxies the user's environment sets.
"""

from __future__ import annotations

import contextvars
import ssl
import time
import typing
from collections.abc import Iterable
from dataclasses import dataclass

import httpcore
import httpx

CONNECT_S = 10.0
"""Longest wait for a connection (a TCP handshake on a live network takes milliseconds)."""


def deadline_reason(timeout: float, received: int | None) -> str:
    """What a server did with a request that ran past its deadline, in words.

    ``received``: bytes of the answer that arrived (None: unknown but some).
    """
    if received == 0:
        return (
            f"no answer within {timeout:g}s: the server accepted the connection and sent "
            "nothing back"
        )
    got = "part of an answer" if received is None else f"{received:,} bytes of an answer"
    return (
        f"the answer was not complete within {timeout:g}s: the server sent {got}, "
        "too slowly (an answer that trickles in is cut off at the deadline)"
    )


@dataclass
class _Request:
    deadline: float
    timeout: float
    received: int = 0

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def expired(self) -> httpcore.ReadTimeout:
        return httpcore.ReadTimeout(deadline_reason(self.timeout, self.received))


_current: contextvars.ContextVar[_Request | None] = contextvars.ContextVar(
    "citecal_http_request", default=None
)


def _bound(timeout: float | None, request: _Request | None) -> float | None:
    if request is None:
        return timeout
    left = request.left()
    if left <= 0:
        raise request.expired()
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A connection whose reads and writes never outlast the current request's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        request = _current.get()
        try:
            data = self._inner.read(max_bytes, _bound(timeout, request))
        except httpcore.ReadTimeout:
            if request is not None and request.left() <= 0.01:
                raise request.expired() from None
            raise
        if request is not None:
            request.received += len(data)
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        request = _current.get()
        try:
            self._inner.write(buffer, _bound(timeout, request))
        except httpcore.WriteTimeout:
            if request is not None and request.left() <= 0.01:
                raise httpcore.WriteTimeout(
                    f"the request could not be sent within {request.timeout:g}s"
                ) from None
            raise

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        bound = _bound(timeout, _current.get())
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, bound))

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """Connections through :class:`_Stream`, made within :data:`CONNECT_S` and the deadline."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        bound = _bound(CONNECT_S if timeout is None else min(timeout, CONNECT_S), _current.get())
        return _Stream(self._inner.connect_tcp(host, port, bound, local_address, socket_options))

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        bound = _bound(CONNECT_S if timeout is None else min(timeout, CONNECT_S), _current.get())
        return _Stream(self._inner.connect_unix_socket(path, bound, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class DeadlineTransport(httpx.HTTPTransport):
    """An httpx transport whose every request has one deadline of ``timeout`` seconds.

    The deadline covers connecting (itself at most :data:`CONNECT_S`), sending
    and receiving the whole answer; past it the request fails with
    ``httpx.ReadTimeout`` whose message is :func:`deadline_reason`'s.
    """

    def __init__(self, timeout: float, **kwargs: typing.Any) -> None:
        super().__init__(**kwargs)
        self.timeout = timeout
        pool = getattr(self, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is None:  # an httpx/httpcore that keeps them elsewhere: fail loudly
            raise RuntimeError("this httpx version does not expose its connection pool")
        pool._network_backend = _Backend(backend)  # type: ignore[union-attr]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        # The answer's body is read after this returns, in the same thread and context, so
        # the deadline set here still bounds it (and is replaced by the next request's).
        _current.set(_Request(time.monotonic() + self.timeout, self.timeout))
        return super().handle_request(request)


__all__ = ["CONNECT_S", "DeadlineTransport", "deadline_reason"]
