"""Benchmark: CPU per chat-completions request of the HTTP clients hopscore could use.

Sends the same request (a 400-character prompt, the judge's parameters) N times, 16 in flight,
to the loopback server with no latency, and reports the client process's CPU time per request
for: hopscore's backend on a plain http:// URL (its lean HTTP/1.1 client,
``hopscore.engine.http1``), the same backend through its aiohttp session (what it uses for
https:// and proxies, and used for every URL before), the ``openai`` SDK's generic post (what
hopscore used before that; two clients, as it ran them) and a bare ``httpx`` client, each when
it is installed. Run side by side, so the ratios hold on a busy machine.

    python bench/http_client_cpu.py            # 3000 requests per client
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

BODY = {"model": "bench", "messages": [{"role": "user", "content": "Which city is meant? " * 20}],
        "temperature": 0.0, "max_tokens": 1024}


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def measure(send: Callable[[], Awaitable[object]], n: int, inflight: int) -> float:
    await send()  # connect and warm up
    sem = asyncio.Semaphore(inflight)

    async def one() -> None:
        async with sem:
            await send()

    before = cpu()
    await asyncio.gather(*(one() for _ in range(n)))
    return (cpu() - before) / n


async def hopscore_backend(url: str, n: int, inflight: int, *, lean: bool = True) -> float:
    from hopscore.engine import ChatRequest, OpenAIBackend

    backend = OpenAIBackend(url, "k")
    if not lean:
        backend._lean = None  # the aiohttp session, as for an https:// URL
    request = ChatRequest(model="bench", messages=BODY["messages"], temperature=0.0,
                          max_tokens=1024)
    try:
        return await measure(lambda: backend.send(request, 30.0), n, inflight)
    finally:
        await backend.aclose()


async def openai_sdk(url: str, n: int, inflight: int) -> float:
    import openai

    clients = [openai.AsyncOpenAI(base_url=url, api_key="k", max_retries=0) for _ in range(2)]
    turn = [0]

    async def send() -> object:
        turn[0] += 1
        text = await clients[turn[0] % 2].post("/chat/completions", cast_to=str, body=BODY,
                                               options={"timeout": 30})
        return json.loads(text)

    try:
        return await measure(send, n, inflight)
    finally:
        for client in clients:
            await client.close()


async def httpx_client(url: str, n: int, inflight: int) -> float:
    try:
        import httpx
    except ImportError:
        import httpx2 as httpx  # type: ignore[no-redef]

    client = httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=inflight))
    data = json.dumps(BODY).encode()
    headers = {"Authorization": "Bearer k", "Content-Type": "application/json"}

    async def send() -> object:
        reply = await client.post(f"{url}/chat/completions", content=data, headers=headers)
        return json.loads(reply.content)

    try:
        return await measure(send, n, inflight)
    finally:
        await client.aclose()


async def hopscore_aiohttp(url: str, n: int, inflight: int) -> float:
    return await hopscore_backend(url, n, inflight, lean=False)


CLIENTS = {"hopscore (http1)": hopscore_backend, "hopscore (aiohttp)": hopscore_aiohttp,
           "openai SDK": openai_sdk, "httpx": httpx_client}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--inflight", type=int, default=16)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, str(REPO / "bench" / "loopback_server.py"), "--latency", "0"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None and server.stdin is not None
    url = server.stdout.readline().strip()
    try:
        results = {}
        for name, client in CLIENTS.items():
            try:
                results[name] = asyncio.run(client(url, args.requests, args.inflight))
            except ImportError as exc:
                print(f"{name:20s} not installed ({exc.name})")
                continue
            print(f"{name:20s} {1000 * results[name]:.3f} ms CPU per request", flush=True)
        base = results.get("hopscore (http1)")
        if base:
            for name, value in results.items():
                print(f"{name:20s} {value / base:5.1f}x hopscore's")
    finally:
        server.stdin.close()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
