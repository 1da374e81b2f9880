"""A recorded answer played again (live_trial/tape/answer.py): event for event as recorded, message ids marked
scripted, and this run's value where the recorded run's stood, also when the service cut it across two deltas."""
from __future__ import annotations

import json

from live_trial.tape.answer import message_of, parse_sse, play, replacements

from .tapes import WORKDIR, sse

NEW = "/ci/work/eval/kit/count/live-trial/20261202T090000-ffff"


def test_the_events_are_read_back_exactly() -> None:
    text = sse("msg_01A", {"type": "text", "text": "hello there"}, {"type": "tool_use", "id": "toolu_1",
                                                                     "name": "Bash", "input": {"command": "ls"}})
    events = parse_sse(text)
    assert "".join(e.raw for e in events) == text
    assert [e.name for e in events][:2] == ["message_start", "content_block_start"]


def test_an_answer_is_sent_as_recorded_but_for_its_message_id() -> None:
    text = sse("msg_01A", {"type": "text", "text": "DONE: ok"})
    pieces = play(text, True, [])
    assert b"".join(pieces).decode() == text.replace('"msg_01A"', '"msg_rehearsal_01A"')
    assert len(pieces) == len(parse_sse(text))


def test_a_recorded_path_cut_across_deltas_is_written_as_this_runs() -> None:
    text = sse("msg_01A", {"type": "tool_use", "id": "toolu_1", "name": "Write",
                           "input": {"file_path": f"{WORKDIR}/cwd/count.txt", "content": "items: 3\n"}}, cut=5)
    deltas = [e for e in parse_sse(text) if e.name == "content_block_delta"]
    assert not any(WORKDIR in json.dumps(e.data) for e in deltas)         # no delta holds the whole path
    pairs = replacements({"<workdir>": WORKDIR, "<date:1>": "2026-12-01"}, {"<workdir>": NEW, "<date:1>": "2026-12-01"})
    assert pairs == [(WORKDIR, NEW)]
    played = b"".join(play(text, True, pairs)).decode()
    message = message_of(played, True)
    assert message is not None and message["id"] == "msg_rehearsal_01A"
    assert message["content"][0]["input"] == {"file_path": f"{NEW}/cwd/count.txt", "content": "items: 3\n"}
    assert message["stop_reason"] == "tool_use"


def test_a_json_answer_gets_the_same_treatment_and_an_error_is_sent_as_recorded() -> None:
    doc = {"id": "msg_01J", "type": "message", "content": [{"type": "text", "text": f"wrote {WORKDIR}/x"}]}
    (played,) = play(json.dumps(doc), False, [(WORKDIR, NEW)])
    assert json.loads(played) == {**doc, "id": "msg_rehearsal_01J", "content": [{"type": "text", "text": f"wrote {NEW}/x"}]}
    error = json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    assert play(error, False, [(WORKDIR, NEW)]) == [error.encode()]
