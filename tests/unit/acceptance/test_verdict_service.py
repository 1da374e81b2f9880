"""``verdict`` by hand on a trial the model's service stopped derives the stop ``run`` derives (README "Whose failure
it is"): BLOCKED with the cause (model_unavailable, model_auth, model_unknown, usage_limit) read from the poll's record
and the transcript's API error record (or, at STALL row 6, the error line of the last screen), the CLI's own line in
the notes, never a FAIL of the skill."""
from __future__ import annotations

import pytest

from live_trial.stop_reasons import StopReason, blocked_reason, service_note
from live_trial.transcript.builder import TranscriptBuilder
from tests.unit.acceptance.test_verdict_cmd import MODEL, run, tree, written
from tests.unit.acceptance.test_verdict_earned import TARGET, by_hand, refused
from tests.unit.fakes import skill_call, write_poll_state

__all__ = ["tree"]       # the fixture, used by name

OVERLOADED = "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment."
GAVE_UP = "api_error: the CLI gave up on the model's service (model_unavailable: 529)"


def ended_in(tree: dict, status: int | None, kind: str, text: str, *, poll_reason: str = GAVE_UP) -> None:
    """A session that called the skill, then every request failed: the CLI's API error record ends its turn, and
    poll's last call ended STALL with ``poll_reason``."""
    b = TranscriptBuilder(model=MODEL)
    b.prompt("run")
    skill_call(b, TARGET)
    b.api_error(status, kind, text)
    b.turn_duration()
    b.write(tree["wd"] / "transcript.jsonl")
    write_poll_state(tree["wd"], "TICK_BUDGET", "STALL", reason=poll_reason)


@pytest.mark.parametrize("status, kind, text, code", [
    (529, "server_error", OVERLOADED, "model_unavailable"),
    (401, "authentication_failed", "Invalid API key · Fix external API key", "model_auth"),
    (429, "rate_limit", "You've hit your limit · resets 3pm (UTC)", "usage_limit"),
])
def test_an_outage_after_the_skill_call_is_blocked_with_its_cause(tree, capsys, status, kind, text, code) -> None:
    ended_in(tree, status, kind, text)
    rc, _, err = run(by_hand(tree), capsys)
    assert rc == 0, err
    doc = written(tree)
    assert (doc["overall"]["verdict"], doc["stop_reason"], doc["blocked"], doc["launch"]) == (
        "BLOCKED", code, True, "PASS")
    assert doc["overall"]["reasons"][0] == blocked_reason(code)
    assert service_note(StopReason(code), text) in doc["notes"], doc["notes"]      # the note run writes
    assert doc["goal_result"] is None and "summary" in doc


def test_the_stall_row_the_old_table_gave_does_not_turn_an_outage_into_the_skills_failure(tree, capsys) -> None:
    ended_in(tree, 529, "server_error", OVERLOADED)
    assert run(by_hand(tree, "--stall-row", "6"), capsys)[0] == 0
    assert (written(tree)["overall"]["verdict"], written(tree)["stop_reason"]) == ("BLOCKED", "model_unavailable")


def test_an_unknown_model_names_the_model_asked_for(tree, capsys) -> None:
    text = ("There's an issue with the selected model (claude-nonexistent-9). It may not exist or you may not have "
            "access to it. Run /model to pick a different model.")
    ended_in(tree, 404, "model_not_found", text)
    assert run(by_hand(tree, "--requested-model", "claude-nonexistent-9"), capsys)[0] == 0
    doc = written(tree)
    assert (doc["overall"]["verdict"], doc["stop_reason"]) == ("BLOCKED", "model_unknown")
    assert any("(the model asked for: claude-nonexistent-9)" in n for n in doc["notes"]), doc["notes"]


def test_an_invalid_request_the_session_made_stays_the_sessions_error(tree, capsys) -> None:
    ended_in(tree, 400, "invalid_request", "Prompt is too long", poll_reason="no progress for 300s (stall_limit_s 300)")
    assert run(by_hand(tree, "--stall-row", "6"), capsys)[0] == 0
    doc = written(tree)
    assert (doc["overall"]["verdict"], doc["blocked"]) == ("FAIL", False)


def test_a_session_gone_is_not_read_as_an_outage(tree, capsys) -> None:
    ended_in(tree, 529, "server_error", OVERLOADED, poll_reason="session_gone")
    assert run(by_hand(tree, "--stall-row", "1"), capsys)[0] == 0
    assert (written(tree)["overall"]["verdict"], written(tree)["blocked"]) == ("FAIL", False)


