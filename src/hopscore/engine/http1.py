"""A lean HTTP/1.1 client for plain ``http://`` endpoints: a local vLLM, llama.cpp, Ollama.

A run or a judge against a server on this machine or the local network sends hundreds of
requests a second, and every one of them also costs this process CPU: aiohttp's layers
(request and response objects, connector, tracing hooks, multidicts) took about 0.3 ms of CPU
per request on the 2-core development machine, this client about 0.1 ms
(``bench/http_client_cpu.py``). :class:`~hopscore.engine.backend.OpenAIBackend` uses it for
``http://`` URLs that no proxy applies to; ``https://``, proxies and user:password URLs go
through aiohttp.

What it does: one ``POST`` at a time per connection (no pipelining), keep-alive connections
reused most-recent first and dropped after :data:`KEEPALIVE_S` idle (before the servers'
own 5 s), replies framed by ``Content-Length``, chunked transfer coding or the end of the
connection, ``gzip``/``deflate`` bodies decoded (it asks for ``identity``), ``1xx`` replies
skipped. A reused connection that the server closed just as the request was written (no byte
of a reply) is retried once on a new connection, as aiohttp and browsers do. A cancelled
exchange (the engine's timeout) closes its connection, so a late reply is never read as the
answer to another request.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from dataclasses import dataclass
from urllib.parse import urlsplit

#: seconds an idle connection is kept (under the 5 s after which uvicorn, llama.cpp's server and
#: others close theirs)
KEEPALIVE_S = 3.0
#: the longest status line and headers accepted
MAX_HEAD = 64 * 1024
#: the longest body accepted (before decoding; a decoded body is held to it too)
MAX_BODY = 32 * 1024 * 1024

CONNECT, CLOSED, CUT, MALFORMED, TOO_LARGE = "connect", "closed", "cut", "malformed", "too_large"


class HTTPFailure(Exception):
    """An exchange that produced no reply; ``kind`` is one of CONNECT, CLOSED (no byte of a
    reply), CUT (part of one) and MALFORMED."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    #: as the server spelled the names (repeated headers joined with ", ")
    headers: dict[str, str]
    body: bytes


class _Malformed(Exception):
    pass


class _TooLarge(Exception):
    pass


#: bytes a connection reads at a time, into its client's one buffer
READ_SIZE = 64 * 1024


