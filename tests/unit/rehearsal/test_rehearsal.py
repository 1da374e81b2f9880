"""Unit tests of the rehearsal server over real HTTP on 127.0.0.1 (no tmux, no claude)."""
from __future__ import annotations

import http.client
import json
import shutil
import socket
import threading
from pathlib import Path

import pytest

from live_trial.rehearsal.config import REHEARSAL_API_KEY, rehearsal_env
from live_trial.rehearsal.scenario import NO_RULE_TEXT
from live_trial.rehearsal.server import RehearsalServer

TOOLS = [{"name": n, "input_schema": {"type": "object"}} for n in ("Skill", "Write", "Bash")]


def meta(session: str) -> dict:
    return {"user_id": json.dumps({"device_id": "d", "account_uuid": "", "session_id": session})}


def body(messages: list, *, tools=TOOLS, stream=True, session="s-1", model="claude-opus-4-8", **extra) -> dict:
    return {"model": model, "messages": messages, "tools": tools, "stream": stream, "metadata": meta(session),
            "max_tokens": 1000, **extra}


def prompt(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": "<system-reminder>\nctx\n</system-reminder>\n"},
                                        {"type": "text", "text": text}]}


def tool_turn(tid: str, name: str = "Write", result: str = "ok", is_error: bool = False) -> list[dict]:
    return [{"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": name, "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": result,
                                          "is_error": is_error}]}]


def post(server: RehearsalServer, doc: dict, path: str = "/v1/messages?beta=true") -> tuple[int, str]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    conn.request("POST", path, json.dumps(doc), {"content-type": "application/json"})
    resp = conn.getresponse()
    text = resp.read().decode("utf-8")
    conn.close()
    return resp.status, text