def test_a_usage_limit_only_on_the_screen_is_blocked_at_row_6(tree, capsys) -> None:
    """The CLI drew the account's limit with no API error record (README "Whose failure it is", row 6): the last
    screen collect kept is read as ``run`` reads the live one."""
    b = TranscriptBuilder(model=MODEL)
    b.prompt("run")
    skill_call(b, TARGET)
    b.write(tree["wd"] / "transcript.jsonl")
    write_poll_state(tree["wd"], "STALL", reason="no progress for 300s (stall_limit_s 300)")
    line = "Claude usage limit reached. Your limit will reset at 5pm."
    (tree["wd"] / "pane.txt").write_text("╭───╮\n│ > run │\n╰───╯\n" * 100 + f"  ⎿  {line}\n> \n")
    assert run(by_hand(tree), capsys)[0] == 0
    assert written(tree)["blocked"] is False            # no row decided: nothing was read from the screen
    (tree["wd"] / "verdict.json").unlink()
    assert run(by_hand(tree, "--stall-row", "6"), capsys)[0] == 0
    doc = written(tree)
    assert (doc["overall"]["verdict"], doc["stop_reason"]) == ("BLOCKED", "usage_limit")
    assert service_note(StopReason.USAGE_LIMIT, line, on_screen=True) in doc["notes"], doc["notes"]


def test_a_stop_reason_the_records_contradict_is_refused(tree, capsys) -> None:
    ended_in(tree, 529, "server_error", OVERLOADED)
    err = refused(tree, capsys, by_hand(tree, "--stop-reason", "api_error"), "contradicts_records")
    assert "model_unavailable" in err and "leave out --stop-reason" in err



def test_a_first_request_refused_before_the_model_answered_is_blocked_as_run_decides_it(tree, capsys) -> None:
    """The model never answered the task (its only record is the API error): the skill was never reached, so the
    verdict by hand is BLOCKED model_never_answered with the note run writes, never the session's api_error."""
    text = "API Error: 400 adaptive thinking is not supported on this model"
    b = TranscriptBuilder(model=MODEL)
    b.prompt("run")
    b.api_error(400, "invalid_request", text)
    b.turn_duration()
    b.write(tree["wd"] / "transcript.jsonl")
    write_poll_state(tree["wd"], "TICK_BUDGET", "STALL", reason="no progress for 300s (stall_limit_s 300)")
    assert run(by_hand(tree, "--stall-row", "6"), capsys)[0] == 0
    doc = written(tree)
    assert (doc["overall"]["verdict"], doc["stop_reason"], doc["blocked"]) == ("BLOCKED", "model_never_answered", True)
    assert service_note(StopReason.MODEL_NEVER_ANSWERED, text) in doc["notes"], doc["notes"]


@pytest.mark.parametrize("text", [
    'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 212000 '
    'tokens > 200000 maximum"}}',
    "API Error: 413 Request Entity Too Large"])
def test_a_first_request_refused_for_its_size_stays_the_sessions_error(tree, capsys, text) -> None:
    """A first request refused for its size is the CLI's prompt with what the loaded plugins add (their skill listing,
    their MCP tools): no outage of the service, so not model_never_answered (which would tell the person the skill
    needs no fixing), but the session's own api_error."""
    from live_trial.transcript.api_errors import refused_for_size

    assert refused_for_size(text) and not refused_for_size("API Error: 400 adaptive thinking is not supported")
    b = TranscriptBuilder(model=MODEL)
    b.prompt("run")
    b.api_error(400, "invalid_request", text)
    b.turn_duration()
    b.write(tree["wd"] / "transcript.jsonl")
    write_poll_state(tree["wd"], "TICK_BUDGET", "STALL", reason="api_error: the turn ended on an API error the CLI "
                     "does not retry (400) and nothing is left to wake the session")
    assert run(by_hand(tree, "--stall-row", "6"), capsys)[0] == 0
    doc = written(tree)
    assert (doc["overall"]["verdict"], doc["blocked"]) == ("FAIL", False), doc["overall"]
    assert doc["stop_reason"] != "model_never_answered"


def test_an_evaluators_findings_on_a_blocked_trial_are_kept_but_are_no_reason(tree, capsys) -> None:
    """The evaluator judged a trial the model's service stopped and found the result missing: its findings judge the
    skill on what it never got to do, so the BLOCKED verdict keeps them (goal_result, goal_blockers) and its reasons,
    which say why it is not the skill's failure, leave them out (README "Whose failure it is")."""
    import json

    from tests.unit.fakes import write_evaluation

    ended_in(tree, 529, "server_error", OVERLOADED)
    doc = write_evaluation(tree["wd"], "FAIL", blockers=["no greeting file was written"])
    (tree["wd"] / "evaluation.json").write_text(json.dumps(doc))
    assert run(by_hand(tree), capsys)[0] == 0
    verdict = written(tree)
    assert (verdict["overall"]["verdict"], verdict["stop_reason"]) == ("BLOCKED", "model_unavailable")
    assert not any("no greeting file" in r for r in verdict["overall"]["reasons"]), verdict["overall"]["reasons"]
