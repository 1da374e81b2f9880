"""Whose failure an API error record is (live_trial.transcript.api_errors; README "Whose failure it is"), and the classifier's
``api_error_cause`` on the record shapes seen on 2.1.197 and 2.1.332 (references/transcript-jsonl.md "API errors")."""
from __future__ import annotations

import pytest

from live_trial.stop_reasons import StopReason, Whose
from live_trial.transcript import api_errors as ae
from live_trial.transcript.status import IDLE_TURN_COMPLETE, classify

# (status, the CLI's error class, the line it wrote) -> cause; the lines are the ones seen on the real CLI or read in
# its binary (references/transcript-jsonl.md "API errors").
SEEN = [
    (529, "server_error", "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a "
                          "moment.", ae.MODEL_UNAVAILABLE),
    (500, "server_error", "API Error: 500 rehearsal error 500. This is a server-side issue", ae.MODEL_UNAVAILABLE),
    (503, None, "API Error: 503 upstream unavailable", ae.MODEL_UNAVAILABLE),
    (429, "rate_limit", "API Error: Request rejected (429) · rehearsal error 429", ae.MODEL_UNAVAILABLE),
    (429, "rate_limit", "API Error: Server is temporarily limiting requests (not your usage limit) · this may be a "
                        "temporary capacity issue.", ae.MODEL_UNAVAILABLE),
    (None, "server_error", "API Error: Connection to the API was lost (ECONNRESET). This is usually temporary",
     ae.MODEL_UNAVAILABLE),
    (None, "unknown", "API Error: Connection error.", ae.MODEL_UNAVAILABLE),
    (None, "server_error", "API Error: Request timed out.", ae.MODEL_UNAVAILABLE),
    (429, "rate_limit", "You've hit your limit · resets 3pm (UTC)", ae.USAGE_LIMIT),
    (429, "rate_limit", "Claude usage limit reached. Your limit will reset at 5pm.", ae.USAGE_LIMIT),
    (400, "billing_error", "Credit balance is too low", ae.USAGE_LIMIT),
    (401, "authentication_failed", "Invalid API key · Fix external API key", ae.MODEL_AUTH),
    (403, None, "API Error: 403 permission_error", ae.MODEL_AUTH),
    (None, "unknown", "Not logged in · Please run /login", ae.MODEL_AUTH),
    (401, None, "API Error: 401 OAuth token has expired", ae.MODEL_AUTH),
    (404, "model_not_found", "There's an issue with the selected model (claude-nonexistent-9). It may not exist or "
                             "you may not have access to it. Run /model to pick a different model.", ae.MODEL_UNKNOWN),
    (404, None, "API Error: 404 model: claude-x not found", ae.MODEL_UNKNOWN),
    (400, "invalid_request", "Prompt is too long", ae.API_ERROR),
    (400, "invalid_request", "API Error: 400 messages.0.content: must not be empty", ae.API_ERROR),
    (413, None, "API Error: 413 request_too_large", ae.API_ERROR),
    (None, "max_output_tokens", "API Error: Claude's response exceeded the output token maximum", ae.API_ERROR),
]


@pytest.mark.parametrize("status,kind,text,cause", SEEN, ids=[f"{s}-{k}-{c}" for s, k, _t, c in SEEN])
def test_each_error_the_cli_gives_up_on_has_its_cause(status, kind, text, cause):
    assert ae.api_error_cause(status, kind, text) == cause


def test_the_causes_are_rows_the_environment_owns_but_the_sessions_own_request():
    for code in ae.CAUSES:
        row = StopReason.of(code)
        assert row is not None, code
        assert row.whose == (Whose.SKILL if code == ae.API_ERROR else Whose.ENVIRONMENT), code
    assert StopReason.API_ERROR.verdict == "FAIL" and StopReason.MODEL_UNAVAILABLE.verdict == "BLOCKED"


def test_junk_in_the_record_never_raises():
    assert ae.api_error_cause("529", ["x"], None) == ae.API_ERROR       # type: ignore[arg-type]
    assert ae.api_error_cause(True, None, "") == ae.API_ERROR
    assert ae.record_cause({"type": "assistant"}, "API Error: 529") is None


def test_an_unknown_model_is_named_by_the_request_or_the_clis_line():
    line = "There's an issue with the selected model (claude-nonexistent-9). It may not exist"
    assert ae.model_named(line) == "claude-nonexistent-9"
    assert ae.model_named(line, "claude-typo") == "claude-typo"
    assert ae.model_named("API Error: 404") is None


def _after_skill(b):
    b.prompt()
    b.tool_result(b.tool_use("Skill", {"skill": "trialkit:mark"}), "Launching skill: trialkit:mark")


def test_2_1_332_the_error_record_alone_ends_the_turn_with_its_cause(transcript_builder):
    b = transcript_builder()
    _after_skill(b)
    b.api_error(529, "server_error", "API Error: 529 Overloaded. This is a server-side issue")
    st = classify(b.records)
    assert (st.state, st.ended_by, st.api_error, st.api_error_cause) == (IDLE_TURN_COMPLETE, "api_error", 529,
                                                                         "model_unavailable")
    assert st.api_error_text.startswith("API Error: 529 Overloaded")
    assert st.to_dict()["api_error_cause"] == "model_unavailable"


def test_2_1_197_the_turn_duration_after_the_error_keeps_its_cause(transcript_builder):
    b = transcript_builder()
    _after_skill(b)
    b.api_error(401, "authentication_failed", "Invalid API key · Fix external API key")
    b.turn_duration()
    st = classify(b.records)
    assert (st.state, st.ended_by, st.api_error_cause) == (IDLE_TURN_COMPLETE, "turn_duration", "model_auth")


def test_a_turn_that_went_on_after_an_error_has_no_cause(transcript_builder):
    b = transcript_builder()
    _after_skill(b)
    b.api_error(529, "server_error", "API Error: 529 Overloaded")
    b.prompt("go on")
    b.text("DONE: ok")
    b.turn_duration()
    st = classify(b.records)
    assert st.state == IDLE_TURN_COMPLETE and st.api_error_cause is None and st.api_error_text is None


def test_no_error_no_cause(transcript_builder):
    b = transcript_builder()
    b.turn()
    st = classify(b.records)
    assert st.api_error_cause is None and st.api_error is None
