"""live_trial.transcript.status.classify over synthetic transcripts: every state and exception of references/transcript-jsonl.md."""
from __future__ import annotations

import json

import pytest

from live_trial.cli.main import main
from live_trial.transcript.cases import ASK_INPUT, CASES, check
from live_trial.transcript.paths import project_slug
from live_trial.transcript.reader import read_tail
from live_trial.transcript.status import BUSY_GENERATING, BUSY_TOOL, GATE, IDLE_TURN_COMPLETE, classify


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case):
    st, problems = check(case)
    assert not problems, f"{case.name}: {problems} (reason {st.reason})"


def test_transcript_ending_with_the_prompt_is_busy_generating(transcript_builder):
    b = transcript_builder()
    b.turn()
    b.prompt("second")
    assert classify(b.records).state == BUSY_GENERATING


def test_file_read_torn_tail_nul_and_unknown_type_keep_the_state(tmp_path, transcript_builder):
    b = transcript_builder()
    b.prompt()
    b.tool_use("Bash", {"command": "sleep 20"})
    lines = b.lines()
    data = ("\n".join(lines[:1]) + "\n").encode() + b"\x00" * 512 + b"\n" \
        + ("\n".join(lines[1:]) + "\n").encode() + b'{"type":"future-record","x":1}\n' + b'{"type":"system","subtype"'
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    res = read_tail(path)
    assert res.skipped_malformed == 1 and res.skipped_unknown == 1 and res.torn_tail
    assert classify(res.records).state == BUSY_TOOL


def test_order_comes_from_timestamps_and_chain_not_lines(transcript_builder):
    b = transcript_builder()
    b.turn("first")
    b.prompt("second")
    b.text("reply")
    b.turn_duration()
    recs = b.records
    # the second turn's reply written before its prompt (out of line order)
    shuffled = recs[:-4] + recs[-2:] + recs[-4:-2]
    assert classify(shuffled).state == IDLE_TURN_COMPLETE


def test_stale_turn_duration_before_newest_prompt_by_timestamp(transcript_builder):
    b = transcript_builder()
    b.turn("first")
    b.prompt("second")
    recs = b.records
    td_first = [r for r in recs if r.get("subtype") == "turn_duration"][0]
    moved = [r for r in recs if r is not td_first] + [td_first]   # the old turn_duration is the LAST line
    assert classify(moved).state == BUSY_GENERATING


def test_chain_breaks_timestamp_ties(transcript_builder):
    b = transcript_builder(step_s=0)
    b.prompt()
    tid = b.tool_use("Bash")
    b.tool_result(tid)
    recs = b.records
    reordered = [recs[0], recs[1], recs[3], recs[2]]              # same timestamps, result line first
    assert classify(reordered).state == BUSY_GENERATING           # the tool_result is the chain's newest


def test_records_without_timestamps_fall_back_to_file_order():
    recs = [{"type": "user", "message": {"content": "go"}},
            {"type": "assistant", "message": {"model": "m", "stop_reason": "end_turn",
                                              "content": [{"type": "text", "text": "done"}]}}]
    assert classify(recs).state == IDLE_TURN_COMPLETE
    assert classify(recs[:1]).state == BUSY_GENERATING


def test_gate_question_text_and_options(transcript_builder):
    b = transcript_builder()
    b.prompt()
    b.tool_use("AskUserQuestion", ASK_INPUT)
    st = classify(b.records)
    assert (st.state, st.gate_kind, st.question, st.options) == (GATE, "ask_user_question", "Which colour?",
                                                                 ["Red", "Blue"])


@pytest.mark.parametrize("tool_input", [{}, None, [], "junk", {"questions": "x"}, {"questions": [None, 3, {}]},
                                        {"questions": [{"question": 5, "options": [None, {"label": 1}]}]}])
def test_gate_question_never_breaks_on_odd_inputs(transcript_builder, tool_input):
    for name in ("AskUserQuestion", "ExitPlanMode"):
        b = transcript_builder()
        b.prompt()
        b.message([{"type": "tool_use", "id": "toolu_1", "name": name, "input": tool_input}], stop_reason="tool_use")
        st = classify(b.records)
        assert st.state == GATE and isinstance(st.question, str) and st.question


def test_exit_plan_mode_question_mentions_the_plan(transcript_builder):
    b = transcript_builder()
    b.prompt()
    b.tool_use("ExitPlanMode", {"plan": "# Add a greeting\n\n1. write it"})
    assert "Add a greeting" in classify(b.records).question


def test_permission_gate_only_when_cli_waits(transcript_builder):
    b = transcript_builder()
    b.prompt()
    b.tool_use("Write", {"file_path": "/tmp/x", "content": "y"})
    assert classify(b.records, {"status": "busy"}).state == BUSY_TOOL
    assert classify(b.records, None).state == BUSY_TOOL
    st = classify(b.records, {"status": "waiting", "waitingFor": "permission prompt"})
    assert st.state == GATE and st.question == "Permission for Write: /tmp/x"


def test_multi_block_message_text_then_tool_use(transcript_builder):
    b = transcript_builder()
    b.prompt()
    b.tool_use("Bash", {"command": "sleep 9"}, text="I will sleep.")
    st = classify(b.records)
    assert st.state == BUSY_TOOL and st.pending_tool == "Bash" and st.stop_reason == "tool_use"


def test_api_error_without_turn_duration_yet(transcript_builder):
    b = transcript_builder()
    b.prompt()
    b.synthetic(api_error_status=529)
    st = classify(b.records)
    assert st.state == IDLE_TURN_COMPLETE and st.api_error == 529


