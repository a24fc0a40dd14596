"""A total deadline for one blocking HTTP call made with urllib (the search and fetch
services of :mod:`hopscore.run.search`).

urllib's ``timeout`` bounds each socket operation, so a server that sends a byte every few
seconds is never cut off. :func:`open_within` gives the call a timer that, at the deadline,
shuts down the call's sockets: a read blocked on them ends at once, and the call raises
:class:`DeadlineExceeded` (connection, headers and body together within ``seconds``). The body
is read in pieces up to a byte cap, the deadline looked at between them.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
import urllib.request
from email.message import Message
from typing import Any


class DeadlineExceeded(TimeoutError):
    """A call to the search or fetch service did not end within its total deadline."""


class _Deadline:
    """The total deadline of one call: when it passes, the call's sockets are shut down, which
    ends a read blocked on a server that sends one byte every few seconds (a socket timeout
    only bounds each read)."""

    def __init__(self, seconds: float, what: str) -> None:
        self.seconds = seconds
        self.what = what
        self.end = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def left(self) -> float:
        return max(0.001, self.end - time.monotonic())

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def check(self) -> None:
        if self.expired or time.monotonic() >= self.end:
            raise self.error()

    def error(self) -> DeadlineExceeded:
        return DeadlineExceeded(f"the {self.what} did not answer in full within its deadline "
                                f"of {self.seconds:g} s")

    def cancel(self) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    # socket.socket's own shutdown: an SSL socket's would first try to unwrap
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _watched(base: type[http.client.HTTPConnection], deadline: _Deadline) -> Any:
    class Connection(base):  # type: ignore[valid-type,misc]
        def connect(self) -> None:
            own = getattr(self, "timeout", None)
            setattr(self, "timeout", min(own or deadline.seconds, deadline.left()))  # noqa: B010
            super().connect()
            deadline.watch(getattr(self, "sock"))  # noqa: B009

    return Connection


class _DeadlineHTTP(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def http_open(self, req: Any) -> Any:
        return self.do_open(_watched(http.client.HTTPConnection, self.deadline), req)


class _DeadlineHTTPS(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def https_open(self, req: Any) -> Any:
        return self.do_open(_watched(http.client.HTTPSConnection, self.deadline), req,
                            context=self._context)  # type: ignore[attr-defined]


def _read_capped(response: Any, max_bytes: int, deadline: _Deadline | None = None
                 ) -> tuple[bytes, bool]:
    """At most ``max_bytes`` of the body (and whether there was more), read in pieces so the
    deadline is looked at between them."""
    parts: list[bytes] = []
    size = 0
    while size <= max_bytes:
        if deadline is not None:
            deadline.check()
        piece: bytes = response.read(min(65536, max_bytes + 1 - size))
        if not piece:
            break
        parts.append(piece)
        size += len(piece)
    data = b"".join(parts)
    return data[:max_bytes], size > max_bytes


def open_within(request: urllib.request.Request, seconds: float, what: str, max_bytes: int,
                handlers: list[Any]) -> tuple[bytes, Message, bool]:
    """Open ``request`` and read its body (at most ``max_bytes``) within ``seconds`` in all:
    the body, the headers, and whether the body was longer. ``what`` names the service in
    the :class:`DeadlineExceeded` message; ``handlers`` are added to the opener."""
    deadline = _Deadline(seconds, what)
    opener = urllib.request.build_opener(_DeadlineHTTP(deadline), _DeadlineHTTPS(deadline),
                                         *handlers)
    try:
        with opener.open(request, timeout=seconds) as response:
            data, over = _read_capped(response, max_bytes, deadline)
            headers = response.headers
        deadline.check()
    except DeadlineExceeded:
        raise
    except (OSError, http.client.HTTPException) as exc:
        if deadline.expired or isinstance(exc, TimeoutError) or \
                isinstance(getattr(exc, "reason", None), TimeoutError):
            raise deadline.error() from None
        raise
    finally:
        deadline.cancel()
    return data, headers, over
