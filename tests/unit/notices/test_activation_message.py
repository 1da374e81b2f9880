"""What a person is told about an activation case (README "Does it start by itself?"): one sentence per verdict in
Japanese and English, plain counts of requests and tries, the sibling chosen instead by name, never a code, a path or
the word the harness uses; one message whose kind follows the verdict, a rehearsal saying its model was a script."""
from __future__ import annotations

import json

import pytest

from live_trial.notices.activation_message import activation_message, activation_summary, notify_activation
from live_trial.notices.notify import forbidden_tokens


def doc(verdict: str, **kw) -> dict:
    right = {"n": 1, "prompt": "p", "should_trigger": True, "samples": 2, "triggered": 2, "status": "right",
             "runs": [{"outcome": "triggered", "ended": "turn_end", "others": []}] * 2}
    other = {"n": 2, "prompt": "q", "should_trigger": False, "samples": 2, "triggered": 0, "status": "right",
             "runs": [{"outcome": "not_triggered", "ended": "turn_end", "others": []}] * 2}
    base = {"target": "hello:greet", "plugin": "hello", "skill": "greet", "case": "natural", "verdict": verdict,
            "prompts": [right, other], "confusion": {"true_positive": 2, "false_positive": 0},
            "blocked_retries": {"used": 0, "max": 2}, "scenario_origin": "live", "activation_run_id": "r"}
    return {**base, **kw}


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("verdict", ["PASS", "FAIL", "FLAKY", "BLOCKED"])
def test_every_verdict_has_a_plain_sentence_in_both_languages(lang, verdict):
    text = activation_summary(doc(verdict), lang)
    assert text and "{" not in text
    kind, objective, detail, next_step, allowed = activation_message(doc(verdict), lang)
    assert kind == {"PASS": "done", "FLAKY": "flaky"}.get(verdict, "not_working")
    assert (next_step == "") == (verdict == "PASS")
    assert forbidden_tokens(detail + next_step, lang, allowed) == []


def test_the_english_sentences_say_the_counts():
    assert activation_summary(doc("PASS"), "en") == (
        'greet (a skill of hello), in its case "natural" started by itself for every request that should start it, '
        "and for none that should not (4 tries of 2 requests)")
    wrong = doc("FAIL")
    wrong["prompts"][1] = {**wrong["prompts"][1], "status": "wrong", "triggered": 2}
    assert "did not start as it should for 1 of its 2 requests" in activation_summary(wrong, "en")


def test_a_skill_that_was_not_loaded_says_so():
    gone = doc("FAIL")
    gone["prompts"][0]["runs"] = [{"outcome": "not_triggered", "ended": "not_loaded", "others": []}]
    assert "the session did not load it" in activation_summary(gone, "en")
    assert activation_message(gone, "en")[3].startswith("Make sure the session can load the skill")


def test_the_sibling_chosen_instead_is_named_in_the_message():
    chose = doc("FAIL")
    chose["prompts"][0]["runs"] = [{"outcome": "not_triggered", "ended": "turn_end", "others": ["hello:greet-style"]}]
    _, _, detail, _, allowed = activation_message(chose, "en")
    assert "chosen instead: hello:greet-style" in detail and forbidden_tokens(detail, "en", allowed) == []


def test_one_message_a_rehearsal_saying_its_model_was_a_script(tmp_path):
    record = notify_activation(tmp_path, doc("PASS", scenario_origin="rehearsal"), "en", env={})
    assert record["kind"] == "done" and record["check"]["removed"] == []
    assert "script" in record["text"] and record["refs"]["case"] == "natural"
    lines = (tmp_path / "notifications.jsonl").read_text().splitlines()
    assert [json.loads(x)["refs"]["overall"] for x in lines] == ["PASS"]
