"""skill_calls: which skills the transcript shows launched (the launch axis of the verdict, seed 001)."""
from __future__ import annotations

from pathlib import Path

from live_trial.transcript.builder import TranscriptBuilder
from live_trial.transcript.reader import read_records
from live_trial.transcript.skill_calls import skill_calls

REAL = Path(__file__).parents[1] / "transcripts" / "first-turn-out-of-order.jsonl"


def test_skill_calls_names_each_call_and_whether_it_succeeded():
    b = TranscriptBuilder()
    b.prompt("run it")
    ok = b.tool_use("Skill", {"skill": "p:other"})
    b.tool_result(ok, "Launching skill: p:other")
    bad = b.tool_use("Skill", {"skill": "/p:target"})
    b.tool_result(bad, "Unknown skill", is_error=True)
    b.tool_use("Skill", {"skill": "p:target"})              # no result yet
    b.tool_use("Bash", {"command": "true"})
    assert skill_calls(b.records) == [("p:other", True), ("p:target", False), ("p:target", False)]


def test_skill_calls_on_a_real_transcript_written_out_of_order():
    assert skill_calls(read_records(REAL).records) == [("trialkit:mark", True)]


def test_no_skill_call_and_junk_records():
    assert skill_calls([{"type": "assistant", "message": {"content": "text"}}, {"type": "user"}, "junk"]) == []