class _Connection(asyncio.BufferedProtocol):
    """One keep-alive connection. It reads into ``into`` (its client's buffer, shared by the
    client's connections: the event loop reads one socket at a time and hands the bytes over at
    once), not into a new bytes object of asyncio's 256 KiB read size per read, which cost an
    allocation the size of a read and its release (three system calls) for every reply."""

    def __init__(self, max_body: int = MAX_BODY, into: memoryview | None = None) -> None:
        self.max_body = max_body
        self._into = into if into is not None else memoryview(bytearray(READ_SIZE))
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.waiter: asyncio.Future[Reply] | None = None
        self.closed = False
        self.reusable = True
        self.idle_since = 0.0
        self._start()

    def _start(self) -> None:
        self._head: tuple[int, dict[str, str]] | None = None
        self._length: int | None = None
        self._chunked = False
        self._until_eof = False
        self._encoding = ""
        self._body = bytearray()
        self._received = False

    # -- asyncio callbacks -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._into

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(self._into[:nbytes])

    def data_received(self, data: bytes | memoryview) -> None:
        waiter = self.waiter
        if waiter is None or waiter.done():  # bytes nobody asked for: never reuse this
            self.reusable = False
            self.close()
            return
        self._received = True
        self.buf += data
        try:
            self._parse(waiter)
            if not waiter.done() and len(self.buf) + len(self._body) > self.max_body:
                raise _TooLarge(f"a body over {self.max_body:,} bytes")
        except (_Malformed, _TooLarge) as exc:
            self.reusable = False
            self.close()
            if not waiter.done():
                kind = TOO_LARGE if isinstance(exc, _TooLarge) else MALFORMED
                waiter.set_exception(HTTPFailure(kind, str(exc)))

    def eof_received(self) -> bool:
        return False  # close the transport; connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter = self.waiter
        if waiter is None or waiter.done():
            return
        if self._head is not None and self._until_eof:
            try:
                self._finish(waiter, bytes(self.buf))
            except _Malformed as error:
                waiter.set_exception(HTTPFailure(MALFORMED, str(error)))
            except _TooLarge as error:
                waiter.set_exception(HTTPFailure(TOO_LARGE, str(error)))
            return
        reason = f": {exc}" if exc is not None else ""
        if not self._received:
            waiter.set_exception(HTTPFailure(CLOSED, "closed the connection before answering"
                                             + reason))
        else:
            waiter.set_exception(HTTPFailure(CUT, "closed the connection in the middle of its "
                                             "reply" + reason))

    # -- parsing ---------------------------------------------------------------------------

    def _parse(self, waiter: asyncio.Future[Reply]) -> None:
        while self._head is None:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buf) > MAX_HEAD:
                    raise _Malformed(f"a status line and headers over {MAX_HEAD} bytes")
                return
            head = bytes(self.buf[:end])
            del self.buf[:end + 4]
            status, headers = _parse_head(head)
            if 100 <= status < 200:  # 100 Continue and the like: the real reply follows
                continue
            self._frame(status, headers)
        if self._chunked:
            body = self._dechunk()
            if body is None:
                return
        elif self._until_eof:
            return
        else:
            assert self._length is not None
            if len(self.buf) < self._length:
                return
            body = bytes(self.buf[:self._length])
            del self.buf[:self._length]
        if self.buf:  # more than the reply: the connection's framing cannot be trusted
            self.reusable = False
        self._finish(waiter, body)

    def _frame(self, status: int, headers: dict[str, str]) -> None:
        lowered = {name.lower(): value for name, value in headers.items()}
        self._head = (status, headers)
        if "close" in lowered.get("connection", "").lower():
            self.reusable = False
        self._encoding = lowered.get("content-encoding", "").strip().lower()
        if "chunked" in lowered.get("transfer-encoding", "").lower():
            self._chunked = True
        elif "content-length" in lowered:
            try:
                self._length = int(lowered["content-length"].split(",")[0])
            except ValueError:
                raise _Malformed(f"Content-Length {lowered['content-length']!r}") from None
            if self._length < 0:
                raise _Malformed(f"Content-Length {self._length}")
            if self._length > self.max_body:
                raise _TooLarge(f"a body of {self._length:,} bytes (Content-Length), over "
                                f"{self.max_body:,}")
        elif status in (204, 304):
            self._length = 0
        else:
            self._until_eof = True
            self.reusable = False

    def _dechunk(self) -> bytes | None:
        """Move the complete chunks of ``buf`` into the body; the body once the last chunk and
        the trailers are in, else None."""
        buf = self.buf
        while True:
            line_end = buf.find(b"\r\n")
            if line_end < 0:
                if len(buf) > MAX_HEAD:
                    raise _Malformed("a chunk size line over 64 KiB")
                return None
            size_text = bytes(buf[:line_end]).split(b";")[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise _Malformed(f"chunk size {size_text[:40]!r}") from None
            if size == 0:  # the last chunk, then trailer lines up to an empty one
                pos = line_end + 2
                if buf[pos:pos + 2] == b"\r\n":
                    done = pos + 2
                else:
                    found = buf.find(b"\r\n\r\n", pos)
                    if found < 0:
                        if len(buf) - pos > MAX_HEAD:
                            raise _Malformed("trailers over 64 KiB")
                        return None
                    done = found + 4
                del buf[:done]
                return bytes(self._body)
            if len(buf) < line_end + 2 + size + 2:
                return None
            start = line_end + 2
            self._body += buf[start:start + size]
            if buf[start + size:start + size + 2] != b"\r\n":
                raise _Malformed("a chunk not followed by CRLF")
            del buf[:start + size + 2]

    def _finish(self, waiter: asyncio.Future[Reply], body: bytes) -> None:
        assert self._head is not None
        status, headers = self._head
        if self._encoding in ("gzip", "x-gzip", "deflate"):
            body = _decode(body, self._encoding, self.max_body)
        self._start()
        waiter.set_result(Reply(status, headers, body))

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit() \
            or len(parts[1]) != 3:
        raise _Malformed(f"status line {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep or not name.strip():
            raise _Malformed(f"header line {line[:80]!r}")
        key = name.decode("latin-1").strip()
        text = value.decode("latin-1").strip()
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return int(parts[1]), headers


def _decode(body: bytes, encoding: str, limit: int = MAX_BODY) -> bytes:
    def inflate(wbits: int) -> bytes:
        decoder = zlib.decompressobj(wbits)
        out = decoder.decompress(body, limit + 1)
        if len(out) > limit:
            raise _TooLarge(f"a {encoding} body that decodes to over {limit:,} bytes")
        return out

    try:
        if encoding == "deflate":
            try:
                return inflate(zlib.MAX_WBITS)
            except zlib.error:
                return inflate(-zlib.MAX_WBITS)  # raw deflate, as some send
        return inflate(16 + zlib.MAX_WBITS)
    except zlib.error as exc:
        raise _Malformed(f"a {encoding} body that does not decode ({exc})") from None


class Http1Client:
    """POSTs to one ``http://`` URL over a pool of keep-alive connections."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"not a plain http:// URL: {url!r}")
        self.host = parts.hostname
        self.port = parts.port or 80
        netloc = parts.netloc.rpartition("@")[2]
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"POST {target} HTTP/1.1", f"Host: {netloc}", "Accept-Encoding: identity"]
        lines += [f"{name}: {value}" for name, value in headers.items()
                  if name.lower() not in ("host", "content-length", "accept-encoding")]
        self._prefix = ("\r\n".join(lines) + "\r\n").encode("latin-1")
        self._idle: list[_Connection] = []
        #: what the connections read into (one event loop reads one socket at a time)
        self._into = memoryview(bytearray(READ_SIZE))

    async def post(self, data: bytes) -> Reply:
        """Send ``data`` as the body; the reply, or :class:`HTTPFailure`."""
        conn = self._take()
        if conn is not None:
            try:
                return await self._exchange(conn, data)
            except HTTPFailure as failure:
                if failure.kind != CLOSED:
                    raise
                # closed by the server while idle, just as the request went out: once more
        return await self._exchange(await self._connect(), data)

    def _take(self) -> _Connection | None:
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed and now - conn.idle_since < KEEPALIVE_S:
                return conn
            conn.close()
        return None

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            _, conn = await loop.create_connection(lambda: _Connection(into=self._into),
                                                   self.host, self.port)
        except OSError as exc:
            raise HTTPFailure(CONNECT, _reason(exc)) from None
        return conn

    async def _exchange(self, conn: _Connection, data: bytes) -> Reply:
        assert conn.transport is not None
        waiter: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        conn.waiter = waiter
        conn.transport.write(b"%sContent-Length: %d\r\n\r\n%s" % (self._prefix, len(data), data))
        try:
            reply = await waiter
        except BaseException:  # cancelled (a timeout) or failed: the connection is done
            conn.abort()
            raise
        conn.waiter = None
        if conn.reusable and not conn.closed:
            conn.idle_since = time.monotonic()
            self._idle.append(conn)
        else:
            conn.close()
        return reply

    def close(self) -> None:
        for conn in self._idle:
            conn.close()
        self._idle.clear()


def _reason(exc: OSError) -> str:
    import os

    if exc.errno:
        return f"{os.strerror(exc.errno)} (errno {exc.errno})"
    return str(exc) or type(exc).__name__