def events(sse: str) -> list[tuple[str, dict]]:
    out = []
    for chunk in sse.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.split("\n"))
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def assemble(evs: list[tuple[str, dict]]) -> dict:
    """Rebuild the message from SSE events the way a client does."""
    msg = None
    for name, data in evs:
        if name == "message_start":
            msg = dict(data["message"], content=[])
        elif name == "content_block_start":
            block = dict(data["content_block"])
            block["_json"] = ""
            msg["content"].append(block)
        elif name == "content_block_delta":
            block, delta = msg["content"][data["index"]], data["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            else:
                block["_json"] += delta["partial_json"]
        elif name == "content_block_stop":
            block = msg["content"][data["index"]]
            if block["type"] == "tool_use":
                block["input"] = json.loads(block["_json"])
            block.pop("_json")
        elif name == "message_delta":
            msg["stop_reason"] = data["delta"]["stop_reason"]
    return msg


HAPPY = {
    "name": "unit",
    "rules": [
        {"id": "skill", "when": {"step": 0, "human_turn": 1},
         "reply": {"content": [{"text": "calling"}, {"tool_use": {"name": "Skill", "input": {"skill": "hello:greet"}}}]}},
        {"id": "write", "when": {"step": 1, "last_tool_result": {"content": "Launching skill", "is_error": False}},
         "reply": {"content": [{"tool_use": {"name": "Write", "input": {
             "file_path": "{{re:Completion marker: (/\\S+/status\\.json)}}", "content": "{\"status\": \"ok\"}"}}}]}},
        {"id": "done", "when": {"step": 2}, "reply": {"content": [{"text": "DONE: ok"}]}},
    ],
}


def test_stream_event_sequence_and_tool_use_roundtrip(rehearsal_server):
    srv = rehearsal_server(HAPPY)
    status, text = post(srv, body([prompt("go"), {"role": "system", "content": "skills listing"}]))
    assert status == 200
    evs = events(text)
    names = [n for n, _ in evs]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == 2 == names.count("content_block_stop")
    msg = assemble(evs)
    assert msg["model"] == "claude-opus-4-8"  # echoed by default
    assert msg["content"][0] == {"type": "text", "text": "calling"}
    tool = msg["content"][1]
    assert tool["name"] == "Skill" and tool["input"] == {"skill": "hello:greet"}
    assert tool["id"].startswith("toolu_")
    assert msg["stop_reason"] == "tool_use"
    rec = srv.requests[0]
    assert rec["rule"] == "skill" and rec["step"] == 0 and rec["conversation"] == 1
    assert rec["tools"] == ["Skill", "Write", "Bash"] and rec["message_count"] == 2 and not rec["side_query"]


def test_non_streaming_and_templating_from_prompt():
    with RehearsalServer(HAPPY) as srv:
        msgs = [prompt("Completion marker: /tmp/w 1/out/status.json\nCompletion marker: /tmp/w/out/status.json")]
        msgs += tool_turn("t1", "Skill", "Launching skill: hello:greet")
        status, text = post(srv, body(msgs, stream=False))
    doc = json.loads(text)
    assert status == 200 and doc["type"] == "message" and doc["stop_reason"] == "tool_use"
    assert doc["content"][0]["input"]["file_path"] == "/tmp/w/out/status.json"
    assert srv.requests[0]["template_misses"] == []


def test_template_miss_is_recorded():
    with RehearsalServer(HAPPY) as srv:
        msgs = [prompt("no marker here")] + tool_turn("t1", "Skill", "Launching skill: hello:greet")
        _, text = post(srv, body(msgs, stream=False))
    assert "<rehearsal: no match for re:" in json.loads(text)["content"][0]["input"]["file_path"]
    assert srv.requests[0]["template_misses"] == ["re:Completion marker: (/\\S+/status\\.json)"]


def test_side_query_never_consumes_and_answers_json_title(rehearsal_server):
    scenario = {"side_query_text": "Greet people", "rules": [
        {"id": "once", "times": 1, "reply": {"content": [{"text": "first"}]}}]}
    srv = rehearsal_server(scenario)
    fmt = {"type": "json_schema", "schema": {"type": "object", "properties": {"title": {"type": "string"}},
                                             "required": ["title"]}}
    for _ in range(3):
        status, text = post(srv, body([prompt("hi")], tools=[], output_config={"format": fmt}))
        assert status == 200
        assert json.loads(assemble(events(text))["content"][0]["text"]) == {"title": "Greet people"}
    _, plain = post(srv, body([prompt("hi")], tools=[], stream=False))
    assert json.loads(plain)["content"][0]["text"] == "Greet people"
    _, text = post(srv, body([prompt("hi")]))
    assert assemble(events(text))["content"][0]["text"] == "first"  # the rule was still there
    recs = srv.requests
    assert [r["side_query"] for r in recs] == [True, True, True, True, False]
    assert all(r["rule"] is None and not r["rule_missed"] for r in recs[:4])
    assert recs[4]["rule"] == "once"


def test_no_rule_matched_answers_plain_text_and_is_recorded(rehearsal_server):
    srv = rehearsal_server({"rules": [{"when": {"step": 5}, "reply": {"content": [{"text": "never"}]}}]})
    _, text = post(srv, body([prompt("hi")], stream=False))
    doc = json.loads(text)
    assert doc["content"] == [{"type": "text", "text": NO_RULE_TEXT}] and doc["stop_reason"] == "end_turn"
    assert srv.requests[0]["rule"] is None and srv.requests[0]["rule_missed"] is True


def test_step_human_turn_and_system_entries(rehearsal_server):
    srv = rehearsal_server({"rules": [
        {"id": "h2s1", "when": {"human_turn": 2, "step": 1}, "reply": {"content": [{"text": "a"}]}},
        {"id": "h2s0", "when": {"human_turn": 2, "step": 0, "last_prompt": "^nudge"}, "reply": {"content": [{"text": "b"}]}},
        {"id": "any", "reply": {"content": [{"text": "c"}]}}]})
    first = [prompt("task"), {"role": "system", "content": "listing"}, *tool_turn("t1"),
             {"role": "assistant", "content": [{"type": "text", "text": "question?"}]}]
    post(srv, body(first + [prompt("nudge: go on"), {"role": "system", "content": "x"}], stream=False))
    post(srv, body(first + [prompt("nudge: go on"), *tool_turn("t2")], stream=False))
    post(srv, body(first + [prompt("other")], stream=False))
    assert [(r["rule"], r["human_turn"], r["step"]) for r in srv.requests] == [
        ("h2s0", 2, 0), ("h2s1", 2, 1), ("any", 2, 0)]


def test_last_tool_result_predicates(rehearsal_server):
    srv = rehearsal_server({"rules": [
        {"id": "err", "when": {"last_tool_result": {"is_error": True}}, "reply": {"content": [{"text": "e"}]}},
        {"id": "re", "when": {"last_tool_result": {"content": "File created"}}, "reply": {"content": [{"text": "r"}]}},
        {"id": "none", "when": {"last_tool_result": {"present": False}}, "reply": {"content": [{"text": "n"}]}},
        {"id": "other", "reply": {"content": [{"text": "o"}]}}]})
    post(srv, body([prompt("x"), *tool_turn("t", result="boom", is_error=True)], stream=False))
    post(srv, body([prompt("x"), *tool_turn("t", result="File created successfully at: /a")], stream=False))
    post(srv, body([prompt("x")], stream=False))
    post(srv, body([prompt("x"), *tool_turn("t", result="something else")], stream=False))
    assert [r["rule"] for r in srv.requests] == ["err", "re", "none", "other"]


def test_conversations_tools_and_first_prompt(rehearsal_server):
    srv = rehearsal_server({"model": "served-x", "rules": [
        {"id": "eval", "when": {"tools_include": ["StructuredOutput"], "first_prompt": "Judge"},
         "reply": {"model": "served-eval", "content": [{"tool_use": {"name": "StructuredOutput",
                                                                      "input": {"goal_result": "PASS"}}}]}},
        {"id": "second", "when": {"conversation": 2, "tools_exclude": ["StructuredOutput"]},
         "reply": {"content": [{"text": "2"}]}},
        {"id": "first", "when": {"conversation": 1}, "reply": {"content": [{"text": "1"}]}}]})
    so_tools = [{"name": "Read"}, {"name": "StructuredOutput"}]
    _, a = post(srv, body([prompt("task")], session="A"))
    _, b = post(srv, body([prompt("task")], session="B"))
    _, c = post(srv, body([prompt("task again")], session="A"))
    _, d = post(srv, body([prompt("Judge the trial")], session="C", tools=so_tools))
    assert [r["rule"] for r in srv.requests] == ["first", "second", "first", "eval"]
    assert [r["conversation"] for r in srv.requests] == [1, 2, 1, 3]
    assert assemble(events(a))["model"] == "served-x"
    evaluation = assemble(events(d))
    assert evaluation["model"] == "served-eval"
    assert evaluation["content"][0]["input"] == {"goal_result": "PASS"}
    assert srv.requests[3]["served_model"] == "served-eval"


def test_times_budget_and_error_replies(rehearsal_server):
    srv = rehearsal_server({"rules": [
        {"id": "overloaded", "times": 2, "reply": {"error": {"status": 529}}},
        {"id": "bad", "times": 1, "reply": {"error": {"status": 400, "message": "nope"}}},
        {"id": "ok", "reply": {"content": [{"text": "fine"}]}}]})
    results = [post(srv, body([prompt("x")])) for _ in range(4)]
    assert [s for s, _ in results] == [529, 529, 400, 200]
    assert json.loads(results[0][1]) == {"type": "error", "error": {"type": "overloaded_error", "message":
                                                                    "rehearsal error 529"},
                                         "request_id": "req_rehearsal_529"}
    assert json.loads(results[2][1])["error"] == {"type": "invalid_request_error", "message": "nope"}
    assert [r["status"] for r in srv.requests] == [529, 529, 400, 200]


def test_chunking_splits_text_into_many_deltas(rehearsal_server):
    srv = rehearsal_server({"rules": [{"reply": {"chunk_chars": 3, "chunk_delay_s": 0.01,
                                                 "content": [{"text": "abcdefghij"}]}}]})
    _, text = post(srv, body([prompt("x")]))
    deltas = [d["delta"]["text"] for n, d in events(text) if n == "content_block_delta"]
    assert deltas == ["abc", "def", "ghi", "j"]


def _read_until(sock: socket.socket, marker: bytes) -> bytes:
    data = b""
    while marker not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def _raw_request(srv: RehearsalServer, doc: dict) -> socket.socket:
    raw = json.dumps(doc).encode()
    sock = socket.create_connection((srv.host, srv.port), timeout=30)
    sock.sendall(b"POST /v1/messages?beta=true HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 + f"Content-Length: {len(raw)}\r\n\r\n".encode() + raw)
    return sock


def test_hang_until_client_disconnects_while_other_requests_are_served(rehearsal_server):
    srv = rehearsal_server({"rules": [
        {"id": "hang", "when": {"conversation": 1}, "reply": {"hang": True, "content": [{"text": "partial text"}]}},
        {"id": "other", "reply": {"content": [{"text": "served"}]}}]})
    sock = _raw_request(srv, body([prompt("x")], session="hang"))
    data = _read_until(sock, b"content_block_delta")
    assert b"partial text" in data
    assert srv.wait_for(lambda r: r.get("hung"), timeout_s=10)
    status, text = post(srv, body([prompt("y")], session="free"))  # concurrency: served while the other hangs
    assert status == 200 and assemble(events(text))["content"][0]["text"] == "served"
    sock.settimeout(0.5)
    with pytest.raises(socket.timeout):
        sock.recv(4096)  # nothing more comes: no message_delta
    sock.close()
    assert srv.wait_for(lambda r: r["rule"] == "hang" and r.get("client_closed"), timeout_s=10)


def test_hang_before_end_with_limit_then_finishes(rehearsal_server):
    srv = rehearsal_server({"rules": [{"reply": {"hang": "before_end", "hang_s": 0.3,
                                                 "content": [{"text": "all"}]}}]})
    _, text = post(srv, body([prompt("x")]))
    assert [n for n, _ in events(text)][-2:] == ["message_delta", "message_stop"]
    assert srv.requests[0]["hung"] is True


def test_stop_releases_a_hanging_stream():
    srv = RehearsalServer({"rules": [{"reply": {"hang": "before_end", "content": [{"text": "t"}]}}]}).start()
    sock = _raw_request(srv, body([prompt("x")]))
    _read_until(sock, b"content_block_stop")
    srv.stop()
    sock.settimeout(10)
    rest = _read_until(sock, b"message_stop")  # the handler returns without finishing; the socket closes
    assert b"message_stop" not in rest
    sock.close()


def test_count_tokens_and_unknown_paths(rehearsal_server):
    srv = rehearsal_server({"rules": []})
    status, text = post(srv, {"messages": [{"role": "user", "content": "hello there"}]}, "/v1/messages/count_tokens")
    assert status == 200 and json.loads(text)["input_tokens"] >= 1
    status, text = post(srv, {}, "/v1/other")
    assert status == 404 and json.loads(text)["type"] == "error"
    assert srv.requests == []


def test_concurrent_requests_are_all_recorded(rehearsal_server):
    srv = rehearsal_server({"rules": [{"reply": {"chunk_chars": 2, "chunk_delay_s": 0.02,
                                                 "content": [{"text": "0123456789"}]}}]})
    results: list[int] = []
    threads = [threading.Thread(target=lambda i=i: results.append(post(srv, body([prompt("x")], session=f"s{i}"))[0]))
               for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == [200] * 8
    assert sorted(r["conversation"] for r in srv.requests) == list(range(1, 9))


def test_rehearsal_env(tmp_path: Path):
    env = rehearsal_env("http://127.0.0.1:1234/", tmp_path / "cfg")
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:1234"
    assert env["ANTHROPIC_API_KEY"] == REHEARSAL_API_KEY
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1" and env["IS_SANDBOX"] == "1"
    assert env["CLAUDE_CONFIG_DIR"] == str((tmp_path / "cfg").resolve())
    assert env["DISABLE_AUTOUPDATER"] == "1"
    assert all(isinstance(v, str) for v in env.values())


def test_dump_dir_and_write_log(tmp_path: Path, rehearsal_server):
    srv = rehearsal_server({"rules": []}, dump_dir=tmp_path / "dump")
    post(srv, body([prompt("x")]))
    rec = srv.requests[0]
    assert json.loads(Path(rec["body_file"]).read_text())["model"] == "claude-opus-4-8"
    srv.write_log(tmp_path / "log.jsonl")
    lines = (tmp_path / "log.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["rule_missed"] is True


def _serve_until_sigterm(tmp_path: Path, *extra: str, during=lambda first: None) -> tuple[int, dict, str]:
    """``rehearsal serve`` of a one-rule scenario with ``extra`` arguments: its first JSON line is given to ``during``,
    then SIGTERM. Returns ``(exit code, that line, stderr)``."""
    import signal
    import subprocess
    import sys

    scenario = tmp_path / "s.yaml"
    scenario.write_text("rules:\n  - id: hi\n    reply: {content: [{text: hello}]}\n")
    proc = subprocess.Popen([sys.executable, "-m", "live_trial", "rehearsal", "serve", str(scenario), "--json",
                             "--cwd", str(tmp_path), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = json.loads(proc.stdout.readline())
        during(first)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, first, err


def test_cli_serve_prints_url_and_env_and_stops_on_sigterm(tmp_path):
    log = tmp_path / "log.jsonl"

    def ask(first: dict) -> None:
        assert first["status"] == "SERVING" and first["env"]["ANTHROPIC_BASE_URL"] == first["url"]
        assert (tmp_path / "cfg" / ".claude.json").is_file()
        host, port = first["url"].removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.request("POST", "/v1/messages", json.dumps(body([prompt("x")], stream=False)))
        assert json.loads(conn.getresponse().read())["content"][0]["text"] == "hello"

    code, _, err = _serve_until_sigterm(tmp_path, "--config-dir", str(tmp_path / "cfg"), "--log", str(log), during=ask)
    assert code == 0
    assert "STOPPED: 1 requests, 0 with no rule matched" in err
    assert json.loads(log.read_text())["rule"] == "hi"


def test_times_budgets_are_per_server():
    from live_trial.rehearsal.scenario import load_scenario

    scenario = load_scenario({"rules": [{"id": "once", "times": 1, "reply": {"content": [{"text": "1"}]}}]})
    for _ in range(2):
        with RehearsalServer(scenario) as srv:
            post(srv, body([prompt("x")], stream=False))
            post(srv, body([prompt("x")], stream=False))
        assert [r["rule"] for r in srv.requests] == ["once", None]
    assert scenario.rules[0].fired == 0


USAGE = {"input_tokens": 1000, "output_tokens": 100, "cache_read_input_tokens": 10000,
         "cache_creation_input_tokens": 500}


def test_a_replys_scripted_usage_is_sent_in_the_stream_and_the_message(rehearsal_server):
    scripted = {"name": "usage", "rules": [{"when": {"step": 0}, "reply": {"usage": USAGE,
                                                                           "content": [{"text": "hi"}]}}]}
    srv = rehearsal_server(scripted)
    evs = dict(events(post(srv, body([prompt("go")]))[1]))
    start = evs["message_start"]["message"]["usage"]
    assert {k: start[k] for k in USAGE if k != "output_tokens"} == {k: v for k, v in USAGE.items()
                                                                    if k != "output_tokens"}
    assert start["output_tokens"] <= 1 and evs["message_delta"]["usage"] == USAGE
    status, text = post(srv, body([prompt("go")], stream=False, session="s-2"))
    assert status == 200 and json.loads(text)["usage"] == USAGE


def test_without_scripted_usage_the_default_stays(rehearsal_server):
    srv = rehearsal_server(HAPPY)
    evs = dict(events(post(srv, body([prompt("go")]))[1]))
    start = evs["message_start"]["message"]["usage"]
    assert start["output_tokens"] == 1 and start["cache_read_input_tokens"] == 0 and start["input_tokens"] >= 1
    assert set(evs["message_delta"]["usage"]) == {"output_tokens"}


def test_a_rule_with_attempt_answers_only_the_server_of_that_attempt(rehearsal_server):
    """A case run's attempt number reaches the scripted server (references/suite-format.md "Repeats"): a rule with
    ``when: {attempt: 2}`` answers the second attempt's requests and never the first's; ``{{attempt}}`` says which."""
    scenario = {"rules": [
        {"id": "second", "when": {"attempt": 2}, "reply": {"content": [{"text": "attempt {{attempt}} fails"}]}},
        {"id": "any", "reply": {"content": [{"text": "attempt {{attempt}} works"}]}}]}
    first, second = rehearsal_server(scenario), rehearsal_server(scenario, attempt=2)
    _, a = post(first, body([prompt("task")]))
    _, b = post(second, body([prompt("task")]))
    assert [r["rule"] for r in first.requests + second.requests] == ["any", "second"]
    assert assemble(events(a))["content"][0]["text"] == "attempt 1 works"
    assert assemble(events(b))["content"][0]["text"] == "attempt 2 fails"


def test_cli_serve_names_the_config_it_made_when_it_stops(tmp_path):
    """Without --config-dir, serve makes a config for the person's claude (it holds their sessions' transcripts): on
    SIGTERM it is kept, and its path is said, never left behind unnamed."""
    code, first, err = _serve_until_sigterm(tmp_path)
    made = Path(first["env"]["CLAUDE_CONFIG_DIR"])
    try:
        assert code == 0 and f"the config it made (the sessions' transcripts) is kept: {made}" in err, err
    finally:
        shutil.rmtree(made, ignore_errors=True)
