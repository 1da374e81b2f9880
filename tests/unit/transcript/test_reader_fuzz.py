"""Property-based fuzzing of the transcript reader and the classifier (hypothesis).

Random transcripts built from real record shapes are damaged the ways a disk, a crash or a hostile tool output can
damage them: truncated anywhere, NUL runs, bytes that are not UTF-8, lone surrogate escapes, lines nested 10^5
deep, wrong types in every field, duplicate uuids, parentUuid cycles, lines longer than the summary threshold. No
exception may escape any reader, the classifier or the steps built on them (the documented refusal is a skipped
and counted line, never a raise), every record read can be written as UTF-8 JSON, and each case is bounded by the
bytes it reads (counted through :data:`live_trial.transcript.stream.COUNTER`), not by time. The limits are made
small (a 1.5 KB "over-long" line, 777-byte chunks, 333-byte tail blocks) so every path runs in a few KB.
"""
from __future__ import annotations

import itertools
import json
from contextlib import contextmanager

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from live_trial.judge.index import index_records, read_index
from live_trial.transcript import reader, stream
from live_trial.transcript.order import causal_order
from live_trial.transcript.reader import (
    complete_end_offset,
    hashed_records,
    iter_records,
    read_from,
    read_records,
    read_tail,
)
from live_trial.transcript.records import human_prompts, main_chain_assistant_models
from live_trial.transcript.status import STATES, classify
from live_trial.transcript.summary import summarise
from live_trial.transcript.skill_calls import skill_calls
from tests.unit.transcript.test_status_hypothesis import OPS, build

LONG, HEAD, TAIL, CHUNK, BLOCK = 1500, 400, 400, 777, 333
MAX_BYTES, SCAN_MAX = 4096, 16384
FIELDS = ["type", "message", "timestamp", "uuid", "parentUuid", "isSidechain", "isMeta", "toolUseResult",
          "subtype", "operation", "isApiErrorMessage", "apiErrorStatus", "origin", "promptSource"]
BLOCK_FIELDS = ["type", "id", "name", "input", "tool_use_id", "is_error", "content", "text"]
wrong = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False),
                  st.text(max_size=6), st.lists(st.integers(), max_size=3),
                  st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))
_names = itertools.count()


@contextmanager
def small_limits():
    saved = (stream.LONG_RECORD_BYTES, stream.SUMMARY_HEAD_BYTES, stream.SUMMARY_TAIL_BYTES, stream.CHUNK_BYTES,
             reader.TAIL_BLOCK_BYTES)
    stream.LONG_RECORD_BYTES, stream.SUMMARY_HEAD_BYTES, stream.SUMMARY_TAIL_BYTES = LONG, HEAD, TAIL
    stream.CHUNK_BYTES, reader.TAIL_BLOCK_BYTES = CHUNK, BLOCK
    try:
        yield
    finally:
        (stream.LONG_RECORD_BYTES, stream.SUMMARY_HEAD_BYTES, stream.SUMMARY_TAIL_BYTES, stream.CHUNK_BYTES,
         reader.TAIL_BLOCK_BYTES) = saved


def damage_records(records: list[dict], data) -> list[dict]:
    """Wrong types in fields and in content blocks, duplicate uuids, parentUuid cycles, long texts."""
    out = [json.loads(json.dumps(r)) for r in records]
    uuids = [r["uuid"] for r in out if isinstance(r.get("uuid"), str)]
    for rec in out:
        action = data.draw(st.sampled_from(["keep", "keep", "field", "block", "dup", "cycle", "long"]))
        if action == "field":
            rec[data.draw(st.sampled_from(FIELDS))] = data.draw(wrong)
        elif action == "block":
            content = (rec.get("message") or {}).get("content") if isinstance(rec.get("message"), dict) else None
            if isinstance(content, list) and content and isinstance(content[0], dict):
                content[0][data.draw(st.sampled_from(BLOCK_FIELDS))] = data.draw(wrong)
            elif isinstance(rec.get("message"), dict):
                rec["message"]["content"] = data.draw(wrong)
        elif action == "dup" and uuids:
            rec["uuid"] = data.draw(st.sampled_from(uuids))
        elif action == "cycle" and uuids and isinstance(rec.get("uuid"), str):
            other = next((r for r in out if r.get("uuid") == data.draw(st.sampled_from(uuids))), None)
            if other is not None:
                rec["parentUuid"], other["parentUuid"] = other["uuid"], rec["uuid"]
        elif action == "long":
            rec["pad"] = "p" * data.draw(st.integers(LONG, 3 * LONG))
    return out


