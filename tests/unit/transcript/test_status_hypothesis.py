"""Property tests: status never raises on random or mutated transcripts, and appending
garbage lines to a valid transcript never changes its state."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from live_trial.transcript.builder import TranscriptBuilder
from live_trial.transcript.cases import ASK_INPUT
from live_trial.transcript.reader import read_from, read_records, read_tail
from live_trial.transcript.records import KNOWN_TYPES
from live_trial.transcript.status import STATES, classify

OPS = ("prompt", "text", "tool", "gate", "plan", "result", "error_result", "duration", "interrupt",
       "interrupt_tool", "synthetic", "api_error", "meta", "attachment", "enqueue", "dequeue", "snapshot",
       "sidechain", "advance")


def build(ops: list[str]) -> TranscriptBuilder:
    """Apply a random sequence of builder operations (not always a sensible conversation)."""
    b = TranscriptBuilder(seed=1)
    b.mode()
    open_tools: list[str] = []
    for op in ops:
        if op == "prompt":
            b.prompt("task")
        elif op == "text":
            b.text("hello")
        elif op == "tool":
            open_tools.append(b.tool_use("Bash", {"command": "sleep 1"}))
        elif op == "gate":
            open_tools.append(b.tool_use("AskUserQuestion", ASK_INPUT))
        elif op == "plan":
            open_tools.append(b.tool_use("ExitPlanMode", {}))
        elif op in ("result", "error_result"):
            b.tool_result(open_tools.pop() if open_tools else "toolu_none", "out", is_error=op == "error_result")
        elif op == "duration":
            b.turn_duration()
        elif op == "interrupt":
            b.interrupt()
        elif op == "interrupt_tool":
            b.interrupt(for_tool=True)
        elif op == "synthetic":
            b.synthetic("partial")
        elif op == "api_error":
            b.synthetic(api_error_status=400)
        elif op == "meta":
            b.meta()
        elif op == "attachment":
            b.attachment()
        elif op in ("enqueue", "dequeue"):
            b.queue(op)
        elif op == "snapshot":
            b.snapshot()
        elif op == "sidechain":
            b.message([{"type": "text", "text": "side"}], sidechain=True)
        elif op == "advance":
            b.advance(-30)   # clocks that go backwards too
    return b


ops_strategy = st.lists(st.sampled_from(OPS), max_size=40)
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                           lambda kids: st.lists(kids, max_size=3)
                           | st.dictionaries(st.text(max_size=6), kids, max_size=3),
                           max_leaves=8)


def mutate(records: list[dict], data) -> list:
    """Randomly drop, retype or replace fields of some records, and insert junk values."""
    out: list = []
    for rec in records:
        rec = json.loads(json.dumps(rec))
        action = data.draw(st.sampled_from(["keep", "keep", "drop_field", "set_field", "junk", "drop"]))
        if action == "drop_field" and rec:
            rec.pop(data.draw(st.sampled_from(sorted(rec))), None)
        elif action == "set_field":
            key = data.draw(st.sampled_from(["type", "message", "timestamp", "uuid", "parentUuid", "isSidechain",
                                             "isMeta", "toolUseResult", "subtype", "operation", "isApiErrorMessage"]))
            rec[key] = data.draw(json_values)
        elif action == "junk":
            out.append(data.draw(json_values))
        elif action == "drop":
            continue
        out.append(rec)
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops_strategy, data=st.data())
def test_classify_never_raises_on_mutated_transcripts(ops, data):
    records = mutate(build(ops).records, data)
    st_ = classify(records, data.draw(st.none() | st.just({"status": "waiting"}) | st.just({"status": 3})))
    assert st_.state in STATES and not st_.reason.startswith("classifier_error"), st_.reason


@settings(max_examples=200, deadline=None)
@given(blob=st.binary(max_size=2000))
def test_reading_random_bytes_never_raises(tmp_path_factory, blob):
    path = tmp_path_factory.mktemp("rb") / "t.jsonl"
    path.write_bytes(blob)
    for res in (read_records(path), read_tail(path)):
        assert classify(res.records).state in STATES
    read_from(path, 0)


garbage_line = st.one_of(
    st.binary(min_size=1, max_size=80).filter(lambda b: b"\n" not in b),
    st.just(b"\x00" * 300),
    st.builds(lambda t: json.dumps({"type": t, "x": 1}).encode(),
              st.text(min_size=1, max_size=10).filter(lambda t: t not in KNOWN_TYPES)),
    st.builds(lambda v: json.dumps(v).encode(),
              st.lists(st.integers(), max_size=3) | st.integers() | st.text(max_size=5)),
    st.just(b'{"type":"assistant","message":{"content":[{"type":"tool_use"'),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops_strategy, garbage=st.lists(garbage_line, min_size=1, max_size=5), torn=st.booleans())
def test_appending_garbage_never_changes_the_state(tmp_path, ops, garbage, torn):
    b = build(ops)
    path = b.write(tmp_path / "t.jsonl")
    before = classify(read_tail(path).records)
    tail = b"\n".join(garbage) + (b"" if torn else b"\n")
    with open(path, "ab") as fh:
        fh.write(tail)
    after = classify(read_tail(path).records)
    full = classify(read_records(path).records)
    assert (after.state, after.interrupted, after.pending_tool) == \
        (before.state, before.interrupted, before.pending_tool)
    assert full.state == before.state
