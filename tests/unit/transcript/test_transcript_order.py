"""causal_order: records in the order they happened, whatever line order the CLI wrote them in."""
from __future__ import annotations

from pathlib import Path

from live_trial.judge.index import index_records
from live_trial.transcript.order import causal_order
from live_trial.transcript.reader import read_records
from live_trial.transcript.records import human_prompts
from live_trial.transcript.status import IDLE_TURN_COMPLETE, classify

REAL = Path(__file__).parents[1] / "transcripts" / "first-turn-out-of-order.jsonl"


def _tool_uses(records):
    return [b["name"] for r in records if r.get("type") == "assistant" for b in r["message"]["content"]
            if isinstance(b, dict) and b.get("type") == "tool_use"]


def test_the_real_file_is_out_of_order_in_line_order():
    """The fixture is a real 2.1.197 transcript from a CI run: its Write tool_use is line 4, before the prompt."""
    recs = read_records(REAL).records
    assert _tool_uses(recs) == ["Write", "Skill"]
    first_assistant = next(i for i, r in enumerate(recs) if r.get("type") == "assistant")
    assert first_assistant < recs.index(human_prompts(recs)[0])


def test_causal_order_puts_the_real_turn_back_in_order():
    recs = causal_order(read_records(REAL).records)
    assert _tool_uses(recs) == ["Skill", "Write"]
    kinds = [r["type"] for r in recs if r.get("uuid")]
    assert kinds[0] == "user" and kinds[-1] == "system"
    uuids = [r["uuid"] for r in recs if r.get("uuid")]
    for rec in recs:                       # no record before its parent
        if rec.get("parentUuid") in uuids:
            assert uuids.index(rec["parentUuid"]) < uuids.index(rec["uuid"]), rec["uuid"]
    st = classify(read_records(REAL).records)
    assert st.state == IDLE_TURN_COMPLETE and st.last_assistant_text == "DONE: ok"


def test_evaluator_index_follows_causal_order():
    index = index_records(causal_order(read_records(REAL).records, sidechains=True))
    tools = [t for row in index for t in row["tools"] if t != "tool_result"]
    assert tools == ["Skill", "Write"]


def _rec(uuid, parent, ts, **kw):
    return {"uuid": uuid, "parentUuid": parent, "timestamp": ts, "type": "user", **kw}


def test_a_child_stamped_before_its_parent_still_follows_it():
    """Attachments are stamped 1 ms before the record they follow (observed)."""
    recs = [_rec("b", "a", "2026-01-01T00:00:00.001Z"), _rec("a", None, "2026-01-01T00:00:00.002Z"),
            _rec("c", "b", "2026-01-01T00:00:00.000Z")]
    assert [r["uuid"] for r in causal_order(recs)] == ["a", "b", "c"]


def test_records_without_timestamp_take_the_previous_lines_time():
    recs = [_rec("a", None, "2026-01-01T00:00:01Z"), {"type": "file-history-snapshot"},
            _rec("b", "a", "2026-01-01T00:00:00Z")]
    assert [r.get("uuid") for r in causal_order(recs)] == ["a", None, "b"]


def test_cycles_missing_parents_and_junk_are_tolerated():
    recs = [_rec("x", "y", "2026-01-01T00:00:02Z"), _rec("y", "x", "2026-01-01T00:00:01Z"),
            _rec("z", "gone", "2026-01-01T00:00:00Z"), "not a dict", {"uuid": 5}]
    out = causal_order(recs)
    assert {r.get("uuid") for r in out} == {"x", "y", "z", 5}
    assert out[0]["uuid"] == "z"


def test_sidechains_are_dropped_unless_asked_for():
    recs = [_rec("a", None, "2026-01-01T00:00:00Z"), _rec("s", "a", "2026-01-01T00:00:01Z", isSidechain=True)]
    assert [r["uuid"] for r in causal_order(recs)] == ["a"]
    assert [r["uuid"] for r in causal_order(recs, sidechains=True)] == ["a", "s"]


def test_a_long_chain_needs_no_recursion():
    n = 50_000
    recs = [_rec(str(i), str(i - 1) if i else None, "2026-01-01T00:00:00Z") for i in reversed(range(n))]
    out = causal_order(recs)
    assert [r["uuid"] for r in out] == [str(i) for i in range(n)]
