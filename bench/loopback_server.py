"""A lean OpenAI-compatible chat-completions server for throughput benchmarks (asyncio, stdlib).

It answers every request after a fixed latency with a four-field judge reply (or ``--reply``).
It is written on asyncio streams rather than http.server threads so that, on a small machine,
the server uses little of the CPU the client under test needs (one thread per connection
costs several times more per request). Keep-alive HTTP/1.1 only; no faults (the test server
does those).

    python bench/loopback_server.py --latency 0.2   # prints its base URL, runs until stdin closes
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys

REPLY = "extracted_final_answer: x\nreasoning: same.\ncorrect: yes\nconfidence: 90%"


def completion(model: str, reply: str = REPLY, calls: list[dict] | None = None) -> bytes:
    message: dict = {"role": "assistant", "content": reply}
    if calls:
        message = {"role": "assistant", "content": "", "tool_calls": calls}
    return json.dumps({
        "id": "bench", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 12, "total_tokens": 112},
    }).encode()


TURNS = re.compile(r"turns=(\d+)")


def agent_calls(request: dict) -> list[dict] | None:
    """``--agent``: a request that offers tools gets one tool call per turn: ``noop`` (an unknown
    tool, answered by the harness with a short error, no I/O) until the conversation has
    ``turns=K`` (read from its messages) turns, then ``final_answer``."""
    if not request.get("tools"):
        return None
    messages = request.get("messages") or []
    done = sum(1 for m in messages if m.get("role") == "assistant")
    found = TURNS.search(json.dumps(messages[:2]))
    wanted = int(found.group(1)) if found else 1
    name, arguments = ("final_answer", {"answer": "x"}) if done + 1 >= wanted else \
        ("noop", {"step": done})
    return [{"id": f"call{done}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}]


async def handle(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, latency: float, reply: str,
    agent: bool = False,
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
            if head.startswith(b"GET"):  # the clients' preflight: GET /v1/models
                listing = json.dumps({"object": "list", "data": [
                    {"id": "bench", "object": "model", "owned_by": "bench"}]}).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(listing), listing))
                await writer.drain()
                continue
            request = json.loads(body)
            model = request.get("model", "bench")
            if latency:
                await asyncio.sleep(latency)
            payload = completion(model, reply, agent_calls(request) if agent else None)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(payload), payload))
            await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.CancelledError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve(latency: float, reply: str, agent: bool = False) -> None:
    server = await asyncio.start_server(
        lambda r, w: handle(r, w, latency, reply, agent), "127.0.0.1", 0, backlog=4096
    )
    port = server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # run until stdin closes
    server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--reply", default=REPLY, help="the assistant message of every reply")
    parser.add_argument("--agent", action="store_true",
                        help="answer requests that offer tools with tool calls (agent_calls)")
    args = parser.parse_args()
    asyncio.run(serve(args.latency, args.reply, args.agent))


if __name__ == "__main__":
    main()
