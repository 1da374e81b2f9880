"""What a resume relies on, without tmux: the facts kept in trial-state.json, the one notification, the options it
refuses (README "Resuming a trial"; the real-CLI kills at each phase are tests/e2e/test_resume_phases.py)."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from live_trial.cli.main import main
from live_trial.jsonfile import schema_errors
from live_trial.trial.facts import PHASES, Facts, phase_at_least
from live_trial.trial.journal import Journal
from live_trial.trial.finish import notify_once
from tests.unit.fakes import trial_state

RUN_ID = "20261130T101500-abcd"
VERDICT = {"overall": {"verdict": "PASS"}, "target": "hello:greet", "skill": "greet", "run_id": RUN_ID,
           "evidence": [{"claim": "c", "source": "s", "observed": "1 file"}]}


def _trial(tmp_path, notification=None):
    journal = Journal()
    journal.state = trial_state(run_id=RUN_ID, notification=notification)
    return SimpleNamespace(state=journal.state, journal=journal,
                           req=SimpleNamespace(eval_root=tmp_path, lang="en"))


def _lines(tmp_path):
    path = tmp_path / "notifications.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_the_notification_is_sent_once_and_its_status_recorded(tmp_path):
    trial = _trial(tmp_path)
    text, status = notify_once(trial, VERDICT)
    assert status == "not_configured" and text and len(_lines(tmp_path)) == 1
    assert trial.state.notification["status"] == "not_configured"
    assert notify_once(trial, VERDICT) == (text, "not_configured")        # a resume after it: nothing more
    assert len(_lines(tmp_path)) == 1


def test_a_harness_killed_between_sending_and_recording_sends_nothing_again(tmp_path):
    notify_once(_trial(tmp_path), VERDICT)
    trial = _trial(tmp_path, {"status": "sending", "at": "2026-11-30T10:15:00.000Z"})
    text, status = notify_once(trial, VERDICT)
    assert len(_lines(tmp_path)) == 1 and text == _lines(tmp_path)[0]["text"]
    assert trial.state.notification["status"] == status == "not_configured"


def test_a_notification_that_never_left_is_sent_on_resume(tmp_path):
    trial = _trial(tmp_path, {"status": "sending", "at": "2026-11-30T10:15:00.000Z"})
    notify_once(trial, VERDICT)
    assert len(_lines(tmp_path)) == 1 and _lines(tmp_path)[0]["refs"]["run_id"] == RUN_ID


def test_facts_kept_in_the_state_come_back_the_same_and_fit_the_schema():
    facts = Facts(launch="PASS", completion="PASS", goal="PASS", poll_exit="DONE",
                  evidence=[{"claim": "c", "source": "s", "observed": "1"}], notes=["n"], warnings=["w"])
    assert Facts.from_doc(facts.to_doc()) == facts
    assert Facts.from_doc({**facts.to_doc(), "later_field": 1}) == facts
    state = {"schema_version": 1, "run_id": RUN_ID, "target": "hello:greet", "plugin": "hello", "skill": "greet",
             "cwd": "/c", "session": f"lt-{RUN_ID}-greet", "session_id": "s", "phase": "verdict_written",
             "owner_pid": 1, "started_at": "2026-11-30T10:15:00.000Z", "nudge_count": 0, "gate_response_count": 0,
             "gate_responses": [], "stall_extended": False, "rehearsal": None, "facts": facts.to_doc(),
             "evaluator": {"pid": 12, "start": "345"}, "notification": {"status": "sending", "at": "t"},
             "collected": True, "lang": None}
    assert schema_errors(state, "trial-state.schema.json") == []


def test_phases_are_ordered():
    assert PHASES[0] == "created" and PHASES[-1] == "finished"
    assert phase_at_least("judged", "evaluating") and not phase_at_least("polling", "evaluating")
    assert not phase_at_least(None, "created")


@pytest.mark.parametrize("extra,named", [
    (["--stall-limit", "9"], "--stall-limit"), (["--hard-cap", "9"], "--hard-cap"),
    (["--gate-response", "Casual"], "--gate-response"), (["--gate-kind", "rescue"], "--gate-kind"),
    (["--model", "m"], "--model"), (["--lang", "en"], "--lang"), (["--socket", "s"], "--socket"),
])
def test_resume_refuses_trial_options_in_one_line(tmp_path, capsys, extra, named):
    assert main(["run", "--resume", str(tmp_path), *extra]) == 64
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"remove {named}" in err and "options the trial started with" in err


@pytest.mark.parametrize("phase", ["collecting", "evaluating", "judged"])
def test_an_older_state_without_its_facts_is_refused_past_polling_with_the_reason(tmp_path, phase):
    from live_trial.errors import RefusedInput
    from live_trial.jsonfile import write_json
    from live_trial.resources import repo_root
    from live_trial.trial.facts import TrialRequest
    from live_trial.trial.runner import Trial

    wd = tmp_path / "eval" / "hello" / "greet" / "live-trial" / RUN_ID
    wd.mkdir(parents=True)
    (wd / "task.md").write_text("task\n")
    state = {"schema_version": 1, "run_id": RUN_ID, "target": "hello:greet", "plugin": "hello", "skill": "greet",
             "cwd": str(tmp_path), "plugins_root": str(repo_root() / "examples" / "plugins"),
             "session": f"lt-{RUN_ID}-greet", "session_id": "s", "phase": phase, "owner_pid": 999999999,
             "started_at": "2026-11-30T10:15:00.000Z", "nudge_count": 0, "gate_response_count": 0,
             "gate_responses": [], "stall_extended": False, "rehearsal": None, "model": None, "proof": False,
             "gate_kind": "rescue"}
    write_json(wd / "trial-state.json", state, "trial-state.schema.json")
    before = (wd / "trial-state.json").read_bytes()
    with pytest.raises(RefusedInput) as err:
        Trial(TrialRequest(target="")).resume(wd)
    assert err.value.code == "state_without_facts" and "run the trial again" in err.value.message
    assert (wd / "trial-state.json").read_bytes() == before
