"""A scripted Anthropic Messages API on 127.0.0.1 for the offline demo.

Stateless: the reply is chosen by how many assistant turns the request already
holds, so the agent (or anyone replaying its requests) always gets the same run.
``"stream": true`` gets the real SSE event sequence (``message_start`` … deltas …
``message_stop``, tool input as ``input_json_delta`` pieces), so the real
``anthropic`` SDK accepts it. :class:`FakeModelServer` runs the server on its own
event loop in a thread the caller owns (:meth:`~FakeModelServer.stop` joins it).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

CONFIRM_PATTERN = "deploy*"  # the demo proxy holds calls to the deploy tool


@dataclass(frozen=True)
class Turn:
    text: str
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    usage: tuple[int, int] = (0, 0)


SCRIPT: list[Turn] = [
    Turn(
        "I'll start by reading the project notes.",
        [("toolu_demo_1", "Read", {"file_path": "NOTES.md"})],
        (412, 38),
    ),
    Turn(
        "The notes say the tests must pass before a release. Running them.",
        [("toolu_demo_2", "Bash", {"command": "pytest -q"})],
        (530, 41),
    ),
    Turn(
        "All tests pass. Deploying the release to production.",
        [("toolu_demo_3", "deploy", {"env": "production", "version": "1.4.0"})],
        (655, 52),
    ),
    Turn("Release 1.4.0 is deployed to production. Done.", [], (760, 21)),
]
DENIED = Turn(
    "Understood, the deploy was not allowed; stopping here without releasing.", [], (700, 19)
)


def message_json(
    text: str,
    calls: list[tuple[str, str, dict[str, Any]]],
    usage: tuple[int, int],
    msg_id: str,
    model: str,
) -> dict[str, Any]:
    """An Anthropic Messages response object (what the API returns without streaming)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "tool_use", "id": i, "name": name, "input": args} for i, name, args in calls
    ]
    return {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def _message(turn: Turn, n: int, model: str) -> dict[str, Any]:
    return message_json(turn.text, turn.calls, turn.usage, f"msg_demo_{n:03d}", model)


def _sse(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


def _pieces(text: str, n: int) -> list[str]:
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)] if text else []


def message_sse(
    msg: dict[str, Any],
    usage: tuple[int, int],
    text_pieces: int = 4,
    json_pieces: int = 3,
    ping_after_first: bool = False,
) -> list[bytes]:
    """A Messages response as the streaming events the API sends for it.

    Texts and tool inputs arrive in several deltas and a ``ping`` is mixed in, as
    the real API does, so what reassembles streams is exercised (tests use it too).
    """
    start = {
        **msg,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": usage[0], "output_tokens": 1},
    }
    out = [
        _sse("message_start", {"type": "message_start", "message": start}),
        _sse("ping", {"type": "ping"}),
    ]
    for i, block in enumerate(msg["content"]):
        if block["type"] == "text":
            out.append(
                _sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            out += [
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "text_delta", "text": p},
                    },
                )
                for p in _pieces(block["text"], text_pieces)
            ]
        else:
            out.append(
                _sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {
                            "type": "tool_use",
                            "id": block["id"],
                            "name": block["name"],
                            "input": {},
                        },
                    },
                )
            )
            out += [
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "input_json_delta", "partial_json": p},
                    },
                )
                for p in _pieces(json.dumps(block["input"]), json_pieces)
            ]
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
        if ping_after_first and i == 0:
            out.append(_sse("ping", {"type": "ping"}))
    out.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage[1]},
            },
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return out


def sse_events(turn: Turn, n: int, model: str) -> list[bytes]:
    """The Messages streaming events for one turn."""
    return message_sse(_message(turn, n, model), turn.usage)


def choose(body: dict[str, Any]) -> tuple[Turn, int]:
    """The scripted turn for a request: by assistant turns so far; a denied deploy ends it,
    and the last turn says where the deploy tool reported it deployed (an operator may
    have edited the call: ``"env": "staging"``)."""
    messages = body.get("messages") or []
    done = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
    last = messages[-1] if messages else {}
    if done and isinstance(last, dict) and "denied" in json.dumps(last.get("content", "")):
        return DENIED, done
    turn = SCRIPT[min(done, len(SCRIPT) - 1)]
    deployed = _deployed(last.get("content") if isinstance(last, dict) else None)
    if not turn.calls and deployed is not None:
        version, env = deployed
        turn = Turn(f"Release {version} is deployed to {env}. Done.", [], turn.usage)
    return turn, done


def _deployed(content: Any) -> tuple[str, str] | None:
    """(version, env) from a ``deploy`` tool result in ``content``, if there is one."""
    blocks = content if isinstance(content, list) else []
    for block in blocks:
        text = block.get("content") if isinstance(block, dict) else None
        found = re.match(r"deployed (\S+) to (\S+)", text) if isinstance(text, str) else None
        if found:
            return found.group(1), found.group(2)
    return None


class FakeModelServer:
    """The demo model on 127.0.0.1 (port 0 = pick), in a thread; ``url`` once started."""

    def __init__(self, port: int = 0, pace: float = 0.03) -> None:
        self.port = port
        self.pace = pace  # seconds between streamed events, so streaming is visible
        self.url = ""
        self.requests = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def start(self, timeout: float = 10.0) -> str:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(
            target=loop.run_forever, name="loom-demo-model", daemon=True
        )
        self._thread.start()
        self.url = asyncio.run_coroutine_threadsafe(self._start(), loop).result(timeout)
        return self.url

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving and join the thread. Idempotent."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._stop(), loop).result(timeout)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            if not thread.is_alive():
                loop.close()
            self._loop = self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    async def _start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/messages", self._messages)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return f"http://127.0.0.1:{self.port}"

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- the API -----------------------------------------------------------------------
    async def _messages(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            return web.json_response(
                {
                    "type": "error",
                    "error": {"type": "invalid_request_error", "message": "body is not JSON"},
                },
                status=400,
            )
        self.requests += 1
        turn, n = choose(body)
        model = str(body.get("model", "demo-model"))
        if not body.get("stream"):
            return web.json_response(
                _message(turn, n, model), headers={"request-id": f"req_demo_{n}"}
            )
        resp = web.StreamResponse(
            headers={
                "content-type": "text/event-stream; charset=utf-8",
                "cache-control": "no-cache",
            }
        )
        await resp.prepare(request)
        try:
            for event in sse_events(turn, n, model):
                await resp.write(event)
                if self.pace:
                    await asyncio.sleep(self.pace)
            await resp.write_eof()
        except ConnectionError:
            pass
        return resp


def main() -> int:  # pragma: no cover - manual use: python -m loom_core.demo.fake_model
    server = FakeModelServer()
    print(f"demo model on {server.start()} (Ctrl-C to stop)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
