"""Huge transcripts never make a read slow, quadratic or big: one long line (a Write or a tool result of many MB) is
summarised from its first and last bytes, never parsed whole; an idle poll tick reads no transcript byte; the steps
that need the whole file (launch check, evaluator index, actual model, hashes, plan's reuse check, send) stream it
once with memory bounded by a constant. Each test runs at a size of a few MB (benchmarks/status.py and
benchmarks/huge.py measure the 48 MB and 500 MB cases)."""
from __future__ import annotations

import json
import tracemalloc

import pytest

from live_trial.transcript import stream
from live_trial.transcript.builder import TranscriptBuilder, cli_key_order
from live_trial.transcript.reader import (
    complete_end_offset,
    hashed_records,
    iter_records,
    read_from,
    read_records,
    read_tail,
    transcript_sha256,
)
from live_trial.transcript.status import BUSY_TOOL, IDLE_TURN_COMPLETE, classify
from live_trial.transcript.stream import COUNTER, LONG_RECORD_BYTES
from live_trial.transcript.summary import SUMMARY_KEY

MB = 1 << 20


def write_cli(path, records) -> None:
    """The records with their keys in the CLI's order: a long record's uuid and stop_reason come after its big
    string (references/transcript-jsonl.md)."""
    path.write_text("".join(json.dumps(cli_key_order(r)) + "\n" for r in records))


@pytest.fixture()
def loads_sizes(monkeypatch):
    """The size of every text json.loads parses while the test runs."""
    sizes: list[int] = []
    real = json.loads

    def spy(s, *a, **kw):
        sizes.append(len(s))
        return real(s, *a, **kw)
    monkeypatch.setattr(json, "loads", spy)
    return sizes


