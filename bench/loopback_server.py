"""A lean OpenAI-compatible chat-completions server for throughput benchmarks (asyncio, stdlib).

It answers every request after a fixed latency with a four-field judge reply. It is written on
asyncio streams rather than http.server threads so that, on a small machine, the server uses
little of the CPU the client under test needs (one thread per connection costs several times
more per request). Keep-alive HTTP/1.1 only; no faults (the test server does those).

    python bench/loopback_server.py --latency 0.2   # prints its base URL, runs until stdin closes
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

REPLY = "extracted_final_answer: x\nreasoning: same.\ncorrect: yes\nconfidence: 90%"


def completion(model: str) -> bytes:
    return json.dumps({
        "id": "bench", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 12, "total_tokens": 112},
    }).encode()


async def handle(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, latency: float
) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            body = await reader.readexactly(length)
            model = json.loads(body).get("model", "bench")
            await asyncio.sleep(latency)
            payload = completion(model)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(payload), payload))
            await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.CancelledError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve(latency: float) -> None:
    server = await asyncio.start_server(
        lambda r, w: handle(r, w, latency), "127.0.0.1", 0, backlog=1024
    )
    port = server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # run until stdin closes
    server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.2)
    asyncio.run(serve(parser.parse_args().latency))


if __name__ == "__main__":
    main()
