"""The evaluator's turn in a trial (live_trial.trial.evaluation.evaluate_goal; README "Whose failure it is"): no valid answer after its
retries is BLOCKED ``evaluator_failed`` with the CLI's last reason, never a FAIL of the goal; an answer whose evidence
does not hold stays a judged FAIL."""
from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from live_trial.judge import evaluator
from live_trial.trial import changes
from live_trial.trial.evaluation import evaluate_goal
from live_trial.trial.facts import Facts
from tests.unit.fakes import trial_state

LAST = ("the CLI reported an error (error_max_structured_output_retries): Failed to provide valid structured output "
        "after 5 attempts")


def _trial(tmp_path):
    logged: list = []
    return SimpleNamespace(state=trial_state(), wd=SimpleNamespace(root=tmp_path), env={}, child_overrides={}, server=None,
                           facts=Facts(), stop_event=threading.Event(), target="hello:greet", claude="claude",
                           req=SimpleNamespace(model=None),
                           journal=SimpleNamespace(log=lambda *a, **k: logged.append((a, k)),
                                                   save=lambda **k: None)), logged


def _judged(judged_by: str, blockers: list[str], problems: list[str]) -> dict:
    return {"goal_result": "FAIL", "blockers": blockers, "evidence": [], "unverified": [], "checks": [],
            "judged_by": judged_by, "attempts": [{"n": 1, "problems": problems}, {"n": 2, "problems": problems}]}


@pytest.fixture
def answers(monkeypatch):
    def give(doc):
        monkeypatch.setattr(evaluator, "evaluate", lambda *a, **k: doc)
        monkeypatch.setattr(changes, "session_output", lambda *a, **k: None)
    return give


def test_no_valid_answer_after_the_retries_is_blocked_with_the_clis_last_reason(tmp_path, answers):
    answers(_judged("fallback", ["the evaluator gave no valid judgement"], [LAST]))
    trial, logged = _trial(tmp_path)
    evaluate_goal(trial)
    assert (trial.facts.blocked, trial.facts.stop_reason, trial.facts.goal) == (True, "evaluator_failed", None)
    assert trial.facts.goal_blockers == []
    assert any("error_max_structured_output_retries" in n and "after 5 attempts" in n for n in trial.facts.notes)
    assert logged[-1][0] == ("evaluate", "error")


def test_an_answer_whose_evidence_does_not_hold_stays_a_judged_fail(tmp_path, answers):
    answers(_judged("insufficient_evidence", ["insufficient evidence: the quote is not in the source"],
                    ["the quote is not in the source"]))
    trial, _logged = _trial(tmp_path)
    evaluate_goal(trial)
    assert (trial.facts.blocked, trial.facts.stop_reason, trial.facts.goal) == (False, None, "FAIL")
    assert trial.facts.goal_blockers == ["insufficient evidence: the quote is not in the source"]
