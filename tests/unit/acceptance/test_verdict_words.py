"""A verdict's words state what happened in its trial (ARCHITECTURE invariant 8): a skill that ran to its end without
the question ``--expect-gate`` expected keeps its completion and fails for that question (README "Questions
(gates)"); a BLOCKED verdict names what stopped it and what the trial never reached, never a failure of the skill
(README "Whose failure it is"). Derived from a trial's record by the pure derivation, as ``run`` and ``verdict`` do."""
from __future__ import annotations

from live_trial.acceptance.derive import derive_verdict
from live_trial.acceptance.findings import EXPECTED_GATE_NOTE, recorded_findings
from live_trial.acceptance.overall import VerdictInputs, derive_overall, not_reached
from live_trial.notices.outcome import summariser
from live_trial.stop_reasons import StopReason, blocked_reason
from tests.unit.acceptance.test_verdict_cmd import tree
from tests.unit.acceptance.test_verdict_derive import WHEN, _facts, _recorded
from tests.unit.fakes import write_evaluation

__all__ = ["tree"]       # the fixture, used by name

UNKNOWN_MODEL = ("the model the trial asked for is unknown to the model's service: the CLI wrote \"There's an issue "
                 "with the selected model (claude-nonexistent-9).\" (the model asked for: claude-nonexistent-9)")
#: How a launch FAIL reads: words that blame the skill's start, never a reason of a BLOCKED verdict.
LAUNCH_FAILED = ("no successful Skill call", "launch failed", "did not complete on its own", "the skill never started")


def _derived(tree) -> dict:
    facts = _facts(tree)
    return derive_verdict(facts, recorded_findings(facts.origin.state), summarise=summariser("en"),
                          clock=lambda: WHEN).to_doc()


def test_a_skill_that_ran_to_its_end_without_the_expected_question_keeps_its_completion_and_fails(tree) -> None:
    _recorded(tree["wd"], tree["plugins"], goal=None, evidence=[], stop_reason="expected_gate_not_shown",
              notes=[EXPECTED_GATE_NOTE])
    doc = _derived(tree)
    assert (doc["launch"], doc["completion"], doc["poll_exit"]) == ("PASS", "PASS", "DONE")       # what happened
    assert doc["overall"]["verdict"] == "FAIL" and doc["stop_reason"] == "expected_gate_not_shown"
    reasons = doc["overall"]["reasons"]
    assert reasons[0] == "expected gate was not shown: it should have stopped at its question but never asked", reasons
    assert not any("did not complete" in r for r in reasons), reasons
    assert len([r for r in reasons if r.startswith("expected gate was not shown")]) == 1, reasons
    assert "got to the end" in doc["summary"] and "never asked" in doc["summary"], doc["summary"]
    # plan re-derives the overall from the verdict's own inputs: the same FAIL, never "edited"
    assert derive_overall(VerdictInputs.from_doc(doc)) == "FAIL"


def test_a_blocked_trial_that_never_reached_the_skill_says_so_and_never_blames_its_launch(tree) -> None:
    """model_unknown before the Skill call: the reasons name the cause and that the skill was never reached; a note of
    an older record that says the transcript shows no Skill call is no reason of a BLOCKED verdict."""
    _recorded(tree["wd"], tree["plugins"], launch="FAIL", completion="FAIL", goal=None, evidence=[],
              poll_exit="STALL", stop_reason="model_unknown", blocked=True,
              notes=[UNKNOWN_MODEL, "the transcript shows no successful Skill call to union-target:work (Skill calls: "
                                    "none)"])
    doc = _derived(tree)
    reasons = doc["overall"]["reasons"]
    assert doc["overall"]["verdict"] == "BLOCKED" and reasons[0] == blocked_reason("model_unknown"), reasons
    assert reasons[1].startswith("the skill was never reached: the trial stopped before the session called it"), reasons
    # the service's note adds the CLI's own line to the first reason, which says the row's clause already
    assert UNKNOWN_MODEL.split(": ", 1)[1] in reasons and UNKNOWN_MODEL not in reasons, reasons
    assert not [r for r in reasons if any(words in r for words in LAUNCH_FAILED)], reasons


