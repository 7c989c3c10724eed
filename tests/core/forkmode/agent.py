"""A small tool-using agent for the fork-mode tests (run as ``python agent.py DIALECT``).

It loops until the model answers without tool calls, with two local tools working
in its cwd: ``write_note`` (writes ``note.txt`` and counts its runs in ``writes.txt``,
which is not part of the result, so a re-run sends the same requests) and
``read_note``. Files in the cwd steer it: ``stream.txt`` -> streamed calls,
``diverge.txt`` -> a different first prompt, ``hang.txt`` -> sleep after the
first model call. The SDKs read the base URL and key from the environment.
"""

import json
import os
import sys
import time
from pathlib import Path

HERE = Path.cwd()
SYSTEM = "You are a careful note keeper. build_id=2026.11.3"
PROMPT = "Save a note saying hello, then read it back."
TOOLS = [
    ("write_note", "Write the note file.", {"text": {"type": "string"}}),
    ("read_note", "Read the note file.", {}),
]


def run_tool(name, args):
    if name == "write_note":
        (HERE / "note.txt").write_text(args.get("text", ""))
        counter = HERE / "writes.txt"
        counter.write_text(str(int(counter.read_text()) + 1 if counter.exists() else 1))
        return "saved"
    if name == "read_note":
        return (HERE / "note.txt").read_text()
    return f"unknown tool {name}"


def anthropic_loop(prompt, stream):
    import anthropic

    client = anthropic.Anthropic(max_retries=0, timeout=20)
    tools = [
        {"name": n, "description": d, "input_schema": {"type": "object", "properties": p}}
        for n, d, p in TOOLS
    ]
    messages = [{"role": "user", "content": prompt}]
    for step in range(8):
        kw = dict(
            model="claude-test", max_tokens=300, system=SYSTEM, tools=tools, messages=messages
        )
        if stream:
            with client.messages.stream(**kw) as s:
                msg = s.get_final_message()
        else:
            msg = client.messages.create(**kw)
        yield step
        messages.append(
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]}
        )
        calls = [b for b in msg.content if b.type == "tool_use"]
        if not calls:
            return "".join(b.text for b in msg.content if b.type == "text")
        messages.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": c.id,
                        "content": run_tool(c.name, c.input),
                    }
                    for c in calls
                ],
            }
        )


def openai_loop(prompt, stream):
    import openai

    client = openai.OpenAI(max_retries=0, timeout=20)
    tools = [
        {
            "type": "function",
            "function": {
                "name": n,
                "description": d,
                "parameters": {"type": "object", "properties": p},
            },
        }
        for n, d, p in TOOLS
    ]
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
    for step in range(8):
        reply = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
        yield step
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content or ""
        for c in message.tool_calls:
            result = run_tool(c.function.name, json.loads(c.function.arguments or "{}"))
            messages.append({"role": "tool", "tool_call_id": c.id, "content": result})


def main():
    (HERE / "pid.txt").write_text(str(os.getpid()))
    print("base", os.environ.get("ANTHROPIC_BASE_URL"), flush=True)
    prompt = "Save a note, please." if (HERE / "diverge.txt").exists() else PROMPT
    loop = (openai_loop if sys.argv[1:] == ["openai"] else anthropic_loop)(
        prompt, (HERE / "stream.txt").exists()
    )
    try:
        while True:
            step = next(loop)
            print(f"step {step}", flush=True)
            if (HERE / "hang.txt").exists():
                print("hanging", flush=True)
                time.sleep(60)
    except StopIteration as done:
        print(f"answer: {done.value}", flush=True)


if __name__ == "__main__":
    main()
