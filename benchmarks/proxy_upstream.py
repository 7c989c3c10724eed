"""The proxy benchmark's fake model API and the request it is sent.

    python benchmarks/proxy_upstream.py PORTFILE     # serve until SIGTERM

Why a process of its own: the upstream must share neither an event loop nor a GIL
with the load generator or the proxy measured. It answers ``POST /v1/messages`` like
the Anthropic API: a JSON message, or -- when the request says ``"stream": true`` --
50 SSE events (``STREAM_EVENTS``), the k-th ``k * N`` ms after the first when the request's
``metadata.user_id`` is ``pace-N``. The request (:func:`request_body`) is a realistic
~9 KB Messages request: system prompt, tool schemas, a tool-use history whose last
round carries the request's index, so no two bodies are the same.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

MODEL = "claude-sonnet-4-5"
STREAM_EVENTS = 50  # message_start, content_block_start, 45 deltas, block_stop, message_delta, stop


def _request_template() -> bytes:
    """A ~9 KB Messages request with placeholders for the index, stream flag, pacing."""
    tools = [
        {
            "name": name,
            "description": desc * 3,
            "input_schema": {"type": "object", "properties": props, "required": list(props)[:1]},
        }
        for name, desc, props in (
            (
                "Read",
                "Read a file from the local filesystem and return its contents. ",
                {
                    "file_path": {"type": "string", "description": "absolute path of the file"},
                    "offset": {"type": "integer", "description": "line to start reading at"},
                    "limit": {"type": "integer", "description": "number of lines to read"},
                },
            ),
            (
                "Edit",
                "Replace an exact string in a file with another string. ",
                {
                    "file_path": {"type": "string", "description": "absolute path of the file"},
                    "old_string": {"type": "string", "description": "the text to replace"},
                    "new_string": {"type": "string", "description": "the replacement text"},
                },
            ),
            (
                "Bash",
                "Run a shell command in the workspace and return its output. ",
                {
                    "command": {"type": "string", "description": "the command to run"},
                    "timeout": {"type": "integer", "description": "milliseconds before kill"},
                },
            ),
            (
                "Grep",
                "Search file contents with a regular expression. ",
                {
                    "pattern": {"type": "string", "description": "the regular expression"},
                    "path": {"type": "string", "description": "where to search"},
                },
            ),
        )
    ]
    code = "".join(
        f"    {i:3d}  def handler_{i}(request):\n"
        f"             return render(request, 'page_{i}.html')\n"
        for i in range(48)
    )
    messages = [
        {
            "role": "user",
            "content": "The tests in tests/test_views.py fail since yesterday's "
            "refactor. Find out why and fix it, then run the suite.",
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "I'll start by reading the failing test module."},
                {
                    "type": "tool_use",
                    "id": "toolu_01A",
                    "name": "Read",
                    "input": {"file_path": "/repo/app/views.py"},
                },
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": code}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Now let me run the failing tests to see the error."},
                {
                    "type": "tool_use",
                    "id": "toolu_01B",
                    "name": "Bash",
                    "input": {"command": "python -m pytest tests/test_views.py -x -q"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01B",
                    "content": "F\n"
                    + "E   TemplateDoesNotExist: page_7.html\n" * 20
                    + "1 failed, 23 passed in 0.52s",
                }
            ],
        },
        # Each request ends with a fresh tool round trip (ids and output carry the
        # request's index): an agent loop within one episode, as a real run looks.
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_@@INDEX@@",
                    "name": "Bash",
                    "input": {
                        "command": "python -m pytest tests/test_views.py -q -k step_@@INDEX@@"
                    },
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_@@INDEX@@",
                    "content": "24 passed in 0.@@INDEX@@s",
                }
            ],
        },
    ]
    body = {
        "model": MODEL,
        "max_tokens": 4096,
        "system": "You are a careful coding agent working in a Python repository. " * 20,
        "tools": tools,
        "messages": messages,
        "stream": "@@STREAM@@",
        "metadata": {"user_id": "@@PACE@@"},
    }
    return json.dumps(body).encode()


_TEMPLATE = _request_template()


def request_body(index: int, stream: bool, pace_ms: float) -> bytes:
    body = _TEMPLATE.replace(b'"@@STREAM@@"', b"true" if stream else b"false")
    body = body.replace(b"@@PACE@@", f"pace-{pace_ms:g}".encode())
    return body.replace(b"@@INDEX@@", str(index).encode())


def _message(text: str) -> dict[str, Any]:
    return {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 2100, "output_tokens": 45},
    }


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _stream_events() -> list[bytes]:
    words = [f"word{i} " for i in range(STREAM_EVENTS - 5)]
    start = _message("")
    start["content"], start["stop_reason"] = [], None
    start["usage"] = {"input_tokens": 2100, "output_tokens": 1}
    events = [
        _sse("message_start", {"type": "message_start", "message": start}),
        _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
    ]
    events += [
        _sse(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": w}},
        )
        for w in words
    ]
    events += [
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": len(words)},
            },
        ),
        _sse("message_stop", {"type": "message_stop"}),
    ]
    assert len(events) == STREAM_EVENTS
    return events


def serve_upstream(port_file: str) -> int:
    """Run the fake Anthropic upstream until SIGTERM; its port goes to ``port_file``."""
    from aiohttp import web

    reply = json.dumps(
        _message("Fixed: views.py referenced page_7.html after the rename. All 24 tests pass now.")
    ).encode()
    events = _stream_events()

    async def messages(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        try:
            parsed = json.loads(body)
        except ValueError:
            return web.json_response(
                {
                    "type": "error",
                    "error": {"type": "invalid_request_error", "message": "bad json"},
                },
                status=400,
            )
        if not parsed.get("stream"):
            return web.Response(
                body=reply, content_type="application/json", headers={"request-id": "req_bench"}
            )
        user = str((parsed.get("metadata") or {}).get("user_id", ""))
        pace = float(user[5:]) / 1000 if user.startswith("pace-") else 0.0
        resp = web.StreamResponse(
            headers={
                "content-type": "text/event-stream",
                "cache-control": "no-cache",
                "request-id": "req_bench",
            }
        )
        await resp.prepare(request)
        # paced by the clock, as a model streams at its own rate: a sleep of ``pace``
        # after each write would let every late wake-up (a busier machine) delay all the
        # events after it, and the proxy that keeps the cores busier would seem to add it
        began = time.monotonic()
        for i, event in enumerate(events):
            if pace and i:
                await asyncio.sleep(max(0.0, began + i * pace - time.monotonic()))
            await resp.write(event)
        await resp.write_eof()
        return resp

    async def main() -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/messages", messages)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        tmp = port_file + ".tmp"
        Path(tmp).write_text(json.dumps({"port": port, "pid": os.getpid()}))
        os.replace(tmp, port_file)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        await runner.cleanup()

    asyncio.run(main())
    return 0


if __name__ == "__main__":
    sys.exit(serve_upstream(sys.argv[1]))