def long_write_turn(path, content_bytes: int, *, finished: bool = False) -> tuple[TranscriptBuilder, str]:
    """A turn whose last records are a Write of ``content_bytes`` (one line) and, when ``finished``, its result."""
    b = TranscriptBuilder(seed=3)
    b.turn("earlier", tools=1)
    b.prompt("write the big file")
    tid = b.tool_use("Write", {"file_path": "/tmp/project/big.txt", "content": "line \"q\" \\ x\n" * (content_bytes // 14)})
    if finished:
        b.tool_result(tid, "File created successfully at: /tmp/project/big.txt",
                      result={"type": "create", "filePath": "/tmp/project/big.txt",
                              "content": "y" * content_bytes, "structuredPatch": []})
        b.text("DONE: wrote it")
        b.turn_duration()
    write_cli(path, b.records)
    return b, tid


def test_a_long_last_line_is_summarised_not_parsed_whole(tmp_path, loads_sizes):
    path = tmp_path / "t.jsonl"
    _, tid = long_write_turn(path, 6 * MB)
    tracemalloc.start()
    tail = read_tail(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    st = classify(tail.records)
    assert (st.state, st.pending_tool, st.pending_tool_id) == (BUSY_TOOL, "Write", tid)
    write = tail.records[-1]
    assert write[SUMMARY_KEY]["bytes"] > 6 * MB and write[SUMMARY_KEY]["start_read"] is True
    block = write["message"]["content"][0]
    assert block["input"]["file_path"] == "/tmp/project/big.txt" and len(block["input"]["content"]) == 4096
    assert write["message"]["stop_reason"] == "tool_use" and write["uuid"] and write["timestamp"]
    assert max(loads_sizes) < LONG_RECORD_BYTES          # the 6 MB line was never handed to json.loads
    assert peak < 4 * MB                                  # nor held, nor copied block after block


def test_the_tail_read_stops_at_its_budget_whatever_the_line_lengths(tmp_path):
    path = tmp_path / "t.jsonl"
    long_write_turn(path, 5 * MB)
    size = path.stat().st_size
    COUNTER.bytes = 0
    tail = read_tail(path, max_bytes=MB, scan_max_bytes=2 * MB)
    assert COUNTER.bytes <= 2 * MB + 64 * 1024             # the scan budget and one block, not the 5 MB line
    last = tail.records[-1]
    assert last[SUMMARY_KEY]["start_read"] is False       # what the line's last bytes hold is still there
    assert (last["type"], last["uuid"]) == ("assistant", write_uuid(path))
    COUNTER.bytes = 0
    read_tail(path)                                       # default budgets: the line's start is found
    assert COUNTER.bytes <= size + 2 * 64 * 1024


def write_uuid(path) -> str:
    return [r for r in read_records(path).records if r["type"] == "assistant"][-1]["uuid"]


def test_a_finished_long_turn_classifies_as_finished(tmp_path, loads_sizes):
    path = tmp_path / "t.jsonl"
    long_write_turn(path, 3 * MB, finished=True)
    for records in (read_tail(path).records, read_records(path).records):
        assert classify(records).state == IDLE_TURN_COMPLETE
        result = [r for r in records if r["type"] == "user" and "toolUseResult" in r][-1]
        assert result["uuid"] and result["toolUseResult"]["filePath"] == "/tmp/project/big.txt"
    assert max(loads_sizes) < LONG_RECORD_BYTES


def test_read_from_and_the_whole_file_read_summarise_the_same_way(tmp_path):
    path = tmp_path / "t.jsonl"
    long_write_turn(path, 3 * MB, finished=True)
    full = read_records(path).records
    assert read_tail(path).records == full
    assert read_from(path, 0)[0] == full
    assert list(iter_records(path)) == full


def test_an_idle_poll_tick_reads_no_transcript_byte(tmp_path, loads_sizes):
    """The turn cache re-read a tail spanning more than 10 MB on every tick; an idle tick now reads nothing."""
    from live_trial.trial.observation import TurnCache

    path = tmp_path / "t.jsonl"
    long_write_turn(path, 12 * MB)
    with open(path, "ab") as fh:                          # the next record is being written: a torn last line
        fh.write(b'{"type":"user","message":{"content":"' + b"z" * (2 * MB))
    cache = TurnCache()
    cache.records(path, complete_end_offset(path))
    loads_sizes.clear()
    COUNTER.bytes = 0
    for _ in range(3):
        records, new = cache.records(path, complete_end_offset(path))
        assert new == 0 and classify(records).state == BUSY_TOOL
    assert COUNTER.bytes <= 64 * 1024 and sum(loads_sizes) == 0


def test_a_growing_line_is_searched_only_in_its_new_bytes(tmp_path):
    path = tmp_path / "t.jsonl"
    long_write_turn(path, MB)
    end = complete_end_offset(path)
    with open(path, "ab") as fh:
        fh.write(b"{" + b"x" * (3 * MB))
    COUNTER.bytes = 0
    assert complete_end_offset(path) == end
    assert COUNTER.bytes <= 3 * MB + 2
    with open(path, "ab") as fh:
        fh.write(b"y" * 1000)
    COUNTER.bytes = 0
    assert complete_end_offset(path) == end
    assert COUNTER.bytes <= 1000


def test_one_pass_hash_and_records_with_bounded_memory(tmp_path, loads_sizes):
    path = tmp_path / "t.jsonl"
    long_write_turn(path, 8 * MB, finished=True)
    tracemalloc.start()
    sha, assistants = hashed_records(path, select=lambda line: b"assistant" in line or b"\\u" in line)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert sha == transcript_sha256(path)
    assert {r["type"] for r in assistants} == {"assistant"}
    assert peak < 4 * MB and max(loads_sizes) < LONG_RECORD_BYTES


def test_a_nul_hole_before_a_long_record_keeps_the_record(tmp_path):
    b = TranscriptBuilder(seed=4)
    b.prompt("p")
    tid = b.tool_use("Write", {"file_path": "/x", "content": "c" * (2 * MB)})
    lines = b.lines()
    data = "\n".join(lines[:-1]).encode() + b"\n" + b"\x00" * (2 * MB) + lines[-1].encode() + b"\n"
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    for res in (read_tail(path), read_records(path)):
        assert classify(res.records).pending_tool_id == tid
        assert res.skipped_malformed == 0          # kept like a short line's last piece after a hole


def test_lone_surrogates_in_a_transcript_are_escaped(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"type":"user","uuid":"u1","message":{"content":"bad \\ud800 text"}}\n'
                    '{"type":"user","uuid":"u2","message":{"content":"pair \\ud83d\\ude00 ok"}}\n')
    recs = read_records(path).records
    assert recs[0]["message"]["content"] == "bad \\ud800 text"
    assert recs[1]["message"]["content"] == "pair \U0001F600 ok"
    json.dumps(recs, ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("padding,nodes", [(0, 0), (20 << 10, 0), (20 << 10, 6000)],
                         ids=["short line: checked from its bytes", "long line: its nodes walked",
                              "long line of many nodes: past the walk's budget, checked from its bytes"])
def test_depth_and_lone_surrogates_are_found_on_every_check_path(tmp_path, padding, nodes):
    """A line of 8 KiB or more is checked by walking its parsed record, up to a node budget, a shorter one or one
    with more nodes from its bytes; each path refuses the same nesting and escapes the same lone surrogates."""
    assert padding == 0 or padding >= stream.SHAPE_MIN_BYTES
    assert nodes == 0 or nodes > stream.SHAPE_NODE_BUDGET
    pad = '"pad":"' + "line\\n" * (padding // 6) + '","many":[' + ",".join(["1"] * nodes) + "],"
    lines = ['{"type":"user",' + pad + '"uuid":"u1","message":{"content":"bad \\ud800 text"}}',
             '{"type":"user",' + pad + '"uuid":"u2","message":{"content":"pair \\ud83d\\ude00 ok"}}',
             '{"type":"user",' + pad + '"uuid":"u3","\\udfff key":"x","message":{"content":"fine"}}',
             '{"type":"user",' + pad + '"x":' + "[" * 101 + "]" * 101 + "}",
             '{"type":"user",' + pad + '"x":' + "[" * 99 + "]" * 99 + ',"uuid":"u4"}']
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    res = read_records(path)
    got = {r["uuid"]: r for r in res.records}
    assert sorted(got) == ["u1", "u2", "u3", "u4"] and res.skipped_malformed == 1
    assert "nested deeper" in res.first_error
    assert got["u1"]["message"]["content"] == "bad \\ud800 text"
    assert got["u2"]["message"]["content"] == "pair \U0001F600 ok"
    assert "\\udfff key" in got["u3"]
    json.dumps(res.records, ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("check", ["walk", "bytes"])
def test_a_line_summarised_from_its_last_bytes_alone_is_refused_when_too_deep(tmp_path, monkeypatch, check):
    """Its start lies beyond the scan budget, so the summary never saw the record's opening brace: either check still
    counts that level, and read_tail refuses the record as the whole-file read does."""
    if check == "bytes":
        monkeypatch.setattr(stream, "SHAPE_MIN_BYTES", 1 << 40)      # every line bounded from its bytes
    deep = "[" * stream.MAX_RECORD_DEPTH + "1" + "]" * stream.MAX_RECORD_DEPTH     # with the record: one too deep
    path = tmp_path / "t.jsonl"
    path.write_text('{"big":"' + "x" * (4 * MB) + '","type":"user","uuid":"u","deep":' + deep + "}\n")
    for res in (read_tail(path, scan_max_bytes=2 * MB), read_records(path)):
        assert res.records == [] and res.skipped_malformed == 1 and "nested deeper" in res.first_error
    path.write_text(path.read_text().replace("[1]", "1"))           # one level less: accepted by both
    for res in (read_tail(path, scan_max_bytes=2 * MB), read_records(path)):
        assert [r["uuid"] for r in res.records] == ["u"] and res.skipped_malformed == 0


def test_deep_nesting_within_the_json_limit_is_refused_as_malformed(tmp_path):
    path = tmp_path / "t.jsonl"
    deep = '{"type":"user","x":' + "[" * 500 + "]" * 500 + "}"
    path.write_text(deep + "\n" + '{"type":"mode"}\n')
    res = read_records(path)
    assert [r["type"] for r in res.records] == ["mode"] and "nested deeper" in res.first_error
    assert stream.MAX_RECORD_DEPTH < 500
