"""What a trial the model's service or the evaluator stopped says in plain words (live_trial.notices.outcome;
README "Whose failure it is"): not the skill's fault, the goal not judged, and the step that fits the cause."""
from __future__ import annotations

import json

import pytest

from live_trial.notices import outcome as oc


def _doc(stop_reason: str, poll_exit: str = "STALL", goal: str | None = None) -> dict:
    return {"overall": {"verdict": "BLOCKED"}, "target": "hello:greet", "stop_reason": stop_reason,
            "poll_exit": poll_exit, "goal_result": goal}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_an_evaluator_with_no_valid_answer_says_the_goal_was_not_judged(lang):
    text = oc.summary(_doc("evaluator_failed", poll_exit="DONE"), lang)
    if lang == "en":
        assert "got to the end" in text and "was not judged" in text and "not the skill's fault" in text
        assert "not there" not in text and "could not be tried to the end" not in text
    else:
        assert "確かめられていません" in text and "スキルのせいではありません" in text and "出ていませんでした" not in text


@pytest.mark.parametrize("code,key", [("model_unavailable", "later"), ("usage_limit", "usage_limit"),
                                      ("model_auth", "login"), ("model_unknown", "model")])
def test_the_model_services_causes_keep_their_own_next_step_under_blocked(code, key):
    assert oc.next_step(_doc(code)).key == key
    for lang in ("en", "ja"):
        assert oc.next_step_sentence(oc.next_step(_doc(code)), lang) != oc.next_step_sentence(oc.Step("retry"), lang)


def test_an_unknown_model_is_named_in_the_next_step_from_the_trial_log(tmp_path):
    (tmp_path / "trial-log.jsonl").write_text(json.dumps({"step": "poll", "decision": "model_unknown",
                                                          "model": "claude-nonexistent-9"}) + "\n")
    seen = oc.seen_in_workdir(tmp_path)
    step = oc.next_step(_doc("model_unknown"), seen)
    assert step.params == {"model": "claude-nonexistent-9"}
    assert "claude-nonexistent-9" in oc.next_step_sentence(step, "en")
    assert "claude-nonexistent-9" in oc.compose(_doc("model_unknown"), "en", workdir=tmp_path).next
    assert "\"{model}\"" not in oc.next_step_sentence(oc.next_step(_doc("model_unknown")), "en")   # no name: plain


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_an_answer_that_is_no_option_is_not_the_skills_fault_and_the_next_step_names_the_options(tmp_path, lang):
    """README "Questions (gates)": the message says the skill asked as it should, and what to give instead, with the
    question, its options and the answer given, read from the trial's own log; never "retry" nor "fix the skill"."""
    from live_trial.notices.notify import forbidden_tokens
    from live_trial.report.trials import CLI_STEPS

    (tmp_path / "trial-log.jsonl").write_text(json.dumps({
        "step": "poll", "decision": "GATE", "question": "Which colour?", "options": ["Red", "Blue"],
        "not_an_option": "Purple"}) + "\n")
    doc = _doc("gate_answer_not_an_option", poll_exit="GATE")
    message = oc.compose(doc, lang, workdir=tmp_path)
    for word in ("Which colour?", '"Red", "Blue"', "Purple"):
        assert word in message.next, message.next
    assert forbidden_tokens(message.next, lang, message.allowed) == []
    summary = oc.summary(doc, lang)
    assert ("not the skill's fault" in summary) if lang == "en" else ("スキルのせいではありません" in summary), summary
    step = oc.next_step(doc, oc.seen_in_workdir(tmp_path))
    assert step.key == "gate_option" and "Purple" in CLI_STEPS[step.key].format(**step.params)


def test_a_stand_in_that_failed_to_start_is_mended_by_its_giver_never_just_retried(tmp_path):
    """README "Whose failure it is": mcp_fixture_failed is BLOCKED, and its next step is the stand-in's own (start its
    command by hand, fix it), not the general "remove the cause, run again"."""
    from live_trial.report.trials import CLI_STEPS

    doc = _doc("mcp_fixture_failed")
    step = oc.next_step(doc)
    assert step.key == "mcp_fixture" and "stand-in's command by hand" in CLI_STEPS[step.key]
    assert "stand-in" in oc.compose(doc, "en", workdir=tmp_path).next
