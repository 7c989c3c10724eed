"""The demo's scripted agent: ``python -m loom_core.demo.agent [--base-url URL] [--pace S]``.

A plain tool-use loop against the Anthropic Messages API at ``--base-url`` (default
``$ANTHROPIC_BASE_URL``): send the conversation, "run" each tool the model asks for
(canned results, nothing is executed), send the results back, until the model stops
asking. ``deploy`` reports the arguments it got (an edited call says so). Odd turns
stream. It uses the real ``anthropic`` SDK when it is installed and
plain ``urllib`` POSTs of the same JSON otherwise (``LOOM_DEMO_NO_SDK=1`` forces that),
so the demo runs for users without the SDK. One line per event on stdout; exit 0 when
the run ended normally, 1 on an API error.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
from typing import Any

from loom_core.cli.help import HelpParser

MODEL = "claude-demo-1"
API_KEY = "sk-ant-demo-offline-not-a-real-key"
TASK = "Run the tests and, if they pass, deploy release 1.4.0 to production."
RESULTS = {
    "Read": "# Release notes\nRun the test suite before every release.\n",
    "Bash": "........................ 24 passed in 0.41s",
}
TOOLS = [
    {
        "name": "Read",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}},
    },
    {
        "name": "Bash",
        "description": "Run a shell command",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
    },
    {
        "name": "deploy",
        "description": "Deploy a release",
        "input_schema": {
            "type": "object",
            "properties": {"env": {"type": "string"}, "version": {"type": "string"}},
        },
    },
]


def tool_result(name: str, args: Any) -> str:
    """What a tool "did": canned text, except that ``deploy`` reports the arguments it
    ran with, so an Edit & approve in the app (``"env": "staging"``) shows in the run."""
    if name == "deploy":
        args = args if isinstance(args, dict) else {}
        version, env = args.get("version", "?"), args.get("env", "?")
        return f"deployed {version} to {env} (3 instances healthy)"
    return RESULTS.get(name, "ok")


def say(line: str) -> None:
    print(line, flush=True)


class _SdkClient:
    def __init__(self, base_url: str, timeout: float) -> None:
        import anthropic

        self.client = anthropic.Anthropic(
            base_url=base_url, api_key=API_KEY, max_retries=0, timeout=timeout
        )

    def create(self, request: dict[str, Any], stream: bool) -> dict[str, Any]:
        if stream:
            with self.client.messages.stream(**request) as s:
                message = s.get_final_message()
        else:
            message = self.client.messages.create(**request)
        return message.model_dump(mode="json")


class _UrllibClient:
    def __init__(self, base_url: str, timeout: float) -> None:
        self.url = base_url.rstrip("/") + "/v1/messages"
        self.timeout = timeout

    def create(self, request: dict[str, Any], stream: bool) -> dict[str, Any]:
        del stream  # the fallback always asks for one JSON answer
        req = urllib.request.Request(
            self.url,
            data=json.dumps(request).encode(),
            method="POST",
            headers={
                "content-type": "application/json",
                "x-api-key": API_KEY,
                "anthropic-version": "2023-06-01",
            },
        )
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:
            answer: dict[str, Any] = json.loads(resp.read())  # the fake model's JSON object
            return answer


def make_client(base_url: str, timeout: float) -> Any:
    if not os.environ.get("LOOM_DEMO_NO_SDK"):
        try:
            return _SdkClient(base_url, timeout)
        except ImportError:
            pass
    return _UrllibClient(base_url, timeout)


def run(base_url: str, pace: float = 1.0, timeout: float = 600.0, max_turns: int = 8) -> int:
    client = make_client(base_url, timeout)
    say(
        f"agent: using {'the anthropic SDK' if isinstance(client, _SdkClient) else 'urllib'}"
        f" against {base_url}"
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    for turn in range(max_turns):
        request = {"model": MODEL, "max_tokens": 1024, "tools": TOOLS, "messages": messages}
        try:
            reply = client.create(request, stream=bool(turn % 2))
        except Exception as exc:  # noqa: BLE001 - the demo reports any API failure and stops
            say(f"agent: the API call failed: {type(exc).__name__}: {exc}")
            return 1
        content = reply.get("content") or []
        for block in content:
            if block.get("type") == "text":
                say(f"model: {block['text']}")
        uses = [b for b in content if b.get("type") == "tool_use"]
        messages.append({"role": "assistant", "content": content})
        if not uses:
            say("agent: done")
            return 0
        results = []
        for use in uses:
            say(f"agent: running {use['name']} {json.dumps(use['input'])}")
            result = tool_result(use["name"], use["input"])
            say(f"tool {use['name']}: {result.splitlines()[0]}")
            results.append({"type": "tool_result", "tool_use_id": use["id"], "content": result})
        messages.append({"role": "user", "content": results})
        time.sleep(pace)
    say("agent: stopped after too many turns")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = HelpParser(prog="python -m loom_core.demo.agent", description=__doc__)
    p.add_argument("--base-url", default=os.environ.get("ANTHROPIC_BASE_URL", ""))
    p.add_argument("--pace", type=float, default=1.0, help="seconds between turns")
    p.add_argument("--timeout", type=float, default=600.0)
    args = p.parse_args(argv)
    if not args.base_url:
        print("error: no --base-url and no ANTHROPIC_BASE_URL", file=sys.stderr)
        return 2
    return run(args.base_url, args.pace, args.timeout)


if __name__ == "__main__":
    raise SystemExit(main())
