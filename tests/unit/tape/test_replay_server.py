"""The tape server (live_trial/tape/replay.py): a request is answered by the recorded request with the same normalized
body, else by the one of the same role and turn whose last message the session or the evaluator sent is the same
(never the CLI's own system message), else it is the replay's divergence: an error the CLI does not retry, told once,
and written to the replay log with the first difference, the turn numbered as the log numbers it. A title or a
request that is no model turn is never a divergence."""
from __future__ import annotations

import http.client
import json
from pathlib import Path

from live_trial.jsonfile import schema_errors
from live_trial.tape.answer import message_of
from live_trial.tape.normalize import Roots
from live_trial.tape.replay import TapeServer

from .tapes import WORKDIR, call, count_trial, entry, environment, prompt, request, result, sse

NEW = "/ci/eval/kit/count/live-trial/20261202T090000-ffff"
HERE = Roots.of(workdir=NEW, folder=f"{NEW}/cwd", config=f"{NEW}/claude-config", plugins="/ci/plugins", home="/ci")


def moved(body: dict) -> bytes:
    """``body`` as the same trial sends it elsewhere: its paths and session id are this run's."""
    text = json.dumps(body).replace(WORKDIR, NEW).replace("/home/me/plugins", "/ci/plugins")
    return text.replace("5e55f1d0-0000-4000-8000-000000000001", "77777777-0000-4000-8000-000000000002").encode()


def turns() -> list[dict]:
    t1 = [prompt()]
    t2 = t1 + [call("toolu_01", "Skill", {"skill": "kit:count"}), result("toolu_01", "Launching skill: kit:count")]
    t3 = t2 + [call("toolu_02", "Bash", {"command": "bash /home/me/plugins/kit/skills/count/scripts/count.sh"}),
               result("toolu_02", "items: 3")]
    return [request(*t) for t in (t1, t2, t3)]


def test_each_turn_is_answered_by_its_recording_with_this_runs_paths(tmp_path: Path) -> None:
    told = []
    server = TapeServer(count_trial(), HERE, log=tmp_path / "replay-log.jsonl", on_divergence=told.append)
    answers = [server.answer("POST", "/v1/messages?beta=true", moved(body)) for body in turns()]
    assert [status for status, _, _ in answers] == [200, 200, 200] and told == [] and server.diverged is None
    bash = message_of(b"".join(answers[1][2]).decode(), True)
    assert bash is not None and bash["content"][0]["input"]["command"] == "bash /ci/plugins/kit/skills/count/scripts/count.sh"
    write = message_of(b"".join(answers[2][2]).decode(), True)
    assert write is not None and write["content"][0]["input"]["file_path"] == f"{NEW}/cwd/count.txt"
    log = [json.loads(x) for x in (tmp_path / "replay-log.jsonl").read_text().splitlines()]
    assert [(r["match"], r["tape_seq"]) for r in log] == [("hash", 1), ("hash", 2), ("hash", 3)]
    assert all(schema_errors(r, "replay-log.schema.json") == [] for r in log)


def test_a_changed_system_prompt_is_answered_by_the_same_turn_and_last_message() -> None:
    server = TapeServer(count_trial(), HERE)
    body = {**turns()[1], "system": [{"type": "text", "text": "a newer CLI's system prompt"}]}
    status, _, _ = server.answer("POST", "/v1/messages?beta=true", moved(body))
    assert status == 200 and server.served[-1]["match"] == "turn" and server.served[-1]["tape_seq"] == 2


def test_the_first_request_off_the_tape_is_the_divergence_told_once(tmp_path: Path) -> None:
    told = []
    server = TapeServer(count_trial(), HERE, log=tmp_path / "log.jsonl", on_divergence=told.append)
    changed = json.loads(moved(turns()[2]).decode().replace("items: 3", "items: 4"))
    for _ in range(2):
        status, _, pieces = server.answer("POST", "/v1/messages?beta=true", json.dumps(changed).encode())
    error = json.loads(b"".join(pieces))["error"]
    assert status == 400 and error["type"] == "invalid_request_error"       # the CLI does not retry a 400
    assert "turn 3 of the session" in error["message"] and len(told) == 1 and told[0] is server.diverged
    assert 'the tool_result of Bash (toolu_02) changed: recorded "items: 3", now "items: 4"' in told[0].difference
    log = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["match"] for r in log] == ["none", "none"] and log[0]["difference"] == told[0].sentence()


