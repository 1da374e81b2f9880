"""The poll loop's STALL branch for a turn the CLI ended on an API error (live_trial.trial.loop; README "Whose failure it is"): the
model's service failing is BLOCKED with its cause, a request the session made that was refused stays the session's
``api_error``."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from live_trial.transcript.status import Status
from live_trial.trial.facts import Facts
from live_trial.trial.loop import poll_until_terminal
from tests.unit.fakes import trial_state


def _trial(tmp_path: Path, status: Status, reason: str, model: str | None = None, capture: str = ""):
    logged: list = []
    result = SimpleNamespace(exit="STALL", reason=reason, status=status, capture_tail=["● API Error: …"], moves=[],
                             warnings=[])
    backend = SimpleNamespace(has_session=lambda s: True, capture=lambda s: capture, pane_alive=lambda s: True,
                              socket="live-trial")
    trial = SimpleNamespace(server=None, policy=SimpleNamespace(stall_limit_s=600, nudge_max=2), state=trial_state(),
                            poll_once=lambda limit: result, facts=Facts(), backend=backend,
                            wd=SimpleNamespace(marker=tmp_path / "out" / "status.json"),
                            req=SimpleNamespace(model=model), environment_cause=lambda: None,
                            journal=SimpleNamespace(log=lambda *a, **k: logged.append((a, k)),
                                                    save=lambda **k: None))
    return trial, logged


def _ended(cause: str, status: int | None, text: str) -> Status:
    return Status("IDLE_TURN_COMPLETE", "test", api_error=status, ended_by="api_error", session_status="idle",
                  api_error_cause=cause, api_error_text=text)


@pytest.mark.parametrize("cause,status,text", [
    ("model_unavailable", 529, "API Error: 529 Overloaded. This is a server-side issue, usually temporary"),
    ("usage_limit", 429, "You've hit your limit · resets 3pm (UTC)"),
    ("model_auth", 401, "Invalid API key · Fix external API key"),
])
def test_the_model_services_failure_is_blocked_with_its_cause_and_the_clis_line(tmp_path, cause, status, text):
    trial, logged = _trial(tmp_path, _ended(cause, status, text), f"api_error: the CLI gave up ({cause}: {status})")
    poll_until_terminal(trial)
    assert (trial.facts.blocked, trial.facts.stop_reason, trial.facts.stall_row) == (True, cause, None)
    assert any(text in note for note in trial.facts.notes), trial.facts.notes
    assert logged[-1][0] == ("poll", cause) and logged[-1][1]["api_error"] == status


def test_an_unknown_model_is_named_in_the_notes_and_the_log(tmp_path):
    text = "There's an issue with the selected model (claude-nonexistent-9). It may not exist"
    trial, logged = _trial(tmp_path, _ended("model_unknown", 404, text), "api_error: …", model="claude-nonexistent-9")
    poll_until_terminal(trial)
    assert trial.facts.stop_reason == "model_unknown" and trial.facts.blocked
    assert "the model asked for: claude-nonexistent-9" in trial.facts.notes[-1]
    assert logged[-1][1]["model"] == "claude-nonexistent-9"
    json.dumps(logged[-1][1])                       # trial-log.jsonl can hold it


def test_a_request_the_session_made_that_was_refused_stays_the_sessions_api_error(tmp_path):
    trial, _logged = _trial(tmp_path, _ended("api_error", 400, "Prompt is too long"),
                            "no progress for 600s (stall_limit_s 600)")
    poll_until_terminal(trial)
    assert (trial.facts.blocked, trial.facts.stop_reason, trial.facts.stall_row) == (False, "api_error", 6)


@pytest.mark.parametrize("line,cause,blocked", [
    ("Claude usage limit reached. Your limit will reset at 5pm (UTC).", "usage_limit", True),
    ("Invalid API key · Please run /login", "model_auth", True),
    ("API Error: 400 The request was malformed", "error_screen", False),
])
def test_an_error_screen_with_no_record_is_the_services_when_its_words_say_so(tmp_path, line, cause, blocked):
    """A usage-limit or refused-key screen the CLI drew with no API error record: the environment (BLOCKED), as
    its record would be (README "Whose failure it is"); any other error line stays the session's."""
    idle = Status("IDLE_TURN_COMPLETE", "test", ended_by="turn_duration", session_status="idle")
    trial, _logged = _trial(tmp_path, idle, "no progress for 600s (stall_limit_s 600)",
                            capture=f"● Working\n  ⎿  {line}\n\n> \n")
    poll_until_terminal(trial)
    assert (trial.facts.stop_reason, bool(trial.facts.blocked)) == (cause, blocked), trial.facts.notes
    assert any(line[:40] in note for note in trial.facts.notes), trial.facts.notes


def test_an_answer_given_ahead_that_is_no_option_is_the_persons_input_blocked_and_nothing_is_pressed(tmp_path):
    """README "Questions (gates)": ``--gate-response Purple`` where the question offers Red, Green and Blue. The skill
    asked as it should: BLOCKED gate_answer_not_an_option, naming the question, the options and the answer."""
    from live_trial.trial.finish import unused_answers_warning

    screen = (Path(__file__).resolve().parents[1] / "screens" / "ask_user_question_332.txt").read_text()
    gate = Status("GATE", "test", question="Which colour?", options=["Red", "Green", "Blue"])
    trial, logged = _trial(tmp_path, gate, "", capture=screen)
    pressed: list = []
    trial.backend.send_keys = lambda *keys, **kw: pressed.append(keys)
    trial.poll_once = lambda limit: SimpleNamespace(exit="GATE", reason="", status=gate, question="Which colour?",
                                                    capture_tail=[], moves=[], warnings=[])
    trial.state = trial_state(gate_responses=["Purple"])
    trial.req = SimpleNamespace(model=None, gate_kind="rescue")
    trial.sleep = lambda s: None
    poll_until_terminal(trial)
    assert (trial.facts.blocked, trial.facts.stop_reason) == (True, "gate_answer_not_an_option")
    assert pressed == [] and trial.state.gate_response_count == 0
    [note] = trial.facts.notes
    assert '"Purple"' in note and '"Which colour?"' in note and '"Red", "Green", "Blue"' in note, note
    assert logged[-1][1]["not_an_option"] == "Purple" and logged[-1][1]["options"] == ["Red", "Green", "Blue"]
    # the skill asked its one question: "fewer questions than expected" would be false
    assert unused_answers_warning(1, 0, reached_end=trial.facts.poll_exit == "DONE" and not trial.facts.blocked) is None
    assert unused_answers_warning(2, 1, reached_end=True) is not None       # a run that ended asking one of two
