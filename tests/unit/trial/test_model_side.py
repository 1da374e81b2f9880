"""A recorded trial's CLI runs with the variables every rehearsal and replay sets to keep it quiet: the requests it
sends depend on them (references/transcript-jsonl.md "Two runs of one trial, request by request"), and a tape must
hold what its replay will send."""
from __future__ import annotations

from pathlib import Path

from live_trial.rehearsal.config import rehearsal_env
from live_trial.trial.model_side import RECORDING_ENV


def test_a_recording_runs_the_cli_as_quiet_as_its_replay_will() -> None:
    replayed = rehearsal_env("http://127.0.0.1:1", Path("/tmp/config"))
    assert RECORDING_ENV == {k: replayed[k] for k in RECORDING_ENV}
    assert {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_TELEMETRY"} <= set(RECORDING_ENV)


def _judged_with(server, tmp_path, monkeypatch):
    """The facts of a trial whose evaluator answered FAIL while its model's side was ``server``."""
    import threading
    from types import SimpleNamespace

    from live_trial.judge import evaluator
    from live_trial.trial import changes
    from live_trial.trial.evaluation import evaluate_goal
    from live_trial.trial.facts import Facts
    from tests.unit.fakes import trial_state

    monkeypatch.setattr(evaluator, "evaluate", lambda *a, **k: {"goal_result": "FAIL", "blockers": ["no answer"],
                                                                "evidence": [], "judged_by": "evaluator"})
    monkeypatch.setattr(changes, "session_output", lambda *a, **k: None)
    trial = SimpleNamespace(state=trial_state(), wd=SimpleNamespace(root=tmp_path), env={}, child_overrides={},
                            server=server, facts=Facts(launch="PASS", completion="PASS"),
                            stop_event=threading.Event(), target="hello:greet", claude="claude",
                            req=SimpleNamespace(model=None),
                            journal=SimpleNamespace(log=lambda *a, **k: None, save=lambda **k: None))
    evaluate_goal(trial)
    return trial.facts


def test_a_replay_whose_evaluator_left_the_tape_is_blocked_with_the_goal_not_judged(tmp_path, monkeypatch) -> None:
    """The evaluator's request was not on the tape: whatever it answered after the error, the goal was not judged
    (BLOCKED replay_diverged, README "Replaying a real trial offline")."""
    from live_trial.tape.diverge import Divergence
    from live_trial.tape.normalize import Roots
    from live_trial.tape.replay import TapeServer

    server = TapeServer([], Roots.of())
    server.diverged = Divergence("evaluator", 1, 7, 6, 'message 1 (user): its text changed: recorded "a", now "b"')
    facts = _judged_with(server, tmp_path, monkeypatch)
    assert (facts.blocked, facts.stop_reason, facts.goal) == (True, "replay_diverged", None)
    assert facts.notes == ['the tape does not cover this run: turn 1 of the evaluator (request 7): message 1 '
                           '(user): its text changed: recorded "a", now "b"']


def test_a_rehearsal_whose_evaluator_no_rule_answers_is_blocked_with_the_goal_not_judged(tmp_path,
                                                                                         monkeypatch) -> None:
    """The scenario, like a tape, is the harness's input: an evaluator's request no rule answers leaves the goal not
    judged (BLOCKED scenario_unmatched), never a FAIL of the skill."""
    from live_trial.rehearsal.server import RehearsalServer
    from live_trial.rehearsal.unmatched import Unmatched

    server = RehearsalServer({"rules": [{"when": {"human_turn": 5}, "reply": {"content": [{"text": "x"}]}}]})
    server.unmatched = Unmatched("evaluator", 1, 0, 'its last prompt: "Judge the run."')
    facts = _judged_with(server, tmp_path, monkeypatch)
    assert (facts.blocked, facts.stop_reason, facts.goal, facts.goal_blockers) == (True, "scenario_unmatched",
                                                                                    None, [])
    assert facts.notes == ["the scenario does not cover this run: no rule matches the evaluator's request at "
                           'human_turn 1, step 0 (its last prompt: "Judge the run.")']


def test_a_request_no_rule_answers_stops_a_rehearsal_blocked_naming_it() -> None:
    from types import SimpleNamespace

    import pytest

    from live_trial.errors import Blocked
    from live_trial.rehearsal.server import RehearsalServer
    from live_trial.rehearsal.unmatched import Unmatched
    from live_trial.stop_reasons import StopReason
    from live_trial.trial.model_side import check_divergence

    server = RehearsalServer({"rules": [{"when": {"human_turn": 5}, "reply": {"content": [{"text": "x"}]}}]})
    trial = SimpleNamespace(server=server)
    check_divergence(trial)                                      # nothing unmatched yet: goes on
    server.unmatched = Unmatched("session", 1, 0, 'its last prompt: "# Live trial task"')
    with pytest.raises(Blocked) as info:
        check_divergence(trial)
    assert info.value.code == StopReason.SCENARIO_UNMATCHED and StopReason.SCENARIO_UNMATCHED.verdict == "BLOCKED"
    assert "no rule matches the session's request at human_turn 1, step 0 (its last prompt" in info.value.message
