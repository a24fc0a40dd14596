"""The lean HTTP/1.1 client (hopscore.engine.http1) against a real TCP peer on 127.0.0.1 that
writes scripted bytes: framings real servers use (Content-Length, chunked with trailers, to the
end of the connection), compressed bodies, 1xx replies, connections closed while idle or in
the middle of a reply, malformed replies, and a cancelled exchange."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from hopscore.engine import ChatRequest, OpenAIBackend
from hopscore.engine.http1 import CLOSED, CONNECT, CUT, MALFORMED, Http1Client, HTTPFailure
from hopscore.engine.types import CallError

COMPLETION = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant",
                                                             "content": "fine"},
                                      "finish_reason": "stop"}]}).encode()

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[bool]]


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return head, await reader.readexactly(length)


class Peer:
    """A TCP server on 127.0.0.1: ``script(reader, writer, n)`` answers the n-th request of
    a connection (after it was read) and returns whether to keep the connection open."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.connections = 0
        self.requests: list[tuple[bytes, bytes]] = []
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> Peer:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self.server is not None
        self.server.close()

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1/chat/completions"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        n = 0
        try:
            while True:
                self.requests.append(await read_request(reader))
                if not await self.script(reader, writer, n):
                    break
                n += 1
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def reply(body: bytes, *headers: str, status: str = "200 OK") -> bytes:
    lines = [f"HTTP/1.1 {status}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def client(peer: Peer) -> Http1Client:
    return Http1Client(peer.url, {"Content-Type": "application/json", "Authorization": "Bearer k"})


def test_content_length_keep_alive_reuses_one_connection() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(reply(b'{"n": %d}' % n, "Content-Length: 8"))
        return True

    async def go() -> None:
        async with Peer(script) as peer:
            http = client(peer)
            for i in range(3):
                got = await http.post(b'{"q": 1}')
                assert (got.status, json.loads(got.body)) == (200, {"n": i})
            http.close()
            assert peer.connections == 1
            head, body = peer.requests[0]
            assert head.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
            assert b"\r\nHost: 127.0.0.1:" in head and b"Authorization: Bearer k" in head
            assert body == b'{"q": 1}'

    asyncio.run(go())


def test_a_chunked_reply_with_trailers_in_pieces() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        raw = reply(b"5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n",
                    "Transfer-Encoding: chunked")
        for i in range(0, len(raw), 3):  # three bytes at a time
            writer.write(raw[i:i + 3])
            await writer.drain()
            await asyncio.sleep(0)
        return True

    async def go() -> None:
        async with Peer(script) as peer:
            http = client(peer)
            assert (await http.post(b"{}")).body == b"hello, world"
            assert (await http.post(b"{}")).body == b"hello, world"  # the same connection
            http.close()
            assert peer.connections == 1

    asyncio.run(go())


def test_a_reply_without_length_ends_with_the_connection_and_gzip_is_decoded() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(reply(gzip.compress(b"all of it"), "Content-Encoding: gzip",
                           "Connection: close"))
        return False

    async def go() -> None:
        async with Peer(script) as peer:
            http = client(peer)
            assert (await http.post(b"{}")).body == b"all of it"
            assert (await http.post(b"{}")).body == b"all of it"  # a new connection
            http.close()
            assert peer.connections == 2

    asyncio.run(go())


def test_a_100_continue_is_skipped_and_headers_are_kept() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        writer.write(reply(b"{}", "Content-Length: 2", "Retry-After: 7", status="429 Too Many"))
        return True

    async def go() -> None:
        async with Peer(script) as peer:
            http = client(peer)
            got = await http.post(b"{}")
            http.close()
            assert got.status == 429 and got.headers["Retry-After"] == "7"

    asyncio.run(go())


def test_a_connection_the_server_closed_while_idle_is_replaced_once() -> None:
    # the server closes each connection after its reply without saying so (as a server
    # whose keep-alive ran out does): the next request, written into the closed connection,
    # gets no byte back and is sent again on a new one
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(reply(b"ok", "Content-Length: 2"))
        await writer.drain()
        return False

    async def go() -> None:
        async with Peer(script) as peer:
            http = client(peer)
            for _ in range(3):
                assert (await http.post(b"{}")).body == b"ok"
                await asyncio.sleep(0.05)  # the close reaches us, or not: both must work
            http.close()
            assert len(peer.requests) == 3 and peer.connections == 3

    asyncio.run(go())


@pytest.mark.parametrize(("raw", "kind"), [
    (b"", CLOSED),
    (reply(b"only part", "Content-Length: 100"), CUT),
    (b"SPDY/3 200 OK\r\n\r\n", MALFORMED),
    (reply(b"x", "Content-Length: lots"), MALFORMED),
    (reply(b"zz\r\nabc", "Transfer-Encoding: chunked"), MALFORMED),
])
def test_replies_that_are_not_replies(raw: bytes, kind: str) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(raw)
        await writer.drain()
        return False

    async def go() -> None:
        async with Peer(script) as peer:
            http = client(peer)
            with pytest.raises(HTTPFailure) as failure:
                await http.post(b"{}")
            http.close()
            assert failure.value.kind == kind

    asyncio.run(go())


def test_a_cancelled_exchange_never_hands_its_late_reply_to_the_next() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        await asyncio.sleep(0.3)
        writer.write(reply(b"late", "Content-Length: 4"))
        return True

    async def go() -> None:
        async with Peer(script) as peer:
            http = client(peer)
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(http.post(b'{"q": "first"}'), 0.1)
            got = await http.post(b'{"q": "second"}')
            http.close()
            assert got.body == b"late" and peer.connections == 2

    asyncio.run(go())


def test_the_backend_names_the_url_and_maps_each_failure() -> None:
    request = ChatRequest(model="m", messages=[{"role": "user", "content": "q"}])

    async def closed(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        return False

    async def good(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(reply(COMPLETION, f"Content-Length: {len(COMPLETION)}"))
        return True

    async def go() -> None:
        async with Peer(good) as peer:
            backend = OpenAIBackend(peer.url.rsplit("/chat/completions", 1)[0], "k")
            assert backend._lean is not None
            assert (await backend.send(request, 5.0)).content == "fine"
            await backend.aclose()
        async with Peer(closed) as peer:
            url = peer.url
            backend = OpenAIBackend(url.rsplit("/chat/completions", 1)[0], "k")
            with pytest.raises(CallError) as error:
                await backend.send(request, 5.0)
            assert error.value.kind == "connection" and peer.url in error.value.message
            await backend.aclose()
        port = url.split(":")[2].split("/")[0]  # closed now: nobody listens there
        backend = OpenAIBackend(f"http://127.0.0.1:{port}/v1", "k")
        with pytest.raises(CallError) as error:
            await backend.send(request, 5.0)
        assert error.value.kind == "connection" and "refused" in error.value.message.lower()
        await backend.aclose()

    asyncio.run(go())


def test_a_proxy_or_https_url_goes_through_aiohttp(monkeypatch: pytest.MonkeyPatch) -> None:
    assert OpenAIBackend("https://api.example.com/v1", "k")._lean is None
    assert OpenAIBackend("http://user:pw@127.0.0.1:9/v1", "k")._lean is None
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:3128")
    monkeypatch.setenv("NO_PROXY", "localhost")
    assert OpenAIBackend("http://127.0.0.1:9/v1", "k")._lean is None
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    assert OpenAIBackend("http://127.0.0.1:9/v1", "k")._lean is not None


def test_connect_failures_are_connect() -> None:
    async def go() -> None:
        http = Http1Client("http://127.0.0.1:9/v1/chat/completions", {})
        with pytest.raises(HTTPFailure) as failure:
            await http.post(b"{}")
        assert failure.value.kind == CONNECT

    asyncio.run(go())


def test_connections_reading_into_one_buffer_each_get_their_own_reply() -> None:
    """The client's connections share one read buffer: replies larger than it, sent in
    pieces and interleaved over many connections, each arrive whole and unmixed."""
    from hopscore.engine.http1 import READ_SIZE

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        _, body = peer_requests[-1]
        index = int(json.loads(body)["i"])
        payload = (b"%d:" % index) * (1000 + (index * 997) % (3 * READ_SIZE // 4))
        data = reply(payload, f"Content-Length: {len(payload)}")
        for start in range(0, len(data), 5000):  # pieces, other connections in between
            writer.write(data[start:start + 5000])
            await writer.drain()
            await asyncio.sleep(0)
        return True

    peer_requests: list[tuple[bytes, bytes]] = []

    async def go() -> None:
        async with Peer(script) as peer:
            nonlocal peer_requests
            peer_requests = peer.requests
            http = client(peer)
            replies = await asyncio.gather(*(http.post(b'{"i": %d}' % i) for i in range(40)))
            http.close()
            for i, got in enumerate(replies):
                expected = (b"%d:" % i) * (1000 + (i * 997) % (3 * READ_SIZE // 4))
                assert got.body == expected

    asyncio.run(go())
