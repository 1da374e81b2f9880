"""A long turn classified from its newest message and the older records that matter (transcript.turn).

The rule: over every prefix of every transcript we have (the classifier's cases, the transcripts recorded on the real
CLI under tests/unit/transcripts, and a long turn of large tool results), the kept records classify exactly as all
records do, and reading back from the end gives the same state as reading the whole turn.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from live_trial.transcript.cases import CASES
from live_trial.transcript.reader import read_records, read_tail
from live_trial.transcript.status import classify
from live_trial.transcript.turn import TurnWindow, read_turn

RECORDED = sorted((Path(__file__).parents[1] / "transcripts").glob("*.jsonl"))
STATUSES = (None, {"status": "idle"}, {"status": "busy"}, {"status": "shell"}, {"status": "waiting"})


def _same(records: list[dict], session_status, screen=None) -> None:
    window = TurnWindow(records)
    assert classify(window.records(), session_status, screen) == classify(records, session_status, screen)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_kept_records_classify_like_all_records_for_every_case_and_prefix(case):
    records, session_status, *screen = case.build()
    for n in range(len(records) + 1):
        _same(records[:n], session_status, screen[0] if screen else None)


@pytest.mark.parametrize("path", RECORDED, ids=[p.name for p in RECORDED])
def test_kept_records_classify_like_all_records_on_recorded_transcripts(path):
    records = read_records(path).records
    for n in range(len(records) + 1):
        for session_status in STATUSES:
            _same(records[:n], session_status)


def test_records_fed_in_pieces_are_kept_as_if_fed_at_once(transcript_builder):
    b = transcript_builder()
    b.prompt("long task")
    for i in range(30):
        b.tool_use("Bash", {"command": f"step {i}"}, text="Next step." if i % 7 == 0 else None)
        b.tool_result(b.records[-1]["message"]["content"][-1]["id"], "out " * 50)
    task = b.background_shell("sleep 99", "Slow")
    for i in range(10):
        b.tool_use("Read", {"file_path": f"/f{i}"})
        b.tool_result(b.records[-1]["message"]["content"][-1]["id"], "x")
    b.text("Waiting for the job.")
    b.turn_duration()
    pieces = TurnWindow()
    for i in range(0, len(b.records), 5):
        pieces.add(b.records[i:i + 5])
    whole = classify(b.records, {"status": "busy"})
    assert classify(pieces.records(), {"status": "busy"}) == whole
    assert whole.background["tasks"][0]["task_id"] == task and whole.background["tasks"][0]["description"] == "Slow"
    assert len(pieces) < 20 < len(b.records)


def _long_turn(path: Path, builder, tools: int, *, ended: bool) -> None:
    builder.prompt("One long task.")
    for i in range(tools):
        builder.tool_use("Bash", {"command": f"make step{i}"})
        builder.tool_result(builder.records[-1]["message"]["content"][-1]["id"], "output line\n" * (500 + 40 * i))
    builder.tool_use("Bash", {"command": "sleep 20"})
    if ended:
        builder.tool_result(builder.records[-1]["message"]["content"][-1]["id"], "done")
        builder.text("DONE: ok")
        builder.turn_duration()
    builder.write(path)


@pytest.mark.parametrize("ended", [False, True])
@pytest.mark.parametrize("session_status", [None, {"status": "busy"}, {"status": "idle"}])
def test_reading_back_gives_the_state_of_the_whole_turn(tmp_path, transcript_builder, ended, session_status):
    path = tmp_path / "long.jsonl"
    _long_turn(path, transcript_builder(), 60, ended=ended)
    whole = classify(read_records(path).records, session_status)
    back = read_turn(path, session_status=session_status)
    assert classify(back.records, session_status).state == whole.state
    size = path.stat().st_size
    if not ended and (session_status or {}).get("status") != "idle":
        assert size - back.start_offset < size // 10 and not back.reached_start    # stopped near the end
    else:
        assert back.reached_start and classify(back.records, session_status) == whole


def test_reading_back_ignores_a_torn_last_line_and_malformed_lines(tmp_path, transcript_builder):
    path = tmp_path / "t.jsonl"
    _long_turn(path, transcript_builder(), 5, ended=False)
    with open(path, "ab") as fh:
        fh.write(b'{"type": "user", "uuid": "torn')
    lines = path.read_bytes().split(b"\n")
    lines.insert(3, b"{not json")
    path.write_bytes(b"\n".join(lines))
    back = read_turn(path)
    tail = read_tail(path)
    assert back.torn_tail and classify(back.records).state == classify(tail.records).state == "BUSY_TOOL"
    assert json.loads(json.dumps(classify(back.records).to_dict()))["pending_tool"] == "Bash"