def test_a_retried_request_gets_each_recorded_answer_in_order_then_the_last_again() -> None:
    body = request(prompt())
    overloaded = json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    tape = [entry(1, body, overloaded, status=529), entry(2, body, sse("msg_01", {"type": "text", "text": "ok"}))]
    server = TapeServer(tape, Roots.of(workdir=WORKDIR))
    statuses = [server.answer("POST", "/v1/messages", json.dumps(body).encode())[0] for _ in range(3)]
    assert statuses == [529, 200, 200]


def test_a_title_or_a_request_that_is_no_model_turn_is_never_a_divergence() -> None:
    server = TapeServer(count_trial(), HERE).start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        side = request(prompt(), tools=[])
        side["output_config"] = {"format": {"type": "json_schema", "schema": {"properties": {"title": {}}}}}
        conn.request("POST", "/v1/messages?beta=true", body=json.dumps(side))
        resp = conn.getresponse()
        message = message_of(resp.read().decode(), True)
        conn.close()
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        conn.request("HEAD", "/")
        head = conn.getresponse()
        head.read()
        conn.close()
    finally:
        server.stop()
    assert resp.status == 200 and message is not None and json.loads(message["content"][0]["text"]) == {
        "title": "Rehearsal session"}
    assert head.status == 404 and server.diverged is None
    assert [r["match"] for r in server.served] == ["side", "other"]


EVALUATOR = [{"name": n, "input_schema": {}} for n in ("Read", "StructuredOutput")]


def first_turns() -> list:
    """A recorded trial as 2.1.332 sends it: the session's first request and the evaluator's end with the CLI's own
    system message (tests/unit/tape/requests)."""
    task = request(prompt('Skill({skill: "kit:greet", args: "Ada"})'), environment())
    judge = request(prompt("Files:\n- side-effects/files/greeting.txt | 12 bytes"), environment(), tools=EVALUATOR)
    return [entry(1, task, sse("msg_01A", {"type": "tool_use", "id": "toolu_01", "name": "Skill",
                                            "input": {"skill": "kit:greet", "args": "Ada"}})),
            entry(2, judge, sse("msg_01B", {"type": "tool_use", "id": "toolu_09", "name": "StructuredOutput",
                                             "input": {"verdict": "PASS"}}))]


def test_another_task_or_another_evaluator_prompt_is_a_divergence_though_the_last_system_message_is_the_same(
        tmp_path: Path) -> None:
    """The same turn with the same last system message is no match: another task (--args) or an evaluator shown a
    file more is the turn where the run leaves its tape, numbered in the sentence as in the log."""
    tape = first_turns()
    for n, changed in enumerate((request(prompt('Skill({skill: "kit:greet", args: "Bob"})'), environment()),
                                 request(prompt("Files:\n- side-effects/files/extra-file.txt | 0 bytes\n"
                                                "- side-effects/files/greeting.txt | 12 bytes"), environment(),
                                         tools=EVALUATOR))):
        log = tmp_path / f"log-{n}.jsonl"
        server = TapeServer(tape, HERE, log=log)
        status, _, _ = server.answer("POST", "/v1/messages?beta=true", moved(changed))
        (line,) = [json.loads(x) for x in log.read_text().splitlines()]
        assert status == 400 and server.diverged is not None and line["match"] == "none", line
        role = ("session", "evaluator")[n]
        assert (line["role"], line["turn"], line["n"]) == (role, 1, 1)
        assert line["difference"].startswith(f"turn 1 of the {role} (request 1): message 1 (user): its text changed")
    assert "extra-file.txt" in line["difference"] and "Bob" not in line["difference"], line["difference"]


def test_a_newer_system_prompt_still_replays_the_same_task_by_its_turn() -> None:
    body = {**request(prompt('Skill({skill: "kit:greet", args: "Ada"})'), environment()),
            "system": [{"type": "text", "text": "a newer CLI's system prompt"}]}
    server = TapeServer(first_turns(), HERE)
    status, _, _ = server.answer("POST", "/v1/messages?beta=true", moved(body))
    assert status == 200 and (server.served[-1]["match"], server.served[-1]["turn"]) == ("turn", 1)
