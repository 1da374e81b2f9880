"""The model's service is the environment, an evaluator with no valid answer judged nothing, and a rehearsal's
scenario that answers no request is the harness's input (README "Whose failure it is"). Real claude in real tmux, the
model played by rehearsal scenarios that answer every request after the Skill call with an HTTP error, or none;
each test starts ``python -m live_trial run`` as a person would.

The CLI's own retries are cut to one (``CLAUDE_CODE_MAX_RETRIES=1``: references/transcript-jsonl.md "API errors";
with its defaults it gives up after about 3 minutes), and the STALL limit is set far above each test's own timeout:
the verdict must come as soon as the CLI gives up, never a STALL limit later.
"""
from __future__ import annotations

import time

import pytest
import yaml

from tests.e2e.run_support import PLUGINS, SCENARIOS, final_json, no_leftovers, run_cmd, verdict_doc, workdirs

pytestmark = pytest.mark.e2e

#: The STALL limit (600 s) is far above the test's timeout, and the hard cap (40 s) ends a trial that waits for it:
#: such a trial is BLOCKED hard_cap after 40 s, which fails the test.
LIMITS = ["--stall-limit", "600", "--hard-cap", "40"]
ONE_RETRY = {"CLAUDE_CODE_MAX_RETRIES": "1"}


def _run(tmp_path, scenario: str) -> tuple[dict, dict, float]:
    start = time.monotonic()
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal", str(SCENARIOS / scenario),
                   "--lang", "en", *LIMITS, env=ONE_RETRY, timeout=90)
    took = time.monotonic() - start
    result = final_json(proc)
    assert proc.returncode == 3, (result, proc.stderr[-3000:])
    return result, verdict_doc(result), took


@pytest.mark.budget(8)
def test_529_for_every_request_after_the_skill_call_is_blocked_model_unavailable_well_before_the_stall_limit(tmp_path):
    result, doc, took = _run(tmp_path, "mark-overloaded.yaml")
    assert (result["stop_reason"], doc["overall"]["verdict"]) == ("model_unavailable", "BLOCKED"), doc["notes"]
    assert took < 30, took                                      # as soon as the CLI gave up: no STALL, no hard cap
    assert doc["launch"] == "PASS" and doc["goal_result"] is None         # the skill ran; nothing was judged
    assert any("529" in n and "Overloaded" in n for n in doc["notes"]), doc["notes"]       # the CLI's own line
    assert "not the skill's fault" in result["summary"] and "not available" in result["summary"]
    assert "wait a while until the AI's service is available again" in result["notification"]
    no_leftovers(workdirs(tmp_path)[0])


@pytest.mark.budget(8)
def test_a_401_after_the_skill_call_is_blocked_model_auth(tmp_path):
    result, doc, took = _run(tmp_path, "mark-bad-key.yaml")
    assert (result["stop_reason"], doc["overall"]["verdict"]) == ("model_auth", "BLOCKED"), doc["notes"]
    assert took < 30, took
    assert any("Invalid API key" in n for n in doc["notes"]), doc["notes"]
    assert "sign in again or check the key" in result["notification"]


@pytest.mark.budget(10)
def test_an_evaluator_that_never_gives_a_valid_answer_is_blocked_and_the_goal_is_not_judged(tmp_path):
    """Every StructuredOutput call of the scripted evaluator breaks the answer schema: the CLI's ``claude -p`` gives
    up (``error_max_structured_output_retries``) on both attempts. Never DEGRADED "did not achieve its goal"."""
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                   str(SCENARIOS / "mark-judge-invalid.yaml"), "--lang", "en", "--stall-limit", "4", "--hard-cap", "90")
    result = final_json(proc)
    assert proc.returncode == 3, (result, proc.stderr[-3000:])
    doc = verdict_doc(result)
    assert (result["stop_reason"], doc["overall"]["verdict"], doc["goal_result"]) == ("evaluator_failed", "BLOCKED",
                                                                                      None)
    assert (doc["launch"], doc["completion"]) == ("PASS", "PASS")
    assert any("error_max_structured_output_retries" in n for n in doc["notes"]), doc["notes"]
    summary = result["summary"]
    assert "got to the end" in summary and "was not judged" in summary, summary
    assert "not there" not in summary and "not the skill's fault" in summary, summary