def damage_bytes(lines: list[bytes], data) -> bytes:
    """NUL runs, bytes that are not UTF-8, lone surrogate escapes, 10^5-deep lines, garbage; then truncation."""
    out = []
    for line in lines:
        action = data.draw(st.sampled_from(["keep", "keep", "keep", "nul", "utf8", "surrogate", "deep", "junk"]))
        if action == "nul":
            at = data.draw(st.integers(0, len(line)))
            line = line[:at] + b"\x00" * data.draw(st.integers(1, 3 * LONG)) + line[at:]
        elif action == "utf8":
            at = data.draw(st.integers(0, len(line)))
            line = line[:at] + data.draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xfe\xfe"])) + line[at:]
        elif action == "surrogate":
            line = line.replace(b'"text":"', b'"text":"\\ud800', 1).replace(b'"content":"', b'"content":"\\udfff', 1)
        elif action == "deep":
            out.append(data.draw(st.sampled_from([b"[" * 100_000 + b"]" * 100_000,
                                                  b'{"type":"user","x":' + b"[" * 100_000,
                                                  b'{"type":"user","x":' + b"[" * 150 + b"]" * 150 + b"}"])))
        elif action == "junk":
            out.append(data.draw(st.binary(max_size=60)))
        out.append(line)
    blob = b"\n".join(out) + data.draw(st.sampled_from([b"\n", b""]))
    if data.draw(st.booleans()):
        blob = blob[:data.draw(st.integers(0, len(blob)))]        # truncated anywhere
    return blob


def must_encode(records) -> None:
    json.dumps(records, ensure_ascii=False).encode("utf-8")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.sampled_from(OPS), max_size=30), data=st.data())
def test_damaged_transcripts_never_raise_and_reads_stay_within_their_budgets(tmp_path, ops, data):
    records = damage_records(build(ops).records, data)
    blob = damage_bytes([json.dumps(r).encode() for r in records], data)
    path = tmp_path / f"t{next(_names)}.jsonl"
    path.write_bytes(blob)
    size = len(blob)
    with small_limits():
        stream.COUNTER.bytes = 0
        full = read_records(path)
        assert stream.COUNTER.bytes <= size
        stream.COUNTER.bytes = 0
        tail = read_tail(path, max_bytes=MAX_BYTES, scan_max_bytes=SCAN_MAX)
        assert stream.COUNTER.bytes <= SCAN_MAX + BLOCK + max(HEAD, LONG)
        stream.COUNTER.bytes = 0
        end = complete_end_offset(path)
        assert stream.COUNTER.bytes <= size and 0 <= end <= size
        stream.COUNTER.bytes = 0
        forward, offset = read_from(path, 0)
        assert stream.COUNTER.bytes <= size and offset == full.end_offset
        sha, assistants = hashed_records(path, select=lambda line: b"assistant" in line or b"\\u" in line)
        assert sha.startswith("sha256:") and all(r in full.records for r in assistants)
        assert [r for r in assistants if r["type"] == "assistant"] == \
            [r for r in full.records if r["type"] == "assistant"]        # lines skipped unparsed held none
        assert list(iter_records(path)) == full.records == forward
        if tail.reached_start:
            assert tail.records == full.records
    for recs in (full.records, tail.records):
        must_encode(recs)
        state = classify(recs, data.draw(st.none() | st.just({"status": "waiting"}) | st.just({"status": "idle"})))
        assert state.state in STATES and not state.reason.startswith("classifier_error"), state.reason
        must_encode(state.to_dict())
        causal_order(recs, sidechains=True)
        human_prompts(recs)
        main_chain_assistant_models(recs)
        skill_calls(recs)
        rows, facts = read_index(recs)
        must_encode(rows)
        must_encode([vars(f) for f in facts.values()])
        assert len(rows) == len([r for r in recs if isinstance(r.get("uuid"), str)])


@settings(max_examples=300, deadline=None)
@given(head=st.binary(max_size=300), tail=st.binary(max_size=300))
def test_summaries_of_any_bytes_never_raise(head, tail):
    for h in (head, None, b'{"type":"user","message":{"content":"' + head):
        rec = summarise(h, tail + b"}", 10**9)
        assert rec is None or isinstance(rec, dict)


@settings(max_examples=100, deadline=None)
@given(depth=st.integers(1, 100_000), opener=st.sampled_from([b"[", b'{"a":']))
def test_deep_nesting_in_a_summary_window_is_bounded(depth, opener):
    head = b'{"type":"user","x":' + opener * depth
    rec = summarise(head[:4096], b"]}" * 3, 10**9)
    assert rec is None or rec["type"] == "user"


def test_a_tool_name_of_the_wrong_type_does_not_break_the_evaluator_index():
    """Found by the fuzz test above: a tool_use whose name is a list raised TypeError in the index (evaluate)."""
    rec = {"type": "assistant", "uuid": "u1", "message": {"content": [{"type": "tool_use", "id": "t", "name": ["Write"],
                                                                      "input": {"file_path": "/x"}}]}}
    assert index_records([rec])[0]["writes"] == []


def test_a_tool_result_id_of_the_wrong_type_does_not_break_the_classifier():
    """Found by the fuzz test above: a tool_result whose tool_use_id is a list raised TypeError in the classifier,
    which then reported a classifier_error (BUSY_GENERATING) for ever."""
    b = build(["prompt", "tool"])
    b.add({"type": "user", "uuid": "r1", "message": {"content": [{"type": "tool_result", "tool_use_id": ["x"]}]}})
    assert classify(b.records, None).state == "BUSY_TOOL"
