"""The tape file (schemas/model-tape.schema.json): each exchange the proxy relays is one schema-valid line, its request
normalized and its response as the client read it, no credential in it; a tape that is not one is refused."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from live_trial.errors import RefusedInput
from live_trial.jsonfile import schema_errors
from live_trial.tape.file import TapeRecorder, read_tape
from live_trial.tape.proxy import Exchange

from .tapes import ROOTS, WORKDIR, entry, environment, prompt, request, sse

KEY = "sk-ant-api03-" + "f" * 80 + "AA"


def exchange(seq: int, body: dict, answer: str, **kw) -> Exchange:
    return Exchange(seq=seq, started=time.time(), method="POST", path="/v1/messages?beta=true",
                    user_agent="claude-cli/2.1.332 (external, cli)", request_body=json.dumps(body).encode(),
                    status=200, response_headers={"content-type": "text/event-stream"},
                    response_body=answer.encode(), total_s=0.2, first_byte_s=0.05, secrets=(KEY,), **kw)


def test_the_recorder_writes_one_valid_line_per_exchange_without_the_key(tmp_path: Path) -> None:
    tape = tmp_path / "model-tape.jsonl"
    recorder = TapeRecorder(tape, ROOTS)
    answer = sse("msg_01X", {"type": "text", "text": f"the key {KEY} is not for the tape"})
    recorder.record(exchange(1, request(prompt(f"use {KEY}")), answer))
    recorder.record(exchange(2, request(prompt(), tools=[]), sse("msg_01Y", {"type": "text", "text": "Title"})))
    text = tape.read_text()
    assert KEY not in text and recorder.problems == [] and recorder.lines == 2
    docs = [json.loads(line) for line in text.splitlines()]
    assert all(schema_errors(d, "model-tape.schema.json") == [] for d in docs)
    assert [(d["role"], d["turn"], d["kind"]) for d in docs] == [("session", 1, "messages"), ("side", 1, "messages")]
    assert WORKDIR not in json.dumps(docs[0]["request"]) and docs[0]["bindings"]["<workdir>"] == WORKDIR
    assert docs[0]["response"]["body"] == answer.replace(KEY, "<redacted>")
    entries = read_tape(tape)
    assert [e.seq for e in entries] == [1, 2] and entries[0].request.sha256 == docs[0]["request_sha256"]


def test_a_line_that_cannot_be_written_is_a_problem_never_an_exception(tmp_path: Path) -> None:
    (tmp_path / "tape.jsonl").mkdir()          # a folder where the tape goes: the write fails, even as root
    recorder = TapeRecorder(tmp_path / "tape.jsonl", ROOTS)
    recorder.record(exchange(1, request(prompt()), sse("msg_1", {"type": "text", "text": "x"})))
    assert len(recorder.problems) == 1 and recorder.problems[0].startswith("request 1 (POST /v1/messages")


@pytest.mark.parametrize("text,words", [
    (None, "tape file not found"),
    ("not json\n", "tape line 1 is not JSON"),
    ('{"seq": 1}\n', "tape line 1 does not fit model-tape.schema.json"),
])
def test_a_file_that_is_no_tape_is_refused_naming_its_line(tmp_path: Path, text: str | None, words: str) -> None:
    path = tmp_path / "tape.jsonl"
    if text is not None:
        path.write_text(text)
    with pytest.raises(RefusedInput) as caught:
        read_tape(path)
    assert words in caught.value.message and caught.value.code in ("tape_not_found", "tape_invalid")


def test_a_tape_without_a_model_turn_of_a_session_is_refused(tmp_path: Path) -> None:
    tape = tmp_path / "tape.jsonl"
    TapeRecorder(tape, ROOTS).record(exchange(1, request(prompt(), tools=[]), sse("m", {"type": "text", "text": "t"})))
    with pytest.raises(RefusedInput, match="no model turn of a session"):
        read_tape(tape)


def test_a_tape_written_with_turns_from_0_and_the_system_messages_hash_reads_as_a_new_one(tmp_path: Path) -> None:
    """A line's turn and last message are read from its request: a tape an earlier live-trial wrote (turn 0, the hash
    of the CLI's own last system message) replays as one written now."""
    new = entry(1, request(prompt(), environment()), sse("msg_1", {"type": "text", "text": "x"})).to_doc()
    old = {**new, "turn": 0, "last_message_sha256": "sha256:" + "0" * 64}
    path = tmp_path / "tape.jsonl"
    path.write_text(json.dumps(old) + "\n")
    (got,) = read_tape(path)
    assert (got.request.turn, got.request.last_sha256) == (1, new["last_message_sha256"])