@pytest.mark.budget(8)
def test_an_unknown_model_is_blocked_model_unknown_naming_it(tmp_path):
    """The first request already fails (404, not retried): no Skill call ran, yet the verdict blames the model asked
    for, not the skill's launch."""
    start = time.monotonic()
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                   str(SCENARIOS / "mark-unknown-model.yaml"), "--model", "claude-nonexistent-9", "--lang", "en",
                   *LIMITS, timeout=90)
    took = time.monotonic() - start
    result = final_json(proc)
    assert proc.returncode == 3, (result, proc.stderr[-3000:])
    doc = verdict_doc(result)
    assert (result["stop_reason"], doc["overall"]["verdict"]) == ("model_unknown", "BLOCKED"), doc["notes"]
    assert took < 30, took
    assert any("claude-nonexistent-9" in n for n in doc["notes"]), doc["notes"]
    assert 'the AI model "claude-nonexistent-9"' in result["notification"]


@pytest.mark.budget(25)
def test_while_the_cli_retries_an_overloaded_service_the_trial_is_not_stalled(tmp_path):
    """Five 529s, then answers: the CLI's retries take about 15-19 s, with its retry line on screen and nothing
    written to the transcript; with a STALL limit of 3 s the trial still waits for them (the retry line is progress)
    and ends PASS. (On 2.1.197 the masked retry screen used to stall: a hang after twice the limit.)"""
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                   str(SCENARIOS / "mark-overloaded-then-ok.yaml"), "--lang", "en", "--stall-limit", "3",
                   "--hard-cap", "90", timeout=120)
    result = final_json(proc)
    assert proc.returncode == 0, (result, proc.stderr[-3000:])
    doc = verdict_doc(result)
    assert (doc["overall"]["verdict"], doc["goal_result"], doc["stall_row"]) == ("PASS", "PASS", None), doc["notes"]


@pytest.mark.budget(12)
def test_a_request_no_rule_of_the_scenario_answers_is_blocked_never_a_fail_of_the_skill(tmp_path):
    """A scenario whose only rule is for a later turn: the trial stops BLOCKED scenario_unmatched at once (never the
    skill's FAIL "launch failed", never after a STALL limit), naming the request; a scenario with no rule for the
    evaluator: BLOCKED, the goal not judged."""
    happy = yaml.safe_load((SCENARIOS / "mark-happy.yaml").read_text())
    late = [{"id": "late", "when": {"human_turn": 5}, "reply": {"content": [{"text": "DONE: ok"}]}}]
    for name, rules in (("late", late), ("unjudged", [r for r in happy["rules"] if r["id"] != "evaluator"])):
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump({"name": name, "rules": rules}))
    start = time.monotonic()
    proc = run_cmd(tmp_path / "late", "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                   str(tmp_path / "late.yaml"), "--lang", "en", *LIMITS, timeout=90)
    took = time.monotonic() - start
    result = final_json(proc)
    assert proc.returncode == 3, (result, proc.stderr[-3000:])
    doc = verdict_doc(result)
    assert (result["stop_reason"], doc["overall"]["verdict"], doc["goal_result"]) == ("scenario_unmatched",
                                                                                      "BLOCKED", None), doc
    assert any("no rule matches the session's request at human_turn 1, step 0 (its last prompt: \"# Live trial task"
               in n for n in doc["notes"]), doc["notes"]
    assert not any("launch failed" in r for r in doc["overall"]["reasons"]) and took < 30, (doc, took)
    assert "practice script" in result["notification"] and "not the skill's fault" in result["summary"]
    (wd,) = workdirs(tmp_path / "late")
    assert not (wd / "evaluation.json").exists()
    proc = run_cmd(tmp_path / "unjudged", "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                   str(tmp_path / "unjudged.yaml"), "--lang", "en", *LIMITS, timeout=90)
    result = final_json(proc)
    assert proc.returncode == 3, (result, proc.stderr[-3000:])
    doc = verdict_doc(result)
    assert (result["stop_reason"], doc["overall"]["verdict"], doc["goal_result"]) == ("scenario_unmatched",
                                                                                      "BLOCKED", None), doc
    assert (doc["launch"], doc["completion"]) == ("PASS", "PASS") and "was not judged" in result["summary"]
    assert any("no rule matches the evaluator's request at human_turn 1, step 0 (its last prompt:" in n
               for n in doc["notes"]), doc["notes"]
