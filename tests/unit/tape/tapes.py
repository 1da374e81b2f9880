"""Tapes for the unit tests of tape/: requests shaped as the CLI sends them, answers as SSE streams with their text
and tool inputs cut into several deltas (as the service streams them), recorded through
:func:`live_trial.tape.file.entry_of` as the recording proxy hands them over."""
from __future__ import annotations

import json
import time

from live_trial.tape.file import TapeEntry, entry_of
from live_trial.tape.normalize import Roots
from live_trial.tape.proxy import Exchange

WORKDIR = "/home/me/eval/kit/count/live-trial/20261201T101010-abcd"
ROOTS = Roots.of(workdir=WORKDIR, folder=f"{WORKDIR}/cwd", config="/home/me/.claude", plugins="/home/me/plugins",
                 home="/home/me")
TOOLS = [{"name": n, "input_schema": {}} for n in ("Bash", "Skill", "Write")]


def request(*messages: dict, tools: list | None = None, session: str = "5e55f1d0-0000-4000-8000-000000000001") -> dict:
    """A Messages request of the session in ``WORKDIR``."""
    return {"model": "claude-opus-4-8", "max_tokens": 32000, "stream": True,
            "metadata": {"user_id": json.dumps({"device_id": "d" * 64, "account_uuid": "", "session_id": session})},
            "system": [{"type": "text", "text": f"Primary working directory: {WORKDIR}/cwd"}],
            "tools": TOOLS if tools is None else tools, "messages": list(messages)}


def environment() -> dict:
    """The ``{"role": "system"}`` message claude 2.1.332 ends a conversation's first request with (2.1.197: its agent
    listing), the same whatever the task."""
    return {"role": "system", "content": [{"type": "text", "text": f"# Environment\n - Primary working directory: "
                                                                   f"{WORKDIR}/cwd"}]}


def prompt(text: str = "Run the skill.") -> dict:
    return {"role": "user", "content": [{"type": "text", "text": f"{text}\nCompletion marker: {WORKDIR}/out/status.json"}]}


def call(tool_id: str, name: str, input_: dict) -> dict:
    return {"role": "assistant", "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": input_}]}


def result(tool_id: str, text: str) -> dict:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": text}]}


def sse(message_id: str, *blocks: dict, cut: int = 7) -> str:
    """An SSE answer: ``message_start`` with ``message_id``, each block's text or input JSON in deltas of ``cut``
    characters, ``message_delta``, ``message_stop``."""
    def ev(name: str, data: dict) -> str:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"
    out = [ev("message_start", {"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": "claude-opus-4-8", "content": [],
        "usage": {"input_tokens": 10, "output_tokens": 1}}})]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            start, kind, key, whole = {"type": "text", "text": ""}, "text_delta", "text", b["text"]
        else:
            start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
            kind, key, whole = "input_json_delta", "partial_json", json.dumps(b["input"])
        out.append(ev("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}))
        out += [ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                           "delta": {"type": kind, key: whole[n:n + cut]}})
                for n in range(0, len(whole), cut)]
        out.append(ev("content_block_stop", {"type": "content_block_stop", "index": i}))
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    out.append(ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop},
                                    "usage": {"output_tokens": 5}}))
    out.append(ev("message_stop", {"type": "message_stop"}))
    return "".join(out)


def entry(seq: int, body: dict, answer: str, *, status: int = 200, secrets: tuple[str, ...] = (),
          roots: Roots = ROOTS) -> TapeEntry:
    """The tape line of ``body`` answered by ``answer`` (an SSE stream when it starts with ``event:``)."""
    stream = answer.startswith("event:")
    ex = Exchange(seq=seq, started=time.time(), method="POST", path="/v1/messages?beta=true",
                  user_agent="claude-cli/2.1.197 (external, cli)", request_body=json.dumps(body).encode(),
                  status=status, response_headers={"content-type": "text/event-stream" if stream
                                                   else "application/json"},
                  response_body=answer.encode(), total_s=0.01, secrets=secrets)
    return entry_of(ex, roots)


def count_trial() -> list[TapeEntry]:
    """A recorded trial: the Skill call, a Bash run of the skill's script, a Write of its line, DONE."""
    t1 = [prompt()]
    t2 = t1 + [call("toolu_01", "Skill", {"skill": "kit:count"}), result("toolu_01", "Launching skill: kit:count")]
    t3 = t2 + [call("toolu_02", "Bash", {"command": "bash /home/me/plugins/kit/skills/count/scripts/count.sh"}),
               result("toolu_02", "items: 3")]
    t4 = t3 + [call("toolu_03", "Write", {"file_path": f"{WORKDIR}/cwd/count.txt", "content": "items: 3\n"}),
               result("toolu_03", f"File created successfully at: {WORKDIR}/cwd/count.txt")]
    answers = [
        sse("msg_01A", {"type": "tool_use", "id": "toolu_01", "name": "Skill", "input": {"skill": "kit:count"}}),
        sse("msg_01B", {"type": "tool_use", "id": "toolu_02", "name": "Bash",
                        "input": {"command": "bash /home/me/plugins/kit/skills/count/scripts/count.sh"}}),
        sse("msg_01C", {"type": "tool_use", "id": "toolu_03", "name": "Write",
                        "input": {"file_path": f"{WORKDIR}/cwd/count.txt", "content": "items: 3\n"}}),
        sse("msg_01D", {"type": "text", "text": "DONE: ok"}),
    ]
    return [entry(n + 1, request(*msgs), a) for n, (msgs, a) in enumerate(zip((t1, t2, t3, t4), answers))]