def test_stop_reasons_that_end_a_turn(transcript_builder):
    for reason, state in [("end_turn", IDLE_TURN_COMPLETE), ("max_tokens", IDLE_TURN_COMPLETE),
                          ("refusal", IDLE_TURN_COMPLETE), ("stop_sequence", IDLE_TURN_COMPLETE),
                          ("tool_use", BUSY_GENERATING), (None, BUSY_GENERATING)]:
        b = transcript_builder()
        b.prompt()
        b.text("x", stop_reason=reason)
        assert classify(b.records).state == state, reason


def test_synthetic_partial_without_interrupt_record_is_not_idle(transcript_builder):
    b = transcript_builder()
    b.prompt()
    b.synthetic("partial")
    assert classify(b.records).state == BUSY_GENERATING


def test_meta_and_attachments_after_prompt_keep_busy(transcript_builder):
    b = transcript_builder()
    b.prompt()
    tid = b.tool_use("Skill", {"skill": "hello:greet"})
    b.tool_result(tid, "Launching skill: hello:greet", result={"success": True, "commandName": "hello:greet"})
    b.meta("Base directory for this skill: /x")
    b.attachment("command_permissions", allowedTools=["Write"])
    assert classify(b.records).state == BUSY_GENERATING


def test_last_assistant_text_for_the_stall_table(transcript_builder):
    b = transcript_builder()
    b.prompt()
    b.text("Shall I continue?")
    b.turn_duration()
    assert classify(b.records).last_assistant_text == "Shall I continue?"


def test_classify_never_raises_on_junk():
    for junk in ([None, 1, "x", [], {"type": 5}], [{"type": "assistant", "message": {"content": "str"}}],
                 [{"type": "user", "message": {"content": [{"type": "tool_result"}]}, "timestamp": "bad"}],
                 [{"type": "user", "uuid": "a", "parentUuid": "a", "message": {"content": "x"}}]):
        assert classify(junk).state in (BUSY_GENERATING, BUSY_TOOL, GATE, IDLE_TURN_COMPLETE)


# ------------------------------------------------------------------ CLI

def test_status_cli_json_and_text(tmp_path, transcript_builder, capsys):
    b = transcript_builder()
    b.prompt()
    b.tool_use("AskUserQuestion", ASK_INPUT)
    path = b.write(tmp_path / "t.jsonl")
    assert main(["status", "--transcript", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["state"] == "GATE" and doc["question"] == "Which colour?" and doc["pending_tool"] == "AskUserQuestion"
    assert doc["interrupted"] is False and doc["api_error"] is None
    assert main(["status", "--transcript", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "GATE: Which colour?"


def test_status_cli_by_session_id(tmp_path, transcript_builder, capsys, monkeypatch):
    sid = "11111111-2222-4333-8444-555555555555"
    cwd = tmp_path / "work"
    cwd.mkdir()
    b = transcript_builder(session_id=sid)
    b.turn()
    b.write(tmp_path / "cfg" / "projects" / project_slug(cwd) / f"{sid}.jsonl")
    monkeypatch.setenv("SESSION_ID", sid)
    assert main(["status", "--cwd", str(cwd), "--config-dir", str(tmp_path / "cfg")]) == 0
    assert capsys.readouterr().out.startswith("IDLE_TURN_COMPLETE: ")


def test_status_cli_missing_transcript_is_exit_2(tmp_path, capsys):
    assert main(["status", "--transcript", str(tmp_path / "none.jsonl")]) == 2
    assert "transcript not found" in capsys.readouterr().err


@pytest.mark.parametrize("text", ['{"verdict": "PASS"}\n', "hello\nworld\n"])
def test_status_cli_refuses_a_file_that_is_not_a_transcript(tmp_path, capsys, text):
    """Reading a verdict or a log as a transcript must not say BUSY_GENERATING (it would look like a live turn)."""
    path = tmp_path / "verdict.json"
    path.write_text(text)
    assert main(["status", "--transcript", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("REFUSED: not a Claude Code transcript") and str(path) in err and "\n" not in err


def test_status_cli_on_an_empty_transcript_is_busy_generating(tmp_path, capsys):
    """The CLI creates the file at the first prompt; an empty one is a turn that has not written yet."""
    path = tmp_path / "s.jsonl"
    path.write_text("")
    assert main(["status", "--transcript", str(path)]) == 0
    assert capsys.readouterr().out.startswith("BUSY_GENERATING: ")


def test_status_self_test_cli(capsys):
    assert main(["status", "--self-test"]) == 0
    assert capsys.readouterr().out.startswith("SELF_TEST: OK")


def test_waiting_cli_with_nothing_pending_is_gate_and_an_ended_turn_is_not(transcript_builder):
    """The live CLI status is the gate signal when the dialog's tool_use is not written yet (2.1.197 under load)."""
    from live_trial.transcript.status import classify, gate_from_screen
    b = transcript_builder()
    b.prompt()
    tid = b.tool_use("Skill", {"skill": "p:s"})
    b.tool_result(tid, "Launching skill: p:s")
    assert classify(b.records, {"status": "waiting"}).state == "GATE"
    assert classify(b.records, {"status": "busy"}).state == "BUSY_GENERATING"
    st = gate_from_screen(classify(b.records, {"status": "busy"}), "ask_user_question", "Which?", ["A", "B"])
    assert (st.state, st.gate_kind, st.question, st.options) == ("GATE", "ask_user_question", "Which?", ["A", "B"])
    assert gate_from_screen(classify(b.records), "trust", "x", []).state == "BUSY_GENERATING"   # not a gate dialog
    b.text("done", stop_reason="end_turn")
    b.turn_duration()
    assert classify(b.records, {"status": "waiting"}).state == "IDLE_TURN_COMPLETE"
    assert gate_from_screen(classify(b.records), "ask_user_question", "Which?", []).state == "IDLE_TURN_COMPLETE"
