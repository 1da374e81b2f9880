"""The STALL branch table of seed 001, row by row, in order."""
from __future__ import annotations

import pytest

from live_trial.transcript.reply import text_ends_with_question, text_reports_done
from live_trial.trial.stall import decide_stall
from tests.unit.fakes import trial_state

BASE = dict(session_alive=True, state="IDLE_TURN_COMPLETE", marker_exists=False, stall_extended=False,
            nudge_count=0, nudge_max=2, asks_question=False, said_done=False)


def decide(**kw):
    return decide_stall(**{**BASE, **kw})


def test_row1_session_gone_is_a_crash_whatever_the_state():
    for state in ("BUSY_GENERATING", "BUSY_TOOL", "IDLE_TURN_COMPLETE", None):
        d = decide(session_alive=False, state=state, asks_question=True)
        assert (d.row, d.action) == (1, "crash")


@pytest.mark.parametrize("state", ["BUSY_GENERATING", "BUSY_TOOL"])
def test_row2_busy_extends_once_then_is_a_hang(state):
    assert (decide(state=state).row, decide(state=state).action) == (2, "extend")
    d = decide(state=state, stall_extended=True)
    assert (d.row, d.action) == (2, "hang")


def test_row4_question_gets_a_nudge_until_nudge_max():
    assert decide(asks_question=True).action == "nudge"
    assert decide(asks_question=True, nudge_count=1).action == "nudge"
    d = decide(asks_question=True, nudge_count=2)
    assert (d.row, d.action) == (4, "nudge_limit")


def test_row4_comes_before_row5():
    d = decide(asks_question=True, said_done=True)
    assert (d.row, d.action) == (4, "nudge")


def test_row5_done_report_without_marker_is_a_contract_violation():
    d = decide(said_done=True)
    assert (d.row, d.action) == (5, "contract_violation")


def test_row6_anything_else_is_an_unexpected_stop():
    d = decide()
    assert (d.row, d.action) == (6, "unexpected_stop")
    d = decide(state="GATE")
    assert d.row == 6
    d = decide(marker_exists=True)
    assert d.row == 6


@pytest.mark.parametrize("text", ["Which file should I use?", "Shall I proceed with the deletion", "続けますか？",
                                  "I wrote the draft.\nDo you want me to send it now?",
                                  "I loaded the skill, but which name should the greeting use? Please tell me and I "
                                  "will continue.",
                                  "Please tell me the target folder.", "宛先を教えてください。"])
def test_questions_are_recognised(text):
    assert text_ends_with_question(text)


@pytest.mark.parametrize("text", ["", None, "DONE: ok", "Wrote 3 files.", "Is it? No.\nI wrote 3 files.\nAll done.\nFinished.",
                                  "The skill finished: 2 files written."])
def test_statements_are_not_questions(text):
    assert not text_ends_with_question(text)


def test_done_report():
    assert text_reports_done("some text\nDONE: ok\n")
    assert text_reports_done("● DONE: failed")
    assert not text_reports_done("I am not DONE yet")
    assert not text_reports_done("DONE:")


def test_a_session_moved_to_a_transcript_that_cannot_be_found_stops_as_blocked_transcript_moved():
    """The CLI names a new session whose transcript never appears: the harness cannot see what the session does, so
    the trial stops BLOCKED with stop reason transcript_moved (never "lost", never a guess at the STALL table)."""
    from types import SimpleNamespace

    from live_trial.trial.facts import Facts
    from live_trial.trial.loop import poll_until_terminal

    logged = []
    result = SimpleNamespace(exit="STALL", reason="transcript_moved: the CLI continues as session x", status=None,
                             capture_tail=["tail"], moves=[], warnings=[])
    trial = SimpleNamespace(server=None, policy=SimpleNamespace(stall_limit_s=5), state=trial_state(),
                            poll_once=lambda limit: result, facts=Facts(),
                            journal=SimpleNamespace(log=lambda *a, **k: logged.append((a, k))))
    poll_until_terminal(trial)
    assert (trial.facts.blocked, trial.facts.stop_reason, trial.facts.stall_row) == (True, "transcript_moved", None)
    assert logged[0][0] == ("poll", "transcript_moved")