def test_a_blocked_trial_stopped_while_the_skill_ran_says_its_end_was_not_reached(tree) -> None:
    _recorded(tree["wd"], tree["plugins"], completion="FAIL", goal=None, evidence=[], poll_exit="STALL",
              stop_reason="model_unavailable", blocked=True, notes=[])
    reasons = _derived(tree)["overall"]["reasons"]
    assert reasons == [blocked_reason("model_unavailable"),
                       "the skill's end was never reached: the trial stopped while the skill ran; its goal was not "
                       "judged"], reasons


def test_ctrl_c_while_the_evaluator_judged_says_the_person_stopped_it_and_the_goal_was_not_judged(tree) -> None:
    """The evaluator killed with the harness wrote an evaluation.json with no judgement: its words are no cause of a
    verdict the person's Ctrl-C stopped ("the evaluator did not answer in time" never was)."""
    _recorded(tree["wd"], tree["plugins"], goal=None, evidence=[], stop_reason="harness_interrupted", blocked=True,
              notes=["the harness was stopped while the evaluator judged the goal"])
    write_evaluation(tree["wd"], "FAIL", judged_by="fallback", answered=False)
    reasons = _derived(tree)["overall"]["reasons"]
    assert reasons[:2] == [blocked_reason("harness_interrupted"),
                           "the goal was not judged: the trial stopped after the skill ran to its end"], reasons
    assert "the person running the harness stopped it (Ctrl-C)" in reasons[0]
    assert not any("evaluator could not judge" in r or "in time" in r for r in reasons), reasons


def test_an_evaluator_that_failed_on_its_own_still_gives_its_reason(tree) -> None:
    _recorded(tree["wd"], tree["plugins"], goal=None, evidence=[], stop_reason="evaluator_failed", blocked=True,
              notes=[])
    write_evaluation(tree["wd"], "FAIL", judged_by="fallback", answered=False)
    reasons = _derived(tree)["overall"]["reasons"]
    assert reasons[0] == blocked_reason(StopReason.EVALUATOR_FAILED)
    assert any("the evaluator could not judge" in r and "Not logged in" in r for r in reasons), reasons


def test_what_a_blocked_trial_did_not_reach_is_the_first_step_it_never_got_to() -> None:
    assert not_reached("FAIL", "FAIL", None).startswith("the skill was never reached")
    assert not_reached("PASS", "FAIL", None).startswith("the skill's end was never reached")
    assert not_reached("PASS", "PASS", None).startswith("the goal was not judged")
    assert not_reached("PASS", "PASS", "PASS") is None


def test_a_pass_whose_session_said_it_failed_stays_a_pass_and_warns_quoting_it(tree) -> None:
    """The evaluator's evidence decides the goal; the session's own "failed" is never evidence, but the verdict says
    it was said (README "Evidence, watches and messages to a person")."""
    _recorded(tree["wd"], tree["plugins"])
    (tree["wd"] / "out").mkdir(exist_ok=True)
    (tree["wd"] / "out" / "status.json").write_text('{"status": "failed", "summary": "could not finish"}\n')
    doc = _derived(tree)
    assert doc["overall"]["verdict"] == "PASS" and doc["goal_result"] == "PASS"
    assert ('the session reported its own status as "failed" in its completion marker (out/status.json): its own '
            "words are never evidence, so the verdict does not rest on them") in doc["warnings"], doc["warnings"]
    (tree["wd"] / "out" / "status.json").write_text('{"status": "ok", "summary": "done"}\n')
    assert not any("reported its own status" in w for w in _derived(tree)["warnings"])


def test_a_skill_hidden_from_the_model_fails_its_launch_for_that_cause_not_a_guessed_one(tree) -> None:
    """skill_hidden: the plugin loaded and the Skill tool refused the call; "boot, install or argument problem" would
    send a person to look where nothing is wrong."""
    _recorded(tree["wd"], tree["plugins"], launch="FAIL", completion="FAIL", goal=None, evidence=[], poll_exit=None,
              stop_reason="skill_hidden", notes=[])
    reasons = _derived(tree)["overall"]["reasons"]
    assert reasons[0] == f"launch failed: {StopReason.SKILL_HIDDEN.why}", reasons
    assert not any("boot, install or argument" in r or "did not load" in r for r in reasons), reasons
